//! The parts a [`Run`](super::Run) is made of, grouped by job, each with what a new run holds.
//!
//! A new run and one restored from a checkpoint are built by the same constructor
//! (`Run::assemble`) from these parts: a new run takes their `new`, a restored one fills them
//! from its record and checkpoint.

use std::sync::Arc;

use super::{LEASE, Phase};
use crate::checkpoint::{CheckpointRef, PendingUpdate};
use crate::id::{RunId, ThreadId, Timestamp};
use crate::interrupt::Interrupt;
use crate::node::NodeFailure;

/// What the next super-step runs.
#[derive(Debug, Default)]
pub(super) struct Work {
    /// The nodes its edges lead to, in declaration order, once each.
    pub(super) frontier: Vec<usize>,
    /// Branches sent for it: the node, and its input.
    pub(super) sends: Vec<(usize, Arc<serde_json::Value>)>,
    /// The one node a person chose to run instead of the frontier.
    pub(super) next_override: Option<usize>,
    /// Per waiting join (`Topology::joins`): the sources done since its node last ran.
    pub(super) arrived: Vec<Vec<usize>>,
}

impl Work {
    /// Nothing to run yet, for a graph with `joins` waiting joins.
    pub(super) fn new(joins: usize) -> Self {
        Work {
            arrived: vec![Vec::new(); joins],
            ..Work::default()
        }
    }
}

/// What a step hands on to a later one besides the state: answers, failures to handle,
/// children to continue, held updates, and the questions of a pause.
#[derive(Debug, Default)]
pub(super) struct Held {
    /// Nodes approved to run past their `interrupt before`.
    pub(super) approved: Vec<usize>,
    /// Failures waiting for their `on_error` handler: the handler, and the failure.
    pub(super) failures: Vec<(usize, Arc<NodeFailure>)>,
    /// Subgraph nodes whose child was answered after a pause: the child run each continues
    /// when it runs again.
    pub(super) children: Vec<(usize, RunId)>,
    /// While a subgraph node on this state waits for an answer: the updates committed since
    /// its child paused, merged again after the child's final state (`Checkpoint::pending`).
    /// As JSON: an update need not be `Sync`, and these are written to every checkpoint.
    pub(super) pending: Vec<PendingUpdate>,
    /// While paused: what is asked.
    pub(super) interrupts: Vec<Interrupt>,
    /// The run's own breakpoints ([`Breakpoints`](crate::interrupt::Breakpoints)).
    pub(super) stops: Stops,
}

/// Nodes a run pauses before or after besides its graph's interrupts, by index.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Stops {
    pub(super) before: Vec<usize>,
    pub(super) after: Vec<usize>,
}

/// How far the run has come.
#[derive(Debug)]
pub(super) struct Progress {
    /// Super-steps run.
    pub(super) step: u64,
    /// Activations run, over all steps.
    pub(super) transitions: u64,
    /// The last node of the last step.
    pub(super) last_node: Option<usize>,
    pub(super) phase: Phase,
    /// Per node: how many times it ran.
    pub(super) visits: Vec<u32>,
}

impl Progress {
    /// A run that has not begun, on a graph of `nodes` nodes.
    pub(super) fn new(nodes: usize) -> Self {
        Progress {
            step: 0,
            transitions: 0,
            last_node: None,
            phase: Phase::New,
            visits: vec![0; nodes],
        }
    }
}

/// What the run's record and checkpoints carry besides its state and progress.
#[derive(Debug)]
pub(super) struct Ledger {
    pub(super) created_at: Timestamp,
    /// The id of the run's last checkpoint.
    pub(super) checkpoints: u64,
    /// Who executes the run (written into every record) and how long each write holds it.
    pub(super) owner: Arc<str>,
    pub(super) lease: std::time::Duration,
    /// For a branch: the run and checkpoint it was forked from.
    pub(super) parent: Option<CheckpointRef>,
    /// For a run started on a thread: the thread.
    pub(super) thread: Option<ThreadId>,
    /// What the run's starter said about it.
    pub(super) metadata: crate::thread::Metadata,
    /// The state's JSON as last written, for delta checkpoints.
    pub(super) written: super::written::Written,
}

impl Ledger {
    /// A run created now, owned by this process, with no checkpoint yet.
    pub(super) fn new() -> Self {
        Ledger {
            created_at: Timestamp::now(),
            checkpoints: 0,
            owner: Arc::clone(crate::owner::shared()),
            lease: LEASE,
            parent: None,
            thread: None,
            metadata: crate::thread::Metadata::new(),
            written: super::written::Written::default(),
        }
    }
}

/// Buffers a step reuses rather than allocating its own.
#[derive(Debug, Default)]
pub(super) struct Buffers {
    /// The previous frontier's buffer, reused for the next one.
    pub(super) spare: Vec<usize>,
    /// The nodes of a step whose edges are followed after the merge.
    pub(super) follow: Vec<usize>,
    /// The last plain step's hold on the run's scope, handed to the next one's context: a
    /// step of one node then shares it rather than counting it up and down (two atomic
    /// operations, a tenth of such a step).
    pub(super) scope: Option<Arc<crate::node::RunScope>>,
}
