//! A store that tells waiters in this process of its writes: a worker hears that a run of its
//! graph became ready, a client waiting on a run hears of its next write — instead of asking
//! the store again and again.
//!
//! [`Announced`] wraps any [`RunQueue`] and, after each write that succeeds, wakes whoever
//! watches the run (and, when the run is left ready — `running` with nobody holding it — the
//! workers of its graph). Writes made by other processes are heard where the store can tell
//! of them ([`Checkpointer::hear_others`]: PostgreSQL's `LISTEN`/`NOTIFY`); waiters still look
//! again now and then (their poll interval), which also catches a lease that ran out.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use rustc_hash::FxHashMap;
use tokio::sync::watch;

use super::{
    Checkpoint, CheckpointError, Checkpointer, RunQueue, RunRecord, RunStatus, ThreadRecord,
};
use crate::id::{RunId, ThreadId, Timestamp};

/// Who to wake on a store's writes: the watchers of each run, the workers of each graph, and
/// whoever watches every run (a list on screen).
///
/// A watcher subscribes *before* it reads what it waits on, so that a write landing between its
/// read and its wait still wakes it ([`tokio::sync::watch`] remembers what was seen).
#[derive(Debug, Default)]
pub struct Changes {
    runs: Mutex<FxHashMap<RunId, watch::Sender<u64>>>,
    ready: Mutex<FxHashMap<String, watch::Sender<u64>>>,
    any: watch::Sender<u64>,
}

/// Wakes on each write to one run ([`Changes::watch_run`]).
#[derive(Debug)]
pub struct RunWatch {
    changes: Arc<Changes>,
    run_id: RunId,
    receiver: watch::Receiver<u64>,
}

/// Wakes when a run of one graph is left ready ([`Changes::watch_ready`]).
#[derive(Debug)]
pub struct ReadyWatch {
    receiver: watch::Receiver<u64>,
}

/// Wakes on each write to any run ([`Changes::watch_all`]).
#[derive(Debug)]
pub struct AnyWatch {
    receiver: watch::Receiver<u64>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The maps hold only channels: a panic elsewhere leaves them whole.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Changes {
    /// Watches writes to `run_id` from now on.
    pub fn watch_run(self: &Arc<Self>, run_id: &RunId) -> RunWatch {
        let receiver = lock(&self.runs)
            .entry(run_id.clone())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe();
        RunWatch {
            changes: Arc::clone(self),
            run_id: run_id.clone(),
            receiver,
        }
    }

    /// Watches for runs of `graph` left ready from now on.
    pub fn watch_ready(&self, graph: &str) -> ReadyWatch {
        let receiver = lock(&self.ready)
            .entry(graph.to_owned())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe();
        ReadyWatch { receiver }
    }

    /// Watches writes to every run from now on: many writes before the watcher looks wake it
    /// once.
    pub fn watch_all(&self) -> AnyWatch {
        AnyWatch {
            receiver: self.any.subscribe(),
        }
    }

    /// Wakes the watchers of `run`, and the workers of its graph when it is left ready.
    pub fn announce(&self, run: &RunRecord) {
        self.wrote(&run.run_id, &run.graph, is_ready(run));
    }

    pub(crate) fn wrote(&self, run_id: &RunId, graph: &str, ready: bool) {
        if let Some(sender) = lock(&self.runs).get(run_id) {
            sender.send_modify(|writes| *writes = writes.wrapping_add(1));
        }
        if ready && let Some(sender) = lock(&self.ready).get(graph) {
            sender.send_modify(|writes| *writes = writes.wrapping_add(1));
        }
        if self.any.receiver_count() > 0 {
            self.any
                .send_modify(|writes| *writes = writes.wrapping_add(1));
        }
    }
}

/// A run a worker may claim: running, and nobody holds it.
fn is_ready(run: &RunRecord) -> bool {
    run.status == RunStatus::Running && run.owner.is_none()
}

impl RunWatch {
    /// Waits for the run's next write since this watch last woke (at once if one came
    /// meanwhile).
    pub async fn changed(&mut self) {
        // The sender lives as long as a watch does: it cannot be closed under us.
        let _ = self.receiver.changed().await;
    }
}

impl Drop for RunWatch {
    fn drop(&mut self) {
        // The last watch of a run takes its channel with it: the map holds watched runs only.
        let mut runs = lock(&self.changes.runs);
        if runs
            .get(&self.run_id)
            .is_some_and(|sender| sender.receiver_count() <= 1)
        {
            runs.remove(&self.run_id);
        }
    }
}

impl AnyWatch {
    /// Waits for a write to any run since this watch last woke (at once if one came
    /// meanwhile).
    pub async fn changed(&mut self) {
        if self.receiver.changed().await.is_err() {
            // The store is gone: it writes no more.
            std::future::pending::<()>().await;
        }
    }
}

impl ReadyWatch {
    /// Waits until a run of the graph is left ready since this watch last woke (at once if
    /// one was meanwhile).
    pub async fn changed(&mut self) {
        let _ = self.receiver.changed().await;
    }
}

/// A store whose writes wake the waiters of this process ([`Changes`]): what a server puts in
/// front of its store, so that its workers start a run as soon as it is queued and a client
/// waiting on a run hears of each step as it is saved.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use trellis::checkpoint::{Announced, Checkpointer, InMemoryCheckpointer, RunQueue};
///
/// let store: Arc<dyn RunQueue> = Announced::wrap(Arc::new(InMemoryCheckpointer::new()));
/// let changes = store.changes().expect("an announcing store");
/// let mut ready = changes.watch_ready("Double");
/// // … a run of `Double` enqueued on `store` wakes `ready.changed().await`.
/// # drop(ready);
/// # });
/// ```
pub struct Announced {
    inner: Arc<dyn RunQueue>,
    changes: Arc<Changes>,
}

impl Announced {
    /// `store`, announcing its writes.
    pub fn new(store: Arc<dyn RunQueue>) -> Self {
        let changes = Arc::new(Changes::default());
        store.hear_others(&changes);
        Announced {
            inner: store,
            changes,
        }
    }

    /// `store`, announcing its writes; a store that announces already is returned as it is
    /// (one set of waiters per store).
    pub fn wrap(store: Arc<dyn RunQueue>) -> Arc<dyn RunQueue> {
        if store.changes().is_some() {
            return store;
        }
        Arc::new(Announced::new(store))
    }
}

#[async_trait]
impl Checkpointer for Announced {
    async fn save_step(
        &self,
        run: RunRecord,
        checkpoint: Checkpoint,
    ) -> Result<(), CheckpointError> {
        // The record moves into the store: what the announcement needs is kept first.
        let (run_id, graph, ready) = (run.run_id.clone(), run.graph.clone(), is_ready(&run));
        self.inner.save_step(run, checkpoint).await?;
        self.changes.wrote(&run_id, &graph, ready);
        Ok(())
    }

    fn writes_deltas(&self) -> bool {
        self.inner.writes_deltas()
    }

    async fn claim_run(
        &self,
        run: &RunRecord,
        expected: RunStatus,
    ) -> Result<bool, CheckpointError> {
        let claimed = self.inner.claim_run(run, expected).await?;
        if claimed {
            self.changes.announce(run);
        }
        Ok(claimed)
    }

    async fn take_over(
        &self,
        run: &RunRecord,
        previous_owner: Option<&str>,
    ) -> Result<bool, CheckpointError> {
        let taken = self.inner.take_over(run, previous_owner).await?;
        if taken {
            self.changes.announce(run);
        }
        Ok(taken)
    }

    async fn load_run(&self, run_id: &RunId) -> Result<Option<RunRecord>, CheckpointError> {
        self.inner.load_run(run_id).await
    }

    async fn list_runs(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError> {
        self.inner.list_runs(limit, offset).await
    }

    async fn list_checkpoints(&self, run_id: &RunId) -> Result<Vec<Checkpoint>, CheckpointError> {
        self.inner.list_checkpoints(run_id).await
    }

    async fn latest_checkpoint(
        &self,
        run_id: &RunId,
    ) -> Result<Option<Checkpoint>, CheckpointError> {
        self.inner.latest_checkpoint(run_id).await
    }

    async fn checkpoint(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<Option<Checkpoint>, CheckpointError> {
        self.inner.checkpoint(run_id, id).await
    }

    // Threads: forwarded as they are (a run's writes, which announce, carry its thread).
    async fn create_thread(&self, thread: &ThreadRecord) -> Result<bool, CheckpointError> {
        self.inner.create_thread(thread).await
    }

    async fn load_thread(
        &self,
        thread_id: &ThreadId,
    ) -> Result<Option<ThreadRecord>, CheckpointError> {
        self.inner.load_thread(thread_id).await
    }

    async fn list_threads(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ThreadRecord>, CheckpointError> {
        self.inner.list_threads(limit, offset).await
    }

    async fn set_thread_metadata(
        &self,
        thread_id: &ThreadId,
        metadata: &serde_json::Map<String, serde_json::Value>,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        self.inner
            .set_thread_metadata(thread_id, metadata, now)
            .await
    }

    async fn move_thread_head(
        &self,
        thread_id: &ThreadId,
        expected: Option<&RunId>,
        head: &RunId,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        self.inner
            .move_thread_head(thread_id, expected, head, now)
            .await
    }

    async fn thread_runs(
        &self,
        thread_id: &ThreadId,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError> {
        self.inner.thread_runs(thread_id, limit, offset).await
    }

    async fn delete_thread(&self, thread_id: &ThreadId) -> Result<bool, CheckpointError> {
        self.inner.delete_thread(thread_id).await
    }

    async fn delete_runs(&self, run_ids: &[RunId]) -> Result<Vec<RunId>, CheckpointError> {
        self.inner.delete_runs(run_ids).await
    }

    async fn delete_checkpoints_before(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<u64, CheckpointError> {
        self.inner.delete_checkpoints_before(run_id, id).await
    }

    fn changes(&self) -> Option<Arc<Changes>> {
        Some(Arc::clone(&self.changes))
    }
}

#[async_trait]
impl RunQueue for Announced {
    async fn claim_next(
        &self,
        graph: &str,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> Result<Option<RunRecord>, CheckpointError> {
        self.inner.claim_next(graph, owner, now, lease_until).await
    }

    async fn held_runs(&self, graph: &str) -> Result<Vec<(RunId, String)>, CheckpointError> {
        self.inner.held_runs(graph).await
    }

    async fn renew_lease(
        &self,
        run_id: &RunId,
        owner: &str,
        lease_until: Timestamp,
    ) -> Result<bool, CheckpointError> {
        self.inner.renew_lease(run_id, owner, lease_until).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::InMemoryCheckpointer;
    use crate::checkpoint::conformance::sample_run;

    fn sample_record(run_id: &RunId, graph: &str) -> RunRecord {
        let mut record = sample_run(run_id.clone(), Timestamp::now());
        record.graph = graph.into();
        record
    }

    /// Whether `wait` is done at its first poll (it was woken, or had been), with no clock.
    async fn woken(wait: impl std::future::Future<Output = ()>) -> bool {
        futures_util::FutureExt::now_or_never(wait).is_some()
    }

    #[tokio::test]
    async fn a_watch_of_every_run_wakes_once_for_the_writes_it_has_not_seen() {
        let changes = Arc::new(Changes::default());
        // Nobody watches: a write costs no wake-up of anyone.
        changes.announce(&sample_record(&RunId::from("a"), "G"));
        let mut all = changes.watch_all();
        assert!(
            !woken(all.changed()).await,
            "nothing written since it watched"
        );
        changes.announce(&sample_record(&RunId::from("a"), "G"));
        changes.announce(&sample_record(&RunId::from("b"), "H"));
        assert!(woken(all.changed()).await, "a write to any run");
        assert!(
            !woken(all.changed()).await,
            "two writes before it looked wake it once"
        );
    }

    #[tokio::test]
    async fn a_write_wakes_the_run_s_watchers_and_a_ready_run_its_graph_s_workers() {
        let changes = Arc::new(Changes::default());
        let mut watch = changes.watch_run(&RunId::from("a"));
        let mut other = changes.watch_run(&RunId::from("b"));
        let mut ready = changes.watch_ready("G");
        let mut elsewhere = changes.watch_ready("H");
        assert!(!woken(watch.changed()).await, "nothing written yet");

        let mut record = sample_record(&RunId::from("a"), "G");
        record.status = RunStatus::Running;
        record.owner = Some("worker".into());
        changes.announce(&record);
        assert!(woken(watch.changed()).await);
        assert!(!woken(other.changed()).await, "another run");
        assert!(!woken(ready.changed()).await, "held: not ready");

        record.owner = None;
        changes.announce(&record);
        assert!(
            woken(ready.changed()).await,
            "running and held by nobody: ready"
        );
        assert!(!woken(elsewhere.changed()).await, "another graph");
        // Seen once: the next wait waits for the next write.
        assert!(!woken(ready.changed()).await);
    }

    #[tokio::test]
    async fn a_write_before_the_wait_is_not_missed_and_watches_clean_up() {
        let changes = Arc::new(Changes::default());
        let run_id = RunId::from("a");
        let mut first = changes.watch_run(&run_id);
        let second = changes.watch_run(&run_id);
        changes.announce(&sample_record(&run_id, "G"));
        // Written after the watch began, before the wait: the wait returns at once.
        assert!(woken(first.changed()).await);
        drop(second);
        assert_eq!(lock(&changes.runs).len(), 1, "one watch left");
        drop(first);
        assert!(lock(&changes.runs).is_empty(), "no watch, no channel");
    }

    #[tokio::test]
    async fn an_announced_store_announces_its_writes_once_wrapped() {
        let store = Announced::wrap(Arc::new(InMemoryCheckpointer::new()));
        let again = Announced::wrap(Arc::clone(&store));
        let changes = store.changes().expect("announces");
        assert!(
            Arc::ptr_eq(&changes, &again.changes().expect("the same")),
            "not wrapped twice"
        );
        let run_id = RunId::from("a");
        let mut watch = changes.watch_run(&run_id);
        let mut record = sample_record(&run_id, "G");
        record.status = RunStatus::Paused;
        store
            .save_step(
                record.clone(),
                crate::checkpoint::conformance::sample_checkpoint(&run_id, 1),
            )
            .await
            .expect("saved");
        assert!(woken(watch.changed()).await);
        // A claim that fails changed nothing: nobody is woken.
        assert!(
            !store
                .claim_run(&record, RunStatus::Completed)
                .await
                .expect("read")
        );
        assert!(!woken(watch.changed()).await);
    }
}
