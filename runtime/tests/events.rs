//! Events: what a run tells its subscribers and `tracing`, in a deterministic order.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Ticket, TicketUpdate, log, names, shape, ticket};
use trellis::{END, GraphBuilder, NodeError, NodeOptions, NodeResult, RunId, START, event::Event};

/// A small deterministic generator for delays (xorshift), seeded per run.
fn next_delay(seed: &AtomicU64) -> Duration {
    let mut x = seed.load(Ordering::Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    seed.store(x, Ordering::Relaxed);
    Duration::from_micros(x % 3000)
}

static ACTIVATIONS: AtomicU64 = AtomicU64::new(1);

/// plan → fork(web, papers, code) → summarize, with a flaky branch and random delays.
fn research(capacity: usize) -> trellis::CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Research");
    builder.add_node_fn("plan", |_, _| async { Ok(log("plan")) });
    for name in ["web", "papers", "code"] {
        builder
            .add_node_fn_with(
                name,
                move |_, ctx| async move {
                    // Every activation draws a different delay, whatever the input.
                    let seed = AtomicU64::new(ACTIVATIONS.fetch_add(7919, Ordering::Relaxed) | 1);
                    tokio::time::sleep(next_delay(&seed)).await;
                    if name == "papers" && ctx.attempt() == 1 {
                        return Err(NodeError::msg("rate limited"));
                    }
                    Ok(NodeResult::Update(
                        TicketUpdate::default().log(name).reviews(1),
                    ))
                },
                NodeOptions::new().retry(1, Duration::from_millis(1)),
            )
            .add_edge(name, "summarize");
    }
    builder
        .add_node_fn("summarize", |s, _| async move {
            Ok(log(&format!("summary of {}", s.log.len())))
        })
        .add_edge(START, "plan")
        .add_fork("plan", ["web", "papers", "code"])
        .add_edge("summarize", END)
        .set_event_capacity(capacity);
    builder.compile().expect("valid graph")
}

#[tokio::test]
async fn a_run_reports_every_stage_in_order() {
    let graph = research(1024);
    let mut events = graph.subscribe();
    let mut second = graph.subscribe();
    let outcome = graph.invoke(ticket("7")).await.unwrap();
    let events = common::drain(&mut events);
    assert_eq!(
        common::drain(&mut second),
        events,
        "every subscriber gets every event"
    );
    assert!(events.iter().all(|e| e.run_id() == outcome.run_id()));
    assert_eq!(
        shape(&events),
        [
            "graph.run.started",
            "1 entered plan",
            "1 completed plan update",
            "2 entered web",
            "2 entered papers",
            "2 entered code",
            "2 completed web update",
            "failed papers #1",
            "2 completed papers update",
            "2 completed code update",
            "3 entered summarize",
            "3 completed summarize update",
            "graph.run.completed",
        ]
    );
    let failed = events
        .iter()
        .find(|e| e.name() == "graph.node.failed")
        .unwrap();
    assert!(
        matches!(failed, Event::NodeFailed { retrying: true, attempt: 1, error, .. } if error == "rate limited")
    );
    let json = serde_json::to_value(&events[2]).unwrap();
    assert_eq!(json["event"], "graph.node.completed");
    assert_eq!(json["node"], "plan");
    assert_eq!(json["command"], "update");
    assert_eq!(json["graph"], "Research");
    let back: Event = serde_json::from_value(json).unwrap();
    assert_eq!(back, events[2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_input_gives_the_same_events_over_200_runs_with_random_delays() {
    let graph = research(100_000);
    let mut events = graph.subscribe();
    let runs: Vec<_> = (0..200)
        .map(|_| {
            let graph = graph.clone();
            tokio::spawn(async move { graph.invoke(ticket("the same input")).await })
        })
        .collect();
    let mut finals = Vec::new();
    for run in runs {
        finals.push(run.await.unwrap().unwrap());
    }
    let mut by_run: HashMap<RunId, Vec<Event>> = HashMap::new();
    for event in common::drain(&mut events) {
        by_run
            .entry(event.run_id().clone())
            .or_default()
            .push(event);
    }
    assert_eq!(events.missed(), 0);
    assert_eq!(by_run.len(), 200);
    let shapes: Vec<Vec<String>> = by_run.values().map(|e| shape(e)).collect();
    assert!(
        shapes.iter().all(|s| *s == shapes[0]),
        "event sequences differ between runs"
    );
    assert_eq!(shapes[0].len(), 13);
    for outcome in finals {
        assert_eq!(
            outcome.state().log,
            ["plan", "web", "papers", "code", "summary of 4"]
        );
    }
}

#[tokio::test]
async fn a_slow_subscriber_loses_the_oldest_events_and_never_stalls_the_run() {
    let graph = research(4);
    let mut slow = graph.subscribe();
    for i in 0..3 {
        graph.invoke(ticket(&i.to_string())).await.unwrap();
    }
    // Three runs of 13 events each went by; the subscriber kept the newest four.
    let kept = common::drain(&mut slow);
    assert_eq!(
        names(&kept),
        [
            "graph.node.completed",
            "graph.node.entered",
            "graph.node.completed",
            "graph.run.completed"
        ]
    );
    assert_eq!(slow.missed(), 3 * 13 - 4);
}

#[tokio::test]
async fn the_capacity_is_the_number_given_not_a_power_of_two() {
    let graph = research(5);
    let mut slow = graph.subscribe();
    graph.invoke(ticket("one")).await.unwrap();
    // 13 events went by; the subscriber keeps exactly five (the channel buffers eight).
    assert_eq!(common::drain(&mut slow).len(), 5);
    assert_eq!(slow.missed(), 13 - 5);

    // The same when the subscriber waits with `next` while events pile up.
    let mut waiting = graph.subscribe();
    graph.invoke(ticket("two")).await.unwrap();
    let mut kept = Vec::new();
    while let Ok(Some(event)) =
        tokio::time::timeout(std::time::Duration::from_millis(50), waiting.next()).await
    {
        kept.push(event);
    }
    assert_eq!((kept.len(), waiting.missed()), (5, 13 - 5));
}

#[tokio::test]
async fn a_stream_ends_when_the_graph_is_dropped() {
    let graph = research(16);
    let mut stream = graph.subscribe();
    drop(graph);
    assert!(stream.next().await.is_none());
}

/// Records span names and event names, as a `tracing` subscriber would see them.
#[derive(Default, Clone)]
struct Recorder {
    seen: Arc<Mutex<Vec<String>>>,
    next_id: Arc<AtomicU64>,
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(format!("span {}", span.metadata().name()));
        tracing::span::Id::from_u64(self.next_id.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        struct Name(Option<String>);
        impl tracing::field::Visit for Name {
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                if field.name() == "event" {
                    self.0 = Some(value.to_owned());
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut name = Name(None);
        event.record(&mut name);
        if let Some(name) = name.0 {
            self.seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(format!("event {name}"));
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test]
async fn events_also_reach_tracing_with_run_and_node_spans() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    // `tracing` caches each callsite's interest process-wide, computed when a thread first
    // reaches it; with at most one dispatcher registered it asks only that thread's default, so
    // a sibling test's thread (no subscriber) could pin our spans to "never". A second live
    // dispatcher makes every later registration ask all of them (ours among them), and the
    // rebuild repairs callsites a sibling reached before this test began.
    let _second = tracing::Dispatch::new(recorder.clone());
    tracing::callsite::rebuild_interest_cache();
    let graph = research(16);
    graph.invoke(ticket("3")).await.unwrap();
    let seen = recorder.seen.lock().unwrap().clone();
    assert!(seen.contains(&"span graph.run".to_owned()), "{seen:?}");
    assert_eq!(seen.iter().filter(|s| *s == "span graph.node").count(), 5);
    let events: Vec<&str> = seen
        .iter()
        .filter_map(|s| s.strip_prefix("event "))
        .collect();
    assert_eq!(events.first(), Some(&"graph.run.started"));
    assert_eq!(events.last(), Some(&"graph.run.completed"));
    assert_eq!(
        events
            .iter()
            .filter(|e| **e == "graph.node.completed")
            .count(),
        5
    );
}
