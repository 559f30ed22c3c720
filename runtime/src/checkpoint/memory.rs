//! `InMemoryCheckpointer`: the contract kept in a process's memory, for tests and short runs.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use rustc_hash::FxHashMap;

use super::{
    Checkpoint, CheckpointError, Checkpointer, RunQueue, RunRecord, RunStatus, ThreadRecord,
};
use crate::id::{RunId, ThreadId, Timestamp};

/// Keeps runs and checkpoints in memory; everything is gone when it is dropped.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use trellis::{checkpoint::Checkpointer, checkpoint::InMemoryCheckpointer};
///
/// let store = InMemoryCheckpointer::new();
/// assert!(store.list_runs(10, 0).await.unwrap().is_empty());
/// # });
/// ```
#[derive(Debug, Default)]
pub struct InMemoryCheckpointer {
    /// Each run boxed: the table grows by moving its entries into a block twice as large, and
    /// moving a pointer is cheaper than moving a ~300-byte record (~1,100 instructions of an
    /// `interrupt_resume` cycle on a new store).
    ///
    /// Fx rather than SipHash: a run's id is hashed several times a cycle of it (~230
    /// instructions each with SipHash), and the runtime makes run ids (ULIDs) rather than
    /// taking them from callers. Thread ids may be a client's own: their table keeps SipHash.
    runs: Mutex<FxHashMap<RunId, Box<Stored>>>,
    /// Locked after `runs` when both are (a run's first write joins its thread's list).
    threads: Mutex<HashMap<ThreadId, StoredThread>>,
}

#[derive(Debug)]
struct StoredThread {
    record: ThreadRecord,
    /// Its runs, in the order their first write reached the store.
    runs: Vec<RunId>,
}

#[derive(Debug)]
struct Stored {
    record: RunRecord,
    /// Boxed: a `Checkpoint` is ~400 bytes, and a list of them grown in place copies them all
    /// into blocks large enough (3 KB at the eighth) that glibc sorts its free lists for each
    /// (`malloc_consolidate`): ~1,600 instructions of an `interrupt_resume` cycle.
    #[expect(clippy::vec_box, reason = "a pointer moves cheaper than a checkpoint")]
    checkpoints: Vec<Box<Checkpoint>>,
}

impl InMemoryCheckpointer {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, FxHashMap<RunId, Box<Stored>>> {
        // A panic elsewhere while holding the lock cannot leave a half-written entry: every
        // write below is an insert, a move or a clone, none of which panics.
        self.runs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn threads(&self) -> MutexGuard<'_, HashMap<ThreadId, StoredThread>> {
        // As `lock`: every write is an insert, an assignment or a push.
        self.threads
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// [`Checkpointer::save_step`], done.
    fn save_now(&self, run: RunRecord, mut checkpoint: Checkpoint) -> Result<(), CheckpointError> {
        // Memory keeps the whole state (see `writes_deltas`): a delta is only a hint.
        checkpoint.delta = None;
        if run.run_id != checkpoint.run_id {
            return Err(CheckpointError::Corrupt {
                what: format!("checkpoint {} of run {}", checkpoint.id, checkpoint.run_id),
                reason: format!("saved with the record of run {}", run.run_id),
            });
        }
        let mut runs = self.lock();
        // One lookup: the run id is hashed once a step, not once per check.
        let Some(stored) = runs.get_mut(&run.run_id) else {
            // A run's first write: nothing to fence against.
            let run_id = run.run_id.clone();
            if let Some(thread) = &run.thread
                && let Some(stored) = self.threads().get_mut(thread)
            {
                stored.runs.push(run_id.clone());
            }
            // Room for a short run's checkpoints (a pointer each): a list grown from one
            // reallocates twice by the fifth.
            let mut checkpoints = Vec::with_capacity(8);
            checkpoints.push(Box::new(checkpoint));
            runs.insert(
                run_id,
                Box::new(Stored {
                    record: run,
                    checkpoints,
                }),
            );
            return Ok(());
        };
        if stored.record.owner != run.owner {
            return Err(CheckpointError::Fenced {
                run_id: run.run_id.clone(),
                owner: stored
                    .record
                    .owner
                    .as_deref()
                    .unwrap_or("nobody")
                    .to_owned(),
            });
        }
        stored.record = run;
        stored.put(checkpoint);
        Ok(())
    }
}

/// `record` made equal to `from`, keeping what is already equal: a claim rewrites a record
/// that is mostly unchanged, which a clone would copy whole.
fn overwrite(record: &mut RunRecord, from: &RunRecord) {
    // Destructured, so that a field added to `RunRecord` cannot be forgotten here.
    let RunRecord {
        run_id,
        graph,
        status,
        created_at,
        updated_at,
        last_node,
        steps,
        state,
        interrupts,
        error,
        transitions,
        owner,
        lease_until,
        parent,
        thread,
        metadata,
    } = from;
    record.run_id.clone_from(run_id);
    record.graph.clone_from(graph);
    record.status = *status;
    record.created_at = *created_at;
    record.updated_at = *updated_at;
    record.last_node.clone_from(last_node);
    record.steps = *steps;
    record.state.clone_from(state);
    record.interrupts.clone_from(interrupts);
    record.error.clone_from(error);
    record.transitions = *transitions;
    record.owner.clone_from(owner);
    record.lease_until = *lease_until;
    record.parent.clone_from(parent);
    record.thread.clone_from(thread);
    record.metadata.clone_from(metadata);
}

/// `records` newest first by `key` (creation time, then id), skipping `offset`, at most
/// `limit`: the page every list of this store returns.
fn newest_page<'a, T: Clone, K: Ord>(
    mut records: Vec<&'a T>,
    key: impl Fn(&'a T) -> K,
    limit: usize,
    offset: usize,
) -> Vec<T> {
    records.sort_by_key(|r| std::cmp::Reverse(key(r)));
    records
        .into_iter()
        .skip(offset)
        .take(limit)
        .cloned()
        .collect()
}

impl Stored {
    /// Adds a checkpoint in id order, replacing one of the same id.
    fn put(&mut self, checkpoint: Checkpoint) {
        match self
            .checkpoints
            .binary_search_by_key(&checkpoint.id, |c| c.id)
        {
            Ok(at) => *self.checkpoints[at] = checkpoint,
            Err(at) => self.checkpoints.insert(at, Box::new(checkpoint)),
        }
    }
}

#[async_trait]
impl Checkpointer for InMemoryCheckpointer {
    async fn claim_run(
        &self,
        run: &RunRecord,
        expected: RunStatus,
    ) -> Result<bool, CheckpointError> {
        let mut runs = self.lock();
        match runs.get_mut(&run.run_id) {
            Some(stored) if stored.record.status == expected => {
                overwrite(&mut stored.record, run);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn take_over(
        &self,
        run: &RunRecord,
        previous_owner: Option<&str>,
    ) -> Result<bool, CheckpointError> {
        let mut runs = self.lock();
        match runs.get_mut(&run.run_id) {
            Some(stored)
                if stored.record.status == RunStatus::Running
                    && stored.record.owner.as_deref() == previous_owner =>
            {
                let record = &mut stored.record;
                record.owner.clone_from(&run.owner);
                record.lease_until = run.lease_until;
                record.updated_at = run.updated_at;
                record.status = run.status;
                record.error.clone_from(&run.error);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Written out, not `async fn`: the store never waits, and as an `async fn` the record and
    /// the checkpoint were moved into its boxed future and out again (~700 bytes, several
    /// copies a save). The work is done when called; the future only hands back the result.
    fn save_step<'store, 'saving>(
        &'store self,
        run: RunRecord,
        checkpoint: Checkpoint,
    ) -> Pin<Box<dyn Future<Output = Result<(), CheckpointError>> + Send + 'saving>>
    where
        'store: 'saving,
        Self: 'saving,
    {
        Box::pin(std::future::ready(self.save_now(run, checkpoint)))
    }

    fn writes_deltas(&self) -> bool {
        false
    }

    async fn load_run(&self, run_id: &RunId) -> Result<Option<RunRecord>, CheckpointError> {
        Ok(self.lock().get(run_id).map(|stored| stored.record.clone()))
    }

    async fn list_runs(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError> {
        let runs = self.lock();
        let records = runs.values().map(|stored| &stored.record).collect();
        Ok(newest_page(
            records,
            |r| (r.created_at, &r.run_id),
            limit,
            offset,
        ))
    }

    async fn list_checkpoints(&self, run_id: &RunId) -> Result<Vec<Checkpoint>, CheckpointError> {
        Ok(self
            .lock()
            .get(run_id)
            .map(|stored| stored.checkpoints.iter().map(|c| (**c).clone()).collect())
            .unwrap_or_default())
    }

    async fn latest_checkpoint(
        &self,
        run_id: &RunId,
    ) -> Result<Option<Checkpoint>, CheckpointError> {
        Ok(self
            .lock()
            .get(run_id)
            .and_then(|stored| stored.checkpoints.last().map(|c| (**c).clone())))
    }

    async fn checkpoint(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<Option<Checkpoint>, CheckpointError> {
        Ok(self.lock().get(run_id).and_then(|stored| {
            let at = stored
                .checkpoints
                .binary_search_by_key(&id, |c| c.id)
                .ok()?;
            Some((*stored.checkpoints[at]).clone())
        }))
    }

    async fn create_thread(&self, thread: &ThreadRecord) -> Result<bool, CheckpointError> {
        let mut threads = self.threads();
        if threads.contains_key(&thread.thread_id) {
            return Ok(false);
        }
        threads.insert(
            thread.thread_id.clone(),
            StoredThread {
                record: thread.clone(),
                runs: Vec::new(),
            },
        );
        Ok(true)
    }

    async fn load_thread(
        &self,
        thread_id: &ThreadId,
    ) -> Result<Option<ThreadRecord>, CheckpointError> {
        Ok(self
            .threads()
            .get(thread_id)
            .map(|stored| stored.record.clone()))
    }

    async fn list_threads(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ThreadRecord>, CheckpointError> {
        let threads = self.threads();
        let records = threads.values().map(|s| &s.record).collect();
        Ok(newest_page(
            records,
            |t| (t.created_at, &t.thread_id),
            limit,
            offset,
        ))
    }

    async fn set_thread_metadata(
        &self,
        thread_id: &ThreadId,
        metadata: &serde_json::Map<String, serde_json::Value>,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        Ok(match self.threads().get_mut(thread_id) {
            Some(stored) => {
                stored.record.metadata.clone_from(metadata);
                stored.record.updated_at = now;
                true
            }
            None => false,
        })
    }

    async fn move_thread_head(
        &self,
        thread_id: &ThreadId,
        expected: Option<&RunId>,
        head: &RunId,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        Ok(match self.threads().get_mut(thread_id) {
            Some(stored) if stored.record.head.as_ref() == expected => {
                stored.record.head = Some(head.clone());
                stored.record.updated_at = now;
                true
            }
            _ => false,
        })
    }

    async fn delete_thread(&self, thread_id: &ThreadId) -> Result<bool, CheckpointError> {
        // The threads' lock is let go before the runs' is taken, as everywhere else.
        let Some(thread) = self.threads().remove(thread_id) else {
            return Ok(false);
        };
        let prefixes: Vec<String> = thread.runs.iter().map(|id| format!("{id}/")).collect();
        self.lock().retain(|run_id, _| {
            !thread.runs.contains(run_id)
                && !prefixes.iter().any(|p| run_id.as_str().starts_with(p))
        });
        Ok(true)
    }

    async fn delete_runs(&self, run_ids: &[RunId]) -> Result<Vec<RunId>, CheckpointError> {
        // The threads' lock first (a head cannot move while the runs are looked at), then the
        // runs', as a run's first write takes them.
        let mut threads = self.threads();
        let mut runs = self.lock();
        let deleted: Vec<RunId> = run_ids
            .iter()
            .filter(|run_id| {
                runs.get(*run_id).is_some_and(|stored| {
                    stored.record.status.is_ended()
                        && !stored.record.thread.as_ref().is_some_and(|thread| {
                            threads
                                .get(thread)
                                .is_some_and(|t| t.record.head.as_ref() == Some(*run_id))
                        })
                })
            })
            .cloned()
            .collect();
        let prefixes: Vec<String> = deleted.iter().map(|id| format!("{id}/")).collect();
        runs.retain(|run_id, _| {
            !deleted.contains(run_id) && !prefixes.iter().any(|p| run_id.as_str().starts_with(p))
        });
        for thread in threads.values_mut() {
            thread.runs.retain(|run_id| !deleted.contains(run_id));
        }
        Ok(deleted)
    }

    async fn delete_checkpoints_before(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<u64, CheckpointError> {
        let mut runs = self.lock();
        let Some(stored) = runs.get_mut(run_id) else {
            return Ok(0);
        };
        let before = stored.checkpoints.len();
        stored.checkpoints.retain(|checkpoint| checkpoint.id >= id);
        Ok((before - stored.checkpoints.len()) as u64)
    }

    async fn thread_runs(
        &self,
        thread_id: &ThreadId,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError> {
        let ids = match self.threads().get(thread_id) {
            Some(stored) => stored.runs.clone(),
            None => return Ok(Vec::new()),
        };
        let runs = self.lock();
        let records = ids
            .iter()
            .filter_map(|id| runs.get(id).map(|stored| &stored.record))
            .collect();
        Ok(newest_page(
            records,
            |r| (r.created_at, &r.run_id),
            limit,
            offset,
        ))
    }
}

#[async_trait]
impl RunQueue for InMemoryCheckpointer {
    async fn claim_next(
        &self,
        graph: &str,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> Result<Option<RunRecord>, CheckpointError> {
        let mut runs = self.lock();
        let ready = runs
            .values_mut()
            .filter(|stored| {
                let record = &stored.record;
                record.graph == graph
                    && record.status == RunStatus::Running
                    && (record.owner.is_none() || record.lease_until.is_none_or(|t| t < now))
            })
            .min_by(|a, b| {
                (a.record.created_at, &a.record.run_id)
                    .cmp(&(b.record.created_at, &b.record.run_id))
            });
        Ok(ready.map(|stored| {
            stored.record.owner = Some(owner.into());
            stored.record.lease_until = Some(lease_until);
            stored.record.clone()
        }))
    }

    async fn held_runs(&self, graph: &str) -> Result<Vec<(RunId, String)>, CheckpointError> {
        let runs = self.lock();
        let mut held: Vec<&RunRecord> = runs
            .values()
            .map(|stored| &stored.record)
            .filter(|r| r.graph == graph && r.status == RunStatus::Running && r.owner.is_some())
            .collect();
        held.sort_by(|a, b| (a.created_at, &a.run_id).cmp(&(b.created_at, &b.run_id)));
        Ok(held
            .into_iter()
            .filter_map(|r| Some((r.run_id.clone(), String::from(r.owner.clone()?))))
            .collect())
    }

    async fn renew_lease(
        &self,
        run_id: &RunId,
        owner: &str,
        lease_until: Timestamp,
    ) -> Result<bool, CheckpointError> {
        let mut runs = self.lock();
        match runs.get_mut(run_id) {
            Some(stored)
                if stored.record.status == RunStatus::Running
                    && stored.record.owner.as_deref() == Some(owner) =>
            {
                stored.record.lease_until = Some(lease_until);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::checkpoint::CheckpointRef;
    use crate::interrupt::{Interrupt, InterruptPoint};

    #[test]
    fn a_record_overwritten_in_place_equals_its_source_in_every_field() {
        let then = Timestamp::now();
        let paused = RunRecord {
            run_id: RunId::new(),
            graph: "Support".into(),
            status: RunStatus::Paused,
            created_at: then,
            updated_at: then,
            last_node: Some("draft".into()),
            steps: 2,
            state: serde_json::json!({"log": ["draft"]}).into(),
            interrupts: vec![Interrupt::fixed("send", 3, InterruptPoint::Before, None)],
            error: None,
            transitions: 2,
            owner: Some("first".into()),
            lease_until: None,
            parent: None,
            thread: None,
            metadata: Default::default(),
        };
        let now = then.plus(Duration::from_secs(1));
        let claim = RunRecord {
            run_id: RunId::new(),
            graph: "Other".into(),
            status: RunStatus::Running,
            created_at: now,
            updated_at: now,
            last_node: None,
            steps: 3,
            state: serde_json::json!({"log": ["draft", "answered"]}).into(),
            interrupts: Vec::new(),
            error: Some("an error".to_owned()),
            transitions: 3,
            owner: Some("second".into()),
            lease_until: Some(now.plus(Duration::from_secs(30))),
            parent: Some(CheckpointRef {
                run_id: RunId::new(),
                checkpoint: 4,
            }),
            thread: Some(ThreadId::new()),
            metadata: Default::default(),
        };
        let mut record = paused.clone();
        overwrite(&mut record, &claim);
        assert_eq!(record, claim);
        // And back, over fields now set that the source has empty.
        overwrite(&mut record, &paused);
        assert_eq!(record, paused);
    }
}
