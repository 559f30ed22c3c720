//! What a syntax error says: what stands there, what was expected, and how to write the piece.

use crate::diagnostic::{Code, Diagnostic, Span};
use crate::syntax::Rule;
use crate::words;
use trellis_graph::did_you_mean;

/// The grammar piece a syntax error was found in, for the reminder in its help.
#[derive(Clone, Copy)]
pub(super) enum Piece {
    GraphHead,
    GraphItem,
    Attribute,
}

/// The form of the statement or attribute that failed to parse, told by its first word.
pub(super) fn syntax_hint(piece_text: &str, piece: Piece) -> String {
    let word: String = piece_text
        .trim_start_matches(|c: char| c == '/' || c.is_whitespace())
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let form = |list: &[words::Word]| {
        list.iter()
            .find(|form| form.name == word)
            .map(|form| form.hint.to_owned())
    };
    match piece {
        Piece::GraphHead => "a graph is written `graph Name { … }`".to_owned(),
        Piece::GraphItem => form(words::GRAPH_ITEMS).unwrap_or_else(|| {
            "an edge is `a -> b;`, `a -> b | c;` (a router picks one) or `a -> b & c;` (all run)"
                .to_owned()
        }),
        Piece::Attribute => form(words::ATTRIBUTES).unwrap_or_else(|| {
            format!(
                "an attribute is one of {}, ending in `;`",
                words::quoted(words::attribute_names(), "or")
            )
        }),
    }
}

/// What stands at a syntax error's position.
pub(super) enum Found {
    EndOfFile,
    UnterminatedComment,
    UnterminatedString,
    Token { text: String, is_word: bool },
    Described(&'static str),
}

/// Builds the E0001 for an unexpected token at `at`, saying what was expected.
pub(super) fn unexpected_token(text: &str, at: usize, expected: &[Rule]) -> Diagnostic {
    let (span, found) = found_at(text, at);
    match found {
        Found::UnterminatedComment => Diagnostic::new(
            Code::E0001,
            span,
            "unterminated block comment",
            "this comment is never closed",
        )
        .with_help("close it with `*/`; each nested `/*` needs its own `*/`"),
        Found::UnterminatedString => Diagnostic::new(
            Code::E0001,
            span,
            "unterminated string",
            "this string is never closed",
        )
        .with_help("close it with `\"`; write a quote inside a string as `\\\"`"),
        found => {
            let expected_list = describe_expected(expected);
            let found_text = found.describe();
            let help = match &found {
                Found::Token {
                    text,
                    is_word: true,
                } => did_you_mean(text, expected.iter().filter_map(|r| words::keyword_of(*r)))
                    .map(|keyword| format!("did you mean `{keyword}`?")),
                Found::Described("`//!` doc comment") => {
                    Some("`//!` documents the whole file and goes at its top".to_owned())
                }
                _ => None,
            };
            let (message, label) = if expected_list.is_empty() {
                (
                    format!("unexpected {found_text}"),
                    "unexpected here".to_owned(),
                )
            } else {
                (
                    format!("expected {expected_list}, found {found_text}"),
                    format!("expected {expected_list}"),
                )
            };
            Diagnostic::new(Code::E0001, span, message, label).with_optional_help(help)
        }
    }
}

impl Found {
    /// `keyword `node``, `` `->` ``, `end of file`, …
    pub(super) fn describe(&self) -> String {
        match self {
            Found::EndOfFile => "end of file".to_owned(),
            Found::Token { text, is_word } if *is_word && words::is_reserved(text) => {
                format!("keyword `{text}`")
            }
            Found::Token { text, .. } => format!("`{text}`"),
            Found::Described(what) => (*what).to_owned(),
            Found::UnterminatedComment | Found::UnterminatedString => String::new(),
        }
    }
}

/// The token at `at`: its span and a description.
pub(super) fn found_at(text: &str, at: usize) -> (Span, Found) {
    let rest = &text[at..];
    let Some(first) = rest.chars().next() else {
        return (Span::new(at, at), Found::EndOfFile);
    };
    if rest.starts_with("/*") {
        return (Span::new(at, at + 2), Found::UnterminatedComment);
    }
    if first == '"' {
        // The string rule failed here, so the string never closes.
        return (Span::new(at, at + 1), Found::UnterminatedString);
    }
    if rest.starts_with("//!") {
        let end = rest.find('\n').unwrap_or(rest.len());
        return (
            Span::new(at, at + end.min(3)),
            Found::Described("`//!` doc comment"),
        );
    }
    if rest.starts_with("///") {
        return (Span::new(at, at + 3), Found::Described("doc comment"));
    }
    if rest.starts_with("->") || rest.starts_with("::") {
        return (
            Span::new(at, at + 2),
            Found::Token {
                text: rest[..2].to_owned(),
                is_word: false,
            },
        );
    }
    if first.is_ascii_alphanumeric() || first == '_' {
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        // Quote at most a screenful of a very long word.
        let shown: String = rest[..len].chars().take(40).collect();
        let text = if shown.len() < len {
            format!("{shown}…")
        } else {
            shown
        };
        return (
            Span::new(at, at + len),
            Found::Token {
                text,
                is_word: !first.is_ascii_digit(),
            },
        );
    }
    let span = Span::new(at, at + first.len_utf8());
    let text = if first.is_control() || first.is_whitespace() {
        first.escape_default().to_string()
    } else {
        first.to_string()
    };
    (
        span,
        Found::Token {
            text,
            is_word: false,
        },
    )
}

/// The tokens a rule can start with. pest names the rule itself, not its first tokens, when it
/// fails at its own start; this spells such rules out so messages list tokens.
pub(super) fn first_tokens(rule: Rule) -> Vec<Rule> {
    match rule {
        Rule::graph_head => vec![Rule::kw_graph],
        Rule::graph_item => words::GRAPH_ITEMS
            .iter()
            .map(|word| word.rule)
            .chain([Rule::kw_start, Rule::ident, Rule::rbrace])
            .collect(),
        Rule::attr => words::ATTRIBUTES
            .iter()
            .map(|word| word.rule)
            .chain([Rule::rbrace])
            .collect(),
        Rule::endpoint | Rule::target => vec![Rule::kw_start, Rule::kw_end, Rule::ident],
        Rule::rust_path => vec![Rule::path_sep, Rule::ident],
        other => vec![other],
    }
}

/// "`;`", "one of `;` or `{`", "one of `a`, `b`, or `c`".
pub(super) fn describe_expected(expected: &[Rule]) -> String {
    let mut names: Vec<(usize, String)> = expected
        .iter()
        .filter_map(|rule| rule_description(*rule))
        .collect();
    // Doc comments are allowed in many places; listing them only adds noise.
    if names.len() > 1 {
        names.retain(|(_, name)| *name != "doc comment");
    }
    names.sort();
    names.dedup();
    let names: Vec<String> = names.into_iter().map(|(_, name)| name).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [one, other] => format!("one of {one} or {other}"),
        [init @ .., last] => format!("one of {}, or {last}", init.join(", ")),
    }
}

/// How a token rule is named in "expected …", with its rank in such lists (keywords first).
pub(super) fn rule_description(rule: Rule) -> Option<(usize, String)> {
    let name = match rule {
        Rule::semi => "`;`",
        Rule::arrow => "`->`",
        Rule::pipe => "`|`",
        Rule::amp => "`&`",
        Rule::eq => "`=`",
        Rule::lbrace => "`{`",
        Rule::rbrace => "`}`",
        Rule::lparen => "`(`",
        Rule::rparen => "`)`",
        Rule::path_sep => "`::`",
        Rule::lt => "`<`",
        Rule::gt => "`>`",
        Rule::comma => "`,`",
        Rule::ident => "a name",
        Rule::number => "a number",
        Rule::string => "a string",
        Rule::outer_doc => "doc comment",
        Rule::inner_doc => "`//!` doc comment",
        Rule::EOI => "end of file",
        other => return words::keyword_of(other).map(|keyword| (0, format!("`{keyword}`"))),
    };
    Some((1, name.to_owned()))
}
