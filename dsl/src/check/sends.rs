//! The language's rule for sends: a node sent to (`plan -> each worker;`) declares the type its
//! branches carry (`node worker { input Document; }`), so that generated code reads each
//! branch's input as that type (E0210). The builder has no types to declare, so this rule is
//! the language's alone.

use rustc_hash::FxBuildHasher;
use trellis_graph::{Blueprint, EdgeKind, Endpoint};

use crate::blueprint::GraphSpans;
use crate::diagnostic::{Code, Diagnostic, Diagnostics};

pub(super) fn check_graph(graph: &Blueprint, spans: &GraphSpans, diagnostics: &mut Diagnostics) {
    let mut sends = graph
        .edges
        .iter()
        .enumerate()
        .filter(|(_, edge)| edge.kind == EdgeKind::Each)
        .peekable();
    // Most graphs send nothing: they need no name index.
    if sends.peek().is_none() {
        return;
    }
    let index: std::collections::HashMap<&str, usize, FxBuildHasher> = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(at, node)| (node.id.as_str(), at))
        .collect();
    // Each node once, at the first send that names it.
    let mut reported = vec![false; graph.nodes.len()];
    for (at, edge) in sends {
        for (target_at, target) in edge.targets.iter().enumerate() {
            let Endpoint::Node(id) = target else { continue };
            let Some(&node) = index.get(id.as_str()) else {
                continue;
            };
            // A subgraph node is never sent to (E0213 says so): no input to ask for.
            let declared = &graph.nodes[node];
            if declared.input.is_some() || declared.graph.is_some() || reported[node] {
                continue;
            }
            reported[node] = true;
            let span = spans.edges[at].targets[target_at];
            diagnostics.push(
                Diagnostic::new(
                    Code::E0210,
                    span,
                    format!("node `{id}` is sent to but declares no `input` type"),
                    "each branch sent here carries an input",
                )
                .with_label(spans.nodes[node].name, "declared here")
                .with_help(format!(
                    "declare the type its branches carry: `node {id} {{ input Document; }}`"
                )),
            );
        }
    }
}
