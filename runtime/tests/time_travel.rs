//! Time travel and retries on the in-memory store and on SQLite (PostgreSQL runs the same
//! scenarios in `postgres.rs`): history, replay, update_state, retry, and their events.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use common::travel::{self, Ran, triage_graph};
use common::{Answer, Ticket, TicketUpdate, drain, names, ticket};
use trellis::checkpoint::{
    Checkpointer, InMemoryCheckpointer, RunQueue, RunStatus, SqliteCheckpointer,
};
use trellis::event::Event;
use trellis::{END, GraphBuilder, NodeResult, RunError, START, interrupt::InterruptRequest};

fn memory() -> Arc<dyn Checkpointer> {
    Arc::new(InMemoryCheckpointer::new())
}

/// A store on a fresh SQLite file, and the folder that holds it (kept while the store is used).
fn sqlite() -> (tempfile::TempDir, Arc<dyn Checkpointer>) {
    let scratch = common::scratch("travel");
    let store = SqliteCheckpointer::open(scratch.path().join("runs.db")).expect("opens");
    (scratch, Arc::new(store))
}

macro_rules! on_every_store {
    ($($scenario:ident),* $(,)?) => {
        mod in_memory {
            $(#[tokio::test] async fn $scenario() { super::travel::$scenario(super::memory()).await })*
        }
        mod on_sqlite {
            $(#[tokio::test] async fn $scenario() {
                let (_scratch, store) = super::sqlite();
                super::travel::$scenario(store).await
            })*
        }
    };
}

on_every_store!(
    history_is_newest_first_with_typed_states,
    replay_branches_and_leaves_the_original_alone,
    replaying_a_pause_asks_again,
    update_state_forks_with_an_edit,
    retry_goes_on_from_the_last_committed_checkpoint,
    two_retries_one_winner,
    every_way_a_run_goes_on_streams,
);

#[tokio::test]
async fn forks_and_retries_are_announced_as_events() {
    let store = memory();
    let broken = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let graph = triage_graph(Arc::clone(&store), Ran::default(), Arc::clone(&broken));
    let mut events = graph.subscribe();
    let _ = graph.invoke(ticket("t")).await.unwrap_err().error;
    let run_id = store.list_runs(1, 0).await.unwrap()[0].run_id.clone();
    drain(&mut events);

    broken.store(false, Ordering::SeqCst);
    graph.retry(&run_id).await.unwrap();
    let retried = drain(&mut events);
    assert_eq!(
        names(&retried)[..2],
        ["graph.checkpoint.saved", "graph.run.retried"]
    );
    assert!(matches!(
        &retried[1],
        Event::RunRetried { run_id: id, step: 1, checkpoint: 2, .. } if *id == run_id
    ));

    let branch = graph.replay(&run_id, 2).await.unwrap();
    let forked = drain(&mut events);
    match &forked[1] {
        Event::RunForked {
            run_id: id,
            parent,
            step: 1,
            ..
        } => {
            assert_eq!(id, branch.run_id());
            assert_eq!((&parent.run_id, parent.checkpoint), (&run_id, 2));
        }
        other => panic!("expected graph.run.forked, got {other:?}"),
    }
    // Serialized with its name, as every event.
    let json = serde_json::to_value(&forked[1]).unwrap();
    assert_eq!(json["event"], "graph.run.forked");
    assert_eq!(json["parent"]["checkpoint"], 2);
}

/// legal and finance both ask for approval in one step; two rejections both overwrite
/// `approved`, which fails the run while the answers are folded in.
fn two_approvals(store: Arc<dyn Checkpointer>) -> trellis::CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("TwoApprovals");
    for desk in ["legal", "finance"] {
        builder
            .add_node_fn(desk, move |_, _| async move {
                Ok(NodeResult::Interrupt(InterruptRequest::new(
                    "approval",
                    format!("may {desk} sign?"),
                )))
            })
            .add_edge(desk, END);
    }
    builder
        .add_node_fn("intake", |_, _| async {
            Ok(NodeResult::Update(TicketUpdate::default().log("intake")))
        })
        .add_edge(START, "intake")
        .add_fork("intake", ["legal", "finance"])
        .set_checkpointer(store);
    builder.compile().expect("valid graph")
}

#[tokio::test]
async fn a_run_that_failed_folding_answers_in_is_paused_again_by_a_retry() {
    let (_scratch, on_sqlite) = sqlite();
    for store in [memory(), on_sqlite] {
        let graph = two_approvals(Arc::clone(&store));
        let paused = graph.invoke(ticket("contract")).await.unwrap();
        let run_id = paused.run_id().clone();
        let ids: Vec<String> = paused
            .interrupts()
            .iter()
            .map(|i| i.id.to_string())
            .collect();
        assert_eq!(ids, ["legal@2", "finance@2"]);
        let conflict = graph
            .resume(
                &run_id,
                trellis::interrupt::Answers::each(
                    ids.iter()
                        .map(|id| (id.clone(), Answer::Reject(format!("{id} says no")))),
                ),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(conflict, RunError::MergeConflict { .. }),
            "{conflict:?}"
        );
        assert_eq!(
            store.load_run(&run_id).await.unwrap().unwrap().status,
            RunStatus::Failed
        );

        let again = graph.retry(&run_id).await.unwrap();
        assert!(again.is_paused());
        assert_eq!(again.interrupts(), paused.interrupts());
        let record = store.load_run(&run_id).await.unwrap().unwrap();
        assert_eq!(record.status, RunStatus::Paused);
        assert_eq!(record.interrupts, paused.interrupts());
        assert_eq!(record.error, None);
        // The retry checkpoint is a pause too: a branch forked from it asks again.
        let retry = store.latest_checkpoint(&run_id).await.unwrap().unwrap();
        assert_eq!(retry.interrupts, paused.interrupts());
        let branch = graph.replay(&run_id, retry.id).await.unwrap();
        assert_eq!(branch.interrupts(), paused.interrupts());

        let done = graph
            .resume(
                &run_id,
                trellis::interrupt::Answers::each([
                    ("finance@2".to_owned(), Answer::Note("fine".to_owned())),
                    ("legal@2".to_owned(), Answer::Approve),
                ]),
            )
            .await
            .unwrap();
        assert_eq!(
            done.state().log,
            ["intake", "answered legal@2", "answered finance@2", "fine"]
        );
        assert_eq!(
            common::labels(store.as_ref(), &run_id).await,
            [
                "start",
                "step",
                "pause:approval",
                "failed",
                "retry",
                "resume",
                "complete"
            ]
        );
    }
}

#[tokio::test]
async fn retry_and_time_travel_refuse_what_they_cannot_do() {
    let store = memory();
    let graph = triage_graph(Arc::clone(&store), Ran::default(), Arc::default());
    let done = graph.invoke(ticket("t")).await.unwrap();
    let error = graph.retry(done.run_id()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "run {} is completed, not failed; only a failed run can be retried",
            done.run_id()
        )
    );
    let error = graph.replay(done.run_id(), 9).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("run {} has no checkpoint 9", done.run_id())
    );

    // Another graph's run.
    let other = common::approval_graph(Arc::clone(&store));
    let error = other.history(done.run_id()).await.unwrap_err();
    assert!(matches!(error, RunError::WrongGraph { .. }), "{error:?}");

    // No checkpointer: nothing to travel in.
    let mut bare = GraphBuilder::<Ticket>::new("Bare");
    bare.add_node_fn("only", |_, _| async { Ok(NodeResult::None) })
        .add_edge(START, "only")
        .add_edge("only", END);
    let bare = bare.compile().unwrap();
    let error = bare.history(done.run_id()).await.unwrap_err();
    assert!(
        matches!(error, RunError::NoCheckpointer { .. }),
        "{error:?}"
    );

    // A worker picks up a retried run handed to the queue.
    let broken = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let queue: Arc<InMemoryCheckpointer> = Arc::new(InMemoryCheckpointer::new());
    let graph = triage_graph(queue.clone(), Ran::default(), Arc::clone(&broken));
    let _ = graph.invoke(ticket("t")).await.unwrap_err().error;
    let run_id = queue.list_runs(1, 0).await.unwrap()[0].run_id.clone();
    broken.store(false, Ordering::SeqCst);
    graph.retry(&run_id).enqueue().await.unwrap();
    let record = queue.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(
        (record.status, record.owner.as_deref()),
        (RunStatus::Running, None)
    );
    let now = trellis::run::Timestamp::now();
    let claimed = queue
        .claim_next(
            "Triage",
            "worker-1",
            now,
            now.plus(std::time::Duration::from_secs(30)),
        )
        .await
        .unwrap();
    assert_eq!(claimed.map(|r| r.run_id), Some(run_id));
}

/// Records each branch it is told of; refuses them while `refuse` is set.
#[derive(Default)]
struct Branches {
    told: std::sync::Mutex<Vec<(trellis::checkpoint::CheckpointRef, u64, trellis::RunId)>>,
    continued: std::sync::Mutex<Vec<(trellis::checkpoint::CheckpointRef, u64, trellis::RunId)>>,
    refuse: std::sync::atomic::AtomicBool,
}

#[trellis::async_trait]
impl trellis::run::Branching for Branches {
    async fn branch(
        &self,
        from: &trellis::checkpoint::CheckpointRef,
        step: u64,
        to: &trellis::RunId,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        if self.refuse.load(Ordering::SeqCst) {
            return Err("the side store is down".into());
        }
        self.told
            .lock()
            .expect("not poisoned")
            .push((from.clone(), step, to.clone()));
        Ok(())
    }

    async fn continues(
        &self,
        from: &trellis::checkpoint::CheckpointRef,
        step: u64,
        to: &trellis::RunId,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        self.continued
            .lock()
            .expect("not poisoned")
            .push((from.clone(), step, to.clone()));
        Ok(())
    }
}

#[tokio::test]
async fn a_graph_s_branching_hook_is_told_of_each_branch_before_it_runs() {
    let store = memory();
    let branches = Arc::new(Branches::default());
    let graph = triage_graph(Arc::clone(&store), Ran::default(), Arc::default())
        .with_branching(Arc::clone(&branches) as Arc<dyn trellis::run::Branching>);
    let done = graph.invoke(ticket("t")).await.unwrap();
    let original = done.run_id().clone();
    let after_classify = graph.history(&original).await.unwrap()[1].clone();
    assert_eq!(after_classify.step, 1);

    let replayed = graph
        .replay(&original, after_classify.checkpoint)
        .await
        .unwrap();
    let edit = TicketUpdate::default().category(Some("billing".to_owned()));
    let edited = graph
        .update_state(&original, after_classify.checkpoint, edit, "classify")
        .await
        .unwrap();
    let from = trellis::checkpoint::CheckpointRef {
        run_id: original.clone(),
        checkpoint: after_classify.checkpoint,
    };
    assert_eq!(
        *branches.told.lock().unwrap(),
        [
            (from.clone(), 1, replayed.run_id().clone()),
            (from.clone(), 1, edited)
        ]
    );

    // A hook that fails stops the branch: nothing is recorded for it.
    branches.refuse.store(true, Ordering::SeqCst);
    let runs_before = store.list_runs(100, 0).await.unwrap().len();
    let refused = graph
        .replay(&original, after_classify.checkpoint)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, RunError::Branch { from: f, .. } if *f == from),
        "{refused}"
    );
    assert!(refused.to_string().contains("the side store is down"));
    assert_eq!(store.list_runs(100, 0).await.unwrap().len(), runs_before);
    assert!(
        branches.continued.lock().unwrap().is_empty(),
        "no run went on a thread"
    );

    // A new run on a thread is told apart: it continues from where the thread stopped.
    let thread = graph.create_thread(Default::default()).await.unwrap();
    let first = thread
        .invoke(TicketUpdate::default().log("hi"))
        .await
        .unwrap();
    assert!(
        branches.continued.lock().unwrap().is_empty(),
        "a first run has no past"
    );
    let second = thread
        .invoke(TicketUpdate::default().log("again"))
        .await
        .unwrap();
    let last = graph.history(first.run_id()).await.unwrap()[0].clone();
    assert_eq!(
        *branches.continued.lock().unwrap(),
        [(
            trellis::checkpoint::CheckpointRef {
                run_id: first.run_id().clone(),
                checkpoint: last.checkpoint
            },
            last.step,
            second.run_id().clone()
        )]
    );
    assert_eq!(branches.told.lock().unwrap().len(), 2, "and is no branch");
}
