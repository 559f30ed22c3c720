//! `GraphBuilder`: declare nodes and edges, then `compile()` checks them by the language's rules.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::checkpoint::Checkpointer;
use crate::error::{BuildDiagnostic, CompileError};
use crate::event::{DEFAULT_EVENT_CAPACITY, EventBus};
use crate::graph::{CompiledGraph, Edge, NodeSpec, RouterFn, Target, Topology};
use crate::node::{FnNode, Node, NodeContext, NodeError, NodeResult};
use crate::state::GraphState;

/// The source of a graph's entry edge: `add_edge(START, "classify")`.
pub const START: &str = "__start__";
/// The end of a branch: `add_edge("send", END)`, or a router returning `END`.
pub const END: &str = "__end__";

/// The default bound on super-steps per run.
pub const DEFAULT_MAX_STEPS: u32 = 1000;

/// How one node runs: retries, timeout, visit bound, pauses, deferral, error handler.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeOptions {
    pub(crate) retries: u32,
    pub(crate) backoff: Duration,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_visits: Option<u32>,
    pub(crate) interrupt: Option<InterruptAt>,
    pub(crate) defer: bool,
    pub(crate) on_error: Option<String>,
}

/// The part of [`NodeOptions`] an activation needs, cheap to copy into a spawned branch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttemptPolicy {
    pub(crate) retries: u32,
    pub(crate) backoff: Duration,
    pub(crate) timeout: Option<Duration>,
}

/// When a static interrupt pauses the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InterruptAt {
    Before,
    After,
}

impl NodeOptions {
    pub(crate) fn policy(&self) -> AttemptPolicy {
        AttemptPolicy {
            retries: self.retries,
            backoff: self.backoff,
            timeout: self.timeout,
        }
    }

    /// Default options: one attempt, no timeout, no bound, no pause.
    pub fn new() -> Self {
        Self::default()
    }

    /// Run a failed attempt again up to `retries` times, waiting `backoff` before the first
    /// retry and twice as long before each next one (`retry 3 backoff 200ms` waits 200, 400,
    /// 800 ms). Timeouts are retried; panics are not.
    #[must_use]
    pub fn retry(mut self, retries: u32, backoff: Duration) -> Self {
        self.retries = retries;
        self.backoff = backoff;
        self
    }

    /// Fail an attempt that runs longer than `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Fail the run rather than activate the node more than `max_visits` times.
    #[must_use]
    pub fn max_visits(mut self, max_visits: u32) -> Self {
        self.max_visits = Some(max_visits);
        self
    }

    /// Pause the run before the node runs, until a person resumes it.
    #[must_use]
    pub fn interrupt_before(mut self) -> Self {
        self.interrupt = Some(InterruptAt::Before);
        self
    }

    /// Pause the run after the node ran, until a person resumes it.
    #[must_use]
    pub fn interrupt_after(mut self) -> Self {
        self.interrupt = Some(InterruptAt::After);
        self
    }

    /// Hold the node back while any other branch still has a node to run.
    #[must_use]
    pub fn defer(mut self) -> Self {
        self.defer = true;
        self
    }

    /// Route the node's failure (after its retries) to `handler`, which runs in the next step
    /// and finds the failure in [`NodeContext::failure`].
    #[must_use]
    pub fn on_error(mut self, handler: impl Into<String>) -> Self {
        self.on_error = Some(handler.into());
        self
    }
}

enum EdgeDecl<S> {
    Static(String),
    Conditional(Vec<String>, RouterFn<S>),
    Fork(Vec<String>),
}

/// Declares a graph; [`compile`](GraphBuilder::compile) checks it and makes it runnable.
///
/// Mistakes are collected, not reported one by one: `compile` reports all of them, with the
/// codes the `.graph` language uses for the same mistakes.
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
///         Ok(NodeResult::Update(Greeting(format!("hello, {}", state.0))))
///     })
///     .add_edge(START, "greet")
///     .add_edge("greet", END);
/// let graph = builder.compile().unwrap();
/// let outcome = graph.invoke(Greeting("world".into())).await.unwrap();
/// assert_eq!(outcome.state().0, "hello, world");
/// # });
/// ```
pub struct GraphBuilder<S: GraphState> {
    name: String,
    nodes: Vec<(String, Arc<dyn Node<S>>, NodeOptions)>,
    edges: Vec<(String, EdgeDecl<S>)>,
    max_steps: u32,
    event_capacity: usize,
    checkpointer: Option<Arc<dyn Checkpointer>>,
}

impl<S: GraphState> GraphBuilder<S> {
    /// An empty graph called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        GraphBuilder {
            name: name.into(),
            nodes: Vec::new(),
            edges: Vec::new(),
            max_steps: DEFAULT_MAX_STEPS,
            event_capacity: DEFAULT_EVENT_CAPACITY,
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
        self.nodes.push((name.into(), Arc::new(node), options));
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

    /// A static edge: after `from` runs, `to` runs (`to` may be [`END`]; `from` may be
    /// [`START`]).
    pub fn add_edge(&mut self, from: impl Into<String>, to: impl Into<String>) -> &mut Self {
        self.edges.push((from.into(), EdgeDecl::Static(to.into())));
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
        let router: RouterFn<S> = Box::new(move |state, targets| {
            let choice = router(state);
            let choice = choice.as_ref();
            targets
                .iter()
                .find(|(name, _)| &**name == choice)
                .map(|&(_, target)| target)
                .ok_or_else(|| choice.to_owned())
        });
        let targets = targets.into_iter().map(Into::into).collect();
        self.edges
            .push((from.into(), EdgeDecl::Conditional(targets, router)));
        self
    }

    /// A fork: after `from` runs, every target runs in the next step.
    pub fn add_fork<I>(&mut self, from: impl Into<String>, targets: I) -> &mut Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let targets = targets.into_iter().map(Into::into).collect();
        self.edges.push((from.into(), EdgeDecl::Fork(targets)));
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

    /// Bounds the number of super-steps of one run (default [`DEFAULT_MAX_STEPS`]).
    pub fn set_max_steps(&mut self, max_steps: u32) -> &mut Self {
        self.max_steps = max_steps;
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
    pub fn set_checkpointer(&mut self, checkpointer: Arc<dyn Checkpointer>) -> &mut Self {
        self.checkpointer = Some(checkpointer);
        self
    }

    /// Checks the graph by the `.graph` language's rules and makes it runnable.
    ///
    /// # Errors
    /// A [`CompileError`] with every broken rule: no nodes (E0208), a reserved or empty name
    /// (E0103), a node declared twice (E0102), a zero limit (E0002), an edge into START, out of
    /// END or END in a fork (E0207), an undeclared node (E0202), a target named twice (E0206),
    /// no entry (E0201) or several (E0203), a node with no outgoing edge (E0204) or several
    /// (E0205).
    pub fn compile(self) -> Result<CompiledGraph<S>, CompileError> {
        let mut errors = Errors::default();
        if self.nodes.is_empty() {
            errors.push(
                "E0208",
                format!("graph `{}` has no nodes", self.name),
                "add a node with `add_node`",
            );
        }
        if self.max_steps == 0 {
            errors.push(
                "E0002",
                "max_steps must be at least 1",
                "set max_steps to 1 or more",
            );
        }

        let mut index: HashMap<String, usize> = HashMap::new();
        for (i, (name, _, options)) in self.nodes.iter().enumerate() {
            if name.is_empty() || [START, END, "START", "END"].contains(&name.as_str()) {
                errors.push(
                    "E0103",
                    format!("`{name}` cannot name a node"),
                    "START and END are built in; give the node a name of its own",
                );
            } else if index.insert(name.clone(), i).is_some() {
                errors.push(
                    "E0102",
                    format!("node `{name}` is declared twice"),
                    "remove one declaration or rename it",
                );
            }
            if options.max_visits == Some(0) {
                errors.push(
                    "E0002",
                    format!("node `{name}` has max_visits 0"),
                    "max_visits must be at least 1",
                );
            }
            if options.timeout == Some(Duration::ZERO) {
                errors.push(
                    "E0002",
                    format!("node `{name}` has a zero timeout"),
                    "give a timeout above zero, or none",
                );
            }
        }
        let declared = || {
            let mut names: Vec<&str> = index.keys().map(String::as_str).collect();
            names.sort_unstable();
            format!("declared nodes: {}", names.join(", "))
        };
        let resolve = |errors: &mut Errors, from: &str, to: &str| -> Option<Target> {
            if to == END {
                return Some(Target::End);
            }
            if to == START {
                errors.push(
                    "E0207",
                    format!("edge from `{from}` leads into START"),
                    "START only begins a run; lead the edge to a node or END",
                );
                return None;
            }
            match index.get(to) {
                Some(&i) => Some(Target::Node(i)),
                None => {
                    errors.push(
                        "E0202",
                        format!("edge from `{from}` leads to undeclared node `{to}`"),
                        declared(),
                    );
                    None
                }
            }
        };

        let mut outgoing: Vec<Option<Edge<S>>> = (0..self.nodes.len()).map(|_| None).collect();
        let mut entry: Option<Edge<S>> = None;
        let mut seen_sources: HashSet<String> = HashSet::new();
        for (from, decl) in self.edges {
            let targets: Vec<&String> = match &decl {
                EdgeDecl::Static(to) => vec![to],
                EdgeDecl::Conditional(to, _) | EdgeDecl::Fork(to) => to.iter().collect(),
            };
            let mut unique = HashSet::new();
            for target in &targets {
                if !unique.insert(target.as_str()) {
                    errors.push(
                        "E0206",
                        format!("edge from `{from}` names `{target}` twice"),
                        "name each target once",
                    );
                }
            }
            if from == END {
                errors.push(
                    "E0207",
                    "an edge leads out of END",
                    "END ends a branch; nothing follows it",
                );
                continue;
            }
            if targets.is_empty() {
                errors.push(
                    "E0204",
                    format!("edge from `{from}` has no targets"),
                    "give the edge at least one target",
                );
                seen_sources.insert(from);
                continue;
            }
            let source = if from == START {
                None
            } else if let Some(&i) = index.get(from.as_str()) {
                Some(i)
            } else {
                errors.push(
                    "E0202",
                    format!("edge from undeclared node `{from}`"),
                    declared(),
                );
                continue;
            };
            let edge = match decl {
                EdgeDecl::Static(to) => resolve(&mut errors, &from, &to).map(Edge::Static),
                EdgeDecl::Conditional(to, router) => {
                    let resolved: Option<Vec<(Arc<str>, Target)>> = to
                        .iter()
                        .map(|t| resolve(&mut errors, &from, t).map(|r| (Arc::from(t.as_str()), r)))
                        .collect::<Vec<_>>()
                        .into_iter()
                        .collect();
                    resolved.map(|targets| Edge::Conditional { targets, router })
                }
                EdgeDecl::Fork(to) => {
                    let mut nodes = Vec::new();
                    let mut valid = true;
                    for t in &to {
                        if t == END {
                            errors.push(
                                "E0207",
                                format!("fork from `{from}` includes END"),
                                "a fork runs nodes; end the branches after them",
                            );
                            valid = false;
                        } else if let Some(Target::Node(i)) = resolve(&mut errors, &from, t) {
                            nodes.push(i);
                        } else {
                            valid = false;
                        }
                    }
                    valid.then_some(Edge::Fork(nodes))
                }
            };
            if !seen_sources.insert(from.clone()) {
                if source.is_none() {
                    errors.push(
                        "E0203",
                        "more than one edge from START",
                        "keep one START edge; use `add_conditional_edges` or `add_fork` from START to reach several nodes",
                    );
                } else {
                    errors.push(
                        "E0205",
                        format!("node `{from}` has more than one outgoing edge"),
                        "declare one edge per node: `add_conditional_edges` to choose one target, `add_fork` to run all",
                    );
                }
                continue;
            }
            match source {
                None => entry = edge,
                Some(i) => outgoing[i] = edge,
            }
        }
        if !seen_sources.contains(START) {
            errors.push(
                "E0201",
                format!("graph `{}` has no entry", self.name),
                "add an edge from START, e.g. `set_entry_point(\"first\")`",
            );
        }

        let mut nodes = Vec::with_capacity(self.nodes.len());
        for (i, (name, node, options)) in self.nodes.into_iter().enumerate() {
            // A node whose name was refused (E0103) gets no follow-on error.
            if index.contains_key(&name) && !seen_sources.contains(&name) {
                errors.push(
                    "E0204",
                    format!("node `{name}` has no outgoing edge"),
                    format!("lead `{name}` somewhere, or end it: `add_edge(\"{name}\", END)`"),
                );
            }
            let on_error = match options.on_error.as_deref() {
                None => None,
                Some(handler) if handler == START || handler == END => {
                    errors.push(
                        "E0207",
                        format!("node `{name}` routes its errors to START or END"),
                        "name a handler node",
                    );
                    None
                }
                Some(handler) => match index.get(handler) {
                    Some(&h) => Some(h),
                    None => {
                        errors.push(
                            "E0202",
                            format!(
                                "node `{name}` routes its errors to undeclared node `{handler}`"
                            ),
                            declared(),
                        );
                        None
                    }
                },
            };
            nodes.push(NodeSpec {
                name: Arc::from(name.as_str()),
                node,
                edge: outgoing[i].take(),
                on_error,
                options,
            });
        }

        if !errors.0.is_empty() {
            return Err(CompileError {
                diagnostics: errors.0,
            });
        }
        let (Some(entry), true) = (entry, nodes.iter().all(|n| n.edge.is_some())) else {
            // Every missing edge was reported above; reaching here is a bug in this function.
            return Err(CompileError {
                diagnostics: vec![BuildDiagnostic {
                    code: "E0204",
                    message: "graph has an edge that failed to resolve".to_owned(),
                    help: None,
                }],
            });
        };
        let mut shape = format!("graph {}\nentry {}\n", self.name, entry.describe(&nodes));
        for node in &nodes {
            let edge = node
                .edge
                .as_ref()
                .map_or(String::new(), |e| e.describe(&nodes));
            shape.push_str(&format!("node {} -> {edge}\n", node.name));
        }
        Ok(CompiledGraph::new(
            Topology {
                name: Arc::from(self.name.as_str()),
                names: nodes.iter().map(|n| Arc::clone(&n.name)).collect(),
                fingerprint: crate::graph::fnv1a(&shape),
                nodes,
                index,
                entry,
                max_steps: self.max_steps,
            },
            EventBus::new(self.event_capacity),
            self.checkpointer,
        ))
    }
}

#[derive(Default)]
struct Errors(Vec<BuildDiagnostic>);

impl Errors {
    fn push(&mut self, code: &'static str, message: impl Into<String>, help: impl Into<String>) {
        self.0.push(BuildDiagnostic {
            code,
            message: message.into(),
            help: Some(help.into()),
        });
    }
}
