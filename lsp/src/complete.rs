//! Completion: what may be written at the cursor — node names after `->`, `|`, `&` and
//! `on_error`, attributes inside a node's block, a graph's items at the start of a statement.

use lsp_types::{CompletionItem, CompletionItemKind, CompletionTextEdit, TextEdit};
use trellis_dsl::words::{ATTRIBUTES, GRAPH_ITEMS, Word};
use trellis_dsl::{LexemeKind, NodeKind, RetryOn};

use crate::analysis::Analysis;

/// What may be written at `offset`: the candidates that begin with the part of the word
/// before the cursor (any case), each with the edit that replaces the whole word, so that a
/// client that does not filter or that would insert beside the word still does the right thing.
pub(crate) fn complete(analysis: &Analysis, offset: usize) -> Vec<CompletionItem> {
    let text = &analysis.text;
    let word = crate::text::word_at(text, offset, |c: char| {
        c.is_ascii_alphanumeric() || c == '_'
    });
    let offset = offset.min(text.len()).max(word.start);
    let typed = text[word.start..offset].to_ascii_lowercase();
    let range = analysis
        .lines
        .range(text, trellis_dsl::Span::new(word.start, word.end));
    candidates(analysis, word.start, offset)
        .into_iter()
        .filter(|item| item.label.to_ascii_lowercase().starts_with(&typed))
        .map(|item| CompletionItem {
            text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
                range,
                item.label.clone(),
            ))),
            ..item
        })
        .collect()
}

/// Everything that may be written where a word starts at `word_start`, the cursor at `offset`.
fn candidates(analysis: &Analysis, word_start: usize, offset: usize) -> Vec<CompletionItem> {
    let text = &analysis.text;
    let Some(tokens) = code_before(text, word_start) else {
        return Vec::new(); // In a comment or a string.
    };
    let previous = tokens.last().copied().unwrap_or_default();
    let depth = tokens.iter().fold(0, |depth: usize, &token| match token {
        "{" => depth + 1,
        "}" => depth.saturating_sub(1),
        _ => depth,
    });
    let nodes = || node_names(analysis, offset);
    let words = |list: &[&str], kind| list.iter().map(|w| item(w, kind, None)).collect::<Vec<_>>();
    if depth == 0 {
        return words(&["graph"], CompletionItemKind::KEYWORD);
    }
    if matches!(previous, "->" | "|") {
        let mut items = nodes();
        items.push(item(
            "END",
            CompletionItemKind::KEYWORD,
            Some("ends the branch"),
        ));
        if previous == "->" {
            items.push(item(
                "each",
                CompletionItemKind::KEYWORD,
                Some("sends branches: `each node`"),
            ));
        }
        return items;
    }
    if matches!(previous, "&" | "on_error" | "each") {
        return nodes();
    }
    if previous == "kind" {
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
    if previous == "interrupt" {
        return words(&["before", "after"], CompletionItemKind::KEYWORD);
    }
    // `retry_on timeout, |`: the failures, after the word or a comma of its list.
    let statement = tokens
        .iter()
        .rposition(|token| matches!(*token, ";" | "{" | "}"))
        .map_or(&tokens[..], |at| &tokens[at + 1..]);
    if statement.first() == Some(&"retry_on") && matches!(previous, "retry_on" | ",") {
        return words(&RetryOn::NAMES, CompletionItemKind::ENUM_MEMBER);
    }
    // Comments are not tokens, doc comments included: after one, a statement starts.
    let statement_start = matches!(previous, "" | ";" | "{" | "}");
    if !statement_start {
        return Vec::new();
    }
    // The language's own words, each with what it means.
    let described = |list: &[Word], kind| {
        list.iter()
            .map(|word| item(word.name, kind, Some(word.meaning)))
            .collect::<Vec<_>>()
    };
    if depth >= 2 {
        return described(ATTRIBUTES, CompletionItemKind::PROPERTY);
    }
    let mut items = described(GRAPH_ITEMS, CompletionItemKind::KEYWORD);
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

/// The tokens of `text[..end]` (comments left out), as the language's lexer reads them; `None`
/// when `end` lies inside a comment or a string.
fn code_before(text: &str, end: usize) -> Option<Vec<&str>> {
    let lexemes = trellis_dsl::lexemes(&text[..end]);
    if let Some(last) = lexemes.last() {
        let written = &text[last.span.start..last.span.end];
        let open = written.starts_with("//") || !written.ends_with("*/");
        if last.kind != LexemeKind::Token && last.span.end == end && open {
            return None;
        }
    }
    let tokens: Vec<&str> = lexemes
        .iter()
        .filter(|lexeme| lexeme.kind == LexemeKind::Token)
        .map(|lexeme| &text[lexeme.span.start..lexeme.span.end])
        .collect();
    // A string left open is a lone quote.
    (!tokens.contains(&"\"")).then_some(tokens)
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

    #[test]
    fn failures_after_retry_on_and_its_commas() {
        let text = "graph G {\n    node call { retry 2; retry_on ";
        assert_eq!(labels(text, text.len()), ["timeout", "error", "panic"]);
        let text = format!("{text}timeout, ");
        assert_eq!(labels(&text, text.len()), ["timeout", "error", "panic"]);
        let text = "graph G {\n    node call { retry 2, ";
        assert!(labels(text, text.len()).is_empty());
    }

    #[test]
    fn a_send_after_an_arrow_then_the_nodes_after_each() {
        let text = "graph G {\n    node plan;\n    node work { input Doc; }\n    plan -> ";
        let items = labels(text, text.len());
        assert!(items.contains(&"each".to_owned()), "{items:?}");
        let text = format!("{text}each ");
        let items = labels(&text, text.len());
        assert!(items.contains(&"work".to_owned()), "{items:?}");
        assert!(!items.contains(&"each".to_owned()), "{items:?}");
        let text = "graph G {\n    node work { ma }\n}\n";
        let items = labels(text, text.find("ma }").unwrap() + 2);
        assert!(items.contains(&"max_concurrency".to_owned()), "{items:?}");
        assert!(
            !items.contains(&"input".to_owned()),
            "`ma` was typed: {items:?}"
        );
        let text = "graph G {\n    node work {  }\n}\n";
        let items = labels(text, text.find(" }").unwrap());
        assert!(items.contains(&"input".to_owned()), "{items:?}");
    }

    #[test]
    fn what_was_typed_filters_and_the_edit_replaces_the_whole_word() {
        let text = "graph G {\n    node review;\n    node reply;\n    node send;\n    START -> reXYZ;\n}\n";
        let at = text.find("XYZ").unwrap();
        let analysis = Analysis::new(text.to_owned());
        let items = complete(&analysis, at);
        let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["reply", "review"]);
        let Some(CompletionTextEdit::Edit(edit)) = &items[0].text_edit else {
            panic!("an edit: {:?}", items[0]);
        };
        // `reXYZ` on line 4, columns 13 to 18: the whole word is replaced.
        assert_eq!(
            (
                edit.range.start.line,
                edit.range.start.character,
                edit.range.end.character
            ),
            (4, 13, 18)
        );
        assert_eq!(edit.new_text, "reply");
        // Any case; and nothing typed offers everything.
        assert_eq!(labels_at(text, "RE"), ["reply", "review"]);
        let all = complete(&analysis, text.find("reXYZ").unwrap());
        assert!(all.iter().any(|i| i.label == "send"));
    }

    /// The labels offered with `typed` written where the first `reXYZ` is.
    fn labels_at(text: &str, typed: &str) -> Vec<String> {
        let start = text.find("reXYZ").unwrap();
        let text = text.replacen("reXYZ", typed, 1);
        labels(&text, start + typed.len())
    }

    #[test]
    fn nothing_inside_a_comment_or_a_string() {
        for text in [
            "graph G {\n    node a; // a -> ",
            "graph G {\n    node a; /* a -> ",
            "graph G {\n    node a { kind \"a -> ",
        ] {
            assert_eq!(labels(text, text.len()), Vec::<String>::new(), "{text:?}");
        }
        // Right after a closed block comment: code again.
        let text = "graph G {\n    node a;\n    a -> /* x */ ";
        assert!(labels(text, text.len()).contains(&"a".to_owned()));
    }
}
