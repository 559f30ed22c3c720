//! Name clashes: two graphs with one name (E0101), and names that become one Rust identifier
//! (E0106) — node enum variants, route enum variants and generated module names.

use std::collections::HashMap;

use crate::blueprint::{Blueprint, EdgeKind, Endpoint, Module};
use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::names::{is_pascal_case, is_snake_case, to_pascal_case, to_snake_case};

pub(super) fn check_module(module: &Module, diagnostics: &mut Diagnostics) {
    let mut by_name: HashMap<&str, &Blueprint> = HashMap::new();
    let mut by_module: HashMap<String, &Blueprint> = HashMap::new();
    for graph in module.graphs.iter().filter(|g| !g.name.is_empty()) {
        if let Some(first) = by_name.get(graph.name.as_str()) {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0101,
                    graph.span,
                    format!("graph `{}` is defined twice", graph.name),
                    "defined again here",
                )
                .with_label(first.span, "first defined here")
                .with_help("rename one of the graphs"),
            );
            continue;
        }
        by_name.insert(&graph.name, graph);
        if !is_pascal_case(&graph.name) {
            continue;
        }
        let module_name = to_snake_case(&graph.name);
        if let Some(first) = by_module.get(&module_name) {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0106,
                    graph.span,
                    format!(
                        "graphs `{}` and `{}` both become the Rust module `{module_name}`",
                        first.name, graph.name
                    ),
                    format!("becomes `{module_name}`"),
                )
                .with_label(first.span, format!("also becomes `{module_name}`"))
                .with_help("rename one of the graphs"),
            );
        } else {
            by_module.insert(module_name, graph);
        }
    }
}

pub(super) fn check_graph(graph: &Blueprint, diagnostics: &mut Diagnostics) {
    let mut variants: HashMap<String, usize> = HashMap::new();
    for (at, node) in graph.nodes.iter().enumerate() {
        if !is_snake_case(&node.id) {
            continue;
        }
        let variant = to_pascal_case(&node.id);
        match variants.get(&variant) {
            Some(&first) => {
                let first = &graph.nodes[first];
                diagnostics.push(
                    Diagnostic::new(
                        Code::E0106,
                        node.span,
                        format!(
                            "nodes `{}` and `{}` both become the Rust identifier `{variant}`",
                            first.id, node.id
                        ),
                        format!("becomes `{variant}`"),
                    )
                    .with_label(first.span, format!("also becomes `{variant}`"))
                    .with_help("rename one of the nodes"),
                );
            }
            None => {
                variants.insert(variant, at);
            }
        }
    }
    // A route enum names END `End`; a node `end` among the same targets would clash with it.
    for edge in graph
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Conditional)
    {
        if !edge.targets.contains(&Endpoint::End) {
            continue;
        }
        for (target, span) in edge.targets.iter().zip(&edge.target_spans) {
            if let Endpoint::Node(id) = target
                && is_snake_case(id)
                && to_pascal_case(id) == "End"
            {
                diagnostics.push(
                    Diagnostic::new(
                        Code::E0106,
                        *span,
                        format!("node `{id}` and END both become the route variant `End`"),
                        "becomes `End`",
                    )
                    .with_help("rename the node"),
                );
            }
        }
    }
    // The handler trait has a method per node and `route_<from>` per conditional edge: a node
    // called `route_classify` beside a router for `classify` would be two methods of one name.
    for edge in graph
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Conditional)
    {
        let (from, shown) = match &edge.from {
            Endpoint::Start => ("start", "START".to_owned()),
            Endpoint::Node(id) => (id.as_str(), format!("`{id}`")),
            Endpoint::End => continue,
        };
        let method = format!("route_{from}");
        if let Some(node) = graph.nodes.iter().find(|n| n.id == method) {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0106,
                    node.span,
                    format!(
                        "node `{method}` and the router of the conditional edge from {shown} both become the handler method `{method}`"
                    ),
                    format!("becomes `{method}`"),
                )
                .with_label(edge.from_span, format!("its router becomes `{method}`"))
                .with_help("rename the node"),
            );
        }
    }
}
