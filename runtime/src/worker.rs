//! `Worker`: executes the ready runs of one graph from a shared store — queued, answered by a
//! person, or abandoned by a process that died — one at a time, under a lease it keeps renewing.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::Duration;

use crate::cancel::CancellationToken;
use crate::checkpoint::{ReadyWatch, RunQueue, RunRecord};
use crate::errors::RunError;
use crate::graph::{CompiledGraph, latest};
use crate::id::{RunId, Timestamp};
use crate::runner::{Advanced, Outcome, Run};
use crate::state::GraphState;

/// Executes the ready runs of one graph, from a store that several workers (in several
/// processes, on several machines with PostgreSQL) share.
///
/// A worker claims the oldest ready run ([`RunQueue::claim_next`]): one queued by
/// [`CompiledGraph::enqueue`], answered by [`Resume::enqueue`](crate::interrupt::Resume::enqueue), or `running` with
/// a lease that ran out because its worker died — at once, without waiting for the lease, when
/// that worker was a process of this machine that no longer exists. It continues the run from its last checkpoint
/// to the end or the next pause, renewing its lease every third of it, so a node may run longer
/// than the lease. If the lease is lost (another worker took the run over after a stall longer
/// than the lease), the run is cancelled here, and the store refuses this worker's late writes
/// ([`CheckpointError::Fenced`](crate::checkpoint::CheckpointError::Fenced)): a run is never executed by two
/// workers at once, and no committed step runs twice.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use trellis::{END, GraphBuilder, GraphState, NodeResult, START, checkpoint::InMemoryCheckpointer, checkpoint::RunQueue, worker::Worker};
///
/// #[derive(Clone, Default, serde::Serialize, serde::Deserialize, GraphState)]
/// struct Job { n: u32 }
///
/// let mut graph = GraphBuilder::<Job>::new("Double");
/// graph
///     .add_node_fn("double", |job, _| async move {
///         Ok(NodeResult::Update(JobUpdate::default().n(job.n * 2)))
///     })
///     .add_edge(START, "double")
///     .add_edge("double", END);
/// let graph = graph.compile()?;
/// let store: Arc<dyn RunQueue> = Arc::new(InMemoryCheckpointer::new());
///
/// // Producers only enqueue; any number of workers, anywhere, execute.
/// let queued = graph.clone().with_checkpointer(Arc::clone(&store));
/// let run_id = queued.enqueue(Job { n: 21 }).await?;
///
/// let worker = Worker::new(graph, Arc::clone(&store));
/// let handled = worker.run_once().await?.expect("a ready run");
/// assert_eq!(handled.run_id, run_id);
/// assert_eq!(handled.result?.state().n, 42);
/// assert!(worker.run_once().await?.is_none(), "nothing else is ready");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
/// [`run`](Worker::run) loops until its [`stopper`](Worker::stopper) is cancelled.
pub struct Worker<S: GraphState> {
    graph: CompiledGraph<S>,
    store: Arc<dyn RunQueue>,
    id: Arc<str>,
    lease: Duration,
    poll: Duration,
    stop: CancellationToken,
}

/// One run a worker handled.
#[derive(Debug)]
pub struct Handled<S> {
    /// The run.
    pub run_id: RunId,
    /// How it went: completed or paused, or the error that failed it (or that stopped this
    /// worker executing it, like a lost lease).
    pub result: Result<Outcome<S>, RunError>,
}

/// What [`Worker::run`] did before it stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerReport {
    /// Runs executed to their end.
    pub completed: u64,
    /// Runs executed to a pause.
    pub paused: u64,
    /// Runs that failed, or that this worker had to give up.
    pub failed: u64,
    /// Runs handed back to the queue, unfinished, because the worker was stopped.
    pub released: u64,
}

impl<S: GraphState> Worker<S> {
    /// How long a worker's claim holds without a renewal (30 s), unless set with
    /// [`Worker::with_lease`]; a run driven outside a worker holds its claim as long.
    pub const DEFAULT_LEASE: Duration = crate::runner::LEASE;

    /// How long an idle worker waits before it looks for ready runs again, unless set with
    /// [`Worker::with_poll_interval`].
    pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);

    /// A worker executing `graph`'s runs from `store` (every checkpointer Trellis ships is a
    /// [`RunQueue`]).
    pub fn new(graph: CompiledGraph<S>, store: Arc<dyn RunQueue>) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let number = NEXT.fetch_add(1, Ordering::Relaxed);
        Worker {
            graph: graph.with_checkpointer(Arc::clone(&store)),
            store,
            id: Arc::from(format!("{}/worker-{number}", crate::owner::current())),
            lease: Self::DEFAULT_LEASE,
            poll: Self::DEFAULT_POLL_INTERVAL,
            stop: CancellationToken::new(),
        }
    }

    /// The worker's identity, as written into the records of the runs it executes
    /// (`host:pid:start/worker-N`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Holds each claimed run for `lease` (renewed every third of it): after a crash, its runs
    /// wait this long before another worker continues them.
    #[must_use]
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(3));
        self
    }

    /// Looks for ready runs every `poll` while idle.
    #[must_use]
    pub fn with_poll_interval(mut self, poll: Duration) -> Self {
        self.poll = poll;
        self
    }

    /// Cancel it to stop [`run`](Self::run): a run in progress is handed back to the queue
    /// after its current super-step, ready for another worker.
    pub fn stopper(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Executes workers' runs until the [`stopper`](Self::stopper) is cancelled, and says what
    /// it did. A store that cannot be reached is retried every poll interval (and logged): a
    /// worker outlives a database restart.
    pub async fn run(self) -> WorkerReport {
        let mut report = WorkerReport::default();
        // Watched before the first look: a run queued while this worker looks still wakes it.
        let mut ready = self
            .store
            .changes()
            .map(|changes| changes.watch_ready(self.graph.name()));
        while !self.stop.is_cancelled() {
            match self.run_once().await {
                Ok(Some(handled)) => match handled.result {
                    Ok(Outcome::Completed { .. }) => report.completed += 1,
                    Ok(Outcome::Paused { .. }) => report.paused += 1,
                    Err(RunError::Released { .. }) => report.released += 1,
                    Err(error) => {
                        tracing::warn!(target: "trellis", worker = %self.id, run_id = %handled.run_id, %error, "run failed");
                        report.failed += 1;
                    }
                },
                Ok(None) => self.idle(ready.as_mut()).await,
                Err(error) => {
                    tracing::warn!(target: "trellis", worker = %self.id, %error, "cannot claim a run");
                    self.idle(None).await;
                }
            }
        }
        report
    }

    /// Ends at the first of: a run of this graph left ready (when the store announces it),
    /// the poll interval (which also finds runs whose lease ran out, and runs queued by other
    /// processes), a stop.
    async fn idle(&self, ready: Option<&mut ReadyWatch>) {
        let woken = async {
            match ready {
                Some(ready) => ready.changed().await,
                None => std::future::pending().await,
            }
        };
        let stopped = self.stop.cancelled();
        let _ = tokio::time::timeout(
            self.poll,
            futures_util::future::select(std::pin::pin!(woken), std::pin::pin!(stopped)),
        )
        .await;
    }

    /// Claims the oldest ready run and executes it to its end or next pause; `None` when no
    /// run is ready.
    ///
    /// # Errors
    /// The store's error while claiming. Errors of the run itself are in
    /// [`Handled::result`].
    pub async fn run_once(&self) -> Result<Option<Handled<S>>, RunError> {
        let claimed = self.claim().await?;
        Ok(match claimed {
            None => None,
            Some(record) => {
                let run_id = record.run_id.clone();
                let result = self.execute(record).await;
                Some(Handled { run_id, result })
            }
        })
    }

    /// The oldest ready run; failing that, a run held by a process of this machine that is
    /// gone (free at once: its lease need not run out).
    async fn claim(&self) -> Result<Option<RunRecord>, RunError> {
        let now = Timestamp::now();
        let graph = self.graph.name();
        if let Some(record) = self
            .store
            .claim_next(graph, &self.id, now, now.plus(self.lease))
            .await?
        {
            return Ok(Some(record));
        }
        for (run_id, owner) in self.store.held_runs(graph).await? {
            if !crate::owner::is_gone(&owner) {
                continue;
            }
            let Some(mut record) = self.store.load_run(&run_id).await? else {
                continue;
            };
            record.owner = Some(self.id.to_string().into());
            record.lease_until = Some(now.plus(self.lease));
            // Of two workers taking it over, one wins; the other looks further. The winner
            // reads the run again: the gone owner's last write may have landed since.
            if self.store.take_over(&record, Some(&owner)).await? {
                return Ok(self.store.load_run(&run_id).await?);
            }
        }
        Ok(None)
    }

    async fn execute(&self, record: RunRecord) -> Result<Outcome<S>, RunError> {
        let run_id = record.run_id.clone();
        let loaded = match latest(self.store.as_ref(), &run_id).await {
            Ok(checkpoint) => Run::from_checkpoint(self.graph.clone(), record.clone(), checkpoint),
            Err(error) => Err(error),
        };
        let run = match loaded {
            Ok(run) => run,
            // A run this graph can never continue (no checkpoint, another topology or state
            // type, a state it cannot read) would be claimed again and again, by every worker:
            // it is recorded as failed, with the reason. A store that failed is not the run's
            // fault: the lease runs out and the run is tried again.
            Err(error @ (RunError::Unresumable { .. } | RunError::State { .. })) => {
                self.give_up(record, &error).await;
                return Err(error);
            }
            Err(error) => return Err(error),
        };
        let lost = CancellationToken::new();
        let mut run = run
            .owned_by(Arc::clone(&self.id), self.lease)
            .with_cancellation(lost.clone());
        let stop = &self.stop;
        let released = run_id.clone();
        let drive = async move {
            loop {
                if stop.is_cancelled() {
                    run.release().await?;
                    return Err(RunError::Released { run_id: released });
                }
                match run.step_quietly().await? {
                    Advanced::Stepped(_) => {}
                    Advanced::Paused | Advanced::Completed => break,
                }
            }
            Ok(run.into_outcome())
        };
        let mut drive = std::pin::pin!(drive);
        let mut heartbeat = std::pin::pin!(self.keep_lease(&run_id, &lost));
        let result = std::future::poll_fn(|cx| {
            if let Poll::Ready(result) = drive.as_mut().poll(cx) {
                return Poll::Ready(result);
            }
            match heartbeat.as_mut().poll(cx) {
                Poll::Ready(never) => match never {},
                Poll::Pending => Poll::Pending,
            }
        })
        .await;
        result.map_err(|error| match error {
            RunError::Cancelled { .. } if lost.is_cancelled() => RunError::LeaseLost {
                run_id: run_id.clone(),
            },
            other => other,
        })
    }

    /// Records a claimed run that cannot be continued as failed, with `error` as the reason.
    async fn give_up(&self, mut record: RunRecord, error: &RunError) {
        record.status = crate::checkpoint::RunStatus::Failed;
        record.error = Some(error.to_string());
        record.updated_at = Timestamp::now();
        record.lease_until = None;
        if let Err(failure) = self.store.take_over(&record, Some(&self.id)).await {
            tracing::warn!(target: "trellis", worker = %self.id, run_id = %record.run_id, error = %failure, "cannot record the run as failed");
        }
    }

    /// Renews the lease every third of it; when the run was taken over, or no renewal got
    /// through for a whole lease, cancels the run (`lost`) and waits forever.
    async fn keep_lease(&self, run_id: &RunId, lost: &CancellationToken) -> Infallible {
        let mut held_until = tokio::time::Instant::now() + self.lease;
        loop {
            tokio::time::sleep(self.lease / 3).await;
            let renewed = self
                .store
                .renew_lease(run_id, &self.id, Timestamp::now().plus(self.lease))
                .await;
            match renewed {
                Ok(true) => held_until = tokio::time::Instant::now() + self.lease,
                Ok(false) => break,
                Err(error) => {
                    tracing::warn!(target: "trellis", worker = %self.id, run_id = %run_id, %error, "cannot renew the lease");
                    if tokio::time::Instant::now() >= held_until {
                        break;
                    }
                }
            }
        }
        tracing::warn!(target: "trellis", worker = %self.id, run_id = %run_id, "lost the lease: giving the run up");
        lost.cancel();
        std::future::pending().await
    }
}
