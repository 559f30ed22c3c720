//! Streaming one run: its events, each step's updates and state, and what its nodes emit, as a
//! `Stream` that ends when the run pauses, completes or fails.

use std::fmt;
use std::future::Future;
use std::ops::BitOr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::Stream;
use serde::Serialize;
use tokio::sync::mpsc;

use super::{Advanced, Outcome, Run};
use crate::errors::RunError;
use crate::event::Event;
use crate::id::RunId;
use crate::messages::MessageChunk;
use crate::node::{EmitSink, Emitted, EventSink, ParentSink, RunScope, SubgraphSink, UpdateSink};
use crate::resume::Answers;
use crate::state::{ApplyResume, GraphState};

/// What a [`RunStream`] carries, as LangGraph's `stream_mode` names it; several combine with
/// `|` into [`StreamModes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamMode {
    /// The whole committed state: where the run starts from (a new run's input, a resumed
    /// run's state with its answers), then after every super-step.
    Values,
    /// Each node's update, once its super-step has merged them, in declaration order (a
    /// resume's answers too, as updates of the node that asked). A subgraph node on the run's
    /// own state sends its child's updates as its own, each as the child merges it (the child
    /// ran the same state's update type), during the node's step.
    Updates,
    /// What nodes send with [`NodeContext::emit`](crate::NodeContext::emit), as they send it.
    Custom,
    /// The run's [`Event`]s: this run's only, none of the graph's other runs.
    Events,
    /// Pieces of messages as nodes stream them
    /// ([`NodeContext::stream_chunk`](crate::NodeContext::stream_chunk)): a model's tokens as
    /// they arrive. The whole message is in the node's update.
    Messages,
    /// Not items of its own: with it, the runs of the graph's subgraph nodes stream their
    /// items of the other modes too, each as a [`StreamItem::Subgraph`] naming where it ran
    /// (LangGraph's `subgraphs=True`).
    Subgraphs,
}

impl StreamMode {
    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of [`StreamMode`]s: `StreamMode::Updates | StreamMode::Custom`, `[…].into()`, or
/// [`StreamModes::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StreamModes(u8);

impl StreamModes {
    /// Every mode.
    pub const ALL: StreamModes = StreamModes(
        StreamMode::Values.bit()
            | StreamMode::Updates.bit()
            | StreamMode::Custom.bit()
            | StreamMode::Events.bit()
            | StreamMode::Messages.bit()
            | StreamMode::Subgraphs.bit(),
    );

    /// Whether `mode` is in the set.
    pub const fn contains(self, mode: StreamMode) -> bool {
        self.0 & mode.bit() != 0
    }

    const fn without(self, mode: StreamMode) -> StreamModes {
        StreamModes(self.0 & !mode.bit())
    }
}

impl From<StreamMode> for StreamModes {
    fn from(mode: StreamMode) -> Self {
        StreamModes(mode.bit())
    }
}

impl<const N: usize> From<[StreamMode; N]> for StreamModes {
    fn from(modes: [StreamMode; N]) -> Self {
        modes.into_iter().collect()
    }
}

impl FromIterator<StreamMode> for StreamModes {
    fn from_iter<I: IntoIterator<Item = StreamMode>>(modes: I) -> Self {
        StreamModes(modes.into_iter().fold(0, |bits, mode| bits | mode.bit()))
    }
}

impl BitOr for StreamMode {
    type Output = StreamModes;
    fn bitor(self, other: StreamMode) -> StreamModes {
        StreamModes(self.bit() | other.bit())
    }
}

impl BitOr<StreamMode> for StreamModes {
    type Output = StreamModes;
    fn bitor(self, other: StreamMode) -> StreamModes {
        StreamModes(self.0 | other.bit())
    }
}

/// One item of a run's stream. Serialized with its mode in `"mode"`:
/// `{"mode":"updates","step":1,"node":"draft","update":{…}}`.
#[derive(Clone, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case", bound(serialize = ""))]
#[non_exhaustive]
pub enum StreamItem<S: GraphState> {
    /// The committed state (mode [`Values`](StreamMode::Values)).
    Values {
        /// Super-steps completed (0 before the first).
        step: u64,
        /// The state.
        state: S,
    },
    /// One node's update, merged (mode [`Updates`](StreamMode::Updates)).
    Updates {
        /// The super-step it was merged in.
        step: u64,
        /// The node that returned it.
        node: String,
        /// The update, as the node returned it.
        update: S::Update,
    },
    /// A value a node emitted (mode [`Custom`](StreamMode::Custom)).
    Custom {
        /// The super-step the node ran in.
        step: u64,
        /// The node.
        node: String,
        /// What it emitted.
        value: serde_json::Value,
    },
    /// A run event (mode [`Events`](StreamMode::Events)).
    #[serde(rename = "events")]
    Event(Event),
    /// A piece of a message a node streamed (mode [`Messages`](StreamMode::Messages)).
    Messages {
        /// The super-step the node ran in.
        step: u64,
        /// The node.
        node: String,
        /// The piece.
        chunk: MessageChunk,
    },
    /// An item of a subgraph's run (with [`Subgraphs`](StreamMode::Subgraphs)).
    Subgraph {
        /// Where it ran: the subgraph node of each graph down, as `node@step`, outermost first.
        namespace: Vec<String>,
        /// The child run's item, as JSON (its state is another graph's): an item of this enum,
        /// serialized (`{"mode": "updates", "step": 1, "node": …, "update": …}`).
        item: serde_json::Value,
    },
}

impl<S> fmt::Debug for StreamItem<S>
where
    S: GraphState + fmt::Debug,
    S::Update: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamItem::Values { step, state } => f
                .debug_struct("Values")
                .field("step", step)
                .field("state", state)
                .finish(),
            StreamItem::Updates { step, node, update } => f
                .debug_struct("Updates")
                .field("step", step)
                .field("node", node)
                .field("update", update)
                .finish(),
            StreamItem::Custom { step, node, value } => f
                .debug_struct("Custom")
                .field("step", step)
                .field("node", node)
                .field("value", value)
                .finish(),
            StreamItem::Event(event) => f.debug_tuple("Event").field(event).finish(),
            StreamItem::Subgraph { namespace, item } => f
                .debug_struct("Subgraph")
                .field("namespace", namespace)
                .field("item", item)
                .finish(),
            StreamItem::Messages { step, node, chunk } => f
                .debug_struct("Messages")
                .field("step", step)
                .field("node", node)
                .field("chunk", chunk)
                .finish(),
        }
    }
}

/// Where a streamed run sends its items.
pub(crate) struct StreamSink<S: GraphState> {
    modes: StreamModes,
    send: SendItem<S>,
}

impl<S: GraphState> Run<S> {
    /// Whether this run's stream carries `mode`.
    #[inline]
    pub(super) fn streams(&self, mode: StreamMode) -> bool {
        self.stream
            .as_ref()
            .is_some_and(|sink| sink.modes.contains(mode))
    }

    /// Sends an item of `mode`, built only when the stream carries it. A reader that dropped
    /// the stream needs nothing more, so a closed stream is no error.
    pub(super) fn send(&self, mode: StreamMode, make: impl FnOnce() -> StreamItem<S>) {
        if let Some(sink) = self.stream.as_ref().filter(|s| s.modes.contains(mode)) {
            (sink.send)(make());
        }
    }

    /// Sends the committed state (mode `values`).
    #[inline]
    pub(super) fn send_values(&self) {
        if self.stream.is_some() {
            self.send_values_now();
        }
    }

    // Out of line, as the other stream sends: the step loop of a run nobody streams stays as
    // small (and as fast) as it was before streams.
    #[cold]
    #[inline(never)]
    fn send_values_now(&self) {
        self.send(StreamMode::Values, || StreamItem::Values {
            step: self.progress.step,
            state: (*self.state).clone(),
        });
    }

    /// Copies of a step's updates for the stream, if it carries them: taken before the merge
    /// consumes them, sent (with [`send_updates`](Self::send_updates)) once it committed them.
    #[inline]
    pub(super) fn copy_updates<'a>(
        &self,
        updates: impl FnOnce() -> Vec<(&'a str, S::Update)>,
    ) -> Option<Vec<(&'a str, S::Update)>> {
        if (self.stream.is_some() && self.streams(StreamMode::Updates))
            || self.scope.to_parent.is_some()
        {
            Some(updates())
        } else {
            None
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn send_updates(&self, step: u64, updates: Vec<(&str, S::Update)>) {
        if let Some(to_parent) = &self.scope.to_parent {
            for (_, update) in &updates {
                (to_parent.0)(update);
            }
        }
        for (node, update) in updates {
            self.send(StreamMode::Updates, || StreamItem::Updates {
                step,
                node: node.to_owned(),
                update,
            });
        }
    }

    /// Emits a run event to the graph's subscribers, to `tracing`, and to this run's stream.
    pub(super) fn emit(&self, make: impl FnOnce() -> Event) {
        if self.streams(StreamMode::Events) {
            let event = make();
            self.graph.events.emit(|| event.clone());
            self.send(StreamMode::Events, || StreamItem::Event(event));
        } else if let Some(forward) = &self.scope.forward {
            let event = make();
            self.graph.events.emit(|| event.clone());
            (forward.0)(&event);
        } else {
            self.graph.events.emit(make);
        }
    }

    /// Whether anyone sees this run's events (then, and only then, are they built and nodes
    /// timed).
    #[inline]
    pub(super) fn observed(&self) -> bool {
        self.streams(StreamMode::Events)
            || self.scope.forward.is_some()
            || self.graph.events.is_observed()
    }

    /// A subgraph's run whose events also go to `forward` (its top-level run's stream).
    pub(crate) fn forwarding(mut self, forward: Option<EventSink>) -> Self {
        if forward.is_some() {
            self.scope = Arc::new(RunScope {
                forward,
                ..(*self.scope).clone()
            });
        }
        self
    }

    /// A subgraph's child run on its parent's state, whose updates the parent streams as node
    /// `node`'s of its step `step` (as do the child's own children on that state).
    pub(crate) fn updating(mut self, updates: Option<UpdateSink>, node: usize, step: u64) -> Self {
        if let Some(UpdateSink(sink)) = updates {
            let up = Arc::clone(&sink);
            self.scope = Arc::new(RunScope {
                to_parent: Some(ParentSink(Arc::new(move |update| up(node, step, update)))),
                updates: Some(UpdateSink(Arc::new(move |_, _, update| {
                    sink(node, step, update);
                }))),
                ..(*self.scope).clone()
            });
        }
        self
    }

    /// This run — one held but not yet run, as [`Thread::fork`](crate::thread::Thread::fork)
    /// and [`CompiledGraph::fork`](crate::CompiledGraph::fork) give it — read as a stream of
    /// `modes` as it runs, from where it stands (its state first, in `values` mode).
    pub fn stream(self, modes: impl Into<StreamModes>) -> RunStream<S> {
        let mut stream = self.into_stream(modes.into());
        stream.show_start();
        stream
    }

    /// This run, driven as a stream of `modes` from where it stands.
    pub(crate) fn into_stream(mut self, modes: StreamModes) -> RunStream<S> {
        let (sender, items) = mpsc::unbounded_channel();
        self.attach(
            modes,
            Arc::new(move |item| {
                let _ = sender.send(item);
            }),
        );
        RunStream {
            run_id: self.scope.run_id.clone(),
            items,
            driving: Driving::Ready(Box::new(self)),
            outcome: None,
        }
    }

    /// Streams this run's items of `modes` to `send`: its own (values, updates, events), what
    /// its nodes emit, and — for a graph with subgraph nodes — its children's, as `modes` ask.
    fn attach(&mut self, modes: StreamModes, send: SendItem<S>) {
        let (custom, chunks) = (
            modes.contains(StreamMode::Custom),
            modes.contains(StreamMode::Messages),
        );
        if custom || chunks {
            let emitted = Arc::clone(&send);
            let names = Arc::clone(&self.scope.names);
            let send = Arc::new(move |node: usize, step, what| {
                let node = names[node].to_string();
                emitted(match what {
                    Emitted::Custom(value) => StreamItem::Custom { step, node, value },
                    Emitted::Chunk(chunk) => StreamItem::Messages { step, node, chunk },
                });
            });
            self.scope = Arc::new(RunScope {
                emitted: Some(EmitSink {
                    send,
                    custom,
                    chunks,
                }),
                ..(*self.scope).clone()
            });
        }
        let nests = self.graph.topology.nests;
        if modes.contains(StreamMode::Updates) && nests {
            // A subgraph node on this state streams its child's updates as its own.
            let updates = Arc::clone(&send);
            let names = Arc::clone(&self.scope.names);
            let sink = UpdateSink(Arc::new(move |node, step, update| {
                if let Some(update) = update.downcast_ref::<S::Update>() {
                    updates(StreamItem::Updates {
                        step,
                        node: names[node].to_string(),
                        update: update.clone(),
                    });
                }
            }));
            self.scope = Arc::new(RunScope {
                updates: Some(sink),
                ..(*self.scope).clone()
            });
        }
        if modes.contains(StreamMode::Events) && nests {
            // The events of its subgraphs' runs join this run's stream.
            let events = Arc::clone(&send);
            let forward = EventSink(Arc::new(move |event: &Event| {
                events(StreamItem::Event(event.clone()));
            }));
            self.scope = Arc::new(RunScope {
                forward: Some(forward),
                ..(*self.scope).clone()
            });
        }
        if modes.contains(StreamMode::Subgraphs) && nests {
            // Its subgraphs' runs stream their own items, named by where they run.
            let nested = Arc::clone(&send);
            self.scope = Arc::new(RunScope {
                subgraphs: Some(SubgraphSink {
                    modes,
                    send: Arc::new(move |namespace, item| {
                        nested(StreamItem::Subgraph { namespace, item });
                    }),
                }),
                ..(*self.scope).clone()
            });
        }
        self.stream = Some(StreamSink { modes, send });
    }

    /// A subgraph's child run, streaming its items to `sink` under the namespace segment
    /// `segment` (`node@step` of its parent): its values, updates and what its nodes emit,
    /// as JSON. Its events already reach its top-level run's stream, and are not sent again.
    pub(crate) fn streaming_nested(mut self, sink: &SubgraphSink, segment: String) -> Self {
        let modes = sink.modes.without(StreamMode::Events);
        let up = Arc::clone(&sink.send);
        let here = segment.clone();
        let send: SendItem<S> = Arc::new(move |item: StreamItem<S>| {
            if let Ok(item) = serde_json::to_value(&item) {
                up(vec![here.clone()], item);
            }
        });
        // Its own children's, under its segment.
        let up = Arc::clone(&sink.send);
        let below = SubgraphSink {
            modes: sink.modes,
            send: Arc::new(move |mut namespace, item| {
                namespace.insert(0, segment.clone());
                up(namespace, item);
            }),
        };
        self.attach(modes, send);
        if self.graph.topology.nests {
            self.scope = Arc::new(RunScope {
                subgraphs: Some(below),
                ..(*self.scope).clone()
            });
        }
        self
    }
}

/// Where a streamed run sends its items.
type SendItem<S> = Arc<dyn Fn(StreamItem<S>) + Send + Sync>;

type StepFuture<S> =
    Pin<Box<dyn Future<Output = (Box<Run<S>>, Result<Advanced, RunError>)> + Send>>;

/// Where the stream's run is: between steps, in one, or ended.
enum Driving<S: GraphState> {
    Ready(Box<Run<S>>),
    Stepping(StepFuture<S>),
    Ended,
}

/// One run as a [`Stream`] of [`StreamItem`]s: from
/// [`CompiledGraph::stream`](crate::CompiledGraph::stream) or
/// [`Resume::stream`](crate::interrupt::Resume::stream).
///
/// The run advances as the stream is read, a super-step at a time (a step's items are kept
/// until read; nothing runs ahead of the reader by more than the step in flight), and the
/// stream ends when the run pauses, completes or fails. [`finish`](RunStream::finish) then
/// gives the outcome (or the error), at once; called earlier, it runs the rest of the run,
/// dropping its items. Dropping the stream drops the run where it stands, like dropping
/// [`invoke`](crate::CompiledGraph::invoke)'s future: its last checkpoint stays.
///
/// It is a `futures_core::Stream` for whatever combinators you use, and has its own
/// [`next`](RunStream::next) for a plain `while let` loop.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use trellis::stream::{StreamItem, StreamMode};
/// use trellis::{GraphBuilder, GraphState, NodeResult, END, START};
///
/// #[derive(Clone, Default, Serialize, Deserialize, GraphState)]
/// struct Count {
///     #[reducer(sum)]
///     n: u32,
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut builder = GraphBuilder::<Count>::new("count");
/// builder.add_node_fn("add", |_, ctx| async move {
///     ctx.emit("adding")?;
///     Ok(CountUpdate::default().n(2).into())
/// });
/// builder.add_edge(START, "add").add_edge("add", END);
/// let graph = builder.compile().unwrap();
///
/// let mut stream = graph.stream(Count::default(), StreamMode::Updates | StreamMode::Custom);
/// let mut seen = Vec::new();
/// while let Some(item) = stream.next().await {
///     match item {
///         StreamItem::Custom { node, value, .. } => seen.push(format!("{node}: {value}")),
///         StreamItem::Updates { node, update, .. } => seen.push(format!("{node}: +{:?}", update.n)),
///         _ => {}
///     }
/// }
/// assert_eq!(seen, ["add: \"adding\"", "add: +Some(2)"]);
/// assert_eq!(stream.finish().await.unwrap().state().n, 2);
/// # });
/// ```
pub struct RunStream<S: GraphState> {
    run_id: RunId,
    items: mpsc::UnboundedReceiver<StreamItem<S>>,
    driving: Driving<S>,
    outcome: Option<Result<Outcome<S>, RunError>>,
}

// Nothing in a `RunStream` is pinned in place: the step in flight is boxed, and `S` is only
// ever moved whole.
impl<S: GraphState> Unpin for RunStream<S> {}

impl<S: GraphState> fmt::Debug for RunStream<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let driving = match self.driving {
            Driving::Ready(_) => "between steps",
            Driving::Stepping(_) => "in a step",
            Driving::Ended => "ended",
        };
        f.debug_struct("RunStream")
            .field("run_id", &self.run_id)
            .field("run", &driving)
            .finish_non_exhaustive()
    }
}

impl<S: GraphState> RunStream<S> {
    /// The run's id (known before it starts).
    pub fn run_id(&self) -> &RunId {
        &self.run_id
    }

    /// The next item; `None` once the run has paused, completed or failed and every item was
    /// read.
    pub async fn next(&mut self) -> Option<StreamItem<S>> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// How the run ended: at once once the stream has ended, otherwise after running the rest
    /// of the run (its items dropped).
    ///
    /// # Errors
    /// The [`RunError`] that failed the run, as [`invoke`](crate::CompiledGraph::invoke) gives it.
    pub async fn finish(mut self) -> Result<Outcome<S>, RunError> {
        while self.next().await.is_some() {}
        self.outcome.take().unwrap_or_else(|| {
            Err(RunError::Ended {
                run_id: self.run_id.clone(),
            })
        })
    }
}

impl<S: GraphState> RunStream<S> {
    /// For a run that began before it was streamed (a thread's, recorded when it started): the
    /// stream shows where it starts from, as a new run's stream does.
    pub(crate) fn show_start(&mut self) {
        if let Driving::Ready(run) = &self.driving {
            run.send_values();
        }
    }
}

impl<S: ApplyResume> RunStream<S> {
    /// Answers the paused run before its first step, so that the stream shows the resume.
    pub(crate) async fn resume(
        &mut self,
        answers: Answers<S::Input>,
        steer: super::resume::Steer<S::Update>,
    ) -> Result<(), RunError> {
        match &mut self.driving {
            Driving::Ready(run) => {
                let result = run.resume_steered(answers, steer).await;
                if result.is_ok() {
                    run.send_values();
                }
                result
            }
            Driving::Stepping(_) | Driving::Ended => Err(RunError::StillRunning {
                run_id: self.run_id.clone(),
            }),
        }
    }
}

impl<S: GraphState> Stream for RunStream<S> {
    type Item = StreamItem<S>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<StreamItem<S>>> {
        let this = self.get_mut();
        loop {
            // What the run already produced comes first; waiting here also registers for
            // what a node emits while its step is still running.
            if let Poll::Ready(Some(item)) = this.items.poll_recv(cx) {
                return Poll::Ready(Some(item));
            }
            match std::mem::replace(&mut this.driving, Driving::Ended) {
                // A run that stands at a pause (a replay of a question) ends the stream there.
                Driving::Ready(run) if run.is_paused() => {
                    this.outcome = Some(Ok(run.into_outcome()));
                }
                Driving::Ready(mut run) => {
                    this.driving = Driving::Stepping(Box::pin(async move {
                        let result = run.step_quietly().await;
                        (run, result)
                    }));
                }
                Driving::Stepping(mut step) => match step.as_mut().poll(cx) {
                    Poll::Pending => {
                        this.driving = Driving::Stepping(step);
                        return Poll::Pending;
                    }
                    Poll::Ready((run, Ok(Advanced::Stepped(_)))) => {
                        this.driving = Driving::Ready(run);
                    }
                    Poll::Ready((run, Ok(Advanced::Paused | Advanced::Completed))) => {
                        this.outcome = Some(Ok(run.into_outcome()));
                    }
                    Poll::Ready((_, Err(error))) => this.outcome = Some(Err(error)),
                },
                // The run is gone, and its senders with it: what is queued is all there is.
                Driving::Ended => return Poll::Ready(this.items.try_recv().ok()),
            }
        }
    }
}
