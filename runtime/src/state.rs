//! Graph state and its reducer: how one super-step's updates become the next committed state.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The state a graph runs on.
///
/// Every node of a super-step reads the same committed state and returns an [`Update`]; when the
/// step ends, [`apply`] folds all of them into the state, in the order the nodes were declared,
/// so a run is deterministic however its branches interleave.
///
/// Implement it with `#[derive(GraphState)]`, which generates the update type and a reducer per
/// field (`overwrite` by default, `append`, `extend`, `sum`, `with = path`), or implement
/// [`WholeState`] to make the update the whole state with a merge of your own.
///
/// [`Update`]: GraphState::Update
/// [`apply`]: GraphState::apply
pub trait GraphState: Clone + Serialize + DeserializeOwned + Send + Sync + 'static {
    /// What a node returns to change the state. `Clone` and `Serialize` so that a stream can
    /// show each node's update ([`StreamMode::Updates`](crate::stream::StreamMode::Updates));
    /// `Deserialize` so that the updates a run commits while a subgraph on its state waits for
    /// an answer are kept in its checkpoint, and merged after the child's final state.
    type Update: Clone + Serialize + DeserializeOwned + Send + 'static;

    /// Folds one super-step's updates into `self`, in the order given (declaration order), each
    /// with the name of the node that produced it.
    ///
    /// Must leave `self` untouched when it returns an error, so that the last committed state is
    /// what a failed run keeps.
    ///
    /// # Errors
    /// [`MergeConflict`] when two updates both overwrite one field in the same super-step.
    fn apply(&mut self, updates: Vec<(&str, Self::Update)>) -> Result<(), MergeConflict>;

    /// Folds a super-step's only update (one update cannot conflict with itself). The default
    /// calls [`apply`](GraphState::apply); the derive folds it directly, without a `Vec`.
    ///
    /// # Errors
    /// Whatever [`apply`](GraphState::apply) returns for this one update.
    fn apply_one(&mut self, node: &str, update: Self::Update) -> Result<(), MergeConflict> {
        self.apply(vec![(node, update)])
    }

    /// The state a new run starts from when `self` is its input: each field folded by its
    /// reducer into the field's empty value, as any update is folded (LangGraph writes a run's
    /// input through its channels likewise). With [`add_messages`](crate::messages::add_messages),
    /// an input's two messages with one id are one message and a removal removes; a field whose
    /// reducer overwrites, appends, extends or sums starts as given.
    ///
    /// The derive folds each `#[reducer(with = …)]` field into its type's `Default` (which such
    /// a field's type must implement); the default here returns `self` unchanged, as a
    /// [`WholeState`] starts.
    #[must_use]
    fn fold_input(self) -> Self
    where
        Self: Sized,
    {
        self
    }

    /// What `updates`, just folded into `self` in this order, changed in the state's JSON:
    /// what a delta checkpoint stores instead of the whole state
    /// ([`StateChanges`](crate::checkpoint::StateChanges)). `None` (the default) when the state
    /// cannot say; each of its checkpoints then holds the whole state.
    ///
    /// The derive says for a struct without generics whose fields serde writes as named JSON
    /// fields: an `append` field's new items, and the new value of each other field a
    /// update wrote. A field serde writes its own way (`with`, `serialize_with`,
    /// `skip_serializing_if`, `flatten`) or a container attribute that reshapes the JSON
    /// (`into`, `transparent`, `remote`) makes it say `None`.
    ///
    /// # Errors
    /// A changed field cannot be written as JSON.
    fn changes(
        &self,
        updates: &[(&str, Self::Update)],
    ) -> Result<Option<crate::checkpoint::StateChanges>, serde_json::Error> {
        let _ = updates;
        Ok(None)
    }

    /// The state's fields, each with whether its reducer combines two writes of one super-step
    /// (`append`, `extend`, `sum`, `with`) rather than overwrite: what
    /// [`compile`](crate::GraphBuilder::compile) checks the nodes' declared write sets
    /// ([`NodeOptions::writes`](crate::NodeOptions::writes)) against. The derive lists them;
    /// `None` by default, which checks nothing.
    fn fields() -> Option<&'static [(&'static str, bool)]>
    where
        Self: Sized,
    {
        None
    }

    /// The JSON Schemas of the state and of its update, for clients that build forms (what
    /// LangGraph's `/assistants/{id}/schemas` answers). `None` by default;
    /// `#[graph_state(schema)]` gives them (feature `schema`).
    fn schemas() -> Option<StateSchemas>
    where
        Self: Sized,
    {
        None
    }
}

/// The JSON Schemas (draft 2020-12) of a state and of its update: the update is what a run's
/// input and an edit are, the state what a run answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StateSchemas {
    /// The state.
    pub state: serde_json::Value,
    /// Its update.
    pub update: serde_json::Value,
}

/// Two nodes of one super-step overwrote the same field; branches that write one field must
/// use a combining reducer (`append`, `extend`, `sum`, `with = …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("nodes `{first}` and `{second}` both overwrite `{field}` in one super-step")]
pub struct MergeConflict {
    /// The field both nodes wrote.
    pub field: &'static str,
    /// The node declared first.
    pub first: String,
    /// The node declared later.
    pub second: String,
}

/// A state whose update is the whole state: simple graphs that need no per-field reducers.
///
/// [`merge`](WholeState::merge) defaults to replacing the state, in which case two nodes of one
/// super-step updating it are a [`MergeConflict`] on the field `state`; override `merge` to
/// combine, and overlapping updates are then folded in declaration order.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use trellis::{GraphState, WholeState};
///
/// #[derive(Clone, Serialize, Deserialize)]
/// struct Count(u32);
///
/// impl WholeState for Count {
///     const COMBINES: bool = true;
///     fn merge(&mut self, update: Self) {
///         self.0 += update.0;
///     }
/// }
///
/// let mut count = Count(1);
/// count.apply(vec![("a", Count(2)), ("b", Count(3))]).unwrap();
/// assert_eq!(count.0, 6);
/// ```
pub trait WholeState: Clone + Serialize + DeserializeOwned + Send + Sync + 'static {
    /// Whether [`merge`](WholeState::merge) combines updates (true) or replaces the state
    /// (false, the default): replacing twice in one super-step is a conflict.
    const COMBINES: bool = false;

    /// Folds one node's update into the state.
    fn merge(&mut self, update: Self) {
        *self = update;
    }
}

impl<T: WholeState> GraphState for T {
    type Update = T;

    fn apply(&mut self, updates: Vec<(&str, T)>) -> Result<(), MergeConflict> {
        if !T::COMBINES
            && let [(first, _), (second, _), ..] = updates.as_slice()
        {
            return Err(MergeConflict {
                field: "state",
                first: (*first).to_owned(),
                second: (*second).to_owned(),
            });
        }
        for (_, update) in updates {
            self.merge(update);
        }
        Ok(())
    }

    fn apply_one(&mut self, _node: &str, update: T) -> Result<(), MergeConflict> {
        self.merge(update);
        Ok(())
    }
}

/// How a person's answer to an interrupt becomes a state update when a paused run resumes.
///
/// Called once per pending interrupt, in the order the interrupted nodes were declared; the
/// updates are merged like a super-step's (so two answers overwriting one field conflict).
pub trait ApplyResume: GraphState {
    /// The answer a person gives (an approval, an edited draft, a choice among the options).
    type Input: Send + 'static;

    /// The update that records `input` as the answer to `interrupt`.
    fn apply_resume(
        &self,
        interrupt: &crate::interrupt::Interrupt,
        input: Self::Input,
    ) -> Self::Update;

    /// Whether `input` is an answer this state takes at all: always, unless its answers are of
    /// several types ([`Reply`](crate::interrupt::Reply)) and `input` is of none of them. A
    /// resume with one is refused before anything is written.
    fn takes(input: &Self::Input) -> bool
    where
        Self: Sized,
    {
        let _ = input;
        true
    }

    /// The JSON Schema of [`Input`](Self::Input), for a form that answers a pause. `None` by
    /// default; an `#[answer]` field under `#[graph_state(schema)]` gives it.
    fn answer_schema() -> Option<serde_json::Value>
    where
        Self: Sized,
    {
        None
    }
}

/// The JSON Schema of `T`, as the derive's generated `schemas` reads it.
#[cfg(feature = "schema")]
#[doc(hidden)]
pub fn schema_of<T: schemars::JsonSchema>() -> serde_json::Value {
    schemars::SchemaGenerator::default()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Helpers the derive's generated reducers call; not part of the stable API.
#[doc(hidden)]
pub mod reducers {
    use super::MergeConflict;

    /// Records that `node` overwrote `field`, failing when another node already did this step.
    pub fn claim<'a>(
        writer: &mut Option<&'a str>,
        node: &'a str,
        field: &'static str,
    ) -> Result<(), MergeConflict> {
        match writer.replace(node) {
            Some(first) => Err(MergeConflict {
                field,
                first: first.to_owned(),
                second: node.to_owned(),
            }),
            None => Ok(()),
        }
    }

    /// Whether an `append` field's items are none: such a field is left out of an update's JSON.
    pub fn is_empty<T>(items: &T) -> bool
    where
        for<'a> &'a T: IntoIterator,
    {
        items.into_iter().next().is_none()
    }
}

/// What the derive's [`GraphState::changes`] calls.
#[doc(hidden)]
pub mod delta {
    use serde::Serialize;
    use serde_json::{Map, Value};

    /// The JSON object `fields` is written as: the changed fields by their JSON names.
    pub fn object<T: Serialize>(fields: &T) -> Result<Map<String, Value>, serde_json::Error> {
        match serde_json::to_value(fields)? {
            Value::Object(map) => Ok(map),
            _ => Ok(Map::new()),
        }
    }

    /// Whether `reducer` only appends an update's items or replaces or removes existing ones
    /// by id, so that an array that grew by as many items as it was given had them appended:
    /// [`add_messages`](crate::messages::add_messages). Told by the function's type, which
    /// names it.
    pub fn appends_or_replaces<F>(reducer: &F) -> bool {
        std::any::type_name_of_val(reducer)
            == std::any::type_name_of_val(&crate::messages::add_messages)
    }

    /// A step's changes: the fields it replaced, the items it appended, and the lengths the
    /// arrays it appended to then have, where that is what says the reducer appended.
    pub fn changes(
        set: Map<String, Value>,
        append: Map<String, Value>,
        lengths: Map<String, Value>,
    ) -> crate::checkpoint::StateChanges {
        crate::checkpoint::StateChanges {
            set,
            append,
            lengths,
        }
    }

    /// Whether an `extend` field of an update adds anything: its JSON is not empty. One that
    /// cannot be written is counted as a change, so that the error is the field's own.
    pub fn adds<T: Serialize>(items: &T) -> bool {
        match serde_json::to_value(items) {
            Ok(Value::Array(items)) => !items.is_empty(),
            Ok(Value::Object(items)) => !items.is_empty(),
            Ok(Value::Null) => false,
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Clone, Serialize, Deserialize, PartialEq, Debug)]
    struct Replaced(u32);
    impl WholeState for Replaced {}

    #[test]
    fn whole_state_replaces_and_refuses_two_replacements_in_one_step() {
        let mut state = Replaced(1);
        state.apply(vec![("a", Replaced(5))]).unwrap();
        assert_eq!(state, Replaced(5));
        let conflict = state
            .apply(vec![("a", Replaced(6)), ("b", Replaced(7))])
            .unwrap_err();
        assert_eq!(conflict.first, "a");
        assert_eq!(conflict.second, "b");
        assert_eq!(
            state,
            Replaced(5),
            "a refused step leaves the state untouched"
        );
        assert_eq!(
            conflict.to_string(),
            "nodes `a` and `b` both overwrite `state` in one super-step"
        );
    }
}
