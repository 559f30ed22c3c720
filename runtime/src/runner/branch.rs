//! Runs that go on from a stored checkpoint other than their latest: a failed run retried from
//! its last committed checkpoint, and branches forked from another run's checkpoint.

use std::sync::Arc;

use super::algo::normalize;
use super::parts::Stops;
use super::{Phase, Run};
use crate::checkpoint::{Checkpoint, CheckpointLabel, CheckpointRef, Name, RunRecord, RunStatus};
use crate::errors::RunError;
use crate::event::Event;
use crate::graph::CompiledGraph;
use crate::id::{RunId, ThreadId, Timestamp};
use crate::state::GraphState;

impl<S: GraphState> Run<S> {
    /// Run `run_id` as `checkpoint` left it: its state, next nodes, visits and, at a pause,
    /// its questions. Its own checkpoints are numbered on from `last_id`.
    pub(crate) fn at_checkpoint(
        graph: CompiledGraph<S>,
        run_id: RunId,
        created_at: Timestamp,
        parent: Option<CheckpointRef>,
        thread: Option<ThreadId>,
        checkpoint: Checkpoint,
        last_id: u64,
    ) -> Result<Self, RunError> {
        // A pause's questions are kept in its checkpoint (and in a `retry` of a run that failed
        // while paused).
        let paused = !checkpoint.interrupts.is_empty();
        if matches!(checkpoint.label, CheckpointLabel::Pause(_)) && !paused {
            return Err(RunError::Unresumable {
                run_id: checkpoint.run_id,
                reason: format!(
                    "its checkpoint {} is a pause written before Trellis kept a pause's questions in its checkpoint",
                    checkpoint.id
                ),
            });
        }
        let record = RunRecord {
            run_id,
            graph: graph.name().into(),
            status: if paused {
                RunStatus::Paused
            } else {
                RunStatus::Running
            },
            created_at,
            updated_at: Timestamp::now(),
            last_node: checkpoint.nodes.last().cloned(),
            steps: checkpoint.step,
            // Read from the checkpoint.
            state: Arc::new(serde_json::Value::Null),
            interrupts: if paused {
                checkpoint.interrupts.clone()
            } else {
                Vec::new()
            },
            error: None,
            // Activations committed up to the checkpoint: each one is a visit.
            transitions: checkpoint.visits.values().map(|&n| u64::from(n)).sum(),
            owner: None,
            lease_until: None,
            parent,
            thread,
            metadata: crate::thread::Metadata::new(),
        };
        let mut run = Run::from_checkpoint(graph, record, checkpoint)?;
        run.ledger.checkpoints = last_id;
        Ok(run)
    }

    /// Whether the run waits for answers.
    pub(crate) fn is_paused(&self) -> bool {
        self.progress.phase == Phase::Paused
    }

    /// The checkpoint `label` and the record this process now holds, at the moment a retried
    /// or forked run starts from; `ran` are the nodes it shows as having run.
    pub(crate) async fn record_start(
        &mut self,
        label: CheckpointLabel,
        ran: &[Name],
    ) -> Result<(), RunError> {
        let topology = Arc::clone(&self.graph.topology);
        let ran: Vec<usize> = ran.iter().filter_map(|n| topology.find(n).ok()).collect();
        let status = if self.is_paused() {
            RunStatus::Paused
        } else {
            RunStatus::Running
        };
        self.save(label, status, &ran, None).await
    }

    /// For a branch of run `from`: the children it continues are its own copies (under its
    /// id, as `travel::copy_children` writes them), not the original's.
    pub(crate) fn rehome_children(&mut self, from: &RunId) {
        let (prefix, to) = (format!("{from}/"), self.scope.run_id.clone());
        for (_, child) in &mut self.held.children {
            if let Some(rest) = child.as_str().strip_prefix(&prefix) {
                *child = RunId::from(format!("{to}/{rest}"));
            }
        }
    }

    /// The record this process would write now: what a retry claims a failed run with.
    pub(crate) fn claim_record(&self) -> Result<RunRecord, RunError> {
        let status = if self.is_paused() {
            RunStatus::Paused
        } else {
            RunStatus::Running
        };
        Ok(self.record(status, self.state_json_as_read()?, Timestamp::now(), None))
    }

    /// Folds `update` into the state as if `node` had written it, and makes the nodes `node`'s
    /// edges lead to (seeing the edited state) the next ones, in place of what was pending.
    pub(crate) fn write_as(&mut self, node: &str, update: S::Update) -> Result<(), RunError> {
        let topology = Arc::clone(&self.graph.topology);
        let index = topology.find(node)?;
        let spec = &topology.nodes[index];
        // Changed outside a step: the next checkpoint holds the whole state.
        self.ledger.written.forget();
        Arc::make_mut(&mut self.state)
            .apply_one(&spec.name, update)
            .map_err(|conflict| RunError::MergeConflict {
                step: self.progress.step,
                conflict,
            })?;
        let mut next = Vec::new();
        self.work.sends.clear();
        self.follow_edge(&topology, index, &mut next)?;
        normalize(&mut next);
        self.work.frontier = next;
        self.progress.phase = Phase::Running;
        self.held.interrupts.clear();
        self.held.approved.clear();
        // A branch is a run of its own: it pauses where it is told to when it starts.
        self.held.stops = Stops::default();
        self.held.failures.clear();
        self.held.children.clear();
        self.held.pending.clear();
        self.progress.last_node = Some(index);
        Ok(())
    }

    /// This new run, started on `thread` from checkpoint `from` (whose state it holds, as
    /// `json`, read by folding `chain` deltas): `input` is folded in by the reducers as if the
    /// caller had written it before the first step (START's edges then follow, seeing it), and
    /// `from` is its parent. Its first checkpoint can then be the changes since `from`.
    pub(crate) fn on_thread(
        &mut self,
        thread: ThreadId,
        from: Option<(CheckpointRef, Arc<serde_json::Value>, u32)>,
        input: S::Update,
    ) -> Result<(), RunError> {
        let from = match from {
            Some((at, json, chain)) => {
                if self.writes_deltas() {
                    self.ledger.written.go_on_from(at.clone(), json, chain);
                }
                Some(at)
            }
            None => None,
        };
        self.merge(
            super::algo::Updates::One(crate::START, input),
            self.progress.step,
        )?;
        self.place_on(thread, from);
        Ok(())
    }

    /// This run is on `thread`, going on from checkpoint `from`.
    pub(crate) fn place_on(&mut self, thread: ThreadId, from: Option<CheckpointRef>) {
        self.ledger.thread = Some(thread);
        self.ledger.parent = from;
    }

    /// Makes this run wait, with no question asked, until it is taken up again
    /// ([`unpark`](Self::unpark)): an edited thread's state, recorded as paused so that no
    /// worker runs what the edit leads to before the caller asks for it.
    pub(crate) fn park(&mut self) {
        self.held.interrupts.clear();
        self.progress.phase = Phase::Paused;
    }

    /// Refuses a run that is not paused, saying where it is.
    pub(crate) fn ensure_paused(&self) -> Result<(), RunError> {
        let run_id = self.scope.run_id.clone();
        match self.progress.phase {
            Phase::Paused => Ok(()),
            Phase::Completed => Err(RunError::AlreadyCompleted { run_id }),
            Phase::Failed => Err(RunError::AlreadyFailed { run_id }),
            Phase::New | Phase::Running => Err(RunError::StillRunning { run_id }),
        }
    }

    /// Takes a parked run up: claims it (paused → running) and checkpoints where it goes on
    /// from (`resume`), as a resume with no answers does.
    ///
    /// # Errors
    /// [`RunError::Answers`] for a run that waits for answers (it is not parked); as
    /// [`claim_paused`](Self::claim_paused).
    pub(crate) async fn unpark(&mut self) -> Result<(), RunError> {
        if !self.held.interrupts.is_empty() {
            return Err(RunError::Answers {
                run_id: self.scope.run_id.clone(),
                pending: self
                    .held
                    .interrupts
                    .iter()
                    .map(|i| i.id.as_str().to_owned())
                    .collect(),
                given: Vec::new(),
            });
        }
        self.claim_paused().await?;
        self.save(CheckpointLabel::Resume, RunStatus::Running, &[], None)
            .await
    }

    /// Claims a paused run for this process (paused → running): of two processes taking one
    /// paused run up, one proceeds.
    ///
    /// # Errors
    /// [`RunError::AlreadyCompleted`], [`RunError::AlreadyFailed`] or
    /// [`RunError::StillRunning`] for a run that is not paused, here or in the store.
    pub(crate) async fn claim_paused(&mut self) -> Result<(), RunError> {
        self.ensure_paused()?;
        if let Some(store) = self.graph.checkpointer.clone() {
            let mut claim = self.record(
                RunStatus::Running,
                self.state_json_as_read()?,
                Timestamp::now(),
                None,
            );
            claim.interrupts.clear();
            if !store.claim_run(&claim, RunStatus::Paused).await? {
                return Err(RunError::StillRunning {
                    run_id: self.scope.run_id.clone(),
                });
            }
        }
        self.progress.phase = Phase::Running;
        Ok(())
    }

    pub(crate) fn emit_forked(&self, parent: CheckpointRef) {
        self.emit(|| Event::RunForked {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.progress.step,
            parent,
        });
    }

    pub(crate) fn emit_retried(&self, checkpoint: u64) {
        self.emit(|| Event::RunRetried {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.progress.step,
            checkpoint,
        });
    }
}
