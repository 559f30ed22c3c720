//! Graph-wide validation of lowered blueprints: the language's own name rules (E0101, E0106),
//! then the graph rules every front door shares (`trellis_graph::check`), placed in the source.
//!
//! Both report into the one collector, so every independent problem of the file shows in one run.

mod answers;
mod names;
mod rules;
mod sends;
mod subgraphs;
mod writes;

use trellis_graph::{Violation, check as graph_rules};

use crate::blueprint::Module;
use crate::diagnostic::Diagnostics;
use crate::lower::GraphFacts;

pub(crate) fn check(module: &Module, facts: &[GraphFacts], diagnostics: &mut Diagnostics) {
    names::check_module(module, diagnostics);
    subgraphs::check_module(module, facts, diagnostics);
    for ((graph, spans), facts) in module.graphs.iter().zip(&module.spans).zip(facts) {
        names::check_graph(graph, spans, diagnostics);
        sends::check_graph(graph, spans, diagnostics);
        writes::check_graph(graph, spans, diagnostics);
        answers::check_graph(graph, spans, diagnostics);
        let language_errors = diagnostics.has_error_within(facts.extent);
        for violation in graph_rules(graph) {
            if reported(&violation, graph, facts, language_errors) {
                diagnostics.push(rules::diagnostic(&violation, graph, spans));
            }
        }
    }
}

/// Whether a violation says something true about the source as written: after a syntax error
/// the graph is not whole (what it lacks may be in the broken part, and names a broken
/// declaration meant to declare are not "undeclared"), and warnings only speak of graphs without
/// errors.
fn reported(
    violation: &Violation,
    graph: &trellis_graph::Blueprint,
    facts: &GraphFacts,
    language_errors: bool,
) -> bool {
    match violation {
        Violation::Undeclared { reference } => {
            let name = reference.name(graph);
            !facts.poisoned.iter().any(|poisoned| poisoned == name)
        }
        Violation::NoNodes | Violation::NoEntry | Violation::NoOutgoing { .. } => facts.complete,
        warning if !warning.is_error() => facts.complete && !language_errors,
        _ => true,
    }
}
