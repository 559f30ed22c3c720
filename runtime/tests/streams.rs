//! Streams per run: each mode's items, in the order the run produced them, from this run only,
//! ending where the run pauses, completes or fails.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Answer, Ticket, TicketUpdate, approval_graph, log, ticket};
use serde_json::json;
use trellis::checkpoint::InMemoryCheckpointer;
use trellis::messages::MessageChunk;
use trellis::stream::{RunStream, StreamItem, StreamMode, StreamModes};
use trellis::{CompiledGraph, END, GraphBuilder, NodeError, NodeResult, Outcome, RunError, START};

/// plan → (left, right) → join: two nodes in one step, declared left first.
fn forked() -> CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Forked");
    builder
        .add_node_fn("plan", |_, _| async {
            Ok(TicketUpdate::default()
                .draft(Some("plan".to_owned()))
                .into())
        })
        .add_node_fn("right", |_, _| async { Ok(log("right")) })
        .add_node_fn("left", |_, _| async {
            Ok(TicketUpdate::default().reviews(2).log("left").into())
        })
        .add_node_fn("join", |_, _| async { Ok(NodeResult::None) })
        .add_edge(START, "plan")
        .add_fork("plan", ["left", "right"])
        .add_edge("left", "join")
        .add_edge("right", "join")
        .add_edge("join", END);
    builder.compile().expect("valid graph")
}

async fn collect(stream: &mut RunStream<Ticket>) -> Vec<StreamItem<Ticket>> {
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item);
    }
    items
}

/// An item as its JSON (a state's update type need not be `Debug`).
fn show(item: &StreamItem<Ticket>) -> String {
    serde_json::to_string(item).expect("serializes")
}

fn json_of(items: &[StreamItem<Ticket>]) -> Vec<serde_json::Value> {
    items
        .iter()
        .map(|item| serde_json::to_value(item).expect("serializes"))
        .collect()
}

#[tokio::test]
async fn updates_come_per_node_once_merged_in_declaration_order_showing_only_what_changed() {
    let mut stream = forked().stream(ticket("hi"), StreamMode::Updates);
    let items = collect(&mut stream).await;
    assert_eq!(
        json_of(&items),
        [
            json!({"mode": "updates", "step": 1, "node": "plan", "update": {"draft": "plan"}}),
            // `right` is declared before `left`: declaration order, not the fork's.
            json!({"mode": "updates", "step": 2, "node": "right", "update": {"log": ["right"]}}),
            json!({"mode": "updates", "step": 2, "node": "left", "update": {"log": ["left"], "reviews": 2}}),
        ]
    );
    let StreamItem::Updates { update, .. } = &items[2] else {
        panic!("an update, got {}", show(&items[2]));
    };
    assert_eq!(
        update.reviews,
        Some(2),
        "the typed update, as the node returned it"
    );
    let outcome = stream.finish().await.expect("completes");
    assert_eq!(outcome.state().log, ["right", "left"]);
}

#[tokio::test]
async fn values_are_the_input_then_the_state_after_every_step() {
    let mut stream = forked().stream(ticket("hi"), StreamMode::Values);
    let items = collect(&mut stream).await;
    let values: Vec<(u64, Option<String>, Vec<String>)> = items
        .into_iter()
        .map(|item| match item {
            StreamItem::Values { step, state } => (step, state.draft, state.log),
            other => panic!("only values were asked for, got {}", show(&other)),
        })
        .collect();
    let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        values,
        [
            (0, None, vec![]),
            (1, Some("plan".to_owned()), vec![]),
            (2, Some("plan".to_owned()), strings(&["right", "left"])),
            (3, Some("plan".to_owned()), strings(&["right", "left"])),
        ]
    );
    let outcome = stream.finish().await.expect("completes");
    assert!(matches!(outcome, Outcome::Completed { steps: 3, .. }));
}

#[tokio::test]
async fn custom_values_arrive_while_the_node_that_emits_them_still_runs() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let mut builder = GraphBuilder::<Ticket>::new("Custom");
    let opened = Arc::clone(&gate);
    builder
        .add_node_fn("think", move |_, ctx| {
            let gate = Arc::clone(&opened);
            async move {
                ctx.emit(json!({"progress": "started"}))?;
                // Waits for the reader: it has the first value before this node goes on.
                gate.notified().await;
                ctx.emit("done")?;
                Ok(log("think"))
            }
        })
        .add_edge(START, "think")
        .add_edge("think", END);
    let graph = builder.compile().expect("valid graph");
    let mut stream = graph.stream(ticket("hi"), StreamMode::Custom);

    let first = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("the value comes while the node waits");
    let Some(StreamItem::Custom { step, node, value }) = first else {
        panic!("a custom value, got {:?}", first.as_ref().map(show));
    };
    assert_eq!((step, node.as_str()), (1, "think"));
    assert_eq!(value, json!({"progress": "started"}));
    gate.notify_one();
    let rest = json_of(&collect(&mut stream).await);
    assert_eq!(
        rest,
        [json!({"mode": "custom", "step": 1, "node": "think", "value": "done"})]
    );
    assert_eq!(
        stream.finish().await.expect("completes").state().log,
        ["think"]
    );
}

#[tokio::test]
async fn message_pieces_stream_in_their_own_mode_and_only_when_it_is_asked() {
    let mut builder = GraphBuilder::<Ticket>::new("Chunks");
    builder
        .add_node_fn("write", |_, ctx| async move {
            for piece in ["Hel", "lo ", "ü"] {
                ctx.stream_chunk(MessageChunk {
                    id: "m1".to_owned(),
                    content: piece.to_owned(),
                });
            }
            ctx.emit("custom")?;
            Ok(log(if ctx.streams_messages() {
                "streamed"
            } else {
                "quiet"
            }))
        })
        .add_edge(START, "write")
        .add_edge("write", END);
    let graph = builder.compile().expect("valid graph");

    let mut stream = graph.stream(ticket("hi"), StreamMode::Messages);
    let items = json_of(&collect(&mut stream).await);
    assert_eq!(
        items,
        ["Hel", "lo ", "ü"].map(
            |piece| json!({"mode": "messages", "step": 1, "node": "write",
                "chunk": {"id": "m1", "content": piece}})
        )
    );
    assert_eq!(
        stream.finish().await.expect("completes").state().log,
        ["streamed"]
    );

    // Custom values are not messages, and messages are not custom values.
    let mut stream = graph.stream(ticket("hi"), StreamMode::Custom);
    let items = json_of(&collect(&mut stream).await);
    assert_eq!(
        items,
        [json!({"mode": "custom", "step": 1, "node": "write", "value": "custom"})]
    );
    assert_eq!(
        stream.finish().await.expect("completes").state().log,
        ["quiet"]
    );
    let invoked = graph.invoke(ticket("hi")).await.expect("nobody streams");
    assert_eq!(invoked.state().log, ["quiet"]);
}

#[tokio::test]
async fn emitting_with_nobody_streaming_is_a_no_op_and_a_value_that_cannot_serialize_fails_the_node()
 {
    let mut builder = GraphBuilder::<Ticket>::new("Emits");
    builder
        .add_node_fn("emit", |_, ctx| async move {
            // A map with non-string keys has no JSON form.
            let bad: std::collections::HashMap<(u8, u8), u8> = [((1, 2), 3)].into();
            ctx.emit(&bad)?;
            Ok(log("emitted"))
        })
        .add_edge(START, "emit")
        .add_edge("emit", END);
    let graph = builder.compile().expect("valid graph");
    let invoked = graph.invoke(ticket("hi")).await.expect("nobody streams");
    assert_eq!(invoked.state().log, ["emitted"]);

    let streamed = graph
        .stream(ticket("hi"), StreamMode::Custom)
        .finish()
        .await;
    let Err(RunError::Node(failure)) = streamed else {
        panic!("the node fails, got {streamed:?}");
    };
    assert!(
        failure.message.contains("key must be a string"),
        "{failure}"
    );
}

#[tokio::test]
async fn events_are_this_runs_only_and_the_stream_ends_at_the_pause_then_resumes() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let graph = approval_graph(store);
    let mut everything = graph.subscribe();
    let mut stream = graph.stream(ticket("hi"), StreamMode::Events);
    let run_id = stream.run_id().clone();

    let first = stream.next().await.expect("the run starts");
    // Another run of the same graph, while this one is under way.
    let other = graph.invoke(ticket("other")).await.expect("pauses");
    let mut events = vec![first];
    events.extend(collect(&mut stream).await);
    let names: Vec<&str> = events
        .iter()
        .map(|item| match item {
            StreamItem::Event(event) => {
                assert_eq!(event.run_id(), &run_id, "{event:?}");
                event.name()
            }
            other => panic!("only events were asked for, got {}", show(other)),
        })
        .collect();
    assert_eq!(
        names,
        [
            "graph.run.started",
            "graph.checkpoint.saved",
            "graph.node.entered",
            "graph.node.completed",
            // Step 1 leads to `send`, which asks first: its checkpoint is the pause's.
            "graph.checkpoint.saved",
            "graph.run.paused",
        ]
    );
    assert_eq!(
        serde_json::to_value(&events[0]).expect("serializes")["mode"],
        "events"
    );
    let paused = stream.finish().await.expect("pauses");
    assert!(paused.is_paused());
    assert_eq!(paused.run_id(), &run_id);
    // The graph's subscribers still see both runs.
    let mut runs = std::collections::BTreeSet::new();
    while let Some(event) = everything.try_next() {
        runs.insert(event.run_id().clone());
    }
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs.contains(other.run_id()) && runs.contains(&run_id));

    let mut resumed = graph
        .resume(&run_id, Answer::Approve)
        .stream(StreamModes::ALL)
        .await
        .expect("resumes");
    let items = collect(&mut resumed).await;
    let shown: Vec<String> = items
        .iter()
        .map(|item| match item {
            StreamItem::Event(event) => event.name().to_owned(),
            StreamItem::Updates { step, node, .. } => format!("updates {node} @{step}"),
            StreamItem::Values { step, state } => format!("values {:?} @{step}", state.log),
            StreamItem::Custom { .. } => "custom".to_owned(),
            _ => "another item".to_owned(),
        })
        .collect();
    assert_eq!(
        shown,
        [
            "graph.resume.started",
            "updates send @1",
            "graph.checkpoint.saved",
            "graph.resume.completed",
            "values [\"draft\", \"answered send@2\"] @1",
            "graph.node.entered",
            "graph.node.completed",
            "updates send @2",
            "values [\"draft\", \"answered send@2\", \"sent\"] @2",
            "graph.checkpoint.saved",
            "graph.run.completed",
        ]
    );
    let done = resumed.finish().await.expect("completes");
    assert_eq!(done.state().log.last().map(String::as_str), Some("sent"));
}

#[tokio::test]
async fn a_failed_run_ends_its_stream_and_finish_gives_the_error() {
    let mut builder = GraphBuilder::<Ticket>::new("Fails");
    builder
        .add_node_fn("broken", |_, _| async { Err(NodeError::msg("no model")) })
        .add_edge(START, "broken")
        .add_edge("broken", END);
    let graph = builder.compile().expect("valid graph");
    let mut stream = graph.stream(ticket("hi"), StreamMode::Events | StreamMode::Values);
    let items = collect(&mut stream).await;
    let Some(StreamItem::Event(last)) = items.last() else {
        panic!(
            "the run's last event ends the stream, got {:?}",
            json_of(&items)
        );
    };
    assert_eq!(last.name(), "graph.run.failed");
    let result = stream.finish().await;
    assert!(
        matches!(&result, Err(RunError::Node(failure)) if failure.message == "no model"),
        "{result:?}"
    );
}

#[tokio::test]
async fn finish_without_reading_runs_the_whole_run() {
    let stream = forked().stream(ticket("hi"), StreamModes::ALL);
    let outcome = stream.finish().await.expect("completes");
    assert_eq!(outcome.state().log, ["right", "left"]);
    assert_eq!(outcome.state().reviews, 2);
}

#[tokio::test]
async fn stream_modes_combine_and_convert() {
    let both = StreamMode::Updates | StreamMode::Custom;
    assert!(both.contains(StreamMode::Updates) && both.contains(StreamMode::Custom));
    assert!(!both.contains(StreamMode::Values));
    assert_eq!(
        both | StreamMode::Values
            | StreamMode::Events
            | StreamMode::Messages
            | StreamMode::Subgraphs,
        StreamModes::ALL
    );
    assert_eq!(
        StreamModes::from([StreamMode::Custom, StreamMode::Updates]),
        both
    );
    assert_eq!(
        StreamModes::from(StreamMode::Values),
        StreamMode::Values | StreamMode::Values
    );
    assert!(!StreamModes::default().contains(StreamMode::Events));
}

#[tokio::test]
async fn a_subgraph_on_the_runs_state_streams_its_updates_as_its_own() {
    let mut child = GraphBuilder::<Ticket>::new("Triage");
    child
        .add_node_fn("classify", |_, _| async {
            Ok(TicketUpdate::default()
                .category(Some("billing".to_owned()))
                .into())
        })
        .add_node_fn("tag", |_, _| async { Ok(log("tag")) })
        .add_edge(START, "classify")
        .add_edge("classify", "tag")
        .add_edge("tag", END);
    let mut parent = GraphBuilder::<Ticket>::new("Desk");
    parent
        .add_node_fn("open", |_, _| async { Ok(log("open")) })
        .add_subgraph("triage", child.compile().unwrap())
        .add_edge(START, "open")
        .add_edge("open", "triage")
        .add_edge("triage", END);
    let mut stream = parent
        .compile()
        .unwrap()
        .stream(ticket("hi"), StreamMode::Updates);
    let items = collect(&mut stream).await;
    assert_eq!(
        json_of(&items),
        [
            json!({"mode": "updates", "step": 1, "node": "open", "update": {"log": ["open"]}}),
            json!({"mode": "updates", "step": 2, "node": "triage", "update": {"category": "billing"}}),
            json!({"mode": "updates", "step": 2, "node": "triage", "update": {"log": ["tag"]}}),
        ]
    );
    let outcome = stream.finish().await.expect("completes");
    assert_eq!(outcome.state().category.as_deref(), Some("billing"));
}
