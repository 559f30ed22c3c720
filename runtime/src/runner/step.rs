//! The super-step: run the frontier, merge the updates in declaration order, follow the edges.

use std::sync::Arc;

use tracing::Instrument;

use super::concurrent::run_all;
use super::{Advanced, Phase, Run, StepOutcome};
use crate::activation::{Activation, Report, Stop, activate, attempt_in_place, once, start};
use crate::checkpoint::{CheckpointLabel, RunStatus};
use crate::errors::RunError;
use crate::event::Event;
use crate::graph::{Edge, Target, Topology, Visits};
use crate::interrupt::{Interrupt, InterruptPoint};
use crate::name::Name;
use crate::node::{Command, NodeContext, NodeFailure, NodeResult};
use crate::state::GraphState;
use serde::Deserialize;

/// What a step did, on the path every step takes: the error boxed, so that the result is two
/// words, not nine — each layer of the step (the node's step, the super-step, the loop of them)
/// moves it on to the next, through memory, on every step.
type Stepped = Result<Advanced, Box<RunError>>;

/// A step's updates in declaration order, without a `Vec` for the common single update.
enum Updates<'a, U> {
    None,
    One(&'a str, U),
    Many(Vec<(&'a str, U)>),
}

impl<'a, U: Clone> Updates<'a, U> {
    fn to_vec(&self) -> Vec<(&'a str, U)> {
        match self {
            Updates::None => Vec::new(),
            Updates::One(node, update) => vec![(node, update.clone())],
            Updates::Many(all) => all.clone(),
        }
    }
}

impl<'a, U> Updates<'a, U> {
    /// Each node with its update, borrowed, in order.
    fn pairs(&self) -> Vec<(&'a str, &U)> {
        match self {
            Updates::None => Vec::new(),
            Updates::One(node, update) => vec![(*node, update)],
            Updates::Many(all) => all.iter().map(|(node, update)| (*node, update)).collect(),
        }
    }
}

impl<'a, U> Updates<'a, U> {
    // Inline: it is on every activation's path, and the first update only sets `One`.
    #[inline]
    fn push(&mut self, node: &'a str, update: U) {
        match self {
            Updates::None => *self = Updates::One(node, update),
            Updates::Many(all) => all.push((node, update)),
            Updates::One(..) => self.push_second(node, update),
        }
    }

    #[cold]
    #[inline(never)]
    fn push_second(&mut self, node: &'a str, update: U) {
        if let Updates::One(first, earlier) = std::mem::replace(self, Updates::None) {
            *self = Updates::Many(vec![(first, earlier), (node, update)]);
        }
    }
}

/// What a step's activations produced, gathered in declaration order before the merge.
struct Absorbed<'t, U> {
    updates: Updates<'t, U>,
    /// The next frontier: commands' targets, error handlers, held deferred nodes.
    next: Vec<usize>,
    /// Nodes whose edges decide where they lead, once the updates are merged.
    follow: Vec<usize>,
    /// What few steps produce, apart: a step with none of it builds, checks and drops one
    /// `None` rather than four empty lists (each drop a call).
    rare: Option<Box<Rare>>,
}

impl<U> Absorbed<'_, U> {
    fn rare(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }
}

#[derive(Default)]
struct Rare {
    interrupts: Vec<(usize, Interrupt)>,
    failures: Vec<(usize, Arc<NodeFailure>)>,
    /// Branches sent by commands: (sending node, node to run, input).
    sends: Vec<(usize, usize, Arc<serde_json::Value>)>,
    /// A subgraph node on the run's own state type that completed: (node, the child's final
    /// state, which becomes the run's before the step's updates are merged, and a second such
    /// node of the step, a conflict).
    replaced: Option<Replaced>,
    /// A subgraph node on the run's own state paused: the step's updates are held for when its
    /// child completes (`Run::pending`).
    holds: bool,
    cancelled: bool,
}

/// How a step ends when it does more than end ([`Run::ending`]).
enum Ending {
    /// A pause on these questions.
    Pause(Vec<Interrupt>),
    /// The run's completion.
    Complete,
    /// The step's checkpoint.
    Save,
}

/// A subgraph's final state replacing the run's: its node, the state, and a second node that
/// tried to replace it in the same step.
type Replaced = (usize, Arc<dyn std::any::Any + Send + Sync>, Option<usize>);

/// The activations of a step that runs sent branches: node, and input for a branch.
type Activations = Vec<(usize, Option<Arc<serde_json::Value>>)>;

/// A sent branch of a step: its place among the node's branches, and its input.
type Branch<'a> = Option<(usize, &'a Arc<serde_json::Value>)>;

/// A sent branch's interrupt is told apart from its siblings' ([`Interrupt::of_branch`]).
fn of_branch(interrupt: Interrupt, branch: Branch<'_>) -> Interrupt {
    match branch {
        Some((branch, _)) => interrupt.of_branch(branch),
        None => interrupt,
    }
}

fn node_span<S: GraphState>(topology: &Topology<S>, i: usize, step: u64) -> tracing::Span {
    tracing::info_span!(target: "trellis", "graph.node", node = %topology.nodes[i].name, step)
}

/// Node `i`'s activation inside the node's span, only when spans are recorded (the wrapper
/// grows every branch's future otherwise), as a single node's runs.
fn in_span<S, F>(
    topology: &Topology<S>,
    i: usize,
    step: u64,
    activation: F,
) -> futures_util::future::Either<F, tracing::instrument::Instrumented<F>>
where
    S: GraphState,
    F: std::future::Future,
{
    let span = node_span(topology, i, step);
    if span.is_disabled() {
        futures_util::future::Either::Left(activation)
    } else {
        futures_util::future::Either::Right(activation.instrument(span))
    }
}

/// Sorts a frontier into declaration order and runs each node once (the join).
#[inline]
pub(super) fn normalize(frontier: &mut Vec<usize>) {
    if frontier.len() > 1 {
        frontier.sort_unstable();
        frontier.dedup();
    }
}

/// A deferred node waits while any other branch still has a node to run: when a step from
/// `current` (with sent branches or not) holds some back, the nodes that run and those held.
/// `None` for most steps, which hold nothing back (and allocate nothing to say so).
#[inline]
fn split_deferred<S: GraphState>(
    topology: &Topology<S>,
    current: &[usize],
    any_sent: bool,
) -> Option<(Vec<usize>, Vec<usize>)> {
    let nodes = &topology.nodes;
    let eager = any_sent || current.iter().any(|&i| !nodes[i].options.defer);
    (eager && current.iter().any(|&i| nodes[i].options.defer))
        .then(|| current.iter().partition(|&&i| !nodes[i].options.defer))
}

/// The nodes that run in a step, once each: `runnable`'s and those of the `sent` branches
/// (gathered in `buffer` only when there are sent branches).
#[inline]
fn with_sent<'a, T>(
    runnable: &'a [usize],
    sent: &[(usize, T)],
    buffer: &'a mut Vec<usize>,
) -> &'a [usize] {
    if sent.is_empty() {
        return runnable;
    }
    buffer.extend_from_slice(runnable);
    buffer.extend(sent.iter().map(|(i, _)| *i));
    normalize(buffer);
    buffer
}

impl<S: GraphState> Run<S> {
    /// The questions of the nodes in `ran` that pause before they run in step `step` (those
    /// not approved yet): empty for the common steps, which ask nothing.
    fn asked_before(&self, topology: &Topology<S>, ran: &[usize], step: u64) -> Vec<Interrupt> {
        let nodes = &topology.nodes;
        let waits = |&i: &usize| {
            nodes[i].options.interrupt == Some(InterruptPoint::Before)
                && !self.held.approved.contains(&i)
        };
        if !ran.iter().any(waits) {
            return Vec::new();
        }
        ran.iter()
            .filter(|i| waits(i))
            .map(|&i| {
                let question = nodes[i].options.question.as_deref();
                Interrupt::fixed(&nodes[i].name, step, InterruptPoint::Before, question)
            })
            .collect()
    }

    /// At the end of a step, the questions the next one would pause on before running
    /// anything ([`Run::asked_before`] on what it would run), unless it would stop first: on
    /// an overridden next node, a cancellation or the step limit.
    fn asked_next(&self, topology: &Topology<S>) -> Vec<Interrupt> {
        let nodes = &topology.nodes;
        let before = |i: usize| nodes[i].options.interrupt == Some(InterruptPoint::Before);
        // Most steps lead to no node that asks first: nothing below is built for them.
        if !self.work.frontier.iter().any(|&i| before(i))
            && !self.work.sends.iter().any(|&(i, _)| before(i))
        {
            return Vec::new();
        }
        if self.work.next_override.is_some()
            || self.scope.cancel.is_cancelled()
            || self.progress.step >= u64::from(topology.max_steps)
        {
            return Vec::new();
        }
        let deferred = split_deferred(topology, &self.work.frontier, !self.work.sends.is_empty());
        let runnable = deferred
            .as_ref()
            .map_or(&self.work.frontier[..], |(runnable, _)| runnable);
        let mut buffer = Vec::new();
        let ran = with_sent(runnable, &self.work.sends, &mut buffer);
        self.asked_before(topology, ran, self.progress.step + 1)
    }

    /// Follows node `i`'s edge into `next`. A join edge counts `i` as done for its join, and
    /// adds the join's node once all its sources are (the join then starts over).
    pub(super) fn follow_edge(
        &mut self,
        topology: &Topology<S>,
        i: usize,
        next: &mut Vec<usize>,
    ) -> Result<(), RunError> {
        let spec = &topology.nodes[i];
        match spec.edge {
            // The most common edge, first: nothing to look up.
            Edge::Static(Target::Node(j)) => {
                next.push(j);
                return Ok(());
            }
            Edge::Static(Target::End) => return Ok(()),
            Edge::Each { .. } => return self.fan_out(&spec.edge, &spec.name),
            _ => {}
        }
        if let Edge::Join(barrier) = spec.edge {
            let join = &topology.joins[barrier];
            let arrived = &mut self.work.arrived[barrier];
            if !arrived.contains(&i) {
                arrived.push(i);
            }
            if arrived.len() == join.sources.len() {
                arrived.clear();
                next.push(join.target);
            }
            return Ok(());
        }
        let visits = Visits::new(&topology.index, &self.progress.visits);
        spec.edge
            .follow(&self.state, &visits, next)
            .map_err(|target| RunError::UndeclaredTarget {
                node: spec.name.to_string(),
                target,
            })
    }

    /// Takes the branches a send edge's function returns into the next step (after those
    /// already sent in this one); `from` names the edge's source for errors.
    pub(super) fn fan_out(&mut self, edge: &Edge<S>, from: &str) -> Result<(), RunError> {
        let Edge::Each { targets, fan } = edge else {
            return Ok(());
        };
        let source = || {
            if from == crate::START {
                "START".to_owned()
            } else {
                format!("`{from}`")
            }
        };
        let fan = fan
            .as_ref()
            .ok_or_else(|| RunError::NoSendFunction { from: source() })?;
        let visits = Visits::new(&self.graph.topology.index, &self.progress.visits);
        let sends = fan(&self.state, &visits).map_err(|error| RunError::SendInput {
            from: source(),
            source: error,
        })?;
        for send in sends {
            let node = targets
                .iter()
                .find(|(name, _)| **name == *send.node)
                .map(|&(_, node)| node)
                .ok_or_else(|| RunError::UndeclaredTarget {
                    node: from.to_owned(),
                    target: send.node.to_string(),
                })?;
            self.work.sends.push((node, Arc::new(send.input)));
        }
        Ok(())
    }

    /// Records the run's start (its record and `start` checkpoint) without running a step, so
    /// that its id can be handed out knowing the run exists; [`step`](Self::step) does it on
    /// its first call otherwise. Does nothing once the run has begun.
    ///
    /// # Errors
    /// The checkpointer's error, or an entry router naming an undeclared target; the run is then
    /// recorded as failed.
    pub async fn begin(&mut self) -> Result<(), RunError> {
        if self.progress.phase != Phase::New {
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
        Ok(match self.step_quietly().await? {
            Advanced::Stepped(step) => StepOutcome::Stepped { step },
            Advanced::Paused => StepOutcome::Paused(self.held.interrupts.clone()),
            Advanced::Completed => StepOutcome::Completed,
        })
    }

    /// [`step`](Self::step) for the crate's drivers, which read the questions of a pause from
    /// the run when they want them rather than from a copy.
    pub(crate) async fn step_quietly(&mut self) -> Result<Advanced, RunError> {
        self.in_run_span(|run| async move {
            let topology = Arc::clone(&run.graph.topology);
            run.advance(&topology, false).await
        })
        .await
    }

    /// One step on the run's `topology` (handed in: a loop of steps takes it once, not an
    /// `Arc` clone and drop per step), or with `to_the_end` every step until the run
    /// completes or pauses; a failure is recorded before it is returned.
    pub(super) async fn advance(
        &mut self,
        topology: &Arc<Topology<S>>,
        to_the_end: bool,
    ) -> Result<Advanced, RunError> {
        self.ensure_steppable()?;
        if self.progress.phase == Phase::New
            && let Err(error) = Box::pin(self.begin_run()).await
        {
            Box::pin(self.fail(&error)).await;
            return Err(error);
        }
        let result = self
            .super_steps(topology, to_the_end)
            .await
            .map_err(|error| *error);
        if let Err(error) = &result {
            Box::pin(self.fail(error)).await;
        }
        result
    }

    async fn begin_run(&mut self) -> Result<(), RunError> {
        self.progress.phase = Phase::Running;
        let topology = Arc::clone(&self.graph.topology);
        self.emit(|| Event::RunStarted {
            run_id: self.scope.run_id.clone(),
            graph: topology.name.to_string(),
            at: self.ledger.created_at,
        });
        let mut frontier = Vec::new();
        topology
            .entry
            .follow(
                &self.state,
                &Visits::new(&topology.index, &self.progress.visits),
                &mut frontier,
            )
            .map_err(|target| RunError::UndeclaredTarget {
                node: crate::START.to_owned(),
                target,
            })?;
        normalize(&mut frontier);
        self.work.frontier = frontier;
        self.fan_out(&topology.entry, crate::START)?;
        self.send_values();
        self.save(CheckpointLabel::Start, RunStatus::Running, &[], None)
            .await
    }

    /// Runs one super-step, or with `to_the_end` one after another until the run completes or
    /// pauses: looping here rather than in the caller spares each step the futures of the
    /// layers above (`advance`, its caller's loop), which cost the lean path a tenth.
    async fn super_steps(&mut self, topology: &Arc<Topology<S>>, to_the_end: bool) -> Stepped {
        loop {
            let outcome = self.super_step(topology).await?;
            if !to_the_end || !matches!(outcome, Advanced::Stepped(_)) {
                return Ok(outcome);
            }
        }
    }

    async fn super_step(&mut self, topology: &Arc<Topology<S>>) -> Stepped {
        if let Some(node) = self.work.next_override.take() {
            self.work.frontier = vec![node];
        }
        if self.work.frontier.is_empty() && self.work.sends.is_empty() {
            return Ok(Box::pin(self.complete(&[])).await?);
        }
        let step = self.progress.step + 1;
        if self.scope.cancel.is_cancelled() {
            return Err(Box::new(RunError::Cancelled { step }));
        }
        if self.progress.step >= u64::from(topology.max_steps) {
            return Err(Box::new(RunError::StepLimit {
                max_steps: topology.max_steps,
            }));
        }
        // The lean path takes the frontier only once it has its next one: a step that fails
        // before leaves it as it was.
        if let [i] = self.work.frontier[..]
            && self.work.sends.is_empty()
            && self.runs_alone(topology, i)
        {
            return self.step_alone(topology, i, step).await;
        }
        let current = std::mem::take(&mut self.work.frontier);
        let sent = std::mem::take(&mut self.work.sends);
        let result = self.run_frontier(topology, &current, &sent, step).await;
        Ok(self.after_step(result, current, sent)?)
    }

    /// After a step that started from the frontier `current` and the branches `sent`: its
    /// buffer kept for a later frontier, or, when the step failed, both put back, so that the
    /// failed checkpoint shows the step that could not run.
    fn after_step<E>(
        &mut self,
        result: Result<Advanced, E>,
        current: Vec<usize>,
        sent: Vec<(usize, Arc<serde_json::Value>)>,
    ) -> Result<Advanced, E> {
        match result {
            Ok(outcome) => {
                self.buffers.spare = current;
                Ok(outcome)
            }
            Err(error) => {
                self.work.frontier = current;
                self.work.sends = sent;
                Err(error)
            }
        }
    }

    /// Whether node `i`, alone in its step, can take [`step_alone`](Self::step_alone): a plain
    /// node (one attempt, no timeout) that asks nothing after it, in a run that nobody observes
    /// or streams (nor a parent streams the updates of), with nothing pending for the node (an
    /// approval, a failure to handle, a child to continue) and no node of the graph that asks
    /// before it runs.
    #[inline]
    fn runs_alone(&self, topology: &Topology<S>, i: usize) -> bool {
        topology.alone[i]
            && self.stream.is_none()
            && self.scope.to_parent.is_none()
            && self.held.approved.is_empty()
            && self.held.failures.is_empty()
            && self.held.children.is_empty()
            && !self.observed()
    }

    /// A step of node `i` alone ([`runs_alone`](Self::runs_alone)), the most travelled path:
    /// what [`run_frontier`](Self::run_frontier) does for it, without gathering several
    /// nodes' results first (about half an activation's cost there). A result other than an
    /// update or nothing (a command, an interrupt, a failure, a subgraph's outcome, a
    /// cancellation) is absorbed and settled as `run_frontier` does it.
    async fn step_alone(&mut self, topology: &Arc<Topology<S>>, i: usize, step: u64) -> Stepped {
        let spec = &topology.nodes[i];
        if spec.options.max_visits.is_some() {
            self.within_visits(topology, i, 1)?;
        }
        let mut ctx = self.context(i, step, None);
        let state = Arc::clone(&self.state);
        // No span at all when nothing records at its level (made and dropped, even a disabled
        // one costs a tenth of this path), and the wrapper only when it records.
        let result = if !tracing::level_enabled!(tracing::Level::INFO) {
            attempt_in_place(&*spec.node, state, &mut ctx, &self.scope.cancel).await
        } else {
            match start(&*spec.node, state, &mut ctx, None, &self.scope.cancel) {
                Ok(attempt) => {
                    let span = node_span(topology, i, step);
                    if span.is_disabled() {
                        attempt.await
                    } else {
                        attempt.instrument(span).await
                    }
                }
                Err(stop) => Err(stop),
            }
        };
        let update = match result {
            Ok(NodeResult::None) if ctx.nested.is_none() => None,
            Ok(NodeResult::Update(update)) if ctx.nested.is_none() => Some(update),
            other => {
                let Activation { result, report } = once(other, &mut ctx);
                drop(ctx);
                let current = std::mem::take(&mut self.work.frontier);
                let settled = Box::pin(self.settle_one(topology, i, step, result, report)).await;
                return Ok(self.after_step(settled, current, Vec::new())?);
            }
        };
        drop(ctx);
        if let Some(update) = update {
            Arc::make_mut(&mut self.state)
                .apply_one(&spec.name, update)
                .map_err(|conflict| RunError::MergeConflict { step, conflict })?;
        }
        // Counted before the router runs: it sees this step's activation.
        self.progress.visits[i] += 1;
        let mut next = std::mem::take(&mut self.buffers.spare);
        next.clear();
        if let Err(error) = self.follow_edge(topology, i, &mut next) {
            // As `after_step` leaves a failed step: its frontier (untouched), nothing sent.
            self.work.sends.clear();
            return Err(Box::new(error));
        }
        normalize(&mut next);
        self.progress.transitions += 1;
        let current = std::mem::replace(&mut self.work.frontier, next);
        match self.ending(topology, &[i], step, Vec::new()) {
            None => {
                self.buffers.spare = current;
                Ok(Advanced::Stepped(step))
            }
            Some(ending) => {
                let ended = Box::pin(self.end(ending, &[i], step)).await;
                Ok(self.after_step(ended, current, Vec::new())?)
            }
        }
    }

    /// [`step_alone`](Self::step_alone)'s node `i` returned something other than an update:
    /// its activation absorbed and settled as [`run_frontier`](Self::run_frontier) does.
    #[cold]
    async fn settle_one(
        &mut self,
        topology: &Arc<Topology<S>>,
        i: usize,
        step: u64,
        result: Result<NodeResult<S::Update>, Stop>,
        report: Report,
    ) -> Result<Advanced, RunError> {
        let mut absorbed = self.absorbing();
        self.absorb(
            topology,
            i,
            step,
            false,
            result,
            report,
            None,
            &mut absorbed,
        )?;
        self.settle(topology, &[i], &[], &[i], step, absorbed).await
    }

    /// Empty results for a step to absorb into, in the run's reused buffers.
    fn absorbing<'t>(&mut self) -> Absorbed<'t, S::Update> {
        let mut next = std::mem::take(&mut self.buffers.spare);
        let mut follow = std::mem::take(&mut self.buffers.follow);
        next.clear();
        follow.clear();
        Absorbed {
            updates: Updates::None,
            next,
            follow,
            rare: None,
        }
    }

    /// Takes a finished activation of node `i` (not a sent branch) into the step's results.
    // Always: taken apart here, the activation is not copied into a call.
    #[inline(always)]
    fn absorb_activation<'t>(
        &self,
        topology: &'t Topology<S>,
        i: usize,
        step: u64,
        observed: bool,
        activation: Activation<S::Update>,
        absorbed: &mut Absorbed<'t, S::Update>,
    ) -> Result<(), RunError> {
        let Activation { result, report } = activation;
        self.absorb(topology, i, step, observed, result, report, None, absorbed)
    }

    /// Whether node `i` may run `now` more times in this step, within its `max_visits`.
    fn within_visits(&self, topology: &Topology<S>, i: usize, now: usize) -> Result<(), RunError> {
        let spec = &topology.nodes[i];
        match spec.options.max_visits {
            Some(max_visits)
                if u64::from(self.progress.visits[i]) + now as u64 > u64::from(max_visits) =>
            {
                Err(RunError::VisitLimit {
                    node: spec.name.to_string(),
                    max_visits,
                })
            }
            _ => Ok(()),
        }
    }

    /// Runs the frontier `current` and the branches `sent` as super-step `step`; on error,
    /// nothing is committed.
    async fn run_frontier(
        &mut self,
        topology: &Arc<Topology<S>>,
        current: &[usize],
        sent: &[(usize, Arc<serde_json::Value>)],
        step: u64,
    ) -> Result<Advanced, RunError> {
        let nodes = &topology.nodes;
        let mut absorbed = self.absorbing();
        let deferred = split_deferred(topology, current, !sent.is_empty());
        let runnable: &[usize] = match &deferred {
            Some((runnable, held)) => {
                absorbed.next.extend_from_slice(held);
                runnable
            }
            None => current,
        };
        let mut ran_nodes = Vec::new();
        let ran = with_sent(runnable, sent, &mut ran_nodes);
        // Asked here only when the step before could not ask it (a run that starts or
        // resumes before such a node; a checkpoint written before the pause moved there).
        // Most graphs have no such node: one flag says so, before any call.
        if topology.asks_before {
            let waiting = self.asked_before(topology, ran, step);
            if !waiting.is_empty() {
                self.work.frontier = current.to_vec();
                self.work.sends = sent.to_vec();
                return Box::pin(self.pause(waiting, &[])).await;
            }
        }
        for &i in ran {
            if nodes[i].options.max_visits.is_some() {
                let now = runnable.binary_search(&i).map_or(0, |_| 1)
                    + sent.iter().filter(|&&(j, _)| j == i).count();
                self.within_visits(topology, i, now)?;
            }
        }
        // With sent branches: every activation in order, by node, a node's own before its
        // branches, the branches in the order they were sent.
        let activations: Option<Activations> = (!sent.is_empty()).then(|| {
            let mut all: Activations = runnable.iter().map(|&i| (i, None)).collect();
            all.extend(sent.iter().map(|(i, input)| (*i, Some(Arc::clone(input)))));
            all.sort_by_key(|&(i, ref input)| (i, input.is_some()));
            all
        });

        let observed = self.observed();
        if observed {
            let entered: Vec<usize> = match &activations {
                Some(all) => all.iter().map(|&(i, _)| i).collect(),
                None => runnable.to_vec(),
            };
            for i in entered {
                self.emit(|| Event::NodeEntered {
                    run_id: self.scope.run_id.clone(),
                    graph: topology.name.to_string(),
                    step,
                    node: nodes[i].name.to_string(),
                });
            }
        }
        if let Some(all) = &activations {
            let results = Box::pin(self.execute_sent(topology, all, step, observed)).await;
            // A branch's interrupt is told apart from its siblings' by its place among them.
            let mut branch = vec![0usize; nodes.len()];
            for (&(i, ref input), activation) in all.iter().zip(results) {
                let which = input.as_ref().map(|input| {
                    branch[i] += 1;
                    (branch[i] - 1, input)
                });
                self.absorb(
                    topology,
                    i,
                    step,
                    observed,
                    activation.result,
                    activation.report,
                    which,
                    &mut absorbed,
                )?;
            }
        } else if let [i] = *runnable {
            // One node: polled right here, no `Vec`, no box.
            let span = node_span(topology, i, step);
            let spec = &nodes[i];
            let policy = spec.options.policy();
            let activation = if span.is_disabled() && policy.is_plain(observed) {
                // The attempt itself awaited in this frame, not inside an activation's future
                // (several times its size, and copied).
                let mut ctx = self.context(i, step, None);
                let state = Arc::clone(&self.state);
                let result = match start(&*spec.node, state, &mut ctx, None, &self.scope.cancel) {
                    Ok(attempt) => attempt.await,
                    Err(stop) => Err(stop),
                };
                once(result, &mut ctx)
            } else {
                let activation = self.activate_node(topology, i, step, None, observed);
                // The span wrapper only when spans are recorded, with two awaits rather than
                // `in_span`'s `Either`: `in_span` here (with `activate_node` out of line)
                // measured ~25% slower on the chain and loop benches.
                if span.is_disabled() {
                    activation.await
                } else {
                    activation.instrument(span).await
                }
            };
            self.absorb_activation(topology, i, step, observed, activation, &mut absorbed)?;
        } else {
            // Boxed: several nodes in a step are rare next to one, and its future is large.
            let activations = Box::pin(self.execute(topology, runnable, step, observed)).await;
            for (&i, activation) in runnable.iter().zip(activations) {
                self.absorb_activation(topology, i, step, observed, activation, &mut absorbed)?;
            }
        }
        self.settle(topology, runnable, sent, ran, step, absorbed)
            .await
    }

    /// Takes a step's absorbed results into the run: merges the updates, counts the visits,
    /// follows the edges into the next frontier, then ends the step
    /// ([`ending`](Self::ending)). `runnable` ran once each, `sent` once per branch; `ran` is
    /// both, once each.
    async fn settle(
        &mut self,
        topology: &Arc<Topology<S>>,
        runnable: &[usize],
        sent: &[(usize, Arc<serde_json::Value>)],
        ran: &[usize],
        step: u64,
        absorbed: Absorbed<'_, S::Update>,
    ) -> Result<Advanced, RunError> {
        let Absorbed {
            updates,
            mut next,
            mut follow,
            mut rare,
        } = absorbed;
        if rare.as_ref().is_some_and(|rare| rare.cancelled) {
            return Err(RunError::Cancelled { step });
        }

        // Copies for the stream, sent once the merge has committed them.
        let streamed = self.copy_updates(|| updates.to_vec());
        // Written out before the merge takes the updates (and only when a child waits).
        let held = match &rare {
            Some(rare) if rare.holds => Some(self.pending_of(updates.pairs())?),
            _ => None,
        };
        if let Some(replaced) = rare.as_mut().and_then(|rare| rare.replaced.take()) {
            self.state = self.replace(topology, step, replaced, updates)?;
            self.held.pending.clear();
        } else {
            let merged = match updates {
                Updates::None => Ok(()),
                Updates::One(node, update) => {
                    Arc::make_mut(&mut self.state).apply_one(node, update)
                }
                Updates::Many(all) => Arc::make_mut(&mut self.state).apply(all),
            };
            merged.map_err(|conflict| RunError::MergeConflict { step, conflict })?;
        }
        if let Some(held) = held {
            self.held.pending.extend(held);
        }
        if let Some(updates) = streamed {
            self.send_updates(step, updates);
        }
        // Counted before the routers run: they see this step's activations.
        for &i in runnable {
            self.progress.visits[i] += 1;
        }
        for &(i, _) in sent {
            self.progress.visits[i] += 1;
        }
        let commanded = rare.as_mut().filter(|rare| !rare.sends.is_empty());
        if sent.is_empty() && commanded.is_none() {
            for &i in &follow {
                self.follow_edge(topology, i, &mut next)?;
            }
        } else {
            // A node's edge is followed once however many of its branches ran (they all see
            // the same merged state); sends leave in the order of the nodes that sent them.
            normalize(&mut follow);
            let commanded = commanded.map(|rare| std::mem::take(&mut rare.sends));
            let mut commanded = commanded.into_iter().flatten().peekable();
            for &i in &follow {
                while let Some((_, node, input)) = commanded.next_if(|&(from, _, _)| from < i) {
                    self.work.sends.push((node, input));
                }
                self.follow_edge(topology, i, &mut next)?;
            }
            self.work
                .sends
                .extend(commanded.map(|(_, node, input)| (node, input)));
        }

        normalize(&mut next);
        self.buffers.follow = follow;
        self.progress.transitions += (runnable.len() + sent.len()) as u64;
        self.work.frontier = next;
        // An approved node that was held back (deferred) stays approved until it runs.
        // (Each guarded: most steps have neither, and a call on an empty `Vec` is not free.)
        if !self.held.approved.is_empty() {
            self.held.approved.retain(|i| !ran.contains(i));
        }
        // A handler held back (deferred) keeps its failure until it runs.
        if !self.held.failures.is_empty() {
            self.held
                .failures
                .retain(|(handler, _)| !ran.contains(handler));
        }
        if let Some(rare) = rare.as_mut() {
            self.held.failures.append(&mut rare.failures);
        }
        // A continued child ran: it completed, failed, or paused again (and is asked anew).
        if !self.held.children.is_empty() {
            self.held.children.retain(|(node, _)| !ran.contains(node));
        }
        let asked = match rare {
            Some(rare) if !rare.interrupts.is_empty() => {
                rare.interrupts.into_iter().map(|(_, i)| i).collect()
            }
            _ => Vec::new(),
        };
        match self.ending(topology, ran, step, asked) {
            None => Ok(Advanced::Stepped(step)),
            Some(ending) => Box::pin(self.end(ending, ran, step)).await,
        }
    }

    /// Ends step `step`, whose nodes `ran` and whose results are merged: a pause on what its
    /// nodes `asked` or on what the next step's nodes ask first, the run's completion, or a
    /// checkpoint of the step; `None` when the step simply ends (the run goes on, nothing to
    /// write), which callers answer without awaiting anything.
    // Always: the usual answer, `None`, is a few checks, and a call costs more than they do.
    #[inline(always)]
    fn ending(
        &mut self,
        topology: &Topology<S>,
        ran: &[usize],
        step: u64,
        asked: Vec<Interrupt>,
    ) -> Option<Ending> {
        self.progress.step = step;
        self.progress.last_node = ran.last().copied();
        self.send_values();
        if !asked.is_empty() {
            return Some(Ending::Pause(asked));
        }
        if self.work.frontier.is_empty() && self.work.sends.is_empty() {
            return Some(Ending::Complete);
        }
        // A pause before the next step's nodes is this step's end, as a completion is: one
        // checkpoint, not a step's and then a pause's with the same state and frontier.
        if topology.asks_before {
            let waiting = self.asked_next(topology);
            if !waiting.is_empty() {
                return Some(Ending::Pause(waiting));
            }
        }
        self.graph.checkpointer.is_some().then_some(Ending::Save)
    }

    /// Ends step `step` as [`ending`](Self::ending) said.
    async fn end(
        &mut self,
        ending: Ending,
        ran: &[usize],
        step: u64,
    ) -> Result<Advanced, RunError> {
        match ending {
            Ending::Pause(asked) => self.pause(asked, ran).await,
            Ending::Complete => self.complete(ran).await,
            Ending::Save => {
                self.save(CheckpointLabel::Step, RunStatus::Running, ran, None)
                    .await?;
                Ok(Advanced::Stepped(step))
            }
        }
    }

    /// The state after a step in which subgraph nodes on this state type completed: the
    /// child's final state, with the updates the run committed while the child waited for an
    /// answer (`pending`, each as its own step merged it) and then the step's other updates
    /// merged into it, as if the child's whole run had been this step. Two such nodes in one
    /// step conflict, as two whole-state updates would.
    #[cold]
    #[inline(never)]
    fn replace(
        &self,
        topology: &Topology<S>,
        step: u64,
        (first, child, second): Replaced,
        updates: Updates<'_, S::Update>,
    ) -> Result<Arc<S>, RunError> {
        if let Some(second) = second {
            return Err(RunError::MergeConflict {
                step,
                conflict: crate::state::MergeConflict {
                    field: "state",
                    first: topology.nodes[first].name.to_string(),
                    second: topology.nodes[second].name.to_string(),
                },
            });
        }
        // `add_subgraph` runs a child on this very state type: the downcast cannot fail.
        let mut state = child
            .downcast::<S>()
            .map_err(|_| RunError::SubgraphAnswer {
                run_id: self.scope.run_id.clone(),
                expected: std::any::type_name::<S>(),
            })?;
        for held in &self.held.pending {
            let update =
                S::Update::deserialize(&held.update).map_err(|source| RunError::State {
                    run_id: self.scope.run_id.clone(),
                    action: "read from",
                    source,
                })?;
            Arc::make_mut(&mut state)
                .apply_one(&held.node, update)
                .map_err(|conflict| RunError::MergeConflict { step, conflict })?;
        }
        let merged = match updates {
            Updates::None => Ok(()),
            Updates::One(node, update) => Arc::make_mut(&mut state).apply_one(node, update),
            Updates::Many(all) => Arc::make_mut(&mut state).apply(all),
        };
        merged.map_err(|conflict| RunError::MergeConflict { step, conflict })?;
        Ok(state)
    }

    /// `updates` as a run keeps them for when the child on its state that waits completes
    /// (`Run::pending`).
    #[cold]
    #[inline(never)]
    pub(super) fn pending_of<'u>(
        &self,
        updates: impl IntoIterator<Item = (&'u str, &'u S::Update)>,
    ) -> Result<Vec<crate::checkpoint::PendingUpdate>, RunError> {
        updates
            .into_iter()
            .map(|(node, update)| {
                let update = serde_json::to_value(update).map_err(|source| RunError::State {
                    run_id: self.scope.run_id.clone(),
                    action: "written as",
                    source,
                })?;
                Ok(crate::checkpoint::PendingUpdate {
                    node: Name::from(node),
                    update,
                })
            })
            .collect()
    }

    /// For subgraph node `i` answered after a pause: the child run it continues.
    #[cold]
    #[inline(never)]
    fn child_to_continue(&self, i: usize) -> Option<Arc<crate::subgraph::Nested>> {
        self.held
            .children
            .iter()
            .find(|&&(node, _)| node == i)
            .map(|(_, child)| {
                Arc::new(crate::subgraph::Nested {
                    resume: Some(child.clone()),
                    ..Default::default()
                })
            })
    }

    /// The context of node `i`'s activation in `step` (with its input, for a sent branch).
    // Always: it sits on every activation's path, and out of line it costs a call and a
    // context built in memory rather than in registers.
    #[inline(always)]
    fn context(&self, i: usize, step: u64, input: Option<Arc<serde_json::Value>>) -> NodeContext {
        NodeContext {
            run: Arc::clone(&self.scope),
            node: i,
            step,
            // The first attempt; a retrying activation numbers each of its own.
            attempt: 1,
            input,
            // Only a subgraph node answered after a pause has a child to continue.
            nested: if self.held.children.is_empty() {
                None
            } else {
                self.child_to_continue(i)
            },
            failure: self
                .held
                .failures
                .iter()
                .find(|&&(handler, _)| handler == i)
                .map(|(_, failure)| Arc::clone(failure)),
        }
    }

    /// Takes one finished activation into the step's results: its update, where it leads, its
    /// interrupt or its failure. Events for it are emitted here, in declaration order.
    /// `branch` is a sent branch's place among the node's branches of the step: its
    /// interrupts' ids end in `#branch`, so that each is answered on its own.
    #[allow(clippy::too_many_arguments)]
    fn absorb<'t>(
        &self,
        topology: &'t Topology<S>,
        i: usize,
        step: u64,
        observed: bool,
        result: Result<NodeResult<S::Update>, Stop>,
        report: Report,
        branch: Branch<'_>,
        absorbed: &mut Absorbed<'t, S::Update>,
    ) -> Result<(), RunError> {
        let nodes = &topology.nodes;
        let spec = &nodes[i];
        // Filled only when observed; an empty list is not iterated (nor its iterator dropped).
        if !report.failed_attempts.is_empty() {
            for (attempt, error, retrying) in report.failed_attempts {
                self.emit(|| Event::NodeFailed {
                    run_id: self.scope.run_id.clone(),
                    graph: topology.name.to_string(),
                    step,
                    node: spec.name.to_string(),
                    attempt,
                    error,
                    retrying,
                });
            }
        }
        let result = match result {
            Ok(result) => result,
            Err(Stop::Cancelled) => {
                absorbed.rare().cancelled = true;
                return Ok(());
            }
            Err(Stop::Failed(failure)) => {
                let Some(handler) = spec.on_error else {
                    return Err(RunError::Node(*failure));
                };
                absorbed.next.push(handler);
                absorbed.rare().failures.push((handler, Arc::from(failure)));
                return Ok(());
            }
        };
        if observed {
            let elapsed = report.elapsed.unwrap_or_default();
            self.emit(|| Event::NodeCompleted {
                run_id: self.scope.run_id.clone(),
                graph: topology.name.to_string(),
                step,
                node: spec.name.to_string(),
                command: result.label(),
                elapsed_us: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
            });
        }
        if let Some(nested) = report.nested
            && self.absorb_nested(&spec.name, i, step, &nested, absorbed)
        {
            return Ok(());
        }
        // An update, or nothing, is what most activations return: no command to check.
        let interrupted = match result {
            NodeResult::None => {
                absorbed.follow.push(i);
                false
            }
            NodeResult::Update(update) => {
                absorbed.updates.push(&spec.name, update);
                absorbed.follow.push(i);
                false
            }
            NodeResult::Command(command) => {
                self.commanded(topology, i, step, command, branch, absorbed)?
            }
            NodeResult::UpdateThen(update, command) => {
                absorbed.updates.push(&spec.name, update);
                self.commanded(topology, i, step, command, branch, absorbed)?
            }
            NodeResult::Interrupt(request) => {
                let command = Command::Interrupt(request);
                self.commanded(topology, i, step, command, branch, absorbed)?
            }
        };
        // A node that asked its own question needs no second pause after it.
        if spec.options.interrupt == Some(InterruptPoint::After) && !interrupted {
            let question = spec.options.question.as_deref();
            let interrupt = Interrupt::fixed(&spec.name, step, InterruptPoint::After, question);
            absorbed
                .rare()
                .interrupts
                .push((i, of_branch(interrupt, branch)));
        }
        Ok(())
    }

    /// Takes node `i`'s `command` into the step's results, checked against the targets its
    /// edges declare; whether it asked a question (an interrupt).
    #[inline(never)]
    fn commanded<'t>(
        &self,
        topology: &'t Topology<S>,
        i: usize,
        step: u64,
        command: Command,
        branch: Branch<'_>,
        absorbed: &mut Absorbed<'t, S::Update>,
    ) -> Result<bool, RunError> {
        let nodes = &topology.nodes;
        let spec = &nodes[i];
        let undeclared = |target: &str| RunError::UndeclaredTarget {
            node: spec.name.to_string(),
            target: target.to_owned(),
        };
        let declared = |target: &str| {
            spec.edge
                .declared(target, nodes, &topology.joins)
                .ok_or_else(|| undeclared(target))
        };
        // A join source's one target is its join: going there is arriving at it.
        let joins = matches!(spec.edge, Edge::Join(_));
        let interrupted = matches!(command, Command::Interrupt(_));
        match command {
            Command::Continue => absorbed.follow.push(i),
            Command::Goto(target) => match declared(&target)? {
                Target::Node(_) if joins => absorbed.follow.push(i),
                Target::Node(j) => absorbed.next.push(j),
                Target::End => {}
            },
            Command::Fork(targets) => {
                for target in targets {
                    match declared(&target)? {
                        Target::Node(_) if joins => absorbed.follow.push(i),
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
                let interrupt = Interrupt::new(&spec.name, step, InterruptPoint::Node, request);
                // A branch that resumes to itself runs again with its own input: sent anew,
                // for the step after the answer.
                if let Some((_, input)) = branch
                    && interrupt.request.resume_to.as_deref() == Some(&*spec.name)
                {
                    absorbed.rare().sends.push((i, i, Arc::clone(input)));
                }
                absorbed
                    .rare()
                    .interrupts
                    .push((i, of_branch(interrupt, branch)));
            }
            Command::Sends(sends) => {
                let Edge::Each { targets, .. } = &spec.edge else {
                    let target = sends.first().map_or(String::new(), |s| s.node.to_string());
                    return Err(undeclared(&target));
                };
                for send in sends {
                    let node = targets
                        .iter()
                        .find(|(name, _)| **name == *send.node)
                        .map(|&(_, node)| node)
                        .ok_or_else(|| undeclared(&send.node))?;
                    absorbed.rare().sends.push((i, node, Arc::new(send.input)));
                }
            }
        }
        Ok(interrupted)
    }

    /// Takes what a subgraph node's child did into the step: its final state (for a child on
    /// this state type), or its pause, asked under the child's segment; whether it paused.
    /// Out of line: most steps run no subgraph, and `absorb` stays small for them.
    #[cold]
    #[inline(never)]
    fn absorb_nested(
        &self,
        name: &str,
        i: usize,
        step: u64,
        nested: &crate::subgraph::Nested,
        absorbed: &mut Absorbed<'_, S::Update>,
    ) -> bool {
        if let Some((child, asked)) = &nested.paused {
            if self.graph.topology.nodes[i].runs_same_state() {
                absorbed.rare().holds = true;
            }
            let segment = child
                .as_str()
                .strip_prefix(self.scope.run_id.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
                .unwrap_or(child.as_str());
            for question in asked {
                let mut interrupt =
                    Interrupt::new(name, step, InterruptPoint::Node, question.request.clone());
                interrupt.id = format!("{segment}/{}", question.id);
                absorbed.rare().interrupts.push((i, interrupt));
            }
            return true;
        }
        if let Some(state) = &nested.replaced {
            let replaced = &mut absorbed.rare().replaced;
            match replaced {
                None => *replaced = Some((i, Arc::clone(state), None)),
                Some((_, _, second)) => {
                    second.get_or_insert(i);
                }
            }
        }
        false
    }

    /// Runs a step with sent branches: every activation concurrently (see `concurrent`),
    /// gathered in order; a node's `max_concurrency` bounds how many of its activations run at
    /// once.
    async fn execute_sent(
        &self,
        topology: &Arc<Topology<S>>,
        all: &Activations,
        step: u64,
        observed: bool,
    ) -> Vec<Activation<S::Update>> {
        let mut limits: Vec<Option<tokio::sync::Semaphore>> =
            topology.nodes.iter().map(|_| None).collect();
        for &(i, _) in all {
            if let Some(max) = topology.nodes[i].options.max_concurrency
                && limits[i].is_none()
            {
                let permits = usize::try_from(max).unwrap_or(usize::MAX);
                limits[i] = Some(tokio::sync::Semaphore::new(permits));
            }
        }
        let limits = &limits;
        let activations = all
            .iter()
            .map(|&(i, ref input)| {
                let activation = self.activate_node(topology, i, step, input.clone(), observed);
                let activation = async move {
                    // Held for the whole activation; the semaphore is never closed.
                    let _place = match &limits[i] {
                        Some(limit) => limit.acquire().await.ok(),
                        None => None,
                    };
                    activation.await
                };
                Box::pin(in_span(topology, i, step, activation))
            })
            .collect();
        run_all(activations).await
    }

    /// Runs several nodes concurrently, gathered in declaration order.
    async fn execute(
        &self,
        topology: &Arc<Topology<S>>,
        runnable: &[usize],
        step: u64,
        observed: bool,
    ) -> Vec<Activation<S::Update>> {
        let activations = runnable
            .iter()
            .map(|&i| {
                let activation = self.activate_node(topology, i, step, None, observed);
                Box::pin(in_span(topology, i, step, activation))
            })
            .collect();
        run_all(activations).await
    }

    /// Node `i`'s activation in `step` on the committed state (a sent branch's with its input),
    /// ready to be polled: what every way of running a step's nodes starts from.
    // Always: out of line, the future would be built in its frame and copied out.
    #[inline(always)]
    fn activate_node<'a>(
        &'a self,
        topology: &'a Topology<S>,
        i: usize,
        step: u64,
        input: Option<Arc<serde_json::Value>>,
        observed: bool,
    ) -> impl std::future::Future<Output = Activation<S::Update>> + Send + 'a {
        let spec = &topology.nodes[i];
        activate(
            &*spec.node,
            spec.options.policy(),
            Arc::clone(&self.state),
            self.context(i, step, input),
            &self.scope.cancel,
            observed,
        )
    }
}
