//! Code generation for Trellis: a checked `.graph` module becomes typed Rust, and the build.rs
//! API that writes it to `OUT_DIR`.
//!
//! For every graph, a module (`graph Support` → `mod support`) with a `Node` enum, one route enum
//! per conditional edge, a `Handlers` trait (one async method per node, one router per
//! conditional edge), an infallible `build(handlers)` and `blueprint()`. Every path in the output
//! is absolute (`::trellis::…`, or the crate path set in [`Options`]).
//!
//! In a build script (the generated file is then pulled in with `trellis::include_generated!`):
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), trellis_codegen::Error> {
//!     trellis_codegen::compile(&["graphs/support.graph"])
//! }
//! ```
//!
//! Both write the same text (`text.rs`): a build script writes it as it is, the macros parse it
//! into tokens. As a library call, which is what the `graph!` and `include_graph!` macros do:
//!
//! ```
//! let source = "graph Hello { node greet; START -> greet; greet -> END; }";
//! let code = trellis_codegen::expand_source(source, &trellis_codegen::Options::default());
//! assert!(code.errors.is_empty());
//! assert!(code.tokens.to_string().contains("pub mod hello"));
//! ```

mod blueprint;
mod builder;
mod expand;
mod paths;
mod report;
mod text;
mod tokens;

use proc_macro2::{Span, TokenStream};
use trellis_dsl::{Diagnostic, Module};

use crate::paths::Paths;
use crate::text::Lines;

pub use builder::{Builder, Error, compile};
pub use report::plain as plain_report;
pub use tokens::{compile_error, warning};

/// How code is generated.
#[derive(Clone, Debug)]
pub struct Options {
    /// Validated by `with_crate_path`; kept as text so that options are `Send + Sync`.
    crate_path: String,
    /// How the macros' tokens are read from the generated text.
    parser: Option<Parser>,
}

/// Reads generated text as tokens (`None` when it does not lex).
pub type Parser = fn(&str) -> Option<TokenStream>;

impl Default for Options {
    fn default() -> Self {
        Options {
            crate_path: "::trellis".to_owned(),
            parser: None,
        }
    }
}

/// A crate path that is not a Rust path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a Rust path to the runtime crate (expected something like `::trellis`)")]
pub struct CratePathError(String);

impl Options {
    /// Options that read the generated text into tokens with `parser` (the macros give one
    /// that hands it to rustc's lexer directly: `proc_macro2`'s own parser, inside a macro,
    /// first checks the whole text with its own, slower lexer).
    ///
    /// ```
    /// fn parse(text: &str) -> Option<proc_macro2::TokenStream> {
    ///     text.parse().ok()
    /// }
    /// let options = trellis_codegen::Options::default().with_parser(parse);
    /// let code = trellis_codegen::expand_source("graph G { node a; START -> a; a -> END; }", &options);
    /// assert!(code.tokens.to_string().contains("pub mod g"));
    /// ```
    #[must_use]
    pub fn with_parser(mut self, parser: Parser) -> Self {
        self.parser = Some(parser);
        self
    }

    /// Options that name the runtime crate `path` (as serde's `crate = "…"`), for a crate that
    /// depends on `trellis` under another name or re-exports it.
    ///
    /// # Errors
    /// [`CratePathError`] when `path` is not a path (`::trellis`, `my_crate::trellis`).
    pub fn with_crate_path(mut self, path: &str) -> Result<Self, CratePathError> {
        let valid = !path.is_empty()
            && path.trim_start_matches("::").split("::").all(|segment| {
                let mut chars = segment.chars();
                chars
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        if !valid || path.parse::<TokenStream>().is_err() {
            return Err(CratePathError(path.to_owned()));
        }
        self.crate_path = path.to_owned();
        Ok(self)
    }
}

/// Where generated tokens that stand for a piece of the source are placed: the `graph!` macro
/// maps a byte range to the tokens of its input, `include_graph!` to its path literal. A plain
/// function `Fn(trellis_dsl::Span) -> proc_macro2::Span` is one.
pub trait SpanMap {
    /// The span for tokens that stand for `range` of the source.
    fn span(&self, range: trellis_dsl::Span) -> Span;
}

impl<F: Fn(trellis_dsl::Span) -> Span> SpanMap for F {
    fn span(&self, range: trellis_dsl::Span) -> Span {
        self(range)
    }
}

/// Every piece of source placed at the call site (build scripts, tests).
fn call_site(_: trellis_dsl::Span) -> Span {
    Span::call_site()
}

/// What [`expand_source`] produced: code, and the errors to report (empty when the code is
/// complete). With errors, `tokens` is a skeleton of the modules — the same types and trait,
/// every method with a default body, no working `build` — so that code naming them does not add
/// follow-on errors.
#[derive(Debug)]
pub struct Expansion {
    /// The generated modules (or their skeletons).
    pub tokens: TokenStream,
    /// The errors of the source.
    pub errors: Vec<Diagnostic>,
    /// The warnings of the source (the caller decides how to show them: see [`warning`]).
    pub warnings: Vec<Diagnostic>,
    /// Per graph with a `state`, in order: where its state type path is written, for notes
    /// that point from generated code back to the source.
    pub state_paths: Vec<trellis_dsl::Span>,
}

/// Checks `.graph` source and generates its code, every token at the call site.
pub fn expand_source(source: &str, options: &Options) -> Expansion {
    expand_source_with(source, options, &call_site)
}

/// Checks `.graph` source and generates its code; tokens that stand for a piece of the source
/// (the state type) are placed by `spans`.
pub fn expand_source_with(source: &str, options: &Options, spans: &dyn SpanMap) -> Expansion {
    let checked = check(source);
    let mut paths = Paths::tokens(spans);
    let mut code = Lines::for_tokens(expected_len(&checked.module));
    write(&checked, options, &mut paths, &mut code);
    Expansion {
        tokens: paths.into_tokens(code.text(), code.stand_in_depth(), options.parser),
        errors: checked.errors,
        warnings: checked.warnings,
        state_paths: checked.state_paths,
    }
}

/// Checked source, its diagnostics split into errors and warnings: what its code is written from.
pub(crate) struct Validated {
    pub(crate) module: Module,
    pub(crate) errors: Vec<Diagnostic>,
    pub(crate) warnings: Vec<Diagnostic>,
    /// Per graph with a `state`, in order: where its state type path is written.
    pub(crate) state_paths: Vec<trellis_dsl::Span>,
}

pub(crate) fn check(source: &str) -> Validated {
    let checked = trellis_dsl::check(source);
    let (errors, warnings) = checked
        .diagnostics
        .into_iter()
        .partition::<Vec<_>, _>(Diagnostic::is_error);
    let state_paths = checked
        .module
        .spans
        .iter()
        .filter_map(|graph| Some(graph.state.first()?.1.to(graph.state.last()?.1)))
        .collect();
    Validated {
        module: checked.module,
        errors,
        warnings,
        state_paths,
    }
}

/// Writes the code of checked source: the full modules, or their skeletons when it has errors;
/// its type paths placed by `paths` (as text for a build script, as stand-ins for the macros'
/// tokens).
pub(crate) fn write(
    checked: &Validated,
    options: &Options,
    paths: &mut Paths<'_>,
    code: &mut Lines<'_>,
) {
    let mode = if checked.errors.is_empty() {
        expand::Mode::Full
    } else {
        expand::Mode::Skeleton
    };
    module(&checked.module, options, paths, code, mode);
}

/// The code of every graph of a module that has no errors.
pub fn generate(module: &Module, options: &Options) -> TokenStream {
    let mut paths = Paths::tokens(&call_site);
    let mut code = Lines::for_tokens(expected_len(module));
    self::module(module, options, &mut paths, &mut code, expand::Mode::Full);
    paths.into_tokens(code.text(), code.stand_in_depth(), options.parser)
}

/// About how long a module's code is: a node and an edge each take room in several places.
fn expected_len(module: &Module) -> usize {
    module
        .graphs
        .iter()
        .map(|graph| 4096 + 320 * graph.nodes.len() + 64 * graph.edges.len())
        .sum()
}

fn module(
    module: &Module,
    options: &Options,
    paths: &mut Paths<'_>,
    code: &mut Lines<'_>,
    mode: expand::Mode,
) {
    let mut seen = Vec::new();
    let graphs = module
        .graphs
        .iter()
        .zip(&module.spans)
        // A skeleton keeps the first of two graphs that would become one module.
        .filter(|(graph, _)| {
            let name = trellis_dsl::rust_names::module(&graph.name);
            let fresh = !name.is_empty() && !seen.contains(&name);
            seen.push(name);
            fresh
        });
    for (graph, graph_spans) in graphs {
        expand::graph(
            code,
            graph,
            graph_spans,
            &module.graphs,
            &options.crate_path,
            paths,
            mode,
        );
    }
}
