//! AST → `Blueprint` and the spans of its parts: decodes literals and resolves each statement,
//! reporting what is wrong within one declaration as it is written (E0002 for bad literals,
//! E0103–E0105, E0107, misplaced doc comments).
//!
//! The graph rules (a node declared twice, edges, zero limits, reachability, …) are
//! `trellis-graph`'s, run afterwards in `check` on what this produces.

use std::collections::HashSet;

use trellis_graph::{
    Blueprint, Edge, EdgeKind, Endpoint, InterruptPoint, MetaValue, Node, NodeKind, Retry, RetryOn,
    did_you_mean,
};

use crate::ast::{self, Attr, AttrKind, DocLine, ItemKind, KindSpec, MetaLiteral};
use crate::blueprint::{EdgeSpans, GraphSpans, Module, NodeSpans};
use crate::diagnostic::{Code, Diagnostic, Diagnostics, Span};
use crate::literal;
use crate::names;
use crate::words;

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

    // Sized up front: a large graph's nodes are megabytes, and growing by doubling copies them.
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
                if word.text.is_empty() {
                    continue;
                }
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
                    None => unknown.with_help(
                        "a graph holds `state`, `max_steps`, `node` declarations and edges",
                    ),
                });
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

/// `a :: B < C , D >` → `a::B<C, D>`: one spelling whatever the layout, so the formatter cannot
/// change what the state type exports as.
fn canonical_path(tokens: &[ast::Ident<'_>]) -> String {
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
fn given_twice(what: &str, place: &str, owner: &str, first: Span, again: Span) -> Diagnostic {
    Diagnostic::new(
        Code::E0104,
        again,
        format!("{what} is given twice {place} `{owner}`"),
        "given again here",
    )
    .with_label(first, "first given here")
    .with_help("keep one of them")
}

/// A node's attribute key (`true` for a meta key), with where it was first given.
type Seen<'a> = Vec<((bool, &'a str), Span)>;

fn lower_node<'a>(
    decl: &ast::NodeDecl<'a>,
    docs: &[DocLine<'_>],
    seen: &mut Seen<'a>,
    diagnostics: &mut Diagnostics,
) -> (Node, NodeSpans) {
    let mut node = Node {
        id: decl.name.text.to_owned(),
        doc: literal::doc_text(docs),
        ..Node::default()
    };
    let mut spans = NodeSpans {
        name: decl.name.span,
        ..NodeSpans::default()
    };
    // Nodes have a handful of attributes: a list beats a map.
    seen.clear();
    let mut interrupt_span: Option<(Span, &str)> = None;
    // Applied once every attribute is read: `retry_on` may come before `retry`.
    let mut retry_on: Option<(Span, RetryOn)> = None;
    for attr in &decl.attrs {
        let key = match &attr.kind {
            AttrKind::Meta { key, .. } => Some((true, key.text)),
            // Interrupts get their own message (`before` and `after` both, or one twice).
            AttrKind::Unknown | AttrKind::Interrupt(..) => None,
            _ => Some((false, attr.keyword.text)),
        };
        if let Some(key) = key {
            if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
                let what = match &attr.kind {
                    AttrKind::Meta { key, .. } => format!("meta key `{}`", key.text),
                    _ => format!("attribute `{}`", attr.keyword.text),
                };
                diagnostics.push(given_twice(&what, "on node", &node.id, *first, attr.span));
                continue;
            }
            seen.push((key, attr.span));
        }
        if let AttrKind::RetryOn(failures) = &attr.kind {
            retry_on = lower_retry_on(failures, diagnostics).map(|on| (attr.span, on));
            continue;
        }
        lower_attr(
            attr,
            &mut node,
            &mut spans,
            &mut interrupt_span,
            diagnostics,
        );
    }
    if let Some((at, on)) = retry_on {
        match &mut node.retry {
            Some(retry) => retry.on = on,
            None => diagnostics.push(
                Diagnostic::new(
                    Code::E0104,
                    at,
                    format!("node `{}` says what to retry but is not retried", node.id),
                    "`retry_on` without `retry`",
                )
                .with_help("add `retry N;` to the node, or remove `retry_on`"),
            ),
        }
    }
    (node, spans)
}

/// The failures `retry_on` names; `None` after an E0107 for a word that is none.
fn lower_retry_on(failures: &[ast::Ident<'_>], diagnostics: &mut Diagnostics) -> Option<RetryOn> {
    let mut on = RetryOn::NONE;
    let mut known = true;
    for failure in failures {
        match on.with(failure.text) {
            Some(more) => on = more,
            None => {
                known = false;
                let unknown = Diagnostic::new(
                    Code::E0107,
                    failure.span,
                    format!("unknown failure `{}`", failure.text),
                    "not a failure a node can have",
                );
                diagnostics.push(
                    match did_you_mean(failure.text, RetryOn::NAMES.iter().copied()) {
                        Some(known) => unknown.with_did_you_mean(failure.span, known),
                        None => {
                            unknown.with_help("the failures are `timeout`, `error` and `panic`")
                        }
                    },
                );
            }
        }
    }
    known.then_some(on)
}

fn lower_attr<'a>(
    attr: &Attr<'a>,
    node: &mut Node,
    spans: &mut NodeSpans,
    interrupt_span: &mut Option<(Span, &'a str)>,
    diagnostics: &mut Diagnostics,
) {
    let mut report = |result: Result<(), Diagnostic>| {
        if let Err(error) = result {
            diagnostics.push(error);
        }
    };
    match &attr.kind {
        AttrKind::Retry {
            attempts,
            backoff,
            max,
            jitter,
        } => report((|| {
            let count = literal::integer(*attempts, "`retry`")?;
            let backoff_ms = backoff.map(literal::duration_ms).transpose()?;
            let max_backoff_ms = max.map(literal::duration_ms).transpose()?;
            node.retry = Some(Retry {
                // No wait is no backoff: `backoff 0ms` and no `backoff` are one blueprint.
                backoff_ms: backoff_ms.filter(|&ms| ms > 0),
                max_backoff_ms,
                jitter: jitter.is_some(),
                // `retry_on`, read with the node's other attributes, is applied after them.
                ..Retry::new(count)
            });
            spans.retry = Some(attempts.span);
            Ok(())
        })()),
        AttrKind::RetryOn(_) => {}
        AttrKind::Timeout(value) => report(literal::duration_ms(*value).map(|ms| {
            node.timeout_ms = Some(ms);
            spans.timeout = Some(value.span);
        })),
        AttrKind::MaxVisits(value) => report(literal::integer(*value, "`max_visits`").map(|n| {
            node.max_visits = Some(n);
            spans.max_visits = Some(value.span);
        })),
        AttrKind::MaxConcurrency(value) => {
            report(literal::integer(*value, "`max_concurrency`").map(|n| {
                node.max_concurrency = Some(n);
                spans.max_concurrency = Some(value.span);
            }))
        }
        AttrKind::Input(path) => {
            node.input = Some(canonical_path(&path.tokens));
            spans.input = path
                .tokens
                .iter()
                .map(|token| (token.text.to_owned(), token.span))
                .collect();
        }
        AttrKind::Graph(path) => {
            node.graph = Some(canonical_path(&path.tokens));
            spans.graph = Some(path.span);
        }
        AttrKind::Interrupt(when, question) => {
            if let Some((first, first_when)) = *interrupt_span {
                let diagnostic = if first_when == when.text {
                    given_twice(
                        "attribute `interrupt`",
                        "on node",
                        &node.id,
                        first,
                        attr.span,
                    )
                } else {
                    Diagnostic::new(
                        Code::E0104,
                        attr.span,
                        format!(
                            "node `{}` has both `interrupt {first_when}` and `interrupt {}`",
                            node.id, when.text
                        ),
                        "second interrupt here",
                    )
                    .with_label(first, "first interrupt here")
                    .with_help("a node pauses the run either before or after it runs: keep one")
                };
                report(Err(diagnostic));
                return;
            }
            *interrupt_span = Some((attr.span, when.text));
            node.interrupt = Some(if when.text == "before" {
                InterruptPoint::Before
            } else {
                InterruptPoint::After
            });
            if let Some(question) = question {
                match literal::string(*question) {
                    Ok(text) => node.question = Some(text),
                    Err(errors) => errors.into_iter().for_each(|e| diagnostics.push(e)),
                }
            }
        }
        AttrKind::Defer => node.defer = true,
        // `on_error START;` is kept as the runtime spells START, for the graph rules to refuse.
        AttrKind::OnError(target) => {
            node.on_error = Some(endpoint(target).as_str().to_owned());
            spans.on_error = Some(target.span());
        }
        AttrKind::Kind(spec) => report(lower_kind(spec).map(|kind| node.kind = Some(kind))),
        AttrKind::Meta { key, value } => {
            let value = match value {
                MetaLiteral::String(text) => match literal::string(*text) {
                    Ok(text) => MetaValue::Text(text),
                    Err(errors) => {
                        errors.into_iter().for_each(|e| diagnostics.push(e));
                        return;
                    }
                },
                MetaLiteral::Integer(number) => {
                    match literal::integer(*number, "a `meta` number") {
                        Ok(n) => MetaValue::Integer(n),
                        Err(error) => {
                            diagnostics.push(error);
                            return;
                        }
                    }
                }
                MetaLiteral::Bool(flag) => MetaValue::Bool(*flag),
            };
            node.meta.push((key.text.to_owned(), value));
        }
        AttrKind::Unknown => {
            let word = attr.keyword;
            let unknown = Diagnostic::new(
                Code::E0107,
                word.span,
                format!("unknown attribute `{}`", word.text),
                "unknown attribute",
            );
            report(Err(
                match did_you_mean(word.text, words::attribute_names()) {
                    Some(known) => unknown.with_did_you_mean(word.span, known),
                    None => unknown.with_help(format!(
                        "the attributes are {}",
                        words::quoted(words::attribute_names(), "and")
                    )),
                },
            ));
        }
    }
}

fn lower_kind(spec: &KindSpec<'_>) -> Result<NodeKind, Diagnostic> {
    match spec {
        KindSpec::Custom(text) => literal::string(*text)
            .map(NodeKind::Custom)
            .map_err(|mut errors| errors.remove(0)),
        KindSpec::Named { name, argument } if name.text == "delegate" => match argument {
            Some(target) => Ok(NodeKind::Delegate(target.text.to_owned())),
            None => Err(Diagnostic::new(
                Code::E0107,
                name.span,
                "kind `delegate` needs the graph it delegates to",
                "no graph named",
            )
            .with_help("write `kind delegate(GraphName);`")),
        },
        KindSpec::Named { name, argument } => {
            let Some((_, kind)) = NodeKind::BUILT_IN.iter().find(|(n, _)| *n == name.text) else {
                let known = NodeKind::BUILT_IN
                    .iter()
                    .map(|(n, _)| *n)
                    .chain(std::iter::once("delegate"));
                let unknown = Diagnostic::new(
                    Code::E0107,
                    name.span,
                    format!("unknown node kind `{}`", name.text),
                    "unknown kind",
                );
                return Err(match did_you_mean(name.text, known) {
                    Some(kind) => unknown.with_did_you_mean(name.span, kind),
                    None => unknown.with_help(format!(
                        "use a string for a kind of your own: `kind \"{}\";`",
                        name.text
                    )),
                });
            };
            if let Some(argument) = argument {
                return Err(Diagnostic::new(
                    Code::E0107,
                    argument.span,
                    format!("kind `{}` takes no argument", name.text),
                    "unexpected argument",
                )
                .with_help(format!("write `kind {};`", name.text)));
            }
            Ok(kind.clone())
        }
    }
}

fn endpoint(endpoint: &ast::Endpoint<'_>) -> Endpoint {
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
