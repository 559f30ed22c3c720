//! Cancelling a run from outside: a token checked between super-steps and raced against nodes,
//! and a stored run cancelled through its record, wherever it executes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

use crate::checkpoint::{Checkpointer, RunRecord, RunStatus};
use crate::errors::RunError;
use crate::id::{RunId, Timestamp};

/// Cancels the runs it was given to. Clones share one flag.
///
/// A run checks its token before every super-step and races it against every running node: a
/// node still running when the token is cancelled is dropped at its next `.await`, and the run
/// fails with [`RunError::Cancelled`](crate::RunError::Cancelled).
#[derive(Clone, Default, Debug)]
pub struct CancellationToken(Arc<Shared>);

#[derive(Default, Debug)]
struct Shared {
    cancelled: AtomicBool,
    notify: Notify,
}

impl CancellationToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every run holding this token (or a clone of it).
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Release);
        self.0.notify.notify_waiters();
    }

    /// Whether [`cancel`](Self::cancel) was called.
    // Inline: every step asks, and out of line the call cost more than the load.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Acquire)
    }

    /// Completes once the token is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let mut notified = std::pin::pin!(self.0.notify.notified());
            // Register before checking the flag, so a `cancel` in between is not missed.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// Cancels a stored run that has not ended — queued, paused, or executing in any process: its
/// record becomes `cancelled` with `reason` as its error, and a process executing it is fenced
/// out at its next checkpoint (the step it has in flight is never committed). Returns the
/// record as written. What the run committed stays; [`retry`](crate::CompiledGraph::retry)
/// takes it up again.
///
/// # Errors
/// [`RunError::RunNotFound`]; [`RunError::NotCancellable`] for a run that has ended; the
/// checkpointer's error.
pub async fn cancel_stored(
    store: &dyn Checkpointer,
    run_id: &RunId,
    reason: &str,
) -> Result<RunRecord, RunError> {
    loop {
        let run = store
            .load_run(run_id)
            .await?
            .ok_or_else(|| RunError::RunNotFound {
                run_id: run_id.clone(),
            })?;
        let mut cancelled = run.clone();
        cancelled.status = RunStatus::Cancelled;
        cancelled.error = Some(reason.to_owned());
        cancelled.owner = None;
        cancelled.lease_until = None;
        cancelled.interrupts.clear();
        cancelled.updated_at = Timestamp::now();
        let done = match run.status {
            RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled => {
                return Err(RunError::NotCancellable {
                    run_id: run.run_id,
                    status: run.status,
                });
            }
            RunStatus::Paused => store.claim_run(&cancelled, RunStatus::Paused).await?,
            RunStatus::Running => store.take_over(&cancelled, run.owner.as_deref()).await?,
        };
        if done {
            return Ok(cancelled);
        }
        // The run moved on between the read and the write (a step, a claim): each lost race is
        // a change the run made, so this ends when it ends or holds still long enough.
    }
}
