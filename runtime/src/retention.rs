//! What a store keeps: pruning ended runs by count or age, and compacting a thread to its
//! latest state — with whatever else an application keeps by run id (an agent's transcripts).
//!
//! A run goes only when it has ended (completed, failed or cancelled) and is not its thread's
//! newest run, which holds the thread's state: a paused or running run, and a thread's current
//! state, are never pruned. The store checks this again as it deletes ([`delete_runs`]), so a
//! run resumed or retried between the plan and the delete is kept.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use std::time::Duration;
//! use trellis::checkpoint::{Checkpointer, InMemoryCheckpointer};
//! use trellis::retention::{Pruner, Retention};
//! use trellis::run::Timestamp;
//!
//! let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
//! // The newest 100 runs of each graph are kept, and older ones too until they are a week old.
//! let policy = Retention::keep_last(100).and_older_than(Duration::from_secs(7 * 24 * 3600));
//! let pruner = Pruner::new(store);
//! let would_go = pruner.plan(&policy, Timestamp::now()).await?;
//! assert!(would_go.is_empty());
//! let gone = pruner.prune(&policy, Timestamp::now()).await?;
//! assert!(gone.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! [`delete_runs`]: crate::checkpoint::Checkpointer::delete_runs

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::checkpoint::{CheckpointError, CheckpointLabel, Checkpointer, RunRecord, RunStatus};
use crate::id::{RunId, ThreadId, Timestamp};

/// Which ended runs go: those past the newest `keep_last` of their group, those last written
/// longer than `older_than` ago, or — both given — those that are both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    keep_last: Option<usize>,
    per: Per,
    older_than: Option<Duration>,
    graph: Option<String>,
    thread: Option<ThreadId>,
}

/// What [`Retention::keep_last`] counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Per {
    /// The runs of each graph (the default).
    #[default]
    Graph,
    /// The runs of each thread; a run on no thread is not counted, and goes only by age.
    Thread,
}

impl Retention {
    /// Keeps the newest `n` runs of each graph (or of each thread: [`per`](Self::per)),
    /// whatever their status; the ended ones past them go.
    pub fn keep_last(n: usize) -> Self {
        Retention {
            keep_last: Some(n),
            per: Per::Graph,
            older_than: None,
            graph: None,
            thread: None,
        }
    }

    /// Drops ended runs last written more than `age` ago (a run's record is last written when
    /// it ends).
    pub fn older_than(age: Duration) -> Self {
        Retention {
            keep_last: None,
            per: Per::Graph,
            older_than: Some(age),
            graph: None,
            thread: None,
        }
    }

    /// Also keeps the newest `n` of each group: a run goes only when it is past them *and*
    /// old enough.
    #[must_use]
    pub fn and_keep_last(mut self, n: usize) -> Self {
        self.keep_last = Some(n);
        self
    }

    /// Also keeps runs younger than `age`: a run goes only when it is old enough *and* past
    /// the newest of its group.
    #[must_use]
    pub fn and_older_than(mut self, age: Duration) -> Self {
        self.older_than = Some(age);
        self
    }

    /// What `keep_last` counts in: each graph's runs (the default) or each thread's.
    #[must_use]
    pub fn per(mut self, per: Per) -> Self {
        self.per = per;
        self
    }

    /// Looks only at the runs of graph `name`.
    #[must_use]
    pub fn graph(mut self, name: impl Into<String>) -> Self {
        self.graph = Some(name.into());
        self
    }

    /// Looks only at the runs of thread `id` (their newest stays: it is the thread's state).
    #[must_use]
    pub fn thread(mut self, id: ThreadId) -> Self {
        self.thread = Some(id);
        self
    }

    /// Whether `run`, the `position`th newest of its group (from 0; `None` when it is in
    /// none), goes at `now`, its thread's head aside.
    fn drops(&self, run: &RunRecord, position: Option<usize>, now: Timestamp) -> bool {
        let past_newest = match (self.keep_last, position) {
            (Some(n), Some(position)) => position >= n,
            (Some(_), None) => false,
            (None, _) => true,
        };
        let old = self
            .older_than
            .is_none_or(|age| run.updated_at.plus(age) < now);
        run.status.is_ended() && past_newest && old
    }
}

/// A run pruned, or that a plan would prune.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrunedRun {
    /// The run.
    pub run_id: RunId,
    /// Its graph.
    pub graph: String,
    /// How it ended.
    pub status: RunStatus,
    /// Its thread, if it was on one.
    pub thread: Option<ThreadId>,
    /// When its record was last written.
    pub updated_at: Timestamp,
}

impl PrunedRun {
    fn of(run: &RunRecord) -> Self {
        PrunedRun {
            run_id: run.run_id.clone(),
            graph: run.graph.to_string(),
            status: run.status,
            thread: run.thread.clone(),
            updated_at: run.updated_at,
        }
    }
}

/// What compacting a thread dropped, or would drop.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Compacted {
    /// The thread's earlier runs, newest first.
    pub runs: Vec<PrunedRun>,
    /// The newest run's checkpoints before its latest committed one.
    pub checkpoints: u64,
}

/// Data an application keeps by run id beside the store (an agent's transcripts), dropped with
/// the runs it belongs to.
#[async_trait]
pub trait RunData: Send + Sync {
    /// Forgets what is kept for each of `run_ids` and for their subgraphs' child runs
    /// (`<run>/…`); an id with nothing kept is no error.
    ///
    /// # Errors
    /// The data's store failed; the runs are already gone from the run store.
    async fn forget(&self, run_ids: &[RunId]) -> Result<(), RetentionError>;
}

/// Why pruning or compacting stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RetentionError {
    /// The run store failed.
    #[error(transparent)]
    Store(#[from] CheckpointError),
    /// Data kept beside the runs could not be dropped with them.
    #[error("the runs are gone, but what is kept beside them could not be dropped: {0}")]
    RunData(Box<dyn std::error::Error + Send + Sync>),
    /// There is no such thread.
    #[error("no thread {0} in the store")]
    NoThread(ThreadId),
}

/// How many runs one delete takes: a transaction of a few hundred rows, so a prune of a large
/// store neither holds the writer's lock for long nor commits once a run.
const BATCH: usize = 200;

/// Prunes a store (and the data kept beside it) by a [`Retention`] policy, and compacts
/// threads.
#[derive(Clone)]
pub struct Pruner {
    store: Arc<dyn Checkpointer>,
    beside: Vec<Arc<dyn RunData>>,
}

impl std::fmt::Debug for Pruner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pruner")
            .field("beside", &self.beside.len())
            .finish_non_exhaustive()
    }
}

impl Pruner {
    /// Prunes `store`.
    pub fn new(store: Arc<dyn Checkpointer>) -> Self {
        Pruner {
            store,
            beside: Vec::new(),
        }
    }

    /// Also forgets, in `data`, what belongs to the runs pruned.
    #[must_use]
    pub fn with(mut self, data: Arc<dyn RunData>) -> Self {
        self.beside.push(data);
        self
    }

    /// The runs `policy` drops at `now`, newest first, without deleting anything (a dry run).
    ///
    /// # Errors
    /// The store failed.
    pub async fn plan(
        &self,
        policy: &Retention,
        now: Timestamp,
    ) -> Result<Vec<PrunedRun>, RetentionError> {
        let mut positions: HashMap<String, usize> = HashMap::new();
        let mut heads: HashMap<ThreadId, Option<RunId>> = HashMap::new();
        let mut plan = Vec::new();
        let mut offset = 0;
        loop {
            let page = match &policy.thread {
                Some(thread) => self.store.thread_runs(thread, BATCH, offset).await?,
                None => self.store.list_runs(BATCH, offset).await?,
            };
            offset += page.len();
            for run in &page {
                // A subgraph's child run goes with its parent, never on its own.
                if run.run_id.as_str().contains('/')
                    || policy.graph.as_ref().is_some_and(|g| *g != *run.graph)
                {
                    continue;
                }
                let group = match policy.per {
                    Per::Graph => Some(run.graph.to_string()),
                    Per::Thread => run.thread.as_ref().map(ToString::to_string),
                };
                let position = group.map(|group| {
                    let next = positions.entry(group).or_default();
                    *next += 1;
                    *next - 1
                });
                if !policy.drops(run, position, now) {
                    continue;
                }
                if let Some(thread) = &run.thread {
                    if !heads.contains_key(thread) {
                        let head = self.store.load_thread(thread).await?.and_then(|t| t.head);
                        heads.insert(thread.clone(), head);
                    }
                    if heads[thread].as_ref() == Some(&run.run_id) {
                        continue;
                    }
                }
                plan.push(PrunedRun::of(run));
            }
            if page.len() < BATCH {
                return Ok(plan);
            }
        }
    }

    /// Deletes the runs `policy` drops at `now`, with their checkpoints, their child runs and
    /// the data kept beside them; returns those deleted, newest first. A run that was resumed
    /// after the plan was made is not among them.
    ///
    /// # Errors
    /// The store failed (what was deleted before stays deleted), or the data beside it did.
    pub async fn prune(
        &self,
        policy: &Retention,
        now: Timestamp,
    ) -> Result<Vec<PrunedRun>, RetentionError> {
        let plan = self.plan(policy, now).await?;
        self.delete(plan).await
    }

    /// What [`compact_thread`](Self::compact_thread) would drop, without deleting anything.
    ///
    /// # Errors
    /// There is no such thread, or the store failed.
    pub async fn compaction_plan(&self, thread: &ThreadId) -> Result<Compacted, RetentionError> {
        let (runs, head_keeps) = self.compaction(thread).await?;
        let checkpoints = match head_keeps {
            Some((head, keep)) => self
                .store
                .list_checkpoints(&head)
                .await?
                .iter()
                .filter(|checkpoint| checkpoint.id < keep)
                .count() as u64,
            None => 0,
        };
        Ok(Compacted { runs, checkpoints })
    }

    /// Compacts a thread to its latest state: deletes its runs before its newest (those that
    /// have ended), and the newest run's checkpoints before its latest committed one (the
    /// one a resume, a retry or the thread's next run goes on from). History before that is
    /// gone; the thread's state, a pending question and what comes next are as they were.
    ///
    /// # Errors
    /// There is no such thread, or the store failed.
    pub async fn compact_thread(&self, thread: &ThreadId) -> Result<Compacted, RetentionError> {
        let (runs, head_keeps) = self.compaction(thread).await?;
        let runs = self.delete(runs).await?;
        let checkpoints = match head_keeps {
            Some((head, keep)) => self.store.delete_checkpoints_before(&head, keep).await?,
            None => 0,
        };
        Ok(Compacted { runs, checkpoints })
    }

    /// The thread's runs before its head, and its head with the id of the first checkpoint it
    /// keeps.
    async fn compaction(
        &self,
        thread: &ThreadId,
    ) -> Result<(Vec<PrunedRun>, Option<(RunId, u64)>), RetentionError> {
        let record = self
            .store
            .load_thread(thread)
            .await?
            .ok_or_else(|| RetentionError::NoThread(thread.clone()))?;
        let mut runs = Vec::new();
        let mut offset = 0;
        loop {
            let page = self.store.thread_runs(thread, BATCH, offset).await?;
            offset += page.len();
            runs.extend(
                page.iter()
                    .filter(|run| {
                        run.status.is_ended() && Some(&run.run_id) != record.head.as_ref()
                    })
                    .map(PrunedRun::of),
            );
            if page.len() < BATCH {
                break;
            }
        }
        let Some(head) = record.head else {
            return Ok((runs, None));
        };
        // A failed run is retried from its last committed checkpoint, not its `failed` one.
        let keep = self
            .store
            .list_checkpoints(&head)
            .await?
            .iter()
            .rev()
            .find(|checkpoint| checkpoint.label != CheckpointLabel::Failed)
            .map_or(0, |checkpoint| checkpoint.id);
        Ok((runs, Some((head, keep))))
    }

    /// Deletes `plan`'s runs in batches, then forgets them beside the store; the runs deleted.
    async fn delete(&self, plan: Vec<PrunedRun>) -> Result<Vec<PrunedRun>, RetentionError> {
        let mut deleted = Vec::with_capacity(plan.len());
        for batch in plan.chunks(BATCH) {
            let ids: Vec<RunId> = batch.iter().map(|run| run.run_id.clone()).collect();
            let gone = self.store.delete_runs(&ids).await?;
            for data in &self.beside {
                data.forget(&gone).await?;
            }
            deleted.extend(
                batch
                    .iter()
                    .filter(|run| gone.contains(&run.run_id))
                    .cloned(),
            );
        }
        Ok(deleted)
    }
}
