//! Checkpoints and run records as runs write them; the conformance suite on the in-memory
//! backend.

mod common;

use std::sync::Arc;

use common::{Ticket, TicketUpdate, log, ticket};
use trellis::checkpoint::conformance;
use trellis::{
    END, GraphBuilder, NodeResult, START, checkpoint::Checkpoint, checkpoint::CheckpointLabel,
    checkpoint::Checkpointer, checkpoint::InMemoryCheckpointer, checkpoint::RunRecord,
    checkpoint::RunStatus,
};

/// id, step, label, nodes that ran, next frontier.
type Summary = (u64, u64, String, Vec<String>, Vec<String>);

fn three_steps(store: Arc<InMemoryCheckpointer>) -> trellis::CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Three");
    builder
        .add_node_fn("a", |_, _| async { Ok(log("a")) })
        .add_node_fn("b", |_, _| async { Ok(log("b")) })
        .add_node_fn("c", |_, _| async { Ok(log("c")) })
        .add_edge(START, "a")
        .add_fork("a", ["b", "c"])
        .add_edge("b", END)
        .add_edge("c", END)
        .set_checkpointer(store);
    builder.compile().expect("valid graph")
}

#[tokio::test]
async fn in_memory_checkpointer_passes_the_conformance_suite() {
    conformance::run_all(|| async { InMemoryCheckpointer::new() })
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delta_checkpoints_in_memory() {
    let store: Arc<dyn trellis::checkpoint::Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    common::deltas::a_long_run_reads_back_step_by_step(Arc::clone(&store)).await;
    common::deltas::a_run_ended_between_deltas_goes_on(Arc::clone(&store), Arc::clone(&store))
        .await;
    common::deltas::a_thread_s_runs_go_on_from_each_other(store).await;
}

/// A store that announces its writes is the store it wraps, to every caller.
#[tokio::test]
async fn an_announced_store_passes_the_conformance_suite() {
    conformance::run_all(|| async {
        trellis::checkpoint::Announced::new(Arc::new(InMemoryCheckpointer::new()))
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_run_writes_a_labelled_checkpoint_after_every_step() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let outcome = three_steps(Arc::clone(&store))
        .invoke(ticket("t"))
        .await
        .unwrap();
    let checkpoints = store.list_checkpoints(outcome.run_id()).await.unwrap();
    let summary: Vec<Summary> = checkpoints
        .iter()
        .map(|c| {
            (
                c.id,
                c.step,
                c.label.to_string(),
                c.nodes.iter().map(ToString::to_string).collect(),
                c.frontier.iter().map(ToString::to_string).collect(),
            )
        })
        .collect();
    let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        summary,
        [
            (1, 0, "start".to_owned(), s(&[]), s(&["a"])),
            (2, 1, "step".to_owned(), s(&["a"]), s(&["b", "c"])),
            (3, 2, "complete".to_owned(), s(&["b", "c"]), s(&[])),
        ]
    );
    assert_eq!(checkpoints[0].state["text"], "t");
    assert_eq!(
        checkpoints[2].state["log"],
        serde_json::json!(["a", "b", "c"])
    );
    assert_eq!(checkpoints[2].visits.get("b"), Some(&1));
    let latest = store
        .latest_checkpoint(outcome.run_id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest, checkpoints[2]);

    let record = store.load_run(outcome.run_id()).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    assert_eq!((record.steps, record.transitions), (2, 3));
    assert_eq!(record.last_node.as_deref(), Some("c"));
    assert_eq!(record.graph, "Three");
    assert!(record.updated_at >= record.created_at);
}

#[tokio::test]
async fn checkpoints_and_run_records_round_trip_through_serde() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let outcome = three_steps(Arc::clone(&store))
        .invoke(ticket("ü \"quoted\""))
        .await
        .unwrap();
    for checkpoint in store.list_checkpoints(outcome.run_id()).await.unwrap() {
        let json = serde_json::to_string(&checkpoint).unwrap();
        let back: Checkpoint = serde_json::from_str(&json).unwrap();
        assert_eq!(back, checkpoint);
        let state: Ticket = back.state_as().unwrap();
        assert_eq!(state.text, "ü \"quoted\"");
    }
    let record = store.load_run(outcome.run_id()).await.unwrap().unwrap();
    let json = serde_json::to_value(&record).unwrap();
    assert_eq!(json["status"], "completed");
    assert!(json["created_at"].as_str().unwrap().ends_with('Z'));
    let back: RunRecord = serde_json::from_value(json).unwrap();
    assert_eq!(back, record);
    // Labels are plain strings on the wire.
    let label: CheckpointLabel = serde_json::from_str("\"pause:approval\"").unwrap();
    assert_eq!(label, CheckpointLabel::Pause("approval".to_owned()));
    assert!(serde_json::from_str::<CheckpointLabel>("\"paused\"").is_err());
}

#[tokio::test]
async fn runs_upsert_and_list_newest_first_in_pages() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let graph = three_steps(Arc::clone(&store));
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(
            graph
                .invoke(ticket(&i.to_string()))
                .await
                .unwrap()
                .run_id()
                .clone(),
        );
    }
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "run ids sort by creation"
    );
    let page = |offset| {
        let store = Arc::clone(&store);
        async move {
            store
                .list_runs(2, offset)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.run_id)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(page(0).await, [ids[4].clone(), ids[3].clone()]);
    assert_eq!(page(2).await, [ids[2].clone(), ids[1].clone()]);
    assert_eq!(page(4).await, [ids[0].clone()]);
    // Each run was written several times (once per checkpoint) and is listed once.
    assert_eq!(store.list_runs(100, 0).await.unwrap().len(), 5);
}

fn counting<C: Checkpointer + 'static>(store: Arc<C>) -> trellis::CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Counting");
    builder
        .add_node_fn("tick", |s, _| async move {
            Ok(NodeResult::Update(
                TicketUpdate::default()
                    .reviews(1)
                    .log(format!("tick {}", s.reviews + 1)),
            ))
        })
        .add_edge(START, "tick")
        .add_conditional_edges(
            "tick",
            |s: &Ticket| if s.reviews < 5 { "tick" } else { END },
            ["tick", END],
        )
        .set_checkpointer(store);
    builder.compile().expect("valid graph")
}

#[tokio::test]
async fn a_run_whose_owner_is_gone_is_continued_from_its_last_checkpoint() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let graph = counting(Arc::clone(&store));
    let mut run = graph.start(ticket(""));
    run.step().await.unwrap();
    run.step().await.unwrap();
    let run_id = run.run_id().clone();
    drop(run); // The process "dies" after two committed steps.

    let record = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Running);
    assert!(record.owner.is_some() && record.lease_until.is_some());
    // Its owner is this (live) process: not to be taken over.
    let live = graph.continue_run(&run_id).await.unwrap_err();
    assert!(
        matches!(live, trellis::RunError::StillRunning { .. }),
        "{live:?}"
    );

    // Another machine's owner whose lease has not run out: still refused.
    let mut elsewhere = record.clone();
    elsewhere.owner = Some("another-machine:1:1".into());
    elsewhere.lease_until = Some(trellis::run::Timestamp::parse("2999-01-01T00:00:00Z").unwrap());
    assert!(
        store
            .take_over(&elsewhere, record.owner.as_deref())
            .await
            .unwrap()
    );
    assert!(graph.continue_run(&run_id).await.is_err());

    // Its lease ran out: continued, from step 2, to the end.
    elsewhere.lease_until = Some(trellis::run::Timestamp::parse("2000-01-01T00:00:00Z").unwrap());
    assert!(
        store
            .take_over(&elsewhere, Some("another-machine:1:1"))
            .await
            .unwrap()
    );
    let done = counting(Arc::clone(&store))
        .continue_run(&run_id)
        .await
        .unwrap();
    assert_eq!(
        done.state().log,
        ["tick 1", "tick 2", "tick 3", "tick 4", "tick 5"],
        "no step lost, none applied twice"
    );
    let record = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    // The owner is the last writer (this process, which took the run over); no lease once ended.
    assert!(
        record
            .owner
            .is_some_and(|owner| owner != "another-machine:1:1")
    );
    assert_eq!(record.lease_until, None);
    let again = graph.continue_run(&run_id).await.unwrap_err();
    assert!(matches!(again, trellis::RunError::AlreadyCompleted { .. }));
}

/// A store in front of the in-memory one that plays a dead machine's last write: while
/// `foreign`, steps are written as another machine's (lease run out), and the third is held back
/// (sent, not yet committed); it lands just before the next take-over, as a statement sent
/// before a kill still commits on a server.
#[derive(Default)]
struct LateLastWrite {
    inner: InMemoryCheckpointer,
    foreign: std::sync::atomic::AtomicBool,
    held: std::sync::Mutex<Option<(RunRecord, Checkpoint)>>,
    after_take_over: std::sync::Mutex<Vec<RunRecord>>,
    /// A take-over another process sent before it was killed: it lands just before the next
    /// take-over, which then finds another (gone) owner than the one it read.
    late_taker: std::sync::Mutex<Option<String>>,
}

const GONE: &str = "another-machine:1:1";

#[trellis::async_trait]
impl Checkpointer for LateLastWrite {
    async fn save_step(
        &self,
        mut run: RunRecord,
        checkpoint: Checkpoint,
    ) -> Result<(), trellis::checkpoint::CheckpointError> {
        if !self.foreign.load(std::sync::atomic::Ordering::SeqCst) {
            return self.inner.save_step(run, checkpoint).await;
        }
        run.owner = Some(GONE.into());
        run.lease_until =
            Some(trellis::run::Timestamp::parse("2000-01-01T00:00:00Z").expect("a time"));
        if checkpoint.step == 3 {
            *self.held.lock().expect("unpoisoned") = Some((run, checkpoint));
            return Ok(());
        }
        self.inner.save_step(run, checkpoint).await
    }

    async fn claim_run(
        &self,
        run: &RunRecord,
        expected: RunStatus,
    ) -> Result<bool, trellis::checkpoint::CheckpointError> {
        self.inner.claim_run(run, expected).await
    }

    async fn take_over(
        &self,
        run: &RunRecord,
        previous_owner: Option<&str>,
    ) -> Result<bool, trellis::checkpoint::CheckpointError> {
        let late = self.held.lock().expect("unpoisoned").take();
        if let Some((record, checkpoint)) = late {
            self.inner.save_step(record, checkpoint).await?;
        }
        let taker = self.late_taker.lock().expect("unpoisoned").take();
        if let Some(taker) = taker {
            let mut stored = self.inner.load_run(&run.run_id).await?.expect("stored");
            let before = stored.owner.clone();
            stored.owner = Some(taker.into());
            assert!(self.inner.take_over(&stored, before.as_deref()).await?);
        }
        let taken = self.inner.take_over(run, previous_owner).await?;
        let stored = self.inner.load_run(&run.run_id).await?.expect("stored");
        self.after_take_over
            .lock()
            .expect("unpoisoned")
            .push(stored);
        Ok(taken)
    }

    async fn load_run(
        &self,
        run_id: &trellis::RunId,
    ) -> Result<Option<RunRecord>, trellis::checkpoint::CheckpointError> {
        self.inner.load_run(run_id).await
    }

    async fn list_runs(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, trellis::checkpoint::CheckpointError> {
        self.inner.list_runs(limit, offset).await
    }

    async fn list_checkpoints(
        &self,
        run_id: &trellis::RunId,
    ) -> Result<Vec<Checkpoint>, trellis::checkpoint::CheckpointError> {
        self.inner.list_checkpoints(run_id).await
    }

    async fn latest_checkpoint(
        &self,
        run_id: &trellis::RunId,
    ) -> Result<Option<Checkpoint>, trellis::checkpoint::CheckpointError> {
        self.inner.latest_checkpoint(run_id).await
    }
}

#[tokio::test]
async fn a_dead_owners_last_write_landing_late_is_neither_rolled_back_nor_run_twice() {
    let store = Arc::new(LateLastWrite::default());
    let graph = counting(Arc::clone(&store));
    store
        .foreign
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let mut run = graph.start(ticket(""));
    for _ in 0..3 {
        run.step().await.unwrap();
    }
    let run_id = run.run_id().clone();
    drop(run); // The other machine dies with its third step sent, not yet committed.
    store
        .foreign
        .store(false, std::sync::atomic::Ordering::SeqCst);
    let before = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!((before.steps, before.owner.as_deref()), (2, Some(GONE)));

    let done = graph.continue_run(&run_id).await.unwrap();
    let taken = store.after_take_over.lock().unwrap().clone();
    assert_eq!(
        taken.iter().map(|r| r.steps).collect::<Vec<_>>(),
        [3],
        "the take-over kept the step that landed late: {taken:?}"
    );
    assert_eq!(taken[0].state["log"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        done.state().log,
        ["tick 1", "tick 2", "tick 3", "tick 4", "tick 5"],
        "no step lost, none applied twice"
    );
    let steps: Vec<u64> = store
        .list_checkpoints(&run_id)
        .await
        .unwrap()
        .iter()
        .map(|c| c.step)
        .collect();
    assert!(
        steps.windows(2).all(|w| w[0] < w[1]),
        "checkpoints in step order, none rewritten: {steps:?}"
    );
}

#[tokio::test]
async fn a_take_over_lost_to_a_killed_takers_late_claim_is_tried_again() {
    let store = Arc::new(LateLastWrite::default());
    let graph = counting(Arc::clone(&store));
    let mut run = graph.start(ticket(""));
    run.step().await.unwrap();
    let run_id = run.run_id().clone();
    drop(run);
    common::hand_to_a_gone_owner(store.as_ref(), &run_id).await;
    // A second machine's claim, sent before it too was killed, lands first.
    *store.late_taker.lock().unwrap() = Some("third-machine:2:2".to_owned());
    let done = counting(Arc::clone(&store))
        .continue_run(&run_id)
        .await
        .unwrap();
    assert_eq!(
        done.state().reviews,
        5,
        "continued by this process after all"
    );
}
