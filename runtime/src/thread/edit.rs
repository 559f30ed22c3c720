//! Editing a thread and branching it, as LangGraph's time travel does: `update_state` on the
//! thread's state or on an older checkpoint of its history, taking an edit up, and a fork that
//! runs again from a checkpoint.
//!
//! Each makes a new run on the thread — a branch of the checkpoint it starts from, named as its
//! parent — and makes it the thread's newest, so that the thread's state and history follow the
//! branch and the runs before it stay as they were. An edit is recorded as *parked*: paused
//! with no question, so that no worker runs what the edit leads to until
//! [`Thread::proceed`] asks for it (what LangGraph does for a run with no input after
//! `update_state`). A new run with input on an edited thread goes on from the edited state.

use super::{Base, Thread};
use crate::checkpoint::{CheckpointLabel, CheckpointRef, Name, ThreadRecord};
use crate::errors::RunError;
use crate::runner::Run;
use crate::state::GraphState;
use crate::travel::copy_children;

impl<S: GraphState + Default> Thread<S> {
    /// Edits the thread's state as if node `as_node` had written `update`: the reducers fold it
    /// in, and the nodes `as_node`'s edges lead to (its router seeing the edited state) are what
    /// the thread has pending, in place of what it had. Returns the edit's checkpoint (labelled
    /// `update`), now the thread's state. On a thread with no run yet, the state's default is
    /// edited.
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
    ///     topic: String,
    ///     #[reducer(append)]
    ///     log: Vec<String>,
    /// }
    ///
    /// let mut graph = GraphBuilder::<Draft>::new("Writer");
    /// graph
    ///     .add_node_fn("plan", |_, _| async move { Ok(DraftUpdate::default().log("plan").into()) })
    ///     .add_node_fn("write", |draft: Arc<Draft>, _| async move {
    ///         Ok(DraftUpdate::default().log(format!("write {}", draft.topic)).into())
    ///     })
    ///     .add_edge(START, "plan")
    ///     .add_edge("plan", "write")
    ///     .add_edge("write", END)
    ///     .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    /// let graph = graph.compile()?;
    ///
    /// let thread = graph.create_thread(Default::default()).await?;
    /// thread.invoke(DraftUpdate::default().topic("tea".to_owned())).await?;
    ///
    /// // Edited as if `plan` had chosen another topic: `write` is pending, and runs when asked.
    /// thread.update_state(DraftUpdate::default().topic("coffee".to_owned()), "plan").await?;
    /// let edited = thread.state().await?.expect("the thread has run");
    /// assert_eq!(edited.next, ["write"]);
    /// let done = thread.proceed().await?.run_to_end().await?;
    /// assert_eq!(done.state().log, ["plan", "write tea", "write coffee"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// [`RunError::ThreadBusy`] while the thread's newest run is running, or when another run
    /// was started on it first; [`RunError::UnknownNode`] for an `as_node` that is not a node;
    /// [`RunError::UndeclaredTarget`] when its router names a target it does not declare;
    /// [`RunError::MergeConflict`] for an update the reducers refuse; as
    /// [`start`](Self::start) otherwise.
    pub async fn update_state(
        &self,
        update: S::Update,
        as_node: &str,
    ) -> Result<CheckpointRef, RunError> {
        let record = self.record().await?;
        let from = self.free(&record).await?;
        self.edit(record, from, update, as_node).await
    }

    /// [`update_state`](Self::update_state) on checkpoint `at` of the thread's history rather
    /// than on its state: the edit is a branch of `at`, and the thread goes on from it.
    ///
    /// # Errors
    /// As [`update_state`](Self::update_state); [`RunError::NotOnThread`] for a checkpoint of a
    /// run on another thread (or none); [`RunError::CheckpointNotFound`].
    pub async fn update_state_at(
        &self,
        at: &CheckpointRef,
        update: S::Update,
        as_node: &str,
    ) -> Result<CheckpointRef, RunError> {
        let record = self.record().await?;
        self.free(&record).await?;
        self.own(at).await?;
        self.edit(record, Some(at.clone()), update, as_node).await
    }

    /// Takes the thread's edit up: the run [`update_state`](Self::update_state) parked, held by
    /// this process (claimed, its `resume` checkpoint written) to run with
    /// [`Run::run_to_end`], [`Run::stream`] or [`Run::enqueue`].
    ///
    /// # Errors
    /// [`RunError::NothingPending`] for a thread with no run; [`RunError::Answers`] when its
    /// newest run waits for answers (resume it with them); [`RunError::StillRunning`] while it
    /// runs; [`RunError::AlreadyCompleted`], [`RunError::AlreadyFailed`] or
    /// [`RunError::AlreadyCancelled`] when it has ended; the checkpointer's error.
    pub async fn proceed(&self) -> Result<Run<S>, RunError> {
        let record = self.record().await?;
        let Some(head) = record.head else {
            return Err(RunError::NothingPending {
                thread_id: self.thread_id.clone(),
            });
        };
        let mut run = self.graph.load(&head).await?;
        run.unpark().await?;
        Ok(run)
    }

    /// A new run on the thread that runs again from checkpoint `at` of its history: a branch
    /// of `at` (a `fork` checkpoint), made the thread's newest, held by this process to run
    /// with [`Run::run_to_end`], [`Run::stream`] or [`Run::enqueue`]. From a pause, it asks
    /// the pause's questions again.
    ///
    /// # Errors
    /// As [`update_state_at`](Self::update_state_at), without the node's.
    pub async fn fork(&self, at: &CheckpointRef) -> Result<Run<S>, RunError> {
        let record = self.record().await?;
        self.free(&record).await?;
        self.own(at).await?;
        let (mut run, source) = self.graph.branch_at(&at.run_id, at.checkpoint).await?;
        run.place_on(self.thread_id.clone(), Some(at.clone()));
        self.make_newest(&record, &run).await?;
        copy_children(self.store.as_ref(), &source, &source.run_id, run.run_id()).await?;
        run.rehome_children(&source.run_id);
        run.record_start(CheckpointLabel::Fork, &source.nodes)
            .await?;
        run.emit_forked(at.clone());
        Ok(run)
    }

    /// The parked branch of `from` (or of the state's default) with `update` written as
    /// `as_node`, made the thread's newest.
    async fn edit(
        &self,
        record: ThreadRecord,
        from: Option<CheckpointRef>,
        update: S::Update,
        as_node: &str,
    ) -> Result<CheckpointRef, RunError> {
        let mut run = match &from {
            Some(at) => self.graph.branch_at(&at.run_id, at.checkpoint).await?.0,
            None => Run::new(self.graph.clone(), S::default()),
        };
        run.write_as(as_node, update)?;
        run.place_on(self.thread_id.clone(), from.clone());
        run.park();
        self.make_newest(&record, &run).await?;
        run.record_start(CheckpointLabel::Update, &[Name::from(as_node)])
            .await?;
        if let Some(parent) = from {
            run.emit_forked(parent);
        }
        Ok(CheckpointRef {
            run_id: run.run_id().clone(),
            checkpoint: run.checkpoints_written(),
        })
    }

    /// The checkpoint the thread stands at, or [`RunError::ThreadBusy`] while it runs.
    async fn free(&self, record: &ThreadRecord) -> Result<Option<CheckpointRef>, RunError> {
        match self.base(record).await? {
            Base::From(from) => Ok(from),
            Base::Busy(run_id) => Err(RunError::ThreadBusy {
                thread_id: self.thread_id.clone(),
                run_id,
            }),
        }
    }

    /// Refuses a checkpoint of a run that is not on this thread.
    async fn own(&self, at: &CheckpointRef) -> Result<(), RunError> {
        let run = self.store.load_run(&at.run_id).await?;
        if run.is_some_and(|run| run.thread.as_ref() == Some(&self.thread_id)) {
            Ok(())
        } else {
            Err(RunError::NotOnThread {
                thread_id: self.thread_id.clone(),
                run_id: at.run_id.clone(),
            })
        }
    }

    /// Makes `run` the thread's newest, if the thread has not moved on since `record` was read.
    async fn make_newest(&self, record: &ThreadRecord, run: &Run<S>) -> Result<(), RunError> {
        if self.moved_to(record, run.run_id()).await? {
            return Ok(());
        }
        let now = self.record().await?;
        Err(RunError::ThreadBusy {
            thread_id: self.thread_id.clone(),
            run_id: now.head.unwrap_or_else(|| run.run_id().clone()),
        })
    }
}
