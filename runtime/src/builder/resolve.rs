//! From a blueprint the rules accept to the runnable topology: nodes, edges, joins, the
//! fingerprint and the flags a step reads.

use std::sync::Arc;

use trellis_graph::{EdgeKind, Endpoint};

use super::GraphBuilder;
use crate::errors::BuildDiagnostic;
use crate::event::EventBus;
use crate::graph::{CompiledGraph, Edge, Join, NodeSpec, Sites, Target, Topology};
use crate::state::GraphState;

impl<S: GraphState> GraphBuilder<S> {
    /// The runnable graph of a blueprint the rules accept: every name resolves, every node has
    /// one outgoing edge, START has one.
    pub(super) fn resolve(
        self,
        warnings: Vec<BuildDiagnostic>,
        sites: Vec<Sites>,
    ) -> CompiledGraph<S> {
        let GraphBuilder {
            blueprint,
            nodes,
            mut routers,
            mut fans,
            mut subgraphs,
            sites: _,
            event_capacity,
            checkpointer,
        } = self;
        let nests = !subgraphs.is_empty();
        let names: Vec<Arc<str>> = blueprint
            .nodes
            .iter()
            .map(|node| Arc::from(node.id.as_str()))
            .collect();
        let index: crate::graph::NameIndex = names
            .iter()
            .enumerate()
            .map(|(at, name)| (Arc::clone(name), at))
            .collect();
        let target = |endpoint: &Endpoint| match endpoint {
            Endpoint::Node(id) => index
                .get(id.as_str())
                .map_or(Target::End, |&at| Target::Node(at)),
            _ => Target::End,
        };
        // One join per node joined into, numbered in the order the nodes are declared.
        let mut join_of = vec![usize::MAX; nodes.len()];
        let mut joins: Vec<Join> = Vec::new();
        for edge in blueprint.edges.iter().filter(|e| e.kind == EdgeKind::Join) {
            if let Target::Node(to) = target(&edge.targets[0]) {
                join_of[to] = 0;
            }
        }
        for (node, slot) in join_of.iter_mut().enumerate() {
            if *slot == 0 {
                *slot = joins.len();
                joins.push(Join {
                    target: node,
                    sources: Vec::new(),
                });
            }
        }
        let mut entry = None;
        let mut outgoing: Vec<Option<Edge<S>>> = (0..nodes.len()).map(|_| None).collect();
        for (at, edge) in blueprint.edges.iter().enumerate() {
            let resolved = match edge.kind {
                EdgeKind::Each => Edge::Each {
                    targets: edge
                        .targets
                        .iter()
                        .filter_map(|t| match target(t) {
                            Target::Node(node) => Some((Arc::from(t.as_str()), node)),
                            Target::End => None,
                        })
                        .collect(),
                    fan: fans.remove(&at),
                },
                EdgeKind::Join => {
                    // The rules made sure a join leads into one node, from a node.
                    let Target::Node(to) = target(&edge.targets[0]) else {
                        continue;
                    };
                    if let Endpoint::Node(id) = &edge.from
                        && let Some(&source) = index.get(id.as_str())
                    {
                        joins[join_of[to]].sources.push(source);
                    }
                    Edge::Join(join_of[to])
                }
                EdgeKind::Static => Edge::Static(target(&edge.targets[0])),
                EdgeKind::Fork => Edge::Fork(
                    edge.targets
                        .iter()
                        .filter_map(|t| match target(t) {
                            Target::Node(node) => Some(node),
                            Target::End => None,
                        })
                        .collect(),
                ),
                EdgeKind::Conditional => Edge::Conditional {
                    targets: edge
                        .targets
                        .iter()
                        .map(|t| (Arc::from(t.as_str()), target(t)))
                        .collect(),
                    // Every conditional edge was declared with its router.
                    router: routers[at]
                        .take()
                        .unwrap_or_else(|| Box::new(|_, _, _| Err(String::new()))),
                },
            };
            match &edge.from {
                Endpoint::Node(id) => {
                    if let Some(&node) = index.get(id.as_str()) {
                        outgoing[node] = Some(resolved);
                    }
                }
                _ => entry = Some(resolved),
            }
        }
        let nodes: Vec<NodeSpec<S>> = nodes
            .into_iter()
            .zip(&names)
            .zip(outgoing)
            .zip(sites)
            .enumerate()
            .map(|(at, ((((node, options), name), edge), sites))| NodeSpec {
                // Guarded: most graphs have none, and a lookup hashes.
                subgraph: if nests { subgraphs.remove(&at) } else { None },
                name: Arc::clone(name),
                node,
                edge: edge.unwrap_or(Edge::Static(Target::End)),
                on_error: options
                    .on_error
                    .as_deref()
                    .and_then(|h| index.get(h).copied()),
                options,
                sites,
            })
            .collect();
        let entry = entry.unwrap_or(Edge::Static(Target::End));
        let mut shape = format!("graph {}\nentry ", blueprint.name);
        entry.describe(&nodes, &joins, &mut shape);
        for node in &nodes {
            shape.push_str("\nnode ");
            shape.push_str(&node.name);
            shape.push_str(" -> ");
            node.edge.describe(&nodes, &joins, &mut shape);
        }
        shape.push('\n');
        let asks_before = nodes
            .iter()
            .any(|node| node.options.interrupt == Some(crate::blueprint::InterruptPoint::Before));
        CompiledGraph::new(
            Topology {
                name: Arc::from(blueprint.name.as_str()),
                names: names.into(),
                fingerprint: trellis_graph::Fnv::hex(&shape).into(),
                state_type: std::any::type_name::<S>().into(),
                max_steps: blueprint.max_steps.unwrap_or(Self::DEFAULT_MAX_STEPS),
                nodes,
                joins,
                index,
                entry,
                blueprint,
                warnings,
                nests,
                asks_before,
            },
            EventBus::new(event_capacity),
            checkpointer,
        )
    }
}
