//! A graph rule's violation as a diagnostic of the language: its primary span, the label under
//! it, the places that explain it, and help written in the language's own syntax.

use std::collections::HashSet;

use trellis_graph::{Blueprint, Limit, Path, Reference, Violation, did_you_mean};

use crate::blueprint::GraphSpans;
use crate::diagnostic::{Diagnostic, Fix, Span};

pub(super) fn diagnostic(
    violation: &Violation,
    graph: &Blueprint,
    spans: &GraphSpans,
) -> Diagnostic {
    let at = Place {
        violation,
        graph,
        spans,
    };
    let new = |span: Span, label: &str| at.report(span, label);
    let node_span = |node: usize| at.node_span(node);
    let from_span = |edge: usize| at.source_span(edge);
    let target_span = |edge: usize, target: usize| at.target_span(edge, target);
    match violation {
        Violation::NoNodes => new(spans.name, "declares no node")
            .with_help("declare a node and connect it: `node work;` and `START -> work -> END;`"),
        Violation::ReservedName { node } => {
            let reason =
                trellis_graph::reserved_name_reason(&graph.nodes[*node].id).unwrap_or_default();
            new(node_span(*node), &reason).with_help("choose another name")
        }
        Violation::DuplicateNode { first, again } => new(node_span(*again), "declared again here")
            .with_label(node_span(*first), "first declared here")
            .with_help("remove one declaration, or rename one of the nodes"),
        Violation::ZeroLimit { limit } => zero_limit(&at, *limit),
        Violation::Undeclared { reference } => undeclared(&at, *reference),
        Violation::EdgeOutOfEnd { edge } => new(from_span(*edge), "END ends a branch")
            .with_help("start the edge at a node, or at START"),
        Violation::EdgeIntoStart { edge, target } => {
            new(target_span(*edge, *target), "START only begins a run")
                .with_help("to run the first node again, lead the edge to that node")
        }
        Violation::EndInFork { edge, target } => new(
            target_span(*edge, *target),
            "a fork starts branches; END ends one",
        )
        .with_help("fork to nodes only, and lead each branch to END by its own edge"),
        Violation::EndInSend { edge, target } => new(
            target_span(*edge, *target),
            "a send runs nodes; END ends a branch",
        )
        .with_help("send to nodes only, and lead each of them to END by its own edge"),
        Violation::JoinOutOfStart { edge } => new(from_span(*edge), "START waits for nothing")
            .with_help("join nodes only: `a & b -> next;`"),
        Violation::EndInJoin { edge } => new(target_span(*edge, 0), "a join runs a node")
            .with_help("join into a node, and lead that node to END"),
        Violation::JoinTargets { edge } => {
            let targets = &spans.edges[*edge].targets;
            let span = targets
                .iter()
                .fold(targets[0], |whole, target| whole.to(*target));
            new(span, "a join runs one node once its sources are done").with_help(
                "join into one node, and route or fork from it: `a & b -> next; next -> c | d;`",
            )
        }
        Violation::LoneJoin { node, edge } => {
            let id = &graph.nodes[*node].id;
            let from = graph.edges[*edge].from.as_written();
            new(
                spans.edges[*edge].whole(),
                "one source: nothing to wait for",
            )
            .with_help(format!(
                "join two sources or more (`{from} & other -> {id};`), or write `{from} -> {id};`"
            ))
        }
        Violation::SentToSubgraph { edge, target } => sent_to_subgraph(&at, *edge, *target),
        Violation::OnErrorNotANode { node } => new(
            spans.nodes[*node].on_error.unwrap_or(node_span(*node)),
            "not a node",
        )
        .with_help("name the node that handles this node's errors"),
        Violation::RepeatedTarget { edge, first, again } => {
            new(target_span(*edge, *again), "named again here")
                .with_label(target_span(*edge, *first), "first named here")
                .with_help("remove the repeated target")
        }
        Violation::NoTargets { edge } => {
            new(from_span(*edge), "no target").with_help("give the edge a target")
        }
        Violation::TwoEntries { first, again } => {
            new(from_span(*again), "second `START -> …` edge")
                .with_label(from_span(*first), "first entry edge here")
                .with_help(merge_help(graph, *first, *again))
        }
        Violation::TwoOutgoing { first, again, .. } => {
            new(from_span(*again), "second outgoing edge")
                .with_label(from_span(*first), "first outgoing edge")
                .with_help(merge_help(graph, *first, *again))
        }
        Violation::NoEntry => new(spans.name, "no `START -> …` edge").with_help(format!(
            "add an edge from START, e.g. `START -> {};`",
            graph.nodes.first().map_or("first", |node| node.id.as_str())
        )),
        Violation::NoOutgoing { node } => no_outgoing(&at, *node),
        Violation::Unreachable { node } => {
            new(node_span(*node), "unreachable").with_help("lead an edge to it, or remove it")
        }
        Violation::CannotEnd { node } => new(node_span(*node), "no path from here leads to END")
            .with_help(
                "a run that gets here can only stop by failing at `max_steps` or `max_visits`; \
                 add a path from here to END",
            ),
        Violation::UnboundedCycle { cycle, closing } => {
            let root = cycle.first().copied().unwrap_or_default();
            let diagnostic = new(node_span(root), "this cycle is unbounded")
                .with_help("only `max_steps` bounds it; add `max_visits N;` to one of its nodes");
            match closing {
                Some((edge, target)) => diagnostic.with_label(
                    from_span(*edge).to(target_span(*edge, *target)),
                    "the cycle closes here",
                ),
                None => diagnostic,
            }
        }
        Violation::UnevenJoin { node, fork, paths } => uneven_join(&at, *node, *fork, paths),
        // A rule this front end does not place yet: its message, at the graph's name.
        _ => new(spans.name, "in this graph"),
    }
}

/// A violation and the graph it was found in, with the places its diagnostic points at.
struct Place<'a> {
    violation: &'a Violation,
    graph: &'a Blueprint,
    spans: &'a GraphSpans,
}

impl Place<'_> {
    /// The diagnostic, its message the violation's, its primary label `label` at `span`.
    fn report(&self, span: Span, label: &str) -> Diagnostic {
        Diagnostic::new(
            self.violation.code(),
            span,
            self.violation.message(self.graph),
            label,
        )
    }

    fn node_span(&self, node: usize) -> Span {
        self.spans.nodes[node].name
    }

    fn source_span(&self, edge: usize) -> Span {
        self.spans.edges[edge].from
    }

    fn target_span(&self, edge: usize, target: usize) -> Span {
        self.spans.edges[edge].targets[target]
    }
}

/// A zero limit, at its value: E0002.
fn zero_limit(at: &Place<'_>, limit: Limit) -> Diagnostic {
    let (label, help) = match limit {
        Limit::MaxSteps | Limit::MaxVisits(_) => ("too small", "write 1 or more"),
        Limit::Retry(_) => (
            "too small",
            "write 1 or more, or leave `retry` out for no retries",
        ),
        Limit::Timeout(_) => (
            "zero duration",
            "give a positive duration, such as `1s`, or leave `timeout` out",
        ),
        Limit::MaxConcurrency(_) => (
            "too small",
            "write 1 or more, or leave `max_concurrency` out to run every branch at once",
        ),
        _ => ("too small", "write 1 or more"),
    };
    let fallback = limit
        .node()
        .map_or(at.spans.name, |node| at.node_span(node));
    at.report(at.spans.limit(limit).unwrap_or(fallback), label)
        .with_help(help)
}

/// A name no node is declared by: E0202, with the nearest declared name.
fn undeclared(at: &Place<'_>, reference: Reference) -> Diagnostic {
    let (span, terminal) = match reference {
        Reference::From { edge } => (at.source_span(edge), "START"),
        Reference::Target { edge, target } => (at.target_span(edge, target), "END"),
        Reference::OnError { node } => (
            at.spans.nodes[node].on_error.unwrap_or(at.node_span(node)),
            "",
        ),
        // A reference this front end does not know yet: the graph's name.
        _ => (at.spans.name, ""),
    };
    let name = reference.name(at.graph);
    let nodes = at.graph.nodes.iter().map(|node| node.id.as_str());
    let known = did_you_mean(
        name,
        nodes.chain([terminal].into_iter().filter(|t| !t.is_empty())),
    );
    match known {
        Some(known) => at
            .report(span, "not declared")
            .with_did_you_mean(span, known),
        None if crate::names::is_snake_case(name) => at
            .report(span, "not declared")
            .with_help(format!("declare it with `node {name};`")),
        None => at.report(span, "not declared").with_help(
            "declare the node, or name one that is declared (node names are snake_case)",
        ),
    }
}

/// A send to a subgraph node: E0213.
fn sent_to_subgraph(at: &Place<'_>, edge: usize, target: usize) -> Diagnostic {
    let id = at.graph.edges[edge].targets[target].as_written();
    let node = at.graph.nodes.iter().position(|n| n.id == id);
    let sent = at.report(at.target_span(edge, target), "sent to here");
    match node {
        Some(node) => sent.with_label(at.node_span(node), "runs a graph"),
        None => sent,
    }
    .with_help(format!(
        "send to a node that reads the branch's input and runs the graph's work, or write `-> {id}` to run the graph once"
    ))
}

/// A node that leads nowhere: E0204, with the fix that leads it to END.
fn no_outgoing(at: &Place<'_>, node: usize) -> Diagnostic {
    let id = &at.graph.nodes[node].id;
    // Inserted before the graph's closing brace (the extent's last byte).
    let close = at.spans.extent.end.saturating_sub(1);
    at.report(at.node_span(node), "leads nowhere")
        .with_help(format!(
            "add `{id} -> END;`, or an edge to the node that comes next"
        ))
        .with_fix(Fix {
            title: format!("add `{id} -> END;`"),
            span: Span::new(close, close),
            replacement: format!("{id} -> END;"),
            statement: true,
        })
}

/// Fork branches rejoining at different lengths: W0304, with a waiting join for help.
fn uneven_join(at: &Place<'_>, node: usize, fork: usize, paths: &[Path; 2]) -> Diagnostic {
    let id = &at.graph.nodes[node].id;
    let help = match (paths[0].before_last(), paths[1].before_last()) {
        (Some(a), Some(b)) => format!(
            "replace the two edges into `{id}` with a waiting join, `{} & {} -> {id};`, or add `defer;` to `{id}`, so that it runs once, after both",
            at.graph.nodes[a].id, at.graph.nodes[b].id
        ),
        _ => {
            format!("add `defer;` to `{id}` so that it runs once, after the other branches")
        }
    };
    at.report(at.node_span(node), "runs once per arriving branch")
        .with_label(at.spans.edges[fork].whole(), "the branches start here")
        .with_help(help)
}

/// "write one statement: `a -> b | c;` lets a router choose, `a -> b & c;` runs both".
fn merge_help(graph: &Blueprint, first: usize, second: usize) -> String {
    let (first, second) = (&graph.edges[first], &graph.edges[second]);
    let from = first.from.as_written();
    let mut targets: Vec<&str> = Vec::new();
    let mut seen = HashSet::new();
    for target in first.targets.iter().chain(&second.targets) {
        if seen.insert(target) {
            targets.push(target.as_written());
        }
    }
    let branch = format!("{from} -> {};", targets.join(" | "));
    let nodes: Vec<&str> = targets.iter().copied().filter(|t| *t != "END").collect();
    if nodes.len() >= 2 && nodes.len() == targets.len() {
        let all = if nodes.len() == 2 {
            "runs both"
        } else {
            "runs them all"
        };
        format!(
            "write one statement: `{branch}` lets a router choose, `{from} -> {};` {all}",
            nodes.join(" & ")
        )
    } else {
        format!("write one statement: `{branch}` lets a router choose")
    }
}
