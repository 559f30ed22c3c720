//! The super-step's loop: runs the frontier (`absorb`), commits its results by the rules of
//! `algo` (merge in declaration order, count visits, follow the edges), and ends the step with
//! the I/O it needs (events, streams, a checkpoint, a pause).

use std::sync::Arc;

use super::absorb::{Activations, in_span};
use super::algo::{self, Absorbed, Updates};
use super::{Advanced, Phase, Run, StepOutcome};
use crate::activation::{Activation, attempt_in_place, once};
use crate::checkpoint::{CheckpointLabel, RunStatus};
use crate::errors::RunError;
use crate::event::Event;
use crate::graph::{Topology, Visits};
use crate::interrupt::{Interrupt, InterruptPoint};
use crate::node::NodeResult;
use crate::state::GraphState;

/// What a step did, on the path every step takes: the error boxed, so that the result is two
/// words, not nine — each layer of the step (the node's step, the super-step, the loop of them)
/// moves it on to the next, through memory, on every step.
type Stepped = Result<Advanced, Box<RunError>>;

/// How a step ends when it does more than end ([`Run::ending`]).
enum Ending {
    /// A pause on these questions.
    Pause(Vec<Interrupt>),
    /// The run's completion.
    Complete,
    /// The step's checkpoint.
    Save,
}

impl<S: GraphState> Run<S> {
    /// Whether a step may pause before a node runs: most graphs and runs have no such node,
    /// and one check says so.
    #[inline]
    fn may_ask_before(&self, topology: &Topology<S>) -> bool {
        topology.asks_before || !self.held.stops.before.is_empty()
    }

    /// At the end of a step, the questions the next one would pause on before running
    /// anything ([`Run::asked_before`] on what it would run), unless it would stop first: on
    /// an overridden next node, a cancellation or the step limit.
    fn asked_next(&self, topology: &Topology<S>) -> Vec<Interrupt> {
        if self.work.next_override.is_some()
            || self.scope.cancel.is_cancelled()
            || self.progress.step >= u64::from(topology.max_steps)
        {
            return Vec::new();
        }
        algo::asked_next(
            topology,
            &self.work,
            &self.held.approved,
            &self.held.stops.before,
            self.progress.step + 1,
        )
    }

    /// [`algo::follow_edge`] on this run's committed state, visits and work.
    #[inline]
    pub(super) fn follow_edge(
        &mut self,
        topology: &Topology<S>,
        i: usize,
        next: &mut Vec<usize>,
    ) -> Result<(), RunError> {
        let visits = &self.progress.visits;
        algo::follow_edge(topology, &self.state, visits, &mut self.work, i, next)
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
    /// The step that ends the run is a step too: it returns [`StepOutcome::Completed`] (or
    /// [`StepOutcome::Paused`]) *after* it ran, with its update in [`state`](Self::state). So a
    /// loop that shows each step reads the state before it looks at the outcome — a
    /// `while let Ok(StepOutcome::Stepped { .. })` loop would stop before showing the last one:
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use trellis::run::StepOutcome;
    /// use trellis::{END, GraphBuilder, GraphState, NodeResult, START};
    ///
    /// #[derive(Clone, Default, serde::Serialize, serde::Deserialize, GraphState)]
    /// struct Count { #[reducer(sum)] n: u32 }
    ///
    /// let mut graph = GraphBuilder::<Count>::new("Twice");
    /// graph
    ///     .add_node_fn("a", |_, _| async { Ok(NodeResult::Update(CountUpdate::default().n(1))) })
    ///     .add_node_fn("b", |_, _| async { Ok(NodeResult::Update(CountUpdate::default().n(1))) })
    ///     .add_edge(START, "a")
    ///     .add_edge("a", "b")
    ///     .add_edge("b", END);
    /// let mut run = graph.compile()?.start(Count::default());
    /// let mut seen = Vec::new();
    /// loop {
    ///     let outcome = run.step().await?;
    ///     seen.push(run.state().n); // every step's state, the last one's too
    ///     if !matches!(outcome, StepOutcome::Stepped { .. }) {
    ///         break;
    ///     }
    /// }
    /// assert_eq!(seen, [1, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
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
        algo::normalize(&mut frontier);
        self.work.frontier = frontier;
        let (state, visits) = (&*self.state, &self.progress.visits);
        let sends = &mut self.work.sends;
        algo::fan_out(
            &topology,
            state,
            visits,
            sends,
            &topology.entry,
            crate::START,
        )?;
        self.send_values();
        self.save(CheckpointLabel::Start, RunStatus::Running, &[], None)
            .await
    }

    /// Runs one super-step, or with `to_the_end` one after another until the run completes or
    /// pauses: looping here rather than in the caller spares each step the futures of the
    /// layers above (`advance`, its caller's loop), which cost a step of one node a tenth; and
    /// the step itself is this loop's body, not a future of its own made and dropped per step.
    async fn super_steps(&mut self, topology: &Arc<Topology<S>>, to_the_end: bool) -> Stepped {
        loop {
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
            let current = std::mem::take(&mut self.work.frontier);
            let sent = std::mem::take(&mut self.work.sends);
            // The step, from the frontier `current` and the branches `sent`; on error, nothing
            // is committed. Here in the loop, not in futures of its own made, moved and dropped
            // per step: a step of one node cost a fifth more when it had two (`super_step`,
            // `run_frontier`). That step, the most travelled, runs in this frame; any other in
            // a boxed future.
            let result = 'step: {
                let (current, sent) = (&current[..], &sent[..]);
                let (&[i], true) = (current, sent.is_empty()) else {
                    break 'step Box::pin(self.run_several(topology, current, sent, step)).await;
                };
                let nodes = &topology.nodes;
                // As `run_several` asks: one flag says whether any node asks before it runs.
                if self.may_ask_before(topology) {
                    let waiting = algo::asked_before(
                        topology,
                        &self.held.approved,
                        &self.held.stops.before,
                        &[i],
                        step,
                    );
                    if !waiting.is_empty() {
                        self.work.frontier = vec![i];
                        break 'step Box::pin(self.pause(waiting, &[])).await;
                    }
                }
                if nodes[i].options.max_visits.is_some()
                    && let Err(error) = algo::within_visits(topology, &self.progress.visits, i, 1)
                {
                    break 'step Err(error);
                }
                let observed = self.observed();
                if observed {
                    self.entered(topology, step, &[i]);
                }
                // One node: polled right here, no `Vec`, no box. No span at all when nothing
                // records at its level: made and dropped, even a disabled one costs a tenth of
                // the step.
                let spans = tracing::level_enabled!(tracing::Level::INFO);
                let spec = &nodes[i];
                if !spans && spec.options.policy().is_plain(observed) {
                    // The attempt itself awaited in this frame, not inside an activation's
                    // future (several times its size, and copied).
                    let mut ctx = self.context_reusing(i, step);
                    let state = Arc::clone(&self.state);
                    let result =
                        attempt_in_place(&*spec.node, state, &mut ctx, &self.scope.cancel).await;
                    // What most nodes return, an update or nothing, with nothing to ask after:
                    // the step's only result, committed as it is rather than gathered first.
                    let simple = ctx.nested.is_none()
                        && spec.options.interrupt != Some(InterruptPoint::After)
                        && !self.held.stops.after.contains(&i);
                    let update = match result {
                        Ok(NodeResult::Update(update)) if simple => Some(update),
                        Ok(NodeResult::None) if simple => None,
                        other => {
                            let activation = once(other, &mut ctx);
                            break 'step Box::pin(
                                self.take_in(topology, i, step, observed, activation),
                            )
                            .await;
                        }
                    };
                    self.hand_back(ctx);
                    break 'step match self.commit_one(topology, i, step, update) {
                        Err(error) => Err(error),
                        Ok(None) => Ok(Advanced::Stepped(step)),
                        Ok(Some(ending)) => Box::pin(self.end(ending, &[i], step)).await,
                    };
                }
                // Boxed: an activation that retries, times or reports its attempts is several
                // times the size of a plain attempt, and in this frame it would grow every
                // step's future.
                let activation = self.activate_node(topology, i, step, None, observed);
                let activation = Box::pin(in_span(topology, i, step, activation)).await;
                Box::pin(self.take_in(topology, i, step, observed, activation)).await
            };
            let outcome = self.after_step(result, current, sent)?;
            if !to_the_end || !matches!(outcome, Advanced::Stepped(_)) {
                return Ok(outcome);
            }
        }
    }

    /// After a step that started from the frontier `current` and the branches `sent`: its
    /// buffer kept for a later frontier, or, when the step failed, both put back, so that the
    /// failed checkpoint shows the step that could not run.
    #[inline(always)]
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

    /// The step in which node `i` alone ran and gave `activation`: taken into the step's
    /// results and settled. Boxed by its callers: the common step commits its one update at
    /// once, and this future would make that step's several times larger.
    async fn take_in(
        &mut self,
        topology: &Arc<Topology<S>>,
        i: usize,
        step: u64,
        observed: bool,
        activation: Activation<S::Update>,
    ) -> Result<Advanced, RunError> {
        let mut absorbed = self.absorbing();
        self.absorb_activation(topology, i, step, observed, activation, &mut absorbed)?;
        match self.settle(topology, &[i], &[], &[i], step, absorbed)? {
            None => Ok(Advanced::Stepped(step)),
            Some(ending) => Box::pin(self.end(ending, &[i], step)).await,
        }
    }

    /// Commits a step in which node `i` alone ran and returned `update` (or nothing): what
    /// [`settle`](Self::settle) does with such a step, without gathering its results first.
    #[inline(always)]
    fn commit_one(
        &mut self,
        topology: &Topology<S>,
        i: usize,
        step: u64,
        update: Option<S::Update>,
    ) -> Result<Option<Ending>, RunError> {
        if let Some(update) = update {
            let name = &*topology.nodes[i].name;
            let streamed = self.copy_updates(|| vec![(name, update.clone())]);
            self.merge(Updates::One(name, update), step)?;
            if let Some(updates) = streamed {
                self.send_updates(step, updates);
            }
        }
        algo::count_visits::<()>(&mut self.progress.visits, &[i], &[]);
        let mut next = std::mem::take(&mut self.buffers.spare);
        next.clear();
        self.follow_edge(topology, i, &mut next)?;
        algo::normalize(&mut next);
        self.progress.transitions += 1;
        self.work.frontier = next;
        algo::used_up(&mut self.held, &[i]);
        Ok(self.ending(topology, &[i], step, None))
    }

    /// Emits that the nodes `entered` step `step`.
    fn entered(&self, topology: &Topology<S>, step: u64, entered: &[usize]) {
        for &i in entered {
            self.emit(|| Event::NodeEntered {
                run_id: self.scope.run_id.clone(),
                graph: topology.name.to_string(),
                step,
                node: topology.nodes[i].name.to_string(),
            });
        }
    }

    /// A step of several nodes, or with sent branches, or that holds deferred nodes back (the
    /// step of [`super_steps`](Self::super_steps) that is not one node's).
    async fn run_several(
        &mut self,
        topology: &Arc<Topology<S>>,
        current: &[usize],
        sent: &[(usize, Arc<serde_json::Value>)],
        step: u64,
    ) -> Result<Advanced, RunError> {
        let nodes = &topology.nodes;
        let mut absorbed = self.absorbing();
        let deferred = algo::split_deferred(topology, current, !sent.is_empty());
        let runnable: &[usize] = match &deferred {
            Some((runnable, held)) => {
                absorbed.next.extend_from_slice(held);
                runnable
            }
            None => current,
        };
        let mut ran_nodes = Vec::new();
        let ran = algo::with_sent(runnable, sent, &mut ran_nodes);
        // Asked here only when the step before could not ask it (a run that starts or
        // resumes before such a node; a checkpoint written before the pause moved there).
        // Most graphs have no such node: one flag says so, before any call.
        if self.may_ask_before(topology) {
            let waiting = algo::asked_before(
                topology,
                &self.held.approved,
                &self.held.stops.before,
                ran,
                step,
            );
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
                algo::within_visits(topology, &self.progress.visits, i, now)?;
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
            self.entered(topology, step, &entered);
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
        } else {
            // Boxed: several nodes in a step are rare next to one, and its future is large.
            let activations = Box::pin(self.execute(topology, runnable, step, observed)).await;
            for (&i, activation) in runnable.iter().zip(activations) {
                self.absorb_activation(topology, i, step, observed, activation, &mut absorbed)?;
            }
        }
        match self.settle(topology, runnable, sent, ran, step, absorbed)? {
            None => Ok(Advanced::Stepped(step)),
            Some(ending) => Box::pin(self.end(ending, ran, step)).await,
        }
    }

    /// Takes a step's absorbed results into the run: merges the updates, counts the visits,
    /// follows the edges into the next frontier, then says how the step ends
    /// ([`ending`](Self::ending)). `runnable` ran once each, `sent` once per branch; `ran` is
    /// both, once each.
    // Always: it is on every step's path, and it is called from two places.
    #[inline(always)]
    fn settle(
        &mut self,
        topology: &Arc<Topology<S>>,
        runnable: &[usize],
        sent: &[(usize, Arc<serde_json::Value>)],
        ran: &[usize],
        step: u64,
        absorbed: Absorbed<'_, S::Update>,
    ) -> Result<Option<Ending>, RunError> {
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
            let (run_id, pending) = (&self.scope.run_id, &self.held.pending);
            self.state = algo::replace(topology, run_id, pending, step, replaced, updates)?;
            self.held.pending.clear();
            self.ledger.written.forget();
        } else {
            self.merge(updates, step)?;
        }
        if let Some(held) = held {
            self.held.pending.extend(held);
        }
        if let Some(updates) = streamed {
            self.send_updates(step, updates);
        }
        algo::count_visits(&mut self.progress.visits, runnable, sent);
        let commanded = rare
            .as_mut()
            .filter(|rare| !rare.sends.is_empty())
            .map(|rare| std::mem::take(&mut rare.sends));
        let (state, visits) = (&*self.state, &self.progress.visits);
        let any_sent = !sent.is_empty();
        let work = &mut self.work;
        algo::lead_on(
            topology,
            state,
            visits,
            work,
            any_sent,
            commanded,
            &mut follow,
            &mut next,
        )?;
        self.buffers.follow = follow;
        self.progress.transitions += (runnable.len() + sent.len()) as u64;
        self.work.frontier = next;
        algo::used_up(&mut self.held, ran);
        if let Some(rare) = rare.as_mut() {
            self.held.failures.append(&mut rare.failures);
        }
        // `None` rather than an empty `Vec`: most steps ask nothing, and dropping a `Vec` is a
        // call.
        let asked = match rare {
            Some(rare) if !rare.interrupts.is_empty() => {
                Some(rare.interrupts.into_iter().map(|(_, i)| i).collect())
            }
            _ => None,
        };
        Ok(self.ending(topology, ran, step, asked))
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
        asked: Option<Vec<Interrupt>>,
    ) -> Option<Ending> {
        self.progress.step = step;
        self.progress.last_node = ran.last().copied();
        self.send_values();
        if let Some(asked) = asked {
            return Some(Ending::Pause(asked));
        }
        if self.work.frontier.is_empty() && self.work.sends.is_empty() {
            return Some(Ending::Complete);
        }
        // A pause before the next step's nodes is this step's end, as a completion is: one
        // checkpoint, not a step's and then a pause's with the same state and frontier.
        if self.may_ask_before(topology) {
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
}
