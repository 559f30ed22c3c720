//! Subgraph nodes: a whole graph run as one node of another, with runs of its own.
//!
//! The child of a node `research` activated in step 3 of run `R` is run `R/research@3` (its id
//! is its namespace path), kept in the parent's checkpointer (or, for a parent without one, in
//! memory for the parent run's life) and reporting on the parent's event bus. The child's steps
//! are its own; to the parent the node is one activation. A pause inside the child pauses the
//! parent with the child's questions, their ids prefixed with the child's segment
//! (`research@3/approve@2`); resuming the parent answers the child and runs the node again,
//! which continues the child where it stopped.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;

use crate::checkpoint::{Checkpointer, RunStatus};
use crate::errors::RunError;
use crate::event::EventBus;
use crate::graph::{CompiledGraph, latest};
use crate::id::RunId;
use crate::interrupt::Interrupt;
use crate::name::Name;
use crate::node::{Node, NodeContext, NodeError, NodeResult};
use crate::runner::{Outcome, Run};
use crate::state::{ApplyResume, GraphState};

/// What a run with subgraph nodes gives its children: where they keep their checkpoints and
/// where their events go.
#[derive(Clone)]
pub(crate) struct Nest {
    pub(crate) store: Arc<dyn Checkpointer>,
    pub(crate) events: Arc<EventBus>,
}

impl std::fmt::Debug for Nest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Nest")
    }
}

/// What passes between a run and a subgraph node's activation, beside the node's result.
#[derive(Clone, Debug, Default)]
pub(crate) struct Nested {
    /// In: the child run to continue (answered after a pause) instead of starting one.
    pub(crate) resume: Option<RunId>,
    /// Out, for a child on the parent's own state type: its final state, the parent's next.
    pub(crate) replaced: Option<Arc<dyn Any + Send + Sync>>,
    /// Out: the child paused; its run and its questions.
    pub(crate) paused: Option<(RunId, Vec<Interrupt>)>,
}

/// How a parent's state becomes a child's and back: for a subgraph on another state type
/// ([`GraphBuilder::add_subgraph_mapped`](crate::GraphBuilder::add_subgraph_mapped)).
///
/// Generated code implements it with the handler methods `<node>_input` and `<node>_output`.
pub trait SubgraphMap<P: GraphState, C: GraphState>: Send + Sync + 'static {
    /// The child's input, from the parent's committed state.
    fn input(&self, parent: &P) -> C;

    /// The parent's update, from the child's final state (merged with the step's other
    /// updates by the parent's reducers).
    fn output(&self, parent: &P, child: C) -> P::Update;
}

/// A pair of closures as a [`SubgraphMap`].
pub struct MapFn<I, O>(pub I, pub O);

impl<P, C, I, O> SubgraphMap<P, C> for MapFn<I, O>
where
    P: GraphState,
    C: GraphState,
    I: Fn(&P) -> C + Send + Sync + 'static,
    O: Fn(&P, C) -> P::Update + Send + Sync + 'static,
{
    fn input(&self, parent: &P) -> C {
        (self.0)(parent)
    }

    fn output(&self, parent: &P, child: C) -> P::Update {
        (self.1)(parent, child)
    }
}

/// A child's answers, each the parent's answer type, boxed: the parent knows its own answer
/// type, the node erased its child's.
pub(crate) type Answers = Vec<(String, Box<dyn Any + Send>)>;

type AnswerFn<C> = Box<
    dyn Fn(Run<C>, Answers) -> std::pin::Pin<Box<dyn Future<Output = Result<(), RunError>> + Send>>
        + Send
        + Sync,
>;

/// How a subgraph's final state reaches its parent.
enum Output<P: GraphState, C: GraphState> {
    /// The same state type: the child's final state is the parent's.
    Replace,
    Map(Box<dyn SubgraphMap<P, C>>),
}

/// A subgraph node of a graph on `P` running a graph on `C`.
pub(crate) struct SubgraphNode<P: GraphState, C: GraphState> {
    child: CompiledGraph<C>,
    output: Output<P, C>,
    /// Answers the paused child (set when `C` takes answers; for the same state type the
    /// parent's resume answers it directly).
    answer: Option<AnswerFn<C>>,
}

impl<S: GraphState> SubgraphNode<S, S> {
    pub(crate) fn same(child: CompiledGraph<S>) -> Self {
        SubgraphNode {
            child,
            output: Output::Replace,
            answer: None,
        }
    }
}

impl<P: GraphState, C: ApplyResume> SubgraphNode<P, C> {
    pub(crate) fn mapped(child: CompiledGraph<C>, map: impl SubgraphMap<P, C>) -> Self {
        SubgraphNode {
            child,
            output: Output::Map(Box::new(map)),
            answer: Some(Box::new(|mut run: Run<C>, answers: Answers| {
                Box::pin(async move {
                    let run_id = run.run_id().clone();
                    let mut typed = Vec::with_capacity(answers.len());
                    for (id, answer) in answers {
                        let answer = answer.downcast::<C::Input>().map_err(|_| {
                            RunError::SubgraphAnswer {
                                run_id: run_id.clone(),
                                expected: std::any::type_name::<C::Input>(),
                            }
                        })?;
                        typed.push((id, *answer));
                    }
                    run.resume(crate::interrupt::Answers::Each(typed)).await
                })
            })),
        }
    }
}

impl<P: GraphState, C: GraphState> SubgraphNode<P, C> {
    /// The child graph, keeping its checkpoints and events where the parent's run says.
    fn nested(&self, nest: &Nest) -> CompiledGraph<C> {
        CompiledGraph {
            topology: Arc::clone(&self.child.topology),
            events: Arc::clone(&nest.events),
            checkpointer: Some(Arc::clone(&nest.store)),
            branching: self.child.branching.clone(),
            snapshot_every: self.child.snapshot_every,
        }
    }

    /// The stored child `run_id` in `status`, ready to drive.
    async fn reopen(
        &self,
        nest: &Nest,
        run_id: &RunId,
        status: RunStatus,
    ) -> Result<Run<C>, RunError> {
        let graph = self.nested(nest);
        let record = nest
            .store
            .load_run(run_id)
            .await?
            .ok_or_else(|| RunError::RunNotFound {
                run_id: run_id.clone(),
            })?;
        if record.status != status {
            return Err(RunError::Unresumable {
                run_id: run_id.clone(),
                reason: format!(
                    "the subgraph's run is {}, not {}",
                    record.status.as_str(),
                    status.as_str()
                ),
            });
        }
        let me = crate::owner::current();
        let record = if status == RunStatus::Running && record.owner.as_deref() != Some(me) {
            // Left by a process that stopped (or written by a fork): this one takes it up, so
            // that its checkpoints are not fenced out.
            let mut claim = record.clone();
            claim.owner = Some(Name::from(me));
            claim.lease_until = Some(crate::id::Timestamp::now().plus(crate::runner::LEASE));
            if !nest
                .store
                .take_over(&claim, record.owner.as_deref())
                .await?
            {
                return Err(RunError::StillRunning {
                    run_id: run_id.clone(),
                });
            }
            claim
        } else {
            record
        };
        let checkpoint = latest(nest.store.as_ref(), run_id).await?;
        Run::from_checkpoint(graph, record, checkpoint)
    }

    /// The status of the stored child `run_id`, if it is stored.
    async fn status(&self, nest: &Nest, run_id: &RunId) -> Result<Option<RunStatus>, RunError> {
        Ok(nest
            .store
            .load_run(run_id)
            .await?
            .map(|record| record.status))
    }

    async fn drive(
        &self,
        parent: &P,
        ctx: &NodeContext,
        nest: &Nest,
        resume: Option<RunId>,
    ) -> Result<Outcome<C>, RunError> {
        let mut run = match resume {
            // A child answered after a pause, failed (or cancelled) since and retried with its
            // parent: it goes on from its own last committed checkpoint, its answer kept.
            Some(run_id) if self.status(nest, &run_id).await?.is_some_and(stopped) => {
                let run = self.nested(nest).take_up(&run_id).await?;
                if run.is_paused() {
                    return Ok(run.into_outcome());
                }
                run
            }
            Some(run_id) => self.reopen(nest, &run_id, RunStatus::Running).await?,
            None => {
                let mut segment = format!("{}@{}", ctx.node(), ctx.step());
                if ctx.attempt() > 1 {
                    segment = format!("{segment}.{}", ctx.attempt());
                }
                // A child that failed (or was cancelled) stays in its parent's history; a step
                // retried with its run (`CompiledGraph::retry`) runs a fresh one beside it:
                // `~2`, `~3`, ….
                let mut run_id = RunId::from(format!("{}/{segment}", ctx.run_id()));
                let mut stored = nest.store.load_run(&run_id).await?;
                let mut again = 1;
                while stored.as_ref().is_some_and(|record| stopped(record.status)) {
                    again += 1;
                    run_id = RunId::from(format!("{}/{segment}~{again}", ctx.run_id()));
                    stored = nest.store.load_run(&run_id).await?;
                }
                // A process that stopped mid-step left this child behind: take it up where it
                // stands rather than run it twice.
                match stored {
                    Some(record) if record.status == RunStatus::Completed => {
                        let state =
                            C::deserialize(&*record.state).map_err(|source| RunError::State {
                                run_id: run_id.clone(),
                                action: "read from",
                                source,
                            })?;
                        return Ok(Outcome::Completed {
                            run_id,
                            state,
                            steps: record.steps,
                        });
                    }
                    Some(record) if record.status == RunStatus::Paused => {
                        self.reopen(nest, &run_id, RunStatus::Paused).await?
                    }
                    Some(_) => self.reopen(nest, &run_id, RunStatus::Running).await?,
                    None => {
                        let input = match &self.output {
                            Output::Replace => {
                                let any: &dyn Any = parent;
                                any.downcast_ref::<C>().cloned().ok_or_else(|| {
                                    RunError::SubgraphAnswer {
                                        run_id: run_id.clone(),
                                        expected: std::any::type_name::<C>(),
                                    }
                                })?
                            }
                            // A state made for the child is an input, folded as one; the
                            // parent's own state (above) is committed already.
                            Output::Map(map) => map.input(parent).fold_input(),
                        };
                        Run::with_id(self.nested(nest), run_id, input)
                    }
                }
            }
        };
        run = run
            .with_cancellation(ctx.cancellation().clone())
            .forwarding(ctx.run.forward.clone());
        if let Some(sink) = &ctx.run.subgraphs {
            let segment = format!("{}@{}", ctx.node(), ctx.step());
            run = run.streaming_nested(sink, segment);
        }
        if matches!(self.output, Output::Replace) {
            run = run.updating(ctx.run.updates.clone(), ctx.node, ctx.step());
        }
        if !run.interrupts().is_empty() {
            // Still paused (a stopped process had written the pause): ask again.
            return Ok(run.into_outcome());
        }
        run.finish().await
    }
}

#[async_trait]
impl<P: GraphState, C: GraphState> Node<P> for SubgraphNode<P, C> {
    async fn run(
        &self,
        state: Arc<P>,
        ctx: &mut NodeContext,
    ) -> Result<NodeResult<P::Update>, NodeError> {
        let nest =
            ctx.run.nest.clone().ok_or_else(|| {
                NodeError::msg("a subgraph node ran outside a run that nests graphs")
            })?;
        let resume = ctx.nested.take().and_then(|nested| nested.resume.clone());
        let outcome = self
            .drive(&state, ctx, &nest, resume)
            .await
            .map_err(|error| {
                NodeError::msg(format!("subgraph `{}`: {error}", self.child.name()))
            })?;
        match outcome {
            Outcome::Completed { state: child, .. } => match &self.output {
                Output::Replace => {
                    ctx.nested = Some(Arc::new(Nested {
                        replaced: Some(Arc::new(child)),
                        ..Nested::default()
                    }));
                    Ok(NodeResult::None)
                }
                Output::Map(map) => Ok(NodeResult::Update(map.output(&state, child))),
            },
            Outcome::Paused {
                run_id, interrupts, ..
            } => {
                ctx.nested = Some(Arc::new(Nested {
                    paused: Some((run_id, interrupts)),
                    ..Nested::default()
                }));
                Ok(NodeResult::None)
            }
        }
    }
}

/// Whether a child run stopped short of its end (failed or cancelled): only a retry takes it up.
fn stopped(status: RunStatus) -> bool {
    matches!(status, RunStatus::Failed | RunStatus::Cancelled)
}

/// What a run asks of its subgraph nodes without knowing their child's state type.
#[async_trait]
pub(crate) trait Subgraph<P: GraphState>: Send + Sync + 'static {
    /// For a downcast to the same-state node, which the parent answers with its own type.
    fn as_any(&self) -> &dyn Any;

    /// Answers the paused child `run_id`, each answer of the parent's answer type.
    async fn answer(&self, nest: &Nest, run_id: &RunId, answers: Answers) -> Result<(), RunError>;

    /// The parent's fields the node writes (E0214): what its child writes, on the same state
    /// type; `None` (anything) through a mapping.
    fn writes(&self) -> Option<Vec<String>>;

    /// The site typing the child's question `id` (its own id, in the child run), asked with a
    /// request of `kind` (see `CompiledGraph::site_below`).
    fn site(&self, id: &str, kind: &str) -> Option<crate::reply::AnswerSite>;

    /// The child's typed pause sites (`CompiledGraph::answer_sites`).
    fn answer_sites(&self) -> Vec<crate::interrupt::AnswerSiteInfo>;

    /// Whether the child's final state is the parent's (the same state type): two such nodes
    /// cannot complete in one step (E0218).
    fn replaces(&self) -> bool;
}

#[async_trait]
impl<P: GraphState, C: GraphState> Subgraph<P> for SubgraphNode<P, C> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    async fn answer(&self, nest: &Nest, run_id: &RunId, answers: Answers) -> Result<(), RunError> {
        let Some(answer) = &self.answer else {
            return Err(RunError::SubgraphAnswer {
                run_id: run_id.clone(),
                expected: "an answer type of the subgraph's state (it implements no ApplyResume)",
            });
        };
        let run = self.reopen(nest, run_id, RunStatus::Paused).await?;
        answer(run, answers).await
    }

    fn site(&self, id: &str, kind: &str) -> Option<crate::reply::AnswerSite> {
        self.child.site_below(id, kind)
    }

    fn answer_sites(&self) -> Vec<crate::interrupt::AnswerSiteInfo> {
        self.child.answer_sites()
    }

    fn replaces(&self) -> bool {
        matches!(self.output, Output::Replace)
    }

    fn writes(&self) -> Option<Vec<String>> {
        match self.output {
            Output::Replace => self.child.writes(),
            Output::Map(_) => None,
        }
    }
}

impl<S: ApplyResume> SubgraphNode<S, S> {
    /// Answers the paused child `run_id`, on the parent's own state type.
    pub(crate) async fn answer_same(
        &self,
        nest: &Nest,
        run_id: &RunId,
        answers: Vec<(String, S::Input)>,
    ) -> Result<(), RunError> {
        let mut run = self.reopen(nest, run_id, RunStatus::Paused).await?;
        run.resume(crate::interrupt::Answers::Each(answers)).await
    }
}
