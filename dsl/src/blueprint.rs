//! The graph IR: what validation checks and what code generation and every export consume.
//!
//! A `Blueprint` serializes to the JSON shape of LANGUAGE.md §6 (`trellis export --format json`),
//! START and END spelled `__start__` and `__end__`. Spans are kept for diagnostics of later phases
//! and are not serialized.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::diagnostic::Span;

/// Everything one `.graph` source declares.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    /// The `//!` documentation of the file.
    pub doc: Option<String>,
    /// The graphs, in declaration order.
    pub graphs: Vec<Blueprint>,
}

impl Module {
    /// The graph called `name`.
    pub fn graph(&self, name: &str) -> Option<&Blueprint> {
        self.graphs.iter().find(|graph| graph.name == name)
    }
}

/// One graph: its nodes, its edges and its settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Blueprint {
    /// The graph's name (PascalCase).
    pub name: String,
    /// Its `///` documentation.
    pub doc: Option<String>,
    /// The Rust path of the state type, spelled canonically (`Vec<Message>`), if declared.
    pub state: Option<String>,
    /// The bound on super-steps, if declared (the runtime's default is 1000).
    pub max_steps: Option<u32>,
    /// The nodes, in declaration order.
    pub nodes: Vec<Node>,
    /// The edges, in declaration order; a chain `a -> b -> c` is two edges.
    pub edges: Vec<Edge>,
    /// Where the graph is named.
    pub span: Span,
}

impl Blueprint {
    /// The node called `id`.
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|node| node.id == id)
    }

    /// The target of a static `START -> node` edge, if the entry is static.
    pub fn entry(&self) -> Option<&Endpoint> {
        self.edges
            .iter()
            .find(|edge| edge.from == Endpoint::Start && edge.kind == EdgeKind::Static)
            .and_then(|edge| edge.targets.first())
    }

    /// The nodes with a static edge to END, in edge order.
    pub fn finish(&self) -> impl Iterator<Item = &str> {
        self.edges
            .iter()
            .filter_map(|edge| match (&edge.from, edge.kind) {
                (Endpoint::Node(id), EdgeKind::Static) if edge.targets == [Endpoint::End] => {
                    Some(id.as_str())
                }
                _ => None,
            })
    }
}

/// A node and its attributes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    /// The node's name (snake_case).
    pub id: String,
    /// Its `///` documentation.
    pub doc: Option<String>,
    /// What the node does, if declared.
    pub kind: Option<NodeKind>,
    /// How often a failed run is retried.
    pub retry: Option<Retry>,
    /// How long one run may take, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// How often the node may run in one graph run.
    pub max_visits: Option<u32>,
    /// Whether the run pauses for a person before or after this node.
    pub interrupt: Option<Interrupt>,
    /// Whether the node waits until every other branch of the run has finished.
    pub defer: bool,
    /// The node that handles this node's errors.
    pub on_error: Option<NodeRef>,
    /// Free-form `meta key = value` pairs, in declaration order.
    pub meta: Vec<(String, MetaValue)>,
    /// Where the node is named in its declaration.
    pub span: Span,
}

/// `retry N backoff D`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    /// Retries after the first failure (at least 1).
    pub attempts: u32,
    /// Wait before the first retry, in milliseconds.
    pub backoff_ms: Option<u64>,
}

/// When a node pauses the run for a person.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Interrupt {
    /// The run pauses before the node runs.
    Before,
    /// The run pauses after the node ran and its update was committed.
    After,
}

/// What a node does (`kind …;`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// Calls the model.
    Dispatch,
    /// Parses the model's answer.
    Parse,
    /// Decides whether the turn is over.
    StopCheck,
    /// Runs tool calls.
    Tools,
    /// Compacts the history.
    Compact,
    /// Produces the final answer.
    Finalize,
    /// Waits for a person.
    Hitl,
    /// Hands over to another graph.
    Delegate(String),
    /// A kind of the user's own.
    Custom(String),
}

impl NodeKind {
    /// The built-in kinds that take no argument, as written in `.graph` files.
    pub const BUILT_IN: &'static [(&'static str, NodeKind)] = &[
        ("dispatch", NodeKind::Dispatch),
        ("parse", NodeKind::Parse),
        ("stop_check", NodeKind::StopCheck),
        ("tools", NodeKind::Tools),
        ("compact", NodeKind::Compact),
        ("finalize", NodeKind::Finalize),
        ("hitl", NodeKind::Hitl),
    ];
}

/// A `meta` value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum MetaValue {
    /// `"text"`.
    String(String),
    /// `42`.
    Integer(u32),
    /// `true` or `false`.
    Bool(bool),
}

/// A node named somewhere other than its declaration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeRef {
    /// The node's name.
    pub id: String,
    /// Where it is named.
    pub span: Span,
}

/// One end of an edge.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// Where every run starts.
    Start,
    /// Where a branch ends.
    End,
    /// A declared node.
    Node(String),
}

impl Endpoint {
    /// `__start__`, `__end__` or the node's name, as in the JSON export.
    pub fn as_str(&self) -> &str {
        match self {
            Endpoint::Start => "__start__",
            Endpoint::End => "__end__",
            Endpoint::Node(id) => id,
        }
    }
}

impl Serialize for Endpoint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// How an edge chooses among its targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// `a -> b`: always the one target.
    Static,
    /// `a -> b | c`: a router picks exactly one target.
    Conditional,
    /// `a -> b & c`: every target runs in the next super-step.
    Fork,
}

/// An edge from one endpoint to one or more targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// Where the edge leaves.
    pub from: Endpoint,
    /// Static, conditional or fork.
    pub kind: EdgeKind,
    /// One target for a static edge, two or more otherwise.
    pub targets: Vec<Endpoint>,
    /// Where `from` is written.
    pub from_span: Span,
    /// Where each target is written.
    pub target_spans: Vec<Span>,
}

impl Edge {
    /// From the source to the last target.
    pub fn span(&self) -> Span {
        self.target_spans
            .iter()
            .fold(self.from_span, |span, target| span.to(*target))
    }
}

// ---- the JSON shape of LANGUAGE.md §6 -----------------------------------------------------------

/// The version of the JSON shape; bumped on any incompatible change.
pub const JSON_FORMAT: u32 = 1;

#[derive(Serialize)]
struct BlueprintJson<'a> {
    format: u32,
    name: &'a str,
    doc: Option<&'a str>,
    state: Option<&'a str>,
    max_steps: Option<u32>,
    entry: Option<&'a Endpoint>,
    finish: Vec<&'a str>,
    nodes: Vec<NodeJson<'a>>,
    edges: Vec<EdgeJson<'a>>,
}

#[derive(Serialize)]
struct NodeJson<'a> {
    id: &'a str,
    doc: Option<&'a str>,
    kind: Option<&'a NodeKind>,
    retry: Option<u32>,
    backoff_ms: Option<u64>,
    timeout_ms: Option<u64>,
    max_visits: Option<u32>,
    interrupt: Option<Interrupt>,
    defer: bool,
    on_error: Option<&'a str>,
    meta: MetaJson<'a>,
}

struct MetaJson<'a>(&'a [(String, MetaValue)]);

impl Serialize for MetaJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum EdgeJson<'a> {
    Static {
        from: &'a Endpoint,
        to: &'a Endpoint,
    },
    Conditional {
        from: &'a Endpoint,
        targets: &'a [Endpoint],
    },
    Fork {
        from: &'a Endpoint,
        targets: &'a [Endpoint],
    },
}

impl Serialize for Blueprint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        BlueprintJson {
            format: JSON_FORMAT,
            name: &self.name,
            doc: self.doc.as_deref(),
            state: self.state.as_deref(),
            max_steps: self.max_steps,
            entry: self.entry(),
            finish: self.finish().collect(),
            nodes: self.nodes.iter().map(NodeJson::from).collect(),
            edges: self.edges.iter().map(EdgeJson::from).collect(),
        }
        .serialize(serializer)
    }
}

impl<'a> From<&'a Node> for NodeJson<'a> {
    fn from(node: &'a Node) -> Self {
        NodeJson {
            id: &node.id,
            doc: node.doc.as_deref(),
            kind: node.kind.as_ref(),
            retry: node.retry.map(|retry| retry.attempts),
            backoff_ms: node.retry.and_then(|retry| retry.backoff_ms),
            timeout_ms: node.timeout_ms,
            max_visits: node.max_visits,
            interrupt: node.interrupt,
            defer: node.defer,
            on_error: node.on_error.as_ref().map(|handler| handler.id.as_str()),
            meta: MetaJson(&node.meta),
        }
    }
}

impl<'a> From<&'a Edge> for EdgeJson<'a> {
    fn from(edge: &'a Edge) -> Self {
        match (edge.kind, edge.targets.as_slice()) {
            (EdgeKind::Static, [to]) => EdgeJson::Static {
                from: &edge.from,
                to,
            },
            (EdgeKind::Fork, targets) => EdgeJson::Fork {
                from: &edge.from,
                targets,
            },
            (_, targets) => EdgeJson::Conditional {
                from: &edge.from,
                targets,
            },
        }
    }
}
