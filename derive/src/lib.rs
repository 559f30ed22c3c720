//! `#[derive(GraphState)]` for Trellis: per-field reducers and the update type they merge; and
//! the reports `include_generated!` places at its call site.
//!
//! A crate of its own, on syn, quote and proc-macro2 only, so that a program that declares its
//! graphs with `GraphBuilder` does not compile the `.graph` front end (the runtime's `derive`
//! feature; `macros` adds `graph!` and `include_graph!`).

mod answers;
mod fields;
mod graph_state;
mod reports;
mod serde_attrs;

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
/// - `with = path`: `path(&mut field, value)` folds each update in, and a run's input into the
///   field type's `Default` (`GraphState::fold_input`), which the type must implement.
///
/// Container attributes, `#[graph_state(…)]`: `update = Name` names the update type;
/// `crate = "path"` names the runtime crate when it is not `::trellis`; `schema` implements
/// `GraphState::schemas` (and, with `#[answer]`, `ApplyResume::answer_schema`) through
/// schemars 1 — the runtime's feature `schema`, the state (and the answer) deriving
/// `schemars::JsonSchema`.
///
/// `#[answer]` on one field of type `Option<T>` implements `ApplyResume` with `Input = T`: a
/// person's answer to a pause is stored in that field (`Option<trellis::interrupt::Decision>` for a plain
/// approve or reject). On several fields, each of its own type, the state takes answers of
/// each: `Input` is `trellis::interrupt::Reply`, stored in the field of its type. Each answer
/// type gets `TakesAnswer<T>` (with `schema`, its JSON Schema too), which a pause that declares
/// its type needs. Without `#[answer]`, implement `ApplyResume` by hand.
///
/// The update type has a chainable method per field named after it (`.draft("…")`, which
/// appends one item for `append` and extends for `extend`).
#[proc_macro_derive(GraphState, attributes(reducer, graph_state, answer))]
pub fn derive_graph_state(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    graph_state::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// The errors and warnings a build script left for `OUT_DIR/<stem>.graph`'s code, reported at
/// the string literal given; what `trellis::include_generated!` calls. Not an API.
#[doc(hidden)]
#[proc_macro]
pub fn __include_reports(input: TokenStream) -> TokenStream {
    reports::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
