//! What [`check`](crate::check) finds: a broken rule, with the places it concerns as positions in
//! the blueprint's node and edge lists, so each front door can point at them in its own way
//! (the language with spans and labels, the builder with names).

use crate::blueprint::{Blueprint, END, EdgeKind, Endpoint, START};
use crate::code::Code;

/// One broken rule of a blueprint. Node and edge numbers are positions in
/// [`Blueprint::nodes`] and [`Blueprint::edges`]; a target number is a position in an edge's
/// `targets`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// E0208: the graph declares no node.
    NoNodes,
    /// E0103: a node named START or END (in either spelling), or with an empty name.
    ReservedName {
        /// The node.
        node: usize,
    },
    /// E0102: a node name declared again.
    DuplicateNode {
        /// The first declaration.
        first: usize,
        /// The repeated one.
        again: usize,
    },
    /// E0002: a limit of zero where at least 1 is required.
    ZeroLimit {
        /// Which limit.
        limit: Limit,
    },
    /// E0202: a name that no node declares.
    Undeclared {
        /// Where the name is used.
        reference: Reference,
    },
    /// E0207: an edge that leaves END.
    EdgeOutOfEnd {
        /// The edge.
        edge: usize,
    },
    /// E0207: an edge that leads into START.
    EdgeIntoStart {
        /// The edge.
        edge: usize,
        /// Which of its targets is START.
        target: usize,
    },
    /// E0207: END among the targets of a fork.
    EndInFork {
        /// The fork.
        edge: usize,
        /// Which of its targets is END.
        target: usize,
    },
    /// E0207: END among the targets of a send.
    EndInSend {
        /// The send edge.
        edge: usize,
        /// Which of its targets is END.
        target: usize,
    },
    /// E0207: START as a source of a join.
    JoinOutOfStart {
        /// The join edge from START.
        edge: usize,
    },
    /// E0207: END as the target of a join.
    EndInJoin {
        /// The join edge into END.
        edge: usize,
    },
    /// E0209: a join edge with several targets (or none is left to other rules).
    JoinTargets {
        /// The join edge.
        edge: usize,
    },
    /// E0209: a node that only one join edge leads into: nothing to wait for.
    LoneJoin {
        /// The node joined into.
        node: usize,
        /// The one join edge.
        edge: usize,
    },
    /// E0213: a send whose target runs a graph (a subgraph node takes no branch input).
    SentToSubgraph {
        /// The send edge.
        edge: usize,
        /// Which of its targets is the subgraph node.
        target: usize,
    },
    /// E0207: `on_error` naming START or END.
    OnErrorNotANode {
        /// The node whose `on_error` it is.
        node: usize,
    },
    /// E0206: an edge naming one target twice.
    RepeatedTarget {
        /// The edge.
        edge: usize,
        /// The first mention.
        first: usize,
        /// The repeated one.
        again: usize,
    },
    /// E0204: an edge with no target at all (only a builder can declare one).
    NoTargets {
        /// The edge.
        edge: usize,
    },
    /// E0203: a second edge out of START.
    TwoEntries {
        /// The first entry edge.
        first: usize,
        /// The second.
        again: usize,
    },
    /// E0205: a second edge out of one node.
    TwoOutgoing {
        /// The node.
        node: usize,
        /// Its first edge.
        first: usize,
        /// The second.
        again: usize,
    },
    /// E0201: no edge leaves START.
    NoEntry,
    /// E0204: a node with no outgoing edge.
    NoOutgoing {
        /// The node.
        node: usize,
    },
    /// W0301: a node that no path from START reaches (`on_error` routes count).
    Unreachable {
        /// The node.
        node: usize,
    },
    /// W0302: a place where a run enters a region from which END cannot be reached.
    CannotEnd {
        /// The first node of the region on the way.
        node: usize,
    },
    /// W0303: a cycle of nodes none of which has `max_visits`.
    UnboundedCycle {
        /// The nodes of a shortest form of the cycle, from its first declared node.
        cycle: Vec<usize>,
        /// The edge (and target) that closes it, back into `cycle[0]`.
        closing: Option<(usize, usize)>,
    },
    /// W0304: a node without `defer` that branches of one fork reach in different super-steps,
    /// so it runs once per arrival.
    UnevenJoin {
        /// The node.
        node: usize,
        /// The fork edge.
        fork: usize,
        /// The shorter path and the longer one, from the fork's source to `node`.
        paths: [Path; 2],
    },
}

/// A limit of a graph or of one of its nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// The graph's `max_steps`.
    MaxSteps,
    /// A node's `max_visits`.
    MaxVisits(usize),
    /// A node's `timeout`.
    Timeout(usize),
    /// A node's `retry` count.
    Retry(usize),
    /// A node's `max_concurrency`.
    MaxConcurrency(usize),
}

impl Limit {
    /// The attribute's name in the language.
    pub const fn keyword(self) -> &'static str {
        match self {
            Limit::MaxSteps => "max_steps",
            Limit::MaxVisits(_) => "max_visits",
            Limit::Timeout(_) => "timeout",
            Limit::Retry(_) => "retry",
            Limit::MaxConcurrency(_) => "max_concurrency",
        }
    }

    /// The node the limit belongs to (`None` for the graph's `max_steps`).
    pub const fn node(self) -> Option<usize> {
        match self {
            Limit::MaxSteps => None,
            Limit::MaxVisits(node)
            | Limit::Timeout(node)
            | Limit::Retry(node)
            | Limit::MaxConcurrency(node) => Some(node),
        }
    }
}

/// Where a node is named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reference {
    /// As the source of an edge.
    From {
        /// The edge.
        edge: usize,
    },
    /// As a target of an edge.
    Target {
        /// The edge.
        edge: usize,
        /// Which target.
        target: usize,
    },
    /// In a node's `on_error`.
    OnError {
        /// The node.
        node: usize,
    },
}

impl Reference {
    /// The name used there.
    pub fn name(self, blueprint: &Blueprint) -> &str {
        match self {
            Reference::From { edge } => blueprint.edges[edge].from.as_written(),
            Reference::Target { edge, target } => {
                blueprint.edges[edge].targets[target].as_written()
            }
            Reference::OnError { node } => blueprint.nodes[node].on_error.as_deref().unwrap_or(""),
        }
    }
}

/// A path through the graph, shown in a message: its last nodes, and how many steps it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// Where the path starts: the fork's source.
    pub from: Endpoint,
    /// The last nodes of the path (all of them unless `elided`), ending at its destination.
    pub nodes: Vec<usize>,
    /// Whether nodes between `from` and `nodes[0]` are left out.
    pub elided: bool,
    /// The path's length in super-steps (edges followed).
    pub steps: usize,
}

impl Path {
    /// The node just before the path's destination, when the path has one (not the fork's
    /// source itself).
    pub fn before_last(&self) -> Option<usize> {
        self.nodes.len().checked_sub(2).map(|at| self.nodes[at])
    }

    /// `plan -> web -> summarize`, or `plan -> … -> deep -> summarize` when elided.
    pub fn display(&self, blueprint: &Blueprint) -> String {
        let mut text = self.from.as_written().to_owned();
        if self.elided {
            text.push_str(" -> …");
        }
        for &node in &self.nodes {
            text.push_str(" -> ");
            text.push_str(&blueprint.nodes[node].id);
        }
        text
    }
}

impl Violation {
    /// The code of the broken rule.
    pub const fn code(&self) -> Code {
        match self {
            Violation::NoNodes => Code::E0208,
            Violation::ReservedName { .. } => Code::E0103,
            Violation::DuplicateNode { .. } => Code::E0102,
            Violation::ZeroLimit { .. } => Code::E0002,
            Violation::Undeclared { .. } => Code::E0202,
            Violation::EdgeOutOfEnd { .. }
            | Violation::EdgeIntoStart { .. }
            | Violation::EndInFork { .. }
            | Violation::JoinOutOfStart { .. }
            | Violation::EndInJoin { .. }
            | Violation::EndInSend { .. }
            | Violation::OnErrorNotANode { .. } => Code::E0207,
            Violation::JoinTargets { .. } | Violation::LoneJoin { .. } => Code::E0209,
            Violation::SentToSubgraph { .. } => Code::E0213,
            Violation::RepeatedTarget { .. } => Code::E0206,
            Violation::NoTargets { .. } | Violation::NoOutgoing { .. } => Code::E0204,
            Violation::TwoEntries { .. } => Code::E0203,
            Violation::TwoOutgoing { .. } => Code::E0205,
            Violation::NoEntry => Code::E0201,
            Violation::Unreachable { .. } => Code::W0301,
            Violation::CannotEnd { .. } => Code::W0302,
            Violation::UnboundedCycle { .. } => Code::W0303,
            Violation::UnevenJoin { .. } => Code::W0304,
        }
    }

    /// Whether the violation is an error (as opposed to a warning).
    pub const fn is_error(&self) -> bool {
        self.code().is_error()
    }

    /// What is wrong, in one sentence (lower case, no trailing period), the same from every
    /// front door.
    pub fn message(&self, blueprint: &Blueprint) -> String {
        let node = |at: usize| blueprint.nodes[at].id.as_str();
        let graph = blueprint.name.as_str();
        match self {
            Violation::NoNodes => format!("graph `{graph}` has no nodes"),
            Violation::ReservedName { node: at } => {
                format!("`{}` cannot name a node", node(*at))
            }
            Violation::DuplicateNode { again, .. } => {
                format!(
                    "node `{}` is declared twice in graph `{graph}`",
                    node(*again)
                )
            }
            Violation::ZeroLimit { limit } => {
                let what = match limit.node() {
                    Some(at) => format!("`{}` of node `{}`", limit.keyword(), node(at)),
                    None => format!("`{}`", limit.keyword()),
                };
                match limit {
                    Limit::Timeout(_) => format!("{what} must be longer than zero"),
                    _ => format!("{what} must be at least 1"),
                }
            }
            Violation::Undeclared { reference } => format!(
                "node `{}` is not declared in graph `{graph}`",
                reference.name(blueprint)
            ),
            Violation::EdgeOutOfEnd { .. } => "an edge cannot leave END".to_owned(),
            Violation::EdgeIntoStart { .. } => "an edge cannot lead into START".to_owned(),
            Violation::EndInFork { .. } => "END cannot be a target of a fork".to_owned(),
            Violation::JoinOutOfStart { .. } => "START cannot be a source of a join".to_owned(),
            Violation::EndInJoin { .. } => "END cannot be the target of a join".to_owned(),
            Violation::EndInSend { .. } => "END cannot be sent to".to_owned(),
            Violation::JoinTargets { edge } => format!(
                "a join must lead to one node, not {} targets",
                blueprint.edges[*edge].targets.len()
            ),
            Violation::LoneJoin { node: at, edge } => format!(
                "node `{}` is joined from {} alone",
                node(*at),
                quoted(&blueprint.edges[*edge].from)
            ),
            Violation::SentToSubgraph { edge, target } => format!(
                "node {} runs a graph and cannot be sent to",
                quoted(&blueprint.edges[*edge].targets[*target])
            ),
            Violation::OnErrorNotANode { .. } => "`on_error` must name a node".to_owned(),
            Violation::RepeatedTarget { edge, again, .. } => {
                let edge = &blueprint.edges[*edge];
                let what = if edge.kind == EdgeKind::Fork {
                    "fork"
                } else {
                    "conditional edge"
                };
                format!(
                    "`{}` is a target of the {what} from {} twice",
                    edge.targets[*again].as_written(),
                    quoted(&edge.from)
                )
            }
            Violation::NoTargets { edge } => format!(
                "the edge from {} has no targets",
                quoted(&blueprint.edges[*edge].from)
            ),
            Violation::TwoEntries { .. } => {
                format!("graph `{graph}` has more than one entry edge")
            }
            Violation::TwoOutgoing { node: at, .. } => {
                format!("node `{}` has two outgoing edge statements", node(*at))
            }
            Violation::NoEntry => format!("graph `{graph}` has no entry"),
            Violation::NoOutgoing { node: at } => {
                format!("node `{}` has no outgoing edge", node(*at))
            }
            Violation::Unreachable { node: at } => {
                format!("node `{}` cannot be reached from START", node(*at))
            }
            Violation::CannotEnd { node: at } => {
                format!("END cannot be reached from node `{}`", node(*at))
            }
            Violation::UnboundedCycle { cycle, .. } => {
                let mut names: Vec<&str> = cycle.iter().map(|&at| node(at)).collect();
                let spelled = if names.len() > CYCLE_SHOWN {
                    names.truncate(CYCLE_SHOWN);
                    format!("{} -> …", names.join(" -> "))
                } else {
                    names.extend(cycle.first().map(|&at| node(at)));
                    names.join(" -> ")
                };
                format!("cycle `{spelled}` has no node with `max_visits`")
            }
            Violation::UnevenJoin {
                node: at, paths, ..
            } => format!(
                "node `{}` is reached by fork branches of different lengths: `{}` ({}) and `{}` ({})",
                node(*at),
                paths[0].display(blueprint),
                steps(paths[0].steps),
                paths[1].display(blueprint),
                steps(paths[1].steps),
            ),
        }
    }
}

/// The longest cycle spelled out in full in a W0303 message.
const CYCLE_SHOWN: usize = 6;

fn steps(count: usize) -> String {
    if count == 1 {
        "1 step".to_owned()
    } else {
        format!("{count} steps")
    }
}

/// `START`, `END` or a node's name in backquotes, as a message shows an edge's source.
fn quoted(endpoint: &Endpoint) -> String {
    match endpoint {
        Endpoint::Node(id) => format!("`{id}`"),
        other => other.as_written().to_owned(),
    }
}

/// Why a node name is reserved (E0103), if it is; the language adds its own keywords.
pub fn reserved_name_reason(name: &str) -> Option<String> {
    match name {
        "" => Some("a node needs a name".to_owned()),
        "START" | "END" => Some(format!("`{name}` is the graph's own terminal")),
        START | END => Some(format!(
            "`{name}` is how the runtime spells {}",
            if name == START { "START" } else { "END" }
        )),
        _ => None,
    }
}
