//! Flow warnings: nodes START cannot reach (W0301), places from which END cannot be reached
//! (W0302), and cycles no `max_visits` bounds (W0303).
//!
//! Everything here is linear in nodes + edges: breadth-first searches and an iterative Tarjan
//! (no recursion, so a 10,000-node chain cannot overflow the stack).

use std::collections::VecDeque;

use super::NodeIndex;
use crate::blueprint::{Blueprint, Endpoint};
use crate::diagnostic::{Code, Diagnostic, Diagnostics, Span};

/// The longest cycle spelled out in full in a W0303 message.
const CYCLE_SHOWN: usize = 6;

struct Topology {
    /// Successors by edges, per node.
    next: Vec<Vec<usize>>,
    /// Successors by edges or by `on_error`, per node.
    next_or_handler: Vec<Vec<usize>>,
    /// Nodes START leads to.
    entry: Vec<usize>,
    /// Nodes with an edge to END.
    ends: Vec<bool>,
}

impl Topology {
    fn new(graph: &Blueprint, index: &NodeIndex<'_>) -> Self {
        let n = graph.nodes.len();
        let mut topology = Topology {
            next: vec![Vec::new(); n],
            next_or_handler: vec![Vec::new(); n],
            entry: Vec::new(),
            ends: vec![false; n],
        };
        for edge in &graph.edges {
            let from = match &edge.from {
                Endpoint::Node(id) => index.get(id),
                _ => None,
            };
            for target in &edge.targets {
                match (from, target) {
                    (Some(from), Endpoint::Node(id)) => {
                        if let Some(to) = index.get(id) {
                            topology.next[from].push(to);
                        }
                    }
                    (Some(from), Endpoint::End) => topology.ends[from] = true,
                    (None, Endpoint::Node(id)) if edge.from == Endpoint::Start => {
                        topology.entry.extend(index.get(id));
                    }
                    _ => {}
                }
            }
        }
        for (at, node) in graph.nodes.iter().enumerate() {
            topology.next_or_handler[at] = topology.next[at].clone();
            if let Some(handler) = node.on_error.as_ref().and_then(|h| index.get(&h.id)) {
                topology.next_or_handler[at].push(handler);
            }
        }
        topology
    }
}

pub(super) fn check(graph: &Blueprint, index: &NodeIndex<'_>, diagnostics: &mut Diagnostics) {
    let topology = Topology::new(graph, index);
    let reached = search(&topology.entry, &topology.next_or_handler);
    for (node, reached) in graph.nodes.iter().zip(&reached) {
        if !reached {
            diagnostics.push(
                Diagnostic::new(
                    Code::W0301,
                    node.span,
                    format!("node `{}` cannot be reached from START", node.id),
                    "unreachable",
                )
                .with_help("lead an edge to it, or remove it"),
            );
        }
    }
    check_dead_ends(graph, &topology, &reached, diagnostics);
    check_unbounded_cycles(graph, &topology, diagnostics);
}

/// Breadth-first search from `roots`; which nodes it reaches.
fn search(roots: &[usize], next: &[Vec<usize>]) -> Vec<bool> {
    let mut seen = vec![false; next.len()];
    let mut queue: VecDeque<usize> = VecDeque::new();
    for &root in roots {
        if !seen[root] {
            seen[root] = true;
            queue.push_back(root);
        }
    }
    while let Some(at) = queue.pop_front() {
        for &to in &next[at] {
            if !seen[to] {
                seen[to] = true;
                queue.push_back(to);
            }
        }
    }
    seen
}

/// Reports each place where a run enters a region from which END cannot be reached: the
/// region's nodes whose predecessor (or START) could still end, once each.
fn check_dead_ends(
    graph: &Blueprint,
    topology: &Topology,
    reached: &[bool],
    diagnostics: &mut Diagnostics,
) {
    let n = graph.nodes.len();
    let mut previous: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (from, targets) in topology.next_or_handler.iter().enumerate() {
        for &to in targets {
            previous[to].push(from);
        }
    }
    let ends: Vec<usize> = (0..n).filter(|&at| topology.ends[at]).collect();
    let can_end = search(&ends, &previous);
    let mut entered = vec![false; n];
    for &at in &topology.entry {
        entered[at] = true;
    }
    for (from, targets) in topology.next_or_handler.iter().enumerate() {
        if can_end[from] {
            for &to in targets {
                entered[to] = true;
            }
        }
    }
    for at in 0..n {
        if reached[at] && !can_end[at] && entered[at] {
            let node = &graph.nodes[at];
            diagnostics.push(
                Diagnostic::new(
                    Code::W0302,
                    node.span,
                    format!("END cannot be reached from node `{}`", node.id),
                    "no path from here leads to END",
                )
                .with_help(
                    "a run that gets here can only stop by failing at `max_steps` or \
                     `max_visits`; add a path from here to END",
                ),
            );
        }
    }
}

/// Reports every cycle of nodes none of which has `max_visits`: the strongly connected
/// components of the graph restricted to unbounded nodes.
fn check_unbounded_cycles(graph: &Blueprint, topology: &Topology, diagnostics: &mut Diagnostics) {
    let unbounded: Vec<bool> = graph.nodes.iter().map(|n| n.max_visits.is_none()).collect();
    for component in strongly_connected(&topology.next, &unbounded) {
        let root = component.iter().copied().min().unwrap_or_default();
        let cyclic = component.len() > 1 || topology.next[root].contains(&root);
        if !cyclic {
            continue;
        }
        let mut in_component = vec![false; graph.nodes.len()];
        for &at in &component {
            in_component[at] = true;
        }
        let cycle = cycle_through(root, &topology.next, &in_component);
        let mut names: Vec<&str> = cycle
            .iter()
            .map(|&at| graph.nodes[at].id.as_str())
            .collect();
        let spelled = if names.len() > CYCLE_SHOWN {
            names.truncate(CYCLE_SHOWN);
            format!("{} -> …", names.join(" -> "))
        } else {
            names.push(&graph.nodes[root].id);
            names.join(" -> ")
        };
        let closing = cycle.last().copied().unwrap_or(root);
        let mut diagnostic = Diagnostic::new(
            Code::W0303,
            graph.nodes[root].span,
            format!("cycle `{spelled}` has no node with `max_visits`"),
            "this cycle is unbounded",
        )
        .with_help("only `max_steps` bounds it; add `max_visits N;` to one of its nodes");
        if let Some(span) = edge_span(graph, closing, root) {
            diagnostic = diagnostic.with_label(span, "the cycle closes here");
        }
        diagnostics.push(diagnostic);
    }
}

/// Where the edge from node `from` to node `to` is written.
fn edge_span(graph: &Blueprint, from: usize, to: usize) -> Option<Span> {
    let (from, to) = (&graph.nodes[from].id, &graph.nodes[to].id);
    graph.edges.iter().find_map(|edge| {
        if !matches!(&edge.from, Endpoint::Node(id) if id == from) {
            return None;
        }
        let at = edge
            .targets
            .iter()
            .position(|t| matches!(t, Endpoint::Node(id) if id == to))?;
        Some(edge.from_span.to(edge.target_spans[at]))
    })
}

/// The nodes of a shortest cycle from `root` back to itself within one component, starting at
/// `root` (breadth-first, so linear).
fn cycle_through(root: usize, next: &[Vec<usize>], in_component: &[bool]) -> Vec<usize> {
    let mut parent: Vec<Option<usize>> = vec![None; next.len()];
    let mut queue = VecDeque::from([root]);
    let mut last = root;
    'search: while let Some(at) = queue.pop_front() {
        for &to in &next[at] {
            if to == root {
                last = at;
                break 'search;
            }
            if in_component[to] && parent[to].is_none() {
                parent[to] = Some(at);
                queue.push_back(to);
            }
        }
    }
    let mut path = vec![last];
    while let Some(before) = parent[*path.last().unwrap_or(&root)] {
        path.push(before);
    }
    if path.last() != Some(&root) {
        path.push(root);
    }
    path.reverse();
    path.dedup();
    path
}

/// Strongly connected components of the subgraph induced by `include`, by an iterative Tarjan.
fn strongly_connected(next: &[Vec<usize>], include: &[bool]) -> Vec<Vec<usize>> {
    const UNVISITED: usize = usize::MAX;
    let n = next.len();
    let mut order = vec![UNVISITED; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut calls: Vec<(usize, usize)> = Vec::new();
    let mut components = Vec::new();
    let mut counter = 0;
    for root in 0..n {
        if !include[root] || order[root] != UNVISITED {
            continue;
        }
        order[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        calls.push((root, 0));
        while let Some(&(at, child)) = calls.last() {
            if let Some(&to) = next[at].get(child) {
                if let Some(top) = calls.last_mut() {
                    top.1 += 1;
                }
                if !include[to] {
                    continue;
                }
                if order[to] == UNVISITED {
                    order[to] = counter;
                    low[to] = counter;
                    counter += 1;
                    stack.push(to);
                    on_stack[to] = true;
                    calls.push((to, 0));
                } else if on_stack[to] {
                    low[at] = low[at].min(order[to]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[at]);
            }
            if low[at] == order[at] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == at {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_of_a_small_graph() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3, 3 -> 3
        let next = vec![vec![1], vec![2], vec![0, 3], vec![3]];
        let mut components = strongly_connected(&next, &[true; 4]);
        for c in &mut components {
            c.sort_unstable();
        }
        components.sort();
        assert_eq!(components, vec![vec![0, 1, 2], vec![3]]);
        // Leaving node 1 out breaks the big cycle.
        let components = strongly_connected(&next, &[true, false, true, true]);
        assert!(components.iter().all(|c| c.len() == 1));
    }

    #[test]
    fn a_long_chain_does_not_recurse() {
        let n = 200_000;
        let next: Vec<Vec<usize>> = (0..n).map(|i| vec![(i + 1) % n]).collect();
        let components = strongly_connected(&next, &vec![true; n]);
        assert_eq!(components.len(), 1);
        let cycle = cycle_through(0, &next, &vec![true; n]);
        assert_eq!(cycle.len(), n);
    }

    #[test]
    fn the_shortest_cycle_is_spelled() {
        // 0 -> 1 -> 0 and 0 -> 2 -> 3 -> 0
        let next = vec![vec![2, 1], vec![0], vec![3], vec![0]];
        assert_eq!(cycle_through(0, &next, &[true; 4]), vec![0, 1]);
    }
}
