//! The persistence contract: run records, checkpoints, and the `Checkpointer` every backend
//! implements: in memory, SQLite (feature `sqlite`) and PostgreSQL (feature `postgres`).

mod announce;
mod delta;
pub use label::{CheckpointLabel, UnknownLabel};
mod label;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;
mod store_url;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod stored;
mod threads;

#[cfg(any(test, feature = "test-util"))]
pub mod conformance;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::id::{RunId, ThreadId, Timestamp};
use crate::interrupt::Interrupt;
use crate::node::NodeFailure;

pub use crate::name::Name;
pub use announce::{Announced, AnyWatch, Changes, ReadyWatch, RunWatch};
pub use delta::{DeltaMismatch, StateChanges, StateDelta};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use delta::{Link, fold_chain, goes_on_from};
pub use memory::InMemoryCheckpointer;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresCheckpointer, PostgresOptions};
#[cfg(feature = "sqlite")]
pub use sqlite::{Durability, SqliteCheckpointer, Vacuumed};
pub use store_url::StoreUrl;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use stored::{
    CheckpointColumns, Detail, HasState, Shape, Unfolded, corrupt, fold_onto, parent_of,
};
pub use threads::ThreadRecord;

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Being executed (or its process died while executing it).
    Running,
    /// Waiting for a person's answer to its interrupts.
    Paused,
    /// Reached its end.
    Completed,
    /// Stopped by an error.
    Failed,
    /// Stopped on purpose: its cancellation token, or a cancel request to a server. Like a
    /// failed run, it goes on only when retried.
    Cancelled,
}

impl RunStatus {
    /// Every status, in the order a run can reach them.
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Running,
        RunStatus::Paused,
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Cancelled,
    ];

    /// The status as stored: `running`, `paused`, `completed`, `failed`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Paused => "paused",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    /// The status spelled `text` ([`as_str`](Self::as_str)), if there is one.
    pub fn parse(text: &str) -> Option<RunStatus> {
        RunStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
    }

    /// Whether the run has ended: completed, failed or cancelled (only a retry takes a failed
    /// or cancelled one up again).
    pub fn is_ended(self) -> bool {
        matches!(
            self,
            RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled
        )
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One run, as a backend stores it; rewritten (upserted) at every checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run's id; sorts by creation time.
    pub run_id: RunId,
    /// The graph's name.
    pub graph: Name,
    /// Where the run stands.
    pub status: RunStatus,
    /// When the run began.
    pub created_at: Timestamp,
    /// When the record was last written.
    pub updated_at: Timestamp,
    /// The last node that ran (the last in declaration order when a step ran several).
    pub last_node: Option<Name>,
    /// Super-steps completed.
    pub steps: u64,
    /// The last committed state, as JSON.
    pub state: Arc<serde_json::Value>,
    /// While paused: the questions waiting for an answer.
    pub interrupts: Vec<Interrupt>,
    /// When failed: why.
    pub error: Option<String>,
    /// Node activations so far (each one a transition of the run).
    pub transitions: u64,
    /// While running: the process executing it (`host:pid:start`).
    pub owner: Option<Name>,
    /// While running: until when the owner's claim holds without a sign of life (each
    /// checkpoint renews it). A run whose owner is gone — its process ended on this machine, or
    /// its lease ran out — can be continued by another process.
    pub lease_until: Option<Timestamp>,
    /// For a branch ([`replay`](crate::CompiledGraph::replay),
    /// [`update_state`](crate::CompiledGraph::update_state)): the run and checkpoint it was
    /// forked from. Never changes once written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<CheckpointRef>,
    /// For a run started on a [`Thread`](crate::thread::Thread): the thread. Never changes once
    /// written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<ThreadId>,
    /// What the run's starter said about it (LangGraph's run `metadata`). Never changes once
    /// written.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub metadata: crate::thread::Metadata,
}

impl RunRecord {
    /// The last committed state, read as `T` (the graph's state type).
    ///
    /// # Errors
    /// The stored state is not a `T`.
    pub fn state_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&*self.state)
    }

    /// Whether this record holds `checkpoint`'s state, so that a durable store writes it once.
    /// The runtime passes one shared allocation to both: the values are compared only when it
    /// does not.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn shares_state_with(&self, checkpoint: &Checkpoint) -> bool {
        Arc::ptr_eq(&self.state, &checkpoint.state) || self.state == checkpoint.state
    }
}

/// One checkpoint of one run: where a branch was forked from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CheckpointRef {
    /// The run.
    pub run_id: RunId,
    /// The checkpoint's id in that run ([`Checkpoint::id`]).
    pub checkpoint: u64,
}

impl fmt::Display for CheckpointRef {
    /// `RUN#ID`, as `trellis runs` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.run_id, self.checkpoint)
    }
}

/// An update a run committed while a subgraph node on its own state waited: the node that
/// returned it (or whose question it answers) and the update as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingUpdate {
    /// The node.
    pub node: Name,
    /// The update, as the state's update type writes it.
    pub update: serde_json::Value,
}

/// Everything needed to continue a run from one moment of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The checkpoint's position in its run, from 1; checkpoints list in this order.
    pub id: u64,
    /// The run.
    pub run_id: RunId,
    /// Super-steps completed when it was written.
    pub step: u64,
    /// The nodes the last step ran, in declaration order (empty for `start` and a pause before
    /// any node ran).
    pub nodes: Vec<Name>,
    /// Which moment this is.
    pub label: CheckpointLabel,
    /// The committed state, as JSON.
    pub state: Arc<serde_json::Value>,
    /// The nodes of the next super-step, in declaration order.
    pub frontier: Vec<Name>,
    /// Activations so far per node (what `max_visits` counts).
    pub visits: BTreeMap<Name, u32>,
    /// Frontier nodes whose `interrupt before` was already answered: they run without pausing.
    /// (Read from checkpoints that named it `released`, as earlier versions wrote.)
    #[serde(alias = "released")]
    pub approved: Vec<Name>,
    /// Failures waiting for their `on_error` handler (which is in the frontier).
    pub failures: Vec<NodeFailure>,
    /// At a pause: the questions asked, so that a branch forked from it asks them again
    /// (empty otherwise, and in pauses written before Trellis kept them here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interrupts: Vec<Interrupt>,
    /// Waiting joins some of whose sources are done: the node joined into → those sources, in
    /// declaration order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub joins: BTreeMap<Name, Vec<Name>>,
    /// Branches sent for the next super-step, with their inputs, in the order they run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sends: Vec<crate::node::SendTo>,
    /// Subgraph nodes in the frontier whose child run was answered after a pause: the node →
    /// the child run it continues when it runs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub children: BTreeMap<Name, RunId>,
    /// While a subgraph node on the run's own state waits for an answer: the updates the run
    /// committed since the child paused, in order, merged again after the child's final state
    /// when it completes (its final state does not hold them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingUpdate>,
    /// Where the run pauses besides its graph's interrupts, as it was started.
    #[serde(
        default,
        skip_serializing_if = "crate::interrupt::Breakpoints::is_empty"
    )]
    pub breakpoints: crate::interrupt::Breakpoints,
    /// The topology that wrote it ([`CompiledGraph::fingerprint`](crate::CompiledGraph::fingerprint)).
    pub graph_fingerprint: Name,
    /// The state's Rust type (`std::any::type_name`), so another state type is refused.
    pub state_type: Name,
    /// When it was written.
    pub created_at: Timestamp,
    /// As a step writes it: `state` as the changes since the run's checkpoint `delta.base`,
    /// so that a store may keep those instead of the whole state (`state` is whole all the
    /// same). `None` for a snapshot, and in every checkpoint read back: a store folds what it
    /// kept into the whole state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<Arc<StateDelta>>,
    /// As read back: how many deltas its store folded to read its state (0 when it kept it
    /// whole). A run that goes on from it on a thread counts its own deltas on from there, so
    /// that one whole checkpoint in `snapshot_every` bounds a thread's chains too. 0 as a step
    /// writes it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub chain: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Checkpoint {
    /// The committed state, read as `T` (the graph's state type).
    ///
    /// ```
    /// # use trellis::checkpoint::{Checkpoint, CheckpointLabel};
    /// #[derive(serde::Deserialize)]
    /// struct Count {
    ///     n: u32,
    /// }
    ///
    /// let checkpoint = Checkpoint {
    ///     id: 1,
    ///     run_id: trellis::RunId::new(),
    ///     step: 0,
    ///     nodes: Vec::new(),
    ///     label: CheckpointLabel::Start,
    ///     state: serde_json::json!({ "n": 3 }).into(),
    ///     frontier: vec!["add".into()],
    ///     visits: Default::default(),
    ///     approved: Vec::new(),
    ///     failures: Vec::new(),
    ///     interrupts: Vec::new(),
    ///     joins: Default::default(),
    ///     sends: Vec::new(),
    ///     children: Default::default(),
    ///     pending: Vec::new(),
    ///     breakpoints: Default::default(),
    ///     graph_fingerprint: "9f2c4e1a7b3d5c60".into(),
    ///     state_type: "demo::Count".into(),
    ///     created_at: trellis::run::Timestamp::now(),
    ///     delta: None,
    ///     chain: 0,
    /// };
    /// assert_eq!(checkpoint.state_as::<Count>().unwrap().n, 3);
    /// assert_eq!(checkpoint.frontier, ["add"]);
    /// ```
    ///
    /// # Errors
    /// The stored state is not a `T`.
    pub fn state_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&*self.state)
    }
}

/// A backend's failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The storage itself failed (I/O, connection, constraint).
    #[error("checkpoint storage failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Stored data could not be read back; `what` says which row.
    #[error("stored {what} is unreadable: {reason}")]
    Corrupt {
        /// Which row or field.
        what: String,
        /// Why.
        reason: String,
    },
    /// A step was refused because another process took the run over (its lease ran out, or
    /// its process was known to be gone): this process must stop executing it.
    #[error("run {run_id} is now executed by {owner}: this process lost its claim on it")]
    Fenced {
        /// The run.
        run_id: RunId,
        /// Who holds it now (`nobody` when it was released).
        owner: String,
    },
    /// The store keeps no threads (a backend written before threads, which kept the
    /// provided methods' default).
    #[error("this checkpointer keeps no {what}")]
    Unsupported {
        /// What it does not keep.
        what: &'static str,
    },
    /// A store URL that cannot be opened.
    #[error("unsupported database URL `{url}`: {reason}")]
    Url {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// A record or checkpoint could not be written as JSON.
    #[error("cannot serialize {what}: {source}")]
    Serialize {
        /// What was being written.
        what: &'static str,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

/// Storage for runs and their checkpoints: what a run needs to be recorded, paused, resumed
/// and continued, and what `trellis runs` reads.
///
/// Backends keep JSON (`serde_json::Value`) so this trait stays object safe and independent of
/// the state type. The runtime writes the run record together with each checkpoint through
/// [`save_step`](Checkpointer::save_step), which must be atomic: after a crash, either both are
/// stored or neither. The conformance suite (`conformance`, behind the `test-util` feature)
/// checks a backend against this contract and [`RunQueue`]'s.
#[async_trait]
pub trait Checkpointer: Send + Sync {
    /// Saves the checkpoint and upserts the run record atomically — if the stored record, when
    /// there is one, has the same `owner` as `run`. Otherwise nothing is written and the result
    /// is [`CheckpointError::Fenced`]: a process that lost its claim (a take-over after its
    /// lease ran out) can never overwrite the new owner's progress. A second checkpoint with
    /// the same run and id replaces the first.
    ///
    /// Both are handed over: a store that keeps them (the in-memory one) moves them in instead
    /// of copying them, on every step of every run.
    async fn save_step(
        &self,
        run: RunRecord,
        checkpoint: Checkpoint,
    ) -> Result<(), CheckpointError>;

    /// Whether this store writes [`Checkpoint::delta`] when it is given one. A store that keeps
    /// whole states answers `false` (the in-memory one), and its runs then skip working out
    /// what each step changed: it would be a cost for nothing. The default is `true`.
    fn writes_deltas(&self) -> bool {
        true
    }

    /// Replaces the run record only if the stored one has status `expected`; returns whether it
    /// did. This is how a resume claims a paused run: two claims, one winner.
    async fn claim_run(
        &self,
        run: &RunRecord,
        expected: RunStatus,
    ) -> Result<bool, CheckpointError>;

    /// Hands the run to `run.owner` only if the stored record is `running` and owned by
    /// `previous_owner`; returns whether it did. This is how a process takes over a run whose
    /// owner is gone (and how it hands a run back to the queue, or gives it up as failed): of
    /// two that try, one wins.
    ///
    /// Only who holds the run and whether it still runs change: `owner`, `lease_until`,
    /// `updated_at`, `status` and `error` are taken from `run`; the state and the progress
    /// (`steps`, `transitions`, `last_node`, `interrupts`) stay as stored, because they change
    /// only with a checkpoint. A taker that read the run a moment before its dead owner's last
    /// write landed (on a server, a statement sent just before a kill still commits) therefore
    /// cannot roll the run back; it reads the run again once it holds it.
    async fn take_over(
        &self,
        run: &RunRecord,
        previous_owner: Option<&str>,
    ) -> Result<bool, CheckpointError>;

    /// The run record, if there is one.
    async fn load_run(&self, run_id: &RunId) -> Result<Option<RunRecord>, CheckpointError>;

    /// Runs, newest first by creation time (as an instant, whatever offset it was written with;
    /// ties broken by run id, newest first), skipping `offset`, at most `limit`.
    async fn list_runs(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError>;

    /// The run's checkpoints, by id (step order).
    async fn list_checkpoints(&self, run_id: &RunId) -> Result<Vec<Checkpoint>, CheckpointError>;

    /// The run's checkpoint with the highest id.
    async fn latest_checkpoint(
        &self,
        run_id: &RunId,
    ) -> Result<Option<Checkpoint>, CheckpointError>;

    /// The run's checkpoint `id`, if there is one. The default reads the run's whole list;
    /// the backends Trellis ships read the one row.
    async fn checkpoint(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<Option<Checkpoint>, CheckpointError> {
        Ok(self
            .list_checkpoints(run_id)
            .await?
            .into_iter()
            .find(|checkpoint| checkpoint.id == id))
    }

    /// Records a new thread; `false` (and nothing written) when one with its id exists. The
    /// default refuses: the backends Trellis ships keep threads.
    async fn create_thread(&self, thread: &ThreadRecord) -> Result<bool, CheckpointError> {
        let _ = thread;
        Err(CheckpointError::Unsupported { what: "threads" })
    }

    /// The thread's record, if there is one.
    async fn load_thread(
        &self,
        thread_id: &ThreadId,
    ) -> Result<Option<ThreadRecord>, CheckpointError> {
        let _ = thread_id;
        Err(CheckpointError::Unsupported { what: "threads" })
    }

    /// Threads, newest first by creation (ties broken by id, greatest first), skipping
    /// `offset`, at most `limit`.
    async fn list_threads(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ThreadRecord>, CheckpointError> {
        let _ = (limit, offset);
        Err(CheckpointError::Unsupported { what: "threads" })
    }

    /// Replaces the thread's metadata and sets its `updated_at` to `now`; `false` when there is
    /// no such thread.
    async fn set_thread_metadata(
        &self,
        thread_id: &ThreadId,
        metadata: &serde_json::Map<String, serde_json::Value>,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        let _ = (thread_id, metadata, now);
        Err(CheckpointError::Unsupported { what: "threads" })
    }

    /// Makes `head` the thread's newest run (and `now` its `updated_at`) only if its head is
    /// still `expected`; returns whether it did. This is how a run starts on a thread: of two
    /// started at once from the same head, one wins.
    async fn move_thread_head(
        &self,
        thread_id: &ThreadId,
        expected: Option<&RunId>,
        head: &RunId,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        let _ = (thread_id, expected, head, now);
        Err(CheckpointError::Unsupported { what: "threads" })
    }

    /// The runs started on the thread, newest first by creation (ties broken by run id,
    /// newest first), skipping `offset`, at most `limit`. Reading the newest costs the same on
    /// a thread of one run and of thousands.
    async fn thread_runs(
        &self,
        thread_id: &ThreadId,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError> {
        let _ = (thread_id, limit, offset);
        Err(CheckpointError::Unsupported { what: "threads" })
    }

    /// Deletes the thread, its runs and their checkpoints (with their subgraphs' child runs,
    /// `<run>/…`), at once; `false` when there is no such thread. A branch made of one of its
    /// runs outside the thread (`CompiledGraph::fork`) keeps its own checkpoints but no
    /// longer its history before them.
    async fn delete_thread(&self, thread_id: &ThreadId) -> Result<bool, CheckpointError> {
        let _ = thread_id;
        Err(CheckpointError::Unsupported { what: "threads" })
    }

    /// Deletes those of `run_ids` that have ended (completed, failed or cancelled) and are
    /// not their thread's newest run (its head, which holds the thread's state), each with its
    /// checkpoints, its subgraphs' child runs (`<run>/…`) and its place in its thread, at once;
    /// returns the ids deleted, in the order given. A running or paused run, a head and an
    /// unknown id are left alone — checked as the rows are deleted, so a run resumed or
    /// retried meanwhile is kept. A branch of a deleted run keeps its own checkpoints but no
    /// longer its history before them. [`retention`](crate::retention) decides which runs go.
    async fn delete_runs(&self, run_ids: &[RunId]) -> Result<Vec<RunId>, CheckpointError> {
        let _ = run_ids;
        Err(CheckpointError::Unsupported { what: "deletion" })
    }

    /// Deletes the run's checkpoints whose id is below `id`, keeping what the store needs to
    /// read the run back; returns how many it deleted. What compacting a thread does to its
    /// newest run ([`Pruner::compact_thread`](crate::retention::Pruner::compact_thread)).
    async fn delete_checkpoints_before(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<u64, CheckpointError> {
        let _ = (run_id, id);
        Err(CheckpointError::Unsupported { what: "deletion" })
    }

    /// Where waiters in this process hear of this store's writes, if it announces them
    /// ([`Announced`]); `None` (the default) when waiters must look again by themselves.
    fn changes(&self) -> Option<Arc<Changes>> {
        None
    }

    /// Has `changes` hear the writes other processes make to this store, where the store can
    /// tell of them (PostgreSQL: `LISTEN`/`NOTIFY`, on a connection of its own for as long as
    /// `changes` live); the default hears none. [`Announced`] calls it.
    fn hear_others(&self, changes: &Arc<Changes>) {
        let _ = changes;
    }
}

/// A [`Checkpointer`] that is also a queue of ready runs: what a
/// [`Worker`](crate::worker::Worker) needs. Every backend Trellis ships is one.
#[async_trait]
pub trait RunQueue: Checkpointer {
    /// Claims the oldest ready run of `graph` for `owner`: a `running` run nobody holds (queued
    /// by [`CompiledGraph::enqueue`](crate::CompiledGraph::enqueue) or
    /// [`Resume::enqueue`](crate::interrupt::Resume::enqueue)) or whose lease ended before
    /// `now`. Sets its owner and `lease_until` and returns the record as stored. Of several
    /// processes claiming at once, each gets a different run; none waits for another's claim.
    async fn claim_next(
        &self,
        graph: &str,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> Result<Option<RunRecord>, CheckpointError>;

    /// The running runs of `graph` that someone holds, with their owners, oldest first: where a
    /// worker looks for runs whose owner is a process of its machine that is gone (free at once,
    /// without waiting for the lease).
    async fn held_runs(&self, graph: &str) -> Result<Vec<(RunId, String)>, CheckpointError>;

    /// Extends `owner`'s lease on a running run to `lease_until`; `false` when the run is no
    /// longer running under `owner` (someone took it over, or it ended).
    async fn renew_lease(
        &self,
        run_id: &RunId,
        owner: &str,
        lease_until: Timestamp,
    ) -> Result<bool, CheckpointError>;
}

/// A checkpointer behind an `Arc`, whatever its type: a backend (`Arc<SqliteCheckpointer>`),
/// `Arc<dyn Checkpointer>` or `Arc<dyn RunQueue>`. What
/// [`GraphBuilder::set_checkpointer`](crate::GraphBuilder::set_checkpointer) and
/// [`CompiledGraph::with_checkpointer`](crate::CompiledGraph::with_checkpointer) take, so that
/// the store a worker shares can be handed to a graph as it is. Implemented for you.
pub trait SharedCheckpointer: Send + Sync {
    /// The same store, as the graph keeps it.
    fn shared(self: std::sync::Arc<Self>) -> std::sync::Arc<dyn Checkpointer>;
}

impl<C: Checkpointer + 'static> SharedCheckpointer for C {
    fn shared(self: std::sync::Arc<Self>) -> std::sync::Arc<dyn Checkpointer> {
        self
    }
}

impl SharedCheckpointer for dyn Checkpointer {
    fn shared(self: std::sync::Arc<Self>) -> std::sync::Arc<dyn Checkpointer> {
        self
    }
}

impl SharedCheckpointer for dyn RunQueue {
    fn shared(self: std::sync::Arc<Self>) -> std::sync::Arc<dyn Checkpointer> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_back_as_written_and_unknown_ones_are_refused() {
        for label in [
            CheckpointLabel::Start,
            CheckpointLabel::Step,
            CheckpointLabel::Pause("approval".to_owned()),
            CheckpointLabel::Resume,
            CheckpointLabel::Complete,
            CheckpointLabel::Failed,
            CheckpointLabel::Retry,
            CheckpointLabel::Fork,
            CheckpointLabel::Update,
        ] {
            assert_eq!(label.to_string().parse::<CheckpointLabel>(), Ok(label));
        }
        for bad in ["", "pause:", "paused", "Step"] {
            let error = bad.parse::<CheckpointLabel>().unwrap_err();
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("unknown checkpoint label `{bad}`"))
            );
        }
    }
}
