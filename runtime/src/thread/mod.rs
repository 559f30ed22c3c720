//! Threads: state that outlives a run. Each run on a thread starts from the state the thread's
//! newest run committed last, with the run's input folded in by the state's reducers — a chat
//! appends a message and goes on.
//!
//! A thread is a record in the checkpointer ([`ThreadRecord`]) and the runs that name it
//! ([`RunRecord::thread`]), each naming the checkpoint it went on from as its parent; its
//! history is that chain, newest first. One run at a time: of two started at once from the
//! same state one wins, and a run started while the thread's newest run is still running does
//! what its [`Multitask`] says — refused, the running run interrupted or rolled back, or
//! waiting for it. A run started while the newest one is paused goes on from the pause's state
//! and leaves the question unanswered (as LangGraph does for new input on an interrupted
//! thread).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use serde::{Deserialize, Serialize};
//! use trellis::checkpoint::InMemoryCheckpointer;
//! use trellis::{END, GraphBuilder, GraphState, START};
//!
//! #[derive(Clone, Default, Serialize, Deserialize, GraphState)]
//! struct Chat {
//!     #[reducer(append)]
//!     messages: Vec<String>,
//! }
//!
//! let mut graph = GraphBuilder::<Chat>::new("Echo");
//! graph
//!     .add_node_fn("reply", |chat, _| async move {
//!         let heard = chat.messages.last().cloned().unwrap_or_default();
//!         Ok(ChatUpdate::default().messages(format!("you said {heard}")).into())
//!     })
//!     .add_edge(START, "reply")
//!     .add_edge("reply", END)
//!     .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
//! let graph = graph.compile()?;
//!
//! let thread = graph.create_thread(Default::default()).await?;
//! thread.invoke(ChatUpdate::default().messages("hi")).await?;
//! let second = thread.invoke(ChatUpdate::default().messages("bye")).await?;
//! assert_eq!(second.state().messages, ["hi", "you said hi", "bye", "you said bye"]);
//!
//! let state = thread.state().await?.expect("the thread has run");
//! assert_eq!(state.state.messages.len(), 4);
//! assert_eq!(thread.runs(10, 0).await?.len(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod copy;
mod edit;

pub use copy::{copy_stored, delete_stored};

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::cancel::cancel_stored;
use crate::checkpoint::Name;
use crate::checkpoint::{CheckpointRef, Checkpointer, RunRecord, RunStatus, ThreadRecord};
use crate::errors::RunError;
use crate::graph::CompiledGraph;
use crate::id::{RunId, ThreadId, Timestamp};
use crate::interrupt::Breakpoints;
use crate::runner::stream::{RunStream, StreamModes};
use crate::runner::{LEASE, Outcome, Run};
use crate::state::GraphState;
use crate::travel::{Snapshot, snapshot};

/// JSON object kept with a thread.
pub type Metadata = serde_json::Map<String, serde_json::Value>;

/// A thread of one graph, as [`CompiledGraph::thread`] and
/// [`CompiledGraph::create_thread`] give it: a handle, cheap to clone; everything it reads and
/// writes is in the graph's checkpointer.
#[derive(Clone)]
pub struct Thread<S: GraphState> {
    graph: CompiledGraph<S>,
    store: Arc<dyn Checkpointer>,
    thread_id: ThreadId,
}

impl<S: GraphState> CompiledGraph<S> {
    /// A new thread with a new id and `metadata`, recorded in the checkpointer.
    ///
    /// # Errors
    /// [`RunError::NoThreadStore`]; the checkpointer's error.
    pub async fn create_thread(&self, metadata: Metadata) -> Result<Thread<S>, RunError> {
        self.create_thread_with_id(ThreadId::new(), metadata).await
    }

    /// A new thread called `thread_id` (a client's own id), recorded in the checkpointer.
    ///
    /// # Errors
    /// [`RunError::ThreadExists`] when a thread has that id; as
    /// [`create_thread`](Self::create_thread) otherwise.
    pub async fn create_thread_with_id(
        &self,
        thread_id: ThreadId,
        metadata: Metadata,
    ) -> Result<Thread<S>, RunError> {
        let store = self.thread_store()?;
        let record = ThreadRecord::new(thread_id.clone(), metadata);
        if !store.create_thread(&record).await? {
            return Err(RunError::ThreadExists { thread_id });
        }
        Ok(Thread {
            graph: self.clone(),
            store,
            thread_id,
        })
    }

    /// The stored thread `thread_id`.
    ///
    /// # Errors
    /// [`RunError::ThreadNotFound`]; as [`create_thread`](Self::create_thread) otherwise.
    pub async fn thread(&self, thread_id: &ThreadId) -> Result<Thread<S>, RunError> {
        let store = self.thread_store()?;
        if store.load_thread(thread_id).await?.is_none() {
            return Err(RunError::ThreadNotFound {
                thread_id: thread_id.clone(),
            });
        }
        Ok(Thread {
            graph: self.clone(),
            store,
            thread_id: thread_id.clone(),
        })
    }

    fn thread_store(&self) -> Result<Arc<dyn Checkpointer>, RunError> {
        self.checkpointer
            .clone()
            .ok_or_else(|| RunError::NoThreadStore {
                graph: self.name().to_owned(),
            })
    }
}

impl<S: GraphState> Thread<S> {
    /// The thread's id.
    pub fn id(&self) -> &ThreadId {
        &self.thread_id
    }

    /// The thread's record as stored now.
    ///
    /// # Errors
    /// [`RunError::ThreadNotFound`]; the checkpointer's error.
    pub async fn record(&self) -> Result<ThreadRecord, RunError> {
        self.store
            .load_thread(&self.thread_id)
            .await?
            .ok_or_else(|| RunError::ThreadNotFound {
                thread_id: self.thread_id.clone(),
            })
    }

    /// Replaces the metadata kept with the thread.
    ///
    /// # Errors
    /// [`RunError::ThreadNotFound`]; the checkpointer's error.
    pub async fn set_metadata(&self, metadata: &Metadata) -> Result<(), RunError> {
        if self
            .store
            .set_thread_metadata(&self.thread_id, metadata, Timestamp::now())
            .await?
        {
            Ok(())
        } else {
            Err(RunError::ThreadNotFound {
                thread_id: self.thread_id.clone(),
            })
        }
    }

    /// The thread's runs, newest first, skipping `offset`, at most `limit`.
    ///
    /// # Errors
    /// The checkpointer's error.
    pub async fn runs(&self, limit: usize, offset: usize) -> Result<Vec<RunRecord>, RunError> {
        Ok(self
            .store
            .thread_runs(&self.thread_id, limit, offset)
            .await?)
    }

    /// The thread's newest checkpoint — the state a new run goes on from, what was asked at a
    /// pause, what runs next — or `None` before its first run.
    ///
    /// # Errors
    /// The checkpointer's error; [`RunError::State`] for a state this graph's type cannot read.
    pub async fn state(&self) -> Result<Option<Snapshot<S>>, RunError> {
        let Some(newest) = self.runs(1, 0).await?.pop() else {
            return Ok(None);
        };
        match self.store.latest_checkpoint(&newest.run_id).await? {
            Some(checkpoint) => snapshot(checkpoint).map(Some),
            None => Ok(None),
        }
    }

    /// The thread's checkpoints with their states, newest first — its newest run's, then
    /// those of the run it went on from, from the checkpoint it went on from down, and so on —
    /// at most `limit`. A run set aside by a [`Multitask::Rollback`] is not among them.
    ///
    /// # Errors
    /// As [`state`](Self::state).
    pub async fn history(&self, limit: usize) -> Result<Vec<Snapshot<S>>, RunError> {
        match self.runs(1, 0).await?.pop() {
            Some(newest) => self.graph.history_at_most(&newest.run_id, limit).await,
            None => Ok(Vec::new()),
        }
    }
}

/// What a run started on a thread does when the thread's newest run is still running (what
/// LangGraph calls the `multitask_strategy` of a run created on a busy thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Multitask {
    /// It is refused: [`RunError::ThreadBusy`].
    #[default]
    Reject,
    /// The running run is cancelled — it stops at its next step boundary, the step in flight
    /// never committed, what it committed kept — and the new run goes on from its last
    /// committed state.
    Interrupt,
    /// The running run is cancelled and set aside: the new run goes on from the state the
    /// cancelled one started from, as if it had never run. The cancelled run is kept (its
    /// record says why), but is no longer in the thread's history.
    Rollback,
    /// It waits for the running run to end (complete, pause, fail), then goes on from it. The
    /// input waits in this process: [`Thread::start_with`] returns once the run has started.
    Enqueue,
}

/// How a run on a thread starts: what it does on a busy thread ([`Multitask`]), and where it
/// pauses besides its graph's own interrupts ([`Breakpoints`]: LangGraph's
/// `interrupt_before`/`interrupt_after` at run creation). A [`Multitask`] converts into one
/// with no breakpoints.
///
/// ```
/// use trellis::thread::{Multitask, StartOptions};
///
/// let options = StartOptions::from(Multitask::Enqueue).interrupt_before(["send"]);
/// assert_eq!(options.breakpoints.before, ["send"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StartOptions {
    /// What to do when the thread's newest run is still running.
    pub multitask: Multitask,
    /// Where the run pauses besides its graph's interrupts; it goes on past them with
    /// [`Answers::Proceed`](crate::resume::Answers::Proceed).
    pub breakpoints: Breakpoints,
    /// What the starter says about the run, kept in its record
    /// ([`RunRecord::metadata`]).
    pub metadata: Metadata,
}

impl StartOptions {
    /// Pauses the run before each of `nodes` runs (`*` for every node).
    #[must_use]
    pub fn interrupt_before<N: Into<Name>>(mut self, nodes: impl IntoIterator<Item = N>) -> Self {
        self.breakpoints.before = nodes.into_iter().map(Into::into).collect();
        self
    }

    /// Keeps `metadata` in the run's record.
    #[must_use]
    pub fn metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// Pauses the run after each of `nodes` runs (`*` for every node).
    #[must_use]
    pub fn interrupt_after<N: Into<Name>>(mut self, nodes: impl IntoIterator<Item = N>) -> Self {
        self.breakpoints.after = nodes.into_iter().map(Into::into).collect();
        self
    }
}

impl From<Multitask> for StartOptions {
    fn from(multitask: Multitask) -> Self {
        StartOptions {
            multitask,
            breakpoints: Breakpoints::default(),
            metadata: Metadata::new(),
        }
    }
}

impl std::fmt::Display for Multitask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Multitask::Reject => "reject",
            Multitask::Interrupt => "interrupt",
            Multitask::Rollback => "rollback",
            Multitask::Enqueue => "enqueue",
        })
    }
}

/// A thread's newest run, as far as a new run on it is concerned.
pub(crate) enum Newest {
    /// It runs (or is being started): the thread is busy with it.
    Busy(RunId),
    /// It has ended or paused (none before the thread's first run).
    Idle(Option<Box<RunRecord>>),
}

/// The thread's newest run: its head — or, for a head never recorded (its starter died between
/// moving the head and its first write, which a lease's time without that write tells), the
/// newest run recorded.
pub(crate) async fn newest(
    store: &dyn Checkpointer,
    record: &ThreadRecord,
) -> Result<Newest, RunError> {
    let Some(head) = &record.head else {
        return Ok(Newest::Idle(None));
    };
    Ok(match store.load_run(head).await? {
        Some(run) if run.status == RunStatus::Running => Newest::Busy(run.run_id),
        Some(run) => Newest::Idle(Some(Box::new(run))),
        None if record.updated_at.plus(LEASE) > Timestamp::now() => Newest::Busy(head.clone()),
        None => Newest::Idle(
            store
                .thread_runs(&record.thread_id, 1, 0)
                .await?
                .pop()
                .map(Box::new),
        ),
    })
}

/// Where a new run on a thread goes on from, once the thread is free.
enum Base {
    /// Free now: go on from this checkpoint (none before the thread's first run).
    From(Option<CheckpointRef>),
    /// Busy with this run.
    Busy(RunId),
}

impl<S: GraphState + Default> Thread<S> {
    /// A new run on the thread, from the state its newest run committed last (the state's
    /// default before the first run) with `input` folded in; recorded (its `start` checkpoint
    /// written, the checkpoint it went on from its [`parent`](RunRecord::parent)) and made the
    /// thread's newest, held by this process but not run: to drive step by step with
    /// [`Run::step`]. On a busy thread it is refused ([`Multitask::Reject`]); see
    /// [`start_with`](Self::start_with).
    ///
    /// # Errors
    /// [`RunError::ThreadBusy`] while the thread's newest run is running, or when another run
    /// was started on it first; [`RunError::ThreadNotFound`]; [`RunError::WrongGraph`] when
    /// the thread's newest run is another graph's; [`RunError::MergeConflict`] for an input
    /// the reducers refuse; the checkpointer's or the state's error.
    pub async fn start(&self, input: S::Update) -> Result<Run<S>, RunError> {
        self.start_with(input, Multitask::Reject).await
    }

    /// [`start`](Self::start), doing what `options` say when the thread's newest run is
    /// still running (a [`Multitask`], or [`StartOptions`] with breakpoints too).
    ///
    /// # Errors
    /// As [`start`](Self::start); with [`Multitask::Interrupt`] and [`Multitask::Rollback`],
    /// as [`cancel_stored`] too; [`RunError::UnknownNode`] for a breakpoint at no node of the
    /// graph, before anything is written.
    pub async fn start_with(
        &self,
        input: S::Update,
        options: impl Into<StartOptions>,
    ) -> Result<Run<S>, RunError> {
        let StartOptions {
            multitask: strategy,
            breakpoints,
            metadata,
        } = options.into();
        // Checked before the thread is touched.
        crate::runner::resume::check_breakpoints(&self.graph, &breakpoints)?;
        loop {
            let record = self.record().await?;
            let from = match self.base(&record).await? {
                Base::From(from) => from,
                Base::Busy(run_id) => match strategy {
                    Multitask::Reject => {
                        return Err(RunError::ThreadBusy {
                            thread_id: self.thread_id.clone(),
                            run_id,
                        });
                    }
                    Multitask::Enqueue => {
                        self.until_ended(&run_id).await?;
                        continue;
                    }
                    Multitask::Interrupt | Multitask::Rollback => {
                        let how = match strategy {
                            Multitask::Rollback => "rolled back",
                            _ => "interrupted",
                        };
                        let reason = format!("{how} by a new run on thread {}", self.thread_id);
                        match cancel_stored(self.store.as_ref(), &run_id, &reason).await {
                            // Ended on its own meanwhile: go on from it as from any other.
                            Ok(_) | Err(RunError::NotCancellable { .. }) => {}
                            Err(error) => return Err(error),
                        }
                        match strategy {
                            Multitask::Rollback => self.stored(&run_id).await?.parent,
                            _ => self.latest(&run_id).await?,
                        }
                    }
                },
            };
            let (base, step, written) = match &from {
                Some(at) => {
                    let (state, step, json, chain) = self.state_at(at).await?;
                    (state, step, Some((at.clone(), json, chain)))
                }
                None => (S::default(), 0, None),
            };
            // The thread's state, committed already: not an input to fold again.
            let mut run = Run::new(self.graph.clone(), base);
            run.set_breakpoints(&breakpoints)?;
            run.set_metadata(metadata.clone());
            // What the nodes keep beside the state goes on too (a conversation's transcript),
            // before the run is the thread's: a run that loses the race leaves a copy no run
            // reads, never a run without its past.
            if let (Some(branching), Some(at)) = (&self.graph.branching, &from) {
                branching
                    .continues(at, step, run.run_id())
                    .await
                    .map_err(|error| RunError::branch(run.run_id(), at, error.as_ref()))?;
            }
            run.on_thread(self.thread_id.clone(), written, input.clone())?;
            if !self.moved_to(&record, run.run_id()).await? {
                // Another run started first: it is now what this one is refused for, or waits
                // for, or cancels.
                if strategy == Multitask::Reject {
                    let now = self.record().await?;
                    return Err(RunError::ThreadBusy {
                        thread_id: self.thread_id.clone(),
                        run_id: now.head.unwrap_or_else(|| run.run_id().clone()),
                    });
                }
                continue;
            }
            run.begin().await?;
            return Ok(run);
        }
    }

    /// [`start`](Self::start), then runs to the end or the first pause. When the run fails,
    /// it is the thread's newest ([`runs`](Self::runs)), to retry or read.
    ///
    /// # Errors
    /// As [`start`](Self::start), then as [`CompiledGraph::invoke`].
    pub async fn invoke(&self, input: S::Update) -> Result<Outcome<S>, RunError> {
        self.start(input).await?.finish().await
    }

    /// [`start_with`](Self::start_with), read as a stream of `modes` as it runs (see
    /// [`CompiledGraph::stream`]).
    ///
    /// # Errors
    /// As [`start_with`](Self::start_with), before the stream exists.
    pub async fn stream(
        &self,
        input: S::Update,
        options: impl Into<StartOptions>,
        modes: impl Into<StreamModes>,
    ) -> Result<RunStream<S>, RunError> {
        let mut stream = self
            .start_with(input, options)
            .await?
            .into_stream(modes.into());
        stream.show_start();
        Ok(stream)
    }

    /// [`start_with`](Self::start_with), leaving the run to a
    /// [`Worker`](crate::worker::Worker): returns its id once it is started.
    ///
    /// # Errors
    /// As [`start_with`](Self::start_with).
    pub async fn enqueue(
        &self,
        input: S::Update,
        options: impl Into<StartOptions>,
    ) -> Result<RunId, RunError> {
        let run = self.start_with(input, options).await?;
        run.enqueue().await
    }

    /// Makes `run_id` the thread's newest, if the thread has not moved on since `record` was
    /// read; `false` when it has.
    async fn moved_to(&self, record: &ThreadRecord, run_id: &RunId) -> Result<bool, RunError> {
        Ok(self
            .store
            .move_thread_head(
                &self.thread_id,
                record.head.as_ref(),
                run_id,
                Timestamp::now(),
            )
            .await?)
    }

    /// Where a new run goes on from: the newest run's last checkpoint, unless it still runs.
    async fn base(&self, record: &ThreadRecord) -> Result<Base, RunError> {
        let newest = match newest(self.store.as_ref(), record).await? {
            Newest::Busy(run_id) => return Ok(Base::Busy(run_id)),
            Newest::Idle(None) => return Ok(Base::From(None)),
            Newest::Idle(Some(run)) => *run,
        };
        if newest.graph != self.graph.name() {
            return Err(RunError::WrongGraph {
                run_id: newest.run_id,
                expected: self.graph.name().to_owned(),
                found: newest.graph.to_string(),
            });
        }
        Ok(Base::From(self.latest(&newest.run_id).await?))
    }

    /// The stored record of `run_id`.
    async fn stored(&self, run_id: &RunId) -> Result<RunRecord, RunError> {
        self.store
            .load_run(run_id)
            .await?
            .ok_or_else(|| RunError::RunNotFound {
                run_id: run_id.clone(),
            })
    }

    /// The run's last checkpoint (for a failed run, its `failed` one: the last committed
    /// state); `None` when it has none.
    async fn latest(&self, run_id: &RunId) -> Result<Option<CheckpointRef>, RunError> {
        Ok(self
            .store
            .latest_checkpoint(run_id)
            .await?
            .map(|checkpoint| CheckpointRef {
                run_id: checkpoint.run_id,
                checkpoint: checkpoint.id,
            }))
    }

    /// The state checkpoint `at` holds, and the step it stands after.
    /// The state of checkpoint `at`, its step, its JSON and how many deltas its store folded
    /// to read it.
    async fn state_at(
        &self,
        at: &CheckpointRef,
    ) -> Result<(S, u64, Arc<serde_json::Value>, u32), RunError> {
        let checkpoint = self
            .store
            .checkpoint(&at.run_id, at.checkpoint)
            .await?
            .ok_or_else(|| RunError::CheckpointNotFound {
                run_id: at.run_id.clone(),
                checkpoint: at.checkpoint,
            })?;
        let state = checkpoint.state_as().map_err(|source| RunError::State {
            run_id: at.run_id.clone(),
            action: "read from",
            source,
        })?;
        Ok((state, checkpoint.step, checkpoint.state, checkpoint.chain))
    }

    /// Waits until `run_id` no longer runs: woken by the store's announcements when it makes
    /// them, else looking again every 50 ms.
    async fn until_ended(&self, run_id: &RunId) -> Result<(), RunError> {
        let mut watch = self
            .store
            .changes()
            .map(|changes| changes.watch_run(run_id));
        loop {
            let pause = std::time::Duration::from_millis(50);
            match self.store.load_run(run_id).await? {
                Some(run) if run.status == RunStatus::Running => {}
                Some(_) => return Ok(()),
                // Being started now (or never to be): the thread is to be read again, soon.
                None => {
                    tokio::time::sleep(pause).await;
                    return Ok(());
                }
            }
            match &mut watch {
                Some(watch) => {
                    let _ = tokio::time::timeout(pause * 20, watch.changed()).await;
                }
                None => tokio::time::sleep(pause).await,
            }
        }
    }
}
