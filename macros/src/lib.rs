//! Procedural macros of Trellis for the `.graph` language: `graph!` and `include_graph!`. Thin:
//! each parses its input and hands it to `trellis-dsl` and `trellis-codegen`, then maps the
//! diagnostics back onto the tokens they are about. (`#[derive(GraphState)]` is
//! `trellis-derive`'s, which needs no front end.)

mod file;
mod inline;

use proc_macro::TokenStream;

/// A graph written inline in the `.graph` language; expands to its module (`graph Support` →
/// `mod support`). Each mistake is a compile error on the tokens it is about, with the
/// language's code and help.
#[proc_macro]
pub fn graph(input: TokenStream) -> TokenStream {
    inline::expand(input.into()).into()
}

/// A `.graph` file (a path relative to the crate's `Cargo.toml`), expanded to its modules; the
/// crate is rebuilt when the file changes. Errors point at the path and quote the file's line.
#[proc_macro]
pub fn include_graph(input: TokenStream) -> TokenStream {
    file::expand(input.into()).into()
}

/// How both macros generate code: with the generated text read by rustc's own lexer
/// (`proc_macro2`'s parser would first check all of it with a slower lexer of its own).
fn options() -> trellis_codegen::Options {
    trellis_codegen::Options::default().with_parser(|text| {
        // A lex error panics in some rustc versions; generated text always lexes.
        std::panic::catch_unwind(|| text.parse::<TokenStream>().ok())
            .ok()
            .flatten()
            .map(Into::into)
    })
}
