//! A step's activations: each node's context, the nodes run (concurrently when several), and
//! what each returned taken into the step's results ([`Absorbed`]), with the events it emits.
//! What the results then do to the run is `algo`'s; when they are committed, `step`'s.

use std::sync::Arc;

use tracing::Instrument;

use super::Run;
use super::algo::{self, Absorbed, Branch};
use super::concurrent::run_all;
use crate::activation::{Activation, Report, Stop, activate};
use crate::errors::RunError;
use crate::event::Event;
use crate::graph::Topology;
use crate::interrupt::{Interrupt, InterruptPoint};
use crate::name::Name;
use crate::node::{Command, NodeContext, NodeResult, RunScope};
use crate::state::GraphState;

/// The activations of a step that runs sent branches: node, and input for a branch.
pub(super) type Activations = Vec<(usize, Option<Arc<serde_json::Value>>)>;

pub(super) fn node_span<S: GraphState>(
    topology: &Topology<S>,
    i: usize,
    step: u64,
) -> tracing::Span {
    tracing::info_span!(target: "trellis", "graph.node", node = %topology.nodes[i].name, step)
}

/// Node `i`'s activation inside the node's span, only when spans are recorded (the wrapper
/// grows every branch's future otherwise), as a single node's runs.
pub(super) fn in_span<S, F>(
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

impl<S: GraphState> Run<S> {
    /// Empty results for a step to absorb into, in the run's reused buffers.
    pub(super) fn absorbing<'t>(&mut self) -> Absorbed<'t, S::Update> {
        let next = std::mem::take(&mut self.buffers.spare);
        Absorbed::new(next, std::mem::take(&mut self.buffers.follow))
    }

    /// Takes a finished activation of node `i` (not a sent branch) into the step's results.
    // Always: taken apart here, the activation is not copied into a call.
    #[inline(always)]
    pub(super) fn absorb_activation<'t>(
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
    pub(super) fn child_to_continue(&self, i: usize) -> Option<Arc<crate::subgraph::Nested>> {
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

    /// [`context`](Self::context) for a step of one node, holding the run's scope through the
    /// hold the last such step handed back ([`hand_back`](Self::hand_back)) when it is still
    /// the run's.
    #[inline(always)]
    pub(super) fn context_reusing(&mut self, i: usize, step: u64) -> NodeContext {
        match self.buffers.scope.take() {
            Some(run) if Arc::ptr_eq(&run, &self.scope) => self.context_holding(run, i, step, None),
            _ => self.context(i, step, None),
        }
    }

    /// Keeps `ctx`'s hold on the run's scope for the next step's context.
    #[inline(always)]
    pub(super) fn hand_back(&mut self, ctx: NodeContext) {
        self.buffers.scope = Some(ctx.run);
    }

    /// The context of node `i`'s activation in `step` (with its input, for a sent branch).
    // Always: it sits on every activation's path, and out of line it costs a call and a
    // context built in memory rather than in registers.
    #[inline(always)]
    pub(super) fn context(
        &self,
        i: usize,
        step: u64,
        input: Option<Arc<serde_json::Value>>,
    ) -> NodeContext {
        self.context_holding(Arc::clone(&self.scope), i, step, input)
    }

    /// [`context`](Self::context) with `run`, a hold on the run's scope.
    #[inline(always)]
    fn context_holding(
        &self,
        run: Arc<RunScope>,
        i: usize,
        step: u64,
        input: Option<Arc<serde_json::Value>>,
    ) -> NodeContext {
        NodeContext {
            run,
            node: i,
            step,
            // The first attempt; a retrying activation numbers each of its own.
            attempt: 1,
            approved: !self.held.approved.is_empty() && self.held.approved.contains(&i),
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
    pub(super) fn absorb<'t>(
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
                algo::commanded(topology, i, step, command, branch, absorbed)?
            }
            NodeResult::UpdateThen(update, command) => {
                absorbed.updates.push(&spec.name, update);
                algo::commanded(topology, i, step, command, branch, absorbed)?
            }
            NodeResult::Interrupt(request) => {
                let command = Command::Interrupt(request);
                algo::commanded(topology, i, step, command, branch, absorbed)?
            }
            NodeResult::Updates(updates, command) => {
                for update in updates {
                    absorbed.updates.push(&spec.name, update);
                }
                algo::commanded(topology, i, step, command, branch, absorbed)?
            }
        };
        // A node that asked its own question needs no second pause after it.
        let asks_after = spec.options.interrupt == Some(InterruptPoint::After)
            || self.held.stops.after.contains(&i);
        if asks_after && !interrupted {
            let question = spec.options.question.as_deref();
            let interrupt = Interrupt::fixed(&spec.name, step, InterruptPoint::After, question);
            absorbed
                .rare()
                .interrupts
                .push((i, algo::of_branch(interrupt, branch)));
        }
        Ok(())
    }

    /// Takes what a subgraph node's child did into the step: its final state (for a child on
    /// this state type), or its pause, asked under the child's segment; whether it paused.
    /// Out of line: most steps run no subgraph, and `absorb` stays small for them.
    #[cold]
    #[inline(never)]
    pub(super) fn absorb_nested(
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
                interrupt.id = format!("{segment}/{}", question.id).into();
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
    pub(super) async fn execute_sent(
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
    pub(super) async fn execute(
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
    pub(super) fn activate_node<'a>(
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
