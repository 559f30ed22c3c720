//! Retention, as scenarios every backend runs: pruning by count per thread and per graph, by
//! age, never a paused run or a thread's state; compacting a thread to its latest state, which
//! then goes on; and the data kept beside the runs forgotten with them.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use trellis::checkpoint::{Checkpointer, RunStatus};
use trellis::retention::{Per, Pruner, Retention, RetentionError, RunData};
use trellis::run::Timestamp;
use trellis::{RunId, ThreadId};

use super::threads::chat_graph;
use super::{Answer, TicketUpdate, approval_graph};

fn say(text: &str) -> TicketUpdate {
    TicketUpdate::default().log(text)
}

/// Remembers what it was told to forget.
#[derive(Default)]
struct Forgotten(Mutex<Vec<RunId>>);

#[async_trait]
impl RunData for Forgotten {
    async fn forget(&self, run_ids: &[RunId]) -> Result<(), RetentionError> {
        self.0.lock().unwrap().extend_from_slice(run_ids);
        Ok(())
    }
}

fn ids(runs: &[trellis::retention::PrunedRun]) -> Vec<RunId> {
    runs.iter().map(|run| run.run_id.clone()).collect()
}

/// `keep_last` per thread drops a thread's older runs, newest first, and leaves its state, a
/// run on no thread and another thread's runs; a dry run deletes nothing; the forgotten data
/// is the deleted runs'.
pub async fn keep_last_per_thread(store: Arc<dyn Checkpointer>) {
    let graph = chat_graph(Arc::clone(&store));
    let long = graph.create_thread(Default::default()).await.unwrap();
    let mut long_runs = Vec::new();
    for text in ["one", "two", "three", "four", "five"] {
        long_runs.push(long.invoke(say(text)).await.unwrap().run_id().clone());
    }
    let short = graph.create_thread(Default::default()).await.unwrap();
    for text in ["a", "b"] {
        short.invoke(say(text)).await.unwrap();
    }
    let alone = graph.invoke(super::ticket("alone")).await.unwrap();
    let before = store.list_runs(100, 0).await.unwrap().len();

    let forgotten = Arc::new(Forgotten::default());
    let pruner = Pruner::new(Arc::clone(&store)).with(forgotten.clone());
    let policy = Retention::keep_last(2).per(Per::Thread);
    let planned = pruner.plan(&policy, Timestamp::now()).await.unwrap();
    let oldest_three: Vec<RunId> = long_runs[..3].iter().rev().cloned().collect();
    assert_eq!(
        ids(&planned),
        oldest_three,
        "the long thread's oldest three"
    );
    assert_eq!(
        store.list_runs(100, 0).await.unwrap().len(),
        before,
        "a plan deletes nothing"
    );

    let gone = pruner.prune(&policy, Timestamp::now()).await.unwrap();
    assert_eq!(ids(&gone), oldest_three);
    assert_eq!(*forgotten.0.lock().unwrap(), oldest_three);
    for run_id in &oldest_three {
        assert!(store.load_run(run_id).await.unwrap().is_none());
        assert!(store.list_checkpoints(run_id).await.unwrap().is_empty());
    }
    assert!(store.load_run(alone.run_id()).await.unwrap().is_some());
    assert_eq!(short.runs(10, 0).await.unwrap().len(), 2);
    assert_eq!(long.runs(10, 0).await.unwrap().len(), 2);
    // The thread's state is its newest run's: all five exchanges, and it goes on.
    let next = long.invoke(say("six")).await.unwrap();
    assert_eq!(next.state().log.len(), 12);
    assert_eq!(next.state().log[0], "one");
    assert!(
        pruner.plan(&policy, Timestamp::now()).await.unwrap().len() == 1,
        "the sixth run pushed one more past the newest two"
    );
}

/// By age and per graph: the ended runs older than the age go unless they are among their
/// graph's newest; a paused run and a thread's newest run never go, however old.
pub async fn by_age_and_per_graph(store: Arc<dyn Checkpointer>) {
    let chat = chat_graph(Arc::clone(&store));
    let approval = approval_graph(Arc::clone(&store));
    let mut chats = Vec::new();
    for text in ["a", "b", "c"] {
        chats.push(
            chat.invoke(super::ticket(text))
                .await
                .unwrap()
                .run_id()
                .clone(),
        );
    }
    let paused = approval.invoke(super::ticket("hold")).await.unwrap();
    assert!(paused.is_paused());
    let answered = approval.invoke(super::ticket("send")).await.unwrap();
    approval
        .resume(answered.run_id(), Answer::Approve)
        .await
        .unwrap();
    let thread = chat.create_thread(Default::default()).await.unwrap();
    let head = thread.invoke(say("kept")).await.unwrap().run_id().clone();

    let pruner = Pruner::new(Arc::clone(&store));
    let hour = Duration::from_secs(3600);
    // Nothing is an hour old yet.
    let now = Timestamp::now();
    assert!(
        pruner
            .plan(&Retention::older_than(hour), now)
            .await
            .unwrap()
            .is_empty()
    );
    // Two hours on: every ended run but the thread's newest.
    let later = now.plus(2 * hour);
    let planned = ids(&pruner
        .plan(&Retention::older_than(hour), later)
        .await
        .unwrap());
    assert!(planned.contains(answered.run_id()) && chats.iter().all(|c| planned.contains(c)));
    assert!(
        !planned.contains(paused.run_id()),
        "a paused run never goes"
    );
    assert!(!planned.contains(&head), "a thread's newest run never goes");
    // With the newest of each graph kept, and only the chat graph looked at.
    let policy = Retention::older_than(hour).and_keep_last(2).graph("Chat");
    let gone = ids(&pruner.prune(&policy, later).await.unwrap());
    // Newest first: the thread's run and `c` are the newest two of `Chat`.
    assert_eq!(gone, [chats[1].clone(), chats[0].clone()]);
    assert!(store.load_run(answered.run_id()).await.unwrap().is_some());
    let left = store.load_run(paused.run_id()).await.unwrap().unwrap();
    assert_eq!(left.status, RunStatus::Paused);
    approval
        .resume(paused.run_id(), Answer::Approve)
        .await
        .unwrap();
}

/// A thread compacted to its latest state: its earlier runs and its newest run's earlier
/// checkpoints go, its paused run is answered after it and completes with the whole state, and
/// the thread goes on.
pub async fn a_compacted_thread_goes_on(store: Arc<dyn Checkpointer>) {
    let graph = approval_graph(Arc::clone(&store));
    let thread = graph.create_thread(Default::default()).await.unwrap();
    let first = thread.invoke(say("one")).await.unwrap();
    graph.resume(first.run_id(), Answer::Approve).await.unwrap();
    let second = thread.invoke(say("two")).await.unwrap();
    graph
        .resume(second.run_id(), Answer::Approve)
        .await
        .unwrap();
    let paused = thread.invoke(say("three")).await.unwrap();
    assert!(paused.is_paused());
    let checkpoints = store.list_checkpoints(paused.run_id()).await.unwrap();
    let latest = checkpoints.last().unwrap().id;
    assert!(checkpoints.len() > 1);

    let forgotten = Arc::new(Forgotten::default());
    let pruner = Pruner::new(Arc::clone(&store)).with(forgotten.clone());
    let plan = pruner.compaction_plan(thread.id()).await.unwrap();
    let earlier = vec![second.run_id().clone(), first.run_id().clone()];
    assert_eq!(ids(&plan.runs), earlier);
    assert_eq!(plan.checkpoints, checkpoints.len() as u64 - 1);
    assert_eq!(
        thread.runs(10, 0).await.unwrap().len(),
        3,
        "a plan deletes nothing"
    );

    let done = pruner.compact_thread(thread.id()).await.unwrap();
    assert_eq!(done, plan);
    assert_eq!(*forgotten.0.lock().unwrap(), earlier);
    let left: Vec<u64> = store
        .list_checkpoints(paused.run_id())
        .await
        .unwrap()
        .iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(left, [latest]);
    assert_eq!(thread.runs(10, 0).await.unwrap().len(), 1);
    let state = thread.state().await.unwrap().unwrap();
    assert_eq!(state.next, ["send"], "the question is still pending");

    let resumed = graph
        .resume(paused.run_id(), Answer::Approve)
        .await
        .unwrap();
    let log = &resumed.state().log;
    assert_eq!(log.first().map(String::as_str), Some("one"));
    assert_eq!(log.last().map(String::as_str), Some("sent"));
    let next = thread.invoke(say("four")).await.unwrap();
    assert!(next.is_paused());
    assert_eq!(next.state().log.len(), log.len() + 2);

    let unknown = ThreadId::new();
    assert!(matches!(
        pruner.compact_thread(&unknown).await,
        Err(RetentionError::NoThread(id)) if id == unknown
    ));
}
