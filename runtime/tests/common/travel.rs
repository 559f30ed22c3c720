//! Time travel and retries, as scenarios every backend runs: history, replay, update_state and
//! retry, each checking states, what ran, the labels written and that the original is intact.
// Scenarios are test bodies shared by several test files: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use trellis::checkpoint::{CheckpointRef, Checkpointer, RunStatus};
use trellis::{
    CompiledGraph, END, GraphBuilder, NodeError, NodeResult, Outcome, RunError, RunId, START,
};

use super::{Answer, Ticket, TicketUpdate, approval_graph, labels, ticket};

/// Every activation, per node name, across runs.
pub type Ran = Arc<Mutex<HashMap<String, u32>>>;

fn count(ran: &Ran, node: &str) {
    *ran.lock()
        .expect("not poisoned")
        .entry(node.to_owned())
        .or_default() += 1;
}

pub fn ran_of(ran: &Ran, node: &str) -> u32 {
    ran.lock()
        .expect("not poisoned")
        .get(node)
        .copied()
        .unwrap_or(0)
}

/// classify → (billing: refund | otherwise: answer) → END. `classify` files every ticket under
/// `tech`; `answer` and `refund` log themselves. `broken` makes `answer` fail.
pub fn triage_graph(
    store: Arc<dyn Checkpointer>,
    ran: Ran,
    broken: Arc<AtomicBool>,
) -> CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Triage");
    let on_classify = ran.clone();
    let on_answer = ran.clone();
    let on_refund = ran;
    builder
        .add_node_fn("classify", move |_, _| {
            count(&on_classify, "classify");
            async {
                Ok(NodeResult::Update(
                    TicketUpdate::default()
                        .category(Some("tech".to_owned()))
                        .log("classified"),
                ))
            }
        })
        .add_node_fn("answer", move |_, _| {
            count(&on_answer, "answer");
            let broken = broken.load(Ordering::SeqCst);
            async move {
                if broken {
                    return Err(NodeError::msg("the answer service said 503"));
                }
                Ok(NodeResult::Update(TicketUpdate::default().log("answered")))
            }
        })
        .add_node_fn("refund", move |_, _| {
            count(&on_refund, "refund");
            async { Ok(NodeResult::Update(TicketUpdate::default().log("refunded"))) }
        })
        .add_edge(START, "classify")
        .add_conditional_edges(
            "classify",
            |t: &Ticket| match t.category.as_deref() {
                Some("billing") => "refund",
                _ => "answer",
            },
            ["refund", "answer"],
        )
        .add_edge("answer", END)
        .add_edge("refund", END)
        .set_checkpointer(store);
    builder.compile().expect("valid graph")
}

fn completed(outcome: &Outcome<Ticket>) -> &Ticket {
    assert!(!outcome.is_paused(), "expected a completed run");
    outcome.state()
}

/// `history` lists a run's checkpoints newest first, with typed states and next nodes.
pub async fn history_is_newest_first_with_typed_states(store: Arc<dyn Checkpointer>) {
    let ran = Ran::default();
    let graph = triage_graph(store, ran, Arc::default());
    let done = graph.invoke(ticket("printer on fire")).await.unwrap();
    let history = graph.history(done.run_id()).await.unwrap();
    // (checkpoint, step, label, ran, next, log)
    type Row = (u64, u64, String, Vec<String>, Vec<String>, Vec<String>);
    let rows: Vec<Row> = history
        .iter()
        .map(|s| {
            (
                s.checkpoint,
                s.step,
                s.label.to_string(),
                s.ran.iter().map(ToString::to_string).collect(),
                s.next.iter().map(ToString::to_string).collect(),
                s.state.log.clone(),
            )
        })
        .collect();
    let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        rows,
        [
            (
                3,
                2,
                "complete".to_owned(),
                strings(&["answer"]),
                strings(&[]),
                strings(&["classified", "answered"])
            ),
            (
                2,
                1,
                "step".to_owned(),
                strings(&["classify"]),
                strings(&["answer"]),
                strings(&["classified"])
            ),
            (
                1,
                0,
                "start".to_owned(),
                strings(&[]),
                strings(&["classify"]),
                strings(&[])
            ),
        ]
    );
    assert!(history.iter().all(|s| s.run_id == *done.run_id()));
    assert_eq!(history[1].state.category.as_deref(), Some("tech"));
    assert_eq!(history[2].state.category, None);
}

/// `replay` runs a branch from a checkpoint; the original run and its history stay as they
/// were, and only the steps after the checkpoint run again.
pub async fn replay_branches_and_leaves_the_original_alone(store: Arc<dyn Checkpointer>) {
    let ran = Ran::default();
    let graph = triage_graph(Arc::clone(&store), ran.clone(), Arc::default());
    let done = graph.invoke(ticket("printer on fire")).await.unwrap();
    let original = done.run_id().clone();
    let record_before = store.load_run(&original).await.unwrap().unwrap();
    let checkpoints_before = store.list_checkpoints(&original).await.unwrap();

    let branch = graph.replay(&original, 2).await.unwrap();
    assert_eq!(completed(&branch).log, ["classified", "answered"]);
    assert_ne!(branch.run_id(), &original);
    // Only `answer` ran again: `classify` was committed in the checkpoint replayed from.
    assert_eq!((ran_of(&ran, "classify"), ran_of(&ran, "answer")), (1, 2));

    let record = store.load_run(branch.run_id()).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    assert_eq!(
        record.parent,
        Some(CheckpointRef {
            run_id: original.clone(),
            checkpoint: 2
        })
    );
    assert_eq!((record.steps, record.transitions), (2, 2));
    assert_eq!(
        labels(store.as_ref(), branch.run_id()).await,
        ["fork", "complete"]
    );
    assert_eq!(
        store.load_run(&original).await.unwrap().unwrap(),
        record_before
    );
    assert_eq!(
        store.list_checkpoints(&original).await.unwrap(),
        checkpoints_before
    );

    // The branch's history goes on into its parent's, from the checkpoint it was forked at.
    let history = graph.history(branch.run_id()).await.unwrap();
    let trail: Vec<(bool, u64, String)> = history
        .iter()
        .map(|s| (s.run_id == original, s.checkpoint, s.label.to_string()))
        .collect();
    assert_eq!(
        trail,
        [
            (false, 2, "complete".to_owned()),
            (false, 1, "fork".to_owned()),
            (true, 2, "step".to_owned()),
            (true, 1, "start".to_owned()),
        ]
    );

    // A replay of a branch is a branch of the branch.
    let again = graph.replay(branch.run_id(), 1).await.unwrap();
    let record = store.load_run(again.run_id()).await.unwrap().unwrap();
    assert_eq!(
        record.parent.map(|p| p.run_id),
        Some(branch.run_id().clone())
    );

    let missing = graph.replay(&original, 99).await.unwrap_err();
    assert!(
        matches!(missing, RunError::CheckpointNotFound { checkpoint: 99, .. }),
        "{missing:?}"
    );
    let nobody = graph.replay(&RunId::new(), 1).await.unwrap_err();
    assert!(matches!(nobody, RunError::RunNotFound { .. }), "{nobody:?}");
}

/// Replaying a pause gives a paused branch asking the same questions, to answer differently.
pub async fn replaying_a_pause_asks_again(store: Arc<dyn Checkpointer>) {
    let graph = approval_graph(Arc::clone(&store));
    let paused = graph.invoke(ticket("refund")).await.unwrap();
    let original = paused.run_id().clone();
    let held = graph
        .resume(&original, Answer::Reject("no".to_owned()))
        .await
        .unwrap();
    assert_eq!(completed(&held).log, ["draft", "answered send@2", "held"]);

    let pause = graph
        .history(&original)
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.label.to_string() == "pause:before")
        .expect("a pause checkpoint");
    assert_eq!(pause.interrupts[0].id, "send@2");
    let branch = graph.replay(&original, pause.checkpoint).await.unwrap();
    assert!(branch.is_paused());
    assert_eq!(branch.interrupts()[0].id, "send@2");
    let record = store.load_run(branch.run_id()).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Paused);
    assert_eq!(record.interrupts, pause.interrupts);

    let sent = graph
        .resume(branch.run_id(), Answer::Approve)
        .await
        .unwrap();
    assert_eq!(completed(&sent).log, ["draft", "answered send@2", "sent"]);
    let original_state = store.load_run(&original).await.unwrap().unwrap().state;
    assert_eq!(
        original_state["log"],
        serde_json::json!(["draft", "answered send@2", "held"])
    );
}

/// `update_state` forks with an edit written as a node, routed from that node, ready to run.
pub async fn update_state_forks_with_an_edit(store: Arc<dyn Checkpointer>) {
    let ran = Ran::default();
    let graph = triage_graph(Arc::clone(&store), ran.clone(), Arc::default());
    let done = graph.invoke(ticket("charged twice")).await.unwrap();
    let original = done.run_id().clone();
    let checkpoints_before = store.list_checkpoints(&original).await.unwrap();

    // At checkpoint 2 classify had filed it under `tech`: file it under `billing` instead.
    let edit = TicketUpdate::default()
        .category(Some("billing".to_owned()))
        .log("refiled");
    let branch = graph
        .update_state(&original, 2, edit, "classify")
        .await
        .unwrap();
    let record = store.load_run(&branch).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Running);
    assert_eq!(record.owner, None, "ready for whoever continues it");
    assert_eq!(record.last_node.as_deref(), Some("classify"));
    assert_eq!(
        record.parent,
        Some(CheckpointRef {
            run_id: original.clone(),
            checkpoint: 2
        })
    );
    let first = store.latest_checkpoint(&branch).await.unwrap().unwrap();
    assert_eq!(first.label.to_string(), "update");
    assert_eq!(first.frontier, ["refund"]);
    assert_eq!(first.nodes, ["classify"]);

    let refunded = graph.continue_run(&branch).await.unwrap();
    assert_eq!(
        completed(&refunded).log,
        ["classified", "refiled", "refunded"]
    );
    assert_eq!(
        (
            ran_of(&ran, "classify"),
            ran_of(&ran, "answer"),
            ran_of(&ran, "refund")
        ),
        (1, 1, 1)
    );
    assert_eq!(
        store.list_checkpoints(&original).await.unwrap(),
        checkpoints_before
    );

    let unknown = graph
        .update_state(&original, 2, TicketUpdate::default(), "clasify")
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, RunError::UnknownNode { .. }),
        "{unknown:?}"
    );
    let missing = graph
        .update_state(&original, 42, TicketUpdate::default(), "classify")
        .await
        .unwrap_err();
    assert!(
        matches!(missing, RunError::CheckpointNotFound { .. }),
        "{missing:?}"
    );
}

/// A failed run, once its cause is fixed, goes on from its last committed checkpoint: the
/// failed node runs again, committed steps do not.
pub async fn retry_goes_on_from_the_last_committed_checkpoint(store: Arc<dyn Checkpointer>) {
    let ran = Ran::default();
    let broken = Arc::new(AtomicBool::new(true));
    let graph = triage_graph(Arc::clone(&store), ran.clone(), Arc::clone(&broken));
    let failure = graph.invoke(ticket("printer on fire")).await.unwrap_err();
    let error = &failure.error;
    assert!(error.to_string().contains("503"), "{error}");
    // The failure names its run: what a retry takes.
    let runs = store.list_runs(1, 0).await.unwrap();
    let run_id = failure.run_id.clone();
    assert_eq!(run_id, runs[0].run_id);
    assert!(
        failure.to_string().starts_with(&format!("run {run_id}: ")),
        "{failure}"
    );
    assert_eq!(runs[0].status, RunStatus::Failed);
    assert_eq!(
        labels(store.as_ref(), &run_id).await,
        ["start", "step", "failed"]
    );

    // Still broken: the retry fails again, and is recorded as failed again.
    let again = graph.retry(&run_id).await.unwrap_err();
    assert!(again.to_string().contains("503"), "{again}");
    assert_eq!(
        labels(store.as_ref(), &run_id).await,
        ["start", "step", "failed", "retry", "failed"]
    );

    broken.store(false, Ordering::SeqCst);
    let done = graph.retry(&run_id).await.unwrap();
    assert_eq!(done.run_id(), &run_id, "a retry keeps the run's id");
    assert_eq!(completed(&done).log, ["classified", "answered"]);
    assert_eq!(
        (ran_of(&ran, "classify"), ran_of(&ran, "answer")),
        (1, 3),
        "classify was committed and never ran again; answer ran once per attempt"
    );
    assert_eq!(
        labels(store.as_ref(), &run_id).await,
        [
            "start", "step", "failed", "retry", "failed", "retry", "complete"
        ]
    );
    let record = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    assert_eq!(record.error, None);
    assert_eq!((record.steps, record.transitions), (2, 2));

    let not_failed = graph.retry(&run_id).await.unwrap_err();
    assert!(
        matches!(
            not_failed,
            RunError::NotFailed {
                status: RunStatus::Completed,
                ..
            }
        ),
        "{not_failed:?}"
    );
}

/// Of two retries of one failed run at once, one runs it; the other is told it is not failed.
pub async fn two_retries_one_winner(store: Arc<dyn Checkpointer>) {
    let ran = Ran::default();
    let broken = Arc::new(AtomicBool::new(true));
    let graph = triage_graph(Arc::clone(&store), ran.clone(), Arc::clone(&broken));
    let _ = graph.invoke(ticket("t")).await.unwrap_err().error;
    let run_id = store.list_runs(1, 0).await.unwrap()[0].run_id.clone();
    broken.store(false, Ordering::SeqCst);
    let (first, second) = tokio::join!(graph.retry(&run_id), graph.retry(&run_id));
    let (won, lost) = match (first, second) {
        (Ok(won), Err(lost)) | (Err(lost), Ok(won)) => (won, lost),
        other => panic!("expected one winner, got {other:?}"),
    };
    assert_eq!(completed(&won).log, ["classified", "answered"]);
    assert!(matches!(lost, RunError::NotFailed { .. }), "{lost:?}");
    assert_eq!(
        ran_of(&ran, "answer"),
        2,
        "the failed attempt and one retry"
    );
}

/// Every way a run goes on streams as a new run does: a retry, a replay, a branch
/// `update_state` recorded (continued), and a replay of a pause, which ends paused.
pub async fn every_way_a_run_goes_on_streams(store: Arc<dyn Checkpointer>) {
    use trellis::stream::{RunStream, StreamItem, StreamMode};

    /// The nodes whose updates the stream gave, and how the run ended.
    async fn updates(mut stream: RunStream<Ticket>) -> (Vec<String>, Outcome<Ticket>) {
        let mut nodes = Vec::new();
        while let Some(item) = stream.next().await {
            if let StreamItem::Updates { node, .. } = item {
                nodes.push(node.to_string());
            }
        }
        (nodes, stream.finish().await.unwrap())
    }

    let broken = Arc::new(AtomicBool::new(true));
    let graph = triage_graph(Arc::clone(&store), Ran::default(), Arc::clone(&broken));
    let failed = graph.invoke(ticket("t")).await.unwrap_err();
    let run_id = failed.run_id.clone();
    broken.store(false, Ordering::SeqCst);
    let retried = graph
        .retry(&run_id)
        .stream(StreamMode::Updates)
        .await
        .unwrap();
    let (nodes, done) = updates(retried).await;
    assert_eq!(nodes, ["answer"]);
    assert_eq!(completed(&done).log, ["classified", "answered"]);

    let replayed = graph
        .replay(&run_id, 2)
        .stream(StreamMode::Updates)
        .await
        .unwrap();
    let (nodes, again) = updates(replayed).await;
    assert_eq!(nodes, ["answer"]);
    assert_ne!(again.run_id(), &run_id, "a branch of its own");

    let edit = TicketUpdate::default().category(Some("billing".to_owned()));
    let branch = graph
        .update_state(&run_id, 2, edit, "classify")
        .await
        .unwrap();
    let continued = graph
        .continue_run(&branch)
        .stream(StreamMode::Updates)
        .await
        .unwrap();
    let (nodes, refunded) = updates(continued).await;
    assert_eq!(nodes, ["refund"]);
    assert_eq!(completed(&refunded).log, ["classified", "refunded"]);

    // A replay of a question streams its state and ends paused, asking again.
    let approvals = approval_graph(Arc::clone(&store));
    let paused = approvals.invoke(ticket("refund")).await.unwrap();
    let pause = approvals.history(paused.run_id()).await.unwrap()[0].checkpoint;
    let mut stream = approvals
        .replay(paused.run_id(), pause)
        .stream(StreamMode::Values)
        .await
        .unwrap();
    let mut values = 0;
    while let Some(item) = stream.next().await {
        values += usize::from(matches!(item, StreamItem::Values { .. }));
    }
    assert_eq!(values, 1, "the state it stands at");
    let asked = stream.finish().await.unwrap();
    assert!(asked.is_paused());
    assert_eq!(asked.interrupts()[0].id, "send@2");
}
