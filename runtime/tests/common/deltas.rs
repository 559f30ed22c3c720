//! Delta checkpoints, as scenarios every backend runs: a long run whose checkpoints are mostly
//! deltas reads back, checkpoint by checkpoint, the states it went through; a branch and an edit
//! made from a delta checkpoint start from its whole state; a run whose process ended between
//! a delta and the next whole checkpoint goes on, in another process, from the right state.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use trellis::checkpoint::Checkpointer;
use trellis::{CompiledGraph, END, GraphBuilder, GraphState, NodeError, NodeResult, START};

/// Every reducer kind, a rename, a `rename_all` and a skipped field: what the changes must name
/// as serde writes the state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, GraphState)]
#[serde(rename_all = "camelCase")]
pub struct Journal {
    #[reducer(append)]
    pub entries: Vec<String>,
    #[reducer(sum)]
    pub total_count: u64,
    pub last_word: String,
    #[reducer(extend)]
    #[serde(rename = "Tags")]
    pub tags: BTreeSet<String>,
    #[serde(skip)]
    pub scratch: u32,
}

/// The state after `k` steps of [`journal_graph`].
pub fn after(k: usize) -> Journal {
    let mut journal = Journal::default();
    for i in 1..=k {
        journal.entries.push(format!("entry {i} «ü»"));
        journal.total_count += 1;
        journal.last_word = format!("word {i}");
        if i.is_multiple_of(5) {
            journal.tags.insert(format!("tag {}", i / 5));
        }
    }
    journal
}

/// Writes one entry a step until there are `steps`, every `every`th checkpoint whole; fails
/// once at step `fail_at` while `fail` holds.
pub fn journal_graph(
    store: Arc<dyn Checkpointer>,
    steps: usize,
    fail_at: usize,
    fail: Arc<AtomicBool>,
) -> CompiledGraph<Journal> {
    let mut builder = GraphBuilder::<Journal>::new("Journal");
    builder
        .add_node_fn("write", move |state: Arc<Journal>, _| {
            let fail = Arc::clone(&fail);
            async move {
                let i = state.entries.len() + 1;
                if i == fail_at && fail.swap(false, Ordering::SeqCst) {
                    return Err(NodeError::msg("the process ended here"));
                }
                let mut update = JournalUpdate::default()
                    .entries(format!("entry {i} «ü»"))
                    .total_count(1)
                    .last_word(format!("word {i}"));
                if i.is_multiple_of(5) {
                    update = update.tags([format!("tag {}", i / 5)]);
                }
                Ok(NodeResult::Update(update))
            }
        })
        .add_edge(START, "write")
        .add_conditional_edges(
            "write",
            move |s: &Journal| {
                if s.entries.len() < steps {
                    "write"
                } else {
                    END
                }
            },
            ["write", END],
        )
        .set_max_steps(10_000);
    builder
        .compile()
        .unwrap()
        .with_checkpointer(store)
        .with_snapshot_every(8)
}

/// A run of 40 steps: every checkpoint reads back the state after its step, through the
/// store and through the graph's history; a branch and an edit from a delta checkpoint start
/// from its state and go on.
pub async fn a_long_run_reads_back_step_by_step(store: Arc<dyn Checkpointer>) {
    let graph = journal_graph(Arc::clone(&store), 40, 0, Arc::default());
    let outcome = graph.invoke(Journal::default()).await.unwrap();
    let run_id = outcome.run_id().clone();
    assert_eq!(*outcome.state(), after(40));
    let checkpoints = each_step_s_state(store.as_ref(), &run_id).await;
    assert_eq!(checkpoints.len(), 41, "a start and one a step");
    for checkpoint in &checkpoints {
        let one = store
            .checkpoint(&run_id, checkpoint.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            one.state, checkpoint.state,
            "checkpoint {} read alone",
            checkpoint.id
        );
        assert!(one.delta.is_none());
    }
    let history = graph.history(&run_id).await.unwrap();
    assert_eq!(history.len(), 41);
    assert!(history.iter().all(|s| s.state == after(s.step as usize)));
    let record = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(record.state_as::<Journal>().unwrap(), after(40));

    // Checkpoint 12 holds step 11, four deltas past the whole checkpoint 9.
    let branch = graph.replay(&run_id, 12).run().await.unwrap();
    assert_eq!(*branch.state(), after(40));
    let branch_history = graph.history(branch.run_id()).await.unwrap();
    assert_eq!(branch_history.last().map(|s| s.step), Some(0));
    assert!(
        branch_history
            .iter()
            .all(|s| s.state == after(s.step as usize))
    );
    let edited = graph
        .update_state(
            &run_id,
            12,
            JournalUpdate::default().last_word("edited"),
            "write",
        )
        .await
        .unwrap();
    let edit = store.latest_checkpoint(&edited).await.unwrap().unwrap();
    let mut expected = after(11);
    expected.last_word = "edited".to_owned();
    assert_eq!(edit.state_as::<Journal>().unwrap(), expected);
    let done = graph.continue_run(&edited).run().await.unwrap();
    assert_eq!(done.state().entries, after(40).entries);
}

/// A run fails at step 13, four deltas past its last whole checkpoint (9), as a process
/// ending there would leave it; another process's graph (`reopened`, on the same storage)
/// retries it from its last delta, and it completes with every step's state read back.
pub async fn a_run_ended_between_deltas_goes_on(
    store: Arc<dyn Checkpointer>,
    reopened: Arc<dyn Checkpointer>,
) {
    let fail = Arc::new(AtomicBool::new(true));
    let graph = journal_graph(Arc::clone(&store), 30, 13, Arc::clone(&fail));
    let failed = graph.invoke(Journal::default()).await.unwrap_err();
    let run_id = failed.run_id;
    let latest = reopened.latest_checkpoint(&run_id).await.unwrap().unwrap();
    assert_eq!(latest.state_as::<Journal>().unwrap(), after(12));
    let other = journal_graph(Arc::clone(&reopened), 30, 13, fail);
    let outcome = other.retry(&run_id).run().await.unwrap();
    assert_eq!(*outcome.state(), after(30));
    each_step_s_state(reopened.as_ref(), &run_id).await;
}

/// The run's checkpoints, each holding the state after its step.
async fn each_step_s_state(
    store: &dyn Checkpointer,
    run_id: &trellis::RunId,
) -> Vec<trellis::checkpoint::Checkpoint> {
    let checkpoints = store.list_checkpoints(run_id).await.unwrap();
    for checkpoint in &checkpoints {
        let state: Journal = checkpoint.state_as().unwrap();
        assert_eq!(
            state,
            after(checkpoint.step as usize),
            "checkpoint {}",
            checkpoint.id
        );
    }
    checkpoints
}

/// A thread of 21 runs, each going on from the one before: every run's checkpoints read back
/// the state after its step, through the store and the thread's history; pruning all but the
/// last three runs leaves theirs readable, and the thread goes on.
pub async fn a_thread_s_runs_go_on_from_each_other(store: Arc<dyn Checkpointer>) {
    use trellis::retention::{Per, Pruner, Retention};
    // Three entries in the first run; then one a run, the router ending each after it.
    let graph = journal_graph(Arc::clone(&store), 3, 0, Arc::default());
    let thread = graph.create_thread(Default::default()).await.unwrap();
    let mut runs = Vec::new();
    for turn in 0..21 {
        let outcome = thread.invoke(JournalUpdate::default()).await.unwrap();
        assert_eq!(*outcome.state(), after(3 + turn), "turn {turn}");
        runs.push(outcome.run_id().clone());
    }
    for run_id in &runs {
        for checkpoint in store.list_checkpoints(run_id).await.unwrap() {
            let state: Journal = checkpoint.state_as().unwrap();
            assert_eq!(state.entries.len(), state.total_count as usize);
            assert_eq!(
                state,
                after(state.entries.len()),
                "{run_id} #{}",
                checkpoint.id
            );
        }
    }
    let pruned = Pruner::new(Arc::clone(&store))
        .prune(
            &Retention::keep_last(3).per(Per::Thread),
            trellis::run::Timestamp::now(),
        )
        .await
        .unwrap();
    assert_eq!(pruned.len(), 18);
    for (turn, run_id) in runs.iter().enumerate().skip(18) {
        let latest = store.latest_checkpoint(run_id).await.unwrap().unwrap();
        assert_eq!(latest.state_as::<Journal>().unwrap(), after(3 + turn));
        let first = store.checkpoint(run_id, 1).await.unwrap().unwrap();
        assert_eq!(first.state_as::<Journal>().unwrap(), after(2 + turn));
    }
    let next = thread.invoke(JournalUpdate::default()).await.unwrap();
    assert_eq!(*next.state(), after(24));
}
