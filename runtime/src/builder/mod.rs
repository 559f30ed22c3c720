//! `GraphBuilder`: declare nodes and edges, then `compile()` checks them by the graph rules the
//! `.graph` language shares (`trellis-graph`) and makes them runnable.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use trellis_graph::{Blueprint, Edge as EdgeDecl, EdgeKind, Endpoint, Violation};

use crate::checkpoint::{Checkpointer, SharedCheckpointer};
use crate::errors::{BuildDiagnostic, CompileError};
use crate::graph::{CompiledGraph, FanFn, RouterFn, Visits};
use crate::node::{FnNode, Node, NodeContext, NodeError, NodeResult};
use crate::options::NodeOptions;
use crate::state::{ApplyResume, GraphState};

mod answers;
mod help;
mod resolve;
mod sends;
mod writes;
use crate::subgraph::{Subgraph, SubgraphMap, SubgraphNode};
pub use sends::SentNode;

pub use trellis_graph::{END, START};

/// Declares a graph; [`compile`](GraphBuilder::compile) checks it and makes it runnable.
///
/// Mistakes are collected, not reported one by one: `compile` reports all of them, with the
/// codes and messages the `.graph` language uses for the same mistakes (both front doors share
/// one rule set, `trellis-graph`).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use serde::{Deserialize, Serialize};
/// use trellis::{END, GraphBuilder, NodeResult, START, WholeState};
///
/// #[derive(Clone, Default, Serialize, Deserialize)]
/// struct Greeting(String);
/// impl WholeState for Greeting {}
///
/// let mut builder = GraphBuilder::<Greeting>::new("Hello");
/// builder
///     .add_node_fn("greet", |state, _ctx| async move {
///         Ok(Greeting(format!("hello, {}", state.0)).into())
///     })
///     .add_edge(START, "greet")
///     .add_edge("greet", END);
/// let graph = builder.compile().unwrap();
/// let outcome = graph.invoke(Greeting("world".into())).await.unwrap();
/// assert_eq!(outcome.state().0, "hello, world");
/// # });
/// ```
pub struct GraphBuilder<S: GraphState> {
    /// What is declared, as the rules and UIs see it.
    blueprint: Blueprint,
    /// Per blueprint node: what runs, and how.
    nodes: Vec<(Arc<dyn Node<S>>, NodeOptions)>,
    /// Per blueprint edge: the router of a conditional edge.
    routers: Vec<Option<RouterFn<S>>>,
    /// The function of each send edge, by the edge's position.
    fans: HashMap<usize, FanFn<S>>,
    /// The subgraph nodes, by the node's position.
    subgraphs: HashMap<usize, Arc<dyn Subgraph<S>>>,
    /// The answer types set for nodes' pauses, by node name, checked at `compile`.
    sites: Vec<(String, answers::Pause, crate::reply::AnswerSite)>,
    event_capacity: usize,
    checkpointer: Option<Arc<dyn Checkpointer>>,
}

impl<S: GraphState> GraphBuilder<S> {
    /// The bound on super-steps per run unless [`set_max_steps`](Self::set_max_steps) says
    /// otherwise.
    pub const DEFAULT_MAX_STEPS: u32 = 1000;

    /// How many events a subscriber may fall behind, unless
    /// [`set_event_capacity`](Self::set_event_capacity) says otherwise.
    pub const DEFAULT_EVENT_CAPACITY: usize = 1024;

    /// An empty graph called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        GraphBuilder {
            blueprint: Blueprint::new(name),
            nodes: Vec::new(),
            routers: Vec::new(),
            fans: HashMap::new(),
            subgraphs: HashMap::new(),
            sites: Vec::new(),
            event_capacity: Self::DEFAULT_EVENT_CAPACITY,
            checkpointer: None,
        }
    }

    /// A builder declaring everything `blueprint` does — nodes with their options, edges, the
    /// step bound, docs — with `node(position, description)` running each node and
    /// `router(position, edge)` choosing the target of each conditional edge from the state and
    /// the nodes' [`Visits`] (positions in `blueprint.nodes` and `blueprint.edges`).
    ///
    /// This is what code generated from a `.graph` file calls; a topology loaded as JSON can be
    /// given behaviour the same way.
    ///
    /// ```
    /// use trellis::blueprint::{Blueprint, Edge, Endpoint, Node};
    /// use trellis::{GraphBuilder, NodeResult, WholeState};
    ///
    /// #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
    /// struct Count(u32);
    /// impl WholeState for Count {}
    ///
    /// let mut blueprint = Blueprint::new("Once");
    /// blueprint.nodes.push(Node::new("add"));
    /// blueprint.edges.push(Edge::to(Endpoint::Start, Endpoint::Node("add".into())));
    /// blueprint.edges.push(Edge::to(Endpoint::Node("add".into()), Endpoint::End));
    ///
    /// let graph = GraphBuilder::<Count>::from_blueprint(
    ///     blueprint.clone(),
    ///     |_, _| trellis::node_fn(|state: std::sync::Arc<Count>, _| async move {
    ///         Ok(Count(state.0 + 1).into())
    ///     }),
    ///     |_, _| |_: &Count, _: &trellis::Visits<'_>| trellis::END,
    /// )
    /// .compile()?;
    /// assert_eq!(graph.blueprint(), &blueprint);
    /// # Ok::<(), trellis::CompileError>(())
    /// ```
    pub fn from_blueprint<N, R, T>(
        blueprint: Blueprint,
        mut node: impl FnMut(usize, &trellis_graph::Node) -> N,
        mut router: impl FnMut(usize, &EdgeDecl) -> R,
    ) -> Self
    where
        N: Node<S>,
        R: Fn(&S, &Visits<'_>) -> T + Send + Sync + 'static,
        T: AsRef<str>,
    {
        let nodes = blueprint
            .nodes
            .iter()
            .enumerate()
            .map(|(at, description)| {
                let run: Arc<dyn Node<S>> = Arc::new(node(at, description));
                (run, NodeOptions::described(description))
            })
            .collect();
        let routers = blueprint
            .edges
            .iter()
            .enumerate()
            .map(|(at, edge)| {
                (edge.kind == EdgeKind::Conditional).then(|| router_fn(router(at, edge)))
            })
            .collect();
        GraphBuilder {
            blueprint,
            nodes,
            routers,
            fans: HashMap::new(),
            subgraphs: HashMap::new(),
            sites: Vec::new(),
            event_capacity: Self::DEFAULT_EVENT_CAPACITY,
            checkpointer: None,
        }
    }

    /// Declares a node with default options. Nodes run in declaration order within a step.
    pub fn add_node(&mut self, name: impl Into<String>, node: impl Node<S>) -> &mut Self {
        self.add_node_with(name, node, NodeOptions::default())
    }

    /// Declares a node with options.
    pub fn add_node_with(
        &mut self,
        name: impl Into<String>,
        node: impl Node<S>,
        options: NodeOptions,
    ) -> &mut Self {
        self.blueprint.nodes.push(options.describe(name.into()));
        self.nodes.push((Arc::new(node), options));
        self
    }

    /// Declares a closure node: `|state: Arc<S>, ctx: NodeContext| async move { … }`.
    pub fn add_node_fn<F, Fut>(&mut self, name: impl Into<String>, f: F) -> &mut Self
    where
        F: Fn(Arc<S>, NodeContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<NodeResult<S::Update>, NodeError>> + Send + 'static,
    {
        self.add_node(name, FnNode::new(f))
    }

    /// Declares a closure node with options.
    pub fn add_node_fn_with<F, Fut>(
        &mut self,
        name: impl Into<String>,
        f: F,
        options: NodeOptions,
    ) -> &mut Self
    where
        F: Fn(Arc<S>, NodeContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<NodeResult<S::Update>, NodeError>> + Send + 'static,
    {
        self.add_node_with(name, FnNode::new(f), options)
    }

    /// Declares a node that runs `child`, a graph on this graph's own state type: the child
    /// starts from the committed state, and its final state becomes the parent's (a sibling
    /// node's update in the same super-step is merged after it).
    ///
    /// The child's run is the parent's `<run>/<node>@<step>`, with steps, checkpoints (in the
    /// parent's checkpointer) and events (on the parent's bus) of its own. A pause inside it
    /// pauses the parent, asking the child's questions under ids prefixed with the child's
    /// segment (`research@3/approve@2`); resuming the parent answers the child and continues it
    /// where it stopped.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use trellis::{END, GraphBuilder, NodeResult, START, WholeState};
    /// #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
    /// struct Notes(Vec<String>);
    /// impl WholeState for Notes {}
    ///
    /// let mut research = GraphBuilder::<Notes>::new("Research");
    /// research
    ///     .add_node_fn("search", |notes, _| async move {
    ///         let mut notes = (*notes).clone();
    ///         notes.0.push("found".into());
    ///         Ok(notes.into())
    ///     })
    ///     .add_edge(START, "search")
    ///     .add_edge("search", END);
    ///
    /// let mut ticket = GraphBuilder::<Notes>::new("Ticket");
    /// ticket
    ///     .add_subgraph("research", research.compile()?)
    ///     .add_edge(START, "research")
    ///     .add_edge("research", END);
    /// let outcome = ticket.compile()?.invoke(Notes(vec!["asked".into()])).await?;
    /// assert_eq!(outcome.state().0, ["asked", "found"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn add_subgraph(&mut self, name: impl Into<String>, child: CompiledGraph<S>) -> &mut Self {
        self.add_subgraph_with(name, child, NodeOptions::default())
    }

    /// [`add_subgraph`](Self::add_subgraph) with options (`retry` runs a fresh child).
    pub fn add_subgraph_with(
        &mut self,
        name: impl Into<String>,
        child: CompiledGraph<S>,
        options: NodeOptions,
    ) -> &mut Self {
        let graph = child.name().to_owned();
        self.push_subgraph(
            name.into(),
            graph,
            Arc::new(SubgraphNode::same(child)),
            options,
        )
    }

    /// Declares a node that runs `child`, a graph on another state type: `map` makes the
    /// child's input from the parent's state and the parent's update from the child's final
    /// state. Otherwise as [`add_subgraph`](Self::add_subgraph); the child's questions are
    /// answered with the parent's answer type, which must be the child's.
    pub fn add_subgraph_mapped<C: ApplyResume>(
        &mut self,
        name: impl Into<String>,
        child: CompiledGraph<C>,
        map: impl SubgraphMap<S, C>,
        options: NodeOptions,
    ) -> &mut Self {
        let graph = child.name().to_owned();
        let node = Arc::new(SubgraphNode::mapped(child, map));
        self.push_subgraph(name.into(), graph, node, options)
    }

    /// Makes the node at position `node` of the blueprint run `child` (on this state type), as
    /// [`add_subgraph`](Self::add_subgraph) would have declared it: what a graph declared with
    /// [`from_blueprint`](Self::from_blueprint) needs for each node with `graph`. Generated
    /// `build()` calls it. A position past the nodes is ignored.
    pub fn set_subgraph(&mut self, node: usize, child: CompiledGraph<S>) -> &mut Self {
        let graph = child.name().to_owned();
        self.replace_node(node, graph, Arc::new(SubgraphNode::same(child)))
    }

    /// [`set_subgraph`](Self::set_subgraph) for a child on another state type, as
    /// [`add_subgraph_mapped`](Self::add_subgraph_mapped).
    pub fn set_subgraph_mapped<C: ApplyResume>(
        &mut self,
        node: usize,
        child: CompiledGraph<C>,
        map: impl SubgraphMap<S, C>,
    ) -> &mut Self {
        let graph = child.name().to_owned();
        self.replace_node(node, graph, Arc::new(SubgraphNode::mapped(child, map)))
    }

    fn replace_node<N>(&mut self, at: usize, graph: String, node: Arc<N>) -> &mut Self
    where
        N: Node<S> + Subgraph<S>,
    {
        if let (Some(slot), Some(description)) =
            (self.nodes.get_mut(at), self.blueprint.nodes.get_mut(at))
        {
            description.graph.get_or_insert(graph);
            self.subgraphs
                .insert(at, Arc::clone(&node) as Arc<dyn Subgraph<S>>);
            slot.0 = node;
        }
        self
    }

    fn push_subgraph<N>(
        &mut self,
        name: String,
        graph: String,
        node: Arc<N>,
        options: NodeOptions,
    ) -> &mut Self
    where
        N: Node<S> + Subgraph<S>,
    {
        let mut description = options.describe(name);
        description.graph = Some(graph);
        self.blueprint.nodes.push(description);
        self.subgraphs
            .insert(self.nodes.len(), Arc::clone(&node) as Arc<dyn Subgraph<S>>);
        self.nodes.push((node, options));
        self
    }

    fn push_edge(&mut self, from: String, kind: EdgeKind, targets: Vec<Endpoint>) {
        self.blueprint.edges.push(EdgeDecl {
            from: Endpoint::from_owned(from),
            kind,
            targets,
        });
    }

    /// A static edge: after `from` runs, `to` runs (`to` may be [`END`]; `from` may be
    /// [`START`]).
    pub fn add_edge(&mut self, from: impl Into<String>, to: impl Into<String>) -> &mut Self {
        self.push_edge(
            from.into(),
            EdgeKind::Static,
            vec![Endpoint::from_owned(to.into())],
        );
        self.routers.push(None);
        self
    }

    /// A conditional edge: after `from` runs, `router` picks one of `targets` (node names or
    /// [`END`]) from the merged state of the step. A router returning anything else fails the
    /// run with [`RunError::UndeclaredTarget`](crate::RunError::UndeclaredTarget).
    pub fn add_conditional_edges<R, I, T>(
        &mut self,
        from: impl Into<String>,
        router: R,
        targets: I,
    ) -> &mut Self
    where
        R: Fn(&S) -> T + Send + Sync + 'static,
        T: AsRef<str>,
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.add_conditional_edges_with_visits(from, move |state, _| router(state), targets)
    }

    /// A conditional edge whose router also sees how often each node has run in this run
    /// ([`Visits`]): a loop can end on its own terms instead of failing at `max_visits`.
    pub fn add_conditional_edges_with_visits<R, I, T>(
        &mut self,
        from: impl Into<String>,
        router: R,
        targets: I,
    ) -> &mut Self
    where
        R: Fn(&S, &Visits<'_>) -> T + Send + Sync + 'static,
        T: AsRef<str>,
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let targets = endpoints(targets);
        self.push_edge(from.into(), EdgeKind::Conditional, targets);
        self.routers.push(Some(router_fn(router)));
        self
    }

    /// A fork: after `from` runs, every target runs in the next step.
    pub fn add_fork<I>(&mut self, from: impl Into<String>, targets: I) -> &mut Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let targets = endpoints(targets);
        self.push_edge(from.into(), EdgeKind::Fork, targets);
        self.routers.push(None);
        self
    }

    /// A waiting join: `to` runs once every one of `sources` has completed since it last ran,
    /// whatever the lengths of the branches they end (what `.graph` writes `a & b -> to;`).
    /// Each source's one outgoing edge is this join. A source that completes again before the
    /// others counts once; after `to` is scheduled the join starts over, so a loop can join
    /// again.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use serde::{Deserialize, Serialize};
    /// use trellis::{END, GraphBuilder, GraphState, START};
    ///
    /// #[derive(Clone, Default, Serialize, Deserialize, GraphState)]
    /// struct Notes {
    ///     #[reducer(append)]
    ///     log: Vec<String>,
    /// }
    /// let note = |text: &'static str| move |_, _| async move { Ok(NotesUpdate::default().log(text).into()) };
    ///
    /// let mut graph = GraphBuilder::<Notes>::new("Research");
    /// graph
    ///     .add_node_fn("plan", note("plan"))
    ///     .add_node_fn("web", note("web"))
    ///     .add_node_fn("papers", note("papers"))
    ///     .add_node_fn("deep", note("deep"))
    ///     .add_node_fn("summarize", note("summarize"))
    ///     .add_edge(START, "plan")
    ///     .add_fork("plan", ["web", "papers"])
    ///     .add_edge("papers", "deep")
    ///     // `web` is done in step 2, `deep` in step 3: `summarize` waits, and runs once.
    ///     .add_join(["web", "deep"], "summarize")
    ///     .add_edge("summarize", END);
    /// let outcome = graph.compile()?.invoke(Notes::default()).await?;
    /// assert_eq!(outcome.state().log, ["plan", "web", "papers", "deep", "summarize"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn add_join<I>(&mut self, sources: I, to: impl Into<String>) -> &mut Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let to = Endpoint::from_owned(to.into());
        for source in sources {
            self.push_edge(source.into(), EdgeKind::Join, vec![to.clone()]);
            self.routers.push(None);
        }
        self
    }

    /// A dynamic fan-out: after `from` runs, `fan` reads the merged state and returns the
    /// branches to run in the next super-step, each a [`SendTo`](crate::send::SendTo) naming one of
    /// `targets` with an input of its own (one branch per document, say). The branches' updates
    /// are merged like any step's: in declaration order of their nodes, then in the order `fan`
    /// returned them. The step after them begins once all have finished, so a node they all
    /// lead to runs once, with every result merged. No branch ends `from`'s branch; a target
    /// that is not among `targets` fails the run with
    /// [`RunError::UndeclaredTarget`](crate::RunError::UndeclaredTarget). A target's
    /// [`NodeOptions::max_concurrency`] bounds how many of its branches run at once. `from` may
    /// be [`START`]. A node can also send with [`Command::Sends`](crate::Command::Sends) toward
    /// these targets.
    ///
    /// The inputs here are JSON, read by the target with [`NodeContext::input`], so a branch
    /// of the wrong shape fails at run time. To one node that takes a typed input, prefer
    /// [`add_send_to`](Self::add_send_to) with a node from
    /// [`add_sent_node_fn`](Self::add_sent_node_fn): then only its type compiles.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use serde::{Deserialize, Serialize};
    /// use trellis::{END, GraphBuilder, GraphState, NodeOptions, START, send::SendTo};
    ///
    /// #[derive(Clone, Default, Serialize, Deserialize, GraphState)]
    /// struct Review {
    ///     documents: Vec<String>,
    ///     #[reducer(append)]
    ///     summaries: Vec<String>,
    /// }
    ///
    /// let mut graph = GraphBuilder::<Review>::new("Review");
    /// graph
    ///     .add_node_fn_with(
    ///         "summarize",
    ///         |_, ctx| async move {
    ///             let document: String = ctx.input()?;
    ///             let words = document.split(' ').count();
    ///             Ok(ReviewUpdate::default().summaries(format!("{words} words")).into())
    ///         },
    ///         NodeOptions::new().max_concurrency(2),
    ///     )
    ///     .add_send(
    ///         START,
    ///         |review: &Review, _| {
    ///             let each = |d: &String| SendTo::json("summarize", d.as_str().into());
    ///             review.documents.iter().map(each).collect()
    ///         },
    ///         ["summarize"],
    ///     )
    ///     .add_edge("summarize", END);
    /// let documents = vec!["a b".into(), "c".into(), "d e f".into()];
    /// let outcome = graph.compile()?.invoke(Review { documents, ..Review::default() }).await?;
    /// assert_eq!(outcome.state().summaries, ["2 words", "1 words", "3 words"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn add_send<F, I>(&mut self, from: impl Into<String>, fan: F, targets: I) -> &mut Self
    where
        F: Fn(&S, &Visits<'_>) -> Vec<crate::node::SendTo> + Send + Sync + 'static,
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let targets = endpoints(targets);
        self.push_send(
            from.into(),
            targets,
            Box::new(move |state, visits| Ok(fan(state, visits))),
        )
    }

    /// A send edge from `from` to `targets`, whose branches `fan` makes: the one place a
    /// builder's send edge is added (`add_send`, `add_send_to`).
    pub(super) fn push_send(
        &mut self,
        from: String,
        targets: Vec<Endpoint>,
        fan: FanFn<S>,
    ) -> &mut Self {
        self.fans.insert(self.blueprint.edges.len(), fan);
        self.push_edge(from, EdgeKind::Each, targets);
        self.routers.push(None);
        self
    }

    /// Gives the send edge at position `edge` of the blueprint its function: what a graph
    /// declared with [`from_blueprint`](Self::from_blueprint) needs for each of its send edges
    /// (a send edge without one fails the run that reaches it with
    /// [`RunError::NoSendFunction`](crate::RunError::NoSendFunction)). The function may fail
    /// to write an input as JSON ([`SendTo::new`](crate::send::SendTo::new)): the run then fails
    /// with [`RunError::SendInput`](crate::RunError::SendInput). Generated `build()` calls it.
    pub fn set_send<F>(&mut self, edge: usize, fan: F) -> &mut Self
    where
        F: Fn(&S, &Visits<'_>) -> Result<Vec<crate::node::SendTo>, serde_json::Error>
            + Send
            + Sync
            + 'static,
    {
        self.fans.insert(edge, Box::new(fan));
        self
    }

    /// `add_edge(START, node)`.
    pub fn set_entry_point(&mut self, node: impl Into<String>) -> &mut Self {
        self.add_edge(START, node)
    }

    /// `add_edge(node, END)`.
    pub fn set_finish_point(&mut self, node: impl Into<String>) -> &mut Self {
        self.add_edge(node, END)
    }

    /// Bounds the number of super-steps of one run (default
    /// [`DEFAULT_MAX_STEPS`](Self::DEFAULT_MAX_STEPS)).
    pub fn set_max_steps(&mut self, max_steps: u32) -> &mut Self {
        self.blueprint.max_steps = Some(max_steps);
        self
    }

    /// Documents the graph in its [blueprint](CompiledGraph::blueprint).
    pub fn set_doc(&mut self, doc: impl Into<String>) -> &mut Self {
        self.blueprint.doc = Some(doc.into());
        self
    }

    /// How the blueprint names the state type (none by default).
    pub fn set_state_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.blueprint.state = Some(name.into());
        self
    }

    /// How many events a subscriber may fall behind before it loses the oldest.
    pub fn set_event_capacity(&mut self, capacity: usize) -> &mut Self {
        self.event_capacity = capacity;
        self
    }

    /// Where runs are recorded and checkpointed (none by default: runs then cannot be resumed
    /// by id). Also settable on the compiled graph with
    /// [`CompiledGraph::with_checkpointer`].
    pub fn set_checkpointer<C>(&mut self, checkpointer: Arc<C>) -> &mut Self
    where
        C: SharedCheckpointer + ?Sized,
    {
        self.checkpointer = Some(checkpointer.shared());
        self
    }

    /// Checks the graph by the `.graph` language's rules and makes it runnable.
    ///
    /// Warnings (a node START cannot reach, an unbounded cycle, …) do not fail the build: the
    /// compiled graph lists them in [`CompiledGraph::warnings`], and each is logged through
    /// `tracing` at WARN level.
    ///
    /// # Errors
    /// A [`CompileError`] with every broken rule, with the language's codes: no nodes (E0208),
    /// a reserved or empty name (E0103), a node declared twice (E0102), a zero limit (E0002), an
    /// edge into START, out of END or END in a fork (E0207), an undeclared node (E0202), a
    /// target named twice (E0206), no entry (E0201) or several (E0203), a node with no outgoing
    /// edge, or an edge with no target (E0204), a node with several (E0205), a join from START
    /// or into END (E0207), a join of one source or into several targets (E0209).
    pub fn compile(self) -> Result<CompiledGraph<S>, CompileError> {
        let violations = trellis_graph::check(&self.blueprint);
        let (errors, warnings): (Vec<_>, Vec<_>) = violations
            .iter()
            .partition(|violation| violation.is_error());
        let describe = |violation: &Violation| BuildDiagnostic {
            code: violation.code(),
            message: violation.message(&self.blueprint),
            help: Some(help::help(violation, &self.blueprint)),
        };
        if !errors.is_empty() {
            return Err(CompileError {
                diagnostics: errors.into_iter().map(describe).collect(),
            });
        }
        let write_errors = writes::errors::<S>(&self.blueprint, &self.subgraphs);
        if !write_errors.is_empty() {
            return Err(CompileError {
                diagnostics: write_errors,
            });
        }
        let sites = self
            .sites()
            .map_err(|diagnostics| CompileError { diagnostics })?;
        let warnings: Vec<BuildDiagnostic> = warnings.into_iter().map(describe).collect();
        for warning in &warnings {
            tracing::warn!(graph = %self.blueprint.name, "{warning}");
        }
        Ok(self.resolve(warnings, sites))
    }
}

/// Names as the blueprint's endpoints (`START` and `END` by their runtime spelling).
fn endpoints<I>(names: I) -> Vec<Endpoint>
where
    I: IntoIterator,
    I::Item: Into<String>,
{
    names
        .into_iter()
        .map(|name| Endpoint::from_owned(name.into()))
        .collect()
}

/// A router as the executor calls it: the user's choice, looked up among the edge's targets.
fn router_fn<S, R, T>(router: R) -> RouterFn<S>
where
    R: Fn(&S, &Visits<'_>) -> T + Send + Sync + 'static,
    T: AsRef<str>,
{
    Box::new(move |state, visits, targets| {
        let choice = router(state, visits);
        let choice = choice.as_ref();
        targets
            .iter()
            .find(|(name, _)| &**name == choice)
            .map(|&(_, target)| target)
            .ok_or_else(|| choice.to_owned())
    })
}

#[cfg(test)]
#[path = "fingerprint_pin.rs"]
mod fingerprint_pin;
