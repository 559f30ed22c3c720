//! Mermaid flowchart export.

use std::fmt::Write as _;

use super::{error_handlers, markers};
use crate::{Blueprint, EdgeKind, Endpoint};

/// How many links Mermaid draws in one diagram unless told otherwise (its `maxEdges`); a larger
/// diagram renders as an error.
pub const MERMAID_MAX_EDGES: usize = 500;

/// How many links (arrows) [`to_mermaid`] draws for the blueprint: one per edge target, one per
/// `on_error` handler.
pub fn mermaid_links(blueprint: &Blueprint) -> usize {
    blueprint
        .edges
        .iter()
        .map(|edge| edge.targets.len())
        .sum::<usize>()
        + blueprint
            .nodes
            .iter()
            .filter(|node| node.on_error.is_some())
            .count()
}

/// The blueprint as a Mermaid `flowchart`.
///
/// Node ids are prefixed (`n_review`) because Mermaid reserves words such as `end`.
///
/// ```
/// use trellis_graph::{Blueprint, Edge, Endpoint, Node};
///
/// let mut graph = Blueprint::new("G");
/// graph.nodes.push(Node::new("a"));
/// let a = Endpoint::Node("a".to_owned());
/// graph.edges = vec![Edge::to(Endpoint::Start, a.clone()), Edge::to(a, Endpoint::End)];
/// let mermaid = trellis_graph::export::to_mermaid(&graph);
/// assert!(mermaid.starts_with("flowchart TD\n"));
/// assert!(mermaid.contains("START --> n_a"));
/// ```
pub fn to_mermaid(blueprint: &Blueprint) -> String {
    let handlers = error_handlers(blueprint);
    let mut out = String::from("flowchart TD\n");
    out.push_str("    START((START))\n");
    out.push_str("    END(((END)))\n");
    for node in &blueprint.nodes {
        let is_handler = handlers.contains(node.id.as_str());
        let mut label = node.id.clone();
        if let Some(graph) = &node.graph {
            label.push_str(&format!("<br/>[graph {graph}]"));
        }
        for mark in markers(node, is_handler) {
            label.push_str("<br/>");
            label.push_str(mark);
        }
        let mut classes = Vec::new();
        if node.interrupt.is_some() {
            classes.push("interrupt");
        }
        if node.defer {
            classes.push("deferred");
        }
        if is_handler {
            classes.push("handler");
        }
        let class = if classes.is_empty() {
            String::new()
        } else {
            format!(":::{}", classes.join(" "))
        };
        // A subgraph node is drawn as a subroutine (`[[…]]`): a whole graph runs in it.
        let (open, close) = if node.graph.is_some() {
            ("[[", "]]")
        } else {
            ("[", "]")
        };
        let _ = writeln!(
            out,
            "    n_{}{open}\"{}\"{close}{class}",
            node.id,
            escape(&label)
        );
    }
    for edge in &blueprint.edges {
        let arrow = match edge.kind {
            EdgeKind::Static => "-->",
            EdgeKind::Conditional => "-.->",
            EdgeKind::Fork => "==>",
            EdgeKind::Join => "-->|join|",
            EdgeKind::Each => "==>|send|",
        };
        for target in &edge.targets {
            let _ = writeln!(out, "    {} {arrow} {}", id(&edge.from), id(target));
        }
    }
    for node in &blueprint.nodes {
        if let Some(handler) = &node.on_error {
            let _ = writeln!(out, "    n_{} -. on_error .-> n_{handler}", node.id);
        }
    }
    out.push_str("    classDef interrupt stroke:#d35400,stroke-width:3px\n");
    out.push_str("    classDef deferred stroke-dasharray:5 5\n");
    out.push_str("    classDef handler stroke:#c0392b,fill:#fdecea\n");
    out
}

fn id(endpoint: &Endpoint) -> String {
    match endpoint {
        Endpoint::Start => "START".to_owned(),
        Endpoint::End => "END".to_owned(),
        Endpoint::Node(node) => format!("n_{node}"),
    }
}

/// Text inside a quoted Mermaid label: quotes become entities.
fn escape(text: &str) -> String {
    text.replace('"', "#quot;")
}
