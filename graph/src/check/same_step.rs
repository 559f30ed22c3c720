//! Which nodes with `writes` can run in one super-step and write the same field: the pairs that
//! code generated for a graph checks against the fields' reducers (E0214, where an overwrite
//! is a conflict). This module knows field names only; whether a field's reducer combines is
//! the derive's to say.
//!
//! Two activations share a step when they come from different branches of one *origin* — a
//! fork (`a -> b & c`: both targets one step later) or a send (`a -> each b`: any number of
//! `b` at once, each with its input). For each origin, the walk goes one offset (super-step
//! after the origin's) at a time: the activations of that offset, and which pairs of them can
//! happen in one run at once. The origin's targets can (a send's: two copies of each, which is
//! enough to pair what any number of copies do); after that, two activations can when they
//! come from two that could. Following an edge moves one offset on; a router picks one target,
//! so two targets of one activation never run together; an `on_error` handler runs one step
//! after its node, instead of its edges. Routers choose freely, so each path the edges allow is
//! one a run can take.
//!
//! The language's other rules, as the runtime applies them:
//! - a node reached by several activations at one step runs once (the frontier is a set): they
//!   are one activation, and what it leads to comes from one run of it; only a send's targets,
//!   each with its own input, stay apart (so a sent node pairs with itself);
//! - a waiting join (`a & b -> j`) runs `j` one step after the last of its sources, and then
//!   waits for all of them again;
//! - a deferred node runs when nothing else is left to run: it waits, unexpanded, and two
//!   deferred writers waiting at once run together at the end; a deferred node never runs
//!   beside one that is not, and what follows it is not followed.
//! - a fork or a send inside a branch is an origin of its own.
//!
//! What this leaves unchecked (a run still fails with a merge conflict if it happens): two
//! writers that only meet more than 62 steps after their origin; what runs after a deferred
//! node; a `Command::Fork` that a node returns on a conditional edge (the language's router
//! picks one target). A join is taken to fire whenever its sources have all run since it last
//! did, whichever runs they were, and a node's `max_visits` is not counted: a pair that needs a
//! loop to go around more often than it allows is still reported.
//!
//! Cost: only origins whose branches can reach a writer are followed, and only through nodes
//! that can; the walk stops when no two activations can happen at once any more (62 offsets at
//! most); a field is looked for until one pair writes it, and the search ends once every field
//! two nodes declare has its pair. The `written` shape of `trellis-bench compile` (a fork and a
//! loop every ten nodes, every node writing one field) measures it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use rustc_hash::FxBuildHasher;

use super::write_sets::WriteSets;
use super::{NodeIndex, Shape, declarations, edges, whole_graph};
use crate::blueprint::{Blueprint, EdgeKind, Node};

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

impl SameStepWrite {
    /// What E0214 says of this pair, in pieces short enough for a line of generated code each:
    /// `places` follow the two nodes' names (empty, or `" (at file:L:C)"` where a build script
    /// can say where they are written), and `state` names the state where it is known. Both
    /// front doors say it with these words: generated code (which the compiler reports) and
    /// `GraphBuilder::compile`.
    ///
    /// ```
    /// use trellis_graph::{Blueprint, Node, SameStepWrite};
    ///
    /// let mut graph = Blueprint::new("Desk");
    /// graph.nodes.extend([Node::new("web"), Node::new("papers")]);
    /// let pair = SameStepWrite { first: 0, second: 1, field: "answer".into() };
    /// assert_eq!(
    ///     pair.message_pieces(&graph, ["", ""], Some("Research")).concat(),
    ///     "nodes `web` and `papers` can run in one super-step and both write `answer`, \
    ///      whose reducer in `Research` overwrites"
    /// );
    /// let sent = SameStepWrite { first: 1, second: 1, field: "answer".into() };
    /// assert_eq!(
    ///     sent.message_pieces(&graph, [" (at desk.graph:3:5)", ""], None).concat(),
    ///     "the branches sent to node `papers` (at desk.graph:3:5) run in one super-step and \
    ///      each writes `answer`, whose reducer overwrites"
    /// );
    /// ```
    pub fn message_pieces(
        &self,
        blueprint: &Blueprint,
        places: [&str; 2],
        state: Option<&str>,
    ) -> Vec<String> {
        let name = |at: usize| node_name(blueprint, at);
        let (first, second, field) = (name(self.first), name(self.second), &self.field);
        let [first_at, second_at] = places;
        let mut pieces = if self.first == self.second {
            vec![
                format!("the branches sent to node {first}{first_at}"),
                format!(" run in one super-step and each writes `{field}`,"),
            ]
        } else {
            vec![
                format!("nodes {first}{first_at}"),
                format!(" and {second}{second_at}"),
                format!(" can run in one super-step and both write `{field}`,"),
            ]
        };
        pieces.push(match state {
            Some(state) => format!(" whose reducer in `{state}` overwrites"),
            None => " whose reducer overwrites".to_owned(),
        });
        pieces
    }

    /// E0214's label at the other node's place, for a front door that marks both (generated
    /// code does): `writer` is the node whose place it is, `first` or `second`, and `place`
    /// follows its name (as in [`message_pieces`](Self::message_pieces)).
    ///
    /// ```
    /// use trellis_graph::{Blueprint, Node, SameStepWrite};
    ///
    /// let mut graph = Blueprint::new("Desk");
    /// graph.nodes.extend([Node::new("web"), Node::new("papers")]);
    /// let pair = SameStepWrite { first: 0, second: 1, field: "answer".into() };
    /// assert_eq!(
    ///     pair.other_writer(&graph, 0, ""),
    ///     "node `web` writes `answer` here too, in the super-step where `papers` does"
    /// );
    /// ```
    pub fn other_writer(&self, blueprint: &Blueprint, writer: usize, place: &str) -> String {
        let other = if writer == self.first {
            self.second
        } else {
            self.first
        };
        format!(
            "node {}{place} writes `{}` here too, in the super-step where `{}` does",
            node_name(blueprint, writer),
            self.field,
            blueprint
                .nodes
                .get(other)
                .map_or("", |node| node.id.as_str())
        )
    }

    /// E0214's help: how to make the two writes merge.
    pub fn help(&self) -> String {
        format!(
            "give `{}` a reducer that combines (`#[reducer(append)]`, `extend`, `sum` or `with = …`), or split it",
            self.field
        )
    }
}

/// A node as E0214 names it: a subgraph node says which graph writes through it.
fn node_name(blueprint: &Blueprint, at: usize) -> String {
    match blueprint.nodes.get(at) {
        Some(Node {
            id,
            graph: Some(graph),
            ..
        }) => format!("`{id}` (graph `{graph}`)"),
        Some(node) => format!("`{}`", node.id),
        None => String::new(),
    }
}

/// What E0216 says of a `writes` entry naming no field of the state: `state` names the state
/// where it is known. Both front doors say it with these words.
pub fn unknown_field_message(node: &str, field: &str, state: Option<&str>) -> String {
    let state = state.map_or_else(
        || "the state".to_owned(),
        |state| format!("the state `{state}`"),
    );
    format!("node `{node}` writes `{field}`, but {state} has no field `{field}`")
}

/// For each field that two nodes with `writes` (or the branches of one sent node) can write in
/// one super-step, the first such pair found; sorted. One pair a field is all a check needs
/// (the field's reducer combines or not), and it keeps the work linear on wide forks. Empty
/// for a graph the rules refuse (its shape is not whole), and for one whose nodes declare no
/// writes.
///
/// ```
/// use trellis_graph::{Blueprint, Edge, EdgeKind, Endpoint, Node, WriteSets, same_step_writes};
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
/// let pairs = same_step_writes(&graph, &WriteSets::in_file(&graph, &[]));
/// assert_eq!((pairs[0].first, pairs[0].second, pairs[0].field.as_str()), (1, 2, "notes"));
/// ```
pub fn same_step_writes(blueprint: &Blueprint, sets: &WriteSets) -> Vec<SameStepWrite> {
    let writes = (0..blueprint.nodes.len())
        .map(|node| sets.of(node).unwrap_or(&[]))
        .collect();
    pairs(blueprint, writes)
}

/// Two subgraph nodes whose children run on the parent's own state type, and so hand back the
/// parent's whole state, that can run in one super-step: the runtime cannot merge two whole
/// states (E0218). By position in the blueprint, `first < second`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SameStepSubgraphs {
    /// The first node, in declaration order.
    pub first: usize,
    /// The second node.
    pub second: usize,
}

impl SameStepSubgraphs {
    /// What E0218 says of the pair; both front doors say it with these words.
    ///
    /// ```
    /// use trellis_graph::{Blueprint, Node, SameStepSubgraphs};
    ///
    /// let mut graph = Blueprint::new("Desk");
    /// let subgraph = |id: &str, child: &str| Node { graph: Some(child.into()), ..Node::new(id) };
    /// graph.nodes.extend([subgraph("research", "Research"), subgraph("review", "Review")]);
    /// let pair = SameStepSubgraphs { first: 0, second: 1 };
    /// assert_eq!(
    ///     pair.message(&graph),
    ///     "subgraph nodes `research` and `review` can run in one super-step, and each hands \
    ///      back the whole state of `Desk`: two whole states cannot be merged"
    /// );
    /// ```
    pub fn message(&self, blueprint: &Blueprint) -> String {
        let name = |at: usize| blueprint.nodes.get(at).map_or("", |node| node.id.as_str());
        format!(
            "subgraph nodes `{}` and `{}` can run in one super-step, and each hands back the whole state of `{}`: two whole states cannot be merged",
            name(self.first),
            name(self.second),
            blueprint.name
        )
    }

    /// E0218's label at the first node.
    pub fn label(&self, blueprint: &Blueprint) -> String {
        let name = blueprint
            .nodes
            .get(self.second)
            .map_or("", |node| node.id.as_str());
        format!("runs in the super-step where `{name}` does")
    }

    /// E0218's help: how to run the two apart.
    pub fn help(&self) -> String {
        "run one after the other, or run one on a state type of its own (a graph with another `state`, mapped to this one)".to_owned()
    }
}

/// The first pair of subgraph nodes marked in `whole` (those whose children run on this graph's
/// own state type) that can run in one super-step, by the walk [`same_step_writes`] makes.
/// `None` when there is none, or for a graph the rules refuse.
pub fn same_step_subgraphs(blueprint: &Blueprint, whole: &[bool]) -> Option<SameStepSubgraphs> {
    // Each such node "writes" one field no state can name: the walk then pairs any two.
    static STATE: [String; 1] = [String::new()];
    let writes = (0..blueprint.nodes.len())
        .map(|node| match whole.get(node) {
            Some(true) => &STATE[..],
            _ => &[],
        })
        .collect();
    let pair = pairs(blueprint, writes).into_iter().next()?;
    (pair.first != pair.second).then_some(SameStepSubgraphs {
        first: pair.first,
        second: pair.second,
    })
}

/// The first pair found for each field of `writes` (per node, the fields it writes), sorted.
fn pairs(blueprint: &Blueprint, writes: Vec<&[String]>) -> Vec<SameStepWrite> {
    if writes.iter().all(|fields| fields.is_empty()) {
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
    let graph = Graph::new(blueprint, &shape, writes);

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
    /// The last offset followed: 62, or fewer when `max_steps` ends runs sooner.
    last_offset: usize,
}

impl<'b> Graph<'b> {
    fn new(blueprint: &'b Blueprint, shape: &'b Shape, writes: Vec<&'b [String]>) -> Self {
        let n = blueprint.nodes.len();
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
        let steps = blueprint.max_steps.unwrap_or(1000) as usize;
        Graph {
            blueprint,
            shape,
            writes,
            relevant,
            join_sources,
            last_offset: steps.min(OFFSETS),
        }
    }

    fn deferred(&self, node: usize) -> bool {
        self.blueprint.nodes[node].defer
    }
}

/// One activation of an offset: a node, and whether it is one of a send's branches (which do
/// not merge: each runs with its own input). A node reached by several activations at one step
/// runs once: they merge into one activation.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Activation {
    node: usize,
    /// For a sent branch: which of two copies (two suffice to pair what copies do).
    copy: Option<u8>,
}

/// The activations of one offset, and which pairs of them can run in the same run at once.
struct Level {
    activations: Vec<Activation>,
    index: HashMap<Activation, usize, FxBuildHasher>,
    /// Pairs of positions in `activations`, `a < b`: activations that can both happen in one
    /// run, at this step.
    together: BTreeSet<(usize, usize)>,
}

impl Level {
    fn new() -> Self {
        Level {
            activations: Vec::new(),
            index: HashMap::default(),
            together: BTreeSet::new(),
        }
    }

    /// The position of `activation`, added if new.
    fn add(&mut self, activation: Activation) -> usize {
        *self.index.entry(activation).or_insert_with(|| {
            self.activations.push(activation);
            self.activations.len() - 1
        })
    }

    fn pair(&mut self, a: usize, b: usize) {
        if a != b {
            self.together.insert((a.min(b), a.max(b)));
        }
    }
}

/// Exact offsets: 1 to 62 (the last one the walk follows; `max_steps` may end it sooner).
const OFFSETS: usize = 62;

/// The pairs one origin (a fork or a send from one node) makes. Its activations are followed
/// one offset at a time, with which pairs of them can happen at once: the origin's targets
/// (a send's, two copies of each) to begin with; then two activations can happen at once when
/// they come from two that could. One activation's targets never do (a router picks one; a
/// fork or send inside the branch is an origin of its own), and a node reached twice at one
/// step is one activation. A deferred node waits, unexpanded, until the end: two waiting at
/// once run together. The walk stops when no pair is left.
fn origin<'b>(
    graph: &Graph<'b>,
    targets: &[usize],
    send: bool,
    open: usize,
    found: &mut BTreeMap<&'b str, (usize, usize)>,
) {
    let mut level = Level::new();
    for &target in targets {
        let copies: &[Option<u8>] = if send { &[Some(0), Some(1)] } else { &[None] };
        for &copy in copies {
            level.add(Activation { node: target, copy });
        }
    }
    let starts = level.activations.len();
    for a in 0..starts {
        for b in a + 1..starts {
            level.pair(a, b);
        }
    }
    // The join sources that ran since their join last did.
    let mut ran: HashSet<usize, FxBuildHasher> = HashSet::default();
    for _ in 0..graph.last_offset {
        pair_writers(graph, &level, found);
        if found.len() == open || level.together.is_empty() {
            return;
        }
        // Where each activation leads at the next offset.
        let mut next = Level::new();
        let mut leads: Vec<Vec<usize>> = vec![Vec::new(); level.activations.len()];
        for (at, activation) in level.activations.iter().enumerate() {
            let node = activation.node;
            if graph.deferred(node) {
                // Waiting: still pending at the next offset.
                leads[at].push(next.add(*activation));
                continue;
            }
            for successor in graph.shape.next.of(node) {
                if graph.blueprint.edges[successor.edge].kind == EdgeKind::Join {
                    ran.insert(node);
                    let sources = &graph.join_sources[successor.node];
                    if sources.iter().all(|source| ran.contains(source)) {
                        // The join consumes what its sources did: it waits for all again.
                        for source in sources {
                            ran.remove(source);
                        }
                        let join = Activation {
                            node: successor.node,
                            copy: None,
                        };
                        if graph.relevant[successor.node] {
                            leads[at].push(next.add(join));
                        }
                    }
                } else if graph.relevant[successor.node] {
                    let target = Activation {
                        node: successor.node,
                        copy: None,
                    };
                    leads[at].push(next.add(target));
                }
            }
            if let Some(handler) = graph.shape.handler[node]
                && graph.relevant[handler]
            {
                leads[at].push(next.add(Activation {
                    node: handler,
                    copy: None,
                }));
            }
        }
        for &(a, b) in &level.together {
            for &x in &leads[a] {
                for &y in &leads[b] {
                    next.pair(x, y);
                }
            }
        }
        level = next;
    }
    pair_writers(graph, &level, found);
}

/// Pairs the writers of `level` that can happen at once, on a field with no pair yet: at the
/// same step, or both deferred and waiting (they run together at the end). A deferred node never
/// runs beside one that is not.
fn pair_writers<'b>(
    graph: &Graph<'b>,
    level: &Level,
    found: &mut BTreeMap<&'b str, (usize, usize)>,
) {
    for &(a, b) in &level.together {
        let (one, other) = (level.activations[a], level.activations[b]);
        if graph.deferred(one.node) != graph.deferred(other.node) {
            continue;
        }
        let (fields, others) = (graph.writes[one.node], graph.writes[other.node]);
        if fields.is_empty() || others.is_empty() {
            continue;
        }
        let (first, second) = (one.node.min(other.node), one.node.max(other.node));
        for field in fields {
            if others.contains(field) {
                found.entry(field.as_str()).or_insert((first, second));
            }
        }
    }
}
