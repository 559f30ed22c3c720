//! What a graph keeps beside its checkpoints, per run (an agent's transcript), taken along when
//! a run branches: the hook [`CompiledGraph::with_branching`] registers.

use async_trait::async_trait;

use crate::checkpoint::CheckpointRef;
#[cfg(doc)]
use crate::graph::CompiledGraph;
use crate::id::RunId;

/// Told of every branch made of a run of its graph — a replay or fork
/// ([`CompiledGraph::replay`], [`CompiledGraph::fork`], a thread's fork), an edit
/// ([`CompiledGraph::update_state`], a thread's `update_state_at`) — before the branch runs, so
/// that what the graph's nodes keep per run outside the state goes on in the branch as it stood
/// at the checkpoint the branch starts from.
///
/// A new run on a thread is not a branch, and is told apart
/// ([`continues`](Branching::continues)): it starts a run of its own from the thread's state,
/// with the thread's earlier runs as its past.
#[async_trait]
pub trait Branching: Send + Sync + 'static {
    /// Run `to` branches from checkpoint `from`, which stands after step `step` (`0`: before
    /// any node ran): take along what `from.run_id` kept up to that step — what it wrote in a
    /// later step is not the branch's past.
    ///
    /// # Errors
    /// Why it could not: the branch is then not made.
    async fn branch(
        &self,
        from: &CheckpointRef,
        step: u64,
        to: &RunId,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>>;

    /// Run `to`, a new run on a thread, goes on from checkpoint `from` — where the thread's
    /// previous run stopped, which stands after step `step` — with its own steps, numbered from
    /// the start: take along what `from.run_id` kept up to that step as the new run's past (a
    /// conversation goes on). By default, nothing is taken.
    ///
    /// # Errors
    /// Why it could not: the run is then not started.
    async fn continues(
        &self,
        from: &CheckpointRef,
        step: u64,
        to: &RunId,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let _ = (from, step, to);
        Ok(())
    }
}
