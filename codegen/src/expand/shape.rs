//! What a graph's module names, gathered before any of it is written: the subgraph nodes and
//! their mappings, the conditional edges and their routes, the sends and their branches.

use std::collections::HashSet;

use rustc_hash::FxBuildHasher;
use trellis_dsl::rust_names;
use trellis_dsl::{Blueprint, EdgeKind, Endpoint, GraphSpans};

use crate::paths::Paths;

use super::{Mode, NodeNames, ident};

/// A subgraph node (`graph Research;`): its position, the method that builds its child, and
/// for a child on another state type the mapping methods and that type.
pub(super) struct SubgraphNode {
    pub(super) at: usize,
    pub(super) method: String,
    /// `None` on the parent's own state type; else the child's state and the mapping methods.
    pub(super) mapped: Option<Mapped>,
}

/// A subgraph on another state type: that type, and the methods that map to it and back.
pub(super) struct Mapped {
    pub(super) child: String,
    pub(super) input: String,
    pub(super) output: String,
}

/// The subgraph nodes of `blueprint`, with their child's state type: a graph of this file on
/// the same state (or naming none) runs on the parent's; another file's graph
/// (`graph path::Research;`) is the module `path::research`, on its `State`.
pub(super) fn subgraph_nodes(
    blueprint: &Blueprint,
    spans: &GraphSpans,
    module_graphs: &[Blueprint],
    paths: &mut Paths<'_>,
) -> Vec<SubgraphNode> {
    let mut found = Vec::new();
    for (at, node) in blueprint.nodes.iter().enumerate() {
        let Some(path) = node.graph.as_deref() else {
            continue;
        };
        let Some(method) = ident(&node.id) else {
            continue;
        };
        let state = match path.rsplit_once("::") {
            None => {
                let Some(child) = module_graphs.iter().find(|g| g.name == path) else {
                    continue;
                };
                if trellis_graph::runs_on_parents_state(blueprint, child) {
                    None
                } else {
                    Some(format!("super::{}::State", rust_names::module(&child.name)))
                }
            }
            Some((prefix, name)) => Some(format!("{prefix}::{}::State", rust_names::module(name))),
        };
        let mapped = state.map(|state| Mapped {
            child: paths.place_at(&state, spans.nodes.get(at).and_then(|s| s.graph)),
            input: format!("{method}_input"),
            output: format!("{method}_output"),
        });
        found.push(SubgraphNode { at, method, mapped });
    }
    found
}

/// A send edge: its method, its enum, and per target the variant, the node and its input type.
pub(super) struct SendEdge<'a> {
    /// The edge's position in the blueprint.
    pub(super) edge: usize,
    pub(super) from: &'a Endpoint,
    pub(super) method: String,
    pub(super) enum_name: String,
    pub(super) variants: Vec<(String, String, String)>,
}

/// A conditional edge: its router method, its route enum and the enum's variants.
pub(super) struct Route<'a> {
    /// The edge's position in the blueprint.
    pub(super) edge: usize,
    pub(super) from: &'a Endpoint,
    pub(super) method: String,
    pub(super) enum_name: String,
    /// (variant, target as the runtime names it)
    pub(super) variants: Vec<(String, String)>,
}

/// Which endpoints a router or a send may name. While the graph has errors, every name stands as
/// the source writes it, declared or not, so the user's code that names it adds no error of its
/// own; in full mode only the declared nodes and END (which the rules have already made every
/// endpoint, for a checked module).
pub(super) enum Declared<'a> {
    Any,
    Nodes(HashSet<&'a str, FxBuildHasher>),
}

impl<'a> Declared<'a> {
    pub(super) fn new(blueprint: &Blueprint, nodes: &[NodeNames<'a>], mode: Mode) -> Self {
        // Only a router or a send asks: most graphs' nodes need no set.
        let asked = blueprint
            .edges
            .iter()
            .any(|edge| matches!(edge.kind, EdgeKind::Conditional | EdgeKind::Each));
        if mode == Mode::Skeleton || !asked {
            return Declared::Any;
        }
        let mut ids = HashSet::with_capacity_and_hasher(nodes.len(), FxBuildHasher);
        ids.extend(nodes.iter().map(|n| n.node.id.as_str()));
        Declared::Nodes(ids)
    }

    fn names(&self, endpoint: &Endpoint) -> bool {
        match (self, endpoint) {
            (Declared::Any, _) => true,
            (Declared::Nodes(ids), Endpoint::Node(id)) => ids.contains(id.as_str()),
            (Declared::Nodes(_), Endpoint::End) => true,
            (Declared::Nodes(_), Endpoint::Start) => false,
        }
    }
}

/// The routers' edges: one route enum and method per conditional edge, with a variant per
/// target and per endpoint of `meant` (a skeleton's declared nodes).
pub(super) fn routes<'b>(
    blueprint: &'b Blueprint,
    declared: &Declared<'_>,
    meant: &[Endpoint],
) -> Vec<Route<'b>> {
    let mut route_names = HashSet::new();
    let mut routes = Vec::new();
    let conditionals = blueprint
        .edges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == EdgeKind::Conditional);
    for (edge_at, edge) in conditionals {
        let from_name = match &edge.from {
            Endpoint::Start => "start".to_owned(),
            Endpoint::Node(id) if declared.names(&edge.from) => id.clone(),
            _ => continue,
        };
        let (Some(method), Some(enum_name)) = (
            ident(&format!("route_{from_name}")),
            ident(&format!("{}Route", rust_names::variant(&from_name))),
        ) else {
            continue;
        };
        if !route_names.insert(from_name) {
            continue;
        }
        let mut variants = Vec::new();
        let mut seen = HashSet::new();
        let targets = edge.targets.iter().filter(|t| declared.names(t));
        for target in targets.chain(meant) {
            let name = match target {
                Endpoint::End => "End".to_owned(),
                Endpoint::Node(id) => rust_names::variant(id),
                Endpoint::Start => continue,
            };
            if let Some(variant) = ident(&name).filter(|_| seen.insert(name.clone())) {
                variants.push((variant, target.as_str().to_owned()));
            }
        }
        routes.push(Route {
            edge: edge_at,
            from: &edge.from,
            method,
            enum_name,
            variants,
        });
    }
    routes
}

/// One send enum and method per send edge: a variant per target that carries an input.
pub(super) fn sends<'b>(
    blueprint: &'b Blueprint,
    nodes: &[NodeNames<'_>],
    declared: &Declared<'_>,
) -> Vec<SendEdge<'b>> {
    let mut send_names = HashSet::new();
    let mut sends = Vec::new();
    for (edge_at, edge) in blueprint.edges.iter().enumerate() {
        if edge.kind != EdgeKind::Each {
            continue;
        }
        let from_name = match &edge.from {
            Endpoint::Start => "start".to_owned(),
            Endpoint::Node(id) if declared.names(&edge.from) => id.clone(),
            _ => continue,
        };
        let (Some(method), Some(enum_name)) = (
            ident(&format!("send_{from_name}")),
            ident(&format!("{}Send", rust_names::variant(&from_name))),
        ) else {
            continue;
        };
        if !send_names.insert(from_name) {
            continue;
        }
        let mut variants = Vec::new();
        let mut seen = HashSet::new();
        for target in &edge.targets {
            let Endpoint::Node(id) = target else { continue };
            let Some(names) = nodes.iter().find(|n| n.node.id == *id) else {
                continue;
            };
            // Without its type (E0210), a target has no variant: only a skeleton gets here.
            let Some(input) = &names.input else { continue };
            if seen.insert(id.clone()) {
                variants.push((names.variant.clone(), id.clone(), input.clone()));
            }
        }
        sends.push(SendEdge {
            edge: edge_at,
            from: &edge.from,
            method,
            enum_name,
            variants,
        });
    }
    sends
}
