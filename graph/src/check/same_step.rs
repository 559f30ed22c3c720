//! Which nodes with `writes` can run in one super-step and write the same field: the pairs that
//! code generated for a graph checks against the fields' reducers (E0214, where an overwrite
//! is a conflict). This module knows field names only; whether a field's reducer combines is
//! the derive's to say.
//!
//! Two activations share a step when they come from different branches of one *origin* — a
//! fork (`a -> b & c`: both targets one step later) or a send (`a -> each b`: any number of
//! `b` at once, each with its input) — at the same distance from it. For each origin, each
//! branch is followed on its own from its target, and every node it reaches gets the set of
//! distances (in super-steps after the origin's) at which it can run, as a bit set: offsets 1 to
//! 62 exactly, and one bit for "63 or later". Following an edge adds one; a router picks one
//! target, so a conditional edge leads to each target at the next distance; an `on_error`
//! handler runs one step after its node, instead of its edges. Two writers of one field in
//! different branches whose sets share an exact offset can run together: routers choose freely,
//! so each path the edges allow is one a run can take.
//!
//! The language's other rules, as the runtime applies them:
//! - one node reached by two branches at one distance runs once (the frontier is a set): a node
//!   is never paired with itself, but for a send's target, whose branches run side by side;
//! - a send's branches are copies of one another: two different nodes at one distance of one
//!   target's branch can run together (two copies took different routes);
//! - a waiting join (`a & b -> j`) runs `j` once every source is done, one step after the last:
//!   a join whose sources one branch reaches is followed in that branch (its distance the later
//!   of its sources', plus one); a join of several branches starts a branch of its own, which
//!   runs beside the origin's other branches only (it consumed those it joins);
//! - a deferred node runs when nothing else is left to run, so only beside other deferred
//!   nodes: two deferred writers reached by different branches run together, whatever their
//!   distances, and what follows a deferred node is not followed further.
//!
//! What this leaves unchecked (a run still fails with a merge conflict if it happens): two
//! writers that only meet 63 or more steps after their origin; what runs after a deferred node,
//! or after a join that waits on a node outside the origin's branches; a `Command::Fork` that a
//! node returns on a conditional edge (the language's router picks one target). A node's
//! `max_visits` is not counted: a pair reached only by going around a loop more often than it
//! allows is still reported.
//!
//! Cost: only origins whose branches can reach a writer are followed, and only through nodes
//! that can; each node's set grows at most 64 times, so one branch costs at most 64 passes over
//! the edges it reaches.

use std::collections::BTreeSet;

use super::{NodeIndex, Shape, declarations, edges, whole_graph};
use crate::blueprint::{Blueprint, EdgeKind};

/// Two nodes (by position in the blueprint; `first <= second`, equal for the branches of one
/// send target) that can run in one super-step and both declare that they write `field`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SameStepWrite {
    /// The first node, in declaration order.
    pub first: usize,
    /// The second node (the first again for a send's target).
    pub second: usize,
    /// The field both write.
    pub field: String,
}

/// Offsets 1 to 62 after the origin's step, one bit each.
type Offsets = u64;
/// "63 or more steps after": known to be reachable, never compared.
const BEYOND: Offsets = 1 << 63;

/// One step later.
fn later(offsets: Offsets) -> Offsets {
    (offsets << 1) | (offsets & BEYOND)
}

/// `{max(a, b)}` over `a` in `x`, `b` in `y`: when a join's last source is done.
fn latest(x: Offsets, y: Offsets) -> Offsets {
    let from = |set: Offsets| !((1u64 << set.trailing_zeros().min(63)) - 1);
    if x == 0 || y == 0 {
        return 0;
    }
    (x & from(y)) | (y & from(x))
}

/// Whether two sets share an offset known exactly.
fn meet(x: Offsets, y: Offsets) -> bool {
    x & y & !BEYOND != 0
}

/// The pairs of nodes with `writes` that can run in one super-step and name a common field,
/// sorted and each once. Empty for a graph the rules refuse (its shape is not whole), and for
/// one whose nodes declare no writes.
///
/// ```
/// use trellis_graph::{Blueprint, Edge, EdgeKind, Endpoint, Node, same_step_writes};
///
/// let writer = |id: &str| Node { writes: Some(vec!["notes".into()]), ..Node::new(id) };
/// let mut graph = Blueprint::new("Desk");
/// graph.nodes.extend([Node::new("plan"), writer("web"), writer("papers")]);
/// let node = |id: &str| Endpoint::Node(id.into());
/// graph.edges.push(Edge::to(Endpoint::Start, node("plan")));
/// graph.edges.push(Edge { from: node("plan"), kind: EdgeKind::Fork, targets: vec![node("web"), node("papers")] });
/// graph.edges.push(Edge::to(node("web"), Endpoint::End));
/// graph.edges.push(Edge::to(node("papers"), Endpoint::End));
///
/// let pairs = same_step_writes(&graph);
/// assert_eq!((pairs[0].first, pairs[0].second, pairs[0].field.as_str()), (1, 2, "notes"));
/// ```
pub fn same_step_writes(blueprint: &Blueprint) -> Vec<SameStepWrite> {
    let n = blueprint.nodes.len();
    let writes = |node: usize| -> &[String] {
        let node = &blueprint.nodes[node];
        // A subgraph node's `writes` is refused (E0215): what its child writes is not declared
        // here.
        match (&node.writes, &node.graph) {
            (Some(fields), None) => fields,
            _ => &[],
        }
    };
    if (0..n).all(|node| writes(node).is_empty()) {
        return Vec::new();
    }
    let index = NodeIndex::new(blueprint);
    let mut refused = Vec::new();
    let named = declarations(blueprint, &index, &mut refused);
    let outgoing = edges(blueprint, &index, &mut refused);
    if named {
        whole_graph(blueprint, &index, &outgoing, &mut refused);
    }
    if refused.iter().any(|violation| violation.is_error()) {
        return Vec::new();
    }
    let shape = Shape::new(blueprint, &index, &outgoing);
    let graph = Graph::new(blueprint, &shape, &writes);

    let mut found = BTreeSet::new();
    let origins = std::iter::once(outgoing.entry)
        .chain(outgoing.of_node.iter().copied())
        .flatten();
    let mut walk = Walk::new(n);
    for edge in origins {
        let kind = blueprint.edges[edge].kind;
        if !matches!(kind, EdgeKind::Fork | EdgeKind::Each) {
            continue;
        }
        let targets: Vec<usize> = outgoing
            .target_nodes(edge)
            .iter()
            .flatten()
            .copied()
            .filter(|&target| graph.relevant[target])
            .collect();
        let send = kind == EdgeKind::Each;
        if targets.is_empty() || (!send && targets.len() < 2) {
            continue;
        }
        origin(&graph, &mut walk, &targets, send, &mut found);
    }
    found
        .into_iter()
        .map(|(first, second, field)| SameStepWrite {
            first,
            second,
            field: field.to_owned(),
        })
        .collect()
}

/// The shape as this analysis reads it.
struct Graph<'b> {
    blueprint: &'b Blueprint,
    shape: &'b Shape,
    /// Per node: the fields it declares it writes.
    writes: Vec<&'b [String]>,
    /// Per node: whether a writer can be reached from it (the only nodes followed).
    relevant: Vec<bool>,
    /// Per join target: its sources.
    join_sources: Vec<Vec<usize>>,
    /// The last step a run can take: offsets past it are dropped.
    horizon: Offsets,
}

impl<'b> Graph<'b> {
    fn new(
        blueprint: &'b Blueprint,
        shape: &'b Shape,
        writes: &dyn Fn(usize) -> &'b [String],
    ) -> Self {
        let n = blueprint.nodes.len();
        let writes: Vec<&[String]> = (0..n).map(writes).collect();
        let mut join_sources = vec![Vec::new(); n];
        let mut before: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (from, next) in shape.next.pairs() {
            before[next.node].push(from);
            if blueprint.edges[next.edge].kind == EdgeKind::Join {
                join_sources[next.node].push(from);
            }
        }
        for (from, handler) in shape.handler.iter().enumerate() {
            if let Some(handler) = *handler {
                before[handler].push(from);
            }
        }
        // Backwards from every writer.
        let mut relevant = vec![false; n];
        let mut stack: Vec<usize> = (0..n).filter(|&node| !writes[node].is_empty()).collect();
        for &node in &stack {
            relevant[node] = true;
        }
        while let Some(node) = stack.pop() {
            for &from in &before[node] {
                if !relevant[from] {
                    relevant[from] = true;
                    stack.push(from);
                }
            }
        }
        let steps = blueprint.max_steps.unwrap_or(1000);
        let horizon = if steps >= 63 {
            Offsets::MAX
        } else {
            (1u64 << steps) - 1
        };
        Graph {
            blueprint,
            shape,
            writes,
            relevant,
            join_sources,
            horizon,
        }
    }

    fn deferred(&self, node: usize) -> bool {
        self.blueprint.nodes[node].defer
    }
}

/// One branch followed from its start: the offsets of each node it reaches (dense, reset after
/// each branch through `touched`).
struct Walk {
    offsets: Vec<Offsets>,
    touched: Vec<usize>,
    queue: Vec<usize>,
}

impl Walk {
    fn new(n: usize) -> Self {
        Walk {
            offsets: vec![0; n],
            touched: Vec::new(),
            queue: Vec::new(),
        }
    }

    fn reach(&mut self, graph: &Graph<'_>, node: usize, offsets: Offsets) {
        let offsets = offsets & graph.horizon;
        if !graph.relevant[node] || offsets == 0 {
            return;
        }
        let known = self.offsets[node];
        let grown = known | offsets;
        if grown != known {
            if known == 0 {
                self.touched.push(node);
            }
            self.offsets[node] = grown;
            self.queue.push(node);
        }
    }

    /// Follows the edges from what was reached until nothing grows: joins whose sources were
    /// all reached in this branch included. Deferred nodes are reached but not followed.
    fn run(&mut self, graph: &Graph<'_>) {
        loop {
            while let Some(node) = self.queue.pop() {
                if graph.deferred(node) {
                    continue;
                }
                let next = later(self.offsets[node]);
                for successor in graph.shape.next.of(node) {
                    if graph.blueprint.edges[successor.edge].kind != EdgeKind::Join {
                        self.reach(graph, successor.node, next);
                    }
                }
                if let Some(handler) = graph.shape.handler[node] {
                    self.reach(graph, handler, next);
                }
            }
            // Joins: once all their sources are reached here, the later of them, plus one.
            let joins: Vec<(usize, Offsets)> = self
                .touched
                .iter()
                .flat_map(|&source| graph.shape.next.of(source))
                .filter(|successor| graph.blueprint.edges[successor.edge].kind == EdgeKind::Join)
                .filter_map(|successor| {
                    let sources = &graph.join_sources[successor.node];
                    let done = sources.iter().try_fold(Offsets::MAX, |all, &source| {
                        let at = self.offsets[source];
                        (at != 0).then(|| {
                            if all == Offsets::MAX {
                                at
                            } else {
                                latest(all, at)
                            }
                        })
                    })?;
                    Some((successor.node, later(done)))
                })
                .collect();
            for (join, offsets) in joins {
                self.reach(graph, join, offsets);
            }
            if self.queue.is_empty() {
                return;
            }
        }
    }

    /// The writers reached, with their offsets; then forgets the branch.
    fn take(&mut self, graph: &Graph<'_>) -> Vec<(usize, Offsets)> {
        let mut reached = Vec::new();
        for &node in &self.touched {
            if !graph.writes[node].is_empty() {
                reached.push((node, self.offsets[node]));
            }
        }
        self.reset();
        reached
    }

    /// The offsets at which each join source was reached, for joins across branches.
    fn sources(&self, graph: &Graph<'_>) -> Vec<(usize, Offsets)> {
        self.touched
            .iter()
            .filter(|&&node| {
                graph
                    .shape
                    .next
                    .of(node)
                    .iter()
                    .any(|s| graph.blueprint.edges[s.edge].kind == EdgeKind::Join)
            })
            .map(|&node| (node, self.offsets[node]))
            .collect()
    }

    fn reset(&mut self) {
        for node in self.touched.drain(..) {
            self.offsets[node] = 0;
        }
        self.queue.clear();
    }
}

/// A writer reached by a branch of an origin: which branches it stands for (one, or those a
/// join merged), and when.
struct Reached {
    branches: Vec<usize>,
    node: usize,
    offsets: Offsets,
}

/// The pairs one origin (a fork or a send from one node) makes.
fn origin<'b>(
    graph: &Graph<'b>,
    walk: &mut Walk,
    targets: &[usize],
    send: bool,
    found: &mut BTreeSet<(usize, usize, &'b str)>,
) {
    let mut reached: Vec<Reached> = Vec::new();
    // Per branch: the join sources it reached, with when.
    let mut sources: Vec<Vec<(usize, Offsets)>> = Vec::with_capacity(targets.len());
    for (branch, &target) in targets.iter().enumerate() {
        walk.reach(graph, target, 1 << 1);
        walk.run(graph);
        sources.push(walk.sources(graph));
        reached.extend(walk.take(graph).into_iter().map(|(node, offsets)| Reached {
            branches: vec![branch],
            node,
            offsets,
        }));
    }
    // Joins of several branches: each starts a branch of its own, for the branches it joins.
    let mut joins: BTreeSet<usize> = BTreeSet::new();
    for branch in &sources {
        for &(source, _) in branch {
            for successor in graph.shape.next.of(source) {
                joins.insert(successor.node);
            }
        }
    }
    for join in joins {
        let mut done = Offsets::MAX;
        let mut branches = Vec::new();
        for &source in &graph.join_sources[join] {
            let mut at = 0;
            for (branch, reached_sources) in sources.iter().enumerate() {
                if let Some(&(_, offsets)) = reached_sources.iter().find(|(s, _)| *s == source) {
                    at |= offsets;
                    branches.push(branch);
                }
            }
            done = if at == 0 {
                0
            } else if done == Offsets::MAX {
                at
            } else {
                latest(done, at)
            };
        }
        branches.sort_unstable();
        branches.dedup();
        // A join one branch reaches whole was followed in that branch.
        let whole_in_one = sources.iter().any(|reached_sources| {
            graph.join_sources[join]
                .iter()
                .all(|source| reached_sources.iter().any(|(s, _)| s == source))
        });
        if whole_in_one {
            continue;
        }
        // Waiting on a node no branch reaches, or joined within one branch (followed there).
        if done == 0 || done == Offsets::MAX || branches.len() < 2 {
            continue;
        }
        walk.reach(graph, join, later(done));
        walk.run(graph);
        reached.extend(walk.take(graph).into_iter().map(|(node, offsets)| Reached {
            branches: branches.clone(),
            node,
            offsets,
        }));
    }

    let sent = |node: usize| send && targets.contains(&node);
    for (at, one) in reached.iter().enumerate() {
        for other in &reached[at..] {
            let same_entry = std::ptr::eq(one, other);
            let apart = one.branches.iter().all(|b| !other.branches.contains(b));
            // A send's branches are copies: what one target's branch reaches, another copy of
            // it may reach too.
            let copies = send && one.branches == other.branches && one.branches.len() == 1;
            if !(apart || copies) {
                continue;
            }
            // One node at one step runs once, unless its activations were sent.
            if one.node == other.node && !sent(one.node) {
                continue;
            }
            if same_entry && !sent(one.node) {
                continue;
            }
            let together = match (graph.deferred(one.node), graph.deferred(other.node)) {
                (true, true) => true,
                (false, false) => meet(one.offsets, other.offsets),
                _ => false,
            };
            if !together {
                continue;
            }
            let (first, second) = (one.node.min(other.node), one.node.max(other.node));
            for field in graph.writes[one.node] {
                if graph.writes[other.node].contains(field) {
                    found.insert((first, second, field.as_str()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_move_and_meet() {
        assert_eq!(later(0b10), 0b100);
        assert_eq!(later(1 << 62), BEYOND);
        assert_eq!(later(BEYOND), BEYOND);
        // {1, 3} and {2}: the later of each pair is 2 or 3.
        assert_eq!(latest(0b1010, 0b100), 0b1100);
        assert_eq!(latest(0b10, 0), 0);
        assert!(meet(0b110, 0b100));
        assert!(!meet(BEYOND | 0b10, BEYOND | 0b100));
    }
}
