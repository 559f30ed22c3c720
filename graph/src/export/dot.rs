//! Graphviz DOT export.

use std::fmt::Write as _;

use super::{error_handlers, markers};
use crate::{Blueprint, EdgeKind, Endpoint};

/// The blueprint as a Graphviz `digraph`.
///
/// ```
/// use trellis_graph::{Blueprint, Edge, Endpoint, Node};
///
/// let mut graph = Blueprint::new("G");
/// graph.nodes.push(Node::new("a"));
/// let a = Endpoint::Node("a".to_owned());
/// graph.edges = vec![Edge::to(Endpoint::Start, a.clone()), Edge::to(a, Endpoint::End)];
/// let dot = trellis_graph::export::to_dot(&graph);
/// assert!(dot.contains(r#""__start__" -> "a";"#));
/// ```
pub fn to_dot(blueprint: &Blueprint) -> String {
    let handlers = error_handlers(blueprint);
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(&blueprint.name));
    out.push_str("    rankdir=TB;\n");
    out.push_str("    node [shape=box, style=rounded, fontname=\"Helvetica\"];\n");
    out.push_str("    edge [fontname=\"Helvetica\"];\n");
    out.push_str(
        "    \"__start__\" [label=\"START\", shape=circle, style=filled, fillcolor=black, fontcolor=white];\n",
    );
    out.push_str(
        "    \"__end__\" [label=\"END\", shape=doublecircle, style=filled, fillcolor=black, fontcolor=white];\n",
    );
    for node in &blueprint.nodes {
        let is_handler = handlers.contains(node.id.as_str());
        let marks = markers(node, is_handler);
        let mut label = node.id.clone();
        if let Some(graph) = &node.graph {
            label.push_str(&format!("\n[graph {graph}]"));
        }
        for mark in &marks {
            label.push('\n');
            label.push_str(mark);
        }
        let mut attributes = vec![format!("label={}", quote(&label))];
        // A subgraph node is a box with depth: a whole graph runs in it.
        if node.graph.is_some() {
            attributes.push("shape=box3d".to_owned());
        }
        let mut styles = vec!["rounded"];
        if node.defer {
            styles.push("dashed");
        }
        if node.interrupt.is_some() {
            styles.push("bold");
            attributes.push("color=darkorange".to_owned());
        }
        if is_handler {
            attributes.push("color=firebrick".to_owned());
        }
        attributes.push(format!("style={}", quote(&styles.join(","))));
        if let Some(doc) = &node.doc {
            attributes.push(format!("tooltip={}", quote(doc)));
        }
        let _ = writeln!(out, "    {} [{}];", quote(&node.id), attributes.join(", "));
    }
    for edge in &blueprint.edges {
        let style = match edge.kind {
            EdgeKind::Static => "",
            EdgeKind::Conditional => " [style=dashed]",
            EdgeKind::Fork => " [style=bold, arrowhead=normalnormal]",
            // Every source's arrow ends in the same diamond: the node waits for all of them.
            EdgeKind::Join => " [arrowhead=diamond, color=steelblue, label=\"join\"]",
            // One arrow stands for any number of branches, each with an input of its own.
            EdgeKind::Each => " [style=bold, arrowhead=crow, color=darkgreen, label=\"send\"]",
        };
        for target in &edge.targets {
            let _ = writeln!(
                out,
                "    {} -> {}{style};",
                quote(endpoint_id(&edge.from)),
                quote(endpoint_id(target))
            );
        }
    }
    for node in &blueprint.nodes {
        if let Some(handler) = &node.on_error {
            let _ = writeln!(
                out,
                "    {} -> {} [style=dotted, color=firebrick, label=\"on_error\"];",
                quote(&node.id),
                quote(handler)
            );
        }
    }
    out.push_str("}\n");
    out
}

fn endpoint_id(endpoint: &Endpoint) -> &str {
    endpoint.as_str()
}

/// A DOT double-quoted string.
fn quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => {}
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}
