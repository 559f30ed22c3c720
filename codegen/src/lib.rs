//! Code generation for Trellis: a checked `.graph` module becomes typed Rust, and the build.rs
//! API that writes it to `OUT_DIR`.
//!
//! For every graph, a module (`graph Support` → `mod support`) with a `Node` enum, one route enum
//! per conditional edge, a `Handlers` trait (one async method per node, one router per
//! conditional edge), an infallible `build(handlers)` and `blueprint()`. Every path in the output
//! is absolute (`::trellis::…`, or the crate path set in [`Options`]).
//!
//! In a build script (the generated file is then pulled in with `trellis::include_graphs!`):
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), trellis_codegen::Error> {
//!     trellis_codegen::compile(&["graphs/support.graph"])
//! }
//! ```
//!
//! As a library call, which is what the `graph!` and `include_graph!` macros do:
//!
//! ```
//! let source = "graph Hello { node greet; START -> greet; greet -> END; }";
//! let code = trellis_codegen::expand_source(source, &trellis_codegen::Options::default());
//! assert!(code.errors.is_empty());
//! assert!(code.tokens.to_string().contains("pub mod hello"));
//! ```

mod builder;
mod expand;
mod report;

use proc_macro2::TokenStream;
use quote::quote;
use trellis_dsl::{Diagnostic, Module};

pub use builder::{Builder, Error, compile};
pub use report::plain as plain_report;

/// How code is generated.
#[derive(Clone, Debug)]
pub struct Options {
    /// Validated by `with_crate_path`; kept as text so that options are `Send + Sync`.
    crate_path: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            crate_path: "::trellis".to_owned(),
        }
    }
}

/// A crate path that is not a Rust path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a Rust path to the runtime crate (expected something like `::trellis`)")]
pub struct CratePathError(String);

impl Options {
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

    pub(crate) fn crate_tokens(&self) -> TokenStream {
        self.crate_path
            .parse()
            .unwrap_or_else(|_| quote!(::trellis))
    }
}

/// What [`expand_source`] produced: code, and the errors to report (empty when the code is
/// complete). With errors, `tokens` is a skeleton of the modules — the same types and trait with
/// no working `build` — so that code naming them does not add follow-on errors.
#[derive(Debug)]
pub struct Expansion {
    /// The generated modules (or their skeletons).
    pub tokens: TokenStream,
    /// The errors of the source; warnings are left out (they never fail a build).
    pub errors: Vec<Diagnostic>,
    /// The warnings of the source.
    pub warnings: Vec<Diagnostic>,
}

/// Checks `.graph` source and generates its code.
pub fn expand_source(source: &str, options: &Options) -> Expansion {
    let checked = trellis_dsl::check(source);
    let (errors, warnings) = checked
        .diagnostics
        .into_iter()
        .partition::<Vec<_>, _>(Diagnostic::is_error);
    let mode = if errors.is_empty() {
        expand::Mode::Full
    } else {
        expand::Mode::Skeleton
    };
    Expansion {
        tokens: module(&checked.module, options, mode),
        errors,
        warnings,
    }
}

/// The code of every graph of a module that has no errors.
pub fn generate(module: &Module, options: &Options) -> TokenStream {
    self::module(module, options, expand::Mode::Full)
}

fn module(module: &Module, options: &Options, mode: expand::Mode) -> TokenStream {
    let mut seen = Vec::new();
    module
        .graphs
        .iter()
        // A skeleton keeps the first of two graphs that would become one module.
        .filter(|graph| {
            let name = trellis_dsl::rust_names::module(&graph.name);
            let fresh = !name.is_empty() && !seen.contains(&name);
            seen.push(name);
            fresh
        })
        .map(|graph| expand::graph(graph, options, mode))
        .collect()
}
