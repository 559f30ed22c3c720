//! Source text → spanned AST, through the pest grammar, recovering after syntax errors.
//!
//! The file is not handed to pest whole: the driver parses a graph header, then the graph's
//! items — as many as a window of the text holds in one call while they parse (`batch_items`,
//! the fast path), else one at a time (`graph_item`) — and, inside a broken node block, one
//! attribute at a time. A piece that does not parse yields one E0001 and the driver resumes at
//! the next `;` or `}`, so later independent errors still show. Windows are small, so pest's
//! token queue stays small and in the cache however large the file is.
//!
//! `recover.rs` is that driver, `expected.rs` words its errors, `tree.rs` turns pest's pairs
//! into the AST.

mod expected;
mod recover;
#[cfg(test)]
mod tests;
mod tree;

use pest::Parser as _;

use crate::ast::File;
use crate::diagnostic::Diagnostics;
use crate::syntax::{GraphParser, Rule};

use recover::{Parser, cut_points};

/// After this many syntax errors in one file the rest is skipped: past it, errors are noise.
const MAX_SYNTAX_ERRORS: usize = 100;

/// Parses `text`, reporting syntax errors (E0001) into `diagnostics`.
pub(crate) fn parse<'a>(text: &'a str, diagnostics: &mut Diagnostics) -> File<'a> {
    parse_with(text, diagnostics, Some(BATCH_WINDOW), FIRST_WINDOW)
}

/// The text pest first sees of a piece, at least; most statements are far shorter.
const FIRST_WINDOW: usize = 64;

/// The text a batch of items is parsed on, at least: enough for a hundred items or more, small
/// enough that pest's token queue stays in the cache (one queue for a large file is tens of
/// megabytes, and faulting it in cost more than the parse).
const BATCH_WINDOW: usize = 8 * 1024;

/// Parses `text` with items many to a call on windows of at least `batch` bytes (else one at a
/// time), single pieces on windows of at least `first_window` bytes. Neither changes the
/// result, only its cost.
fn parse_with<'a>(
    text: &'a str,
    diagnostics: &mut Diagnostics,
    batch: Option<usize>,
    first_window: usize,
) -> File<'a> {
    let open_comment = unterminated_comment(text);
    let mut parser = Parser {
        text,
        pos: 0,
        diagnostics,
        syntax_errors: 0,
        open_comment: open_comment.is_some(),
        cuts: cut_points(text),
        first_window,
        batch,
    };
    if let Some(at) = open_comment {
        parser.report_unexpected(at, &[], None, None);
    }
    parser.file()
}

/// The AST and the syntax errors of `text`, as text, for the property tests that compare ways
/// of parsing.
#[cfg(feature = "test-util")]
pub(crate) fn parse_for_test(text: &str, batch: bool) -> String {
    let mut diagnostics = Diagnostics::default();
    let batch = batch.then_some(BATCH_WINDOW);
    let file = parse_with(text, &mut diagnostics, batch, FIRST_WINDOW);
    format!("{file:?}\n{:?}", diagnostics.into_sorted())
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
    parse_with(text, &mut diagnostics, None, FIRST_WINDOW);
    diagnostics.error_count() == 0
}
