//! What a source declares: its graphs as [`Blueprint`]s (the shared IR of `trellis-graph`, which
//! code generation and every export read), and beside each the places its parts are written.

use trellis_graph::Blueprint;

use crate::diagnostic::Span;

/// Everything one `.graph` source declares.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    /// The `//!` documentation of the file.
    pub doc: Option<String>,
    /// The graphs, in declaration order.
    pub graphs: Vec<Blueprint>,
    /// Where each graph's parts are written, position for position with `graphs`.
    pub spans: Vec<GraphSpans>,
}

impl Module {
    /// The graph called `name`.
    pub fn graph(&self, name: &str) -> Option<&Blueprint> {
        self.graphs.iter().find(|graph| graph.name == name)
    }
}

/// Where the parts of one blueprint are written: `nodes[i]` for `Blueprint::nodes[i]`,
/// `edges[i]` for `Blueprint::edges[i]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GraphSpans {
    /// The graph's name (its header, when it has none).
    pub name: Span,
    /// The graph from its header to its closing brace.
    pub extent: Span,
    /// The tokens of the `state` type path, each with its text.
    pub state: Vec<(String, Span)>,
    /// The value of `max_steps`.
    pub max_steps: Option<Span>,
    /// Per node.
    pub nodes: Vec<NodeSpans>,
    /// Per edge.
    pub edges: Vec<EdgeSpans>,
}

impl GraphSpans {
    /// Where the value of `limit` is written: what an error about the limit points at (the
    /// one place that decides it), if it is written.
    pub fn limit(&self, limit: trellis_graph::Limit) -> Option<Span> {
        use trellis_graph::Limit;
        match limit {
            Limit::MaxSteps => self.max_steps,
            Limit::MaxVisits(node) => self.nodes.get(node)?.max_visits,
            Limit::Retry(node) => self.nodes.get(node)?.retry,
            Limit::Timeout(node) => self.nodes.get(node)?.timeout,
            Limit::MaxConcurrency(node) => self.nodes.get(node)?.max_concurrency,
            // A limit this front end does not know yet: its node's name, or the graph's.
            _ => None,
        }
    }
}

/// Where a node's name and attribute values are written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeSpans {
    /// The name in the declaration.
    pub name: Span,
    /// The handler named by `on_error`.
    pub on_error: Option<Span>,
    /// The value of `max_visits`.
    pub max_visits: Option<Span>,
    /// The value of `timeout`.
    pub timeout: Option<Span>,
    /// The count of `retry`.
    pub retry: Option<Span>,
    /// The value of `max_concurrency`.
    pub max_concurrency: Option<Span>,
    /// The tokens of the `input` type path, each with its text.
    pub input: Vec<(String, Span)>,
    /// The graph a subgraph node names (`graph Research;`).
    pub graph: Option<Span>,
    /// Each field `writes` names, in the order of `Node::writes`.
    pub writes: Vec<Span>,
    /// The tokens of the `interrupt … answer` type path, each with its text.
    pub answer: Vec<(String, Span)>,
    /// The tokens of the `asks` question's type path and of its answer's.
    pub asks: [Vec<(String, Span)>; 2],
}

/// Where an edge's source and targets are written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeSpans {
    /// The source.
    pub from: Span,
    /// Each target.
    pub targets: Vec<Span>,
}

impl EdgeSpans {
    /// From the source to the last target.
    pub fn whole(&self) -> Span {
        self.targets
            .iter()
            .fold(self.from, |span, target| span.to(*target))
    }
}
