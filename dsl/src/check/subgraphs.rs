//! The language's rules for subgraph nodes (`node research { graph Research; }`): a graph named
//! without a path is one of this file's (E0211), and no graph runs itself through its subgraph
//! nodes, directly or through others (E0212). A path (`graph research::Research;`) names another
//! module's graph, which the Rust compiler resolves. Whether a subgraph node may be sent to is a
//! graph rule every front door shares (E0213, `trellis_graph::check`); so is whether two
//! subgraph nodes on this graph's own state can run in one super-step (E0218,
//! `trellis_graph::same_step_subgraphs`), for which this file says which children run on it.

use trellis_graph::did_you_mean;

use crate::blueprint::Module;
use crate::diagnostic::{Code, Diagnostic, Diagnostics, Span};
use crate::lower::GraphFacts;

/// A subgraph node's reference to a graph of this file.
struct Reference {
    /// The graph whose node it is.
    from: usize,
    /// The graph it names.
    to: usize,
    span: Span,
}

pub(super) fn check_module(module: &Module, facts: &[GraphFacts], diagnostics: &mut Diagnostics) {
    let mut references: Vec<Reference> = Vec::new();
    for (from, (graph, spans)) in module.graphs.iter().zip(&module.spans).enumerate() {
        for &at in &facts[from].subgraph_nodes {
            let (Some(name), Some(span)) =
                (graph.nodes[at].graph.as_deref(), spans.nodes[at].graph)
            else {
                continue;
            };
            if name.contains("::") || name.contains('<') {
                continue;
            }
            match module.graphs.iter().position(|g| g.name == name) {
                Some(to) => references.push(Reference { from, to, span }),
                None => diagnostics.push(unknown(module, name, span)),
            }
        }
    }
    cycles(module, &references, diagnostics);
    for (graph, spans) in module.graphs.iter().zip(&module.spans) {
        same_step(module, graph, spans, diagnostics);
    }
}

/// E0218: two subgraph nodes whose children run on this graph's state (a graph of this file
/// with the same `state`, or none), in one super-step. At the second node's `graph`, with a
/// label at the first's.
fn same_step(
    module: &Module,
    graph: &trellis_graph::Blueprint,
    spans: &crate::blueprint::GraphSpans,
    diagnostics: &mut Diagnostics,
) {
    let whole: Vec<bool> = graph
        .nodes
        .iter()
        .map(|node| {
            let Some(name) = node.graph.as_deref() else {
                return false;
            };
            module
                .graphs
                .iter()
                .find(|child| child.name == name)
                .is_some_and(|child| trellis_graph::runs_on_parents_state(graph, child))
        })
        .collect();
    if whole.iter().filter(|&&whole| whole).count() < 2 {
        return;
    }
    let Some(pair) = trellis_graph::same_step_subgraphs(graph, &whole) else {
        return;
    };
    let place = |at: usize| spans.nodes.get(at).and_then(|node| node.graph);
    let (Some(first), Some(second)) = (place(pair.first), place(pair.second)) else {
        return;
    };
    diagnostics.push(
        Diagnostic::new(
            Code::E0218,
            second,
            pair.message(graph),
            "hands back the whole state",
        )
        .with_label(first, pair.label(graph))
        .with_help(pair.help()),
    );
}

fn unknown(module: &Module, name: &str, span: Span) -> Diagnostic {
    let diagnostic = Diagnostic::new(
        Code::E0211,
        span,
        format!("no graph named `{name}` in this file"),
        "not a graph of this file",
    );
    match did_you_mean(name, module.graphs.iter().map(|g| g.name.as_str())) {
        Some(known) => diagnostic.with_did_you_mean(span, known),
        None => diagnostic.with_help(format!(
            "declare `graph {name} {{ … }}` in this file, or name another module's graph by its path: `graph module::{name};`"
        )),
    }
}

/// E0212, once per cycle of graphs, at the reference that starts it (in declaration order) with
/// the reference that closes it. Depth-first over the graphs, which are few.
fn cycles(module: &Module, references: &[Reference], diagnostics: &mut Diagnostics) {
    let graphs = module.graphs.len();
    // 0: not visited, 1: on the current path, 2: done.
    let mut mark = vec![0u8; graphs];
    for root in 0..graphs {
        if mark[root] == 0 {
            let mut path = Vec::new();
            visit(root, module, references, &mut mark, &mut path, diagnostics);
        }
    }
}

fn visit(
    graph: usize,
    module: &Module,
    references: &[Reference],
    mark: &mut [u8],
    path: &mut Vec<usize>,
    diagnostics: &mut Diagnostics,
) {
    mark[graph] = 1;
    for (at, reference) in references
        .iter()
        .enumerate()
        .filter(|(_, r)| r.from == graph)
    {
        path.push(at);
        match mark[reference.to] {
            0 => visit(reference.to, module, references, mark, path, diagnostics),
            1 => diagnostics.push(cycle(module, references, path, reference.to)),
            _ => {}
        }
        path.pop();
    }
    mark[graph] = 2;
}

/// The cycle that ends at `path`'s last reference, back into graph `start`.
fn cycle(module: &Module, references: &[Reference], path: &[usize], start: usize) -> Diagnostic {
    let name = |graph: usize| module.graphs[graph].name.as_str();
    let first = path
        .iter()
        .position(|&at| references[at].from == start)
        .unwrap_or(0);
    let cycle = &path[first..];
    let opening = &references[cycle[0]];
    let closing = &references[cycle[cycle.len() - 1]];
    let mut route: Vec<&str> = cycle.iter().map(|&at| name(references[at].from)).collect();
    route.push(name(start));
    let message = format!("graph `{}` runs itself: {}", name(start), route.join(" → "));
    if cycle.len() == 1 {
        return Diagnostic::new(Code::E0212, opening.span, message, "runs its own graph")
            .with_help(
                "a graph cannot contain itself: loop with an edge instead (`work -> work | END;`)",
            );
    }
    Diagnostic::new(
        Code::E0212,
        opening.span,
        message,
        format!("`{}` runs `{}` here", name(opening.from), name(opening.to)),
    )
    .with_label(
        closing.span,
        format!(
            "and `{}` runs `{}` here",
            name(closing.from),
            name(closing.to)
        ),
    )
    .with_help("a graph cannot contain itself: remove one of these subgraph nodes")
}
