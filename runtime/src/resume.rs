//! Resuming a paused run: one entry, [`CompiledGraph::resume`], takes the answers and then runs,
//! streams or enqueues the run.

use std::future::{Future, IntoFuture};
use std::pin::Pin;

use crate::errors::RunError;
use crate::graph::CompiledGraph;
use crate::id::RunId;
use crate::runner::resume::Steer;
use crate::runner::stream::{RunStream, StreamModes};
use crate::runner::{Outcome, Run};
use crate::state::{ApplyResume, GraphState};

/// What a paused run is answered with: one answer, for a run that waits for one, or one answer
/// per pending interrupt id ([`Interrupt::id`](crate::interrupt::Interrupt::id)).
///
/// An answer converts into `Answers::One`, so `graph.resume(&run_id, answer)` needs no
/// wrapping; several are given with [`Answers::each`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Answers<I> {
    /// The answer to the run's one pending interrupt.
    One(I),
    /// One answer per pending interrupt id; the ids must be exactly the pending ones.
    Each(Vec<(String, I)>),
    /// No answer: the run goes on past pauses at its own breakpoints
    /// ([`Breakpoints`](crate::interrupt::Breakpoints), given when it started), which ask
    /// nothing. Refused when a pending question is a node's or its graph's.
    Proceed,
}

impl<I> Answers<I> {
    /// One answer per pending interrupt id.
    pub fn each<K: Into<String>>(answers: impl IntoIterator<Item = (K, I)>) -> Self {
        Answers::Each(
            answers
                .into_iter()
                .map(|(id, answer)| (id.into(), answer))
                .collect(),
        )
    }

    /// Each answer with the id it answers, among the run's pending `interrupts`.
    ///
    /// # Errors
    /// [`RunError::Answers`] for one answer to a run that waits for several (or none): it
    /// cannot say which it answers.
    pub(crate) fn keyed<S: GraphState>(self, run: &Run<S>) -> Result<Vec<(String, I)>, RunError> {
        match self {
            Answers::Each(answers) => Ok(answers),
            Answers::Proceed => {
                let asked = run.interrupts();
                if asked.iter().all(|interrupt| run.is_breakpoint(interrupt)) {
                    return Ok(Vec::new());
                }
                Err(RunError::Answers {
                    run_id: run.run_id().clone(),
                    pending: asked.iter().map(|i| i.id.as_str().to_owned()).collect(),
                    given: vec!["(none: only a run's own breakpoints go on without)".to_owned()],
                })
            }
            Answers::One(answer) => match run.interrupts() {
                [only] => Ok(vec![(only.id.as_str().to_owned(), answer)]),
                pending => Err(RunError::Answers {
                    run_id: run.run_id().clone(),
                    pending: pending.iter().map(|i| i.id.as_str().to_owned()).collect(),
                    given: vec!["(one answer without an id)".to_owned()],
                }),
            },
        }
    }
}

impl<I> From<I> for Answers<I> {
    fn from(answer: I) -> Self {
        Answers::One(answer)
    }
}

/// A resume of a paused run, made by [`CompiledGraph::resume`]. Awaited, it runs the run to its
/// end or next pause; [`stream`](Self::stream) reads it as a stream instead, and
/// [`enqueue`](Self::enqueue) leaves it to a [`Worker`](crate::worker::Worker).
///
/// Whichever is chosen, the answers are first checked against the pending interrupts, the run
/// is claimed (paused → running: of two resumes of one run, one proceeds), and the state with
/// the answers folded in is checkpointed (`resume`).
#[must_use = "a resume does nothing until it is awaited, streamed or enqueued"]
pub struct Resume<'g, S: ApplyResume> {
    graph: &'g CompiledGraph<S>,
    run_id: RunId,
    answers: Answers<S::Input>,
    steer: Steer<S::Update>,
}

impl<S: ApplyResume> std::fmt::Debug for Resume<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resume")
            .field("graph", &self.graph.name())
            .field("run_id", &self.run_id)
            .finish_non_exhaustive()
    }
}

impl<S: ApplyResume> Resume<'_, S> {
    /// Folds `update` into the state by the reducers — as a run's input is — before the
    /// answers (LangGraph's `Command(update=…)`), in the `resume` checkpoint with them.
    pub fn update(mut self, update: S::Update) -> Self {
        self.steer.update = Some(update);
        self
    }

    /// Runs `node` in the next step too, beside the nodes the answers lead to (LangGraph's
    /// `Command(goto=…)`). A name that is not a node fails the resume with
    /// [`RunError::UnknownNode`], before anything is written.
    pub fn goto(mut self, node: impl Into<String>) -> Self {
        self.steer.goto.push(node.into());
        self
    }

    /// Runs the resumed run to its end or its next pause (what awaiting the resume does).
    ///
    /// # Errors
    /// As [`CompiledGraph::load`] and [`Run::resume`]; then the error that failed the run, as
    /// [`invoke`](CompiledGraph::invoke) gives it.
    pub async fn run(self) -> Result<Outcome<S>, RunError> {
        let run = self.answered().await?;
        run.finish().await
    }

    /// The resumed run, read as a stream (see [`CompiledGraph::stream`]): the stream starts with
    /// the resume (its events, the answers as updates, the state with them).
    ///
    /// # Errors
    /// As [`CompiledGraph::load`] and [`Run::resume`], before the stream exists; how the run
    /// ends comes from [`RunStream::finish`].
    pub async fn stream(self, modes: impl Into<StreamModes>) -> Result<RunStream<S>, RunError> {
        let mut stream = self
            .graph
            .load(&self.run_id)
            .await?
            .into_stream(modes.into());
        stream.resume(self.answers, self.steer).await?;
        Ok(stream)
    }

    /// Folds the answers in and leaves the run to a [`Worker`](crate::worker::Worker): the run
    /// becomes ready for the first free worker of its graph. Returns at once.
    ///
    /// # Errors
    /// As [`CompiledGraph::load`] and [`Run::resume`], before the run goes on.
    pub async fn enqueue(self) -> Result<(), RunError> {
        let run = self.answered().await?;
        run.enqueue().await.map(drop)
    }

    /// The run loaded, with the answers folded in.
    async fn answered(self) -> Result<Run<S>, RunError> {
        let mut run = self.graph.load(&self.run_id).await?;
        run.resume_steered(self.answers, self.steer).await?;
        Ok(run)
    }
}

impl<'g, S: ApplyResume> IntoFuture for Resume<'g, S> {
    type Output = Result<Outcome<S>, RunError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'g>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

impl<S: ApplyResume> CompiledGraph<S> {
    /// Resumes the paused run `run_id` with `answers`: one answer for a run that waits for one
    /// (any `S::Input` converts), or [`Answers::each`] keyed by interrupt id. Awaited, the
    /// [`Resume`] runs the run to its end or next pause; [`Resume::stream`] streams it,
    /// [`Resume::enqueue`] leaves it to the workers.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use serde::{Deserialize, Serialize};
    /// use trellis::checkpoint::InMemoryCheckpointer;
    /// use trellis::interrupt::{Answers, ApplyResume, Interrupt};
    /// use trellis::{END, GraphBuilder, NodeOptions, NodeResult, START, WholeState};
    ///
    /// #[derive(Clone, Default, Serialize, Deserialize)]
    /// struct Post { approved: bool, sent: bool }
    /// impl WholeState for Post {
    ///     const COMBINES: bool = true;
    ///     fn merge(&mut self, update: Self) {
    ///         self.approved |= update.approved;
    ///         self.sent |= update.sent;
    ///     }
    /// }
    /// impl ApplyResume for Post {
    ///     type Input = bool;
    ///     fn apply_resume(&self, _: &Interrupt, approved: bool) -> Post {
    ///         Post { approved, sent: false }
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut graph = GraphBuilder::<Post>::new("Publish");
    /// graph
    ///     .add_node_fn_with(
    ///         "send",
    ///         |post: Arc<Post>, _| async move {
    ///             Ok(NodeResult::Update(Post { sent: post.approved, ..Post::default() }))
    ///         },
    ///         NodeOptions::new().interrupt_before(),
    ///     )
    ///     .add_edge(START, "send")
    ///     .add_edge("send", END)
    ///     .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    /// let graph = graph.compile()?;
    ///
    /// let paused = graph.invoke(Post::default()).await?;
    /// let run_id = paused.run_id().clone();
    /// // One answer for the one question; `Answers::each([(id, answer), …])` for several.
    /// let done = graph.resume(&run_id, true).await?;
    /// assert!(done.state().sent);
    ///
    /// // Streamed, or left to a worker: `.stream(modes)`, `.enqueue()`.
    /// let paused = graph.invoke(Post::default()).await?;
    /// let id = paused.interrupts()[0].id.clone();
    /// let mut stream = graph.resume(paused.run_id(), Answers::each([(id, false)])).stream(trellis::stream::StreamMode::Values).await?;
    /// while stream.next().await.is_some() {}
    /// assert!(!stream.finish().await?.state().sent);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn resume(&self, run_id: &RunId, answers: impl Into<Answers<S::Input>>) -> Resume<'_, S> {
        Resume {
            graph: self,
            run_id: run_id.clone(),
            answers: answers.into(),
            steer: Steer::default(),
        }
    }
}
