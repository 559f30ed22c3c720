//! What each node of a graph may write, as the same-step analysis (E0214) reads it: a node's own
//! `writes`, and for a subgraph node what its child graph writes.
//!
//! A subgraph node on its parent's state type hands its child's final state to the parent, with
//! the step's other updates merged over it (as if the child's whole run were that step): what it
//! writes is every field some node of the child writes. That set is known when each node of the
//! child declares `writes` (recursively, through the child's own subgraph nodes); one node that
//! does not may write anything, and so may a subgraph on another state type (its mapping makes
//! the parent's update). A node that may write anything is left out of E0214, as a node
//! without `writes` is.

use std::collections::HashSet;

use rustc_hash::FxBuildHasher;

use crate::blueprint::{Blueprint, Node};

/// Whether `child`, run by a subgraph node of `parent` in the same file, runs on the parent's own
/// state type (it names the same `state`, or none) and so hands back its final state as the
/// parent's; otherwise generated code maps the two states. The one rule for it: generated code,
/// E0214's write sets and E0218 read it here.
///
/// ```
/// use trellis_graph::{Blueprint, runs_on_parents_state};
///
/// let on = |state: Option<&str>| Blueprint { state: state.map(Into::into), ..Blueprint::new("G") };
/// assert!(runs_on_parents_state(&on(Some("Notes")), &on(Some("Notes"))));
/// assert!(runs_on_parents_state(&on(Some("Notes")), &on(None)));
/// assert!(!runs_on_parents_state(&on(Some("Notes")), &on(Some("Found"))));
/// ```
pub fn runs_on_parents_state(parent: &Blueprint, child: &Blueprint) -> bool {
    child.state.is_none() || child.state == parent.state
}

/// Per node of a blueprint, in declaration order: the fields it may write, or `None` when it may
/// write anything.
///
/// ```
/// use trellis_graph::{Blueprint, Node, WriteSets};
///
/// let writer = |id: &str, field: &str| Node { writes: Some(vec![field.into()]), ..Node::new(id) };
/// let mut review = Blueprint::new("Review");
/// review.state = Some("Desk".into());
/// review.nodes.extend([writer("read", "notes"), writer("judge", "verdict")]);
///
/// let mut desk = Blueprint::new("Desk");
/// desk.state = Some("Desk".into());
/// desk.nodes.extend([
///     writer("web", "notes"),
///     Node { graph: Some("Review".into()), ..Node::new("review") },
///     Node::new("send"),
/// ]);
/// let graphs = [desk.clone(), review.clone()];
/// let sets = WriteSets::in_file(&desk, &graphs);
/// assert_eq!(sets.of(1), Some(&["notes".to_owned(), "verdict".to_owned()][..]));
/// assert_eq!(sets.of(2), None);
/// assert_eq!(WriteSets::in_file(&review, &graphs).union(), Some(vec!["notes".into(), "verdict".into()]));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteSets(Vec<Option<Vec<String>>>);

impl WriteSets {
    /// Each node's own `writes`; a subgraph node (one with `graph`) writes what `child` says,
    /// given its position and declaration (`None`: anything). A subgraph node's own `writes` is
    /// not read: the language refuses it (E0215).
    pub fn new(
        blueprint: &Blueprint,
        mut child: impl FnMut(usize, &Node) -> Option<Vec<String>>,
    ) -> Self {
        WriteSets(
            blueprint
                .nodes
                .iter()
                .enumerate()
                .map(|(at, node)| match &node.graph {
                    Some(_) => child(at, node),
                    None => node.writes.clone(),
                })
                .collect(),
        )
    }

    /// For a graph of a file of `graphs`: a subgraph node naming another graph of the file on the
    /// same state writes that graph's [`union`](Self::union); any other subgraph node (another
    /// module's graph, or another state type) may write anything.
    pub fn in_file(blueprint: &Blueprint, graphs: &[Blueprint]) -> Self {
        let mut within = vec![blueprint.name.as_str()];
        Self::within(blueprint, graphs, &mut within)
    }

    /// [`in_file`](Self::in_file), with the graphs being resolved (a graph that runs itself, which
    /// the rules refuse elsewhere, writes anything rather than recurse forever).
    fn within<'g>(
        blueprint: &Blueprint,
        graphs: &'g [Blueprint],
        within: &mut Vec<&'g str>,
    ) -> Self {
        Self::new(blueprint, |_, node| {
            let name = node.graph.as_deref()?;
            let child = graphs.iter().find(|graph| graph.name == name)?;
            if !runs_on_parents_state(blueprint, child) || within.contains(&name) {
                return None;
            }
            within.push(&child.name);
            let sets = Self::within(child, graphs, within);
            within.pop();
            sets.union()
        })
    }

    /// What node `at` may write; `None` when anything (or past the nodes).
    pub fn of(&self, at: usize) -> Option<&[String]> {
        self.0.get(at)?.as_deref()
    }

    /// What the whole graph writes: each field some node writes, in the order first declared;
    /// `None` when a node may write anything, or there is none.
    pub fn union(&self) -> Option<Vec<String>> {
        if self.0.is_empty() {
            return None;
        }
        let mut seen: HashSet<&str, FxBuildHasher> = HashSet::default();
        let mut fields: Vec<String> = Vec::new();
        for set in &self.0 {
            for field in set.as_deref()? {
                if seen.insert(field) {
                    fields.push(field.clone());
                }
            }
        }
        Some(fields)
    }
}
