//! The executor: one run's Pregel super-steps, pauses, resumes and checkpoints.
//!
//! [`Run`] is defined here with what a caller reads of it; each job it does has its own file:
//! `algo` (the step's rules, as pure functions), `step` (the super-step's loop and its I/O),
//! `absorb` (a step's activations and their results), `persist` (records and checkpoints),
//! `restore` (from a checkpoint), `resume` (answers), `lease` (who holds a running run),
//! `branch` (retries and forks); its fields are grouped by job in `parts`.

use std::sync::Arc;

use tracing::Instrument;

use crate::cancel::CancellationToken;
use crate::errors::RunError;
use crate::graph::CompiledGraph;
use crate::id::RunId;
use crate::interrupt::Interrupt;
use crate::node::RunScope;
use crate::state::GraphState;

mod absorb;
mod algo;
mod branch;
mod concurrent;
mod lease;
mod parts;
mod persist;
mod restore;
pub(crate) mod resume;
mod step;
pub(crate) mod stream;
mod written;

pub(crate) use lease::LEASE;
use parts::{Buffers, Held, Ledger, Progress, Work};

/// How a run ended (for now): completed, or paused waiting for answers.
#[derive(Debug, Clone)]
pub enum Outcome<S> {
    /// The run reached its end.
    Completed {
        /// The run.
        run_id: RunId,
        /// The final state.
        state: S,
        /// Super-steps run.
        steps: u64,
    },
    /// The run paused; resume it with an answer per interrupt.
    Paused {
        /// The run.
        run_id: RunId,
        /// The committed state at the pause.
        state: S,
        /// What is asked.
        interrupts: Vec<Interrupt>,
    },
}

impl<S> Outcome<S> {
    /// The run.
    pub fn run_id(&self) -> &RunId {
        match self {
            Outcome::Completed { run_id, .. } | Outcome::Paused { run_id, .. } => run_id,
        }
    }

    /// The state at the end or at the pause.
    pub fn state(&self) -> &S {
        match self {
            Outcome::Completed { state, .. } | Outcome::Paused { state, .. } => state,
        }
    }

    /// The state, by value.
    pub fn into_state(self) -> S {
        match self {
            Outcome::Completed { state, .. } | Outcome::Paused { state, .. } => state,
        }
    }

    /// The pending interrupts (empty when completed).
    pub fn interrupts(&self) -> &[Interrupt] {
        match self {
            Outcome::Completed { .. } => &[],
            Outcome::Paused { interrupts, .. } => interrupts,
        }
    }

    /// Whether the run paused.
    pub fn is_paused(&self) -> bool {
        matches!(self, Outcome::Paused { .. })
    }
}

/// What one [`Run::step`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepOutcome {
    /// A super-step ran and the run goes on.
    Stepped {
        /// The step's number, from 1; [`Run::next_nodes`] tells what runs next.
        step: u64,
    },
    /// The run paused: a node asked, or asks after it ran, or a node of the next step asks
    /// before it runs (`interrupt before`: this step ran, the next waits for the answer; a run
    /// that starts or resumes in front of such a node pauses without running anything).
    Paused(Vec<Interrupt>),
    /// The run reached its end: the step that got there ran, and its update is in
    /// [`Run::state`].
    Completed,
}

/// What a step did, inside the crate: [`StepOutcome`] without a copy of the pause's questions,
/// which the run keeps (`Run::interrupts`) and only [`Run::step`]'s callers are handed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advanced {
    Stepped(u64),
    Paused,
    Completed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    New,
    Running,
    Paused,
    Completed,
    Failed,
}

/// One run of a graph, driven step by step (or to its end with [`run_to_end`](Run::run_to_end)).
pub struct Run<S: GraphState> {
    graph: CompiledGraph<S>,
    /// The run's identity and what its nodes reach through their context.
    scope: Arc<RunScope>,
    /// The committed state.
    state: Arc<S>,
    work: Work,
    held: Held,
    progress: Progress,
    ledger: Ledger,
    buffers: Buffers,
    /// Where the run's stream items go, when it is driven as a [`RunStream`](stream::RunStream).
    stream: Option<stream::StreamSink<S>>,
}

impl<S: GraphState> Run<S> {
    pub(crate) fn new(graph: CompiledGraph<S>, input: S) -> Self {
        Self::with_id(graph, RunId::new(), input)
    }

    /// A new run called `run_id` (a subgraph's child run is named after its parent's).
    pub(crate) fn with_id(graph: CompiledGraph<S>, run_id: RunId, input: S) -> Self {
        let topology = &graph.topology;
        let (work, progress) = (
            Work::new(topology.joins.len()),
            Progress::new(topology.nodes.len()),
        );
        Self::assemble(
            graph,
            run_id,
            input,
            work,
            Held::default(),
            progress,
            Ledger::new(),
        )
    }

    /// The one constructor, for a new run and a restored one alike.
    fn assemble(
        graph: CompiledGraph<S>,
        run_id: RunId,
        state: S,
        work: Work,
        held: Held,
        progress: Progress,
        ledger: Ledger,
    ) -> Self {
        Run {
            scope: Arc::new(RunScope {
                run_id,
                graph: Arc::clone(&graph.topology.name),
                cancel: CancellationToken::new(),
                names: Arc::clone(&graph.topology.names),
                emitted: None,
                subgraphs: None,
                forward: None,
                updates: None,
                to_parent: None,
                nest: graph.nest(),
            }),
            graph,
            state: Arc::new(state),
            work,
            held,
            progress,
            ledger,
            buffers: Buffers::default(),
            stream: None,
        }
    }

    /// Makes `metadata` what the run's record says its starter said about it, before it
    /// begins.
    pub(crate) fn set_metadata(&mut self, metadata: crate::thread::Metadata) {
        self.ledger.metadata = metadata;
    }

    /// Uses `token` to cancel this run (replacing its own).
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.scope = Arc::new(RunScope {
            cancel: token,
            ..(*self.scope).clone()
        });
        self
    }

    /// The token that cancels this run.
    pub fn cancellation(&self) -> CancellationToken {
        self.scope.cancel.clone()
    }

    /// The run's id.
    pub fn run_id(&self) -> &RunId {
        &self.scope.run_id
    }

    /// The committed state.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// Checkpoints written so far: the number of the last one.
    pub(crate) fn checkpoints_written(&self) -> u64 {
        self.ledger.checkpoints
    }

    /// Super-steps run so far.
    pub fn steps(&self) -> u64 {
        self.progress.step
    }

    /// The nodes of the next super-step: those its edges lead to, in declaration order (or the
    /// one [`override_next`](Self::override_next) chose), then the node of each branch sent to
    /// run in it, once per branch, in the order the branches run.
    pub fn next_nodes(&self) -> Vec<&str> {
        let nodes = &self.graph.topology.nodes;
        let led_to = match &self.work.next_override {
            Some(node) => std::slice::from_ref(node),
            None => self.work.frontier.as_slice(),
        };
        let sent = self.work.sends.iter().map(|(node, _)| node);
        led_to
            .iter()
            .chain(sent)
            .map(|&i| &*nodes[i].name)
            .collect()
    }

    /// While paused: what is asked.
    pub fn interrupts(&self) -> &[Interrupt] {
        &self.held.interrupts
    }

    /// Replaces the next super-step's nodes with `node` alone (a person steering a run).
    ///
    /// # Errors
    /// [`RunError::UnknownNode`] for a name that is not a node; [`RunError::Paused`] or
    /// [`RunError::Ended`] when the run cannot step.
    pub fn override_next(&mut self, node: &str) -> Result<(), RunError> {
        self.ensure_steppable()?;
        let index = self.graph.topology.find(node)?;
        self.work.next_override = Some(index);
        Ok(())
    }

    pub(super) fn ensure_steppable(&self) -> Result<(), RunError> {
        match self.progress.phase {
            Phase::New | Phase::Running => Ok(()),
            Phase::Paused => Err(RunError::Paused {
                run_id: self.scope.run_id.clone(),
            }),
            Phase::Completed | Phase::Failed => Err(RunError::Ended {
                run_id: self.scope.run_id.clone(),
            }),
        }
    }

    /// Runs steps until the run completes or pauses.
    ///
    /// # Errors
    /// The [`RunError`] that stopped the run.
    pub async fn run_to_end(&mut self) -> Result<Outcome<S>, RunError> {
        self.in_run_span(Self::drive).await?;
        Ok(self.outcome((*self.state).clone()))
    }

    /// Steps until the run completes or pauses (one span for all the steps).
    async fn drive(&mut self) -> Result<(), RunError> {
        let topology = Arc::clone(&self.graph.topology);
        self.advance(&topology, true).await?;
        Ok(())
    }

    /// Runs `work` inside the run's `tracing` span; wrapped only when someone records spans,
    /// since the wrapper costs a copy of the whole future.
    async fn in_run_span<'a, T, F, Fut>(&'a mut self, work: F) -> Result<T, RunError>
    where
        F: FnOnce(&'a mut Self) -> Fut,
        Fut: std::future::Future<Output = Result<T, RunError>> + 'a,
    {
        let span = tracing::info_span!(target: "trellis", "graph.run", run_id = %self.scope.run_id, graph = %self.scope.graph);
        if span.is_disabled() {
            work(self).await
        } else {
            work(self).instrument(span).await
        }
    }

    /// [`run_to_end`](Self::run_to_end), handing over the state without a copy.
    ///
    /// Not an `async fn`: its future would hold the run twice (the argument, and the local it
    /// is moved into when first polled), and a caller's future is moved whole several times
    /// before it runs (into `block_on`, into a spawned task).
    #[expect(
        clippy::manual_async_fn,
        reason = "an `async fn` holds its arguments twice"
    )]
    pub(crate) fn finish(mut self) -> impl Future<Output = Result<Outcome<S>, RunError>> {
        async move {
            self.in_run_span(Self::drive).await?;
            Ok(self.into_outcome())
        }
    }

    /// The outcome of a run that completed or paused, handing over the state without a copy.
    pub(crate) fn into_outcome(mut self) -> Outcome<S> {
        let run_id = self.scope.run_id.clone();
        let (paused, steps, interrupts) = (
            self.progress.phase == Phase::Paused,
            self.progress.step,
            std::mem::take(&mut self.held.interrupts),
        );
        let state = Arc::try_unwrap(self.state).unwrap_or_else(|shared| (*shared).clone());
        if paused {
            Outcome::Paused {
                run_id,
                state,
                interrupts,
            }
        } else {
            Outcome::Completed {
                run_id,
                state,
                steps,
            }
        }
    }

    fn outcome(&self, state: S) -> Outcome<S> {
        let run_id = self.scope.run_id.clone();
        if self.progress.phase == Phase::Paused {
            Outcome::Paused {
                run_id,
                state,
                interrupts: self.held.interrupts.clone(),
            }
        } else {
            Outcome::Completed {
                run_id,
                state,
                steps: self.progress.step,
            }
        }
    }
}
