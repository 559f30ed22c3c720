//! What the durable backends (SQLite, PostgreSQL) share: a checkpoint's detail as the one JSON
//! column they keep it in, and the errors of stored values that cannot be read back.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{
    Checkpoint, CheckpointError, CheckpointLabel, CheckpointRef, Interrupt, Name, PendingUpdate,
    RunRecord, StateDelta,
};
use crate::id::{RunId, Timestamp};
use crate::interrupt::Breakpoints;
use crate::node::NodeFailure;

/// The part of a checkpoint that durable backends keep as one JSON column.
///
/// Written borrowed from the checkpoint ([`Detail::of`]: serializing a step's detail copies
/// nothing), read back owned.
#[derive(Serialize, Deserialize)]
pub(crate) struct Detail<'c> {
    pub(crate) nodes: Cow<'c, [Name]>,
    pub(crate) frontier: Cow<'c, [Name]>,
    pub(crate) visits: Cow<'c, BTreeMap<Name, u32>>,
    /// Stored as `released` by earlier versions. Left out when empty (as every list below):
    /// most steps approve nothing and fail nothing, and each checkpoint row is smaller for it.
    #[serde(alias = "released", default, skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) approved: Cow<'c, [Name]>,
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) failures: Cow<'c, [NodeFailure]>,
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) interrupts: Cow<'c, [Interrupt]>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) joins: Cow<'c, BTreeMap<Name, Vec<Name>>>,
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) sends: Cow<'c, [crate::node::SendTo]>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) children: Cow<'c, BTreeMap<Name, RunId>>,
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) pending: Cow<'c, [PendingUpdate]>,
    #[serde(default, skip_serializing_if = "Breakpoints::is_empty")]
    pub(crate) breakpoints: Cow<'c, Breakpoints>,
    /// Both left out where the store keeps them beside the row, once for every checkpoint of
    /// the same graph and state type (SQLite's `shapes` table, from schema 10): they were
    /// a third of an ordinary step's row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) graph_fingerprint: Option<Cow<'c, Name>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) state_type: Option<Cow<'c, Name>>,
}

impl<'c> Detail<'c> {
    pub(crate) fn of(checkpoint: &'c Checkpoint) -> Self {
        Detail {
            nodes: Cow::Borrowed(&checkpoint.nodes),
            frontier: Cow::Borrowed(&checkpoint.frontier),
            visits: Cow::Borrowed(&checkpoint.visits),
            approved: Cow::Borrowed(&checkpoint.approved),
            failures: Cow::Borrowed(&checkpoint.failures),
            interrupts: Cow::Borrowed(&checkpoint.interrupts),
            joins: Cow::Borrowed(&checkpoint.joins),
            sends: Cow::Borrowed(&checkpoint.sends),
            children: Cow::Borrowed(&checkpoint.children),
            pending: Cow::Borrowed(&checkpoint.pending),
            breakpoints: Cow::Borrowed(&checkpoint.breakpoints),
            graph_fingerprint: Some(Cow::Borrowed(&checkpoint.graph_fingerprint)),
            state_type: Some(Cow::Borrowed(&checkpoint.state_type)),
        }
    }

    /// The detail without the graph fingerprint and state type, for a store that keeps them
    /// apart (and gives them back in [`CheckpointColumns::shape`]).
    pub(crate) fn without_shape(checkpoint: &'c Checkpoint) -> Self {
        Detail {
            graph_fingerprint: None,
            state_type: None,
            ..Detail::of(checkpoint)
        }
    }

    /// The checkpoint whose detail this is, with the columns stored beside it; the reason
    /// when neither says which graph and state type wrote it.
    pub(crate) fn into_checkpoint(
        self,
        columns: CheckpointColumns,
    ) -> Result<Checkpoint, &'static str> {
        let (graph_fingerprint, state_type) = match (self.graph_fingerprint, self.state_type) {
            (Some(fingerprint), Some(state_type)) => {
                (fingerprint.into_owned(), state_type.into_owned())
            }
            (None, None) => match columns.shape {
                Some(shape) => (shape.graph_fingerprint, shape.state_type),
                None => return Err("it names no graph fingerprint and no state type"),
            },
            _ => return Err("it names one of its graph fingerprint and state type, not both"),
        };
        Ok(Checkpoint {
            id: columns.id,
            run_id: columns.run_id,
            step: columns.step,
            nodes: self.nodes.into_owned(),
            label: columns.label,
            state: Arc::new(columns.state),
            frontier: self.frontier.into_owned(),
            visits: self.visits.into_owned(),
            approved: self.approved.into_owned(),
            failures: self.failures.into_owned(),
            interrupts: self.interrupts.into_owned(),
            joins: self.joins.into_owned(),
            sends: self.sends.into_owned(),
            children: self.children.into_owned(),
            pending: self.pending.into_owned(),
            breakpoints: self.breakpoints.into_owned(),
            graph_fingerprint,
            state_type,
            created_at: columns.created_at,
            delta: None,
            chain: 0,
        })
    }
}

/// A checkpoint's own columns, beside its [`Detail`].
pub(crate) struct CheckpointColumns {
    pub(crate) id: u64,
    pub(crate) run_id: RunId,
    pub(crate) step: u64,
    pub(crate) label: CheckpointLabel,
    pub(crate) state: serde_json::Value,
    pub(crate) created_at: Timestamp,
    /// The graph and state type, where the store keeps them apart from the detail.
    pub(crate) shape: Option<Shape>,
}

/// The graph fingerprint and state type of a checkpoint.
pub(crate) struct Shape {
    pub(crate) graph_fingerprint: Name,
    pub(crate) state_type: Name,
}

/// A stored value that cannot be read back: `what` names the row and column.
pub(crate) fn corrupt(what: impl Into<String>, reason: impl fmt::Display) -> CheckpointError {
    CheckpointError::Corrupt {
        what: what.into(),
        reason: reason.to_string(),
    }
}

/// A branch's parent as its two columns store it (both set, or neither); `what` names a column
/// of the row for errors.
pub(crate) fn parent_of(
    run: Option<String>,
    checkpoint: Option<i64>,
    what: &dyn Fn(&str) -> String,
) -> Result<Option<CheckpointRef>, CheckpointError> {
    match (run, checkpoint) {
        (Some(run), Some(checkpoint)) => Ok(Some(CheckpointRef {
            run_id: RunId::from(run),
            checkpoint: u64::try_from(checkpoint)
                .map_err(|e| corrupt(what("parent_checkpoint"), e))?,
        })),
        (None, None) => Ok(None),
        _ => Err(corrupt(
            what("parent_run"),
            "a parent run without its checkpoint, or the reverse",
        )),
    }
}

/// A row read, its state not folded yet: `delta` is where the row is (SQLite: its key;
/// PostgreSQL: its id) and its changes, when the row keeps a delta (the value's state is then
/// empty).
pub(crate) struct Unfolded<T> {
    pub(crate) value: T,
    pub(crate) delta: Option<(i64, StateDelta)>,
}

/// What is read with a state a delta may stand for.
pub(crate) trait HasState {
    fn state_mut(&mut self) -> &mut Arc<serde_json::Value>;
    /// Records how many deltas were folded to read the state (a checkpoint's `chain`).
    fn set_chain(&mut self, chain: u32);
    /// What to name in an error.
    fn describe(&self) -> String;
}

impl HasState for Checkpoint {
    fn state_mut(&mut self) -> &mut Arc<serde_json::Value> {
        &mut self.state
    }

    fn set_chain(&mut self, chain: u32) {
        self.chain = chain;
    }

    fn describe(&self) -> String {
        format!("state of checkpoint {} of run {}", self.id, self.run_id)
    }
}

impl HasState for RunRecord {
    fn state_mut(&mut self) -> &mut Arc<serde_json::Value> {
        &mut self.state
    }

    fn set_chain(&mut self, _: u32) {}

    fn describe(&self) -> String {
        format!("state of run {}", self.run_id)
    }
}

/// A run's checkpoint read in its run's order: folded onto `before` (the one read just before
/// it, whole) when its delta is the changes since that one; else handed back, for its store to
/// fold from its chain.
pub(crate) fn fold_onto(
    before: Option<&Checkpoint>,
    row: Unfolded<Checkpoint>,
) -> Result<Result<Checkpoint, Unfolded<Checkpoint>>, CheckpointError> {
    match (row.delta, before) {
        (Some((_, delta)), Some(before)) if delta.base == before.id => {
            let mut checkpoint = row.value;
            let mut state = (*before.state).clone();
            delta
                .changes
                .apply_to(&mut state)
                .map_err(|e| corrupt(checkpoint.describe(), e))?;
            checkpoint.state = Arc::new(state);
            checkpoint.chain = before.chain + 1;
            Ok(Ok(checkpoint))
        }
        (delta, _) => Ok(Err(Unfolded {
            value: row.value,
            delta,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::conformance;

    #[test]
    fn a_detail_leaves_empty_lists_out_and_reads_what_earlier_builds_wrote() {
        let mut checkpoint = conformance::sample_checkpoint(&RunId::from("run"), 1);
        checkpoint.approved.clear();
        checkpoint.failures.clear();
        checkpoint.sends.clear();
        checkpoint.pending.clear();
        let written = serde_json::to_string(&Detail::of(&checkpoint)).unwrap();
        for empty in ["\"approved\"", "\"failures\"", "\"sends\"", "\"pending\""] {
            assert!(!written.contains(empty), "{empty} in {written}");
        }
        let read: Detail<'static> = serde_json::from_str(&written).unwrap();
        assert_eq!(serde_json::to_string(&read).unwrap(), written);

        // Earlier builds spelled every list out, and called `approved` `released`.
        let earlier = r#"{"nodes":["a"],"frontier":["b"],"visits":{"a":1},"released":["b"],"failures":[],"graph_fingerprint":"f","state_type":"T"}"#;
        let read: Detail<'static> = serde_json::from_str(earlier).unwrap();
        assert_eq!(read.approved.as_ref(), [Name::from("b")]);
        assert!(read.failures.is_empty());
    }
}
