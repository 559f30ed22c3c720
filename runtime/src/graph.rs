//! `CompiledGraph`: a checked topology, ready to start, invoke and resume runs.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use trellis_graph::Blueprint;

use crate::checkpoint::{Checkpointer, Name, RunRecord, RunStatus, SharedCheckpointer};
use crate::errors::{BuildDiagnostic, RunError, RunFailure};
use crate::event::{EventBus, EventStream};
use crate::id::RunId;
use crate::node::Node;
use crate::options::NodeOptions;
use crate::runner::stream::{RunStream, StreamModes};
use crate::runner::{Outcome, Run};
use crate::state::GraphState;

/// Node name → position, hashed with the rules' FNV (names are the program's own, so `std`'s
/// DoS-resistant hasher buys nothing and costs more than the lookups it serves, at build and
/// in every router that asks `Visits::of`).
/// Keyed by the nodes' own names (`NodeSpec::name`), so that building it copies no string.
pub(crate) type NameIndex = HashMap<Arc<str>, usize, rustc_hash::FxBuildHasher>;

/// A send edge's function: the branches to run, from the merged state (`Err`: an input that
/// could not be written as JSON).
pub(crate) type FanFn<S> = Box<
    dyn Fn(&S, &Visits<'_>) -> Result<Vec<crate::node::SendTo>, serde_json::Error> + Send + Sync,
>;

/// Picks a conditional edge's target from the merged state; `Err` carries an undeclared choice.
pub(crate) type RouterFn<S> =
    Box<dyn Fn(&S, &Visits<'_>, &[(Arc<str>, Target)]) -> Result<Target, String> + Send + Sync>;

/// What a router sees besides the state: how often each node has run so far in this run, so
/// that a loop can end on its own terms before a node's `max_visits` fails the run.
///
/// ```
/// # use trellis::{END, GraphBuilder, NodeOptions, NodeResult, START, WholeState};
/// # #[derive(Clone, Default, serde::Serialize, serde::Deserialize)] struct Draft;
/// # impl WholeState for Draft {}
/// let mut builder = GraphBuilder::<Draft>::new("Redraft");
/// builder
///     .add_node_fn_with("draft", |_, _| async { Ok(NodeResult::None) }, NodeOptions::new().max_visits(5))
///     .add_edge(START, "draft")
///     // Three drafts are enough: end gracefully rather than fail at the fifth.
///     .add_conditional_edges_with_visits(
///         "draft",
///         |_, visits| if visits.of("draft") < 3 { "draft" } else { END },
///         ["draft", END],
///     );
/// # builder.compile().unwrap();
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Visits<'a> {
    index: &'a NameIndex,
    counts: &'a [u32],
}

impl<'a> Visits<'a> {
    pub(crate) fn new(index: &'a NameIndex, counts: &'a [u32]) -> Self {
        Visits { index, counts }
    }

    /// How many times `node` has run in this run, the step just finished included (0 for a
    /// name the graph does not have).
    pub fn of(&self, node: &str) -> u32 {
        self.index
            .get(node)
            .and_then(|&at| self.counts.get(at))
            .copied()
            .unwrap_or(0)
    }
}

/// Where an edge leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Node(usize),
    End,
}

/// A node's (or START's) one outgoing edge.
pub(crate) enum Edge<S> {
    Static(Target),
    Conditional {
        targets: Vec<(Arc<str>, Target)>,
        router: RouterFn<S>,
    },
    Fork(Vec<usize>),
    /// Into join `barrier` (of [`Topology::joins`]): its node runs once all its sources are done.
    Join(usize),
    /// A dynamic fan-out: `fan` sends branches, each to one of `targets` (`None`: a graph
    /// declared from a blueprint that was given no function for it).
    Each {
        targets: Vec<(Arc<str>, usize)>,
        fan: Option<FanFn<S>>,
    },
}

/// A waiting join: `target` runs once every one of `sources` has completed since it last ran.
pub(crate) struct Join {
    pub(crate) target: usize,
    /// In the order their edges were declared.
    pub(crate) sources: Vec<usize>,
}

// In declaration order, `repr(C)`: what every step of the node reads (the node, its name, its
// edge) shares the spec's first cache lines, the options (~200 bytes, read by rare paths) come
// after. A 1,000-node chain's specs do not fit the first caches; laid out by the compiler,
// a step touched four or five lines of its node's.
#[repr(C)]
pub(crate) struct NodeSpec<S: GraphState> {
    pub(crate) node: Arc<dyn Node<S>>,
    pub(crate) name: Arc<str>,
    /// Its one outgoing edge (the rules make sure there is exactly one).
    pub(crate) edge: Edge<S>,
    pub(crate) on_error: Option<usize>,
    pub(crate) options: NodeOptions,
    /// For a subgraph node: the same node, seen as one (to answer its child's questions).
    pub(crate) subgraph: Option<Arc<dyn crate::subgraph::Subgraph<S>>>,
    /// The types its pauses are answered with, where declared.
    pub(crate) sites: Sites,
}

/// The answer types of one node's pauses: its `interrupt before|after`'s, and its own
/// questions' (`asks Question -> Answer;`). `None` takes any answer of the state's type.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sites {
    pub(crate) pause: Option<crate::reply::AnswerSite>,
    pub(crate) asked: Option<crate::reply::AnswerSite>,
}

impl Sites {
    /// The site a pause at `point` is answered at.
    pub(crate) fn at(
        &self,
        point: crate::interrupt::InterruptPoint,
    ) -> Option<&crate::reply::AnswerSite> {
        match point {
            crate::interrupt::InterruptPoint::Node => self.asked.as_ref(),
            _ => self.pause.as_ref(),
        }
    }
}

impl<S: GraphState> NodeSpec<S> {
    /// Whether the node runs a graph on this very state, whose final state its run takes.
    pub(crate) fn runs_same_state(&self) -> bool {
        self.subgraph.as_ref().is_some_and(|subgraph| {
            subgraph
                .as_any()
                .is::<crate::subgraph::SubgraphNode<S, S>>()
        })
    }
}

pub(crate) struct Topology<S: GraphState> {
    pub(crate) name: Arc<str>,
    pub(crate) nodes: Vec<NodeSpec<S>>,
    /// The node names, shared with every run's node contexts.
    pub(crate) names: Arc<[Arc<str>]>,
    pub(crate) index: NameIndex,
    pub(crate) entry: Edge<S>,
    /// The waiting joins, one per node joined into, in the order their nodes are declared.
    pub(crate) joins: Vec<Join>,
    pub(crate) max_steps: u32,
    /// A stable hash of the nodes and edges (see `CompiledGraph::fingerprint`).
    pub(crate) fingerprint: Name,
    /// The state's Rust type (`std::any::type_name`), as every checkpoint names it.
    pub(crate) state_type: Name,
    /// What was declared, as the rules and UIs see it.
    pub(crate) blueprint: Blueprint,
    /// What the rules warned about.
    pub(crate) warnings: Vec<BuildDiagnostic>,
    /// Whether a node runs a graph (its runs then give children a place to keep checkpoints).
    pub(crate) nests: bool,
    /// Whether a node asks before it runs (`interrupt before`): most graphs have none, and
    /// their steps then skip looking for one.
    pub(crate) asks_before: bool,
}

impl<S: GraphState> Topology<S> {
    /// The index of the node called `name`.
    pub(crate) fn find(&self, name: &str) -> Result<usize, RunError> {
        self.index
            .get(name)
            .copied()
            .ok_or_else(|| RunError::UnknownNode {
                graph: self.name.to_string(),
                node: name.to_owned(),
            })
    }
}

impl<S> Edge<S> {
    /// The edge as canonical text, for the fingerprint, appended to `out` (`static b`,
    /// `conditional b __end__`, `fork b c`, `join d`). Stored runs carry the fingerprint: the
    /// text must not change.
    pub(crate) fn describe(&self, nodes: &[NodeSpec<S>], joins: &[Join], out: &mut String)
    where
        S: GraphState,
    {
        let name = |t: &Target| match *t {
            Target::End => crate::END,
            Target::Node(i) => &*nodes[i].name,
        };
        let mut list = |kind: &str, names: &mut dyn Iterator<Item = &str>| {
            out.push_str(kind);
            for (at, name) in names.enumerate() {
                if at > 0 {
                    out.push(' ');
                }
                out.push_str(name);
            }
        };
        match self {
            Edge::Static(target) => list("static ", &mut std::iter::once(name(target))),
            Edge::Conditional { targets, .. } => {
                list("conditional ", &mut targets.iter().map(|(_, t)| name(t)));
            }
            Edge::Fork(targets) => {
                list(
                    "fork ",
                    &mut targets.iter().map(|&i| name(&Target::Node(i))),
                );
            }
            Edge::Join(barrier) => list(
                "join ",
                &mut std::iter::once(name(&Target::Node(joins[*barrier].target))),
            ),
            Edge::Each { targets, .. } => list("send ", &mut targets.iter().map(|(n, _)| &**n)),
        }
    }

    /// The target called `name` among those this edge declares.
    pub(crate) fn declared(
        &self,
        name: &str,
        nodes: &[NodeSpec<S>],
        joins: &[Join],
    ) -> Option<Target>
    where
        S: GraphState,
    {
        let by_name = |t: &Target| match *t {
            Target::End => name == crate::END,
            Target::Node(i) => &*nodes[i].name == name,
        };
        match self {
            Edge::Static(target) => by_name(target).then_some(*target),
            Edge::Conditional { targets, .. } => {
                targets.iter().map(|&(_, t)| t).find(|t| by_name(t))
            }
            Edge::Fork(targets) => targets
                .iter()
                .map(|&i| Target::Node(i))
                .find(|t| by_name(t)),
            Edge::Join(barrier) => Some(Target::Node(joins[*barrier].target)).filter(by_name),
            Edge::Each { targets, .. } => targets
                .iter()
                .find(|(n, _)| &**n == name)
                .map(|&(_, i)| Target::Node(i)),
        }
    }

    /// Pushes the nodes this edge leads to from `state`; `Err` is a router's undeclared choice.
    /// A join or send edge pushes nothing: the run counts the arrival, or takes the branches
    /// (`Run::follow_edge`).
    pub(crate) fn follow(
        &self,
        state: &S,
        visits: &Visits<'_>,
        next: &mut Vec<usize>,
    ) -> Result<(), String> {
        let target = match self {
            Edge::Static(target) => *target,
            Edge::Conditional { targets, router } => router(state, visits, targets)?,
            Edge::Fork(targets) => {
                next.extend_from_slice(targets);
                return Ok(());
            }
            Edge::Join(_) | Edge::Each { .. } => return Ok(()),
        };
        if let Target::Node(i) = target {
            next.push(i);
        }
        Ok(())
    }
}

/// A checked graph: start runs, invoke them to the end, resume paused ones, watch events.
///
/// Cloning is cheap and clones share the topology, the checkpointer and the event stream.
pub struct CompiledGraph<S: GraphState> {
    pub(crate) topology: Arc<Topology<S>>,
    pub(crate) events: Arc<EventBus>,
    pub(crate) checkpointer: Option<Arc<dyn Checkpointer>>,
    /// Told of every branch made of a run (see [`with_branching`](Self::with_branching)).
    pub(crate) branching: Option<Arc<dyn crate::run::Branching>>,
    /// Every how many checkpoints a run writes its whole state (see
    /// [`with_snapshot_every`](Self::with_snapshot_every)).
    pub(crate) snapshot_every: u32,
}

impl<S: GraphState> Clone for CompiledGraph<S> {
    fn clone(&self) -> Self {
        CompiledGraph {
            topology: Arc::clone(&self.topology),
            events: Arc::clone(&self.events),
            checkpointer: self.checkpointer.clone(),
            branching: self.branching.clone(),
            snapshot_every: self.snapshot_every,
        }
    }
}

impl<S: GraphState> fmt::Debug for CompiledGraph<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledGraph")
            .field("name", &self.name())
            .field("nodes", &self.node_names().collect::<Vec<_>>())
            .field("checkpointer", &self.checkpointer.is_some())
            .finish()
    }
}

impl<S: GraphState> CompiledGraph<S> {
    /// Where a run of this graph's subgraph nodes keep their child runs: this graph's
    /// checkpointer, or memory for the life of the run; `None` for a graph without any.
    pub(crate) fn nest(&self) -> Option<Arc<crate::subgraph::Nest>> {
        self.topology.nests.then(|| {
            let store: Arc<dyn Checkpointer> = match &self.checkpointer {
                Some(store) => Arc::clone(store),
                None => Arc::new(crate::checkpoint::InMemoryCheckpointer::new()),
            };
            Arc::new(crate::subgraph::Nest {
                store,
                events: Arc::clone(&self.events),
            })
        })
    }

    pub(crate) fn new(
        topology: Topology<S>,
        events: EventBus,
        checkpointer: Option<Arc<dyn Checkpointer>>,
    ) -> Self {
        CompiledGraph {
            topology: Arc::new(topology),
            events: Arc::new(events),
            checkpointer,
            branching: None,
            snapshot_every: Self::SNAPSHOT_EVERY,
        }
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.topology.name
    }

    /// A hash of the graph's topology — name, nodes in order, every edge — stable across
    /// processes, machines and builds (16 hex digits). Every checkpoint records it.
    pub fn fingerprint(&self) -> &str {
        &self.topology.fingerprint
    }

    /// The topology and settings, as declared: the same type, and the same JSON, as
    /// `trellis export` gives for a `.graph` file (for a graph generated from one, equal to it).
    pub fn blueprint(&self) -> &Blueprint {
        &self.topology.blueprint
    }

    /// What the graph writes, for E0214 in a parent that runs it as a subgraph node: every
    /// field its nodes declare; `None` when one of them may write anything.
    pub(crate) fn writes(&self) -> Option<Vec<String>> {
        let nodes = &self.topology.nodes;
        trellis_graph::WriteSets::new(self.blueprint(), |at, _| {
            nodes.get(at)?.subgraph.as_ref()?.writes()
        })
        .union()
    }

    /// What the graph rules warned about when the graph was compiled (a node START cannot
    /// reach, a cycle no `max_visits` bounds, …).
    pub fn warnings(&self) -> &[BuildDiagnostic] {
        &self.topology.warnings
    }

    /// The nodes, in declaration order.
    pub fn node_names(&self) -> impl Iterator<Item = &str> {
        self.topology.nodes.iter().map(|n| &*n.name)
    }

    /// The same graph, recording runs in `checkpointer`.
    #[must_use]
    pub fn with_checkpointer<C>(mut self, checkpointer: Arc<C>) -> Self
    where
        C: SharedCheckpointer + ?Sized,
    {
        self.checkpointer = Some(checkpointer.shared());
        self
    }

    /// How often a run writes its whole state by default: one checkpoint in 64.
    pub const SNAPSHOT_EVERY: u32 = 64;

    /// The same graph, its runs writing their whole state in one checkpoint of every `n`
    /// (at least 1) and in the others what the step changed: the items an `append` field gained
    /// and the fields it replaced (a delta checkpoint; see
    /// [`GraphState::changes`](crate::GraphState::changes)). Reading a checkpoint folds at most
    /// `n - 1` deltas into the whole state before it, so `n` bounds what a load costs; `1`
    /// writes every state whole. A run's first checkpoint, and the first after it is resumed
    /// or retried, hold the whole state. The default is [`SNAPSHOT_EVERY`](Self::SNAPSHOT_EVERY).
    ///
    /// ```
    /// # use trellis::{GraphBuilder, WholeState, END, START, NodeResult};
    /// # #[derive(Clone, serde::Serialize, serde::Deserialize)] struct S;
    /// # impl WholeState for S {}
    /// # let mut builder = GraphBuilder::<S>::new("g");
    /// # builder.add_node_fn("a", |_, _| async { Ok(NodeResult::Update(S)) });
    /// # builder.add_edge(START, "a").add_edge("a", END);
    /// let graph = builder.compile()?.with_snapshot_every(16);
    /// assert_eq!(graph.snapshot_every(), 16);
    /// # Ok::<(), trellis::CompileError>(())
    /// ```
    #[must_use]
    pub fn with_snapshot_every(mut self, n: u32) -> Self {
        self.snapshot_every = n.max(1);
        self
    }

    /// Every how many checkpoints a run writes its whole state
    /// ([`with_snapshot_every`](Self::with_snapshot_every)).
    pub fn snapshot_every(&self) -> u32 {
        self.snapshot_every
    }

    /// The same graph, telling `branching` of every branch made of one of its runs (a replay,
    /// a fork, an edit) before the branch runs: for what its nodes keep per run beside the
    /// checkpoints (an agent's transcript), which the branch takes along.
    #[must_use]
    pub fn with_branching(mut self, branching: Arc<dyn crate::run::Branching>) -> Self {
        self.branching = Some(branching);
        self
    }

    /// The checkpointer runs are recorded in, if any.
    pub fn checkpointer(&self) -> Option<&Arc<dyn Checkpointer>> {
        self.checkpointer.as_ref()
    }

    /// Subscribes to the events of every run of this graph from now on.
    pub fn subscribe(&self) -> EventStream {
        self.events.subscribe()
    }

    /// A new run on `input`, to drive step by step; nothing runs until the first
    /// [`Run::step`]. The input is folded in by the state's reducers, as any update is
    /// ([`GraphState::fold_input`]).
    pub fn start(&self, input: S) -> Run<S> {
        Run::new(self.clone(), input.fold_input())
    }

    /// A new run on `input`, read as a stream of what `modes` asks for: each step's updates,
    /// the state after each step, what nodes emit, this run's events. The run advances as the
    /// stream is read and the stream ends when the run pauses, completes or fails;
    /// [`RunStream::finish`] then gives the [`Outcome`], as [`invoke`](Self::invoke) does.
    /// `modes` is one [`StreamMode`](crate::stream::StreamMode) or several joined with `|`.
    ///
    pub fn stream(&self, input: S, modes: impl Into<StreamModes>) -> RunStream<S> {
        self.start(input).into_stream(modes.into())
    }

    /// Runs `input` to the end or to the first pause.
    ///
    /// # Errors
    /// A [`RunFailure`]: the run's id, to [`retry`](Self::retry) it or read its
    /// [`history`](Self::history), and the [`RunError`] that failed it. With a checkpointer,
    /// the run is recorded as failed with its last committed state.
    pub async fn invoke(&self, input: S) -> Result<Outcome<S>, RunFailure> {
        let run = self.start(input);
        let run_id = run.run_id().clone();
        run.finish()
            .await
            .map_err(|error| RunFailure { run_id, error })
    }

    /// Loads a paused run from the checkpointer, to resume it step by step with
    /// [`Run::resume`].
    ///
    /// # Errors
    /// [`RunError::NoCheckpointer`], [`RunError::RunNotFound`], [`RunError::AlreadyCompleted`],
    /// [`RunError::AlreadyFailed`], [`RunError::StillRunning`], [`RunError::WrongGraph`], or the
    /// checkpointer's or the state's error.
    pub async fn load(&self, run_id: &RunId) -> Result<Run<S>, RunError> {
        let (store, record) = self.stored(run_id, RunStatus::Paused).await?;
        let checkpoint = latest(store.as_ref(), &record.run_id).await?;
        Run::from_checkpoint(self.clone(), record, checkpoint)
    }

    /// The run's record, if this graph has a checkpointer holding it, it belongs to this
    /// graph, and it is `wanted`; otherwise the error that says which of these failed.
    async fn stored(
        &self,
        run_id: &RunId,
        wanted: RunStatus,
    ) -> Result<(Arc<dyn Checkpointer>, RunRecord), RunError> {
        let store = self
            .checkpointer
            .clone()
            .ok_or_else(|| RunError::NoCheckpointer {
                graph: self.name().to_owned(),
                run_id: run_id.clone(),
            })?;
        let record = store
            .load_run(run_id)
            .await?
            .ok_or_else(|| RunError::RunNotFound {
                run_id: run_id.clone(),
            })?;
        expect_status(&record, wanted)?;
        if record.graph != self.name() {
            return Err(RunError::WrongGraph {
                run_id: record.run_id,
                expected: self.name().to_owned(),
                found: record.graph.to_string(),
            });
        }
        Ok((store, record))
    }
}

/// A stored run's latest checkpoint; a run without one cannot be continued.
pub(crate) async fn latest(
    store: &dyn Checkpointer,
    run_id: &RunId,
) -> Result<crate::checkpoint::Checkpoint, RunError> {
    store
        .latest_checkpoint(run_id)
        .await?
        .ok_or_else(|| RunError::Unresumable {
            run_id: run_id.clone(),
            reason: "it has no checkpoint".to_owned(),
        })
}

impl<S: GraphState> CompiledGraph<S> {
    /// Continues a run whose process stopped while running it (a crash, a kill, a lost machine)
    /// from its last checkpoint: awaited, to its end or next pause; or streamed
    /// ([`Continuation::stream`](crate::run::Continuation::stream)), or left to a worker. So
    /// is a branch [`update_state`](Self::update_state) recorded.
    ///
    /// This is not a resume: a paused run waits for answers ([`resume`](Self::resume)); a
    /// running one was interrupted by accident. The run must be `running` and its owner gone:
    /// a process of this machine that no longer exists (known at once), or an owner whose lease
    /// ran out without a checkpoint (see [`RunRecord::lease_until`](crate::checkpoint::RunRecord::lease_until)).
    /// Of two processes continuing one run, one wins. The step that was in flight when the
    /// owner stopped was never committed, so it runs again; no committed step runs twice.
    ///
    /// # Errors
    /// [`RunError::StillRunning`] while the owner may be alive; [`RunError::Paused`] for a paused
    /// run; [`RunError::AlreadyCompleted`], [`RunError::AlreadyFailed`],
    /// [`RunError::RunNotFound`], [`RunError::NoCheckpointer`], [`RunError::WrongGraph`], when
    /// it is awaited; then as [`invoke`](Self::invoke).
    pub fn continue_run(&self, run_id: &RunId) -> crate::run::Continuation<'_, S> {
        let run_id = run_id.clone();
        crate::run::Continuation::new(async move { self.take_over(&run_id).await })
    }

    /// The run `run_id`, claimed from its gone owner and loaded from its last checkpoint: what
    /// [`continue_run`](Self::continue_run) goes on with.
    async fn take_over(&self, run_id: &RunId) -> Result<Run<S>, RunError> {
        let (store, mut record) = self.stored(run_id, RunStatus::Running).await?;
        let run_id = record.run_id.clone();
        let me = crate::owner::current();
        // A claim lost to another gone owner is tried again: a process killed while taking the
        // run over (its claim sent, not yet committed) can win the race on a server and then
        // be as gone as the one before it. A claim lost to a live owner is final.
        let mut attempts = 0;
        loop {
            let owner_gone = match record.owner.as_deref() {
                None => true,
                // This very process (not one of its workers, which have names of their own).
                Some(owner) if owner == me => false,
                Some(owner) => {
                    crate::owner::is_gone(owner)
                        || record
                            .lease_until
                            .is_none_or(|until| until < crate::id::Timestamp::now())
                }
            };
            match record.status {
                RunStatus::Running if owner_gone => {}
                RunStatus::Running => return Err(RunError::StillRunning { run_id }),
                RunStatus::Paused => return Err(RunError::Paused { run_id }),
                RunStatus::Completed => return Err(RunError::AlreadyCompleted { run_id }),
                RunStatus::Failed => return Err(RunError::AlreadyFailed { run_id }),
                RunStatus::Cancelled => return Err(RunError::AlreadyCancelled { run_id }),
            }
            // Claim first, then read: a statement the gone owner sent just before it died may
            // still commit on a server, so what was read before the claim can be a step behind.
            // Once this process holds the run, the gone owner's writes are fenced out.
            let now = crate::id::Timestamp::now();
            let mut claim = record.clone();
            claim.owner = Some(Name::from(me));
            claim.lease_until = Some(now.plus(crate::runner::LEASE));
            claim.updated_at = now;
            if store.take_over(&claim, record.owner.as_deref()).await? {
                record = claim;
                break;
            }
            attempts += 1;
            if attempts == 3 {
                return Err(RunError::StillRunning { run_id });
            }
            record = store
                .load_run(&run_id)
                .await?
                .ok_or_else(|| RunError::RunNotFound {
                    run_id: run_id.clone(),
                })?;
        }
        let claim = record;
        let held = async {
            let record = store
                .load_run(&run_id)
                .await?
                .ok_or_else(|| RunError::RunNotFound {
                    run_id: run_id.clone(),
                })?;
            let checkpoint = latest(store.as_ref(), &run_id).await?;
            Run::from_checkpoint(self.clone(), record, checkpoint)
        };
        match held.await {
            Ok(run) => Ok(run),
            Err(error) => {
                // Not continued here: hand it back, so that it is not held by a live process.
                let mut released = claim;
                released.owner = None;
                released.lease_until = None;
                released.updated_at = crate::id::Timestamp::now();
                if let Err(failure) = store.take_over(&released, Some(me)).await {
                    tracing::warn!(target: "trellis", run_id = %run_id, error = %failure, "cannot hand the run back");
                }
                Err(error)
            }
        }
    }
}

impl<S: GraphState> CompiledGraph<S> {
    /// Records a new run on `input` for a [`Worker`](crate::worker::Worker) to execute, and returns its
    /// id at once: the run is `running` with no owner (its `start` checkpoint written), and the
    /// first worker of this graph that is free claims it.
    ///
    /// # Errors
    /// [`RunError::NoCheckpointer`]; the checkpointer's error; an entry router naming an
    /// undeclared target (the run is then recorded as failed).
    pub async fn enqueue(&self, input: S) -> Result<RunId, RunError> {
        self.start(input).enqueue().await
    }
}

/// Nothing when `record` is `wanted`; otherwise the error that says where the run stands.
pub(crate) fn expect_status(record: &RunRecord, wanted: RunStatus) -> Result<(), RunError> {
    let run_id = record.run_id.clone();
    Err(match record.status {
        status if status == wanted => return Ok(()),
        RunStatus::Completed => RunError::AlreadyCompleted { run_id },
        RunStatus::Failed => RunError::AlreadyFailed { run_id },
        RunStatus::Cancelled => RunError::AlreadyCancelled { run_id },
        RunStatus::Running => RunError::StillRunning { run_id },
        RunStatus::Paused => RunError::Paused { run_id },
    })
}
