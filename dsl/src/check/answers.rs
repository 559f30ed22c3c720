//! The language's rule for typed pauses (E0217): generated code turns `interrupt … answer T;`
//! and `asks Q -> A;` into functions that take only those types, checked against the graph's
//! state; a subgraph node's questions are its child's.

use trellis_graph::Blueprint;

use crate::blueprint::GraphSpans;
use crate::diagnostic::{Code, Diagnostic, Diagnostics, Span};

pub(super) fn check_graph(graph: &Blueprint, spans: &GraphSpans, diagnostics: &mut Diagnostics) {
    let first = |tokens: &[(String, Span)]| tokens.first().map(|&(_, span)| span);
    for (node, node_spans) in graph.nodes.iter().zip(&spans.nodes) {
        let id = &node.id;
        let asks = first(&node_spans.asks[0]).filter(|_| node.asks.is_some());
        if let (Some(at), Some(_)) = (asks, &node.graph) {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0217,
                    at,
                    format!("subgraph node `{id}` declares what it asks"),
                    "a subgraph node asks nothing itself",
                )
                .with_help("remove `asks` here: the child graph's nodes declare what they ask"),
            );
            continue;
        }
        if graph.state.is_some() {
            continue;
        }
        let answer = first(&node_spans.answer).filter(|_| node.answer.is_some());
        if let Some(at) = answer.or(asks) {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0217,
                    at,
                    format!(
                        "node `{id}` declares the type of an answer, but graph `{}` names no state",
                        graph.name
                    ),
                    "an answer is checked against the state's answer types",
                )
                .with_help("name the state the graph runs on: `state Ticket;`"),
            );
        }
    }
}
