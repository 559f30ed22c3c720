//! Who holds a running run: handing it back to the queue.

use std::sync::Arc;

use super::Run;
use crate::checkpoint::RunStatus;
use crate::errors::RunError;
use crate::id::Timestamp;
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
