//! The executor: one run's Pregel super-steps, pauses, resumes and checkpoints.

use std::collections::BTreeMap;
use std::sync::Arc;

use tracing::Instrument;

use crate::activation::{Activation, Stop, activate};
use crate::cancel::CancellationToken;
use crate::checkpoint::{Checkpoint, CheckpointLabel, RunRecord, RunStatus};
use crate::errors::RunError;
use crate::event::Event;
use crate::graph::{CompiledGraph, Target, Topology, Visits};
use crate::id::{RunId, Timestamp};
use crate::interrupt::{Interrupt, InterruptPoint};
use crate::node::{Command, NodeContext, NodeFailure, NodeResult, RunScope};
use crate::state::{ApplyResume, GraphState};

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
    /// The run paused (before running anything, for `interrupt before`).
    Paused(Vec<Interrupt>),
    /// The run reached its end.
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
    scope: Arc<RunScope>,
    state: Arc<S>,
    frontier: Vec<usize>,
    visits: Vec<u32>,
    approved: Vec<usize>,
    failures: Vec<(usize, Arc<NodeFailure>)>,
    interrupts: Vec<Interrupt>,
    step: u64,
    transitions: u64,
    last_node: Option<usize>,
    phase: Phase,
    created_at: Timestamp,
    checkpoints: u64,
    next_override: Option<usize>,
    /// The previous frontier's buffer, reused for the next one.
    spare: Vec<usize>,
    /// Reused buffer: the nodes of a step whose edges are followed after the merge.
    follow: Vec<usize>,
    /// Who executes the run (written into every record) and how long each write holds it.
    owner: Arc<str>,
    lease: std::time::Duration,
}

/// A step's updates in declaration order, without a `Vec` for the common single update.
enum Updates<'a, U> {
    None,
    One(&'a str, U),
    Many(Vec<(&'a str, U)>),
}

impl<'a, U> Updates<'a, U> {
    fn push(&mut self, node: &'a str, update: U) {
        *self = match std::mem::replace(self, Updates::None) {
            Updates::None => Updates::One(node, update),
            Updates::One(first, earlier) => Updates::Many(vec![(first, earlier), (node, update)]),
            Updates::Many(mut all) => {
                all.push((node, update));
                Updates::Many(all)
            }
        };
    }
}

/// What a step's activations produced, gathered in declaration order before the merge.
struct Absorbed<'t, U> {
    updates: Updates<'t, U>,
    /// The next frontier: commands' targets, error handlers, held deferred nodes.
    next: Vec<usize>,
    /// Nodes whose edges decide where they lead, once the updates are merged.
    follow: Vec<usize>,
    interrupts: Vec<(usize, Interrupt)>,
    failures: Vec<(usize, Arc<NodeFailure>)>,
    cancelled: bool,
}

/// Aborts spawned branches when a step is dropped midway (its run future dropped).
struct AbortOnDrop<T>(Vec<tokio::task::JoinHandle<T>>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        for handle in &self.0 {
            handle.abort();
        }
    }
}

impl<S: GraphState> Run<S> {
    pub(crate) fn new(graph: CompiledGraph<S>, input: S) -> Self {
        let nodes = graph.topology.nodes.len();
        Run {
            scope: Arc::new(RunScope {
                run_id: RunId::new(),
                graph: Arc::clone(&graph.topology.name),
                cancel: CancellationToken::new(),
                names: Arc::clone(&graph.topology.names),
            }),
            graph,
            state: Arc::new(input),
            frontier: Vec::new(),
            visits: vec![0; nodes],
            approved: Vec::new(),
            failures: Vec::new(),
            interrupts: Vec::new(),
            step: 0,
            transitions: 0,
            last_node: None,
            phase: Phase::New,
            created_at: Timestamp::now(),
            checkpoints: 0,
            next_override: None,
            spare: Vec::new(),
            follow: Vec::new(),
            owner: Arc::from(crate::owner::current()),
            lease: LEASE,
        }
    }

    pub(crate) fn from_checkpoint(
        graph: CompiledGraph<S>,
        record: RunRecord,
        checkpoint: Checkpoint,
    ) -> Result<Self, RunError> {
        let topology = Arc::clone(&graph.topology);
        let run_id = record.run_id.clone();
        let state_type = std::any::type_name::<S>();
        if checkpoint.state_type != state_type {
            return Err(RunError::Unresumable {
                run_id,
                reason: format!(
                    "it was saved with state type `{}`, and this graph runs on `{state_type}`",
                    checkpoint.state_type
                ),
            });
        }
        // A changed topology is refused only where it breaks the saved run: a node the run
        // must still visit (or answer, or hand a failure to) that the graph no longer has.
        let find = |name: &str| {
            topology.find(name).map_err(|_| RunError::Unresumable {
                run_id: run_id.clone(),
                reason: format!(
                    "it was saved by a version of graph `{}` with node `{name}`, which this one no longer has",
                    topology.name
                ),
            })
        };
        if checkpoint.graph_fingerprint != topology.fingerprint {
            tracing::warn!(target: "trellis", run_id = %run_id, saved = %checkpoint.graph_fingerprint, current = %topology.fingerprint, "resuming a run saved by another version of the graph");
        }
        let frontier = checkpoint
            .frontier
            .iter()
            .map(|n| find(n))
            .collect::<Result<Vec<_>, _>>()?;
        let approved = checkpoint
            .approved
            .iter()
            .map(|n| find(n))
            .collect::<Result<Vec<_>, _>>()?;
        let mut visits = vec![0; topology.nodes.len()];
        for (name, count) in &checkpoint.visits {
            visits[find(name)?] = *count;
        }
        let mut failures = Vec::new();
        for failure in checkpoint.failures {
            let handler = topology.nodes[find(&failure.node)?]
                .on_error
                .ok_or_else(|| RunError::Unresumable {
                    run_id: run_id.clone(),
                    reason: format!("node `{}` no longer has an on_error handler", failure.node),
                })?;
            failures.push((handler, Arc::new(failure)));
        }
        for interrupt in &record.interrupts {
            find(&interrupt.node)?;
        }
        let state: S =
            serde_json::from_value(checkpoint.state).map_err(|source| RunError::State {
                run_id: run_id.clone(),
                action: "read from",
                source,
            })?;
        Ok(Run {
            scope: Arc::new(RunScope {
                run_id: run_id.clone(),
                graph: Arc::clone(&topology.name),
                cancel: CancellationToken::new(),
                names: Arc::clone(&topology.names),
            }),
            graph,
            state: Arc::new(state),
            frontier,
            visits,
            approved,
            failures,
            interrupts: record.interrupts,
            step: record.steps,
            transitions: record.transitions,
            last_node: record.last_node.as_deref().and_then(|n| find(n).ok()),
            phase: match record.status {
                RunStatus::Paused => Phase::Paused,
                RunStatus::Running => Phase::Running,
                RunStatus::Completed => Phase::Completed,
                RunStatus::Failed => Phase::Failed,
            },
            created_at: record.created_at,
            checkpoints: checkpoint.id,
            next_override: None,
            spare: Vec::new(),
            follow: Vec::new(),
            owner: Arc::from(crate::owner::current()),
            lease: LEASE,
        })
    }

    /// Uses `token` to cancel this run (replacing its own).
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.scope = Arc::new(RunScope {
            run_id: self.scope.run_id.clone(),
            graph: Arc::clone(&self.scope.graph),
            cancel: token,
            names: Arc::clone(&self.scope.names),
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

    /// Super-steps run so far.
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// The nodes of the next super-step, in declaration order.
    pub fn next_nodes(&self) -> Vec<&str> {
        let nodes = &self.graph.topology.nodes;
        self.frontier.iter().map(|&i| &*nodes[i].name).collect()
    }

    /// While paused: what is asked.
    pub fn interrupts(&self) -> &[Interrupt] {
        &self.interrupts
    }

    /// Replaces the next super-step's nodes with `node` alone (a person steering a run).
    ///
    /// # Errors
    /// [`RunError::UnknownNode`] for a name that is not a node; [`RunError::Paused`] or
    /// [`RunError::Ended`] when the run cannot step.
    pub fn override_next(&mut self, node: &str) -> Result<(), RunError> {
        self.ensure_steppable()?;
        let index = self.graph.topology.find(node)?;
        self.next_override = Some(index);
        Ok(())
    }

    fn ensure_steppable(&self) -> Result<(), RunError> {
        match self.phase {
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
        while let StepOutcome::Stepped { .. } = self.advance().await? {}
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
    pub(crate) async fn finish(mut self) -> Result<Outcome<S>, RunError> {
        self.in_run_span(Self::drive).await?;
        Ok(self.into_outcome())
    }

    /// The outcome of a run that completed or paused, handing over the state without a copy.
    pub(crate) fn into_outcome(mut self) -> Outcome<S> {
        let run_id = self.scope.run_id.clone();
        let (paused, steps, interrupts) = (
            self.phase == Phase::Paused,
            self.step,
            std::mem::take(&mut self.interrupts),
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
        if self.phase == Phase::Paused {
            Outcome::Paused {
                run_id,
                state,
                interrupts: self.interrupts.clone(),
            }
        } else {
            Outcome::Completed {
                run_id,
                state,
                steps: self.step,
            }
        }
    }
}

fn node_span<S: GraphState>(topology: &Topology<S>, i: usize, step: u64) -> tracing::Span {
    tracing::info_span!(target: "trellis", "graph.node", node = %topology.nodes[i].name, step)
}

/// How long a running run's owner holds it without writing a checkpoint (each checkpoint
/// renews it), as seen from another machine; on its own machine a gone owner frees it at once.
pub(crate) const LEASE: std::time::Duration = std::time::Duration::from_secs(30);

/// Sorts a frontier into declaration order and runs each node once (the join).
fn normalize(frontier: &mut Vec<usize>) {
    if frontier.len() > 1 {
        frontier.sort_unstable();
        frontier.dedup();
    }
}

impl<S: GraphState> Run<S> {
    /// Records the run's start (its record and `start` checkpoint) without running a step, so
    /// that its id can be handed out knowing the run exists; [`step`](Self::step) does it on
    /// its first call otherwise. Does nothing once the run has begun.
    ///
    /// # Errors
    /// The checkpointer's error, or an entry router naming an undeclared target; the run is then
    /// recorded as failed.
    pub async fn begin(&mut self) -> Result<(), RunError> {
        if self.phase != Phase::New {
            return Ok(());
        }
        let result = Box::pin(self.begin_run()).await;
        if let Err(error) = &result {
            Box::pin(self.fail(error)).await;
        }
        result
    }

    /// Runs one super-step (the first call also records the run's start).
    ///
    /// # Errors
    /// [`RunError::Paused`] or [`RunError::Ended`] when the run cannot step; otherwise the error
    /// that failed the run, which is then recorded as failed with its last committed state.
    pub async fn step(&mut self) -> Result<StepOutcome, RunError> {
        self.in_run_span(Self::advance).await
    }

    /// One step; a failure is recorded before it is returned.
    async fn advance(&mut self) -> Result<StepOutcome, RunError> {
        self.ensure_steppable()?;
        if self.phase == Phase::New
            && let Err(error) = Box::pin(self.begin_run()).await
        {
            Box::pin(self.fail(&error)).await;
            return Err(error);
        }
        let result = self.super_step().await;
        if let Err(error) = &result {
            Box::pin(self.fail(error)).await;
        }
        result
    }

    async fn begin_run(&mut self) -> Result<(), RunError> {
        self.phase = Phase::Running;
        let topology = Arc::clone(&self.graph.topology);
        self.graph.events.emit(|| Event::RunStarted {
            run_id: self.scope.run_id.clone(),
            graph: topology.name.to_string(),
            at: self.created_at,
        });
        let mut frontier = Vec::new();
        topology
            .entry
            .follow(
                &self.state,
                &Visits::new(&topology.index, &self.visits),
                &mut frontier,
            )
            .map_err(|target| RunError::UndeclaredTarget {
                node: crate::START.to_owned(),
                target,
            })?;
        normalize(&mut frontier);
        self.frontier = frontier;
        self.save(CheckpointLabel::Start, RunStatus::Running, &[], None)
            .await
    }

    async fn super_step(&mut self) -> Result<StepOutcome, RunError> {
        if let Some(node) = self.next_override.take() {
            self.frontier = vec![node];
        }
        if self.frontier.is_empty() {
            return Box::pin(self.complete(&[])).await;
        }
        let topology = Arc::clone(&self.graph.topology);
        let step = self.step + 1;
        if self.scope.cancel.is_cancelled() {
            return Err(RunError::Cancelled { step });
        }
        if self.step >= u64::from(topology.max_steps) {
            return Err(RunError::StepLimit {
                max_steps: topology.max_steps,
            });
        }
        let current = std::mem::take(&mut self.frontier);
        match self.run_frontier(&topology, &current, step).await {
            Ok(outcome) => {
                self.spare = current;
                Ok(outcome)
            }
            Err(error) => {
                // The failed checkpoint shows the step that could not run.
                self.frontier = current;
                Err(error)
            }
        }
    }

    /// Runs the frontier `current` as super-step `step`; on error, nothing is committed.
    async fn run_frontier(
        &mut self,
        topology: &Arc<Topology<S>>,
        current: &[usize],
        step: u64,
    ) -> Result<StepOutcome, RunError> {
        let nodes = &topology.nodes;
        // A deferred node waits while any other branch still has a node to run.
        let eager = current.iter().any(|&i| !nodes[i].options.defer);
        let mut next = std::mem::take(&mut self.spare);
        next.clear();
        let partitioned: Vec<usize>;
        let runnable: &[usize] = if eager && current.iter().any(|&i| nodes[i].options.defer) {
            let held: Vec<usize>;
            (partitioned, held) = current.iter().partition(|&&i| !nodes[i].options.defer);
            next.extend_from_slice(&held);
            &partitioned
        } else {
            current
        };

        let waiting: Vec<Interrupt> = runnable
            .iter()
            .filter(|&&i| {
                nodes[i].options.interrupt == Some(InterruptPoint::Before)
                    && !self.approved.contains(&i)
            })
            .map(|&i| {
                let question = nodes[i].options.question.as_deref();
                Interrupt::fixed(&nodes[i].name, step, InterruptPoint::Before, question)
            })
            .collect();
        if !waiting.is_empty() {
            self.frontier = current.to_vec();
            return Box::pin(self.pause(waiting, &[])).await;
        }
        for &i in runnable {
            if let Some(max_visits) = nodes[i].options.max_visits
                && self.visits[i] >= max_visits
            {
                return Err(RunError::VisitLimit {
                    node: nodes[i].name.to_string(),
                    max_visits,
                });
            }
        }

        let observed = self.graph.events.is_observed();
        for &i in runnable.iter().filter(|_| observed) {
            self.graph.events.emit(|| Event::NodeEntered {
                run_id: self.scope.run_id.clone(),
                graph: topology.name.to_string(),
                step,
                node: nodes[i].name.to_string(),
            });
        }
        let mut absorbed = Absorbed {
            updates: Updates::None,
            next,
            follow: std::mem::take(&mut self.follow),
            interrupts: Vec::new(),
            failures: Vec::new(),
            cancelled: false,
        };
        absorbed.follow.clear();
        if let [i] = *runnable {
            // One node: run inline, no task, no `Vec`.
            let span = node_span(topology, i, step);
            let spec = &nodes[i];
            let activation = activate(
                &*spec.node,
                spec.options.policy(),
                Arc::clone(&self.state),
                self.context(i, step),
                observed,
            );
            // The span wrapper only when spans are recorded, as in `step`.
            let activation = if span.is_disabled() {
                activation.await
            } else {
                activation.instrument(span).await
            };
            self.absorb(topology, i, step, observed, activation, &mut absorbed)?;
        } else {
            // Boxed: spawning is rare next to single-node steps, and its future is large.
            let activations = Box::pin(self.execute(topology, runnable, step, observed)).await;
            for (&i, activation) in runnable.iter().zip(activations) {
                self.absorb(topology, i, step, observed, activation, &mut absorbed)?;
            }
        }
        let Absorbed {
            updates,
            mut next,
            follow,
            interrupts,
            failures,
            cancelled,
        } = absorbed;
        if cancelled {
            return Err(RunError::Cancelled { step });
        }

        let merged = match updates {
            Updates::None => Ok(()),
            Updates::One(node, update) => Arc::make_mut(&mut self.state).apply_one(node, update),
            Updates::Many(all) => Arc::make_mut(&mut self.state).apply(all),
        };
        merged.map_err(|conflict| RunError::MergeConflict { step, conflict })?;
        // Counted before the routers run: they see this step's activations.
        for &i in runnable {
            self.visits[i] += 1;
        }
        let visits = Visits::new(&self.graph.topology.index, &self.visits);
        for &i in &follow {
            let spec = &nodes[i];
            spec.edge
                .follow(&self.state, &visits, &mut next)
                .map_err(|target| RunError::UndeclaredTarget {
                    node: spec.name.to_string(),
                    target,
                })?;
        }

        normalize(&mut next);
        self.follow = follow;
        self.transitions += runnable.len() as u64;
        self.frontier = next;
        // An approved node that was held back (deferred) stays approved until it runs.
        self.approved.retain(|i| !runnable.contains(i));
        // A handler held back (deferred) keeps its failure until it runs.
        self.failures
            .retain(|(handler, _)| !runnable.contains(handler));
        self.failures.extend(failures);
        self.step = step;
        self.last_node = runnable.last().copied();
        if !interrupts.is_empty() {
            let interrupts = interrupts.into_iter().map(|(_, i)| i).collect();
            return Box::pin(self.pause(interrupts, runnable)).await;
        }
        if self.frontier.is_empty() {
            return Box::pin(self.complete(runnable)).await;
        }
        self.save(CheckpointLabel::Step, RunStatus::Running, runnable, None)
            .await?;
        Ok(StepOutcome::Stepped { step })
    }

    /// The context of node `i`'s activation in `step`.
    fn context(&self, i: usize, step: u64) -> NodeContext {
        NodeContext {
            run: Arc::clone(&self.scope),
            node: i,
            step,
            attempt: 0,
            failure: self
                .failures
                .iter()
                .find(|&&(handler, _)| handler == i)
                .map(|(_, failure)| Arc::clone(failure)),
        }
    }

    /// Takes one finished activation into the step's results: its update, where it leads, its
    /// interrupt or its failure. Events for it are emitted here, in declaration order.
    fn absorb<'t>(
        &self,
        topology: &'t Topology<S>,
        i: usize,
        step: u64,
        observed: bool,
        activation: Activation<S::Update>,
        absorbed: &mut Absorbed<'t, S::Update>,
    ) -> Result<(), RunError> {
        let nodes = &topology.nodes;
        let spec = &nodes[i];
        for (attempt, error, retrying) in activation.failed_attempts {
            self.graph.events.emit(|| Event::NodeFailed {
                run_id: self.scope.run_id.clone(),
                graph: topology.name.to_string(),
                step,
                node: spec.name.to_string(),
                attempt,
                error,
                retrying,
            });
        }
        let result = match activation.result {
            Ok(result) => result,
            Err(Stop::Cancelled) => {
                absorbed.cancelled = true;
                return Ok(());
            }
            Err(Stop::Failed(failure)) => {
                let Some(handler) = spec.on_error else {
                    return Err(RunError::Node(*failure));
                };
                absorbed.next.push(handler);
                absorbed.failures.push((handler, Arc::from(failure)));
                return Ok(());
            }
        };
        if observed {
            let elapsed = activation.elapsed.unwrap_or_default();
            self.graph.events.emit(|| Event::NodeCompleted {
                run_id: self.scope.run_id.clone(),
                graph: topology.name.to_string(),
                step,
                node: spec.name.to_string(),
                command: result.label(),
                elapsed_us: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
            });
        }
        let (update, command) = match result {
            NodeResult::None => (None, Command::Continue),
            NodeResult::Update(update) => (Some(update), Command::Continue),
            NodeResult::Command(command) => (None, command),
            NodeResult::UpdateThen(update, command) => (Some(update), command),
            NodeResult::Interrupt(request) => (None, Command::Interrupt(request)),
        };
        if let Some(update) = update {
            absorbed.updates.push(&spec.name, update);
        }
        let undeclared = |target: &str| RunError::UndeclaredTarget {
            node: spec.name.to_string(),
            target: target.to_owned(),
        };
        let declared = |target: &str| {
            spec.edge
                .declared(target, nodes)
                .ok_or_else(|| undeclared(target))
        };
        let mut interrupted = false;
        match command {
            Command::Continue => absorbed.follow.push(i),
            Command::Goto(target) => {
                if let Target::Node(j) = declared(&target)? {
                    absorbed.next.push(j);
                }
            }
            Command::Fork(targets) => {
                for target in targets {
                    match declared(&target)? {
                        Target::Node(j) => absorbed.next.push(j),
                        Target::End => return Err(undeclared(&target)),
                    }
                }
            }
            Command::End => {
                declared(crate::END)?;
            }
            Command::Interrupt(request) => {
                if let Some(to) = request.resume_to.as_deref()
                    && to != &*spec.name
                {
                    declared(to)?;
                }
                interrupted = true;
                let interrupt = Interrupt::new(&spec.name, step, InterruptPoint::Node, request);
                absorbed.interrupts.push((i, interrupt));
            }
        }
        // A node that asked its own question needs no second pause after it.
        if spec.options.interrupt == Some(InterruptPoint::After) && !interrupted {
            let question = spec.options.question.as_deref();
            let interrupt = Interrupt::fixed(&spec.name, step, InterruptPoint::After, question);
            absorbed.interrupts.push((i, interrupt));
        }
        Ok(())
    }

    /// Runs several nodes as spawned tasks, awaited in declaration order.
    async fn execute(
        &self,
        topology: &Arc<Topology<S>>,
        runnable: &[usize],
        step: u64,
        observed: bool,
    ) -> Vec<Activation<S::Update>> {
        let mut branches = AbortOnDrop(
            runnable
                .iter()
                .map(|&i| {
                    let spec = &topology.nodes[i];
                    let node = Arc::clone(&spec.node);
                    let (policy, state) = (spec.options.policy(), Arc::clone(&self.state));
                    let context = self.context(i, step);
                    let activation =
                        async move { activate(&*node, policy, state, context, observed).await };
                    tokio::spawn(activation.instrument(node_span(topology, i, step)))
                })
                .collect(),
        );
        let mut activations = Vec::with_capacity(runnable.len());
        for (handle, &i) in branches.0.iter_mut().zip(runnable) {
            let result = match handle.await {
                Ok(activation) => {
                    activations.push(activation);
                    continue;
                }
                Err(error) if error.is_cancelled() => Err(Stop::Cancelled),
                // `activate` catches the node's panics; this is a panic in the runtime itself.
                Err(error) => Err(Stop::Failed(Box::new(NodeFailure {
                    node: topology.nodes[i].name.to_string(),
                    step,
                    attempts: 1,
                    kind: crate::node::FailureKind::Panicked,
                    message: error.to_string(),
                }))),
            };
            activations.push(Activation {
                result,
                failed_attempts: Vec::new(),
                elapsed: None,
            });
        }
        activations
    }

    async fn pause(
        &mut self,
        interrupts: Vec<Interrupt>,
        ran: &[usize],
    ) -> Result<StepOutcome, RunError> {
        self.phase = Phase::Paused;
        self.interrupts = interrupts;
        let kind = self.interrupts[0].request.kind.clone();
        self.save(CheckpointLabel::Pause(kind), RunStatus::Paused, ran, None)
            .await?;
        self.graph.events.emit(|| Event::RunPaused {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.step,
            interrupts: self.interrupts.clone(),
        });
        Ok(StepOutcome::Paused(self.interrupts.clone()))
    }

    async fn complete(&mut self, ran: &[usize]) -> Result<StepOutcome, RunError> {
        self.phase = Phase::Completed;
        self.save(CheckpointLabel::Complete, RunStatus::Completed, ran, None)
            .await?;
        self.graph.events.emit(|| Event::RunCompleted {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.step,
        });
        Ok(StepOutcome::Completed)
    }

    /// Records the failure; a checkpointer that fails here too is only logged, so the caller
    /// still gets the error that failed the run.
    async fn fail(&mut self, error: &RunError) {
        self.phase = Phase::Failed;
        let text = error.to_string();
        if let Err(save_error) = self
            .save(
                CheckpointLabel::Failed,
                RunStatus::Failed,
                &[],
                Some(text.clone()),
            )
            .await
        {
            tracing::error!(target: "trellis", run_id = %self.scope.run_id, error = %save_error, "cannot record the failed run");
        }
        self.graph.events.emit(|| Event::RunFailed {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.step,
            error: text,
        });
    }

    fn record(
        &self,
        status: RunStatus,
        state: serde_json::Value,
        now: Timestamp,
        error: Option<String>,
    ) -> RunRecord {
        let nodes = &self.graph.topology.nodes;
        RunRecord {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            status,
            created_at: self.created_at,
            updated_at: now,
            last_node: self.last_node.map(|i| nodes[i].name.to_string()),
            steps: self.step,
            state,
            interrupts: if status == RunStatus::Paused {
                self.interrupts.clone()
            } else {
                Vec::new()
            },
            error,
            transitions: self.transitions,
            // Every write names its writer, so that the store can refuse a writer that lost
            // its claim (see `Checkpointer::save_step`).
            owner: Some(self.owner.to_string()),
            lease_until: (status == RunStatus::Running).then(|| now.plus(self.lease)),
        }
    }

    /// Executes the run as `owner` (a worker's identity), each write holding it for `lease`.
    pub(crate) fn owned_by(mut self, owner: Arc<str>, lease: std::time::Duration) -> Self {
        self.owner = owner;
        self.lease = lease;
        self
    }

    /// Gives the (running) run up: it stays `running` with no owner, ready for whichever
    /// worker claims it next ([`Checkpointer::claim_next`](crate::Checkpointer::claim_next)). `false` when this process no
    /// longer held it.
    pub(crate) async fn release(&mut self) -> Result<bool, RunError> {
        let Some(store) = self.graph.checkpointer.clone() else {
            return Ok(false);
        };
        let mut released = self.record(
            RunStatus::Running,
            self.state_json()?,
            Timestamp::now(),
            None,
        );
        released.owner = None;
        released.lease_until = None;
        Ok(store.take_over(&released, Some(&self.owner)).await?)
    }

    /// Claims this (running) run from `previous_owner` in the checkpointer; `false` when someone
    /// else claimed it first.
    pub(crate) async fn take_over(
        &mut self,
        previous_owner: Option<&str>,
    ) -> Result<bool, RunError> {
        let Some(store) = self.graph.checkpointer.clone() else {
            return Ok(true);
        };
        let claim = self.record(
            RunStatus::Running,
            self.state_json()?,
            Timestamp::now(),
            None,
        );
        Ok(store.take_over(&claim, previous_owner).await?)
    }

    fn state_json(&self) -> Result<serde_json::Value, RunError> {
        serde_json::to_value(&*self.state).map_err(|source| RunError::State {
            run_id: self.scope.run_id.clone(),
            action: "written as",
            source,
        })
    }

    /// Writes a checkpoint and the run record together, when the graph has a checkpointer.
    ///
    /// The write is boxed: its future is large, and inline it would grow (and be copied with)
    /// every step's future, checkpointer or not.
    async fn save(
        &mut self,
        label: CheckpointLabel,
        status: RunStatus,
        ran: &[usize],
        error: Option<String>,
    ) -> Result<(), RunError> {
        if self.graph.checkpointer.is_none() {
            return Ok(());
        }
        Box::pin(self.save_now(label, status, ran, error)).await
    }

    async fn save_now(
        &mut self,
        label: CheckpointLabel,
        status: RunStatus,
        ran: &[usize],
        error: Option<String>,
    ) -> Result<(), RunError> {
        let Some(store) = self.graph.checkpointer.clone() else {
            return Ok(());
        };
        let state = self.state_json()?;
        let nodes = &self.graph.topology.nodes;
        let names = |list: &[usize]| -> Vec<String> {
            list.iter().map(|&i| nodes[i].name.to_string()).collect()
        };
        let now = Timestamp::now();
        let checkpoint = Checkpoint {
            id: self.checkpoints + 1,
            run_id: self.scope.run_id.clone(),
            step: self.step,
            nodes: names(ran),
            label,
            state: state.clone(),
            frontier: names(&self.frontier),
            visits: self
                .visits
                .iter()
                .enumerate()
                .filter(|&(_, &count)| count > 0)
                .map(|(i, &count)| (nodes[i].name.to_string(), count))
                .collect::<BTreeMap<_, _>>(),
            approved: names(&self.approved),
            failures: self.failures.iter().map(|(_, f)| (**f).clone()).collect(),
            graph_fingerprint: self.graph.topology.fingerprint.clone(),
            state_type: std::any::type_name::<S>().to_owned(),
            created_at: now,
        };
        let record = self.record(status, state, now, error);
        store.save_step(&record, &checkpoint).await?;
        self.checkpoints += 1;
        self.graph.events.emit(|| Event::CheckpointSaved {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.step,
            label: checkpoint.label.to_string(),
        });
        Ok(())
    }
}

impl<S: ApplyResume> Run<S> {
    /// Answers a paused run's interrupts, one answer per pending id, folds the answers into
    /// the state and makes the run steppable again.
    ///
    /// With a checkpointer, the run is first claimed (paused → running), so of two resumes of
    /// one run only one proceeds; the state with the answers is checkpointed (`resume`).
    ///
    /// # Errors
    /// [`RunError::AlreadyCompleted`], [`RunError::AlreadyFailed`] or
    /// [`RunError::StillRunning`] for a run that is not paused; [`RunError::Answers`] when the
    /// ids answered are not exactly the pending ones; a merge conflict between answers.
    pub async fn resume_each<I>(&mut self, answers: I) -> Result<(), RunError>
    where
        I: IntoIterator<Item = (String, S::Input)>,
    {
        let run_id = self.scope.run_id.clone();
        match self.phase {
            Phase::Paused => {}
            Phase::Completed => return Err(RunError::AlreadyCompleted { run_id }),
            Phase::Failed => return Err(RunError::AlreadyFailed { run_id }),
            Phase::New | Phase::Running => return Err(RunError::StillRunning { run_id }),
        }
        let mut answers: Vec<(String, S::Input)> = answers.into_iter().collect();
        let mut pending: Vec<String> = self.interrupts.iter().map(|i| i.id.clone()).collect();
        let mut given: Vec<String> = answers.iter().map(|(id, _)| id.clone()).collect();
        pending.sort();
        given.sort();
        if pending != given {
            return Err(RunError::Answers {
                run_id,
                pending,
                given,
            });
        }
        if let Some(store) = self.graph.checkpointer.clone() {
            let mut claim = self.record(
                RunStatus::Running,
                self.state_json()?,
                Timestamp::now(),
                None,
            );
            claim.interrupts.clear();
            if !store.claim_run(&claim, RunStatus::Paused).await? {
                return Err(RunError::StillRunning { run_id });
            }
        }
        self.phase = Phase::Running;
        let interrupts = std::mem::take(&mut self.interrupts);
        self.graph.events.emit(|| Event::ResumeStarted {
            run_id: run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.step,
            interrupts: interrupts.iter().map(|i| i.id.clone()).collect(),
        });
        let result = self.fold_answers(&interrupts, &mut answers).await;
        if let Err(error) = &result {
            Box::pin(self.fail(error)).await;
        }
        result
    }

    async fn fold_answers(
        &mut self,
        interrupts: &[Interrupt],
        answers: &mut Vec<(String, S::Input)>,
    ) -> Result<(), RunError> {
        let topology = Arc::clone(&self.graph.topology);
        let nodes = &topology.nodes;
        let index = |name: &str| topology.find(name);
        let mut updates = Vec::with_capacity(interrupts.len());
        for interrupt in interrupts {
            let i = index(&interrupt.node)?;
            if let Some(at) = answers.iter().position(|(id, _)| *id == interrupt.id) {
                let (_, input) = answers.swap_remove(at);
                updates.push((&*nodes[i].name, self.state.apply_resume(interrupt, input)));
            }
        }
        Arc::make_mut(&mut self.state)
            .apply(updates)
            .map_err(|conflict| RunError::MergeConflict {
                step: self.step,
                conflict,
            })?;
        let mut next = std::mem::take(&mut self.frontier);
        for interrupt in interrupts {
            let i = index(&interrupt.node)?;
            let spec = &nodes[i];
            let undeclared = |target: &str| RunError::UndeclaredTarget {
                node: spec.name.to_string(),
                target: target.to_owned(),
            };
            match interrupt.point {
                InterruptPoint::Before => self.approved.push(i),
                InterruptPoint::After => {}
                InterruptPoint::Node => match interrupt.request.resume_to.as_deref() {
                    Some(to) if to == &*spec.name => next.push(i),
                    Some(to) => {
                        let target = spec
                            .edge
                            .declared(to, nodes)
                            .ok_or_else(|| undeclared(to))?;
                        if let Target::Node(j) = target {
                            next.push(j);
                        }
                    }
                    None => {
                        let visits = Visits::new(&self.graph.topology.index, &self.visits);
                        spec.edge
                            .follow(&self.state, &visits, &mut next)
                            .map_err(|target| undeclared(&target))?;
                    }
                },
            }
        }
        normalize(&mut next);
        self.frontier = next;
        self.save(CheckpointLabel::Resume, RunStatus::Running, &[], None)
            .await?;
        self.graph.events.emit(|| Event::ResumeCompleted {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.step,
        });
        Ok(())
    }
}
