//! Time travel and retries: a run's history, branches forked from any of its checkpoints
//! (replayed as they were, or with the state edited), and a failed run taken up again.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crate::checkpoint::{
    Checkpoint, CheckpointLabel, CheckpointRef, Checkpointer, Name, RunRecord, RunStatus,
};
use crate::continuation::Continuation;
use crate::errors::RunError;
use crate::graph::CompiledGraph;
use crate::id::{RunId, Timestamp};
use crate::interrupt::Interrupt;
use crate::runner::Run;
use crate::state::GraphState;

/// One checkpoint of a run's history, its state read as the graph's state type.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot<S> {
    /// The run that wrote it (for a branch's history, an ancestor's checkpoints come after the
    /// branch's own).
    pub run_id: RunId,
    /// Its id in that run: what [`replay`](CompiledGraph::replay) and
    /// [`update_state`](CompiledGraph::update_state) take.
    pub checkpoint: u64,
    /// Super-steps completed.
    pub step: u64,
    /// Which moment it is.
    pub label: CheckpointLabel,
    /// The nodes the step before it ran, in declaration order.
    pub ran: Vec<Name>,
    /// The nodes of the next super-step: those its edges lead to, in declaration order, then
    /// the node of each branch sent to run in it, once per branch, in the order the branches
    /// run (empty at the end). At a pause, also the node each question resumes to
    /// ([`resume_to`](crate::interrupt::InterruptRequest::resume_to)), once answered.
    pub next: Vec<Name>,
    /// Waiting joins some of whose sources are done: the node joined into → those sources, in
    /// declaration order (it runs once the rest are done too).
    pub joins: BTreeMap<Name, Vec<Name>>,
    /// At a pause: what was asked.
    pub interrupts: Vec<Interrupt>,
    /// The committed state.
    pub state: S,
    /// When it was written.
    pub created_at: Timestamp,
}

impl<S> Snapshot<S> {
    /// Where it is: its run and checkpoint id.
    pub fn at(&self) -> CheckpointRef {
        CheckpointRef {
            run_id: self.run_id.clone(),
            checkpoint: self.checkpoint,
        }
    }
}

impl<S: GraphState> CompiledGraph<S> {
    /// The run's checkpoints with their states, newest first; for a branch, followed by those
    /// of the run it was forked from, from the checkpoint it was forked at down (and so on up
    /// its ancestry). Nothing is written.
    ///
    /// # Errors
    /// [`RunError::NoCheckpointer`], [`RunError::RunNotFound`] (for the run or an ancestor),
    /// [`RunError::WrongGraph`]; [`RunError::State`] for a state this graph's type cannot read;
    /// the checkpointer's error.
    pub async fn history(&self, run_id: &RunId) -> Result<Vec<Snapshot<S>>, RunError> {
        self.history_at_most(run_id, usize::MAX).await
    }

    /// [`history`](Self::history), the first `limit` snapshots only: ancestors past them are
    /// not read (a thread's history is its newest run's, back through the runs before).
    pub(crate) async fn history_at_most(
        &self,
        run_id: &RunId,
        limit: usize,
    ) -> Result<Vec<Snapshot<S>>, RunError> {
        let store = self.store_for(run_id)?;
        self.record_of(store.as_ref(), run_id).await?;
        lineage(store.as_ref(), run_id, limit)
            .await?
            .into_iter()
            .map(snapshot)
            .collect()
    }

    /// A new run — a branch of `run_id` — that starts from its checkpoint `checkpoint` (its
    /// state, next nodes, visits, and at a pause its questions) and runs to the end or the next
    /// pause — or, with [`Continuation::stream`], streams it. The original run and its history
    /// are left as they are; the branch's record names it as
    /// [`parent`](crate::checkpoint::RunRecord::parent), and its first checkpoint is labelled
    /// `fork`. Replaying a pause gives a paused branch, to answer differently.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use serde::{Deserialize, Serialize};
    /// use trellis::checkpoint::InMemoryCheckpointer;
    /// use trellis::{END, GraphBuilder, GraphState, START};
    ///
    /// #[derive(Clone, Default, Serialize, Deserialize, GraphState)]
    /// struct Draft {
    ///     #[reducer(append)]
    ///     log: Vec<String>,
    ///     tone: Option<String>,
    /// }
    ///
    /// let mut graph = GraphBuilder::<Draft>::new("Drafting");
    /// graph
    ///     .add_node_fn("plan", |_, _| async { Ok(DraftUpdate::default().log("plan").into()) })
    ///     .add_node_fn("write", |draft, _| async move {
    ///         let tone = draft.tone.clone().unwrap_or_else(|| "plain".into());
    ///         Ok(DraftUpdate::default().log(format!("write ({tone})")).into())
    ///     })
    ///     .add_edge(START, "plan")
    ///     .add_edge("plan", "write")
    ///     .add_edge("write", END)
    ///     .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    /// let graph = graph.compile()?;
    /// let first = graph.invoke(Draft::default()).await?;
    ///
    /// // Newest first: complete (after write), step (after plan), start.
    /// let history = graph.history(first.run_id()).await?;
    /// let after_plan = &history[1];
    /// assert_eq!(after_plan.ran, ["plan"]);
    /// assert_eq!(after_plan.next, ["write"]);
    ///
    /// // Run `write` again from there, as it was…
    /// let again = graph.replay(first.run_id(), after_plan.checkpoint).await?;
    /// assert_eq!(again.state().log, ["plan", "write (plain)"]);
    ///
    /// // …or with the state edited as if `plan` had chosen a tone.
    /// let edit = DraftUpdate::default().tone(Some("warm".into()));
    /// let branch = graph.update_state(first.run_id(), after_plan.checkpoint, edit, "plan").await?;
    /// let warm = graph.continue_run(&branch).await?;
    /// assert_eq!(warm.state().log, ["plan", "write (warm)"]);
    /// assert_eq!(graph.history(first.run_id()).await?.len(), 3, "the original is untouched");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// As [`fork`](Self::fork), then as [`invoke`](Self::invoke).
    pub fn replay(&self, run_id: &RunId, checkpoint: u64) -> Continuation<'_, S> {
        let run_id = run_id.clone();
        Continuation::new(async move { self.fork(&run_id, checkpoint).await })
    }

    /// The branch [`replay`](Self::replay) runs, recorded (its `fork` checkpoint written) and
    /// held by this process but not run: to drive step by step with [`Run::step`].
    ///
    /// # Errors
    /// [`RunError::NoCheckpointer`], [`RunError::RunNotFound`], [`RunError::WrongGraph`],
    /// [`RunError::CheckpointNotFound`]; [`RunError::Unresumable`] for a checkpoint naming a
    /// node this graph no longer has; the checkpointer's or the state's error.
    pub async fn fork(&self, run_id: &RunId, checkpoint: u64) -> Result<Run<S>, RunError> {
        let (mut run, source) = self.branch_at(run_id, checkpoint).await?;
        let parent = CheckpointRef {
            run_id: source.run_id.clone(),
            checkpoint,
        };
        let store = self.store_for(run_id)?;
        copy_children(store.as_ref(), &source, &source.run_id, run.run_id()).await?;
        run.rehome_children(&source.run_id);
        run.record_start(CheckpointLabel::Fork, &source.nodes)
            .await?;
        run.emit_forked(parent);
        Ok(run)
    }

    /// A new run — a branch of `run_id` — whose state is that of checkpoint `checkpoint` with
    /// `update` folded in by the reducers as if node `as_node` had written it, and whose next
    /// nodes are those `as_node`'s edges lead to (its router seeing the edited state), in place
    /// of what was pending there. Returns the branch's id; it is recorded ready to run (its first
    /// checkpoint labelled `update`), for [`continue_run`](Self::continue_run) or a
    /// [`Worker`](crate::worker::Worker). The original run is left as it is.
    ///
    /// # Errors
    /// As [`fork`](Self::fork); [`RunError::UnknownNode`] for an `as_node` that is not a node;
    /// [`RunError::UndeclaredTarget`] when its router names a target it does not declare.
    pub async fn update_state(
        &self,
        run_id: &RunId,
        checkpoint: u64,
        update: S::Update,
        as_node: &str,
    ) -> Result<RunId, RunError> {
        let (mut run, source) = self.branch_at(run_id, checkpoint).await?;
        run.write_as(as_node, update)?;
        run.record_start(CheckpointLabel::Update, &[Name::from(as_node)])
            .await?;
        run.emit_forked(CheckpointRef {
            run_id: source.run_id,
            checkpoint,
        });
        run.enqueue().await
    }

    /// Takes a failed run up again from its last committed checkpoint — once the cause of the
    /// failure is fixed — and runs it to the end or the next pause (or streams it, or leaves it
    /// to a worker: [`Continuation`]): the step that failed runs again (a failed node, its
    /// branch siblings), and everything committed before it is kept.
    /// A run that failed while its answers were being folded in is paused again, with the same
    /// questions. The run keeps its id; a `retry` checkpoint marks where it went on from.
    ///
    /// # Errors
    /// [`RunError::NotFailed`] for a run that is not failed (or that another process retried
    /// first); [`RunError::Unresumable`] for a run that failed before its first checkpoint; as
    /// [`fork`](Self::fork) otherwise, then as [`invoke`](Self::invoke).
    pub fn retry(&self, run_id: &RunId) -> Continuation<'_, S> {
        let run_id = run_id.clone();
        Continuation::new(async move { self.take_up(&run_id).await })
    }

    /// A failed run claimed by this process from its last committed checkpoint, its `retry`
    /// checkpoint written.
    pub(crate) async fn take_up(&self, run_id: &RunId) -> Result<Run<S>, RunError> {
        let store = self.store_for(run_id)?;
        let record = self.record_of(store.as_ref(), run_id).await?;
        if !matches!(record.status, RunStatus::Failed | RunStatus::Cancelled) {
            return Err(RunError::NotFailed {
                run_id: record.run_id,
                status: record.status,
            });
        }
        let checkpoints = store.list_checkpoints(run_id).await?;
        let last_id = checkpoints.last().map_or(0, |c| c.id);
        let committed = checkpoints
            .into_iter()
            .rev()
            .find(|c| c.label != CheckpointLabel::Failed)
            .ok_or_else(|| RunError::Unresumable {
                run_id: run_id.clone(),
                reason: "it failed before its first checkpoint was written".to_owned(),
            })?;
        let from = committed.id;
        let mut run = Run::at_checkpoint(
            self.clone(),
            record.run_id.clone(),
            record.created_at,
            record.parent,
            record.thread,
            committed,
            last_id,
        )?;
        run.set_metadata(record.metadata);
        // Of two processes retrying one run, one claims it; the other sees it is not failed.
        if !store.claim_run(&run.claim_record()?, record.status).await? {
            let status = store
                .load_run(run_id)
                .await?
                .map_or(RunStatus::Failed, |r| r.status);
            return Err(RunError::NotFailed {
                run_id: run_id.clone(),
                status,
            });
        }
        run.record_start(CheckpointLabel::Retry, &[]).await?;
        run.emit_retried(from);
        Ok(run)
    }

    /// A new run at `run_id`'s checkpoint `checkpoint`, not yet recorded, and that checkpoint.
    pub(crate) async fn branch_at(
        &self,
        run_id: &RunId,
        checkpoint: u64,
    ) -> Result<(Run<S>, Checkpoint), RunError> {
        let store = self.store_for(run_id)?;
        let record = self.record_of(store.as_ref(), run_id).await?;
        let source = store
            .checkpoint(&record.run_id, checkpoint)
            .await?
            .ok_or_else(|| RunError::CheckpointNotFound {
                run_id: record.run_id.clone(),
                checkpoint,
            })?;
        let parent = CheckpointRef {
            run_id: record.run_id,
            checkpoint,
        };
        let run = Run::at_checkpoint(
            self.clone(),
            RunId::new(),
            Timestamp::now(),
            Some(parent.clone()),
            None,
            source.clone(),
            0,
        )?;
        // What the nodes keep beside the checkpoints goes along, before the branch exists.
        if let Some(branching) = &self.branching {
            branching
                .branch(&parent, source.step, run.run_id())
                .await
                .map_err(|error| RunError::branch(run.run_id(), &parent, error.as_ref()))?;
        }
        Ok((run, source))
    }

    pub(crate) fn store_for(&self, run_id: &RunId) -> Result<Arc<dyn Checkpointer>, RunError> {
        self.checkpointer
            .clone()
            .ok_or_else(|| RunError::NoCheckpointer {
                graph: self.name().to_owned(),
                run_id: run_id.clone(),
            })
    }

    /// The stored record of a run of this graph.
    pub(crate) async fn record_of(
        &self,
        store: &dyn Checkpointer,
        run_id: &RunId,
    ) -> Result<RunRecord, RunError> {
        let record = store
            .load_run(run_id)
            .await?
            .ok_or_else(|| RunError::RunNotFound {
                run_id: run_id.clone(),
            })?;
        if record.graph != self.name() {
            return Err(RunError::WrongGraph {
                run_id: record.run_id,
                expected: self.name().to_owned(),
                found: record.graph.to_string(),
            });
        }
        Ok(record)
    }
}

/// A run's checkpoints newest first, then — for a branch or a thread's run — those of the run
/// it went on from, from the checkpoint it went on from down, and so on up its ancestry; at most
/// `limit`, and ancestors past them are not read. Untyped: what
/// [`CompiledGraph::history`] reads, and what a server answers without the graph's state type.
///
/// # Errors
/// [`RunError::RunNotFound`] for the run or an ancestor; [`RunError::Unresumable`] for a run
/// recorded as its own ancestor; the checkpointer's error.
pub async fn lineage(
    store: &dyn Checkpointer,
    run_id: &RunId,
    limit: usize,
) -> Result<Vec<Checkpoint>, RunError> {
    let mut checkpoints = Vec::new();
    let mut next = Some((run_id.clone(), u64::MAX));
    let mut seen = HashSet::new();
    while let Some((run_id, up_to)) = next.take() {
        if !seen.insert(run_id.clone()) {
            // Only a store edited by hand can make a run its own ancestor.
            return Err(RunError::Unresumable {
                run_id,
                reason: "it is recorded as its own ancestor".to_owned(),
            });
        }
        let record = store
            .load_run(&run_id)
            .await?
            .ok_or_else(|| RunError::RunNotFound {
                run_id: run_id.clone(),
            })?;
        for checkpoint in store.list_checkpoints(&run_id).await?.into_iter().rev() {
            if checkpoints.len() == limit {
                return Ok(checkpoints);
            }
            if checkpoint.id <= up_to {
                checkpoints.push(checkpoint);
            }
        }
        next = record.parent.map(|p| (p.run_id, p.checkpoint));
    }
    Ok(checkpoints)
}

// Where a checkpoint goes on to: what a snapshot's `next` and a server's thread state show.
impl Checkpoint {
    /// The nodes the run goes on with from here: those its edges led to, then each branch sent
    /// to run next, then — at a question asked inside a node — the node its answer leads to
    /// (the frontier is empty until the answer comes). What a history snapshot's `next` shows.
    pub fn next_nodes(&self) -> Vec<Name> {
        let mut next: Vec<Name> = self
            .frontier
            .iter()
            .cloned()
            .chain(self.sends.iter().map(|send| Name::from(&*send.node)))
            .collect();
        for interrupt in &self.interrupts {
            if let Some(to) = interrupt.request.resume_to.as_deref()
                && interrupt.point == crate::interrupt::InterruptPoint::Node
                && !interrupt.is_of_branch()
                && to != crate::END
                && !next.iter().any(|name| &**name == to)
            {
                next.push(Name::from(to));
            }
        }
        next
    }
}

pub(crate) fn snapshot<S: GraphState>(checkpoint: Checkpoint) -> Result<Snapshot<S>, RunError> {
    let state = S::deserialize(&*checkpoint.state).map_err(|source| RunError::State {
        run_id: checkpoint.run_id.clone(),
        action: "read from",
        source,
    })?;
    let next = checkpoint.next_nodes();
    Ok(Snapshot {
        run_id: checkpoint.run_id,
        checkpoint: checkpoint.id,
        step: checkpoint.step,
        label: checkpoint.label,
        ran: checkpoint.nodes,
        next,
        joins: checkpoint.joins,
        interrupts: checkpoint.interrupts,
        state,
        created_at: checkpoint.created_at,
    })
}

/// Gives a branch at checkpoint `at` of run `from` its own copies of the subgraph runs it
/// waits on (a pause inside a child, or a child answered and still to continue), as they stood
/// then: each child's last checkpoint written no later than `at`, under `to`'s namespace, with
/// the original child as its parent. Recursively, for children of children.
pub(crate) async fn copy_children(
    store: &dyn Checkpointer,
    at: &Checkpoint,
    from: &RunId,
    to: &RunId,
) -> Result<(), RunError> {
    let mut segments: Vec<String> = at
        .interrupts
        .iter()
        .filter_map(|i| i.id.split_once('/').map(|(segment, _)| segment.to_owned()))
        .collect();
    let prefix = format!("{from}/");
    segments.extend(
        at.children
            .values()
            .filter_map(|child| child.as_str().strip_prefix(&prefix).map(str::to_owned)),
    );
    segments.sort();
    segments.dedup();
    for segment in segments {
        let (child_from, child_to) = (
            RunId::from(format!("{from}/{segment}")),
            RunId::from(format!("{to}/{segment}")),
        );
        let Some(record) = store.load_run(&child_from).await? else {
            continue;
        };
        let Some(mut checkpoint) = store
            .list_checkpoints(&child_from)
            .await?
            .into_iter()
            .rev()
            .find(|c| c.created_at <= at.created_at)
        else {
            continue;
        };
        let source = checkpoint.clone();
        let now = Timestamp::now();
        let from_prefix = format!("{child_from}/");
        for child in checkpoint.children.values_mut() {
            if let Some(rest) = child.as_str().strip_prefix(&from_prefix) {
                *child = RunId::from(format!("{child_to}/{rest}"));
            }
        }
        checkpoint.run_id = child_to.clone();
        checkpoint.id = 1;
        checkpoint.created_at = now;
        let paused = !checkpoint.interrupts.is_empty();
        let copy = RunRecord {
            run_id: child_to.clone(),
            graph: record.graph,
            status: if paused {
                RunStatus::Paused
            } else {
                RunStatus::Running
            },
            created_at: now,
            updated_at: now,
            last_node: checkpoint.nodes.last().cloned(),
            steps: checkpoint.step,
            state: checkpoint.state.clone(),
            interrupts: checkpoint.interrupts.clone(),
            error: None,
            transitions: record.transitions,
            // A paused copy is claimed by whoever answers it; a running one by whoever
            // continues it (`subgraph::reopen` takes it over).
            owner: None,
            lease_until: None,
            parent: Some(CheckpointRef {
                run_id: child_from.clone(),
                checkpoint: source.id,
            }),
            thread: None,
            metadata: record.metadata.clone(),
        };
        store.save_step(copy, checkpoint.clone()).await?;
        Box::pin(copy_children(store, &source, &child_from, &child_to)).await?;
    }
    Ok(())
}
