//! Recording a run: its pauses, its end, its failure, and the checkpoint of every step.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Advanced, Phase, Run};
use crate::checkpoint::{Checkpoint, CheckpointLabel, Name, RunRecord, RunStatus};
use crate::errors::RunError;
use crate::event::Event;
use crate::id::Timestamp;
use crate::interrupt::Interrupt;
use crate::state::GraphState;

impl<S: GraphState> Run<S> {
    pub(super) async fn pause(
        &mut self,
        interrupts: Vec<Interrupt>,
        ran: &[usize],
    ) -> Result<Advanced, RunError> {
        self.progress.phase = Phase::Paused;
        self.held.interrupts = interrupts;
        let kind = self.held.interrupts[0].request.kind.as_str().to_owned();
        self.save(CheckpointLabel::Pause(kind), RunStatus::Paused, ran, None)
            .await?;
        self.emit(|| Event::RunPaused {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.progress.step,
            interrupts: self.held.interrupts.clone(),
        });
        Ok(Advanced::Paused)
    }

    pub(super) async fn complete(&mut self, ran: &[usize]) -> Result<Advanced, RunError> {
        self.progress.phase = Phase::Completed;
        self.save(CheckpointLabel::Complete, RunStatus::Completed, ran, None)
            .await?;
        self.emit(|| Event::RunCompleted {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.progress.step,
        });
        Ok(Advanced::Completed)
    }

    /// Records the failure; a checkpointer that fails here too is only logged, so the caller
    /// still gets the error that failed the run.
    pub(super) async fn fail(&mut self, error: &RunError) {
        self.progress.phase = Phase::Failed;
        let text = error.to_string();
        let status = match error {
            RunError::Cancelled { .. } => RunStatus::Cancelled,
            _ => RunStatus::Failed,
        };
        if let Err(save_error) = self
            .save(CheckpointLabel::Failed, status, &[], Some(text.clone()))
            .await
        {
            tracing::error!(target: "trellis", run_id = %self.scope.run_id, error = %save_error, "cannot record the failed run");
        }
        self.emit(|| Event::RunFailed {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.progress.step,
            error: text,
        });
    }

    pub(super) fn record(
        &self,
        status: RunStatus,
        state: Arc<serde_json::Value>,
        now: Timestamp,
        error: Option<String>,
    ) -> RunRecord {
        let nodes = &self.graph.topology.nodes;
        RunRecord {
            run_id: self.scope.run_id.clone(),
            graph: Name::from(&self.scope.graph),
            status,
            created_at: self.ledger.created_at,
            updated_at: now,
            last_node: self.progress.last_node.map(|i| Name::from(&nodes[i].name)),
            steps: self.progress.step,
            state,
            interrupts: if status == RunStatus::Paused {
                self.held.interrupts.clone()
            } else {
                Vec::new()
            },
            error,
            transitions: self.progress.transitions,
            // Every write names its writer, so that the store can refuse a writer that lost
            // its claim (see `Checkpointer::save_step`).
            owner: Some(Name::from(&self.ledger.owner)),
            lease_until: (status == RunStatus::Running).then(|| now.plus(self.ledger.lease)),
            parent: self.ledger.parent.clone(),
            thread: self.ledger.thread.clone(),
            metadata: self.ledger.metadata.clone(),
        }
    }

    /// The state as JSON, shared by the record and the checkpoint written together.
    pub(super) fn state_json(&self) -> Result<Arc<serde_json::Value>, RunError> {
        match serde_json::to_value(&*self.state) {
            Ok(state) => Ok(Arc::new(state)),
            Err(source) => Err(RunError::State {
                run_id: self.scope.run_id.clone(),
                action: "written as",
                source,
            }),
        }
    }

    /// Writes a checkpoint and the run record together, when the graph has a checkpointer.
    ///
    /// The write is boxed: its future is large, and inline it would grow (and be copied with)
    /// every step's future, checkpointer or not.
    pub(super) async fn save(
        &mut self,
        label: CheckpointLabel,
        status: RunStatus,
        ran: &[usize],
        error: Option<String>,
    ) -> Result<(), RunError> {
        if self.graph.checkpointer.is_none() {
            return Ok(());
        }
        Box::pin(self.save_now(label, status, ran, error)).await
    }

    async fn save_now(
        &mut self,
        label: CheckpointLabel,
        status: RunStatus,
        ran: &[usize],
        error: Option<String>,
    ) -> Result<(), RunError> {
        let Some(store) = self.graph.checkpointer.clone() else {
            return Ok(());
        };
        let (state, delta) = self.state_to_write()?;
        let nodes = &self.graph.topology.nodes;
        // Shared with the graph: a checkpoint's names cost no copy.
        let name = |i: usize| Name::from(&nodes[i].name);
        let names = |list: &[usize]| -> Vec<Name> { list.iter().map(|&i| name(i)).collect() };
        let now = Timestamp::now();
        // Inserted, not collected: `collect` sorts a list it allocates first, which for a
        // run's few visited nodes costs more than the map.
        let mut visits = BTreeMap::new();
        for (i, &count) in self.progress.visits.iter().enumerate() {
            if count > 0 {
                visits.insert(name(i), count);
            }
        }
        let checkpoint = Checkpoint {
            id: self.ledger.checkpoints + 1,
            run_id: self.scope.run_id.clone(),
            step: self.progress.step,
            nodes: names(ran),
            label,
            state: Arc::clone(&state),
            frontier: names(&self.work.frontier),
            visits,
            approved: names(&self.held.approved),
            breakpoints: crate::interrupt::Breakpoints {
                before: names(&self.held.stops.before),
                after: names(&self.held.stops.after),
            },
            failures: self
                .held
                .failures
                .iter()
                .map(|(_, f)| (**f).clone())
                .collect(),
            interrupts: if status == RunStatus::Paused {
                self.held.interrupts.clone()
            } else {
                Vec::new()
            },
            joins: self
                .work
                .arrived
                .iter()
                .zip(&self.graph.topology.joins)
                .filter(|(arrived, _)| !arrived.is_empty())
                .map(|(arrived, join)| (name(join.target), names(arrived)))
                .collect(),
            sends: self
                .work
                .sends
                .iter()
                .map(|(i, input)| {
                    crate::node::SendTo::json(String::from(name(*i)), (**input).clone())
                })
                .collect(),
            children: self
                .held
                .children
                .iter()
                .map(|(i, child)| (name(*i), child.clone()))
                .collect(),
            pending: self.held.pending.clone(),
            graph_fingerprint: self.graph.topology.fingerprint.clone(),
            state_type: self.graph.topology.state_type.clone(),
            created_at: now,
            delta,
            chain: 0,
        };
        let record = self.record(status, state, now, error);
        // Kept, not formatted: `emit` builds the event only when someone sees it.
        let label = checkpoint.label.clone();
        store.save_step(record, checkpoint).await?;
        self.ledger.checkpoints += 1;
        self.emit(|| Event::CheckpointSaved {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.progress.step,
            label: label.to_string(),
            checkpoint: self.ledger.checkpoints,
        });
        Ok(())
    }
}
