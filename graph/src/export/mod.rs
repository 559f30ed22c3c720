//! Exports of a blueprint: JSON (the shape of LANGUAGE.md §6), Graphviz DOT and Mermaid.
//!
//! Pure Rust, no external tool. In the pictures a static edge is a plain arrow, a conditional
//! edge a dashed one, a fork a thick one, a waiting join's edges labelled `join` and an
//! `on_error` route a dotted, labelled one; START and END are terminals; interrupt, deferred and
//! error-handler nodes are marked.

mod dot;
mod mermaid;

pub use dot::to_dot;
pub use mermaid::{MERMAID_MAX_EDGES, mermaid_links, to_mermaid};

use crate::{Blueprint, InterruptPoint, Node};

/// Why a blueprint could not be exported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// JSON serialization failed.
    #[error("could not serialize the blueprint as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The blueprint as pretty-printed JSON, in the shape of LANGUAGE.md §6.
///
/// ```
/// use trellis_graph::{Blueprint, Edge, Endpoint, Node};
///
/// let mut graph = Blueprint::new("G");
/// graph.nodes.push(Node::new("a"));
/// let a = Endpoint::Node("a".to_owned());
/// graph.edges = vec![Edge::to(Endpoint::Start, a.clone()), Edge::to(a, Endpoint::End)];
/// let json = trellis_graph::export::to_json(&graph)?;
/// assert!(json.contains(r#""entry": "a""#));
/// # Ok::<(), trellis_graph::export::ExportError>(())
/// ```
pub fn to_json(blueprint: &Blueprint) -> Result<String, ExportError> {
    let mut json = serde_json::to_string_pretty(blueprint)?;
    json.push('\n');
    Ok(json)
}

/// The nodes that some node's `on_error` names.
fn error_handlers(blueprint: &Blueprint) -> std::collections::HashSet<&str> {
    blueprint
        .nodes
        .iter()
        .filter_map(|node| node.on_error.as_deref())
        .collect()
}

/// The markers shown under a node's name: interrupt, deferred, error handler. Plain words: symbols
/// such as ⏸ are missing from common fonts and render as empty boxes.
fn markers(node: &Node, is_handler: bool) -> Vec<&'static str> {
    let mut markers = Vec::new();
    match node.interrupt {
        Some(InterruptPoint::Before) => markers.push("(interrupt before)"),
        Some(InterruptPoint::After) => markers.push("(interrupt after)"),
        Some(InterruptPoint::Node) | None => {}
    }
    if node.defer {
        markers.push("(deferred)");
    }
    if is_handler {
        markers.push("(error handler)");
    }
    markers
}
