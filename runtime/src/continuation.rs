//! A run that goes on from where it stands — taken over after its process stopped
//! ([`CompiledGraph::continue_run`]), replayed from a checkpoint
//! ([`CompiledGraph::replay`]), retried ([`CompiledGraph::retry`]) — awaited to run, read as a
//! stream, or left to a worker: the same three ways a resume ([`CompiledGraph::resume`]) goes.

use std::future::{Future, IntoFuture};
use std::pin::Pin;

use crate::errors::RunError;
#[cfg(doc)]
use crate::graph::CompiledGraph;
use crate::runner::stream::{RunStream, StreamModes};
use crate::runner::{Outcome, Run};
use crate::state::GraphState;

/// The run held before it goes on: what [`CompiledGraph::continue_run`],
/// [`CompiledGraph::replay`] and [`CompiledGraph::retry`] claim, load or branch.
type Held<'g, S> = Pin<Box<dyn Future<Output = Result<Run<S>, RunError>> + Send + 'g>>;

/// A run about to go on from where it stands, made by [`CompiledGraph::continue_run`],
/// [`CompiledGraph::replay`] or [`CompiledGraph::retry`]. Awaited, it runs the run to its end
/// or next pause; [`stream`](Self::stream) reads it as a stream instead (its state first, as a
/// new run's stream starts), [`enqueue`](Self::enqueue) leaves it to a
/// [`Worker`](crate::worker::Worker), and [`into_run`](Self::into_run) holds it, to step.
///
/// Whichever is chosen, the run is first claimed, loaded or branched, and what that writes is
/// written (a replay's `fork` checkpoint, a retry's `retry`); a run that stands at a pause
/// there (a replay of a question, a retry of a run that failed while paused) stays paused,
/// asking again.
///
/// ```
/// use std::sync::Arc;
/// use trellis::checkpoint::InMemoryCheckpointer;
/// use trellis::stream::{StreamItem, StreamMode};
/// use trellis::{END, GraphBuilder, GraphState, NodeResult, START};
///
/// #[derive(Clone, Default, serde::Serialize, serde::Deserialize, GraphState)]
/// struct Log {
///     #[reducer(append)]
///     lines: Vec<String>,
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let mut graph = GraphBuilder::<Log>::new("Steps");
/// graph
///     .add_node_fn("one", |_, _| async { Ok(NodeResult::Update(LogUpdate::default().lines("one"))) })
///     .add_node_fn("two", |_, _| async { Ok(NodeResult::Update(LogUpdate::default().lines("two"))) })
///     .add_edge(START, "one")
///     .add_edge("one", "two")
///     .add_edge("two", END)
///     .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
/// let graph = graph.compile()?;
/// let first = graph.invoke(Log::default()).await?;
///
/// // Replayed from the checkpoint after `one`, streamed: `two` runs again.
/// let after_one = &graph.history(first.run_id()).await?[1];
/// let mut stream = graph.replay(first.run_id(), after_one.checkpoint).stream(StreamMode::Updates).await?;
/// let mut ran = Vec::new();
/// while let Some(item) = stream.next().await {
///     if let StreamItem::Updates { node, .. } = item {
///         ran.push(node);
///     }
/// }
/// assert_eq!(ran, ["two"]);
/// assert_eq!(stream.finish().await?.state().lines, ["one", "two"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[must_use = "a run goes on only when this is awaited, streamed, enqueued or held"]
pub struct Continuation<'g, S: GraphState> {
    held: Held<'g, S>,
}

impl<S: GraphState> std::fmt::Debug for Continuation<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Continuation").finish_non_exhaustive()
    }
}

impl<'g, S: GraphState> Continuation<'g, S> {
    pub(crate) fn new(held: impl Future<Output = Result<Run<S>, RunError>> + Send + 'g) -> Self {
        Continuation {
            held: Box::pin(held),
        }
    }

    /// Runs the run to its end or its next pause (what awaiting it does); a run standing at a
    /// pause is given back paused.
    ///
    /// # Errors
    /// The error of the entry that made this (claiming, loading, branching), then the error
    /// that failed the run, as [`invoke`](crate::CompiledGraph::invoke) gives it.
    pub async fn run(self) -> Result<Outcome<S>, RunError> {
        let run = self.held.await?;
        if run.is_paused() {
            return Ok(run.into_outcome());
        }
        run.finish().await
    }

    /// The run, read as a stream of `modes` as it goes on (see
    /// [`CompiledGraph::stream`](crate::CompiledGraph::stream)), from where it stands: its
    /// state first, in `values` mode.
    ///
    /// # Errors
    /// The error of the entry that made this, before the stream exists; how the run ends comes
    /// from [`RunStream::finish`].
    pub async fn stream(self, modes: impl Into<StreamModes>) -> Result<RunStream<S>, RunError> {
        Ok(self.held.await?.stream(modes))
    }

    /// Leaves the run to a [`Worker`](crate::worker::Worker) of its graph, and returns at once;
    /// a run standing at a pause stays paused, waiting for its answers.
    ///
    /// # Errors
    /// The error of the entry that made this; the checkpointer's.
    pub async fn enqueue(self) -> Result<(), RunError> {
        let run = self.held.await?;
        if run.is_paused() {
            return Ok(());
        }
        run.enqueue().await.map(drop)
    }

    /// The run, held by this process and not yet gone on: to drive step by step with
    /// [`Run::step`](crate::run::Run::step).
    ///
    /// # Errors
    /// The error of the entry that made this.
    pub async fn into_run(self) -> Result<Run<S>, RunError> {
        self.held.await
    }
}

impl<'g, S: GraphState> IntoFuture for Continuation<'g, S> {
    type Output = Result<Outcome<S>, RunError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'g>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}
