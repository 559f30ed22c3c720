//! Tools agents commonly need, and the shipped agents use: arithmetic, and listing files.

use std::path::{Component, Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::tool::{Tool, ToolError, ToolSpec};

/// Evaluates arithmetic: `+ - * /`, parentheses, decimals. Read-only.
#[derive(Debug, Clone, Copy, Default)]
pub struct Calculator;

#[async_trait]
impl Tool for Calculator {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "calculator",
            "Evaluates an arithmetic expression: + - * /, parentheses, decimals.",
            json!({
                "type": "object",
                "properties": { "expression": { "type": "string", "minLength": 1, "description": "for example (12 + 3) * 7" } },
                "required": ["expression"],
                "additionalProperties": false
            }),
        )
    }

    async fn call(&self, arguments: Value) -> Result<String, ToolError> {
        let expression = arguments["expression"].as_str().unwrap_or_default();
        let value = evaluate(expression).map_err(ToolError::new)?;
        Ok(format_number(value))
    }
}

/// `12` rather than `12.0`; decimals as they are.
fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        value.to_string()
    }
}

/// Evaluates `text` by recursive descent.
fn evaluate(text: &str) -> Result<f64, String> {
    let tokens: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut at = 0;
    let value = sum(&tokens, &mut at)?;
    if at != tokens.len() {
        return Err(format!(
            "unexpected `{}` at position {}",
            tokens[at],
            at + 1
        ));
    }
    if !value.is_finite() {
        return Err("the result is not a finite number (a division by zero?)".into());
    }
    Ok(value)
}

fn sum(tokens: &[char], at: &mut usize) -> Result<f64, String> {
    let mut value = product(tokens, at)?;
    while let Some(&op) = tokens.get(*at).filter(|c| matches!(c, '+' | '-')) {
        *at += 1;
        let right = product(tokens, at)?;
        value = if op == '+' {
            value + right
        } else {
            value - right
        };
    }
    Ok(value)
}

fn product(tokens: &[char], at: &mut usize) -> Result<f64, String> {
    let mut value = factor(tokens, at)?;
    while let Some(&op) = tokens.get(*at).filter(|c| matches!(c, '*' | '/')) {
        *at += 1;
        let right = factor(tokens, at)?;
        value = if op == '*' {
            value * right
        } else {
            value / right
        };
    }
    Ok(value)
}

fn factor(tokens: &[char], at: &mut usize) -> Result<f64, String> {
    match tokens.get(*at) {
        Some('-') => {
            *at += 1;
            Ok(-factor(tokens, at)?)
        }
        Some('(') => {
            *at += 1;
            let value = sum(tokens, at)?;
            if tokens.get(*at) != Some(&')') {
                return Err("a `(` is not closed".into());
            }
            *at += 1;
            Ok(value)
        }
        Some(c) if c.is_ascii_digit() || *c == '.' => {
            let start = *at;
            while tokens
                .get(*at)
                .is_some_and(|c| c.is_ascii_digit() || *c == '.')
            {
                *at += 1;
            }
            let number: String = tokens[start..*at].iter().collect();
            number
                .parse()
                .map_err(|_| format!("`{number}` is not a number"))
        }
        Some(c) => Err(format!("unexpected `{c}` at position {}", *at + 1)),
        None => Err("the expression ends too early".into()),
    }
}

/// Lists the files of a directory under a root, never outside it. Read-only.
#[derive(Debug, Clone)]
pub struct ListFiles {
    root: PathBuf,
}

impl ListFiles {
    /// Lists files under `root` only.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ListFiles { root: root.into() }
    }
}

#[async_trait]
impl Tool for ListFiles {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "list_files",
            "Lists the entries of a directory (relative to the workspace), one per line; directories end in /.",
            json!({
                "type": "object",
                "properties": { "path": { "type": "string", "description": "a relative directory, `.` for the top" } },
                "required": ["path"],
                "additionalProperties": false
            }),
        )
    }

    async fn call(&self, arguments: Value) -> Result<String, ToolError> {
        let asked = arguments["path"].as_str().unwrap_or(".");
        let relative = Path::new(asked);
        // Only plain names and `.`: no root, no `..`, so the listing stays under the root.
        if !relative
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(ToolError::new(format!(
                "`{asked}` is not a relative path inside the workspace"
            )));
        }
        let directory = self.root.join(relative);
        let mut names = Vec::new();
        let mut entries = tokio::fs::read_dir(&directory)
            .await
            .map_err(|e| ToolError::new(format!("cannot list `{asked}`: {e}")))?;
        while let Some(entry) = entries
            .next_entry()
            .await
            .map_err(|e| ToolError::new(e.to_string()))?
        {
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().await.is_ok_and(|t| t.is_dir()) {
                name.push('/');
            }
            names.push(name);
        }
        names.sort();
        Ok(names.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    #[test]
    fn arithmetic_with_precedence_and_parentheses() {
        assert_eq!(evaluate("12 * 7"), Ok(84.0));
        assert_eq!(evaluate("(1 + 2) * -3 / 2"), Ok(-4.5));
        assert_eq!(evaluate("2 + 3 * 4 - 1"), Ok(13.0));
    }

    #[test]
    fn bad_expressions_say_why() {
        assert_eq!(evaluate("1 +"), Err("the expression ends too early".into()));
        assert_eq!(evaluate("(1"), Err("a `(` is not closed".into()));
        assert_eq!(
            evaluate("2 ^ 3"),
            Err("unexpected `^` at position 2".into())
        );
        assert!(evaluate("1 / 0").is_err());
    }
}
