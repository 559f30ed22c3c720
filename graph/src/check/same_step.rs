//! Which nodes with `writes` can run in one super-step and write the same field: the pairs that
//! code generated for a graph checks against the fields' reducers (E0214, where an overwrite
//! is a conflict). This module knows field names only; whether a field's reducer combines is
//! the derive's to say.
//!
//! Two activations share a step when they come from different branches of one *origin* — a
//! fork (`a -> b & c`: both targets one step later) or a send (`a -> each b`: any number of
//! `b` at once, each with its input) — at the same distance from it. For each origin, each
//! branch is followed from its target, and every node it reaches gets the set of distances (in
//! super-steps after the origin's) at which it can run, as a bit set of offsets 1 to 62.
//! Following an edge adds one; a router picks one
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
//! writers that only meet 63 or more steps after their origin; branches that met (the same
//! nodes at one step) and part again through a join only one of them reached the sources of;
//! what runs after a deferred node,
//! or after a join that waits on a node outside the origin's branches; a `Command::Fork` that a
//! node returns on a conditional edge (the language's router picks one target). A node's
//! `max_visits` is not counted: a pair reached only by going around a loop more often than it
//! allows is still reported.
//!
//! Cost: only origins whose branches can reach a writer are followed, and only through nodes
//! that can; an origin's branches are followed together, one offset at a time, and no further
//! than two of them can still meet (62 offsets at most); a field is looked for until one pair
//! writes it, and the search ends once every field two nodes declare has its pair. The
//! `written` shape of `trellis-bench compile` (a fork and a loop every ten nodes, every node
//! writing one field) measures it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rustc_hash::FxBuildHasher;

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

/// For each field that two nodes with `writes` (or the branches of one sent node) can write in
/// one super-step, the first such pair found; sorted. One pair a field is all a check needs
/// (the field's reducer combines or not), and it keeps the work linear on wide forks. Empty
/// for a graph the rules refuse (its shape is not whole), and for one whose nodes declare no
/// writes.
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

    // Only fields two nodes declare, or a send's target, can be written twice in one step;
    // once each has its pair, nothing more can be found.
    let mut declared: HashMap<&str, usize, FxBuildHasher> = HashMap::default();
    for fields in &graph.writes {
        for field in fields.iter() {
            *declared.entry(field.as_str()).or_insert(0) += 1;
        }
    }
    let sent_to = blueprint
        .edges
        .iter()
        .filter(|edge| edge.kind == EdgeKind::Each)
        .flat_map(|edge| edge.targets.iter())
        .filter_map(|target| match target {
            crate::blueprint::Endpoint::Node(id) => index.get(id),
            _ => None,
        });
    let mut open: BTreeSet<&str> = declared
        .iter()
        .filter(|(_, writers)| **writers >= 2)
        .map(|(field, _)| *field)
        .collect();
    for node in sent_to {
        open.extend(graph.writes[node].iter().map(String::as_str));
    }

    let mut found: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let origins = std::iter::once(outgoing.entry)
        .chain(outgoing.of_node.iter().copied())
        .flatten();
    for edge in origins {
        if found.len() == open.len() {
            break;
        }
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
        origin(&graph, &targets, send, open.len(), &mut found);
    }
    let mut pairs: Vec<SameStepWrite> = found
        .into_iter()
        .map(|(field, (first, second))| SameStepWrite {
            first,
            second,
            field: field.to_owned(),
        })
        .collect();
    pairs.sort();
    pairs
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

/// One branch of an origin: which of the origin's branches it stands for (one, or those a
/// join merged), the offsets of each node it reached, and the nodes still to follow, by offset.
struct Branch {
    labels: Vec<usize>,
    offsets: HashMap<usize, Offsets, FxBuildHasher>,
    pending: Vec<Vec<usize>>,
}

impl Branch {
    fn new(labels: Vec<usize>) -> Self {
        Branch {
            labels,
            offsets: HashMap::default(),
            pending: vec![Vec::new(); OFFSETS + 1],
        }
    }

    /// Marks `node` reached at `offsets` (exact ones only: later ones are not compared).
    fn reach(&mut self, graph: &Graph<'_>, node: usize, offsets: Offsets) {
        let offsets = offsets & graph.horizon & !BEYOND;
        if !graph.relevant[node] || offsets == 0 {
            return;
        }
        let known = self.offsets.entry(node).or_insert(0);
        let new = offsets & !*known;
        *known |= offsets;
        let mut bits = new;
        while bits != 0 {
            let at = bits.trailing_zeros() as usize;
            self.pending[at].push(node);
            bits &= bits - 1;
        }
    }

    fn alive_after(&self, offset: usize) -> bool {
        self.pending[offset + 1..]
            .iter()
            .any(|nodes| !nodes.is_empty())
    }

    fn at(&self, node: usize) -> Offsets {
        self.offsets.get(&node).copied().unwrap_or(0)
    }
}

/// Exact offsets: 1 to 62.
const OFFSETS: usize = 62;

/// The pairs one origin (a fork or a send from one node) makes. Its branches are followed
/// together, one offset at a time: writers met at one offset are paired then, and the walk
/// stops once no two branches can meet any more (a fork whose other branches all ended costs
/// nothing past their end).
fn origin<'b>(
    graph: &Graph<'b>,
    targets: &[usize],
    send: bool,
    open: usize,
    found: &mut BTreeMap<&'b str, (usize, usize)>,
) {
    let mut branches: Vec<Branch> = targets
        .iter()
        .enumerate()
        .map(|(label, &target)| {
            let mut branch = Branch::new(vec![label]);
            branch.reach(graph, target, 1 << 1);
            branch
        })
        .collect();
    // Deferred writers reached, by branch: they run beside each other at the end.
    let mut deferred: Vec<(usize, usize)> = Vec::new();
    // Joins already started as a branch of their own.
    let mut merged: Vec<usize> = Vec::new();
    let sent = |node: usize| send && targets.contains(&node);
    for offset in 1..=OFFSETS {
        // The writers running at this offset, by branch.
        let mut running: Vec<(usize, usize)> = Vec::new();
        for (at, branch) in branches.iter_mut().enumerate() {
            let nodes = std::mem::take(&mut branch.pending[offset]);
            let next = 1u64 << (offset + 1).min(63);
            for &node in &nodes {
                if graph.deferred(node) {
                    if !graph.writes[node].is_empty() {
                        deferred.push((at, node));
                    }
                    continue;
                }
                if !graph.writes[node].is_empty() {
                    running.push((at, node));
                }
                for successor in graph.shape.next.of(node) {
                    if graph.blueprint.edges[successor.edge].kind != EdgeKind::Join {
                        branch.reach(graph, successor.node, next);
                    }
                }
                if let Some(handler) = graph.shape.handler[node] {
                    branch.reach(graph, handler, next);
                }
            }
            // Joins whose last source ran now, all sources in this branch.
            for &node in &nodes {
                for successor in graph.shape.next.of(node) {
                    if graph.blueprint.edges[successor.edge].kind != EdgeKind::Join {
                        continue;
                    }
                    let done = graph.join_sources[successor.node]
                        .iter()
                        .map(|&source| branch.at(source))
                        .try_fold(None, |all: Option<Offsets>, at| {
                            (at != 0).then(|| Some(all.map_or(at, |all| latest(all, at))))
                        })
                        .flatten();
                    if let Some(done) = done {
                        branch.reach(graph, successor.node, later(done) & (next | (next - 1)));
                    }
                }
            }
        }
        pair(graph, &branches, &running, &sent, send, found);
        // Joins of several branches: a branch of their own, once every source ran somewhere.
        start_joins(graph, &mut branches, &mut merged, offset);
        let alive = branches.iter().filter(|b| b.alive_after(offset)).count();
        // One branch left: it meets nothing more, unless a deferred writer waits for it or a
        // join of branches may still start.
        let lone = alive < 2 && deferred.is_empty() && !joins_may_start(graph, &branches, &merged);
        if alive == 0 || (!send && lone) || found.len() == open {
            break;
        }
        // Branches that run the very same nodes from here on (they met, at one step) pair
        // nothing more: each node they reach runs once.
        if !send && deferred.is_empty() && !joins_may_start(graph, &branches, &merged) {
            let mut next = branches
                .iter()
                .filter(|branch| branch.alive_after(offset))
                .map(|branch| {
                    let mut nodes = branch.pending[offset + 1].clone();
                    nodes.sort_unstable();
                    nodes.dedup();
                    nodes
                });
            if let Some(first) = next.next()
                && next.all(|nodes| nodes == first)
            {
                break;
            }
        }
    }
    pair(graph, &branches, &deferred, &sent, send, found);
}

/// Pairs the writers of `running` that can run together: from branches apart (or copies of
/// one send target's branch), each pair of different nodes (a sent node with itself too),
/// sharing a field.
fn pair<'b>(
    graph: &Graph<'b>,
    branches: &[Branch],
    running: &[(usize, usize)],
    sent: &dyn Fn(usize) -> bool,
    send: bool,
    found: &mut BTreeMap<&'b str, (usize, usize)>,
) {
    // Writers of a field with no pair yet: the first pair of each field is kept.
    let running: Vec<(usize, usize)> = running
        .iter()
        .copied()
        .filter(|&(_, node)| {
            graph.writes[node]
                .iter()
                .any(|field| !found.contains_key(field.as_str()))
        })
        .collect();
    for (at, &(one_branch, one)) in running.iter().enumerate() {
        for &(other_branch, other) in &running[at..] {
            let (a, b) = (&branches[one_branch].labels, &branches[other_branch].labels);
            let apart = a.iter().all(|label| !b.contains(label));
            // A send's branches are copies: what one target's branch reaches, another copy of
            // it may reach at the same offset.
            let copies = send && one_branch == other_branch && a.len() == 1;
            if !(apart || copies) {
                continue;
            }
            // One node at one step runs once, unless its activations were sent.
            if one == other && !sent(one) {
                continue;
            }
            let (first, second) = (one.min(other), one.max(other));
            for field in graph.writes[one] {
                if graph.writes[other].contains(field) {
                    found.entry(field.as_str()).or_insert((first, second));
                }
            }
        }
    }
}

/// Starts a branch for each join whose sources all ran, not all in one branch: at the later of
/// their offsets plus one, standing for the branches it joins.
fn start_joins(
    graph: &Graph<'_>,
    branches: &mut Vec<Branch>,
    merged: &mut Vec<usize>,
    offset: usize,
) {
    let candidates: Vec<usize> = branches
        .iter()
        .flat_map(|branch| branch.offsets.keys().copied())
        .flat_map(|node| graph.shape.next.of(node).iter())
        .filter(|successor| graph.blueprint.edges[successor.edge].kind == EdgeKind::Join)
        .map(|successor| successor.node)
        .filter(|join| !merged.contains(join))
        .collect();
    for join in candidates {
        if merged.contains(&join) {
            continue;
        }
        let sources = &graph.join_sources[join];
        // A join one branch reaches whole is followed in that branch.
        if branches
            .iter()
            .any(|branch| sources.iter().all(|&source| branch.at(source) != 0))
        {
            continue;
        }
        let upto = (1u64 << (offset + 1)) - 1;
        let mut done: Option<Offsets> = None;
        let mut labels = Vec::new();
        for &source in sources {
            let mut at = 0;
            for branch in branches.iter() {
                let offsets = branch.at(source) & upto;
                if offsets != 0 {
                    at |= offsets;
                    labels.extend(branch.labels.iter().copied());
                }
            }
            if at == 0 {
                done = None;
                break;
            }
            done = Some(done.map_or(at, |all| latest(all, at)));
        }
        let Some(done) = done else { continue };
        labels.sort_unstable();
        labels.dedup();
        merged.push(join);
        let mut branch = Branch::new(labels);
        branch.reach(graph, join, later(done));
        branches.push(branch);
    }
}

/// Whether a join of several branches may still start a branch: one with a source reached,
/// not started yet, and not reached whole by one branch.
fn joins_may_start(graph: &Graph<'_>, branches: &[Branch], merged: &[usize]) -> bool {
    branches
        .iter()
        .flat_map(|branch| branch.offsets.keys().copied())
        .flat_map(|node| graph.shape.next.of(node).iter())
        .filter(|successor| graph.blueprint.edges[successor.edge].kind == EdgeKind::Join)
        .any(|successor| {
            let sources = &graph.join_sources[successor.node];
            !merged.contains(&successor.node)
                && !branches
                    .iter()
                    .any(|branch| sources.iter().all(|&source| branch.at(source) != 0))
        })
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
    }
}
