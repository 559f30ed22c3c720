//! Colour and folds without a grammar: semantic tokens (keywords, node and graph names, `START`
//! and `END`, strings, numbers, operators, comments and docs) and folding ranges (graphs, node
//! blocks, runs of comment lines), so that every editor that speaks the protocol shows `.graph`
//! files well.

use std::collections::HashMap;

use lsp_types::{
    FoldingRange, FoldingRangeKind, SemanticToken, SemanticTokenModifier, SemanticTokenType,
    SemanticTokens, SemanticTokensLegend,
};
use trellis_dsl::{LexemeKind, Span};

use crate::analysis::Analysis;

/// The token types, in the legend's order (a token names its type by index).
const TYPES: [SemanticTokenType; 9] = [
    SemanticTokenType::KEYWORD,
    SemanticTokenType::COMMENT,
    SemanticTokenType::STRING,
    SemanticTokenType::NUMBER,
    SemanticTokenType::OPERATOR,
    SemanticTokenType::TYPE,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::ENUM_MEMBER,
    SemanticTokenType::PROPERTY,
];

/// A token type, as its index in [`TYPES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Keyword = 0,
    Comment = 1,
    Text = 2,
    Number = 3,
    Operator = 4,
    /// A graph's name, a state or input type.
    Type = 5,
    /// A node's name.
    Node = 6,
    /// `START`, `END`.
    Terminal = 7,
    /// A `meta` key.
    Key = 8,
}

/// The modifiers, as bits in the legend's order.
const DECLARATION: u32 = 1;
const DOCUMENTATION: u32 = 2;

/// What the server tells the client its tokens mean.
pub(crate) fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: TYPES.to_vec(),
        token_modifiers: vec![
            SemanticTokenModifier::DECLARATION,
            SemanticTokenModifier::DOCUMENTATION,
        ],
    }
}

/// Every token of the document worth a colour, in order, a multi-line comment a token a line.
pub(crate) fn tokens(analysis: &Analysis) -> SemanticTokens {
    let text = analysis.text.as_str();
    // What the check knows a name to be, by where it starts.
    let mut known: HashMap<usize, (Kind, u32)> = HashMap::new();
    for names in &analysis.names {
        for (_, span) in &names.declared {
            known.insert(span.start, (Kind::Node, DECLARATION));
        }
        for (_, span) in &names.used {
            known.entry(span.start).or_insert((Kind::Node, 0));
        }
    }
    for spans in &analysis.checked.module.spans {
        known.insert(spans.name.start, (Kind::Type, DECLARATION));
        let types = spans
            .state
            .iter()
            .chain(spans.nodes.iter().flat_map(|node| &node.input));
        for (_, span) in types {
            known.insert(span.start, (Kind::Type, 0));
        }
        for node in &spans.nodes {
            if let Some(graph) = node.graph {
                known.insert(graph.start, (Kind::Type, 0));
            }
        }
    }
    let mut previous: Option<&str> = None;
    let mut pieces = Vec::new();
    for lexeme in trellis_dsl::lexemes(text) {
        let word = &text[lexeme.span.start..lexeme.span.end];
        let kind = match lexeme.kind {
            LexemeKind::Comment => Some((Kind::Comment, 0)),
            LexemeKind::Doc => Some((Kind::Comment, DOCUMENTATION)),
            // A kind the lexer gains later: no colour until this module knows it.
            _ if lexeme.kind != LexemeKind::Token => None,
            _ => known.get(&lexeme.span.start).copied().or_else(|| {
                let first = word.chars().next().unwrap_or(' ');
                match word {
                    "START" | "END" => Some((Kind::Terminal, 0)),
                    "->" | "|" | "&" | "=" => Some((Kind::Operator, 0)),
                    _ if first == '"' => Some((Kind::Text, 0)),
                    _ if first.is_ascii_digit() => Some((Kind::Number, 0)),
                    _ if previous == Some("meta") => Some((Kind::Key, 0)),
                    _ if trellis_dsl::words::is_keyword(word) => Some((Kind::Keyword, 0)),
                    _ => None,
                }
            }),
        };
        if lexeme.kind == LexemeKind::Token {
            previous = Some(word);
        }
        if let Some((kind, modifiers)) = kind {
            pieces.extend(
                lines_of(text, lexeme.span)
                    .into_iter()
                    .map(|span| (span, kind, modifiers)),
            );
        }
    }
    let mut data = Vec::with_capacity(pieces.len());
    let (mut line, mut start) = (0, 0);
    for (span, kind, modifiers) in pieces {
        let range = analysis.lines.range(text, span);
        let length = range.end.character.saturating_sub(range.start.character);
        if length == 0 {
            continue;
        }
        let delta_line = range.start.line - line;
        let delta_start = if delta_line == 0 {
            range.start.character - start
        } else {
            range.start.character
        };
        data.push(SemanticToken {
            delta_line,
            delta_start,
            length,
            token_type: kind as u32,
            token_modifiers_bitset: modifiers,
        });
        (line, start) = (range.start.line, range.start.character);
    }
    SemanticTokens {
        result_id: None,
        data,
    }
}

/// `span` cut at its line breaks (a token may not cross a line for most clients).
fn lines_of(text: &str, span: Span) -> Vec<Span> {
    let mut pieces = Vec::new();
    let mut start = span.start;
    for (at, _) in text[span.start..span.end].match_indices('\n') {
        pieces.push(Span::new(start, span.start + at));
        start = span.start + at + 1;
    }
    pieces.push(Span::new(start, span.end));
    pieces
}

/// The folds: each graph from its header to its closing brace, each node's `{ … }` over
/// several lines, each run of two or more comment or doc lines.
pub(crate) fn folding_ranges(analysis: &Analysis) -> Vec<FoldingRange> {
    let text = analysis.text.as_str();
    let line_of = |offset: usize| analysis.lines.position(text, offset).line;
    let mut folds = Vec::new();
    let mut fold = |start: u32, end: u32, kind: Option<FoldingRangeKind>| {
        if end > start {
            folds.push(FoldingRange {
                start_line: start,
                start_character: None,
                end_line: end,
                end_character: None,
                kind,
                collapsed_text: None,
            });
        }
    };
    // A graph from its header (its docs fold as comments).
    for spans in &analysis.checked.module.spans {
        fold(line_of(spans.name.start), line_of(spans.extent.end), None);
    }
    // Node blocks and comment runs, from the tokens: a `{` after `node NAME` to its `}`.
    let lexemes = trellis_dsl::lexemes(text);
    let mut opened: Vec<(usize, bool)> = Vec::new();
    let mut comments: Option<(u32, u32)> = None;
    for (at, lexeme) in lexemes.iter().enumerate() {
        let word = &text[lexeme.span.start..lexeme.span.end];
        if lexeme.kind != LexemeKind::Token {
            let (first, last) = (line_of(lexeme.span.start), line_of(lexeme.span.end));
            comments = match comments {
                Some((start, end)) if first <= end + 1 => Some((start, last)),
                Some((start, end)) => {
                    fold(start, end, Some(FoldingRangeKind::Comment));
                    Some((first, last))
                }
                None => Some((first, last)),
            };
            continue;
        }
        match word {
            "{" => {
                let is_node = at >= 2
                    && &text[lexemes[at - 2].span.start..lexemes[at - 2].span.end] == "node";
                opened.push((lexeme.span.start, is_node));
            }
            "}" => {
                if let Some((open, true)) = opened.pop() {
                    fold(line_of(open), line_of(lexeme.span.start), None);
                }
            }
            _ => {}
        }
    }
    if let Some((start, end)) = comments {
        fold(start, end, Some(FoldingRangeKind::Comment));
    }
    folds.sort_by_key(|f| (f.start_line, f.end_line));
    folds
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "//! Replies.\n\n/// Answers.\n/// One ticket.\ngraph Desk {\n    state Ticket;\n    node draft {\n        retry 2;\n        meta owner = \"öps\";\n    }\n    node send;\n    START -> draft -> send | END;\n}\n";

    /// The tokens as (line, column, length, type, modifiers), positions made absolute.
    fn decoded(analysis: &Analysis) -> Vec<(u32, u32, u32, Kind, u32)> {
        let kinds = [
            Kind::Keyword,
            Kind::Comment,
            Kind::Text,
            Kind::Number,
            Kind::Operator,
            Kind::Type,
            Kind::Node,
            Kind::Terminal,
            Kind::Key,
        ];
        let (mut line, mut column) = (0, 0);
        tokens(analysis)
            .data
            .into_iter()
            .map(|t| {
                if t.delta_line > 0 {
                    column = 0;
                }
                line += t.delta_line;
                column += t.delta_start;
                let kind = kinds[t.token_type as usize];
                (line, column, t.length, kind, t.token_modifiers_bitset)
            })
            .collect()
    }

    #[test]
    fn every_word_gets_the_colour_of_what_it_is() {
        let analysis = Analysis::new(TEXT.to_owned());
        let found = decoded(&analysis);
        let at = |line: u32, column: u32| {
            found
                .iter()
                .find(|t| t.0 == line && t.1 == column)
                .map(|t| (t.2, t.3, t.4))
        };
        assert_eq!(at(0, 0), Some((12, Kind::Comment, DOCUMENTATION)));
        assert_eq!(at(2, 0), Some((12, Kind::Comment, DOCUMENTATION)));
        assert_eq!(at(4, 0), Some((5, Kind::Keyword, 0)));
        assert_eq!(at(4, 6), Some((4, Kind::Type, DECLARATION)));
        assert_eq!(at(5, 4), Some((5, Kind::Keyword, 0)));
        assert_eq!(at(5, 10), Some((6, Kind::Type, 0)));
        assert_eq!(at(6, 9), Some((5, Kind::Node, DECLARATION)));
        assert_eq!(at(7, 14), Some((1, Kind::Number, 0)));
        assert_eq!(at(8, 13), Some((5, Kind::Key, 0)));
        // `"öps"`: six bytes, five UTF-16 units.
        assert_eq!(at(8, 21), Some((5, Kind::Text, 0)));
        assert_eq!(at(11, 4), Some((5, Kind::Terminal, 0)));
        assert_eq!(at(11, 10), Some((2, Kind::Operator, 0)));
        assert_eq!(at(11, 13), Some((5, Kind::Node, 0)));
        assert_eq!(at(11, 29), Some((3, Kind::Terminal, 0)));
        assert_eq!(at(6, 15), None, "punctuation has no colour");
    }

    #[test]
    fn a_comment_over_several_lines_is_a_token_a_line() {
        let analysis =
            Analysis::new("/* one\n two */ graph G { node a; START -> a -> END; }\n".to_owned());
        let found = decoded(&analysis);
        assert_eq!(found[0], (0, 0, 6, Kind::Comment, 0));
        assert_eq!(found[1], (1, 0, 7, Kind::Comment, 0));
    }

    #[test]
    fn graphs_node_blocks_and_comment_runs_fold() {
        let analysis = Analysis::new(TEXT.to_owned());
        let folds: Vec<(u32, u32, Option<FoldingRangeKind>)> = folding_ranges(&analysis)
            .into_iter()
            .map(|f| (f.start_line, f.end_line, f.kind))
            .collect();
        assert_eq!(
            folds,
            [
                (2, 3, Some(FoldingRangeKind::Comment)),
                (4, 12, None),
                (6, 9, None),
            ]
        );
    }
}
