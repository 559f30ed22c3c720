//! Completion: what may be written at the cursor — node names after `->`, `|`, `&` and
//! `on_error`, attributes inside a node's block, a graph's items at the start of a statement.

use lsp_types::{CompletionItem, CompletionItemKind};
use trellis_dsl::NodeKind;
use trellis_dsl::words::{ATTRIBUTES, GRAPH_ITEMS};

use crate::analysis::Analysis;

pub(crate) fn complete(analysis: &Analysis, offset: usize) -> Vec<CompletionItem> {
    let text = &analysis.text;
    let offset = offset.min(text.len());
    let word_start = text[..offset]
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |at| at + 1);
    let Some(before) = code_before(text, word_start) else {
        return Vec::new(); // In a comment or a string.
    };
    let previous = before.trim_end();
    let last_word = previous
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or_default();
    let depth = brace_depth(&before);
    let nodes = || node_names(analysis, offset);
    let words = |list: &[&str], kind| list.iter().map(|w| item(w, kind, None)).collect::<Vec<_>>();
    if depth == 0 {
        return words(&["graph"], CompletionItemKind::KEYWORD);
    }
    if previous.ends_with("->") || previous.ends_with('|') {
        let mut items = nodes();
        items.push(item(
            "END",
            CompletionItemKind::KEYWORD,
            Some("ends the branch"),
        ));
        return items;
    }
    if previous.ends_with('&') || last_word == "on_error" {
        return nodes();
    }
    if last_word == "kind" {
        let mut items: Vec<CompletionItem> = NodeKind::BUILT_IN
            .iter()
            .map(|(name, _)| item(name, CompletionItemKind::ENUM_MEMBER, None))
            .collect();
        items.push(item(
            "delegate",
            CompletionItemKind::ENUM_MEMBER,
            Some("delegate(GraphName)"),
        ));
        return items;
    }
    if last_word == "interrupt" {
        return words(&["before", "after"], CompletionItemKind::KEYWORD);
    }
    // Comments are blanked, doc comments included: after one, a statement starts.
    let statement_start = previous.is_empty() || previous.ends_with([';', '{', '}']);
    if !statement_start {
        return Vec::new();
    }
    if depth >= 2 {
        return words(ATTRIBUTES, CompletionItemKind::PROPERTY);
    }
    let mut items = words(GRAPH_ITEMS, CompletionItemKind::KEYWORD);
    items.push(item(
        "START",
        CompletionItemKind::KEYWORD,
        Some("the entry edge"),
    ));
    items.extend(nodes());
    items
}

fn item(label: &str, kind: CompletionItemKind, detail: Option<&str>) -> CompletionItem {
    CompletionItem {
        label: label.to_owned(),
        kind: Some(kind),
        detail: detail.map(str::to_owned),
        ..CompletionItem::default()
    }
}

/// The nodes of the graph around `offset` (of every graph, when it lies in none).
fn node_names(analysis: &Analysis, offset: usize) -> Vec<CompletionItem> {
    let spans = &analysis.checked.module.spans;
    let inside = spans
        .iter()
        .position(|s| s.extent.start <= offset && offset <= s.extent.end);
    let mut names: Vec<&str> = analysis
        .names
        .iter()
        .enumerate()
        .filter(|(graph, _)| inside.is_none_or(|inside| inside == *graph))
        .flat_map(|(_, names)| names.declared.iter().map(|(name, _)| name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| item(name, CompletionItemKind::FUNCTION, Some("node")))
        .collect()
}

/// `text[..end]` with comments and the insides of strings blanked out, so that a brace or an
/// arrow inside them counts for nothing; `None` when `end` lies inside a comment or a string.
fn code_before(text: &str, end: usize) -> Option<String> {
    let mut code = String::with_capacity(end);
    let mut chars = text[..end].chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                code.push('"');
                let mut closed = false;
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => {
                            closed = true;
                            break;
                        }
                        _ => {}
                    }
                }
                if !closed {
                    return None;
                }
                code.push('"');
            }
            '/' if chars.peek() == Some(&'/') => {
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == '\n' {
                        closed = true;
                        break;
                    }
                }
                if !closed {
                    return None;
                }
                code.push('\n');
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let (mut nested, mut last) = (1, ' ');
                for c in chars.by_ref() {
                    match (last, c) {
                        ('/', '*') => (nested, last) = (nested + 1, ' '),
                        ('*', '/') => (nested, last) = (nested - 1, ' '),
                        _ => last = c,
                    }
                    if nested == 0 {
                        break;
                    }
                }
                if nested > 0 {
                    return None;
                }
                code.push(' ');
            }
            c => code.push(c),
        }
    }
    Some(code)
}

/// How deep in braces the end of `code` (blanked) is: 0 between graphs, 1 in a graph, 2 in a
/// node's block.
fn brace_depth(code: &str) -> usize {
    code.chars().fold(0, |depth: usize, c| match c {
        '{' => depth + 1,
        '}' => depth.saturating_sub(1),
        _ => depth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str, offset: usize) -> Vec<String> {
        complete(&Analysis::new(text.to_owned()), offset)
            .into_iter()
            .map(|item| item.label)
            .collect()
    }

    #[test]
    fn attributes_inside_a_node_block() {
        let text = "graph G {\n    node plan;\n    node web { ma }\n    START -> plan -> \n}\n";
        let at = text.find("ma }").unwrap() + 2;
        let items = labels(text, at);
        assert!(items.contains(&"max_visits".to_owned()), "{items:?}");
    }
}
