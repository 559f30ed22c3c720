//! What changed between two versions of a graph, as data (`trellis diff --format json`) and as
//! text: the graph's name, state type and step bound, nodes added, removed and renamed (when
//! the caller says so — a rename cannot be told from a removal and an addition), each kept
//! node's changed attributes, edges added and removed.
//!
//! A node's attributes are compared in their JSON form (the export's, `"format": 1`), so an
//! attribute the language gains is compared without this module knowing of it.
//!
//! ```
//! use trellis_graph::{Blueprint, Edge, Endpoint, GraphDiff, Node};
//!
//! let node = |id: &str| Endpoint::Node(id.to_owned());
//! let mut old = Blueprint::new("Desk");
//! old.nodes = vec![Node::new("draft"), Node::new("send")];
//! old.edges = vec![Edge::to(Endpoint::Start, node("draft")), Edge::to(node("draft"), node("send"))];
//! let mut new = old.clone();
//! new.nodes[0] = Node { max_visits: Some(3), ..Node::new("compose") };
//! new.edges = vec![Edge::to(Endpoint::Start, node("compose")), Edge::to(node("compose"), node("send"))];
//!
//! let diff = GraphDiff::between(&old, &new, &[("draft".into(), "compose".into())])?;
//! assert_eq!(diff.to_string(), "graph Desk\n  ~ node draft renamed to compose\n  ~ node compose: max_visits (none) -> 3\n");
//! # Ok::<(), trellis_graph::DiffError>(())
//! ```

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::blueprint::{Blueprint, Edge, EdgeKind, Endpoint};

/// A rename the caller stated that the graphs do not bear out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    /// The old graph has no node of the name renamed.
    #[error("cannot rename `{from}`: the old graph `{graph}` has no node `{from}`{}", hint(.nearest))]
    NoOldNode {
        /// The graph.
        graph: String,
        /// The name given.
        from: String,
        /// The old graph's node of the nearest name, if one is near.
        nearest: Option<String>,
    },
    /// The new graph has no node of the new name.
    #[error("cannot rename `{from}` to `{to}`: the new graph `{graph}` has no node `{to}`{}", hint(.nearest))]
    NoNewNode {
        /// The graph.
        graph: String,
        /// The old name.
        from: String,
        /// The name given.
        to: String,
        /// The new graph's node of the nearest name, if one is near.
        nearest: Option<String>,
    },
}

/// `; did you mean `…`?` after a name not found, when one is near.
fn hint(nearest: &Option<String>) -> String {
    nearest
        .as_ref()
        .map(|name| format!("; did you mean `{name}`?"))
        .unwrap_or_default()
}

/// The node of `graph` whose name is nearest `name`, if one is near.
fn nearest(graph: &Blueprint, name: &str) -> Option<String> {
    crate::did_you_mean(name, graph.nodes.iter().map(|n| n.id.as_str())).map(str::to_owned)
}

/// A value before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change<T> {
    /// Before.
    pub old: T,
    /// After.
    pub new: T,
}

/// A node renamed, as the caller said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Renamed {
    /// Its old name.
    pub from: String,
    /// Its new name.
    pub to: String,
}

/// A kept node whose attributes changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeChange {
    /// The node, by its new name.
    pub node: String,
    /// Its changed attributes, by name.
    pub attributes: Vec<AttributeChange>,
}

/// One attribute of a node, before and after, in its JSON form (`null` when not set).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttributeChange {
    /// The attribute, as the JSON export names it (`max_visits`, `retry`, `interrupt`…).
    pub attribute: String,
    /// Before.
    pub old: Value,
    /// After.
    pub new: Value,
}

/// The difference between two versions of one graph; empty when they are the same.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphDiff {
    /// The graph, by its old name.
    pub graph: String,
    /// The graph's name, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<Change<String>>,
    /// The state type, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<Change<Option<String>>>,
    /// The bound on super-steps, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<Change<Option<u32>>>,
    /// Nodes only the new graph has, in its order.
    pub nodes_added: Vec<String>,
    /// Nodes only the old graph has, in its order.
    pub nodes_removed: Vec<String>,
    /// Nodes renamed, as the caller said.
    pub nodes_renamed: Vec<Renamed>,
    /// Kept nodes whose attributes changed, in the new graph's order.
    pub nodes_changed: Vec<NodeChange>,
    /// Edges only the new graph has, as the language writes them (old names renamed).
    pub edges_added: Vec<String>,
    /// Edges only the old graph has, as the language writes them (with the new names of
    /// renamed nodes).
    pub edges_removed: Vec<String>,
}

impl GraphDiff {
    /// What changed from `old` to `new`, `renames` saying which old node is which new one.
    ///
    /// # Errors
    /// A [`DiffError`] for a rename whose old node `old` lacks or whose new node `new` lacks.
    pub fn between(
        old: &Blueprint,
        new: &Blueprint,
        renames: &[(String, String)],
    ) -> Result<GraphDiff, DiffError> {
        for (from, to) in renames {
            if old.node(from).is_none() {
                return Err(DiffError::NoOldNode {
                    graph: old.name.clone(),
                    from: from.clone(),
                    nearest: nearest(old, from),
                });
            }
            if new.node(to).is_none() {
                return Err(DiffError::NoNewNode {
                    graph: new.name.clone(),
                    from: from.clone(),
                    to: to.clone(),
                    nearest: nearest(new, to),
                });
            }
        }
        let renamed = |id: &str| -> String {
            renames
                .iter()
                .find(|(from, _)| from == id)
                .map_or_else(|| id.to_owned(), |(_, to)| to.clone())
        };
        let mut diff = GraphDiff {
            graph: old.name.clone(),
            name: changed(old.name.clone(), new.name.clone()),
            state: changed(old.state.clone(), new.state.clone()),
            max_steps: changed(old.max_steps, new.max_steps),
            nodes_added: Vec::new(),
            nodes_removed: Vec::new(),
            nodes_renamed: renames
                .iter()
                .filter(|(from, to)| from != to)
                .map(|(from, to)| Renamed {
                    from: from.clone(),
                    to: to.clone(),
                })
                .collect(),
            nodes_changed: Vec::new(),
            edges_added: Vec::new(),
            edges_removed: Vec::new(),
        };
        diff.nodes_removed = old
            .nodes
            .iter()
            .filter(|node| new.node(&renamed(&node.id)).is_none())
            .map(|node| node.id.clone())
            .collect();
        for node in &new.nodes {
            let before = old.nodes.iter().find(|o| renamed(&o.id) == node.id);
            match before {
                None => diff.nodes_added.push(node.id.clone()),
                Some(before) => {
                    let attributes = attribute_changes(
                        &serde_json::to_value(before).unwrap_or(Value::Null),
                        &serde_json::to_value(node).unwrap_or(Value::Null),
                    );
                    if !attributes.is_empty() {
                        diff.nodes_changed.push(NodeChange {
                            node: node.id.clone(),
                            attributes,
                        });
                    }
                }
            }
        }
        let old_edges = edge_texts(&old.edges, &renamed);
        let new_edges = edge_texts(&new.edges, &|id: &str| id.to_owned());
        diff.edges_removed = only_in(&old_edges, &new_edges);
        diff.edges_added = only_in(&new_edges, &old_edges);
        Ok(diff)
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.state.is_none()
            && self.max_steps.is_none()
            && self.nodes_added.is_empty()
            && self.nodes_removed.is_empty()
            && self.nodes_renamed.is_empty()
            && self.nodes_changed.is_empty()
            && self.edges_added.is_empty()
            && self.edges_removed.is_empty()
    }
}

/// The attributes of a node's JSON form that differ, its name aside; a key one side lacks is
/// `null` there.
fn attribute_changes(old: &Value, new: &Value) -> Vec<AttributeChange> {
    let empty = serde_json::Map::new();
    let (old, new) = (
        old.as_object().unwrap_or(&empty),
        new.as_object().unwrap_or(&empty),
    );
    let keys = new
        .keys()
        .chain(old.keys().filter(|key| !new.contains_key(*key)));
    let mut changes: Vec<AttributeChange> = keys
        .filter(|key| key.as_str() != "id")
        .filter_map(|key| {
            let (before, after) = (
                old.get(key).unwrap_or(&Value::Null),
                new.get(key).unwrap_or(&Value::Null),
            );
            (before != after).then(|| AttributeChange {
                attribute: key.clone(),
                old: before.clone(),
                new: after.clone(),
            })
        })
        .collect();
    changes.sort_by(|a, b| a.attribute.cmp(&b.attribute));
    changes
}

/// The edges as the language writes them, nodes named by `name`; a waiting join's edges (one
/// per source) as one `a & b -> j`.
fn edge_texts(edges: &[Edge], name: &dyn Fn(&str) -> String) -> Vec<String> {
    let end = |endpoint: &Endpoint| match endpoint {
        Endpoint::Node(id) => name(id),
        Endpoint::Start => "START".to_owned(),
        Endpoint::End => "END".to_owned(),
    };
    let joined =
        |targets: &[Endpoint], by: &str| targets.iter().map(end).collect::<Vec<_>>().join(by);
    let mut texts = Vec::new();
    let mut joins: Vec<(String, Vec<String>)> = Vec::new();
    for edge in edges {
        let from = end(&edge.from);
        match edge.kind {
            EdgeKind::Static | EdgeKind::Conditional => {
                texts.push(format!("{from} -> {}", joined(&edge.targets, " | ")));
            }
            EdgeKind::Fork => texts.push(format!("{from} -> {}", joined(&edge.targets, " & "))),
            EdgeKind::Each => {
                texts.push(format!("{from} -> each {}", joined(&edge.targets, " | ")));
            }
            EdgeKind::Join => {
                let target = joined(&edge.targets, " & ");
                match joins.iter_mut().find(|(to, _)| *to == target) {
                    Some((_, sources)) => sources.push(from),
                    None => joins.push((target, vec![from])),
                }
            }
        }
    }
    texts.extend(
        joins
            .into_iter()
            .map(|(target, sources)| format!("{} -> {target}", sources.join(" & "))),
    );
    texts
}

/// The texts of `these` that `others` lacks, counting repeats.
fn only_in(these: &[String], others: &[String]) -> Vec<String> {
    let mut left: Vec<&String> = others.iter().collect();
    these
        .iter()
        .filter(|text| match left.iter().position(|other| other == text) {
            Some(at) => {
                left.swap_remove(at);
                false
            }
            None => true,
        })
        .cloned()
        .collect()
}

/// `Some` change when `old` and `new` differ.
fn changed<T: PartialEq>(old: T, new: T) -> Option<Change<T>> {
    (old != new).then_some(Change { old, new })
}

/// An attribute's value as the text shows it: `(none)` when not set, JSON otherwise.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => "(none)".to_owned(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

impl fmt::Display for GraphDiff {
    /// `graph NAME`, then one line a change (`+` added, `-` removed, `~` changed); nothing
    /// after the first line when nothing changed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "graph {}", self.graph)?;
        let optional = |value: &Option<String>| value.clone().unwrap_or_else(|| "(none)".into());
        if let Some(Change { new, .. }) = &self.name {
            writeln!(f, "  ~ renamed to {new}")?;
        }
        if let Some(Change { old, new }) = &self.state {
            writeln!(f, "  ~ state {} -> {}", optional(old), optional(new))?;
        }
        if let Some(Change { old, new }) = &self.max_steps {
            let bound =
                |steps: &Option<u32>| steps.map_or_else(|| "(none)".into(), |s| s.to_string());
            writeln!(f, "  ~ max_steps {} -> {}", bound(old), bound(new))?;
        }
        for node in &self.nodes_added {
            writeln!(f, "  + node {node}")?;
        }
        for node in &self.nodes_removed {
            writeln!(f, "  - node {node}")?;
        }
        for Renamed { from, to } in &self.nodes_renamed {
            writeln!(f, "  ~ node {from} renamed to {to}")?;
        }
        for NodeChange { node, attributes } in &self.nodes_changed {
            let changes: Vec<String> = attributes
                .iter()
                .map(|a| format!("{} {} -> {}", a.attribute, shown(&a.old), shown(&a.new)))
                .collect();
            writeln!(f, "  ~ node {node}: {}", changes.join("; "))?;
        }
        for edge in &self.edges_added {
            writeln!(f, "  + edge {edge}")?;
        }
        for edge in &self.edges_removed {
            writeln!(f, "  - edge {edge}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::{InterruptPoint, Node, Retry};

    fn node(id: &str) -> Endpoint {
        Endpoint::Node(id.to_owned())
    }

    /// classify → draft → (review & audit) → send, review and audit joining into send.
    fn desk() -> Blueprint {
        let mut graph = Blueprint::new("Desk");
        graph.state = Some("Ticket".into());
        graph.nodes = ["classify", "draft", "review", "audit", "send"]
            .into_iter()
            .map(Node::new)
            .collect();
        graph.edges = vec![
            Edge::to(Endpoint::Start, node("classify")),
            Edge {
                from: node("classify"),
                kind: EdgeKind::Conditional,
                targets: vec![node("draft"), Endpoint::End],
            },
            Edge {
                from: node("draft"),
                kind: EdgeKind::Fork,
                targets: vec![node("review"), node("audit")],
            },
            Edge {
                from: node("review"),
                kind: EdgeKind::Join,
                targets: vec![node("send")],
            },
            Edge {
                from: node("audit"),
                kind: EdgeKind::Join,
                targets: vec![node("send")],
            },
            Edge::to(node("send"), Endpoint::End),
        ];
        graph
    }

    #[test]
    fn the_same_graph_has_no_difference() {
        let diff = GraphDiff::between(&desk(), &desk(), &[]).unwrap();
        assert!(diff.is_empty());
        assert_eq!(diff.to_string(), "graph Desk\n");
    }

    #[test]
    fn every_kind_of_change_is_named() {
        let old = desk();
        let mut new = desk();
        new.state = Some("Case".into());
        new.max_steps = Some(40);
        // `draft` becomes `compose`, asks before it runs and retries; `audit` goes; `notify`
        // comes after `send`.
        new.nodes[1] = Node {
            interrupt: Some(InterruptPoint::Before),
            question: Some("Send it?".into()),
            retry: Some(Retry::new(2)),
            ..Node::new("compose")
        };
        new.nodes.retain(|n| n.id != "audit");
        new.nodes.push(Node::new("notify"));
        new.edges = vec![
            Edge::to(Endpoint::Start, node("classify")),
            Edge {
                from: node("classify"),
                kind: EdgeKind::Conditional,
                targets: vec![node("compose"), Endpoint::End],
            },
            Edge::to(node("compose"), node("review")),
            Edge::to(node("review"), node("send")),
            Edge::to(node("send"), node("notify")),
            Edge::to(node("notify"), Endpoint::End),
        ];
        let renames = [("draft".to_owned(), "compose".to_owned())];
        let diff = GraphDiff::between(&old, &new, &renames).unwrap();
        assert_eq!(
            diff.to_string(),
            "graph Desk
  ~ state Ticket -> Case
  ~ max_steps (none) -> 40
  + node notify
  - node audit
  ~ node draft renamed to compose
  ~ node compose: interrupt (none) -> before; question (none) -> Send it?; retry (none) -> 2
  + edge compose -> review
  + edge review -> send
  + edge send -> notify
  + edge notify -> END
  - edge compose -> review & audit
  - edge send -> END
  - edge review & audit -> send
"
        );
        let json = serde_json::to_value(&diff).unwrap();
        assert_eq!(json["nodes_renamed"][0]["to"], "compose");
        assert_eq!(
            json["nodes_changed"][0]["attributes"][2]["attribute"],
            "retry"
        );
        assert_eq!(json["nodes_changed"][0]["attributes"][2]["new"], 2);
        assert!(json.get("name").is_none(), "an unchanged name is left out");
    }

    #[test]
    fn without_the_rename_a_renamed_node_is_a_removal_and_an_addition() {
        let mut new = desk();
        new.nodes[1].id = "compose".into();
        for edge in &mut new.edges {
            for end in std::iter::once(&mut edge.from).chain(edge.targets.iter_mut()) {
                if *end == node("draft") {
                    *end = node("compose");
                }
            }
        }
        let diff = GraphDiff::between(&desk(), &new, &[]).unwrap();
        assert_eq!(diff.nodes_added, ["compose"]);
        assert_eq!(diff.nodes_removed, ["draft"]);
        assert_eq!(diff.edges_removed.len(), 2);
        let renamed =
            GraphDiff::between(&desk(), &new, &[("draft".into(), "compose".into())]).unwrap();
        assert_eq!(
            renamed.to_string(),
            "graph Desk\n  ~ node draft renamed to compose\n"
        );
    }

    #[test]
    fn a_rename_the_graphs_do_not_bear_out_is_refused() {
        let rename = |from: &str, to: &str| {
            GraphDiff::between(&desk(), &desk(), &[(from.to_owned(), to.to_owned())])
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            rename("drfat", "draft"),
            "cannot rename `drfat`: the old graph `Desk` has no node `drfat`; did you mean `draft`?"
        );
        assert_eq!(
            rename("draft", "compose"),
            "cannot rename `draft` to `compose`: the new graph `Desk` has no node `compose`"
        );
    }
}
