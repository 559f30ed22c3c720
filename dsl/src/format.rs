//! The canonical layout of `.graph` files (`trellis fmt`).
//!
//! The formatter re-lays the file's tokens and keeps every comment and doc comment where it stood
//! relative to them: a comment that ended a line still ends it, one on its own line stays on its
//! own line. The layout depends only on the tokens, never on the old layout (apart from single
//! blank lines between statements, which are kept), so formatting is idempotent. Before returning,
//! the output is lexed again and must hold exactly the input's tokens and comments.

use pest::Parser as _;

use crate::diagnostic::Diagnostic;
use crate::syntax::{GraphParser, Rule};

/// The width a node block may take on one line before it is laid out one attribute per line.
const MAX_WIDTH: usize = 100;
const INDENT: &str = "    ";

/// Why a file could not be formatted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The file does not parse; formatting it could move code into or out of a comment.
    #[error("the file has syntax errors, so it was not formatted")]
    Syntax(Vec<Diagnostic>),
    /// The formatted text would not hold the same tokens as the input. This is a bug in Trellis;
    /// the input is returned untouched by callers.
    #[error("formatting would change the file's tokens; this is a bug in trellis fmt")]
    WouldChangeTokens,
}

/// Formats a `.graph` source canonically.
///
/// ```
/// let messy = "graph  G{node a;START->a ;a->END;}";
/// let tidy = trellis_dsl::format(messy)?;
/// assert_eq!(tidy, "graph G {\n    node a;\n    START -> a;\n    a -> END;\n}\n");
/// # Ok::<(), trellis_dsl::FormatError>(())
/// ```
pub fn format(text: &str) -> Result<String, FormatError> {
    let mut diagnostics = crate::diagnostic::Diagnostics::default();
    crate::parse::parse(text, &mut diagnostics);
    let syntax_errors = diagnostics.into_sorted();
    if !syntax_errors.is_empty() {
        return Err(FormatError::Syntax(syntax_errors));
    }
    let elements = lex(text).ok_or(FormatError::WouldChangeTokens)?;
    let mut printer = Printer::default();
    printer.print(&elements);
    let formatted = printer.finish();
    if !same_pieces(&elements, &formatted) {
        return Err(FormatError::WouldChangeTokens);
    }
    Ok(formatted)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece<'a> {
    Token(&'a str),
    LineComment(&'a str),
    BlockComment(&'a str),
    Doc(&'a str),
}

#[derive(Clone, Copy, Debug)]
struct Element<'a> {
    piece: Piece<'a>,
    /// A line break separates it from what precedes it (always true for the first element).
    newline_before: bool,
    /// An empty line separates it from what precedes it.
    blank_before: bool,
    /// A line break follows it (or it ends the file).
    newline_after: bool,
}

/// The file as tokens and comments, with the line breaks around each.
fn lex(text: &str) -> Option<Vec<Element<'_>>> {
    let stream = GraphParser::parse(Rule::token_stream, text).ok()?.next()?;
    let mut elements: Vec<Element<'_>> = Vec::new();
    let mut newlines = usize::MAX;
    for pair in stream.into_inner() {
        let piece = match pair.as_rule() {
            Rule::ws_run => {
                let count = pair.as_str().matches('\n').count();
                if let Some(last) = elements.last_mut() {
                    last.newline_after = count > 0;
                }
                newlines = newlines.saturating_add(count);
                continue;
            }
            Rule::comment if pair.as_str().starts_with("//") => {
                Piece::LineComment(pair.as_str().trim_end())
            }
            Rule::comment => Piece::BlockComment(pair.as_str()),
            Rule::outer_doc | Rule::inner_doc => Piece::Doc(pair.as_str().trim_end()),
            Rule::lex_token => Piece::Token(pair.as_str()),
            _ => continue,
        };
        elements.push(Element {
            piece,
            newline_before: newlines > 0,
            blank_before: newlines > 1 && newlines != usize::MAX,
            newline_after: true,
        });
        newlines = 0;
    }
    Some(elements)
}

/// Whether `formatted` holds exactly the tokens and comments of the input's `elements`, layout
/// aside: the safety check before the formatter returns anything.
fn same_pieces(elements: &[Element<'_>], formatted: &str) -> bool {
    lex(formatted).is_some_and(|after| {
        after.len() == elements.len() && after.iter().zip(elements).all(|(a, b)| a.piece == b.piece)
    })
}

#[derive(Default)]
struct Printer {
    out: String,
    depth: usize,
    /// Characters on the current line.
    column: usize,
    at_line_start: bool,
    /// Inside a statement that is not finished yet (continuation lines are indented once more).
    in_statement: bool,
    /// The last code token written, for spacing.
    previous: Option<String>,
    /// A block comment ends the current line so far: the next token is spaced from it.
    after_inline_comment: bool,
    /// The current line opened a block: no empty line may follow it.
    just_opened: bool,
    /// A graph just closed: an empty line comes before whatever follows.
    graph_closed: bool,
    /// The line is finished but not yet ended, so a trailing comment can still join it.
    pending_newline: bool,
}

impl Printer {
    fn print(&mut self, elements: &[Element<'_>]) {
        self.at_line_start = true;
        let mut at = 0;
        while at < elements.len() {
            let element = elements[at];
            let trailing_comment = !element.newline_before
                && matches!(
                    element.piece,
                    Piece::LineComment(_) | Piece::BlockComment(_)
                );
            if self.pending_newline && !trailing_comment {
                self.newline();
            }
            match element.piece {
                Piece::Token("{") if self.depth == 1 => {
                    if let Some(end) = self.single_line_block(elements, at) {
                        at = end + 1;
                        continue;
                    }
                    self.open_block();
                }
                Piece::Token("{") => self.open_block(),
                Piece::Token("}") => self.close_block(),
                Piece::Token(";") => {
                    self.write_token(";", &element);
                    self.in_statement = false;
                    self.pending_newline = true;
                }
                Piece::Token(token) => {
                    self.write_token(token, &element);
                    self.in_statement = true;
                }
                Piece::LineComment(text) => {
                    self.write_comment(text, &element);
                    self.newline();
                }
                Piece::BlockComment(text) => {
                    let ends_line = self.pending_newline || element.newline_after;
                    self.write_comment(text, &element);
                    if ends_line {
                        self.pending_newline = true;
                    } else {
                        self.after_inline_comment = true;
                    }
                }
                Piece::Doc(text) => {
                    self.start_own_line(&element);
                    self.write_raw(text);
                    self.newline();
                }
            }
            at += 1;
        }
    }

    fn finish(mut self) -> String {
        if !self.at_line_start || self.pending_newline {
            self.newline();
        }
        while self.out.ends_with("\n\n") {
            self.out.pop();
        }
        self.out
    }

    /// Lays a node block out on one line (`{ retry 3; timeout 5s; }`) when it holds no comment
    /// and fits; returns the index of its `}`.
    fn single_line_block(&mut self, elements: &[Element<'_>], open: usize) -> Option<usize> {
        let mut line = String::from("{");
        let mut previous: Option<&str> = None;
        for (offset, element) in elements[open + 1..].iter().enumerate() {
            let Piece::Token(token) = element.piece else {
                return None;
            };
            match token {
                "}" => {
                    line.push_str(if previous.is_none() { "}" } else { " }" });
                    if self.column + 1 + line.chars().count() > MAX_WIDTH {
                        return None;
                    }
                    self.out.push(' ');
                    self.out.push_str(&line);
                    self.column += 1 + line.chars().count();
                    self.previous = Some("}".to_owned());
                    self.in_statement = false;
                    self.pending_newline = true;
                    return Some(open + 1 + offset);
                }
                "{" => return None,
                _ => {
                    let spaced = match previous {
                        None => true,
                        Some(before) => space_between(before, token),
                    };
                    if spaced {
                        line.push(' ');
                    }
                    line.push_str(token);
                    previous = Some(token);
                }
            }
        }
        None
    }

    fn open_block(&mut self) {
        if self.at_line_start {
            self.indent();
        } else {
            self.out.push(' ');
        }
        self.out.push('{');
        self.depth += 1;
        self.in_statement = false;
        self.previous = Some("{".to_owned());
        self.pending_newline = true;
        self.just_opened = true;
    }

    fn close_block(&mut self) {
        if !self.at_line_start {
            self.newline();
        }
        self.depth = self.depth.saturating_sub(1);
        self.in_statement = false;
        self.just_opened = false;
        self.indent();
        self.out.push('}');
        self.previous = Some("}".to_owned());
        self.pending_newline = true;
        if self.depth == 0 {
            self.graph_closed = true;
        }
    }

    fn write_token(&mut self, token: &str, element: &Element<'_>) {
        if self.at_line_start {
            self.blank_line_if(element.blank_before);
            self.indent();
        } else if self.after_inline_comment
            || self
                .previous
                .as_deref()
                .is_some_and(|before| space_between(before, token))
        {
            self.out.push(' ');
            self.column += 1;
        }
        self.write_raw(token);
        self.previous = Some(token.to_owned());
        self.after_inline_comment = false;
    }

    fn write_comment(&mut self, text: &str, element: &Element<'_>) {
        if !element.newline_before && !self.at_line_start {
            self.out.push(' ');
            self.column += 1;
        } else {
            self.start_own_line(element);
        }
        self.write_raw(text);
    }

    fn start_own_line(&mut self, element: &Element<'_>) {
        if !self.at_line_start {
            self.newline();
        }
        self.blank_line_if(element.blank_before);
        self.indent();
    }

    fn blank_line_if(&mut self, wanted: bool) {
        let wanted = (wanted && !self.just_opened) || self.graph_closed;
        if wanted && !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
        self.graph_closed = false;
        self.just_opened = false;
    }

    fn indent(&mut self) {
        let levels = self.depth + usize::from(self.in_statement);
        for _ in 0..levels {
            self.out.push_str(INDENT);
        }
        self.column = levels * INDENT.len();
        self.at_line_start = false;
    }

    fn write_raw(&mut self, text: &str) {
        self.out.push_str(text);
        self.column += text.chars().count();
        self.at_line_start = false;
    }

    fn newline(&mut self) {
        self.pending_newline = false;
        let trimmed = self.out.trim_end_matches([' ', '\t']).len();
        self.out.truncate(trimmed);
        self.out.push('\n');
        self.column = 0;
        self.at_line_start = true;
        self.after_inline_comment = false;
    }
}

/// Whether one space separates two adjacent tokens on a line. Tokens that would fuse into a
/// different token (`-` `>` into `->`, `/` `/` into a comment) are always spaced.
fn space_between(before: &str, token: &str) -> bool {
    let fuses = match (before.chars().last(), token.chars().next()) {
        (Some(last), Some(first)) => {
            matches!(
                (last, first),
                ('-', '>') | (':', ':') | ('/', '/' | '*') | ('*', '/')
            )
        }
        _ => false,
    };
    fuses || spaced(before, token)
}

fn spaced(before: &str, token: &str) -> bool {
    match token {
        ";" | "," | ")" | "(" | "<" | ">" => false,
        "::" => before == "state",
        _ => !matches!(before, "(" | "<" | "::"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(text: &str) -> String {
        match format(text) {
            Ok(formatted) => formatted,
            Err(error) => panic!("{error}: {text:?}"),
        }
    }

    #[test]
    fn canonical_layout() {
        let messy = "//! Flow.\n\n/// Doc.\ngraph Support{state crate :: Ticket < Vec<u8> ,u32 >;max_steps 25;\nnode a{retry 3 backoff 200ms;timeout 10s;}node b {}\nnode c { kind delegate ( Other ) ; }\nSTART->a|b  ;a->b->c&b;b->END;c->END;}";
        let expected = "//! Flow.\n\n/// Doc.\ngraph Support {\n    state crate::Ticket<Vec<u8>, u32>;\n    max_steps 25;\n    node a { retry 3 backoff 200ms; timeout 10s; }\n    node b {}\n    node c { kind delegate(Other); }\n    START -> a | b;\n    a -> b -> c & b;\n    b -> END;\n    c -> END;\n}\n";
        assert_eq!(fmt(messy), expected);
        assert_eq!(fmt(expected), expected);
    }

    #[test]
    fn a_subgraph_node_is_laid_out_like_any_attribute() {
        let messy = "graph T{node research{graph Review;retry 2;}node other { graph   elsewhere :: Other ; }\nSTART->research->other->END;}";
        let expected = "graph T {\n    node research { graph Review; retry 2; }\n    node other { graph elsewhere::Other; }\n    START -> research -> other -> END;\n}\n";
        assert_eq!(fmt(messy), expected);
        assert_eq!(fmt(expected), expected);
    }

    #[test]
    fn comments_stay_where_they_were() {
        let text = "graph G { // trailing\n  // own line\n\n\n  node a; /* inline */ node b;\n  /* before */ START -> a // mid-statement\n  -> b;\n  b -> END;\n  /// stray docs are kept too\n}\n";
        let expected = "graph G { // trailing\n    // own line\n\n    node a; /* inline */\n    node b;\n    /* before */ START -> a // mid-statement\n        -> b;\n    b -> END;\n    /// stray docs are kept too\n}\n";
        assert_eq!(fmt(text), expected);
        assert_eq!(fmt(expected), expected);
    }

    #[test]
    fn a_node_block_with_comments_or_too_long_is_multi_line() {
        let text = "graph G { node a { retry 2; // twice\n timeout 1s; } }";
        assert_eq!(
            fmt(text),
            "graph G {\n    node a {\n        retry 2; // twice\n        timeout 1s;\n    }\n}\n"
        );
        let long = format!(
            "graph G {{ node a {{ meta note = \"{}\"; }} }}",
            "x".repeat(90)
        );
        assert!(fmt(&long).contains("node a {\n        meta note"));
    }

    #[test]
    fn graphs_are_separated_by_one_empty_line() {
        assert_eq!(
            fmt(
                "graph A { node a; START -> a; a -> END; }\n\n\n\ngraph B { node b; START -> b; b -> END; }"
            ),
            "graph A {\n    node a;\n    START -> a;\n    a -> END;\n}\n\ngraph B {\n    node b;\n    START -> b;\n    b -> END;\n}\n"
        );
    }

    #[test]
    fn tokens_are_never_fused_into_other_tokens() {
        // Unknown graph items may hold any tokens; `- >` must not become `->`, `: ::` not `:::`.
        let text = "graph G { node plan; plan - > b; x : :: y; START -> plan -> END; }";
        let formatted = fmt(text);
        assert!(formatted.contains("plan - > b;"), "{formatted}");
        assert!(formatted.contains("x : ::y;"), "{formatted}");
        assert_eq!(fmt(&formatted), formatted);
    }

    #[test]
    fn syntax_errors_are_refused() {
        assert!(
            matches!(format("graph G { node }"), Err(FormatError::Syntax(errors)) if errors.len() == 1)
        );
    }

    #[test]
    fn empty_and_comment_only_files() {
        assert_eq!(fmt(""), "");
        assert_eq!(fmt("  \n\n"), "");
        assert_eq!(fmt("// just a note   \r\n"), "// just a note\n");
    }
}
