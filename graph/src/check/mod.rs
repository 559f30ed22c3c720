//! The graph rules: declarations, edges, whether the graph is whole, then flow warnings.
//!
//! Every check is linear (or n·log n) in nodes + edges: one name index, one pass over the edges,
//! breadth-first searches and an iterative Tarjan. Warnings are computed only for a graph
//! without errors (their reasoning assumes every name resolves).

mod adjacency;
mod flow;
mod joins;
mod same_step;
mod write_sets;

use std::collections::{HashMap, HashSet};

use adjacency::Adjacency;
pub use same_step::{
    SameStepSubgraphs, SameStepWrite, same_step_subgraphs, same_step_writes, unknown_field_message,
};
pub use write_sets::{WriteSets, runs_on_parents_state};

use rustc_hash::FxBuildHasher;

use crate::blueprint::{Blueprint, EdgeKind, Endpoint};
use crate::violation::{Limit, Reference, Violation, reserved_name_reason};

/// Checks a blueprint by the rules every front door shares; returns each broken rule, errors
/// first in declaration order, then warnings.
///
/// ```
/// use trellis_graph::{Blueprint, Code, Edge, Endpoint, Node, check};
///
/// let mut graph = Blueprint::new("Work");
/// graph.nodes.push(Node { on_error: Some("fallbak".into()), ..Node::new("work") });
/// graph.nodes.push(Node::new("fallback"));
/// graph.edges.push(Edge::to(Endpoint::Start, Endpoint::Node("work".into())));
/// graph.edges.push(Edge::to(Endpoint::Node("work".into()), Endpoint::End));
/// graph.edges.push(Edge::to(Endpoint::Node("fallback".into()), Endpoint::End));
///
/// let violations = check(&graph);
/// assert_eq!(violations[0].code(), Code::E0202);
/// assert_eq!(violations[0].message(&graph), "node `fallbak` is not declared in graph `Work`");
/// ```
pub fn check(blueprint: &Blueprint) -> Vec<Violation> {
    let mut violations = Vec::new();
    let index = NodeIndex::new(blueprint);
    let named = declarations(blueprint, &index, &mut violations);
    let outgoing = edges(blueprint, &index, &mut violations);
    // A node that cannot be named would only bring follow-on errors (no outgoing edge, …).
    if named {
        whole_graph(blueprint, &index, &outgoing, &mut violations);
    }
    if violations.is_empty() {
        let shape = Shape::new(blueprint, &index, &outgoing);
        flow::check(blueprint, &shape, &mut violations);
        joins::check(blueprint, &shape, &outgoing, &mut violations);
    }
    violations
}

/// Node names → the position of their first declaration.
pub(crate) struct NodeIndex<'b> {
    positions: HashMap<&'b str, usize, FxBuildHasher>,
    /// Per node: where its name is first declared (its own position unless declared again).
    /// Kept so that no rule looks a node's own name up again: in a large graph every lookup is a
    /// miss in the caches.
    first: Vec<usize>,
}

impl<'b> NodeIndex<'b> {
    fn new(blueprint: &'b Blueprint) -> Self {
        let n = blueprint.nodes.len();
        let mut positions = HashMap::with_capacity_and_hasher(n, FxBuildHasher);
        let mut first = Vec::with_capacity(n);
        for (at, node) in blueprint.nodes.iter().enumerate() {
            first.push(*positions.entry(node.id.as_str()).or_insert(at));
        }
        NodeIndex { positions, first }
    }

    /// Where the name of the node at `at` is first declared.
    fn first_declaration(&self, at: usize) -> usize {
        self.first[at]
    }

    pub(crate) fn get(&self, id: &str) -> Option<usize> {
        self.positions.get(id).copied()
    }
}

/// E0103, E0102, E0002; whether every node name can be used.
fn declarations(blueprint: &Blueprint, index: &NodeIndex<'_>, out: &mut Vec<Violation>) -> bool {
    let mut named = true;
    if blueprint.max_steps == Some(0) {
        out.push(Violation::ZeroLimit {
            limit: Limit::MaxSteps,
        });
    }
    for (at, node) in blueprint.nodes.iter().enumerate() {
        if reserved_name_reason(&node.id).is_some() {
            named = false;
            out.push(Violation::ReservedName { node: at });
        } else if index.first_declaration(at) != at {
            out.push(Violation::DuplicateNode {
                first: index.first_declaration(at),
                again: at,
            });
        }
        let zero = [
            (node.max_visits == Some(0), Limit::MaxVisits(at)),
            (node.timeout_ms == Some(0), Limit::Timeout(at)),
            (node.retry.is_some_and(|r| r.retries == 0), Limit::Retry(at)),
            (node.max_concurrency == Some(0), Limit::MaxConcurrency(at)),
        ];
        for (is_zero, limit) in zero {
            if is_zero {
                out.push(Violation::ZeroLimit { limit });
            }
        }
        match node.on_error.as_deref().map(Endpoint::from_name) {
            None => {}
            Some(Endpoint::Start | Endpoint::End) => {
                out.push(Violation::OnErrorNotANode { node: at });
            }
            Some(Endpoint::Node(handler)) => {
                // "START" and "END" are the language's spellings; as a handler they are no node.
                if handler == "START" || handler == "END" {
                    out.push(Violation::OnErrorNotANode { node: at });
                } else if index.get(&handler).is_none() {
                    out.push(Violation::Undeclared {
                        reference: Reference::OnError { node: at },
                    });
                }
            }
        }
    }
    named
}

/// Each node's one outgoing edge, and START's; and the node each edge target names.
pub(crate) struct Outgoing {
    pub(crate) entry: Option<usize>,
    pub(crate) of_node: Vec<Option<usize>>,
    /// The node each target names (`None` for START, END or an undeclared name), edge after
    /// edge: edge `e`'s targets from `target_starts[e]`.
    target_nodes: Vec<Option<usize>>,
    target_starts: Vec<usize>,
}

impl Outgoing {
    /// The nodes the targets of edge `edge` name, target by target.
    pub(crate) fn target_nodes(&self, edge: usize) -> &[Option<usize>] {
        let end = self
            .target_starts
            .get(edge + 1)
            .copied()
            .unwrap_or(self.target_nodes.len());
        &self.target_nodes[self.target_starts[edge]..end]
    }
}

/// E0203, E0205, E0202, E0204 (no targets), E0206, E0207, E0209, E0213; the outgoing edge of every
/// node.
fn edges(blueprint: &Blueprint, index: &NodeIndex<'_>, out: &mut Vec<Violation>) -> Outgoing {
    let mut outgoing = Outgoing {
        entry: None,
        of_node: vec![None; blueprint.nodes.len()],
        target_nodes: Vec::with_capacity(blueprint.edges.len()),
        target_starts: Vec::with_capacity(blueprint.edges.len()),
    };
    // Per node: the join edges into it (the first, and how many), to find a join of one.
    let mut joined: Vec<(usize, usize)> = vec![(0, 0); blueprint.nodes.len()];
    // The join edges into the same targets are one join: its shape is reported once.
    let mut joins_seen: HashSet<&[Endpoint], FxBuildHasher> = HashSet::default();
    for (at, edge) in blueprint.edges.iter().enumerate() {
        let first_of_join =
            edge.kind == EdgeKind::Join && joins_seen.insert(edge.targets.as_slice());
        if edge.kind == EdgeKind::Join {
            join_edge(index, at, edge, first_of_join, &mut joined, out);
        }
        match &edge.from {
            // START in a join is no entry (E0207 above).
            Endpoint::Start if edge.kind == EdgeKind::Join => {}
            Endpoint::Start => match outgoing.entry {
                Some(first) => out.push(Violation::TwoEntries { first, again: at }),
                None => outgoing.entry = Some(at),
            },
            Endpoint::End => out.push(Violation::EdgeOutOfEnd { edge: at }),
            Endpoint::Node(id) => match index.get(id) {
                Some(node) => match outgoing.of_node[node] {
                    Some(first) => out.push(Violation::TwoOutgoing {
                        node,
                        first,
                        again: at,
                    }),
                    None => outgoing.of_node[node] = Some(at),
                },
                None => out.push(Violation::Undeclared {
                    reference: Reference::From { edge: at },
                }),
            },
        }
        if edge.targets.is_empty() {
            out.push(Violation::NoTargets { edge: at });
        }
        let start = outgoing.target_nodes.len();
        outgoing.target_starts.push(start);
        // Edges have a handful of targets: a list beats a set.
        for (target_at, target) in edge.targets.iter().enumerate() {
            if let Some(first) = edge.targets[..target_at].iter().position(|t| t == target) {
                let node = outgoing.target_nodes[start + first];
                outgoing.target_nodes.push(node);
                out.push(Violation::RepeatedTarget {
                    edge: at,
                    first,
                    again: target_at,
                });
                continue;
            }
            let node = match target {
                Endpoint::Node(id) => index.get(id),
                Endpoint::Start | Endpoint::End => None,
            };
            outgoing.target_nodes.push(node);
            match target {
                Endpoint::Start => out.push(Violation::EdgeIntoStart {
                    edge: at,
                    target: target_at,
                }),
                Endpoint::End if edge.kind == EdgeKind::Fork => out.push(Violation::EndInFork {
                    edge: at,
                    target: target_at,
                }),
                Endpoint::End if edge.kind == EdgeKind::Each => out.push(Violation::EndInSend {
                    edge: at,
                    target: target_at,
                }),
                Endpoint::End if edge.kind == EdgeKind::Join => {
                    if first_of_join {
                        out.push(Violation::EndInJoin { edge: at });
                    }
                }
                Endpoint::End => {}
                Endpoint::Node(_) => match node {
                    None => out.push(Violation::Undeclared {
                        reference: Reference::Target {
                            edge: at,
                            target: target_at,
                        },
                    }),
                    Some(node)
                        if edge.kind == EdgeKind::Each && blueprint.nodes[node].graph.is_some() =>
                    {
                        out.push(Violation::SentToSubgraph {
                            edge: at,
                            target: target_at,
                        });
                    }
                    Some(_) => {}
                },
            }
        }
    }
    for (node, &(edge, count)) in joined.iter().enumerate() {
        if count == 1 {
            out.push(Violation::LoneJoin { node, edge });
        }
    }
    outgoing
}

/// E0207 (START joining), E0209 (a join into several targets, reported on its first edge);
/// counts the join into its node.
fn join_edge(
    index: &NodeIndex<'_>,
    at: usize,
    edge: &crate::blueprint::Edge,
    first_of_join: bool,
    joined: &mut [(usize, usize)],
    out: &mut Vec<Violation>,
) {
    if edge.from == Endpoint::Start {
        out.push(Violation::JoinOutOfStart { edge: at });
    }
    match edge.targets.as_slice() {
        [] => {}
        [Endpoint::Node(id)] => {
            if let Some(node) = index.get(id) {
                let (first, count) = &mut joined[node];
                if *count == 0 {
                    *first = at;
                }
                *count += 1;
            }
        }
        [_] => {}
        _ if first_of_join => out.push(Violation::JoinTargets { edge: at }),
        _ => {}
    }
}

/// E0208, E0201, E0204: rules about what the graph lacks, meaningful only when every declaration
/// is known (the language skips them after a syntax error).
fn whole_graph(
    blueprint: &Blueprint,
    index: &NodeIndex<'_>,
    outgoing: &Outgoing,
    out: &mut Vec<Violation>,
) {
    if blueprint.nodes.is_empty() {
        out.push(Violation::NoNodes);
        return;
    }
    if outgoing.entry.is_none() {
        out.push(Violation::NoEntry);
    }
    for at in 0..blueprint.nodes.len() {
        // A repeated declaration is its own error; its edges belong to the first.
        if outgoing.of_node[at].is_none() && index.first_declaration(at) == at {
            out.push(Violation::NoOutgoing { node: at });
        }
    }
}

/// The resolved topology of an error-free blueprint, for the flow warnings.
pub(crate) struct Shape {
    /// Per node: (successor, edge, target position) by its edge.
    pub(crate) next: Adjacency<Successor>,
    /// Per node: its `on_error` handler.
    pub(crate) handler: Vec<Option<usize>>,
    /// Nodes START leads to.
    pub(crate) entry: Vec<usize>,
    /// Per node: whether its edge may lead to END.
    pub(crate) ends: Vec<bool>,
}

#[derive(Clone, Copy, Default)]
pub(crate) struct Successor {
    pub(crate) node: usize,
    pub(crate) edge: usize,
    pub(crate) target: usize,
}

impl Shape {
    fn new(blueprint: &Blueprint, index: &NodeIndex<'_>, outgoing: &Outgoing) -> Self {
        let n = blueprint.nodes.len();
        let mut ends = vec![false; n];
        let mut next = Vec::with_capacity(blueprint.edges.len());
        for (from, edge) in outgoing.of_node.iter().enumerate() {
            let Some(edge) = *edge else { continue };
            let targets = blueprint.edges[edge].targets.iter();
            for (target, (endpoint, node)) in targets.zip(outgoing.target_nodes(edge)).enumerate() {
                match *node {
                    Some(node) => next.push((from, Successor { node, edge, target })),
                    None => ends[from] |= *endpoint == Endpoint::End,
                }
            }
        }
        Shape {
            next: Adjacency::new(n, &next),
            handler: blueprint
                .nodes
                .iter()
                .map(|node| node.on_error.as_deref().and_then(|h| index.get(h)))
                .collect(),
            entry: outgoing
                .entry
                .map(|edge| {
                    outgoing
                        .target_nodes(edge)
                        .iter()
                        .flatten()
                        .copied()
                        .collect()
                })
                .unwrap_or_default(),
            ends,
        }
    }
}
