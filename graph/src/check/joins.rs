//! W0304: a node without `defer` that the branches of one fork reach in different super-steps.
//!
//! The runtime joins branches that arrive in the same super-step (the frontier is a set), but a
//! branch that arrives later activates the node again. For each fork, a breadth-first search
//! runs from all its targets at once, each target's wave under its own label; a node reached by
//! two labels is a join, at equal distances harmless (the labels merge), at different ones the
//! warning. Merged labels share a union-find set, so a loop that comes back around into a branch
//! it descends from is not mistaken for a join, and the fork's own node is a barrier (reaching it
//! again is the next round of a loop, not a join). Deferred nodes wait for the other branches:
//! they are neither reported nor followed.
//!
//! The search of a fork stops once its labels have all merged, so forks that rejoin cost what
//! their branches cost. To stay linear on any shape (a fork whose branch runs on to the end of a
//! long graph never merges), the whole check follows at most a fixed multiple of the graph's
//! edges and gives up quietly beyond that: it is a lint, and a missed warning costs less than a
//! slow `cargo check`.

use std::collections::VecDeque;

use super::{Outgoing, Shape};
use crate::blueprint::{Blueprint, EdgeKind, Endpoint};
use crate::violation::{Path, Violation};

/// How many nodes of a path a message spells out.
const PATH_SHOWN: usize = 6;
/// Edges followed, per edge of the graph, before the check gives up.
const WORK_PER_EDGE: usize = 8;

const NONE: usize = usize::MAX;

pub(super) fn check(
    blueprint: &Blueprint,
    shape: &Shape,
    outgoing: &Outgoing,
    out: &mut Vec<Violation>,
) {
    let n = blueprint.nodes.len();
    let edges: usize = shape.next.iter().map(Vec::len).sum();
    let mut budget = WORK_PER_EDGE * (n + edges) + 1024;
    let mut search = Search {
        label: vec![NONE; n],
        distance: vec![0; n],
        previous: vec![NONE; n],
        touched: Vec::new(),
        reported: vec![false; n],
    };
    let forks = std::iter::once((None, outgoing.entry)).chain(
        outgoing
            .of_node
            .iter()
            .enumerate()
            .map(|(at, edge)| (Some(at), *edge)),
    );
    for (source, edge) in forks {
        let Some(edge) = edge.filter(|&edge| blueprint.edges[edge].kind == EdgeKind::Fork) else {
            continue;
        };
        let complete = search.fork(blueprint, shape, source, edge, &mut budget, out);
        search.reset();
        if !complete {
            return;
        }
    }
}

struct Search {
    /// The label (fork target) whose wave reached each node first.
    label: Vec<usize>,
    /// Steps from that target.
    distance: Vec<usize>,
    /// The node the wave came from.
    previous: Vec<usize>,
    /// Nodes labelled in this fork's search, to reset.
    touched: Vec<usize>,
    /// Nodes already warned about (once per node, whatever the fork).
    reported: Vec<bool>,
}

impl Search {
    /// Searches from one fork; false when the work budget ran out.
    fn fork(
        &mut self,
        blueprint: &Blueprint,
        shape: &Shape,
        source: Option<usize>,
        edge: usize,
        budget: &mut usize,
        out: &mut Vec<Violation>,
    ) -> bool {
        let targets: Vec<usize> = shape_targets(blueprint, shape, source, edge);
        let mut sets = Sets::new(targets.len());
        let mut queue = VecDeque::new();
        for (label, &target) in targets.iter().enumerate() {
            if blueprint.nodes[target].defer {
                continue;
            }
            self.label[target] = label;
            self.distance[target] = 0;
            self.touched.push(target);
            queue.push_back(target);
        }
        // Only the waves that started can merge.
        sets.count = queue.len();
        while let Some(at) = queue.pop_front() {
            if sets.count == 1 {
                break;
            }
            for successor in &shape.next[at] {
                let Some(left) = budget.checked_sub(1) else {
                    return false;
                };
                *budget = left;
                let to = successor.node;
                if Some(to) == source || blueprint.nodes[to].defer {
                    continue;
                }
                if self.label[to] == NONE {
                    self.label[to] = self.label[at];
                    self.distance[to] = self.distance[at] + 1;
                    self.previous[to] = at;
                    self.touched.push(to);
                    queue.push_back(to);
                    continue;
                }
                let (first, second) = (sets.find(self.label[to]), sets.find(self.label[at]));
                if first == second {
                    continue;
                }
                if self.distance[to] != self.distance[at] + 1 && !self.reported[to] {
                    self.reported[to] = true;
                    let from = blueprint.edges[edge].from.clone();
                    let shorter = self.path(&from, to, None);
                    let longer = self.path(&from, at, Some(to));
                    out.push(Violation::UnevenJoin {
                        node: to,
                        fork: edge,
                        paths: [shorter, longer],
                    });
                }
                sets.union(first, second);
            }
        }
        true
    }

    /// The path of the wave that reached `last`, then `then` if given.
    fn path(&self, from: &Endpoint, last: usize, then: Option<usize>) -> Path {
        let steps = self.distance[last] + 1 + usize::from(then.is_some());
        let mut nodes: Vec<usize> = then.into_iter().collect();
        let mut at = last;
        while at != NONE && nodes.len() < PATH_SHOWN {
            nodes.push(at);
            at = self.previous[at];
        }
        nodes.reverse();
        Path {
            from: from.clone(),
            elided: nodes.len() < steps,
            nodes,
            steps,
        }
    }

    fn reset(&mut self) {
        for at in self.touched.drain(..) {
            self.label[at] = NONE;
            self.previous[at] = NONE;
        }
    }
}

/// The fork's targets as node positions.
fn shape_targets(
    blueprint: &Blueprint,
    shape: &Shape,
    source: Option<usize>,
    edge: usize,
) -> Vec<usize> {
    match source {
        Some(node) => shape.next[node].iter().map(|s| s.node).collect(),
        None => {
            debug_assert_eq!(blueprint.edges[edge].from, Endpoint::Start);
            shape.entry.clone()
        }
    }
}

/// Union-find over a fork's labels, counting the sets.
struct Sets {
    parent: Vec<usize>,
    count: usize,
}

impl Sets {
    fn new(labels: usize) -> Self {
        Sets {
            parent: (0..labels).collect(),
            count: labels,
        }
    }

    fn find(&mut self, mut label: usize) -> usize {
        while self.parent[label] != label {
            self.parent[label] = self.parent[self.parent[label]];
            label = self.parent[label];
        }
        label
    }

    fn union(&mut self, a: usize, b: usize) {
        if a != b {
            self.parent[a] = b;
            self.count -= 1;
        }
    }
}
