//! The language's name clashes: two graphs with one name (E0101), and names that become one Rust
//! identifier (E0106) — node enum variants, route enum variants, handler methods and generated
//! module names. Linear: every lookup goes through a map.

use std::collections::{HashMap, HashSet};

use rustc_hash::FxBuildHasher;
use trellis_graph::{Blueprint, EdgeKind, Endpoint};

use crate::blueprint::{GraphSpans, Module};
use crate::diagnostic::{Code, Diagnostic, Diagnostics};
use crate::names::{is_pascal_case, is_snake_case, to_pascal_case, to_snake_case};

pub(super) fn check_module(module: &Module, diagnostics: &mut Diagnostics) {
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    let mut by_module: HashMap<String, usize> = HashMap::new();
    for (at, graph) in module.graphs.iter().enumerate() {
        if graph.name.is_empty() {
            continue;
        }
        let span = module.spans[at].name;
        if let Some(&first) = by_name.get(graph.name.as_str()) {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0101,
                    span,
                    format!("graph `{}` is defined twice", graph.name),
                    "defined again here",
                )
                .with_label(module.spans[first].name, "first defined here")
                .with_help("rename one of the graphs"),
            );
            continue;
        }
        by_name.insert(&graph.name, at);
        if !is_pascal_case(&graph.name) {
            continue;
        }
        let module_name = to_snake_case(&graph.name);
        if let Some(&first) = by_module.get(&module_name) {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0106,
                    span,
                    format!(
                        "graphs `{}` and `{}` both become the Rust module `{module_name}`",
                        module.graphs[first].name, graph.name
                    ),
                    format!("becomes `{module_name}`"),
                )
                .with_label(
                    module.spans[first].name,
                    format!("also becomes `{module_name}`"),
                )
                .with_help("rename one of the graphs"),
            );
        } else {
            by_module.insert(module_name, at);
        }
    }
}

pub(super) fn check_graph(graph: &Blueprint, spans: &GraphSpans, diagnostics: &mut Diagnostics) {
    // Snake-case names by the variant they become; a name declared twice is found here too (a
    // repeated declaration is the graph rules' E0102, not a clash).
    let mut variants: HashMap<Variant<'_>, usize, FxBuildHasher> =
        HashMap::with_capacity_and_hasher(graph.nodes.len(), FxBuildHasher);
    // The names reported as clashing, so that a second declaration of one is not reported again.
    let mut clashed: HashSet<&str, FxBuildHasher> = HashSet::default();
    // The names a router's method could take (`route_<from>`) → first declaration.
    let mut routers: HashMap<&str, usize, FxBuildHasher> = HashMap::default();
    for (at, node) in graph.nodes.iter().enumerate() {
        if node.id.starts_with("route_") {
            routers.entry(&node.id).or_insert(at);
        }
        if !is_snake_case(&node.id) {
            continue;
        }
        match variants.get(&Variant(&node.id)) {
            Some(&first) if graph.nodes[first].id == node.id => {}
            Some(_) if clashed.contains(node.id.as_str()) => {}
            Some(&first) => {
                clashed.insert(&node.id);
                let variant = to_pascal_case(&node.id);
                diagnostics.push(
                    Diagnostic::new(
                        Code::E0106,
                        spans.nodes[at].name,
                        format!(
                            "nodes `{}` and `{}` both become the Rust identifier `{variant}`",
                            graph.nodes[first].id, node.id
                        ),
                        format!("becomes `{variant}`"),
                    )
                    .with_label(spans.nodes[first].name, format!("also becomes `{variant}`"))
                    .with_help("rename one of the nodes"),
                );
            }
            None => {
                variants.insert(Variant(&node.id), at);
            }
        }
    }
    let conditionals = graph
        .edges
        .iter()
        .enumerate()
        .filter(|(_, edge)| edge.kind == EdgeKind::Conditional);
    for (at, edge) in conditionals {
        // A route enum names END `End`; a node `end` among the same targets would clash with it.
        if edge.targets.contains(&Endpoint::End) {
            for (target, span) in edge.targets.iter().zip(&spans.edges[at].targets) {
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
        // The handler trait has a method per node and `route_<from>` per conditional edge: a
        // node called `route_classify` beside a router for `classify` would be two methods of
        // one name.
        let (from, shown) = match &edge.from {
            Endpoint::Start => ("start", "START".to_owned()),
            Endpoint::Node(id) => (id.as_str(), format!("`{id}`")),
            Endpoint::End => continue,
        };
        let method = format!("route_{from}");
        if let Some(&node) = routers.get(method.as_str()) {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0106,
                    spans.nodes[node].name,
                    format!(
                        "node `{method}` and the router of the conditional edge from {shown} both become the handler method `{method}`"
                    ),
                    format!("becomes `{method}`"),
                )
                .with_label(spans.edges[at].from, format!("its router becomes `{method}`"))
                .with_help("rename the node"),
            );
        }
    }
}

/// A snake_case node name as the enum variant it becomes (`lookup_invoice` → `LookupInvoice`),
/// hashed and compared without building the variant: the same characters as `to_pascal_case`
/// gives for snake_case, a letter after `_` (or first) upper-cased, the `_` dropped.
#[derive(Clone, Copy)]
struct Variant<'a>(&'a str);

impl Variant<'_> {
    fn chars(self) -> impl Iterator<Item = u8> {
        let mut after_underscore = true;
        self.0.bytes().filter_map(move |byte| {
            if byte == b'_' {
                after_underscore = true;
                return None;
            }
            let upper = after_underscore;
            after_underscore = false;
            Some(if upper {
                byte.to_ascii_uppercase()
            } else {
                byte
            })
        })
    }
}

impl PartialEq for Variant<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.chars().eq(other.chars())
    }
}

impl Eq for Variant<'_> {}

impl std::hash::Hash for Variant<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for byte in self.chars() {
            state.write_u8(byte);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_key_is_the_pascal_case_name() {
        for name in [
            "lookup_invoice",
            "a__b",
            "step_1",
            "step1",
            "a_",
            "x9_y",
            "n",
        ] {
            let chars: Vec<u8> = Variant(name).chars().collect();
            assert_eq!(
                String::from_utf8(chars).unwrap(),
                to_pascal_case(name),
                "{name}"
            );
        }
        assert!(Variant("a_b") == Variant("a__b"));
        assert!(Variant("step_1") == Variant("step1"));
        assert!(Variant("ab") != Variant("a_b"));
    }

    fn clashes(source: &str) -> Vec<String> {
        crate::check(source)
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::E0106)
            .map(|d| d.message.clone())
            .collect()
    }

    #[test]
    fn a_name_declared_again_is_no_second_clash() {
        let nodes = "node a_b; node a__b; node a_b; node a__b; node route_a; node route_a;";
        let edges = "START -> a_b; a_b -> END | a__b; a__b -> END; route_a -> END;";
        let source = format!("graph G {{ state S; {nodes} {edges} }}");
        assert_eq!(
            clashes(&source),
            ["nodes `a_b` and `a__b` both become the Rust identifier `AB`"]
        );
        let source = "graph G { state S; node a; node route_a; node route_a; \
                      START -> a; a -> route_a | END; route_a -> END; }";
        assert_eq!(
            clashes(source),
            [
                "node `route_a` and the router of the conditional edge from `a` both become the handler method `route_a`"
            ]
        );
    }
}
