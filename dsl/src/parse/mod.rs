//! Source text → spanned AST, one grammar piece at a time, recovering after syntax errors.
//!
//! The file is not handed to pest whole: the driver parses a graph header, then one graph item,
//! then (inside a broken node block) one attribute at a time. A piece that does not parse yields
//! one E0001 and the driver resumes at the next `;` or `}`, so later independent errors still
//! show. Pieces are small, so pest's token queue stays small however large the file is.
//!
//! `recover.rs` is that driver, `expected.rs` words its errors, `tree.rs` turns pest's pairs
//! into the AST; this module picks the way in (the hand reader, the whole file, or piece by
//! piece).

mod expected;
mod recover;
#[cfg(test)]
mod tests;
mod tree;

use pest::Parser as _;

use crate::ast::{File, Graph};
use crate::diagnostic::{Diagnostics, Span};
use crate::syntax::{GraphParser, Rule};

use recover::{Parser, cut_points};
use tree::{build_item, doc_line, docs_of, head_parts, span};

/// After this many syntax errors in one file the rest is skipped: past it, errors are noise.
const MAX_SYNTAX_ERRORS: usize = 100;

/// Parses `text`, reporting syntax errors (E0001) into `diagnostics`.
pub(crate) fn parse<'a>(text: &'a str, diagnostics: &mut Diagnostics) -> File<'a> {
    parse_with(text, diagnostics, true, FIRST_WINDOW)
}

/// The text pest first sees of a piece, at least; most statements are far shorter.
const FIRST_WINDOW: usize = 64;

/// Parses `text`: first in one go with the `file` rule when `whole_file_first` (the common,
/// valid case, without per-statement overhead), else — or when that fails — piece by piece
/// with recovery, on windows of at least `first_window` bytes.
fn parse_with<'a>(
    text: &'a str,
    diagnostics: &mut Diagnostics,
    whole_file_first: bool,
    first_window: usize,
) -> File<'a> {
    let open_comment = unterminated_comment(text);
    if whole_file_first && open_comment.is_none() {
        // The common case, read by hand; then the whole file in one pest call.
        if let Some(file) = crate::fast::parse(text).or_else(|| parse_whole(text)) {
            return file;
        }
    }
    let mut parser = Parser {
        text,
        pos: 0,
        diagnostics,
        syntax_errors: 0,
        open_comment: open_comment.is_some(),
        cuts: cut_points(text),
        first_window,
    };
    if let Some(at) = open_comment {
        parser.report_unexpected(at, &[], None, None);
    }
    parser.file()
}

/// The whole file through the grammar's `file` rule, if it parses.
pub(crate) fn parse_whole(text: &str) -> Option<File<'_>> {
    let file_pair = GraphParser::parse(Rule::file, text).ok()?.next()?;
    let mut file = File::default();
    for part in file_pair.into_inner() {
        match part.as_rule() {
            Rule::inner_doc => file.docs.push(doc_line(&part, 0)),
            Rule::graph => {
                let extent = span(&part, 0);
                let mut graph: Option<Graph<'_>> = None;
                for piece in part.into_inner() {
                    match (piece.as_rule(), graph.as_mut()) {
                        (Rule::graph_head, _) => {
                            let (docs, name, brace) = head_parts(piece, 0);
                            let head =
                                Span::new(name.map_or(brace.start, |n| n.span.start), brace.end);
                            graph = Some(Graph::new(docs, name, head));
                        }
                        (Rule::graph_item, Some(graph)) => graph.items.push(build_item(piece, 0)),
                        (Rule::graph_close, Some(graph)) => {
                            graph.stray_docs.extend(docs_of(piece, 0));
                        }
                        _ => {}
                    }
                }
                let mut graph = graph?;
                graph.extent = extent;
                file.graphs.push(graph);
            }
            _ => {}
        }
    }
    Some(file)
}

/// Where a block comment that is never closed starts. Such a comment runs to the end of the
/// file, so only the last comment can be one; the file is lexed only if it has a `/*` at all.
fn unterminated_comment(text: &str) -> Option<usize> {
    if !text.contains("/*") {
        return None;
    }
    let stream = GraphParser::parse(Rule::token_stream, text).ok()?.next()?;
    let last = stream
        .into_inner()
        .filter(|pair| pair.as_rule() == Rule::comment)
        .last()?;
    let comment = last.as_str();
    if !comment.starts_with("/*") || last.as_span().end() != text.len() {
        return None;
    }
    let mut depth = 0usize;
    let mut rest = comment;
    while !rest.is_empty() {
        if rest.starts_with("/*") {
            depth += 1;
            rest = &rest[2..];
        } else if rest.starts_with("*/") {
            depth -= 1;
            rest = &rest[2..];
        } else {
            let skip = rest.chars().next().map_or(1, char::len_utf8);
            rest = &rest[skip..];
        }
    }
    (depth > 0).then(|| last.as_span().start())
}

/// Whether `text` parses piece by piece without a syntax error.
#[cfg(test)]
pub(crate) fn is_syntactically_valid(text: &str) -> bool {
    let mut diagnostics = Diagnostics::default();
    parse_with(text, &mut diagnostics, false, FIRST_WINDOW);
    diagnostics.error_count() == 0
}
