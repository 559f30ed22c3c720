//! An agent as written: a prompt (what it says), the blueprint it runs on (how), and its tools;
//! read from a header between `---` lines and the prompt after it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::AgentError;

/// An agent, as written: a prompt, the blueprint it runs on, and the tools it may call.
///
/// Agents are usually written as text with a header (see [`AgentDefinition::parse`]):
///
/// ```text
/// ---
/// name: assistant
/// description: Answers questions, computing and reading file lists as needed.
/// blueprint: canonical_turn
/// tools: calculator, list_files
/// ---
/// You are a careful assistant. Use the tools for anything you would otherwise guess.
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentDefinition {
    /// Its name (`[a-z0-9_-]`): how runs, UIs and orchestrators name it.
    pub name: String,
    /// What it is for, one line (an orchestrator reads it too).
    pub description: String,
    /// The blueprint it runs on, by catalogue name (`canonical_turn`).
    pub blueprint: String,
    /// Its tools, by name.
    pub tools: Vec<String>,
    /// Whether a person approves every batch of tool calls, not only those with side effects:
    /// once, through the blueprint's `hitl` node, or an `interrupt before` each `tools` node
    /// when no `hitl` node can ask for every batch.
    pub approve_tools: bool,
    /// The system prompt.
    pub prompt: String,
}

impl AgentDefinition {
    /// Reads a definition: a header between `---` lines (`name`, `blueprint`, and optionally
    /// `description`, `tools` as a comma-separated list, `approve_tools: true`), then the prompt.
    ///
    /// # Errors
    /// [`AgentError::Definition`] naming `origin` and the line.
    pub fn parse(origin: &str, text: &str) -> Result<Self, AgentError> {
        let fail = |line: usize, message: String| AgentError::Definition {
            origin: origin.to_owned(),
            line,
            message,
        };
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, first)) if first.trim() == "---" => {}
            _ => {
                return Err(fail(
                    1,
                    "a definition starts with a `---` line, then its header".into(),
                ));
            }
        }
        let mut fields: BTreeMap<&str, (usize, String)> = BTreeMap::new();
        let mut body_from = None;
        for (at, line) in lines.by_ref() {
            if line.trim() == "---" {
                body_from = Some(at + 1);
                break;
            }
            if line.trim().is_empty() {
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                return Err(fail(
                    at + 1,
                    format!("expected `key: value`, found `{}`", line.trim()),
                ));
            };
            let key = key.trim();
            const KEYS: [&str; 5] = ["name", "description", "blueprint", "tools", "approve_tools"];
            let Some(key) = KEYS.iter().find(|k| **k == key) else {
                return Err(fail(
                    at + 1,
                    format!("unknown key `{key}` (the keys are: {})", KEYS.join(", ")),
                ));
            };
            if fields
                .insert(key, (at + 1, value.trim().to_owned()))
                .is_some()
            {
                return Err(fail(at + 1, format!("`{key}` is given twice")));
            }
        }
        let Some(body_from) = body_from else {
            return Err(fail(
                text.lines().count(),
                "the header is not closed by a `---` line".into(),
            ));
        };
        let header_end = body_from;
        let take = |key: &str| fields.get(key).map(|(_, v)| v.clone());
        let name =
            take("name").ok_or_else(|| fail(header_end, "the header has no `name`".into()))?;
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
        {
            let line = fields.get("name").map_or(header_end, |(l, _)| *l);
            return Err(fail(line, format!("`{name}` is not a name of [a-z0-9_-]")));
        }
        let blueprint = take("blueprint")
            .ok_or_else(|| fail(header_end, "the header has no `blueprint`".into()))?;
        let tools = take("tools")
            .map(|list| {
                list.split(',')
                    .map(|t| t.trim().to_owned())
                    .filter(|t| !t.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let approve_tools = match fields.get("approve_tools") {
            None => false,
            Some((_, v)) if v == "true" => true,
            Some((_, v)) if v == "false" => false,
            Some((line, v)) => {
                return Err(fail(
                    *line,
                    format!("`approve_tools` is true or false, not `{v}`"),
                ));
            }
        };
        let prompt: String = text
            .lines()
            .skip(body_from)
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_owned();
        if prompt.is_empty() {
            return Err(fail(
                header_end,
                "the prompt after the header is empty".into(),
            ));
        }
        Ok(AgentDefinition {
            name,
            description: take("description").unwrap_or_default(),
            blueprint,
            tools,
            approve_tools,
            prompt,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::AgentDefinition;

    #[test]
    fn a_definition_reads_its_header_and_prompt() {
        let text = "---\nname: clerk\nblueprint: canonical_turn\ntools: calculator , list_files\n---\nBe brief.\n";
        let agent = AgentDefinition::parse("clerk.md", text).expect("parses");
        assert_eq!(agent.tools, ["calculator", "list_files"]);
        assert_eq!(agent.prompt, "Be brief.");
        assert!(!agent.approve_tools);
    }

    #[test]
    fn a_bad_definition_names_its_line() {
        let error = |text: &str| {
            AgentDefinition::parse("x.md", text)
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(
            error("---\nname: x\nblueprnt: canonical_turn\n---\nHi"),
            "agent definition x.md, line 3: unknown key `blueprnt` (the keys are: name, description, blueprint, tools, approve_tools)"
        );
        assert_eq!(
            error("---\nname: x\n---\nHi"),
            "agent definition x.md, line 3: the header has no `blueprint`"
        );
        assert_eq!(
            error("name: x"),
            "agent definition x.md, line 1: a definition starts with a `---` line, then its header"
        );
        assert_eq!(
            error("---\nname: x\nblueprint: b\napprove_tools: yes\n---\nHi"),
            "agent definition x.md, line 4: `approve_tools` is true or false, not `yes`"
        );
    }
}
