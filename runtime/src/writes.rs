//! A state's fields by name and position, which `#[derive(GraphState)]` implements so that code
//! generated for a node's `writes` (`node web { writes notes, sources; }`) can set only those
//! fields, each as its reducer merges it.
//!
//! Generated code names a field by its position, found from its name while the crate compiles
//! (`Field<{ index of "notes" }>`): a `writes` entry naming no field of the state is a compile
//! error at that entry. Implemented by the derive for states without generic parameters; not
//! meant to be implemented by hand.
//!
//! ```
//! use trellis::GraphState;
//! use trellis::writes::{Field, Fields};
//!
//! #[derive(Clone, Default, serde::Serialize, serde::Deserialize, GraphState)]
//! struct Research {
//!     #[reducer(append)]
//!     notes: Vec<String>,
//!     answer: Option<String>,
//! }
//!
//! assert_eq!(Research::NAMES, ["notes", "answer"]);
//! assert!(<Research as Field<0>>::COMBINES, "two writers append");
//! assert!(!<Research as Field<1>>::COMBINES, "two writers of one step conflict");
//! ```

use crate::state::GraphState;

/// The names of a state's fields, in declaration order.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not list its fields, which a node's `writes` names",
    label = "`writes` names fields of this state",
    note = "derive `GraphState` for `{Self}` (a state without generic parameters): the derive lists them"
)]
pub trait Fields: GraphState {
    /// Each field's name, as the struct spells it.
    const NAMES: &'static [&'static str];
}

/// The field at position `I` of the state (in [`Fields::NAMES`]): whether two writers of one
/// super-step combine.
pub trait Field<const I: usize>: Fields {
    /// Whether two nodes writing the field in one super-step combine (`append`, `extend`,
    /// `sum`, `with`), rather than conflict (`overwrite`).
    const COMBINES: bool;
}

/// Writing a `V` into the field at position `I`, as the update's own setter of that field
/// takes it: `impl Into<T>` for `overwrite` (an item's for `append`), any items for `extend`,
/// exactly the field's type for `sum` and `with` (one impl, so that `.pages(4)` infers `4`'s
/// type).
pub trait SetField<const I: usize, V>: Field<I> {
    /// Writes `value` into `update`.
    fn set(update: &mut Self::Update, value: V);
}

/// The position of field `name` in `names`; a compile-time panic saying `missing` when there is
/// none (generated code calls it in a `const`).
#[doc(hidden)]
#[must_use]
pub const fn field_index(names: &[&str], name: &str, missing: &str) -> usize {
    let mut at = 0;
    while at < names.len() {
        if same(names[at], name) {
            return at;
        }
        at += 1;
    }
    panic!("{}", missing)
}

/// The position of field `name` in the fields of `S`, as [`field_index`] finds it: the call
/// generated code places at a `writes` entry (so a state that lists no fields is reported
/// there too).
#[doc(hidden)]
#[must_use]
pub const fn field_of<S: Fields>(name: &str, missing: &str) -> usize {
    field_index(S::NAMES, name, missing)
}

/// Nothing when `combines`; else a compile-time panic saying `conflict`: generated code calls it
/// in a `const`, placed at a `writes` entry, for two nodes that can run in one super-step and
/// both write one field (E0214).
#[doc(hidden)]
pub const fn must_combine(combines: bool, conflict: &str) {
    if !combines {
        panic!("{}", conflict)
    }
}

/// `a == b`, in a `const fn` (`str`'s `==` is not one).
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut at = 0;
    while at < a.len() {
        if a[at] != b[at] {
            return false;
        }
        at += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::field_index;

    #[test]
    fn a_field_is_found_by_its_whole_name() {
        const NAMES: &[&str] = &["note", "notes", "sources"];
        const AT: usize = field_index(NAMES, "notes", "no field");
        assert_eq!(AT, 1);
        assert_eq!(field_index(NAMES, "sources", "no field"), 2);
        assert_eq!(field_index(NAMES, "note", "no field"), 0);
    }

    #[test]
    #[should_panic(expected = "no field `drafts`")]
    fn a_name_that_is_no_field_panics_with_the_message() {
        let _ = field_index(&["draft"], "drafts", "no field `drafts`");
    }
}
