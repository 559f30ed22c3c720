//! Both front doors apply one rule set. For random graphs, written once as `.graph` source and
//! once through `GraphBuilder`'s calls:
//!
//! (a) whenever `trellis check` reports no error, what the generated `build()` does —
//!     `GraphBuilder::from_blueprint` on the checked blueprint, then `compile()` — succeeds, and
//!     the compiled graph hands back the very blueprint the source declares;
//! (b) the builder and the front end report the same diagnostics: the same codes with the same
//!     messages, errors and warnings alike.
//!
//! Before the rules were shared, (a) failed on `node review { on_error fallbak; }`: the language
//! never checked `on_error`, the builder did, and the "infallible" `build()` panicked.
//!
//! Nodes declare `writes` now and then (the graph names its state, as `writes` needs): the
//! compiled graph's blueprint keeps each write set.

use std::time::Duration;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use trellis::blueprint::Code;
use trellis::{GraphBuilder, NodeOptions, NodeResult, WholeState};

#[derive(Clone, Default, Serialize, Deserialize)]
struct Blank;
impl WholeState for Blank {}

/// Names a graph declares (and, now and then, END, which the rules reserve).
const DECLARABLE: &[&str] = &["plan", "draft", "review", "send", "fallback", "lookup"];
/// Fields a node's `writes` may name (the state is `Blank`: the front end does not read
/// field types, generated code does).
const FIELDS: &[&str] = &["notes", "draft", "score"];
/// Names edges and handlers may use: declared ones, typos of them, START and END.
const NAMED: &[&str] = &[
    "plan", "draft", "review", "send", "fallback", "drfat", "fallbak", "START", "END",
];

#[derive(Debug, Clone)]
struct NodeSpec {
    name: &'static str,
    on_error: Option<&'static str>,
    max_visits: Option<u32>,
    timeout_ms: Option<u64>,
    retry: Option<u32>,
    defer: bool,
    interrupt_before: bool,
    /// `writes …;`: fields the node declares it writes.
    writes: Option<Vec<&'static str>>,
}

#[derive(Debug, Clone)]
struct EdgeSpec {
    from: &'static str,
    fork: bool,
    targets: Vec<&'static str>,
}

#[derive(Debug, Clone)]
struct GraphSpec {
    max_steps: Option<u32>,
    nodes: Vec<NodeSpec>,
    edges: Vec<EdgeSpec>,
}

/// A name: mostly one the graph declares, sometimes anything of `NAMED`.
fn name(declared: Vec<&'static str>) -> impl Strategy<Value = &'static str> + Clone {
    prop_oneof![
        30 => prop::sample::select(declared),
        1 => prop::sample::select(NAMED),
    ]
}

/// A limit: mostly none, sometimes zero (which the rules refuse).
fn limit<T: std::fmt::Debug + Clone + 'static>(
    zero: T,
    some: T,
) -> impl Strategy<Value = Option<T>> {
    prop_oneof![24 => Just(None), 6 => Just(Some(some)), 1 => Just(Some(zero))]
}

fn node(name: &'static str, declared: Vec<&'static str>) -> impl Strategy<Value = NodeSpec> {
    (
        prop::option::weighted(0.15, self::name(declared)),
        limit(0u32, 2),
        limit(0u64, 1_000),
        limit(0u32, 2),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.1),
        prop::option::weighted(0.3, prop::sample::subsequence(FIELDS, 1..=FIELDS.len())),
    )
        .prop_map(
            move |(on_error, max_visits, timeout_ms, retry, defer, interrupt_before, writes)| {
                NodeSpec {
                    name,
                    on_error,
                    max_visits,
                    timeout_ms,
                    retry,
                    defer,
                    interrupt_before,
                    writes,
                }
            },
        )
}

fn edge(
    from: &'static str,
    declared: Vec<&'static str>,
) -> impl Strategy<Value = EdgeSpec> + Clone {
    let target = prop_oneof![4 => name(declared), 1 => Just("END")];
    let targets = prop_oneof![
        3 => prop::collection::vec(target.clone(), 1..2),
        2 => prop::collection::vec(target, 2..4),
    ];
    (targets, prop::bool::ANY, prop::bool::weighted(0.9)).prop_map(
        move |(mut targets, fork, distinct)| {
            if distinct {
                let mut seen = Vec::new();
                targets.retain(|t| {
                    !seen.contains(t) && {
                        seen.push(*t);
                        true
                    }
                });
            }
            // END in a fork is refused; let most forks end their branches by their own edges.
            let fork = fork && targets.len() > 1;
            if fork && distinct && targets.len() > 2 {
                targets.retain(|t| *t != "END");
            }
            EdgeSpec {
                from,
                fork,
                targets,
            }
        },
    )
}

/// Mostly sound graphs — distinct nodes, an edge out of START and out of each node — with
/// mistakes mixed in: repeated or reserved declarations, typos, missing or extra edges, zero
/// limits, joins of uneven branches.
fn graph() -> impl Strategy<Value = GraphSpec> {
    (
        prop::sample::subsequence(DECLARABLE, 1..=DECLARABLE.len()),
        limit(0u32, 20),
        prop::bool::weighted(0.05),
        prop::bool::weighted(0.05),
    )
        .prop_flat_map(|(mut names, max_steps, repeat, reserved)| {
            if repeat {
                names.push(names[0]);
            }
            if reserved {
                names.push("END");
            }
            let declared = names.clone();
            let nodes: Vec<_> = names
                .iter()
                .map(|&name| node(name, declared.clone()))
                .collect();
            // Each source gets 0, 1 (mostly) or 2 edges.
            let sources: Vec<&'static str> = std::iter::once("START").chain(names).collect();
            let edges: Vec<_> = sources
                .iter()
                .map(|&from| {
                    let count = prop_oneof![1 => Just(0usize), 12 => Just(1), 1 => Just(2)];
                    let edge = edge(from, declared.clone());
                    count.prop_flat_map(move |count| prop::collection::vec(edge.clone(), count))
                })
                .collect();
            (Just(max_steps), nodes, edges)
        })
        .prop_map(|(max_steps, nodes, edges)| GraphSpec {
            max_steps,
            nodes,
            edges: edges.into_iter().flatten().collect(),
        })
}

/// The graph as `.graph` source.
fn source(spec: &GraphSpec) -> String {
    let mut text = String::from("graph Random {\n    state Blank;\n");
    if let Some(max) = spec.max_steps {
        text.push_str(&format!("    max_steps {max};\n"));
    }
    for node in &spec.nodes {
        let mut attributes = Vec::new();
        if let Some(handler) = node.on_error {
            attributes.push(format!("on_error {handler};"));
        }
        if let Some(max) = node.max_visits {
            attributes.push(format!("max_visits {max};"));
        }
        if let Some(ms) = node.timeout_ms {
            attributes.push(format!("timeout {ms}ms;"));
        }
        if let Some(retries) = node.retry {
            attributes.push(format!("retry {retries} backoff 10ms;"));
        }
        if node.defer {
            attributes.push("defer;".to_owned());
        }
        if node.interrupt_before {
            attributes.push("interrupt before;".to_owned());
        }
        if let Some(fields) = &node.writes {
            attributes.push(format!("writes {};", fields.join(", ")));
        }
        if attributes.is_empty() {
            text.push_str(&format!("    node {};\n", node.name));
        } else {
            text.push_str(&format!(
                "    node {} {{ {} }}\n",
                node.name,
                attributes.join(" ")
            ));
        }
    }
    for edge in &spec.edges {
        let separator = if edge.fork { " & " } else { " | " };
        text.push_str(&format!(
            "    {} -> {};\n",
            edge.from,
            edge.targets.join(separator)
        ));
    }
    text.push_str("}\n");
    text
}

/// The runtime's spelling of a name the language writes START or END.
fn runtime_name(name: &str) -> &str {
    match name {
        "START" => trellis::START,
        "END" => trellis::END,
        node => node,
    }
}

fn noop() -> impl trellis::Node<Blank> {
    trellis::node_fn(|_, _| async { Ok(NodeResult::None) })
}

/// The graph through `GraphBuilder`'s calls.
fn builder(spec: &GraphSpec) -> GraphBuilder<Blank> {
    let mut builder = GraphBuilder::<Blank>::new("Random");
    if let Some(max) = spec.max_steps {
        builder.set_max_steps(max);
    }
    for node in &spec.nodes {
        let mut options = NodeOptions::new();
        if let Some(handler) = node.on_error {
            options = options.on_error(runtime_name(handler));
        }
        if let Some(max) = node.max_visits {
            options = options.max_visits(max);
        }
        if let Some(ms) = node.timeout_ms {
            options = options.timeout(Duration::from_millis(ms));
        }
        match node.retry {
            // `retry 0` is a zero limit in the language; the builder says "no retries" with 0,
            // so the same mistake is a zero-length backoff list it cannot express. Skip it.
            Some(0) | None => {}
            Some(retries) => options = options.retry(retries, Duration::from_millis(10)),
        }
        if node.defer {
            options = options.defer();
        }
        if node.interrupt_before {
            options = options.interrupt_before();
        }
        builder.add_node_with(node.name, noop(), options);
    }
    for edge in &spec.edges {
        let from = runtime_name(edge.from);
        let targets: Vec<&str> = edge.targets.iter().map(|t| runtime_name(t)).collect();
        match (edge.fork, targets.as_slice()) {
            (_, [to]) => builder.add_edge(from, *to),
            (true, _) => builder.add_fork(from, targets),
            (false, _) => builder.add_conditional_edges(from, |_: &Blank| "", targets),
        };
    }
    builder
}

type Report = Vec<(Code, String)>;

fn sorted(mut report: Report) -> Report {
    report.sort();
    report
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn both_front_doors_apply_one_rule_set(spec in graph()) {
        // The builder cannot say `retry 0` (its 0 means no retries): leave that case to the
        // language's own tests.
        prop_assume!(spec.nodes.iter().all(|node| node.retry != Some(0)));
        let text = source(&spec);
        let checked = trellis_dsl::check(&text);
        let language: Report = checked
            .diagnostics
            .iter()
            .map(|d| (d.code, d.message.clone()))
            .collect();
        prop_assert!(
            language.iter().all(|(code, _)| code.scope() == trellis::blueprint::Scope::Topology),
            "the generator writes sources without language-only mistakes:\n{text}{language:#?}"
        );

        // (a) what `trellis check` accepts, the generated `build()` builds.
        if !checked.has_errors() {
            let blueprint = checked.module.graphs[0].clone();
            let built = GraphBuilder::<Blank>::from_blueprint(
                blueprint.clone(),
                |_, _| noop(),
                |_, _| |_: &Blank, _: &trellis::Visits<'_>| "",
            )
            .compile();
            prop_assert!(
                built.is_ok(),
                "`trellis check` accepts this graph but its build() fails:\n{text}{:?}",
                built.err()
            );
            if let Ok(graph) = built {
                prop_assert_eq!(graph.blueprint(), &blueprint);
            }
        }

        // (b) the same diagnostics from the builder.
        let builder: Report = match builder(&spec).compile() {
            Ok(graph) => graph.warnings().iter().map(|d| (d.code, d.message.clone())).collect(),
            Err(error) => error.diagnostics.iter().map(|d| (d.code, d.message.clone())).collect(),
        };
        prop_assert_eq!(sorted(language), sorted(builder), "for\n{}", text);
    }
}
