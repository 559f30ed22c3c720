//! Procedural macros of Trellis: `graph!`, `include_graph!` and `#[derive(GraphState)]`. Thin:
//! each parses its input and hands it to `trellis-dsl` and `trellis-codegen`, then maps the
//! errors back onto the tokens they are about.

mod file;
mod graph_state;
mod inline;

use proc_macro::TokenStream;

/// Implements `trellis::GraphState` for a struct with named fields, generating its update type
/// (`<Name>Update`) with one reducer per field.
///
/// Field attributes, `#[reducer(…)]`:
/// - none, or `overwrite`: the update replaces the field; two nodes of one super-step
///   overwriting it are a merge conflict.
/// - `append`: a `Vec<T>` field; the update's items are appended in declaration order.
/// - `extend`: any collection that implements `Extend` and `IntoIterator` (`HashMap`,
///   `BTreeSet`, …); the update's items are added.
/// - `sum`: the update is added (`AddAssign`).
/// - `with = path`: `path(&mut field, value)` folds each update in.
///
/// Container attributes, `#[graph_state(…)]`: `update = Name` names the update type;
/// `crate = "path"` names the runtime crate when it is not `::trellis`.
///
/// The update type has a chainable method per field named after it (`.draft("…")`, which
/// appends one item for `append` and extends for `extend`).
#[proc_macro_derive(GraphState, attributes(reducer, graph_state))]
pub fn derive_graph_state(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    graph_state::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

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
