//! Delta checkpoints: what a step changed in the state's JSON, so that a store keeps a step's
//! change rather than the whole state, and folding those changes back into whole states.
//!
//! A state derived with `#[derive(GraphState)]` says what a step's updates changed
//! ([`GraphState::changes`](crate::GraphState::changes)): the items an `append` field gained,
//! and the new value of every other field the step wrote. The run keeps the state's JSON up to
//! date with those changes, so that a step costs what it changed, not what the state holds;
//! every [`snapshot_every`](crate::CompiledGraph::with_snapshot_every) checkpoints it writes the
//! whole state again, serialized afresh, which bounds what a load folds.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::CheckpointError;
use crate::id::RunId;

/// What a step changed in the state's JSON object: fields given a new value, and array fields
/// that gained items at their end. A field is in one of the two, never both: a field's reducer
/// either appends or replaces.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StateChanges {
    /// Fields replaced, by JSON name, with their new value.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub set: Map<String, Value>,
    /// Array fields, by JSON name, with the items appended to them (an array), in order.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub append: Map<String, Value>,
    /// Array fields, by JSON name, with how many items they hold once appended to: where the
    /// state could only say that its reducer appended if the array grew by as many items as
    /// it was given (`add_messages`), which [`apply_to`](Self::apply_to) checks. Never stored.
    #[serde(skip)]
    #[doc(hidden)]
    pub lengths: Map<String, Value>,
}

impl StateChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.append.is_empty()
    }

    /// Adds `later`, the changes of the step after these: a field set again takes the later
    /// value, an array gains the later items after these.
    pub fn then(&mut self, later: StateChanges) {
        self.lengths.clear();
        self.set.extend(later.set);
        for (field, items) in later.append {
            match (self.append.get_mut(&field), items) {
                (Some(Value::Array(mine)), Value::Array(more)) => mine.extend(more),
                (_, items) => {
                    self.append.insert(field, items);
                }
            }
        }
    }

    /// Folds these changes into `state`, the JSON object they were taken from.
    ///
    /// # Errors
    /// `state` is not an object, or a field given items is not an array: the changes were not
    /// taken from this state.
    pub fn apply_to(&self, state: &mut Value) -> Result<(), DeltaMismatch> {
        // Nothing changed: whatever the state is (a checkpoint written with no step between,
        // of a state that is not an object), it stays.
        if self.is_empty() && self.lengths.is_empty() {
            return Ok(());
        }
        let Value::Object(fields) = state else {
            return Err(DeltaMismatch::NotAnObject);
        };
        for (field, value) in &self.set {
            fields.insert(field.clone(), value.clone());
        }
        for (field, items) in &self.append {
            let Value::Array(items) = items else {
                return Err(DeltaMismatch::NotAnArray(field.clone()));
            };
            match fields.get_mut(field) {
                Some(Value::Array(list)) => list.extend(items.iter().cloned()),
                _ => return Err(DeltaMismatch::NotAnArray(field.clone())),
            }
        }
        for (field, expected) in &self.lengths {
            let held = fields.get(field).and_then(Value::as_array).map(Vec::len);
            if held.map(|n| n as u64) != expected.as_u64() {
                return Err(DeltaMismatch::Length(field.clone()));
            }
        }
        Ok(())
    }
}

/// Changes that do not fit the state they are folded into.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeltaMismatch {
    /// The state is not a JSON object.
    #[error("the state is not a JSON object")]
    NotAnObject,
    /// Items were appended to a field that is not an array.
    #[error("items appended to `{0}`, which is not an array")]
    NotAnArray(String),
    /// An array given items does not hold as many as the changes say it then does: its
    /// reducer did more than append.
    #[error("`{0}` does not hold the items the changes expect")]
    Length(String),
}

/// A checkpoint's state as the changes since an earlier checkpoint of the same run: what a
/// step hands its store beside the whole state ([`Checkpoint::delta`](super::Checkpoint::delta)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateDelta {
    /// The checkpoint (its id) whose state these changes apply to: the one written just before
    /// in the same run, or, with `run`, the one of `run` a run on a thread went on from.
    pub base: u64,
    /// The run of checkpoint `base` when it is not this checkpoint's own: a run started on a
    /// thread writes its first checkpoint as the changes since the thread's state it started
    /// from, in the run before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunId>,
    /// What changed since.
    #[serde(flatten)]
    pub changes: StateChanges,
}

/// One row of a chain a store read: a checkpoint's whole state, or its changes since the one
/// before.
pub(crate) enum Link {
    Whole(u64, Value),
    Delta(u64, StateDelta),
}

/// Where a chain read from a store goes on from another run (a run on a thread, from the run
/// before): the run and checkpoint whose whole state goes before `links`, when the chain's
/// first delta (or `delta`, when no row precedes it in its run) follows that run's.
pub(crate) fn goes_on_from(links: &[Link], delta: &StateDelta) -> Option<(RunId, u64)> {
    let first = match links.first() {
        Some(Link::Delta(_, first)) => first,
        Some(Link::Whole(..)) => return None,
        None => delta,
    };
    first.run.clone().map(|run| (run, first.base))
}

/// The whole state of checkpoint `id`, which keeps `delta`, from the rows before it that its
/// store read (`links`, in id order, from the last whole one, or from the state of the run
/// before, as a whole link), with how many deltas it folded. `what` names it in errors.
pub(crate) fn fold_chain(
    what: &str,
    links: Vec<Link>,
    id: u64,
    delta: StateDelta,
) -> Result<(Value, u32), CheckpointError> {
    let mut links = links.into_iter();
    let Some(Link::Whole(mut at, mut state)) = links.next() else {
        return Err(corrupt_state(
            what,
            "it keeps the changes since an earlier checkpoint, but no whole checkpoint precedes it",
        ));
    };
    let mut folded = 0;
    for link in links.chain(std::iter::once(Link::Delta(id, delta))) {
        let (next, delta) = match link {
            Link::Whole(next, whole) => {
                (at, state, folded) = (next, whole, 0);
                continue;
            }
            Link::Delta(next, delta) => (next, delta),
        };
        folded += 1;
        if delta.base != at {
            return Err(corrupt_state(
                what,
                format!(
                    "checkpoint {next} holds the changes since checkpoint {}, but the checkpoint before it is {at}",
                    delta.base
                ),
            ));
        }
        delta
            .changes
            .apply_to(&mut state)
            .map_err(|error| corrupt_state(what, format!("checkpoint {next}: {error}")))?;
        at = next;
    }
    Ok((state, folded))
}

fn corrupt_state(what: &str, reason: impl Into<String>) -> CheckpointError {
    CheckpointError::Corrupt {
        what: what.to_owned(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn changes(value: Value) -> StateChanges {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn changes_replace_fields_and_append_items() {
        let mut state = json!({ "log": ["a"], "n": 1, "kept": true });
        changes(json!({ "set": { "n": 2, "new": "x" }, "append": { "log": ["b", "c"] } }))
            .apply_to(&mut state)
            .unwrap();
        assert_eq!(
            state,
            json!({ "log": ["a", "b", "c"], "n": 2, "kept": true, "new": "x" })
        );
    }

    #[test]
    fn an_append_whose_array_then_holds_another_count_is_refused() {
        let mut grown = changes(json!({ "append": { "log": ["b"] } }));
        grown.lengths.insert("log".into(), json!(2));
        let mut state = json!({ "log": ["a"] });
        grown.apply_to(&mut state).unwrap();
        assert_eq!(state, json!({ "log": ["a", "b"] }));
        // The array held two items, not one: the reducer replaced or removed some.
        assert_eq!(
            grown.apply_to(&mut json!({ "log": ["a", "x"] })),
            Err(DeltaMismatch::Length("log".into()))
        );
        // Not stored: a delta read back has nothing to check.
        let text = serde_json::to_string(&grown).unwrap();
        assert!(!text.contains("lengths"), "{text}");
    }

    #[test]
    fn two_steps_of_changes_are_one() {
        let mut first = changes(json!({ "set": { "n": 2 }, "append": { "log": ["b"] } }));
        first.then(changes(
            json!({ "set": { "n": 3 }, "append": { "log": ["c"], "other": [1] } }),
        ));
        assert_eq!(
            first,
            changes(json!({ "set": { "n": 3 }, "append": { "log": ["b", "c"], "other": [1] } }))
        );
    }

    #[test]
    fn changes_that_do_not_fit_are_refused() {
        let append = changes(json!({ "append": { "n": [1] } }));
        assert_eq!(
            append.apply_to(&mut json!({ "n": 1 })),
            Err(DeltaMismatch::NotAnArray("n".into()))
        );
        assert_eq!(
            append.apply_to(&mut json!([])),
            Err(DeltaMismatch::NotAnObject)
        );
    }

    #[test]
    fn a_chain_folds_in_order_and_a_gap_or_no_whole_start_is_corrupt() {
        let delta = |base, item: &str| StateDelta {
            base,
            run: None,
            changes: changes(json!({ "append": { "log": [item] } })),
        };
        let start = || Link::Whole(1, json!({ "log": ["a"] }));
        let folded = fold_chain(
            "checkpoint 3",
            vec![start(), Link::Delta(2, delta(1, "b"))],
            3,
            delta(2, "c"),
        )
        .unwrap();
        assert_eq!(folded, (json!({ "log": ["a", "b", "c"] }), 2));
        let gap = fold_chain(
            "checkpoint 4",
            vec![start(), Link::Delta(2, delta(1, "b"))],
            4,
            delta(3, "d"),
        )
        .unwrap_err();
        assert!(
            gap.to_string()
                .contains("checkpoint 4 holds the changes since checkpoint 3"),
            "{gap}"
        );
        let headless = fold_chain("checkpoint 2", Vec::new(), 2, delta(1, "b")).unwrap_err();
        assert!(
            headless
                .to_string()
                .contains("no whole checkpoint precedes it"),
            "{headless}"
        );
    }

    #[test]
    fn a_delta_reads_back_as_written() {
        let delta = StateDelta {
            base: 7,
            run: None,
            changes: changes(json!({ "set": { "n": 2 }, "append": { "log": ["b"] } })),
        };
        let text = serde_json::to_string(&delta).unwrap();
        assert_eq!(text, r#"{"base":7,"set":{"n":2},"append":{"log":["b"]}}"#);
        assert_eq!(serde_json::from_str::<StateDelta>(&text).unwrap(), delta);
    }
}
