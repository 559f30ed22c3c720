//! The language's rule for `writes` (E0215): generated code turns a node's write set into an
//! update type that sets only those fields, which it can do only for a node with a handler, in
//! a graph that names its state. The builder has no generated types, so this rule is the
//! language's alone.

use trellis_graph::Blueprint;

use crate::blueprint::GraphSpans;
use crate::diagnostic::{Code, Diagnostic, Diagnostics};

pub(super) fn check_graph(graph: &Blueprint, spans: &GraphSpans, diagnostics: &mut Diagnostics) {
    for (node, node_spans) in graph.nodes.iter().zip(&spans.nodes) {
        let (Some(_), Some(&first)) = (&node.writes, node_spans.writes.first()) else {
            continue;
        };
        let id = &node.id;
        let diagnostic = if node.graph.is_some() {
            Diagnostic::new(
                Code::E0215,
                first,
                format!("subgraph node `{id}` declares what it writes"),
                "a subgraph node has no handler to restrict",
            )
            .with_help("remove `writes` here: the child graph's nodes declare what they write")
        } else if graph.state.is_none() {
            Diagnostic::new(
                Code::E0215,
                first,
                format!(
                    "node `{id}` declares what it writes, but graph `{}` names no state",
                    graph.name
                ),
                "these fields cannot be checked without the state's type",
            )
            .with_help("name the state the graph runs on: `state Ticket;`")
        } else {
            continue;
        };
        diagnostics.push(diagnostic);
    }
}
