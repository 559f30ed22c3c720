//! AST → `Blueprint` and the spans of its parts: decodes literals and resolves each statement,
//! reporting what is wrong within one declaration as it is written (E0002 for bad literals,
//! E0103–E0105, E0107, misplaced doc comments).
//!
//! The graph rules (a node declared twice, edges, zero limits, reachability, …) are
//! `trellis-graph`'s, run afterwards in `check` on what this produces.

mod node;

use std::collections::HashSet;

use trellis_graph::{Blueprint, Edge, EdgeKind, Endpoint, did_you_mean};

use crate::ast::{self, DocLine, ItemKind};
use crate::blueprint::{EdgeSpans, GraphSpans, Module};
use crate::diagnostic::{Code, Diagnostic, Diagnostics, Span};
use crate::literal;
use crate::names;
use crate::words;
use node::lower_node;

/// What the graph-wide checks need to know beyond the blueprint.
#[derive(Debug, Default)]
pub(crate) struct GraphFacts {
    /// No syntax error inside the graph, so whole-graph checks (no entry, dead ends,
    /// reachability) are meaningful.
    pub(crate) complete: bool,
    /// Names that broken declarations meant to declare.
    pub(crate) poisoned: Vec<String>,
    /// The whole graph in the source, from its name to its closing brace.
    pub(crate) extent: Span,
    /// The nodes that run a subgraph (`graph Research;`), in order: the subgraph rules look at
    /// these alone, not at every node of a large graph.
    pub(crate) subgraph_nodes: Vec<usize>,
}

pub(crate) fn lower(
    file: &ast::File<'_>,
    diagnostics: &mut Diagnostics,
) -> (Module, Vec<GraphFacts>) {
    let mut module = Module {
        doc: literal::doc_text(&file.docs),
        graphs: Vec::with_capacity(file.graphs.len()),
        spans: Vec::with_capacity(file.graphs.len()),
    };
    let mut facts = Vec::with_capacity(file.graphs.len());
    for graph in &file.graphs {
        let (blueprint, spans, graph_facts) = lower_graph(graph, diagnostics);
        module.graphs.push(blueprint);
        module.spans.push(spans);
        facts.push(graph_facts);
    }
    (module, facts)
}

fn lower_graph(
    graph: &ast::Graph<'_>,
    diagnostics: &mut Diagnostics,
) -> (Blueprint, GraphSpans, GraphFacts) {
    let mut blueprint = Blueprint {
        name: graph.name.map(|n| n.text.to_owned()).unwrap_or_default(),
        doc: literal::doc_text(&graph.docs),
        ..Blueprint::default()
    };
    let mut spans = GraphSpans {
        name: graph.name.map_or(graph.head_span, |n| n.span),
        extent: graph.extent,
        ..GraphSpans::default()
    };
    if let Some(name) = graph.name {
        check_graph_name(name, diagnostics);
    }
    misplaced_docs(&graph.stray_docs, diagnostics);

    reserve(graph, &mut blueprint, &mut spans);
    let mut state_span: Option<Span> = None;
    let mut max_steps_span: Option<Span> = None;
    let mut incomplete = false;
    let mut declared: Option<HashSet<&str>> = None;
    let mut subgraph_nodes = Vec::new();
    // Each node's attributes seen so far, one list for all the nodes.
    let mut seen = Vec::new();
    for item in &graph.items {
        if !matches!(item.kind, ItemKind::Node(_)) {
            misplaced_docs(&item.docs, diagnostics);
        }
        match &item.kind {
            ItemKind::State(path) => {
                if let Some(first) = state_span {
                    diagnostics.push(given_twice(
                        "`state`",
                        "in graph",
                        &blueprint.name,
                        first,
                        path.span,
                    ));
                } else {
                    state_span = Some(path.span);
                    blueprint.state = Some(canonical_path(&path.tokens));
                    spans.state = path
                        .tokens
                        .iter()
                        .map(|token| (token.text.to_owned(), token.span))
                        .collect();
                }
            }
            ItemKind::MaxSteps(value) => {
                if let Some(first) = max_steps_span {
                    diagnostics.push(given_twice(
                        "`max_steps`",
                        "in graph",
                        &blueprint.name,
                        first,
                        value.span,
                    ));
                } else {
                    max_steps_span = Some(value.span);
                    match literal::integer(*value, "`max_steps`") {
                        Ok(steps) => {
                            blueprint.max_steps = Some(steps);
                            spans.max_steps = Some(value.span);
                        }
                        Err(error) => diagnostics.push(error),
                    }
                }
            }
            ItemKind::Node(decl) => {
                if decl.name.text.is_empty() {
                    continue;
                }
                // A node that cannot be named would only cause follow-on errors (START has no
                // outgoing edge, …): the whole-graph checks are skipped, as after a syntax error.
                incomplete |= !check_node_name(decl.name, diagnostics);
                // Declared twice or not, every declaration is kept: E0102 is a graph rule.
                let (node, node_spans) = lower_node(decl, &item.docs, &mut seen, diagnostics);
                if node.graph.is_some() {
                    subgraph_nodes.push(blueprint.nodes.len());
                }
                blueprint.nodes.push(node);
                spans.nodes.push(node_spans);
            }
            ItemKind::Edge(edge) => {
                lower_edge(edge, &mut blueprint.edges, &mut spans.edges, diagnostics)
            }
            ItemKind::Unknown(word) => {
                // Probably a mistyped declaration: whole-graph checks would only add noise.
                incomplete = true;
                if !word.text.is_empty() {
                    unknown_item(graph, *word, &mut declared, diagnostics);
                }
            }
        }
    }
    let facts = GraphFacts {
        complete: !graph.had_syntax_error && !incomplete && graph.name.is_some(),
        poisoned: graph
            .poisoned
            .iter()
            .map(|name| (*name).to_owned())
            .collect(),
        extent: graph.extent,
        subgraph_nodes,
    };
    (blueprint, spans, facts)
}

/// Room for the graph's nodes and edges, made up front: a large graph's nodes are megabytes,
/// and growing by doubling copies them.
fn reserve(graph: &ast::Graph<'_>, blueprint: &mut Blueprint, spans: &mut GraphSpans) {
    let (nodes, edges) = graph
        .items
        .iter()
        .fold((0, 0), |(n, e), item| match item.kind {
            ItemKind::Node(_) => (n + 1, e),
            ItemKind::Edge(_) => (n, e + 1),
            _ => (n, e),
        });
    blueprint.nodes.reserve_exact(nodes);
    spans.nodes.reserve_exact(nodes);
    blueprint.edges.reserve(edges);
    spans.edges.reserve(edges);
}

/// E0107 for a graph item that starts with no keyword: a did-you-mean for a mistyped one, or
/// how to write an edge from a node of that name.
fn unknown_item<'a>(
    graph: &ast::Graph<'a>,
    word: ast::Ident<'a>,
    declared: &mut Option<HashSet<&'a str>>,
    diagnostics: &mut Diagnostics,
) {
    // Built on the first unknown item only: valid graphs never need it.
    let declared = declared.get_or_insert_with(|| {
        graph
            .items
            .iter()
            .filter_map(|item| match &item.kind {
                ItemKind::Node(node) => Some(node.name.text),
                _ => None,
            })
            .collect::<HashSet<&str>>()
    });
    let names_a_node = declared.contains(word.text);
    let unknown = Diagnostic::new(
        Code::E0107,
        word.span,
        format!("unknown graph item `{}`", word.text),
        "not a setting, a node or an edge",
    );
    let keyword = did_you_mean(word.text, words::GRAPH_ITEMS.iter().map(|w| w.name));
    diagnostics.push(match keyword {
        _ if names_a_node => unknown.with_help(format!(
            "to add an edge from node `{0}`, write `{0} -> …;`",
            word.text
        )),
        Some(keyword) => unknown.with_did_you_mean(word.span, keyword),
        None => {
            unknown.with_help("a graph holds `state`, `max_steps`, `node` declarations and edges")
        }
    });
}

/// `a :: B < C , D >` → `a::B<C, D>`: one spelling whatever the layout, so the formatter cannot
/// change what the state type exports as.
pub(super) fn canonical_path(tokens: &[ast::Ident<'_>]) -> String {
    let mut out = String::new();
    for token in tokens {
        out.push_str(token.text);
        if token.text == "," {
            out.push(' ');
        }
    }
    out
}

fn check_graph_name(name: ast::Ident<'_>, diagnostics: &mut Diagnostics) {
    if let Some(reason) = names::unusable_reason(name.text) {
        diagnostics.push(
            Diagnostic::new(
                Code::E0103,
                name.span,
                format!("`{}` cannot name a graph", name.text),
                reason,
            )
            .with_help("choose another name"),
        );
    } else if !names::is_pascal_case(name.text) {
        let fixed = names::to_pascal_case(name.text);
        let help = if names::is_pascal_case(&fixed) {
            format!("rename it to `{fixed}`")
        } else {
            "a graph name starts with an uppercase letter and has only letters and digits"
                .to_owned()
        };
        diagnostics.push(
            Diagnostic::new(
                Code::E0105,
                name.span,
                format!("graph name `{}` is not PascalCase", name.text),
                "graph names are PascalCase",
            )
            .with_help(help),
        );
    }
}

/// Reports a node name that the language or Rust cannot use, or in the wrong case; false if it
/// cannot be used. (START and END are the graph rules' own E0103.)
fn check_node_name(name: ast::Ident<'_>, diagnostics: &mut Diagnostics) -> bool {
    if trellis_graph::reserved_name_reason(name.text).is_some() {
        return true;
    }
    if let Some(reason) = names::unusable_reason(name.text) {
        diagnostics.push(
            Diagnostic::new(
                Code::E0103,
                name.span,
                format!("`{}` cannot name a node", name.text),
                reason,
            )
            .with_help("choose another name"),
        );
        return false;
    }
    if !names::is_snake_case(name.text) {
        let fixed = names::to_snake_case(name.text);
        let help = if names::is_snake_case(&fixed) && names::unusable_reason(&fixed).is_none() {
            format!("rename it to `{fixed}`")
        } else {
            "a node name starts with a lowercase letter and has only lowercase letters, digits and `_`"
                .to_owned()
        };
        diagnostics.push(
            Diagnostic::new(
                Code::E0105,
                name.span,
                format!("node name `{}` is not snake_case", name.text),
                "node names are snake_case",
            )
            .with_help(help),
        );
    }
    true
}

fn misplaced_docs(docs: &[DocLine<'_>], diagnostics: &mut Diagnostics) {
    if let (Some(first), Some(last)) = (docs.first(), docs.last()) {
        diagnostics.push(
            Diagnostic::new(
                Code::E0001,
                first.span.to(last.span),
                "doc comment documents nothing",
                "`///` documents the `graph` or `node` that follows it",
            )
            .with_help("use `//` for a plain comment"),
        );
    }
}

/// E0104 for `what` given twice; `place` is "on node" or "in graph".
pub(super) fn given_twice(
    what: &str,
    place: &str,
    owner: &str,
    first: Span,
    again: Span,
) -> Diagnostic {
    Diagnostic::new(
        Code::E0104,
        again,
        format!("{what} is given twice {place} `{owner}`"),
        "given again here",
    )
    .with_label(first, "first given here")
    .with_help("keep one of them")
}

pub(super) fn endpoint(endpoint: &ast::Endpoint<'_>) -> Endpoint {
    match endpoint {
        ast::Endpoint::Start(_) => Endpoint::Start,
        ast::Endpoint::End(_) => Endpoint::End,
        ast::Endpoint::Node(name) => Endpoint::Node(name.text.to_owned()),
    }
}

/// `a -> b -> c | d;` becomes `a -> b` (static) and `b -> c | d` (conditional); `a & b -> c;`
/// becomes `a -> c` and `b -> c` (join edges).
fn lower_edge(
    edge: &ast::EdgeStmt<'_>,
    edges: &mut Vec<Edge>,
    spans: &mut Vec<EdgeSpans>,
    diagnostics: &mut Diagnostics,
) {
    let mut from = &edge.source;
    let mut hops = edge.hops.as_slice();
    if let (false, [], ast::Target::Send(targets)) = (edge.joined.is_empty(), hops, &edge.target) {
        // The blueprint has no join that sends: said here, where the source is at hand.
        let span = targets
            .iter()
            .fold(targets[0].span(), |whole, target| whole.to(target.span()));
        diagnostics.push(
            Diagnostic::new(
                Code::E0209,
                span,
                "a join must lead to one node, not send",
                "a join runs one node once its sources are done",
            )
            .with_help("join into one node, and send from it: `a & b -> next; next -> each c;`"),
        );
        return;
    }
    if !edge.joined.is_empty() {
        // The join leads to the first hop, or to the target (the rules want one node there).
        let joined_into: &[ast::Endpoint<'_>] = match (hops.split_first(), &edge.target) {
            (Some((first, rest)), _) => {
                hops = rest;
                std::slice::from_ref(first)
            }
            (None, ast::Target::Single(target)) => std::slice::from_ref(target),
            (
                None,
                ast::Target::Conditional(targets)
                | ast::Target::Fork(targets)
                | ast::Target::Send(targets),
            ) => targets,
        };
        for source in std::iter::once(&edge.source).chain(&edge.joined) {
            edges.push(Edge {
                from: endpoint(source),
                kind: EdgeKind::Join,
                targets: joined_into.iter().map(endpoint).collect(),
            });
            spans.push(EdgeSpans {
                from: source.span(),
                targets: joined_into.iter().map(ast::Endpoint::span).collect(),
            });
        }
        match joined_into {
            [next] if !edge.hops.is_empty() => from = next,
            _ => return,
        }
    }
    for hop in hops {
        edges.push(Edge::to(endpoint(from), endpoint(hop)));
        spans.push(EdgeSpans {
            from: from.span(),
            targets: vec![hop.span()],
        });
        from = hop;
    }
    let (kind, targets) = match &edge.target {
        ast::Target::Single(target) => (EdgeKind::Static, std::slice::from_ref(target)),
        ast::Target::Conditional(targets) => (EdgeKind::Conditional, targets.as_slice()),
        ast::Target::Fork(targets) => (EdgeKind::Fork, targets.as_slice()),
        ast::Target::Send(targets) => (EdgeKind::Each, targets.as_slice()),
    };
    edges.push(Edge {
        from: endpoint(from),
        kind,
        targets: targets.iter().map(endpoint).collect(),
    });
    spans.push(EdgeSpans {
        from: from.span(),
        targets: targets.iter().map(ast::Endpoint::span).collect(),
    });
}
