//! Errors: `CompileError` for a graph that cannot be built, `RunError` for a run that stops.

use std::fmt;

use trellis_graph::Code;

use crate::checkpoint::{CheckpointError, CheckpointRef};
use crate::id::{RunId, ThreadId};
use crate::node::NodeFailure;
use crate::state::MergeConflict;

/// One graph rule broken (or warned about) by a [`GraphBuilder`](crate::GraphBuilder) graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildDiagnostic {
    /// The `.graph` language's code for the same mistake (`E0202`, …).
    pub code: Code,
    /// What is wrong, one sentence.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
}

impl fmt::Display for BuildDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = self.code.severity().as_str();
        write!(f, "{severity}[{}]: {}", self.code, self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  = help: {help}")?;
        }
        Ok(())
    }
}

/// A graph that [`compile`](crate::GraphBuilder::compile) refused: every broken rule, in the
/// order found, with the same codes as the `.graph` language.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct CompileError {
    /// What is wrong with the graph.
    pub diagnostics: Vec<BuildDiagnostic>,
}

impl CompileError {
    /// The codes of the diagnostics, in order.
    pub fn codes(&self) -> Vec<Code> {
        self.diagnostics.iter().map(|d| d.code).collect()
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.diagnostics.len();
        write!(
            f,
            "graph has {count} error{}",
            if count == 1 { "" } else { "s" }
        )?;
        for diagnostic in &self.diagnostics {
            write!(f, "\n{diagnostic}")?;
        }
        Ok(())
    }
}

/// Why a run stopped, or why it could not be started, stepped or resumed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// A node failed after its last attempt and has no `on_error` handler.
    #[error("{0}")]
    Node(NodeFailure),
    /// Two nodes of one step overwrote one field.
    #[error("merge conflict in step {step}: {conflict}")]
    MergeConflict {
        /// The step.
        step: u64,
        /// The field and the nodes.
        #[source]
        conflict: MergeConflict,
    },
    /// A command, a router or an interrupt's `resume_to` named a target the node's edges do not
    /// declare.
    #[error("node `{node}` sent the run to `{target}`, which its edges do not declare")]
    UndeclaredTarget {
        /// The node.
        node: String,
        /// What it asked for.
        target: String,
    },
    /// The run reached `max_steps` super-steps with work left.
    #[error("the run reached max_steps ({max_steps}) with nodes still to run")]
    StepLimit {
        /// The limit.
        max_steps: u32,
    },
    /// A node was about to run more often than its `max_visits`.
    #[error("node `{node}` would run more than its max_visits ({max_visits})")]
    VisitLimit {
        /// The node.
        node: String,
        /// Its limit.
        max_visits: u32,
    },
    /// The run's cancellation token was cancelled.
    #[error("the run was cancelled in step {step}")]
    Cancelled {
        /// The step that was running or about to run.
        step: u64,
    },
    /// A name that is not a node of this graph: given to `override_next`, or found in a
    /// checkpoint written by a graph of another shape.
    #[error("`{node}` is not a node of graph `{graph}`")]
    UnknownNode {
        /// The graph.
        graph: String,
        /// The name.
        node: String,
    },
    /// The checkpointer failed.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// The state could not be written as, or read back from, JSON.
    #[error("the state of run {run_id} cannot be {action} JSON: {source}")]
    State {
        /// The run.
        run_id: RunId,
        /// `written as` or `read from`.
        action: &'static str,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// Resuming needs a checkpointer to find the run in; this graph has none.
    #[error("graph `{graph}` has no checkpointer to resume run {run_id} from")]
    NoCheckpointer {
        /// The graph.
        graph: String,
        /// The run asked for.
        run_id: RunId,
    },
    /// No run with this id.
    #[error("no run {run_id}")]
    RunNotFound {
        /// The id asked for.
        run_id: RunId,
    },
    /// The run already completed; there is nothing to resume.
    #[error("run {run_id} already completed; there is nothing to resume")]
    AlreadyCompleted {
        /// The run.
        run_id: RunId,
    },
    /// The run failed; it cannot be resumed (but it can be retried, once the cause is fixed:
    /// [`CompiledGraph::retry`](crate::CompiledGraph::retry)).
    #[error("run {run_id} failed; a failed run is not resumed but retried")]
    AlreadyFailed {
        /// The run.
        run_id: RunId,
    },
    /// The run was cancelled; it cannot be resumed (but it can be retried:
    /// [`CompiledGraph::retry`](crate::CompiledGraph::retry)).
    #[error("run {run_id} was cancelled; a cancelled run is not resumed but retried")]
    AlreadyCancelled {
        /// The run.
        run_id: RunId,
    },
    /// The run is being executed (or another resume claimed it first).
    #[error("run {run_id} is running, not paused; only a paused run can be resumed")]
    StillRunning {
        /// The run.
        run_id: RunId,
    },
    /// A stopping [`Worker`](crate::worker::Worker) handed the unfinished run back to the queue; another
    /// worker continues it.
    #[error("run {run_id} was handed back to the queue unfinished: its worker is stopping")]
    Released {
        /// The run.
        run_id: RunId,
    },
    /// A [`Worker`](crate::worker::Worker) gave the run up because it lost its lease (another worker
    /// took the run over, or no renewal reached the store for a whole lease); whoever holds it
    /// now continues it.
    #[error("run {run_id} was given up: this worker lost its lease on it")]
    LeaseLost {
        /// The run.
        run_id: RunId,
    },
    /// The run was started by another graph.
    #[error("run {run_id} belongs to graph `{found}`, not `{expected}`")]
    WrongGraph {
        /// The run.
        run_id: RunId,
        /// This graph.
        expected: String,
        /// The run's graph.
        found: String,
    },
    /// The answers given do not match the run's pending interrupts one for one.
    #[error("run {run_id} waits for answers to [{}], got answers to [{}]", .pending.join(", "), .given.join(", "))]
    Answers {
        /// The run.
        run_id: RunId,
        /// The ids of the pending interrupts.
        pending: Vec<String>,
        /// The ids answered.
        given: Vec<String>,
    },
    /// An answer is not of the type its pause site declares (`interrupt before "…" answer T;`,
    /// `asks Q -> T;`); nothing was written.
    #[error(
        "run {run_id}: the answer to `{interrupt}` is {given}, where its node takes {expected}"
    )]
    WrongAnswer {
        /// The run.
        run_id: RunId,
        /// The interrupt answered (`<node>@<step>`).
        interrupt: String,
        /// What the site takes, in words (`` a `Decision` ``).
        expected: String,
        /// What was given instead, in words.
        given: String,
    },
    /// `step` was called on a paused run: resume it with answers first.
    #[error("run {run_id} is paused; resume it with answers to its interrupts")]
    Paused {
        /// The run.
        run_id: RunId,
    },
    /// `step` was called on a run that already ended.
    #[error("run {run_id} has ended")]
    Ended {
        /// The run.
        run_id: RunId,
    },
    /// Only a failed run can be retried; this one is `status` (or another process retried it
    /// first).
    #[error("run {run_id} is {status}, not failed; only a failed run can be retried")]
    NotFailed {
        /// The run.
        run_id: RunId,
        /// Where it stands.
        status: crate::checkpoint::RunStatus,
    },
    /// The run has no checkpoint with this id.
    #[error("run {run_id} has no checkpoint {checkpoint}")]
    CheckpointNotFound {
        /// The run.
        run_id: RunId,
        /// The checkpoint id asked for.
        checkpoint: u64,
    },
    /// A send edge without its function (a graph declared with
    /// [`GraphBuilder::from_blueprint`](crate::GraphBuilder::from_blueprint) and no
    /// [`set_send`](crate::GraphBuilder::set_send) for it).
    #[error(
        "the send edge from {from} has no function to say what to send: give it one with `GraphBuilder::set_send`"
    )]
    NoSendFunction {
        /// The edge's source (`START` or a node, in backquotes).
        from: String,
    },
    /// A send edge's function could not write a branch's input as JSON.
    #[error("the send edge from {from} could not write an input as JSON: {source}")]
    SendInput {
        /// The edge's source (`START` or a node, in backquotes).
        from: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The stored run cannot be continued: `reason` says why.
    #[error("run {run_id} cannot be resumed: {reason}")]
    Unresumable {
        /// The run.
        run_id: RunId,
        /// Why.
        reason: String,
    },
    /// A subgraph's run was given what it cannot take: an answer (or a starting state) of
    /// another type than its own.
    #[error("subgraph run {run_id} takes {expected}")]
    SubgraphAnswer {
        /// The child run.
        run_id: RunId,
        /// What it takes.
        expected: &'static str,
    },
    /// Threads are kept in the checkpointer, and the graph has none.
    #[error("graph `{graph}` has no checkpointer to keep threads in")]
    NoThreadStore {
        /// The graph.
        graph: String,
    },
    /// A stored run that has ended cannot be cancelled.
    #[error("run {run_id} already {status}; there is nothing to cancel")]
    NotCancellable {
        /// The run.
        run_id: RunId,
        /// Where it ended.
        status: crate::checkpoint::RunStatus,
    },
    /// The checkpointer holds no thread by this id.
    #[error("no thread {thread_id}")]
    ThreadNotFound {
        /// The thread.
        thread_id: ThreadId,
    },
    /// A thread was created with an id that one already has.
    #[error("thread {thread_id} already exists")]
    ThreadExists {
        /// The thread.
        thread_id: ThreadId,
    },
    /// A run was started on a thread whose newest run is still running (or another run was
    /// started on it at the same moment): the thread goes on from one run at a time.
    #[error("thread {thread_id} is busy: its run {run_id} has not ended")]
    ThreadBusy {
        /// The thread.
        thread_id: ThreadId,
        /// The run it is busy with.
        run_id: RunId,
    },
    /// A checkpoint given as one of a thread's is a checkpoint of a run on another thread (or
    /// of no run).
    #[error("run {run_id} is not on thread {thread_id}")]
    NotOnThread {
        /// The thread.
        thread_id: ThreadId,
        /// The run named.
        run_id: RunId,
    },
    /// A thread was asked to go on with what it has pending, and it has never run.
    #[error("thread {thread_id} has nothing pending: start a run on it with an input")]
    NothingPending {
        /// The thread.
        thread_id: ThreadId,
    },
    /// What the graph keeps beside its checkpoints
    /// ([`Branching`](crate::run::Branching)) could not be taken along into a branch or a new
    /// run on a thread: that run was not made.
    #[error("run {run_id} could not branch from run {} at checkpoint {}: {reason}", from.run_id, from.checkpoint)]
    Branch {
        /// The branch that was not made.
        run_id: RunId,
        /// The checkpoint it was to start from.
        from: CheckpointRef,
        /// Why.
        reason: String,
    },
}

impl RunError {
    /// A [`Branching`](crate::run::Branching) hook's refusal to take run `run_id` along from
    /// `from`.
    pub(crate) fn branch(
        run_id: &RunId,
        from: &CheckpointRef,
        error: &(dyn std::error::Error + Send + Sync),
    ) -> Self {
        RunError::Branch {
            run_id: run_id.clone(),
            from: from.clone(),
            reason: error.to_string(),
        }
    }
}

/// A run that [`invoke`](crate::CompiledGraph::invoke) started and that then failed: its id, to
/// [`retry`](crate::CompiledGraph::retry) it once the cause is fixed or read its
/// [`history`](crate::CompiledGraph::history), and why it failed.
///
/// `?` turns it into its [`RunError`] where a function returns one (the id is then dropped).
#[derive(Debug)]
pub struct RunFailure {
    /// The run that failed.
    pub run_id: RunId,
    /// Why.
    pub error: RunError,
}

impl std::fmt::Display for RunFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "run {}: {}", self.run_id, self.error)
    }
}

// The error's own cause, as if it were the error: its message is already in this one's.
impl std::error::Error for RunFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

impl From<RunFailure> for RunError {
    fn from(failure: RunFailure) -> Self {
        failure.error
    }
}
