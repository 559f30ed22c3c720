//! Nodes: what a node receives (state snapshot, context), what it returns, and how it fails.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::cancel::CancellationToken;
use crate::id::RunId;
use crate::interrupt::InterruptRequest;
use crate::state::GraphState;

/// One step of work in a graph.
///
/// Every node of a super-step receives the same committed state through an `Arc` (no copy per
/// branch) and returns what it wants changed. Closures are nodes too: see
/// [`GraphBuilder::add_node_fn`](crate::GraphBuilder::add_node_fn).
#[async_trait]
pub trait Node<S: GraphState>: Send + Sync + 'static {
    /// Runs the node once.
    ///
    /// # Errors
    /// A [`NodeError`] fails this attempt; the node's `retry`, `on_error` and the run decide
    /// what happens next.
    async fn run(
        &self,
        state: Arc<S>,
        ctx: &mut NodeContext,
    ) -> Result<NodeResult<S::Update>, NodeError>;
}

/// A closure node: `Fn(Arc<S>, NodeContext) -> impl Future<Output = Result<NodeResult, NodeError>>`.
pub(crate) struct FnNode<S, F> {
    f: F,
    state: PhantomData<fn(S)>,
}

impl<S, F> FnNode<S, F> {
    pub(crate) fn new(f: F) -> Self {
        FnNode {
            f,
            state: PhantomData,
        }
    }
}

// Written as `#[async_trait]` expands it, but boxing the closure's own future: an `async fn`
// here would box a second future around it, polled (and moved) on every activation.
impl<S, F, Fut> Node<S> for FnNode<S, F>
where
    S: GraphState,
    F: Fn(Arc<S>, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<NodeResult<S::Update>, NodeError>> + Send + 'static,
{
    fn run<'node, 'ctx, 'work>(
        &'node self,
        state: Arc<S>,
        ctx: &'ctx mut NodeContext,
    ) -> std::pin::Pin<
        Box<dyn Future<Output = Result<NodeResult<S::Update>, NodeError>> + Send + 'work>,
    >
    where
        'node: 'work,
        'ctx: 'work,
        Self: 'work,
    {
        Box::pin((self.f)(state, ctx.clone()))
    }
}

/// A closure as a node, for APIs that take one (such as
/// [`GraphBuilder::from_blueprint`](crate::GraphBuilder::from_blueprint)); `add_node_fn` does
/// this for you.
pub fn node_fn<S, F, Fut>(f: F) -> impl Node<S>
where
    S: GraphState,
    F: Fn(Arc<S>, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<NodeResult<S::Update>, NodeError>> + Send + 'static,
{
    FnNode::new(f)
}

/// What a node returns for a graph whose state is `S`: its result, or why it failed.
///
/// A handler's body usually ends in `Ok(update.into())` (an update becomes
/// [`NodeResult::Update`]), `Ok(NodeResult::goto("review"))` or `Ok(NodeResult::None)`.
pub type NodeOutput<S> = Result<NodeResult<<S as GraphState>::Update>, NodeError>;

/// What a node returns.
#[derive(Debug)]
pub enum NodeResult<U> {
    /// No change; the node's edges decide what runs next.
    None,
    /// Change the state; the node's edges decide what runs next.
    Update(U),
    /// Override the node's edges, toward a target they declare.
    Command(Command),
    /// Change the state, then follow the command.
    UpdateThen(U, Command),
    /// Pause the run and ask a person (same as `Command(Command::Interrupt(…))`).
    Interrupt(InterruptRequest),
    /// Change the state by several updates — merged as a step merges its nodes' updates, by
    /// the reducers, two overwrites of one field being a conflict — then follow the command
    /// ([`Command::Continue`] to follow the edges). For a node that gathers what several
    /// parts of it did: a tool node, each tool's update.
    Updates(Vec<U>, Command),
}

/// A node's override of its edges. Every target must be one the node's edges declare; anything
/// else fails the run with [`RunError::UndeclaredTarget`](crate::RunError::UndeclaredTarget).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Follow the edges as if no command were given.
    Continue,
    /// Go to one declared target (a node, or [`END`](crate::END)).
    Goto(Cow<'static, str>),
    /// Run several declared targets in the next super-step.
    Fork(Vec<Cow<'static, str>>),
    /// End this branch (END must be a declared target).
    End,
    /// Pause the run and ask a person.
    Interrupt(InterruptRequest),
    /// Run each branch in the next super-step: its node (a target of this node's send edge,
    /// [`GraphBuilder::add_send`](crate::GraphBuilder::add_send)) with its own input. None
    /// ends this branch.
    Sends(Vec<SendTo>),
}

/// One branch of a dynamic fan-out: run `node` with `input` (what the node reads with
/// [`NodeContext::input`]). Returned by a send edge's function, or in [`Command::Sends`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendTo {
    /// The node to run.
    pub node: Cow<'static, str>,
    /// Its input, as JSON (kept so in checkpoints while the branch waits to run).
    pub input: serde_json::Value,
}

impl SendTo {
    /// A branch running `node` with `input`.
    ///
    /// # Errors
    /// `input` cannot be written as JSON (a map with non-string keys, a failing `Serialize`).
    pub fn new(
        node: impl Into<Cow<'static, str>>,
        input: &impl Serialize,
    ) -> Result<Self, serde_json::Error> {
        Ok(SendTo {
            node: node.into(),
            input: serde_json::to_value(input)?,
        })
    }

    /// A branch running `node` with `input` given as JSON.
    pub fn json(node: impl Into<Cow<'static, str>>, input: serde_json::Value) -> Self {
        SendTo {
            node: node.into(),
            input,
        }
    }
}

impl Command {
    /// `Goto(target)`.
    pub fn goto(target: impl Into<Cow<'static, str>>) -> Self {
        Command::Goto(target.into())
    }

    /// `Fork(targets)`.
    pub fn fork<I: IntoIterator<Item = T>, T: Into<Cow<'static, str>>>(targets: I) -> Self {
        Command::Fork(targets.into_iter().map(Into::into).collect())
    }
}

/// An update is a node result: `Ok(TicketUpdate::default().draft(text).into())`.
impl<U> From<U> for NodeResult<U> {
    fn from(update: U) -> Self {
        NodeResult::Update(update)
    }
}

impl<U> NodeResult<U> {
    /// The same result with each update turned into another type by `f`: what code generated
    /// for a node's `writes` calls to make its own update type the state's.
    pub fn map_update<V>(self, mut f: impl FnMut(U) -> V) -> NodeResult<V> {
        match self {
            NodeResult::None => NodeResult::None,
            NodeResult::Update(update) => NodeResult::Update(f(update)),
            NodeResult::Command(command) => NodeResult::Command(command),
            NodeResult::UpdateThen(update, command) => NodeResult::UpdateThen(f(update), command),
            NodeResult::Interrupt(request) => NodeResult::Interrupt(request),
            NodeResult::Updates(updates, command) => {
                NodeResult::Updates(updates.into_iter().map(f).collect(), command)
            }
        }
    }

    /// Go to one declared target (a node, or [`END`](crate::END)) instead of following the
    /// edges.
    pub fn goto(target: impl Into<Cow<'static, str>>) -> Self {
        NodeResult::Command(Command::goto(target))
    }

    /// Run several declared targets in the next super-step.
    pub fn fork<I: IntoIterator<Item = T>, T: Into<Cow<'static, str>>>(targets: I) -> Self {
        NodeResult::Command(Command::fork(targets))
    }

    /// End this branch (END must be a declared target).
    pub fn end() -> Self {
        NodeResult::Command(Command::End)
    }

    /// Pause the run and ask a person.
    pub fn ask(request: InterruptRequest) -> Self {
        NodeResult::Interrupt(request)
    }

    /// How the result reads in events: `none`, `update`, `goto:review`, `fork:a,b`, `end`,
    /// `interrupt:approval`, with `update+` in front when the command carries an update.
    pub fn label(&self) -> String {
        match self {
            NodeResult::None => "none".to_owned(),
            NodeResult::Update(_) => "update".to_owned(),
            NodeResult::Command(command) => command_label(command),
            NodeResult::UpdateThen(_, command) => format!("update+{}", command_label(command)),
            NodeResult::Interrupt(request) => format!("interrupt:{}", request.kind),
            NodeResult::Updates(_, Command::Continue) => "updates".to_owned(),
            NodeResult::Updates(_, command) => format!("updates+{}", command_label(command)),
        }
    }
}

fn command_label(command: &Command) -> String {
    match command {
        Command::Continue => "continue".to_owned(),
        Command::Goto(target) => format!("goto:{target}"),
        Command::Fork(targets) => format!("fork:{}", targets.join(",")),
        Command::End => "end".to_owned(),
        Command::Interrupt(request) => format!("interrupt:{}", request.kind),
        Command::Sends(sends) => format!("send:{}", sends.len()),
    }
}

/// What a node knows about where it runs.
#[derive(Debug)]
pub struct NodeContext {
    pub(crate) run: Arc<RunScope>,
    /// The node's index in declaration order (its name is in the run's scope: one `Arc` per
    /// context, not two).
    pub(crate) node: usize,
    pub(crate) step: u64,
    pub(crate) attempt: u32,
    /// Whether this activation runs past a question asked before it (its `interrupt before`, or
    /// a breakpoint), answered.
    pub(crate) approved: bool,
    pub(crate) failure: Option<Arc<NodeFailure>>,
    /// For a branch of a send: its input.
    pub(crate) input: Option<Arc<serde_json::Value>>,
    /// For a subgraph node: the child run to continue, and what the child did. Between the run
    /// and this one activation: a clone (what a closure node receives) does not carry it. An
    /// `Arc`, not a `Box`: its drop, on every context, stays a check inline.
    pub(crate) nested: Option<Arc<crate::subgraph::Nested>>,
}

/// The part of a context shared by every node of a run.
#[derive(Debug, Clone)]
pub(crate) struct RunScope {
    pub(crate) run_id: RunId,
    pub(crate) graph: Arc<str>,
    pub(crate) cancel: CancellationToken,
    /// The graph's node names, in declaration order.
    pub(crate) names: Arc<[Arc<str>]>,
    /// Where [`NodeContext::emit`] and [`NodeContext::stream_chunk`] send, when the run is
    /// streamed with [`StreamMode::Custom`](crate::stream::StreamMode::Custom) or
    /// [`StreamMode::Messages`](crate::stream::StreamMode::Messages).
    pub(crate) emitted: Option<EmitSink>,
    /// For a graph with subgraph nodes: where their child runs keep checkpoints and events.
    pub(crate) nest: Option<Arc<crate::subgraph::Nest>>,
    /// For a subgraph's run whose top-level run is streamed with its events: where its own
    /// events go besides the bus (the top-level run's stream), passed down to its children.
    pub(crate) forward: Option<EventSink>,
    /// For a run streamed with its updates: where a subgraph node's child on the run's own
    /// state sends each update it merges (the subgraph node, its step, the update).
    pub(crate) updates: Option<UpdateSink>,
    /// For a subgraph's child on its parent's state, in a parent streamed with its updates:
    /// where each update the child merges goes.
    pub(crate) to_parent: Option<ParentSink>,
    /// For a run streamed with its subgraphs': where its subgraph nodes' runs stream theirs.
    pub(crate) subgraphs: Option<SubgraphSink>,
}

/// Takes a subgraph run's stream items (namespace, item as JSON) to its top-level run's
/// stream, with the modes that stream carries.
#[derive(Clone)]
pub(crate) struct SubgraphSink {
    pub(crate) modes: crate::stream::StreamModes,
    pub(crate) send: Arc<dyn Fn(Vec<String>, serde_json::Value) + Send + Sync>,
}

impl fmt::Debug for SubgraphSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SubgraphSink")
    }
}

/// Takes a child run's merged updates (its parent's update type, erased) to the parent.
#[derive(Clone)]
pub(crate) struct ParentSink(pub(crate) Arc<dyn Fn(&ErasedUpdate) + Send + Sync>);

impl fmt::Debug for ParentSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ParentSink")
    }
}

/// Takes the updates of a subgraph's child on its parent's state into the parent's stream: the
/// subgraph node, the parent's step, and the update (the parent's update type, erased).
#[derive(Clone)]
pub(crate) struct UpdateSink(pub(crate) Arc<UpdateFn>);

/// An update of the run's own state type, erased where the run's type is not known.
pub(crate) type ErasedUpdate = dyn std::any::Any + Send;

/// What an [`UpdateSink`] calls: the subgraph node, the parent's step, the update.
pub(crate) type UpdateFn = dyn Fn(usize, u64, &ErasedUpdate) + Send + Sync;

impl fmt::Debug for UpdateSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UpdateSink")
    }
}

/// Takes a subgraph run's events into the stream of the run it belongs to.
#[derive(Clone)]
pub(crate) struct EventSink(pub(crate) Arc<dyn Fn(&crate::event::Event) + Send + Sync>);

impl fmt::Debug for EventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventSink")
    }
}

/// What a node sends into its run's stream while it runs.
pub(crate) enum Emitted {
    /// A custom value ([`NodeContext::emit`]).
    Custom(serde_json::Value),
    /// A piece of a message ([`NodeContext::stream_chunk`]).
    Chunk(crate::messages::MessageChunk),
}

/// Takes what a node emits (node, step, what) into a run's stream; it keeps what the stream's
/// modes carry.
#[derive(Clone)]
pub(crate) struct EmitSink {
    pub(crate) send: Arc<dyn Fn(usize, u64, Emitted) + Send + Sync>,
    pub(crate) custom: bool,
    pub(crate) chunks: bool,
}

impl fmt::Debug for EmitSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EmitSink")
    }
}

impl Clone for NodeContext {
    #[inline]
    fn clone(&self) -> Self {
        NodeContext {
            run: Arc::clone(&self.run),
            node: self.node,
            step: self.step,
            attempt: self.attempt,
            approved: self.approved,
            failure: self.failure.clone(),
            input: self.input.clone(),
            nested: None,
        }
    }
}

impl NodeContext {
    /// The run this activation belongs to.
    pub fn run_id(&self) -> &RunId {
        &self.run.run_id
    }

    /// The graph's name.
    pub fn graph(&self) -> &str {
        &self.run.graph
    }

    /// This node's name.
    pub fn node(&self) -> &str {
        &self.run.names[self.node]
    }

    /// The super-step, from 1.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The attempt, from 1 (above 1 when `retry` runs the node again).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Whether this activation runs because a person answered the question asked before it
    /// (the node's `interrupt before`, or a breakpoint before it): what the answer said is in
    /// the state, as the state's [`ApplyResume`](crate::interrupt::ApplyResume) folded it in.
    /// A node that must not act unasked (a tool with side effects) reads it; a later activation
    /// of the node is asked again.
    pub fn approved(&self) -> bool {
        self.approved
    }

    /// For an `on_error` handler: the failure it was routed here to handle.
    pub fn failure(&self) -> Option<&NodeFailure> {
        self.failure.as_deref()
    }

    /// For a branch of a send ([`SendTo`]): its input, read as `T`.
    ///
    /// # Errors
    /// [`NodeError::Failed`] when this activation is no sent branch, or when its input is not
    /// a `T` (the error says which node and why).
    pub fn input<T: serde::de::DeserializeOwned>(&self) -> Result<T, NodeError> {
        let input = self.input.as_deref().ok_or_else(|| {
            NodeError::msg(format!("node `{}` was not sent an input", self.node()))
        })?;
        T::deserialize(input).map_err(|error| {
            NodeError::msg(format!(
                "the input sent to node `{}` is not what it reads: {error}",
                self.node()
            ))
        })
    }

    /// For a branch of a send: its input, as JSON.
    pub fn input_json(&self) -> Option<&serde_json::Value> {
        self.input.as_deref()
    }

    /// The run's cancellation token, for nodes that want to stop cleanly before being dropped.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.run.cancel
    }

    /// Sends `value` to whoever streams this run with
    /// [`StreamMode::Custom`](crate::stream::StreamMode::Custom): progress, partial output,
    /// tokens as a model writes them. It arrives at once, while the node still runs, as a
    /// [`StreamItem::Custom`](crate::stream::StreamItem::Custom) naming this node and step.
    ///
    /// When nobody streams the run's custom values this does nothing (`value` is not even
    /// serialized), so a node can emit unconditionally.
    ///
    /// # Errors
    /// `value`'s serialization error (a map with non-string keys, a failing `Serialize`); with
    /// `?` in a node it fails the attempt like any other error.
    pub fn emit(&self, value: impl Serialize) -> Result<(), serde_json::Error> {
        if let Some(sink) = self.run.emitted.as_ref().filter(|sink| sink.custom) {
            (sink.send)(
                self.node,
                self.step,
                Emitted::Custom(serde_json::to_value(value)?),
            );
        }
        Ok(())
    }

    /// Whether anyone streams this run's messages
    /// ([`StreamMode::Messages`](crate::stream::StreamMode::Messages)): a model client asks
    /// its provider to stream tokens only then.
    pub fn streams_messages(&self) -> bool {
        self.run.emitted.as_ref().is_some_and(|sink| sink.chunks)
    }

    /// Sends a piece of a message, as a model writes it, to whoever streams this run with
    /// [`StreamMode::Messages`](crate::stream::StreamMode::Messages). It arrives at once, as
    /// a [`StreamItem::Messages`](crate::stream::StreamItem::Messages) naming this node and
    /// step; the pieces of one message share its id, the id of the message the node then
    /// returns. Nothing happens when nobody streams the run's messages.
    pub fn stream_chunk(&self, chunk: crate::messages::MessageChunk) {
        if let Some(sink) = self.run.emitted.as_ref().filter(|sink| sink.chunks) {
            (sink.send)(self.node, self.step, Emitted::Chunk(chunk));
        }
    }
}

/// Why a node attempt failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NodeError {
    /// The node reported an error.
    #[error("{0}")]
    Failed(Box<dyn StdError + Send + Sync>),
    /// The attempt ran longer than the node's `timeout`.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// The node panicked; the panic was caught and the process carries on. Not retried unless
    /// the node's `retry_on` names panics: a panic is a bug, not a transient fault.
    #[error("panicked: {0}")]
    Panicked(String),
}

impl NodeError {
    /// An error carrying `error` as its source.
    pub fn new(error: impl StdError + Send + Sync + 'static) -> Self {
        NodeError::Failed(Box::new(error))
    }

    /// An error with a message.
    pub fn msg(message: impl fmt::Display) -> Self {
        NodeError::Failed(message.to_string().into())
    }

    pub(crate) fn kind(&self) -> FailureKind {
        match self {
            NodeError::Failed(_) => FailureKind::Failed,
            NodeError::Timeout(_) => FailureKind::Timeout,
            NodeError::Panicked(_) => FailureKind::Panicked,
        }
    }
}

impl From<String> for NodeError {
    fn from(message: String) -> Self {
        NodeError::Failed(message.into())
    }
}

impl From<&str> for NodeError {
    fn from(message: &str) -> Self {
        NodeError::Failed(message.into())
    }
}

impl From<Box<dyn StdError + Send + Sync>> for NodeError {
    fn from(error: Box<dyn StdError + Send + Sync>) -> Self {
        NodeError::Failed(error)
    }
}

impl From<std::io::Error> for NodeError {
    fn from(error: std::io::Error) -> Self {
        NodeError::new(error)
    }
}

impl From<serde_json::Error> for NodeError {
    fn from(error: serde_json::Error) -> Self {
        NodeError::new(error)
    }
}

/// A node's failure after its last attempt, as an `on_error` handler receives it and as a
/// checkpoint keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeFailure {
    /// The node that failed.
    pub node: String,
    /// The super-step it failed in.
    pub step: u64,
    /// How many attempts were made.
    pub attempts: u32,
    /// What kind of failure the last attempt was.
    pub kind: FailureKind,
    /// The last attempt's error, as text.
    pub message: String,
}

/// What kind of failure a [`NodeFailure`] was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureKind {
    /// The node returned an error.
    Failed,
    /// The node ran out of time.
    Timeout,
    /// The node panicked.
    Panicked,
}

impl fmt::Display for NodeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "node `{}` failed in step {} after {} attempt{}: {}",
            self.node,
            self.step,
            self.attempts,
            if self.attempts == 1 { "" } else { "s" },
            self.message
        )
    }
}
