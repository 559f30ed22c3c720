//! Who holds a running run: handing it back to the queue.

use std::sync::Arc;

use super::{Phase, Run};
use crate::checkpoint::RunStatus;
use crate::errors::RunError;
use crate::id::{RunId, Timestamp};
use crate::state::GraphState;

/// How long a running run's owner holds it without writing a checkpoint (each checkpoint
/// renews it), as seen from another machine; on its own machine a gone owner frees it at once.
pub(crate) const LEASE: std::time::Duration = std::time::Duration::from_secs(30);

impl<S: GraphState> Run<S> {
    /// Executes the run as `owner` (a worker's identity), each write holding it for `lease`.
    pub(crate) fn owned_by(mut self, owner: Arc<str>, lease: std::time::Duration) -> Self {
        self.ledger.owner = owner;
        self.ledger.lease = lease;
        self
    }

    /// Hands this run, held by this process and not yet run to its end, to the queue: the
    /// first [`Worker`](crate::worker::Worker) of its graph that is free runs it. Returns its
    /// id. A paused run is left as it is, waiting for its answers.
    ///
    /// # Errors
    /// [`RunError::NoCheckpointer`]: the queue is in the checkpointer;
    /// [`RunError::StillRunning`] when this process no longer holds the run; the
    /// checkpointer's error.
    pub async fn enqueue(mut self) -> Result<RunId, RunError> {
        let run_id = self.scope.run_id.clone();
        if self.graph.checkpointer.is_none() {
            return Err(RunError::NoCheckpointer {
                graph: self.scope.graph.to_string(),
                run_id,
            });
        }
        match self.progress.phase {
            Phase::Paused | Phase::Completed | Phase::Failed => return Ok(run_id),
            Phase::New => self.begin().await?,
            Phase::Running => {}
        }
        if self.release().await? {
            Ok(run_id)
        } else {
            Err(RunError::StillRunning { run_id })
        }
    }

    /// Gives the (running) run up: it stays `running` with no owner, ready for whichever
    /// worker claims it next ([`RunQueue::claim_next`](crate::checkpoint::RunQueue::claim_next)). `false` when this process no
    /// longer held it.
    pub(crate) async fn release(&mut self) -> Result<bool, RunError> {
        let Some(store) = self.graph.checkpointer.clone() else {
            return Ok(false);
        };
        let mut released = self.record(
            RunStatus::Running,
            self.state_json()?,
            Timestamp::now(),
            None,
        );
        released.owner = None;
        released.lease_until = None;
        Ok(store.take_over(&released, Some(&self.ledger.owner)).await?)
    }
}
