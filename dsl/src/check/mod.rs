//! Graph-wide validation of lowered blueprints: names across graphs, edges, and flow.
//!
//! Each submodule has one job; all report into the one collector, so every independent problem
//! of the file shows in one run.

mod edges;
mod flow;
mod names;

use std::collections::HashMap;

use crate::blueprint::{Blueprint, Module};
use crate::diagnostic::Diagnostics;
use crate::lower::GraphFacts;

pub(crate) fn check(module: &Module, facts: &[GraphFacts], diagnostics: &mut Diagnostics) {
    names::check_module(module, diagnostics);
    for (graph, facts) in module.graphs.iter().zip(facts) {
        let index = NodeIndex::new(graph);
        names::check_graph(graph, diagnostics);
        edges::check(graph, &index, facts, diagnostics);
        // Reachability and cycles only mean something for a graph that is otherwise sound.
        if facts.complete && !diagnostics.has_error_within(facts.extent) {
            flow::check(graph, &index, diagnostics);
        }
    }
}

/// Node names → positions in `Blueprint::nodes`.
pub(crate) struct NodeIndex<'b> {
    positions: HashMap<&'b str, usize>,
}

impl<'b> NodeIndex<'b> {
    fn new(graph: &'b Blueprint) -> Self {
        let mut positions = HashMap::with_capacity(graph.nodes.len());
        for (at, node) in graph.nodes.iter().enumerate() {
            positions.entry(node.id.as_str()).or_insert(at);
        }
        Self { positions }
    }

    fn get(&self, id: &str) -> Option<usize> {
        self.positions.get(id).copied()
    }
}
