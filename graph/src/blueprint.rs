//! The blueprint: a graph's topology and settings as plain data, the same for a `.graph` source
//! and a `GraphBuilder` graph. It is what [`check`](crate::check) validates, what code generation
//! and every export read, and what a compiled graph hands to UIs.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How START is spelled in the runtime's API and in the JSON export: `add_edge(START, "a")`.
pub const START: &str = "__start__";
/// How END is spelled in the runtime's API and in the JSON export: `add_edge("a", END)`.
pub const END: &str = "__end__";

/// One graph: its nodes, its edges and its settings.
///
/// Nodes and edges keep their declaration order, and a blueprint may hold what the rules refuse
/// (a node declared twice, an edge to an undeclared node): [`check`](crate::check) reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "crate::json::GraphIn")]
pub struct Blueprint {
    /// The graph's name.
    pub name: String,
    /// Its documentation.
    pub doc: Option<String>,
    /// The state type, as the source names it (`Ticket`, `Vec<Message>`), if known.
    pub state: Option<String>,
    /// The bound on super-steps, if set (the runtime's default is 1000).
    pub max_steps: Option<u32>,
    /// The nodes, in declaration order.
    pub nodes: Vec<Node>,
    /// The edges, in declaration order; a chain `a -> b -> c` is two edges.
    pub edges: Vec<Edge>,
}

impl Blueprint {
    /// An empty graph called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Blueprint {
            name: name.into(),
            ..Blueprint::default()
        }
    }

    /// The first node called `id`.
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "crate::json::NodeIn")]
pub struct Node {
    /// The node's name.
    pub id: String,
    /// Its documentation.
    pub doc: Option<String>,
    /// What the node does, if declared.
    pub kind: Option<NodeKind>,
    /// How often a failed attempt is retried.
    pub retry: Option<Retry>,
    /// How long one attempt may take, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// How often the node may run in one graph run.
    pub max_visits: Option<u32>,
    /// Whether the run pauses for a person before or after this node (never `Node`).
    pub interrupt: Option<InterruptPoint>,
    /// What that pause asks the person (`interrupt before "Send this reply?";`), if said.
    pub question: Option<String>,
    /// Whether the node waits until every other branch of the run has no node left to run.
    pub defer: bool,
    /// The node that handles this node's errors (START and END spelled [`START`] and [`END`],
    /// which the rules refuse).
    pub on_error: Option<String>,
    /// Free-form `meta key = value` pairs, in declaration order.
    pub meta: Vec<(String, MetaValue)>,
    /// How many of the node's sent branches ([`EdgeKind::Each`]) may run at once in one
    /// super-step (all of them when unset).
    pub max_concurrency: Option<u32>,
    /// The type each branch sent to the node carries, as the source names it (`Document`), if
    /// declared: generated code reads the branch's input as it.
    pub input: Option<String>,
    /// For a subgraph node (`graph Research;`): the graph it runs, as the source names it
    /// (`Research`, or a path to another module's, `research::Research`). The child runs as
    /// this one node, with steps, checkpoints and pauses of its own.
    pub graph: Option<String>,
    /// The state fields the node may write (`writes notes, sources;`), in declaration order;
    /// `None` when undeclared: the node may write any field. Generated code gives such a node
    /// an update type that sets only these fields.
    pub writes: Option<Vec<String>>,
    /// The type a person answers the node's `interrupt` with (`interrupt before "Send it?"
    /// answer Decision;`), as the source names it; `None`: the state's one answer type.
    pub answer: Option<String>,
    /// What the node asks from inside (`asks Question -> Answer;`): the question's payload type
    /// and the answer's.
    pub asks: Option<Asks>,
}

/// A node's question from inside (`asks Question -> Answer;`): what it asks with, and what it
/// is answered with, as the source names the types.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Asks {
    /// The type of the question's payload.
    pub question: String,
    /// The type of the answer.
    pub answer: String,
}

impl Node {
    /// A node called `id` with no attributes.
    pub fn new(id: impl Into<String>) -> Self {
        Node {
            id: id.into(),
            ..Node::default()
        }
    }
}

/// A node's retry policy: `retry N backoff D max M jitter;` and `retry_on …;`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    /// How many more attempts after the first fails (at least 1); a node makes up to
    /// `retries + 1` attempts.
    pub retries: u32,
    /// Wait before the first retry, in milliseconds; each next retry waits twice as long.
    pub backoff_ms: Option<u64>,
    /// The longest wait, in milliseconds (`max D`): the doubling stops there.
    pub max_backoff_ms: Option<u64>,
    /// Whether each wait is spread at random by up to ±50 % (`jitter`), so that many runs
    /// failing together do not retry together.
    pub jitter: bool,
    /// Which failures are retried (`retry_on …;`).
    pub on: RetryOn,
}

impl Retry {
    /// `retry N;`: up to `retries` retries at once, of timeouts and errors.
    pub fn new(retries: u32) -> Self {
        Retry {
            retries,
            backoff_ms: None,
            max_backoff_ms: None,
            jitter: false,
            on: RetryOn::default(),
        }
    }
}

/// Which failures a node retries: `retry_on timeout, error;` (panics only when named). Without
/// `retry_on`, timeouts and errors are retried and panics are not: a panic is a bug, not a
/// transient fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryOn {
    /// An attempt that ran out of time.
    pub timeout: bool,
    /// An attempt that returned an error.
    pub error: bool,
    /// An attempt that panicked.
    pub panic: bool,
}

impl RetryOn {
    /// The failures as the language names them, in this order.
    pub const NAMES: [&'static str; 3] = ["timeout", "error", "panic"];

    /// None of them; name them with [`with`](Self::with).
    pub const NONE: RetryOn = RetryOn {
        timeout: false,
        error: false,
        panic: false,
    };

    /// These failures and the one `name`d (`"timeout"`, `"error"` or `"panic"`); `None` for
    /// another word.
    pub fn with(self, name: &str) -> Option<Self> {
        let mut on = self;
        match name {
            "timeout" => on.timeout = true,
            "error" => on.error = true,
            "panic" => on.panic = true,
            _ => return None,
        }
        Some(on)
    }

    /// The names of the failures retried, in [`NAMES`](Self::NAMES) order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        let flags = [self.timeout, self.error, self.panic];
        Self::NAMES
            .into_iter()
            .zip(flags)
            .filter_map(|(name, on)| on.then_some(name))
    }
}

impl Default for RetryOn {
    /// Timeouts and errors.
    fn default() -> Self {
        RetryOn {
            timeout: true,
            error: true,
            panic: false,
        }
    }
}

/// Where a run pauses for a person, relative to a node. A node's `interrupt before|after`
/// attribute is `Before` or `After`; `Node` happens only in a run, when the node itself asks
/// (its result is an interrupt), and is no attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InterruptPoint {
    /// The run pauses before the node runs (`interrupt before`); it runs after the answer.
    Before,
    /// The run pauses after the node ran and its update was committed (`interrupt after`).
    After,
    /// The node asked; its update is committed and it does not run again unless its request
    /// resumes to itself.
    Node,
}

impl InterruptPoint {
    /// `"before"`, `"after"` or `"node"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            InterruptPoint::Before => "before",
            InterruptPoint::After => "after",
            InterruptPoint::Node => "node",
        }
    }
}

/// What a node does (`kind …;`). The runtime does not interpret it; agents and UIs do.
/// In JSON a built-in kind is its name (`"dispatch"`), the others one key
/// (`{"delegate": "Graph"}`, `{"custom": "text"}`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

    /// The name of a built-in kind without argument (`"dispatch"`), else `None`.
    pub fn built_in_name(&self) -> Option<&'static str> {
        NodeKind::BUILT_IN
            .iter()
            .find(|(_, kind)| kind == self)
            .map(|(name, _)| *name)
    }
}

/// A `meta` value: in JSON a string, a number or a boolean.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MetaValue {
    /// `"text"`. (Not called `String`: a variant of that name would make rustc spell every
    /// `String` in its messages to users of the runtime as `std::string::String`.)
    Text(String),
    /// `42`.
    Integer(u32),
    /// `true` or `false`.
    Bool(bool),
}

/// One end of an edge: in JSON its name as the runtime's API spells it ([`as_str`](Self::as_str)).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(from = "String")]
pub enum Endpoint {
    /// Where every run starts.
    Start,
    /// Where a branch ends.
    End,
    /// A node, by name.
    Node(String),
}

impl Endpoint {
    /// The endpoint a name stands for in the runtime's API: [`START`], [`END`] or a node.
    pub fn from_name(name: &str) -> Endpoint {
        Endpoint::reserved(name).unwrap_or_else(|| Endpoint::Node(name.to_owned()))
    }

    /// [`from_name`](Self::from_name), keeping the `String` it is given for a node (no copy).
    pub fn from_owned(name: String) -> Endpoint {
        match Endpoint::reserved(&name) {
            Some(endpoint) => endpoint,
            None => Endpoint::Node(name),
        }
    }

    fn reserved(name: &str) -> Option<Endpoint> {
        match name {
            START => Some(Endpoint::Start),
            END => Some(Endpoint::End),
            _ => None,
        }
    }

    /// `__start__`, `__end__` or the node's name, as in the runtime's API and the JSON export.
    pub fn as_str(&self) -> &str {
        match self {
            Endpoint::Start => START,
            Endpoint::End => END,
            Endpoint::Node(id) => id,
        }
    }

    /// `START`, `END` or the node's name, as the language writes it (and messages show it).
    pub fn as_written(&self) -> &str {
        match self {
            Endpoint::Start => "START",
            Endpoint::End => "END",
            Endpoint::Node(id) => id,
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_written())
    }
}

/// How an edge chooses among its targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    /// `a -> b`: always the one target.
    Static,
    /// `a -> b | c`: a router picks exactly one target.
    Conditional,
    /// `a -> b & c`: every target runs in the next super-step.
    Fork,
    /// `a & b -> j`: one per source; the target runs once every source joining into it has
    /// completed since it last ran (a waiting join).
    Join,
    /// `a -> each b`: a send, a dynamic fan-out — a function of the state sends any number of
    /// branches, each running one of the targets with an input of its own, all in the next
    /// super-step. (Not called `Send`: a variant of that name would make rustc spell the
    /// `Send` trait `std::marker::Send` in its messages to users.)
    #[serde(rename = "send")]
    Each,
}

impl EdgeKind {
    /// `"static"`, `"conditional"`, `"fork"` or `"join"`, as in the JSON export.
    pub const fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Static => "static",
            EdgeKind::Conditional => "conditional",
            EdgeKind::Fork => "fork",
            EdgeKind::Join => "join",
            EdgeKind::Each => "send",
        }
    }
}

/// An edge from one endpoint to its targets.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "crate::json::EdgeIn")]
pub struct Edge {
    /// Where the edge leaves.
    pub from: Endpoint,
    /// Static, conditional, fork or join.
    pub kind: EdgeKind,
    /// One target for a static or join edge, any number otherwise (the rules want at least one).
    pub targets: Vec<Endpoint>,
}

impl Edge {
    /// A static edge `from -> to`.
    pub fn to(from: Endpoint, to: Endpoint) -> Self {
        Edge {
            from,
            kind: EdgeKind::Static,
            targets: vec![to],
        }
    }

    /// The edges of a join `a & b -> to`: one `Join` edge per source.
    pub fn join(sources: impl IntoIterator<Item = Endpoint>, to: &Endpoint) -> Vec<Self> {
        sources
            .into_iter()
            .map(|from| Edge {
                from,
                kind: EdgeKind::Join,
                targets: vec![to.clone()],
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_stands_for_the_same_endpoint_borrowed_or_owned() {
        for (name, endpoint) in [
            (START, Endpoint::Start),
            (END, Endpoint::End),
            ("draft", Endpoint::Node("draft".to_owned())),
        ] {
            assert_eq!(Endpoint::from_name(name), endpoint);
            assert_eq!(Endpoint::from_owned(name.to_owned()), endpoint);
        }
    }
}
