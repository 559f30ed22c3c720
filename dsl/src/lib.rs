//! The `.graph` language of Trellis: parser, validated blueprint IR, diagnostics and formatter
//! (a blueprint's exports are `trellis_graph::export`'s).
//!
//! Source text goes through [`check()`]: a pest grammar parses it into a spanned AST (recovering
//! after syntax errors, so later independent errors still show), lowering turns that into a
//! [`Module`] of [`Blueprint`]s, and validation adds every independent problem as a [`Diagnostic`]
//! with a code, a span, labels and help. Code generation and every export read the blueprint,
//! never the AST.
//!
//! ```
//! let source = r#"
//! graph Support {
//!     node classify;
//!     node draft { max_visits 2; }
//!     START -> classify;
//!     classify -> draft | END;
//!     draft -> drfat;
//! }
//! "#;
//! let checked = trellis_dsl::check(source);
//! assert!(checked.has_errors());
//! let error = &checked.diagnostics[0];
//! assert_eq!(error.code, trellis_dsl::Code::E0202);
//! assert_eq!(error.message, "node `drfat` is not declared in graph `Support`");
//! assert_eq!(error.help.as_deref(), Some("did you mean `draft`?"));
//! assert_eq!(&source[error.span.start..error.span.end], "drfat");
//! ```
//!
//! [`render::json_line`] writes a diagnostic as the JSON of `trellis check --format json`; with the
//! `render` feature, `render::human` draws it as a rustc-style report with the source snippet.

// A diagnostic is the front end's error: made once per problem, on the error path only, so its
// size (a few strings and a boxed fix) costs nothing worth boxing it for.
#![allow(clippy::result_large_err)]

// The parser pest generates without its `std` feature names `alloc`. pest is used without `std`
// because that feature probes the native stack on every rule call; the grammar never recurses on
// input depth (nesting is counted on pest's own stack), so the probe would buy nothing.
extern crate alloc;

mod ast;
mod blueprint;
mod check;
mod diagnostic;
mod format;
mod lexeme;
mod literal;
mod lower;
pub mod modules;
mod names;
mod parse;
mod position;
pub mod render;
pub mod words;

/// The crate's internals for its own property tests (feature `test-util`, as tokio has one):
/// not an API, no stability.
#[cfg(feature = "test-util")]
#[doc(hidden)]
pub mod test_util {
    /// The AST and syntax errors of `text`, parsed many items to a pest call where it can be.
    pub fn batched(text: &str) -> String {
        crate::parse::parse_for_test(text, true)
    }

    /// The AST and syntax errors of `text`, parsed one item to a pest call.
    pub fn one_at_a_time(text: &str) -> String {
        crate::parse::parse_for_test(text, false)
    }
}

/// The pest parser generated from `grammar.pest`.
#[allow(missing_docs, unreachable_pub)]
mod syntax {
    #[derive(pest_derive::Parser)]
    #[grammar = "grammar.pest"]
    pub struct GraphParser;
}

pub use blueprint::{EdgeSpans, GraphSpans, Module, NodeSpans};
pub use diagnostic::{Diagnostic, Fix, Label, Span};
pub use format::{FormatError, format};
pub use lexeme::{Lexeme, LexemeKind, lexemes};
pub use position::{LineColumn, LineIndex, LineTable};
/// The graph rules' types, re-exported: the blueprint IR and the diagnostic codes.
pub use trellis_graph::{
    Blueprint, Code, Edge, EdgeKind, Endpoint, InterruptPoint, JSON_FORMAT, MetaValue, Node,
    NodeKind, Retry, RetryOn, Scope, Severity, did_you_mean,
};

/// The Rust names generated code gives graphs and nodes (the names E0106 keeps apart).
pub mod rust_names {
    /// The module a graph becomes: `LookupInvoice` → `lookup_invoice`.
    pub fn module(graph: &str) -> String {
        crate::names::to_snake_case(graph)
    }

    /// The enum variant a node or route target becomes: `lookup_invoice` → `LookupInvoice`.
    pub fn variant(node: &str) -> String {
        crate::names::to_pascal_case(node)
    }
}

/// Why `name` cannot name a node (the rules of E0103 and E0105), or `None` when it can.
///
/// ```
/// assert_eq!(trellis_dsl::node_name_problem("draft_reply"), None);
/// assert!(trellis_dsl::node_name_problem("DraftReply").is_some());
/// assert!(trellis_dsl::node_name_problem("END").is_some());
/// ```
pub fn node_name_problem(name: &str) -> Option<String> {
    if let Some(reason) = trellis_graph::reserved_name_reason(name) {
        return Some(reason);
    }
    if let Some(reason) = names::unusable_reason(name) {
        return Some(reason);
    }
    (!names::is_snake_case(name)).then(|| "node names are snake_case".to_owned())
}

/// The outcome of checking a source: the lowered graphs and every diagnostic, in source order.
#[derive(Debug)]
pub struct Checked {
    /// The graphs as far as they could be lowered. Only meaningful when there is no error.
    pub module: Module,
    /// Errors and warnings, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    /// The warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| !d.is_error())
    }
}

/// Parses, lowers and validates a `.graph` source, reporting every independent problem.
///
/// Never panics, whatever the input; every diagnostic's span lies inside `text`.
pub fn check(text: &str) -> Checked {
    let mut diagnostics = diagnostic::Diagnostics::default();
    let file = parse::parse(text, &mut diagnostics);
    let (module, facts) = lower::lower(&file, &mut diagnostics);
    check::check(&module, &facts, &mut diagnostics);
    Checked {
        module,
        diagnostics: diagnostics.into_sorted(),
    }
}

/// Decodes a source file's bytes as UTF-8.
///
/// On failure the diagnostic (E0001) points at the first invalid byte; its span indexes
/// `String::from_utf8_lossy(bytes)`, which agrees with `bytes` up to that point.
///
/// ```
/// assert!(trellis_dsl::decode(b"graph G {}").is_ok());
/// let error = trellis_dsl::decode(b"graph \xff {}").unwrap_err();
/// assert_eq!(error.span.start, 6);
/// ```
pub fn decode(bytes: &[u8]) -> Result<&str, Diagnostic> {
    std::str::from_utf8(bytes).map_err(|error| {
        let at = error.valid_up_to();
        // The lossy text has U+FFFD (three bytes) where the invalid sequence was.
        Diagnostic::new(
            Code::E0001,
            Span::new(at, at + '\u{FFFD}'.len_utf8()),
            "the file is not valid UTF-8",
            "invalid byte here",
        )
        .with_help("save the file as UTF-8")
    })
}
