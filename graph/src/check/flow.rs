//! Flow warnings: nodes START cannot reach (W0301), places from which END cannot be reached
//! (W0302), and cycles no `max_visits` bounds (W0303).
//!
//! Linear in nodes + edges: breadth-first searches and an iterative Tarjan (no recursion, so a
//! long chain cannot overflow the stack); buffers are allocated once, not per component.

use std::collections::VecDeque;

use super::{Adjacency, Shape};
use crate::blueprint::Blueprint;
use crate::violation::Violation;

pub(super) fn check(blueprint: &Blueprint, shape: &Shape, out: &mut Vec<Violation>) {
    let n = blueprint.nodes.len();
    // `on_error` routes count for reaching nodes and END, not for cycles.
    let routes: Vec<(usize, usize)> = shape
        .next
        .pairs()
        .map(|(from, successor)| (from, successor.node))
        .chain(
            shape
                .handler
                .iter()
                .enumerate()
                .filter_map(|(from, handler)| Some((from, (*handler)?))),
        )
        .collect();
    let next_or_handler = Adjacency::new(n, &routes);
    let reached = search(&shape.entry, &next_or_handler);
    for (node, reached) in reached.iter().enumerate() {
        if !reached {
            out.push(Violation::Unreachable { node });
        }
    }
    dead_ends(shape, &routes, &next_or_handler, &reached, out);
    unbounded_cycles(blueprint, shape, out);
}

/// Breadth-first search from `roots`; which nodes it reaches.
fn search(roots: &[usize], next: &Adjacency<usize>) -> Vec<bool> {
    let mut seen = vec![false; next.nodes()];
    let mut queue: VecDeque<usize> = VecDeque::new();
    for &root in roots {
        if !seen[root] {
            seen[root] = true;
            queue.push_back(root);
        }
    }
    while let Some(at) = queue.pop_front() {
        for &to in next.of(at) {
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
fn dead_ends(
    shape: &Shape,
    routes: &[(usize, usize)],
    next_or_handler: &Adjacency<usize>,
    reached: &[bool],
    out: &mut Vec<Violation>,
) {
    let n = next_or_handler.nodes();
    let reversed: Vec<(usize, usize)> = routes.iter().map(|&(from, to)| (to, from)).collect();
    let previous = Adjacency::new(n, &reversed);
    let ends: Vec<usize> = (0..n).filter(|&at| shape.ends[at]).collect();
    let can_end = search(&ends, &previous);
    let mut entered = vec![false; n];
    for &at in &shape.entry {
        entered[at] = true;
    }
    for &(from, to) in routes {
        if can_end[from] {
            entered[to] = true;
        }
    }
    for node in 0..n {
        if reached[node] && !can_end[node] && entered[node] {
            out.push(Violation::CannotEnd { node });
        }
    }
}

/// Reports every cycle of nodes none of which has `max_visits`: the strongly connected
/// components of the graph restricted to unbounded nodes, each spelled by a shortest cycle.
fn unbounded_cycles(blueprint: &Blueprint, shape: &Shape, out: &mut Vec<Violation>) {
    let pairs: Vec<(usize, usize)> = shape.next.pairs().map(|(from, s)| (from, s.node)).collect();
    let next = Adjacency::new(blueprint.nodes.len(), &pairs);
    let unbounded: Vec<bool> = blueprint
        .nodes
        .iter()
        .map(|node| node.max_visits.is_none())
        .collect();
    let mut component_of = vec![usize::MAX; next.nodes()];
    let mut parent = vec![None; next.nodes()];
    for (number, component) in strongly_connected(&next, &unbounded).iter().enumerate() {
        let root = component.iter().copied().min().unwrap_or_default();
        let cyclic = component.len() > 1 || next.of(root).contains(&root);
        if !cyclic {
            continue;
        }
        for &at in component {
            component_of[at] = number;
        }
        let cycle = cycle_through(root, &next, |at| component_of[at] == number, &mut parent);
        for &at in component {
            parent[at] = None;
        }
        let closing_node = cycle.last().copied().unwrap_or(root);
        let closing = shape
            .next
            .of(closing_node)
            .iter()
            .find(|s| s.node == root)
            .map(|s| (s.edge, s.target));
        out.push(Violation::UnboundedCycle { cycle, closing });
    }
}

/// The nodes of a shortest cycle from `root` back to itself within one component, starting at
/// `root` (breadth-first, so linear in the component). `parent` is all `None` on entry; the
/// caller clears the component's entries afterwards.
fn cycle_through(
    root: usize,
    next: &Adjacency<usize>,
    in_component: impl Fn(usize) -> bool,
    parent: &mut [Option<usize>],
) -> Vec<usize> {
    let mut queue = VecDeque::from([root]);
    let mut last = root;
    'search: while let Some(at) = queue.pop_front() {
        for &to in next.of(at) {
            if to == root {
                last = at;
                break 'search;
            }
            if in_component(to) && parent[to].is_none() {
                parent[to] = Some(at);
                queue.push_back(to);
            }
        }
    }
    let mut path = vec![last];
    while let Some(before) = path.last().and_then(|&at| parent[at]) {
        path.push(before);
    }
    if path.last() != Some(&root) {
        path.push(root);
    }
    path.reverse();
    path.dedup();
    path
}

/// Strongly connected components, as one flat list of members: component `c` is
/// `members[ends[c - 1]..ends[c]]` (no allocation per component: a large acyclic graph has a
/// component per node).
pub(super) struct Components {
    members: Vec<usize>,
    ends: Vec<usize>,
}

impl Components {
    pub(super) fn iter(&self) -> impl Iterator<Item = &[usize]> + '_ {
        self.ends.iter().scan(0, |start, &end| {
            let component = &self.members[*start..end];
            *start = end;
            Some(component)
        })
    }
}

/// Strongly connected components of the subgraph induced by `include`, by an iterative Tarjan.
pub(super) fn strongly_connected(next: &Adjacency<usize>, include: &[bool]) -> Components {
    const UNVISITED: usize = usize::MAX;
    let n = next.nodes();
    let mut order = vec![UNVISITED; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut calls: Vec<(usize, usize)> = Vec::new();
    let mut components = Components {
        members: Vec::with_capacity(n),
        ends: Vec::new(),
    };
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
            if let Some(&to) = next.of(at).get(child) {
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
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    components.members.push(member);
                    if member == at {
                        break;
                    }
                }
                components.ends.push(components.members.len());
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adjacency(lists: &[&[usize]]) -> Adjacency<usize> {
        let pairs: Vec<(usize, usize)> = lists
            .iter()
            .enumerate()
            .flat_map(|(from, targets)| targets.iter().map(move |&to| (from, to)))
            .collect();
        Adjacency::new(lists.len(), &pairs)
    }

    #[test]
    fn components_of_a_small_graph() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3, 3 -> 3
        let next = adjacency(&[&[1], &[2], &[0, 3], &[3]]);
        let mut components: Vec<Vec<usize>> = strongly_connected(&next, &[true; 4])
            .iter()
            .map(<[usize]>::to_vec)
            .collect();
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
        let pairs: Vec<(usize, usize)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
        let next = Adjacency::new(n, &pairs);
        let components = strongly_connected(&next, &vec![true; n]);
        assert_eq!(components.iter().count(), 1);
        let cycle = cycle_through(0, &next, |_| true, &mut vec![None; n]);
        assert_eq!(cycle.len(), n);
    }

    #[test]
    fn the_shortest_cycle_is_spelled() {
        // 0 -> 1 -> 0 and 0 -> 2 -> 3 -> 0
        let next = adjacency(&[&[2, 1], &[0], &[3], &[0]]);
        assert_eq!(
            cycle_through(0, &next, |_| true, &mut [None; 4]),
            vec![0, 1]
        );
    }
}
