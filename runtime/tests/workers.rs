//! `Worker` on the in-memory store: queued runs, runs answered for a worker, a stopping worker
//! handing its run back, a lease that expires, and what a worker refuses.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use common::{Answer, Ticket, TicketUpdate, approval_graph, ticket};
use trellis::{
    END, GraphBuilder, NodeResult, RunError, START, checkpoint::InMemoryCheckpointer,
    checkpoint::RunQueue, checkpoint::RunStatus, worker::Worker,
};

#[tokio::test]
async fn a_queued_run_pauses_under_a_worker_and_a_persons_answer_queues_it_again() {
    let store: Arc<dyn RunQueue> = Arc::new(InMemoryCheckpointer::new());
    let graph = approval_graph(Arc::clone(&store));
    let run_id = graph.enqueue(ticket("t")).await.unwrap();
    let queued = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(queued.status, RunStatus::Running);
    assert_eq!((queued.owner, queued.lease_until), (None, None), "ready");

    let worker = Worker::new(graph.clone(), Arc::clone(&store));
    let handled = worker.run_once().await.unwrap().expect("the queued run");
    assert!(handled.result.unwrap().is_paused());
    assert!(
        worker.run_once().await.unwrap().is_none(),
        "a paused run is not ready"
    );

    // A person answers; the run goes back to the queue instead of running here.
    graph
        .resume(&run_id, Answer::Approve)
        .enqueue()
        .await
        .unwrap();
    let answered = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(answered.status, RunStatus::Running);
    assert_eq!(answered.owner, None);
    let again = graph
        .resume(&run_id, Answer::Approve)
        .enqueue()
        .await
        .unwrap_err();
    assert!(matches!(again, RunError::StillRunning { .. }), "{again:?}");

    let handled = worker.run_once().await.unwrap().expect("the answered run");
    let done = handled.result.unwrap();
    assert_eq!(done.state().log, ["draft", "answered send@2", "sent"]);
    let record = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    assert_eq!(record.owner.as_deref(), Some(worker.id()));
    assert_eq!(
        common::labels(store.as_ref(), &run_id).await,
        ["start", "pause:before", "resume", "complete"]
    );
}

#[tokio::test]
async fn a_stopped_worker_hands_its_run_back_and_another_finishes_it() {
    let store: Arc<dyn RunQueue> = Arc::new(InMemoryCheckpointer::new());
    let graph = common::counted_graph(50, Default::default(), Duration::from_millis(5))
        .with_checkpointer(Arc::clone(&store));
    let run_id = graph.enqueue(ticket("t")).await.unwrap();

    let first =
        Worker::new(graph.clone(), Arc::clone(&store)).with_poll_interval(Duration::from_millis(5));
    let stop = first.stopper();
    let running = tokio::spawn(first.run());
    while store.load_run(&run_id).await.unwrap().unwrap().steps < 3 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    stop.cancel();
    let report = running.await.unwrap();
    assert_eq!(
        (report.released, report.completed, report.failed),
        (1, 0, 0)
    );
    let handed_back = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(handed_back.status, RunStatus::Running);
    assert_eq!(handed_back.owner, None, "ready for another worker at once");
    assert!(handed_back.steps >= 3 && handed_back.steps < 50);

    let second = Worker::new(graph, Arc::clone(&store));
    let done = second.run_once().await.unwrap().unwrap().result.unwrap();
    let expected: Vec<String> = (1..=50).map(|n| format!("tick {n}")).collect();
    assert_eq!(done.state().log, expected, "no step lost, none twice");
}

#[tokio::test]
async fn a_node_longer_than_the_lease_keeps_it_and_an_abandoned_run_waits_for_it_to_expire() {
    let store: Arc<dyn RunQueue> = Arc::new(InMemoryCheckpointer::new());
    // Each step (1 s) outlasts the lease (400 ms): the heartbeat renews it meanwhile.
    let graph = common::counted_graph(3, Default::default(), Duration::from_millis(1000))
        .with_checkpointer(Arc::clone(&store));
    let run_id = graph.enqueue(ticket("t")).await.unwrap();
    let steady =
        Worker::new(graph.clone(), Arc::clone(&store)).with_lease(Duration::from_millis(400));
    let rival = Worker::new(graph.clone(), Arc::clone(&store));
    let working = tokio::spawn(async move { steady.run_once().await });
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert!(
        rival.run_once().await.unwrap().is_none(),
        "the run's lease is kept alive"
    );
    let handled = working.await.unwrap().unwrap().unwrap();
    assert_eq!(handled.result.unwrap().state().reviews, 3);

    // A worker that vanishes (its task dropped) keeps its claim until the lease runs out.
    let quick = common::counted_graph(3, Default::default(), Duration::from_millis(100))
        .with_checkpointer(Arc::clone(&store));
    let run_id2 = quick.enqueue(ticket("u")).await.unwrap();
    let rival = Worker::new(quick.clone(), Arc::clone(&store));
    let doomed = Worker::new(quick.clone(), Arc::clone(&store)).with_lease(Duration::from_secs(2));
    let vanishing = tokio::spawn(async move { doomed.run_once().await });
    while store.load_run(&run_id2).await.unwrap().unwrap().steps < 1 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    vanishing.abort();
    assert!(
        rival.run_once().await.unwrap().is_none(),
        "lease still held"
    );
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let handled = rival.run_once().await.unwrap().expect("the expired run");
    assert_eq!(handled.run_id, run_id2);
    assert_eq!(
        handled.result.unwrap().state().log,
        ["tick 1", "tick 2", "tick 3"]
    );
    let _ = run_id;
}

#[tokio::test]
async fn a_worker_that_lost_its_run_stops_and_writes_nothing() {
    let store: Arc<dyn RunQueue> = Arc::new(InMemoryCheckpointer::new());
    let ticks = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&ticks);
    let mut builder = GraphBuilder::<Ticket>::new("Slow");
    builder
        .add_node_fn("tick", move |_, _| {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(400)).await;
                Ok(NodeResult::Update(TicketUpdate::default().reviews(1)))
            }
        })
        .add_edge(START, "tick")
        .add_conditional_edges(
            "tick",
            |s: &Ticket| if s.reviews < 100 { "tick" } else { END },
            ["tick", END],
        )
        .set_checkpointer(Arc::clone(&store));
    let graph = builder.compile().unwrap();
    let run_id = graph.enqueue(ticket("t")).await.unwrap();
    let worker = Worker::new(graph, Arc::clone(&store)).with_lease(Duration::from_millis(60));
    let working = tokio::spawn(async move { worker.run_once().await });
    while ticks.load(Ordering::SeqCst) < 2 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // Someone takes the run over behind the worker's back.
    let mut stolen = store.load_run(&run_id).await.unwrap().unwrap();
    let previous = stolen.owner.clone();
    stolen.owner = Some("thief:1:1".into());
    assert!(store.take_over(&stolen, previous.as_deref()).await.unwrap());
    let steps = stolen.steps;

    // Its heartbeat (every 20 ms) finds the lease gone long before the node's 400 ms are up:
    // the run is cancelled there. (A step that reaches the store first is refused as fenced:
    // `runtime/tests/postgres.rs` tests that path.)
    let handled = working.await.unwrap().unwrap().unwrap();
    let error = handled.result.unwrap_err();
    assert!(matches!(error, RunError::LeaseLost { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!("run {run_id} was given up: this worker lost its lease on it")
    );
    let record = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(record.owner.as_deref(), Some("thief:1:1"));
    assert_eq!(record.steps, steps, "nothing written after the take-over");
    assert_eq!(record.status, RunStatus::Running, "not recorded as failed");
}

#[tokio::test]
async fn a_run_the_workers_graph_cannot_continue_is_failed_once_not_claimed_forever() {
    let store: Arc<dyn RunQueue> = Arc::new(InMemoryCheckpointer::new());
    let run_id = common::counted_graph(3, Default::default(), Duration::ZERO)
        .with_checkpointer(Arc::clone(&store))
        .enqueue(ticket("t"))
        .await
        .unwrap();
    // A later version of the graph renamed `tick`, which the queued run is about to run.
    let mut renamed = GraphBuilder::<Ticket>::new("Counted");
    renamed
        .add_node_fn("tock", |_, _| async { Ok(NodeResult::None) })
        .add_edge(START, "tock")
        .add_edge("tock", END);
    let worker = Worker::new(renamed.compile().unwrap(), Arc::clone(&store));
    let handled = worker.run_once().await.unwrap().expect("claimed");
    let error = handled.result.unwrap_err();
    assert!(matches!(error, RunError::Unresumable { .. }), "{error:?}");
    let record = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Failed);
    assert!(
        record
            .error
            .as_deref()
            .is_some_and(|e| e.contains("node `tick`")),
        "{:?}",
        record.error
    );
    assert!(
        worker.run_once().await.unwrap().is_none(),
        "not claimed again"
    );
}

#[tokio::test]
async fn enqueueing_needs_a_checkpointer() {
    let mut builder = GraphBuilder::<Ticket>::new("Bare");
    builder
        .add_node_fn("only", |_, _| async { Ok(NodeResult::None) })
        .add_edge(START, "only")
        .add_edge("only", END);
    let error = builder
        .compile()
        .unwrap()
        .enqueue(ticket("t"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, RunError::NoCheckpointer { .. }),
        "{error:?}"
    );
}

/// On a store that announces its writes, an idle worker starts a queued or answered run when it
/// is queued, not at its next poll: here it would poll once an hour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_worker_is_woken_by_a_run_queued_on_an_announcing_store() {
    let store = trellis::checkpoint::Announced::wrap(Arc::new(InMemoryCheckpointer::new()));
    let graph = approval_graph(Arc::clone(&store));
    let worker = Worker::new(graph.clone(), Arc::clone(&store))
        .with_poll_interval(Duration::from_secs(3600));
    let stopper = worker.stopper();
    let working = tokio::spawn(worker.run());
    // Let it look once, find nothing, and wait.
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_millis(20)).await;

    let changes = store.changes().expect("announces");
    let run_id = graph.enqueue(ticket("t")).await.unwrap();
    let status = |store: Arc<dyn RunQueue>, run_id: trellis::RunId| async move {
        store.load_run(&run_id).await.unwrap().unwrap().status
    };
    let settled = tokio::time::timeout(Duration::from_secs(30), async {
        // Watched before each read, so no write is missed between them.
        let mut watch = changes.watch_run(&run_id);
        while status(Arc::clone(&store), run_id.clone()).await != RunStatus::Paused {
            watch.changed().await;
        }
    })
    .await;
    assert!(settled.is_ok(), "the queued run was started without a poll");

    graph
        .resume(&run_id, Answer::Approve)
        .enqueue()
        .await
        .unwrap();
    let settled = tokio::time::timeout(Duration::from_secs(30), async {
        let mut watch = changes.watch_run(&run_id);
        while status(Arc::clone(&store), run_id.clone()).await != RunStatus::Completed {
            watch.changed().await;
        }
    })
    .await;
    assert!(
        settled.is_ok(),
        "the answered run was continued without a poll"
    );
    stopper.cancel();
    let report = working.await.unwrap();
    assert_eq!((report.paused, report.completed), (1, 1));
}
