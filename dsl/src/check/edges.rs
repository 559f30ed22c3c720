//! Edge rules: entry (E0201, E0203), references (E0202), one outgoing statement per node (E0204,
//! E0205), duplicate targets (E0206), START/END misuse (E0207), empty graphs (E0208).

use std::collections::HashSet;

use super::NodeIndex;
use crate::blueprint::{Blueprint, Edge, EdgeKind, Endpoint};
use crate::diagnostic::{Code, Diagnostic, Diagnostics, Span};
use crate::lower::GraphFacts;
use crate::suggest::did_you_mean;

pub(super) fn check(
    graph: &Blueprint,
    index: &NodeIndex<'_>,
    facts: &GraphFacts,
    diagnostics: &mut Diagnostics,
) {
    if graph.nodes.is_empty() && facts.complete {
        diagnostics.push(
            Diagnostic::new(
                Code::E0208,
                graph.span,
                format!("graph `{}` has no nodes", graph.name),
                "declares no node",
            )
            .with_help("declare a node and connect it: `node work;` and `START -> work -> END;`"),
        );
    }

    let mut entry: Option<&Edge> = None;
    let mut outgoing: Vec<Option<&Edge>> = vec![None; graph.nodes.len()];
    for edge in &graph.edges {
        match &edge.from {
            Endpoint::Start => match entry {
                Some(first) => diagnostics.push(
                    Diagnostic::new(
                        Code::E0203,
                        edge.from_span,
                        format!("graph `{}` has more than one entry edge", graph.name),
                        "second `START -> …` edge",
                    )
                    .with_label(first.from_span, "first entry edge here")
                    .with_help(merge_help("START", first, edge)),
                ),
                None => entry = Some(edge),
            },
            Endpoint::End => diagnostics.push(
                Diagnostic::new(
                    Code::E0207,
                    edge.from_span,
                    "an edge cannot leave END",
                    "END ends a branch",
                )
                .with_help("start the edge at a node, or at START"),
            ),
            Endpoint::Node(id) => match index.get(id) {
                Some(at) => match outgoing[at] {
                    Some(first) => diagnostics.push(
                        Diagnostic::new(
                            Code::E0205,
                            edge.from_span,
                            format!("node `{id}` has two outgoing edge statements"),
                            "second outgoing edge",
                        )
                        .with_label(first.from_span, "first outgoing edge")
                        .with_help(merge_help(id, first, edge)),
                    ),
                    None => outgoing[at] = Some(edge),
                },
                None => undeclared(graph, facts, id, edge.from_span, diagnostics),
            },
        }
        check_targets(graph, index, facts, edge, diagnostics);
    }

    if !facts.complete {
        return;
    }
    if entry.is_none() && !graph.nodes.is_empty() {
        diagnostics.push(
            Diagnostic::new(
                Code::E0201,
                graph.span,
                format!("graph `{}` has no entry", graph.name),
                "no `START -> …` edge",
            )
            .with_help(format!(
                "add an edge from START, e.g. `START -> {};`",
                graph.nodes[0].id
            )),
        );
    }
    for (node, out) in graph.nodes.iter().zip(&outgoing) {
        if out.is_none() {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0204,
                    node.span,
                    format!("node `{}` has no outgoing edge", node.id),
                    "leads nowhere",
                )
                .with_help(format!(
                    "add `{} -> END;`, or an edge to the node that comes next",
                    node.id
                )),
            );
        }
    }
}

fn check_targets(
    graph: &Blueprint,
    index: &NodeIndex<'_>,
    facts: &GraphFacts,
    edge: &Edge,
    diagnostics: &mut Diagnostics,
) {
    let mut seen: Vec<(&Endpoint, Span)> = Vec::with_capacity(edge.targets.len());
    for (target, &span) in edge.targets.iter().zip(&edge.target_spans) {
        if let Some(&(_, first)) = seen.iter().find(|(t, _)| *t == target) {
            let what = if edge.kind == EdgeKind::Fork {
                "fork"
            } else {
                "conditional edge"
            };
            diagnostics.push(
                Diagnostic::new(
                    Code::E0206,
                    span,
                    format!("`{}` is a target of this {what} twice", display(target)),
                    "named again here",
                )
                .with_label(first, "first named here")
                .with_help("remove the repeated target"),
            );
            continue;
        }
        seen.push((target, span));
        match target {
            Endpoint::Start => diagnostics.push(
                Diagnostic::new(
                    Code::E0207,
                    span,
                    "an edge cannot lead into START",
                    "START only begins a run",
                )
                .with_help("to run the first node again, lead the edge to that node"),
            ),
            Endpoint::End if edge.kind == EdgeKind::Fork => diagnostics.push(
                Diagnostic::new(
                    Code::E0207,
                    span,
                    "END cannot be a target of a fork",
                    "a fork starts branches; END ends one",
                )
                .with_help("fork to nodes only, and lead each branch to END by its own edge"),
            ),
            Endpoint::End => {}
            Endpoint::Node(id) => {
                if index.get(id).is_none() {
                    undeclared(graph, facts, id, span, diagnostics);
                }
            }
        }
    }
}

fn undeclared(
    graph: &Blueprint,
    facts: &GraphFacts,
    id: &str,
    span: Span,
    diagnostics: &mut Diagnostics,
) {
    if facts.poisoned.iter().any(|name| name == id) {
        return;
    }
    let help = match did_you_mean(id, graph.nodes.iter().map(|n| n.id.as_str())) {
        Some(known) => format!("did you mean `{known}`?"),
        None => format!("declare it with `node {id};`"),
    };
    diagnostics.push(
        Diagnostic::new(
            Code::E0202,
            span,
            format!("node `{id}` is not declared in graph `{}`", graph.name),
            "not declared",
        )
        .with_help(help),
    );
}

fn display(endpoint: &Endpoint) -> &str {
    match endpoint {
        Endpoint::Start => "START",
        Endpoint::End => "END",
        Endpoint::Node(id) => id,
    }
}

/// "merge them: `a -> b | c;` lets a router choose, `a -> b & c;` runs both".
fn merge_help(from: &str, first: &Edge, second: &Edge) -> String {
    let mut targets: Vec<&str> = Vec::new();
    let mut seen = HashSet::new();
    for target in first.targets.iter().chain(&second.targets) {
        if seen.insert(target) {
            targets.push(display(target));
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
