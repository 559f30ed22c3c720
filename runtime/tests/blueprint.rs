//! A compiled graph's blueprint — the same type, and the same JSON, as `trellis export` gives
//! for a `.graph` file — its warnings, and graphs built from a blueprint.

mod common;

use std::time::Duration;

use common::{Ticket, log, ticket};
use trellis::blueprint::{
    Blueprint, Code, Edge, EdgeKind, Endpoint, InterruptPoint, MetaValue, NodeKind, Retry,
};
use trellis::{END, GraphBuilder, NodeOptions, NodeResult, START};

fn noop() -> impl trellis::Node<Ticket> {
    trellis::node_fn(|_, _| async { Ok(NodeResult::None) })
}

#[test]
fn a_builder_graph_describes_what_was_declared() {
    let mut builder = GraphBuilder::<Ticket>::new("Support");
    builder
        .set_doc("Answers tickets.")
        .set_state_name("Ticket")
        .set_max_steps(25)
        .add_node_with(
            "classify",
            noop(),
            NodeOptions::new()
                .doc("Billing or not.")
                .kind(NodeKind::Dispatch)
                .meta("owner", MetaValue::Text("support".into()))
                .retry(3, Duration::from_millis(200))
                // Below a millisecond, rounded up: a timeout is never shown as none.
                .timeout(Duration::from_micros(1500)),
        )
        .add_node_with(
            "send",
            noop(),
            NodeOptions::new()
                .interrupt_before()
                .max_visits(2)
                .defer()
                .on_error("classify"),
        )
        .add_edge(START, "classify")
        .add_conditional_edges("classify", |_: &Ticket| "send", ["send", END])
        .add_edge("send", END);
    let graph = builder.compile().expect("a sound graph");
    let blueprint = graph.blueprint();
    assert_eq!(blueprint.name, "Support");
    assert_eq!(blueprint.doc.as_deref(), Some("Answers tickets."));
    assert_eq!(blueprint.state.as_deref(), Some("Ticket"));
    assert_eq!(blueprint.max_steps, Some(25));
    let classify = &blueprint.nodes[0];
    assert_eq!(classify.kind, Some(NodeKind::Dispatch));
    assert_eq!(
        classify.retry,
        Some(Retry {
            backoff_ms: Some(200),
            ..Retry::new(3)
        })
    );
    assert_eq!(classify.timeout_ms, Some(2));
    assert_eq!(
        classify.meta,
        [("owner".to_owned(), MetaValue::Text("support".into()))]
    );
    let send = &blueprint.nodes[1];
    assert_eq!(
        (
            send.interrupt,
            send.max_visits,
            send.defer,
            send.on_error.as_deref()
        ),
        (
            Some(InterruptPoint::Before),
            Some(2),
            true,
            Some("classify")
        )
    );
    assert_eq!(
        blueprint.edges[1],
        Edge {
            from: Endpoint::Node("classify".into()),
            kind: EdgeKind::Conditional,
            targets: vec![Endpoint::Node("send".into()), Endpoint::End],
        }
    );
    // The export's JSON.
    let json = serde_json::to_value(blueprint).expect("serializes");
    assert_eq!(json["format"], 1);
    assert_eq!(json["entry"], "classify");
    assert_eq!(json["finish"], serde_json::json!(["send"]));
    assert_eq!(
        json["edges"][0],
        serde_json::json!({"kind": "static", "from": "__start__", "to": "classify"})
    );
    assert_eq!(json["nodes"][0]["retry"], 3);
    assert_eq!(json["nodes"][1]["interrupt"], "before");
}

#[test]
fn warnings_do_not_fail_the_build_and_are_listed() {
    let mut builder = GraphBuilder::<Ticket>::new("Support");
    builder
        .add_node("draft", noop())
        .add_node("archive", noop())
        .add_edge(START, "draft")
        .add_edge("draft", END)
        .add_edge("archive", END);
    let graph = builder.compile().expect("warnings never fail a build");
    let warnings = graph.warnings();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].code, Code::W0301);
    assert_eq!(
        warnings[0].message,
        "node `archive` cannot be reached from START"
    );
    assert_eq!(
        warnings[0].help.as_deref(),
        Some("lead an edge to it, or remove it")
    );
    assert!(warnings[0].to_string().starts_with("warning[W0301]: "));

    // Branches of different lengths: the join runs once per arriving branch.
    let mut builder = GraphBuilder::<Ticket>::new("Research");
    for node in ["plan", "web", "papers", "deep", "summarize"] {
        builder.add_node(node, noop());
    }
    builder
        .add_edge(START, "plan")
        .add_fork("plan", ["web", "papers"])
        .add_edge("web", "summarize")
        .add_edge("papers", "deep")
        .add_edge("deep", "summarize")
        .add_edge("summarize", END);
    let graph = builder.compile().expect("compiles");
    assert_eq!(graph.warnings()[0].code, Code::W0304);
    assert_eq!(
        graph.warnings()[0].help.as_deref(),
        Some(
            "join the branches into `summarize` with `add_join`, or give `summarize` `NodeOptions::defer()`, so that it runs once, after the other branches"
        )
    );
}

#[tokio::test]
async fn a_topology_loaded_as_json_runs_with_behaviour_given_by_name() {
    let json = r#"{
        "format": 1, "name": "Loaded", "max_steps": 10,
        "nodes": [{"id": "first"}, {"id": "second", "retry": 2, "backoff_ms": 5}],
        "edges": [
            {"kind": "static", "from": "__start__", "to": "first"},
            {"kind": "conditional", "from": "first", "targets": ["second", "__end__"]},
            {"kind": "static", "from": "second", "to": "__end__"}
        ]
    }"#;
    let blueprint: Blueprint = serde_json::from_str(json).expect("a blueprint");
    let graph = GraphBuilder::<Ticket>::from_blueprint(
        blueprint.clone(),
        |_, node| {
            let name = node.id.clone();
            trellis::node_fn(move |_, _| {
                let entry = name.clone();
                async move { Ok(log(&entry)) }
            })
        },
        |_, edge| {
            assert_eq!(edge.from, Endpoint::Node("first".into()));
            |_: &Ticket, _: &trellis::Visits<'_>| "second"
        },
    )
    .compile()
    .expect("builds");
    assert_eq!(graph.blueprint(), &blueprint);
    let outcome = graph.invoke(ticket("")).await.expect("runs");
    assert_eq!(outcome.state().log, ["first", "second"]);

    // A blueprint the rules refuse is refused by `compile`, with the language's codes.
    let mut broken = blueprint;
    broken.nodes[0].on_error = Some("fallbak".into());
    let error = GraphBuilder::<Ticket>::from_blueprint(
        broken,
        |_, _| noop(),
        |_, _| |_: &Ticket, _: &trellis::Visits<'_>| "",
    )
    .compile()
    .expect_err("an undeclared handler");
    assert_eq!(error.codes(), [Code::E0202]);
    assert_eq!(
        error.diagnostics[0].message,
        "node `fallbak` is not declared in graph `Loaded`"
    );
}

/// Write sets through the builder: `compile` checks them against the state's fields and
/// reducers, with the language's codes; fork siblings appending to one field build and run.
#[tokio::test]
async fn write_sets_are_checked_against_the_state_s_fields() {
    let fork = |left: &[&str], right: &[&str]| {
        let mut builder = GraphBuilder::<Ticket>::new("Desk");
        builder
            .add_node("plan", noop())
            .add_node_with(
                "left",
                trellis::node_fn(|_, _| async { Ok(log("left")) }),
                NodeOptions::new().writes(left.iter().copied()),
            )
            .add_node_with(
                "right",
                trellis::node_fn(|_, _| async { Ok(log("right")) }),
                NodeOptions::new().writes(right.iter().copied()),
            )
            .add_edge(START, "plan")
            .add_fork("plan", ["left", "right"])
            .add_edge("left", END)
            .add_edge("right", END);
        builder.compile()
    };
    // `log` appends: both siblings may write it in one step.
    let graph = fork(&["log"], &["log", "reviews"]).expect("builds");
    assert_eq!(
        graph
            .blueprint()
            .node("right")
            .and_then(|n| n.writes.clone()),
        Some(vec!["log".to_owned(), "reviews".to_owned()])
    );
    let outcome = graph.invoke(ticket("")).await.expect("runs");
    assert_eq!(outcome.state().log, ["left", "right"]);

    // `draft` overwrites: two values in one step would be a merge conflict.
    let error = fork(&["log", "draft"], &["draft"]).expect_err("two writers of `draft`");
    assert_eq!(error.codes(), [Code::E0214]);
    assert_eq!(
        error.diagnostics[0].message,
        "nodes `left` and `right` can run in one super-step and both write `draft`, whose reducer overwrites"
    );

    // A field the state does not have.
    let error = fork(&["logs"], &["log"]).expect_err("no field `logs`");
    assert_eq!(error.codes(), [Code::E0216]);
    assert_eq!(
        error.diagnostics[0].message,
        "node `left` writes `logs`, but the state has no field `logs`"
    );
}

#[tokio::test]
async fn a_subgraph_node_writes_what_its_child_writes() {
    let writer = |name: &str, fields: &[&str]| {
        let name = name.to_owned();
        let options = NodeOptions::new().writes(fields.iter().copied());
        (
            name.clone(),
            trellis::node_fn(move |_, _| {
                let name = name.clone();
                async move { Ok(log(&name)) }
            }),
            options,
        )
    };
    // The child: every node declares its writes, so the child writes `log` and `draft`.
    let child = |last: &[&str]| {
        let mut review = GraphBuilder::<Ticket>::new("Review");
        let (read, read_node, read_options) = writer("read", &["log"]);
        let (judge, judge_node, judge_options) = writer("judge", last);
        review
            .add_node_with(read.as_str(), read_node, read_options)
            .add_node_with(judge.as_str(), judge_node, judge_options)
            .add_edge(START, "read")
            .add_edge("read", "judge")
            .add_edge("judge", END);
        review.compile().expect("the child builds")
    };
    let desk = |review: trellis::CompiledGraph<Ticket>, web: &[&str]| {
        let mut desk = GraphBuilder::<Ticket>::new("Desk");
        let (name, node, options) = writer("web", web);
        desk.add_node("plan", noop())
            .add_node_with(name.as_str(), node, options)
            .add_subgraph("review", review)
            .add_edge(START, "plan")
            .add_fork("plan", ["web", "review"])
            .add_edge("web", END)
            .add_edge("review", END);
        desk.compile()
    };

    // `log` appends: the child's writes and `web`'s merge.
    let graph = desk(child(&["log"]), &["log"]).expect("builds");
    let outcome = graph.invoke(ticket("")).await.expect("runs");
    assert_eq!(outcome.state().log, ["read", "judge", "web"]);

    // `draft` overwrites: `web`'s value would silently replace the child's.
    let error = desk(child(&["log", "draft"]), &["draft"]).expect_err("two writers of `draft`");
    assert_eq!(error.codes(), [Code::E0214]);
    assert_eq!(
        error.diagnostics[0].message,
        "nodes `web` and `review` (graph `Review`) can run in one super-step and both write `draft`, whose reducer overwrites"
    );

    // A child node without `writes` may write anything: nothing is checked.
    let mut open = GraphBuilder::<Ticket>::new("Review");
    open.add_node("judge", noop())
        .add_edge(START, "judge")
        .add_edge("judge", END);
    desk(open.compile().expect("builds"), &["draft"]).expect("nothing to check");
}
