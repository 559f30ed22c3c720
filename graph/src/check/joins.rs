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
    let edges = shape.next.len();
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
            for successor in shape.next.of(at) {
                let Some(left) = budget.checked_sub(1) else {
                    return false;
                };
                *budget = left;
                let to = successor.node;
                // A deferred node, and a waiting join, run once after all their branches.
                if Some(to) == source
                    || blueprint.nodes[to].defer
                    || blueprint.edges[successor.edge].kind == EdgeKind::Join
                {
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
        Some(node) => shape.next.of(node).iter().map(|s| s.node).collect(),
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

#[cfg(test)]
mod tests {
    use crate::{Blueprint, Code, Edge, EdgeKind, Endpoint, Node, Violation, check};

    /// A blueprint from `from -> to` lines: `a -> b`, `a -> b | c`, `a -> b & c`; `S` and `E`
    /// are START and END; nodes named `*x` are deferred.
    fn graph(lines: &[&str]) -> Blueprint {
        let endpoint = |name: &str| match name.trim_start_matches('*') {
            "S" => Endpoint::Start,
            "E" => Endpoint::End,
            node => Endpoint::Node(node.to_owned()),
        };
        let mut blueprint = Blueprint::new("G");
        let declare = |name: &str, blueprint: &mut Blueprint| {
            let id = name.trim_start_matches('*');
            if !matches!(id, "S" | "E") && blueprint.node(id).is_none() {
                blueprint.nodes.push(Node {
                    defer: name.starts_with('*'),
                    ..Node::new(id)
                });
            }
        };
        for line in lines {
            let (from, to) = line.split_once(" -> ").expect("an edge");
            let (kind, separator) = if to.contains('&') {
                (EdgeKind::Fork, '&')
            } else if to.contains('|') {
                (EdgeKind::Conditional, '|')
            } else {
                (EdgeKind::Static, ' ')
            };
            let targets: Vec<&str> = to.split(separator).map(str::trim).collect();
            declare(from, &mut blueprint);
            for target in &targets {
                declare(target, &mut blueprint);
            }
            blueprint.edges.push(Edge {
                from: endpoint(from),
                kind,
                targets: targets.into_iter().map(endpoint).collect(),
            });
        }
        blueprint
    }

    /// The W0304 messages of a graph (which must have no error).
    fn uneven(lines: &[&str]) -> Vec<String> {
        let blueprint = graph(lines);
        let violations = check(&blueprint);
        assert!(violations.iter().all(|v| !v.is_error()), "{violations:?}");
        violations
            .iter()
            .filter(|v| v.code() == Code::W0304)
            .map(|v| v.message(&blueprint))
            .collect()
    }

    #[test]
    fn branches_of_different_lengths_are_reported_with_both_paths() {
        let found = uneven(&[
            "S -> plan",
            "plan -> web & papers",
            "web -> sum",
            "papers -> deep",
            "deep -> sum",
            "sum -> E",
        ]);
        assert_eq!(
            found,
            [
                "node `sum` is reached by fork branches of different lengths: `plan -> web -> sum` (2 steps) and `plan -> papers -> deep -> sum` (3 steps)"
            ]
        );
    }

    #[test]
    fn branches_of_equal_length_are_not() {
        assert!(uneven(&["S -> plan", "plan -> a & b", "a -> j", "b -> j", "j -> E"]).is_empty());
        // Three branches, two steps each.
        assert!(
            uneven(&[
                "S -> p",
                "p -> a & b & c",
                "a -> x",
                "b -> y",
                "c -> z",
                "x -> j",
                "y -> j",
                "z -> j",
                "j -> E"
            ])
            .is_empty()
        );
    }

    #[test]
    fn a_deferred_join_is_not() {
        assert!(
            uneven(&[
                "S -> plan",
                "plan -> web & papers",
                "web -> *sum",
                "papers -> deep",
                "deep -> *sum",
                "*sum -> E"
            ])
            .is_empty()
        );
    }

    #[test]
    fn a_loop_back_into_a_branch_is_no_join() {
        // The merged branches loop back to `b` (and to the fork): later rounds, not a join.
        assert!(
            uneven(&[
                "S -> plan",
                "plan -> a & b",
                "a -> a2",
                "b -> b2",
                "a2 -> j",
                "b2 -> j",
                "j -> b | plan | E"
            ])
            .is_empty()
        );
        // A side branch that ends, forked again on every round of the loop.
        assert!(
            uneven(&[
                "S -> plan",
                "plan -> a & side",
                "side -> E",
                "a -> x",
                "x -> plan | E"
            ])
            .is_empty()
        );
    }

    #[test]
    fn a_join_inside_a_loop_is_reported() {
        let found = uneven(&[
            "S -> plan",
            "plan -> a & b",
            "a -> j",
            "b -> c",
            "c -> j",
            "j -> plan | E",
        ]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("node `j`"), "{found:?}");
    }

    #[test]
    fn a_fork_target_reached_again_by_its_sibling_is_reported() {
        let found = uneven(&["S -> p", "p -> a & b", "a -> b", "b -> E"]);
        assert_eq!(
            found,
            [
                "node `b` is reached by fork branches of different lengths: `p -> b` (1 step) and `p -> a -> b` (2 steps)"
            ]
        );
    }

    #[test]
    fn a_fork_from_start_counts_and_long_paths_are_elided() {
        let mut lines = vec!["S -> a & b", "a -> j", "j -> E", "b -> c1"];
        let chain: Vec<String> = (1..9).map(|i| format!("c{i} -> c{}", i + 1)).collect();
        lines.extend(chain.iter().map(String::as_str));
        lines.push("c9 -> j");
        let found = uneven(&lines);
        assert_eq!(
            found,
            [
                "node `j` is reached by fork branches of different lengths: `START -> a -> j` (2 steps) and `START -> … -> c5 -> c6 -> c7 -> c8 -> c9 -> j` (11 steps)"
            ]
        );
    }

    #[test]
    fn each_join_is_reported_once() {
        // Two forks reach `j` unevenly.
        let found = uneven(&[
            "S -> p",
            "p -> a & b",
            "a -> q",
            "b -> j",
            "q -> c & d",
            "c -> j",
            "d -> e",
            "e -> j",
            "j -> E",
        ]);
        assert_eq!(found.len(), 1, "{found:?}");
    }

    #[test]
    fn the_search_stays_within_its_budget_on_forks_that_never_join() {
        // A long chain with a fork every few nodes whose second branch ends at once: each
        // fork's search would walk the rest of the chain; the budget stops it, quietly.
        let mut lines = vec!["S -> n0".to_owned()];
        for i in 0..3000 {
            if i % 3 == 0 {
                lines.push(format!("n{i} -> n{} & s{i}", i + 1));
                lines.push(format!("s{i} -> E"));
            } else {
                lines.push(format!("n{i} -> n{}", i + 1));
            }
        }
        lines.push("n3000 -> E".to_owned());
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        assert!(uneven(&lines).is_empty());
        let violations = check(&graph(&lines));
        assert!(
            !violations
                .iter()
                .any(|v| matches!(v, Violation::UnevenJoin { .. }))
        );
    }
}
