//! Threads: state that outlives a run. Each run on a thread starts from the state the thread's
//! newest run committed last, with the run's input folded in by the state's reducers — a chat
//! appends a message and goes on.
//!
//! A thread is a record in the checkpointer ([`ThreadRecord`]) and the runs that name it
//! ([`RunRecord::thread`]); its history is its runs' checkpoints, newest first. One run at a
//! time: a run started while the thread's newest run is still running is refused
//! ([`RunError::ThreadBusy`]), and of two started at once from the same state one wins. A
//! run started while the newest one is paused goes on from the pause's state and leaves the
//! question unanswered (as LangGraph does for new input on an interrupted thread).
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

use std::sync::Arc;

use crate::checkpoint::{Checkpointer, RunRecord, RunStatus, ThreadRecord};
use crate::errors::RunError;
use crate::graph::CompiledGraph;
use crate::id::{RunId, ThreadId, Timestamp};
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

    /// The thread's checkpoints with their states, newest first — its newest run's, then the
    /// run's before it, and so on — at most `limit`.
    ///
    /// # Errors
    /// As [`state`](Self::state).
    pub async fn history(&self, limit: usize) -> Result<Vec<Snapshot<S>>, RunError> {
        // Runs are read a page at a time: a long thread's history is read only as far back as
        // it is wanted.
        const PAGE: usize = 16;
        let mut snapshots = Vec::new();
        let mut offset = 0;
        while snapshots.len() < limit {
            let runs = self.runs(PAGE, offset).await?;
            for run in &runs {
                for checkpoint in self
                    .store
                    .list_checkpoints(&run.run_id)
                    .await?
                    .into_iter()
                    .rev()
                {
                    if snapshots.len() == limit {
                        return Ok(snapshots);
                    }
                    snapshots.push(snapshot(checkpoint)?);
                }
            }
            if runs.len() < PAGE {
                break;
            }
            offset += PAGE;
        }
        Ok(snapshots)
    }
}

impl<S: GraphState + Default> Thread<S> {
    /// A new run on the thread, from the state its newest run committed last (the state's
    /// default before the first run) with `input` folded in; recorded (its `start` checkpoint
    /// written) and made the thread's newest, held by this process but not run: to drive step
    /// by step with [`Run::step`].
    ///
    /// # Errors
    /// [`RunError::ThreadBusy`] while the thread's newest run is running, or when another run
    /// was started on it first; [`RunError::ThreadNotFound`]; [`RunError::WrongGraph`] when
    /// the thread's newest run is another graph's; [`RunError::MergeConflict`] for an input
    /// the reducers refuse; the checkpointer's or the state's error.
    pub async fn start(&self, input: S::Update) -> Result<Run<S>, RunError> {
        let record = self.record().await?;
        let base = self.base(&record).await?;
        let mut run = self.graph.start(base);
        run.on_thread(self.thread_id.clone(), input)?;
        let moved = self
            .store
            .move_thread_head(
                &self.thread_id,
                record.head.as_ref(),
                run.run_id(),
                Timestamp::now(),
            )
            .await?;
        if !moved {
            let now = self.record().await?;
            return Err(RunError::ThreadBusy {
                thread_id: self.thread_id.clone(),
                run_id: now.head.unwrap_or_else(|| run.run_id().clone()),
            });
        }
        run.begin().await?;
        Ok(run)
    }

    /// [`start`](Self::start), then runs to the end or the first pause. When the run fails,
    /// it is the thread's newest ([`runs`](Self::runs)), to retry or read.
    ///
    /// # Errors
    /// As [`start`](Self::start), then as [`CompiledGraph::invoke`].
    pub async fn invoke(&self, input: S::Update) -> Result<Outcome<S>, RunError> {
        self.start(input).await?.finish().await
    }

    /// [`start`](Self::start), leaving the run to a [`Worker`](crate::worker::Worker): returns
    /// its id at once.
    ///
    /// # Errors
    /// As [`start`](Self::start).
    pub async fn enqueue(&self, input: S::Update) -> Result<RunId, RunError> {
        let run = self.start(input).await?;
        crate::graph::release(run).await
    }

    /// The state a new run goes on from: the newest run's last committed state.
    async fn base(&self, record: &ThreadRecord) -> Result<S, RunError> {
        let busy = |run_id: &RunId| RunError::ThreadBusy {
            thread_id: self.thread_id.clone(),
            run_id: run_id.clone(),
        };
        let newest = match &record.head {
            None => None,
            Some(head) => match self.store.load_run(head).await? {
                Some(run) if run.status == RunStatus::Running => return Err(busy(head)),
                Some(run) => Some(run),
                // Made the head, not yet recorded: being started now — or its starter died
                // in between, which a lease's time without its first write tells.
                None if record.updated_at.plus(LEASE) > Timestamp::now() => {
                    return Err(busy(head));
                }
                None => self.runs(1, 0).await?.pop(),
            },
        };
        let Some(newest) = newest else {
            return Ok(S::default());
        };
        if newest.graph != self.graph.name() {
            return Err(RunError::WrongGraph {
                run_id: newest.run_id,
                expected: self.graph.name().to_owned(),
                found: newest.graph.to_string(),
            });
        }
        newest.state_as().map_err(|source| RunError::State {
            run_id: newest.run_id.clone(),
            action: "read from",
            source,
        })
    }
}
