//! The graphs a server runs, whatever their state types: each behind one object-safe trait,
//! so that requests carry JSON and the store stays untyped.

use std::sync::Arc;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;
use trellis::blueprint::Blueprint;
use trellis::checkpoint::{CheckpointRef, RunQueue};
use trellis::run::CancellationToken;
use trellis::schema::StateSchemas;
use trellis::stream::{StreamItem, StreamModes};
use trellis::thread::StartOptions;
use trellis::worker::Worker;
use trellis::{CompiledGraph, RunId, ThreadId, interrupt::ApplyResume};

use crate::error::ApiError;

/// A graph the server can start, answer and execute.
#[async_trait]
pub(crate) trait Served: Send + Sync {
    /// The graph's name (an agent's name for an agent).
    fn name(&self) -> &str;

    /// Its topology.
    fn blueprint(&self) -> Blueprint;

    /// The version of its topology (`CompiledGraph::fingerprint`): what a run's checkpoints
    /// record, so a client sees which runs an older version saved.
    fn version(&self) -> String;

    /// The JSON Schemas of its state and update, and of its answer to a pause, where the state
    /// gives them (`#[graph_state(schema)]`).
    fn schemas(&self) -> (Option<StateSchemas>, Option<Value>);

    /// Its typed pause sites (`interrupt … answer T;`, `asks Q -> A;`), each with its answer's
    /// type and JSON Schema.
    fn answer_sites(&self) -> Vec<trellis::interrupt::AnswerSiteInfo>;

    /// Queues a run on `input` (the state as JSON) for the workers.
    async fn enqueue(&self, input: Value) -> Result<RunId, ApiError>;

    /// Starts what `start` says on thread `thread_id` for the workers: a new run on an input
    /// (an update of the state, as JSON: what the reducers fold into the thread's state),
    /// doing what its strategy says when the thread is busy; the thread's paused run answered;
    /// its edit taken up; or a fork of one of its checkpoints.
    async fn thread_start(
        &self,
        thread_id: &ThreadId,
        start: ThreadStart,
    ) -> Result<RunId, ApiError>;

    /// [`thread_start`](Self::thread_start), the run driven in this process: sends its
    /// stream's items as `(mode, data)` as they come, then how it ended (`Ended`). The run
    /// goes on if the receiver is dropped (a client that leaves).
    async fn thread_stream(
        &self,
        thread_id: &ThreadId,
        start: ThreadStart,
        modes: StreamModes,
    ) -> Result<ThreadStream, ApiError>;

    /// Edits thread `thread_id`'s state (or, `at` a checkpoint of its history, that state) as
    /// if node `as_node` had written `values` (an update of the state, as JSON); returns the
    /// edit's checkpoint.
    async fn thread_update(
        &self,
        thread_id: &ThreadId,
        at: Option<CheckpointRef>,
        values: Value,
        as_node: &str,
    ) -> Result<CheckpointRef, ApiError>;

    /// Folds the answers (by interrupt id) into a paused run and queues it again; the runtime
    /// refuses a run that is not paused and answers that do not match its interrupts, writing
    /// nothing.
    async fn answer(&self, run_id: &RunId, answers: Vec<(String, Value)>) -> Result<(), ApiError>;

    /// Takes a failed run up again from its last committed checkpoint and queues it (or, for
    /// a run that failed while paused, pauses it again); the runtime refuses a run that is not
    /// failed.
    async fn retry(&self, run_id: &RunId) -> Result<(), ApiError>;

    /// A worker executing this graph's runs until `stop` is cancelled.
    fn spawn_worker(&self, stop: CancellationToken) -> tokio::task::JoinHandle<()>;
}

/// What a run on a thread starts from.
pub(crate) enum ThreadStart {
    /// A new run on this input (an update of the state), with this strategy for a busy thread
    /// and these breakpoints.
    Input(Value, StartOptions),
    /// The thread's paused run, answered (by interrupt id; `None` goes on past its
    /// breakpoints without an answer), and steered.
    Answers(RunId, Option<Vec<(String, Value)>>, Steer),
    /// The thread's edit, taken up ([`Thread::proceed`](trellis::thread::Thread::proceed)).
    Pending,
    /// A fork of this checkpoint of the thread's history.
    Fork(CheckpointRef),
}

/// What a resume does beside answering: LangGraph's `Command(update=…, goto=…)`.
#[derive(Default)]
pub(crate) struct Steer {
    /// An update of the state, as JSON, folded in before the answers.
    pub(crate) update: Option<Value>,
    /// Nodes run next beside those the answers lead to.
    pub(crate) goto: Vec<String>,
}

/// A run streamed in this process.
pub(crate) struct ThreadStream {
    pub(crate) run_id: RunId,
    /// The checkpoint it starts from, written before its stream (a new run's `start`, a fork's
    /// `fork`, an edit's `resume`); `None` for answers, whose `resume` is in the stream.
    pub(crate) opening: Option<u64>,
    pub(crate) items: mpsc::UnboundedReceiver<Streamed>,
}

/// One item of a run streamed in this process.
pub(crate) enum Streamed {
    /// A stream item: its mode (`values`, `updates`, `custom`, `events`) and its data.
    Item(&'static str, Value),
    /// The run stopped: paused, completed or failed (the error).
    Ended(Result<(), String>),
}

/// A compiled graph on the server's store.
pub(crate) struct ServedGraph<S: ApplyResume> {
    pub(crate) name: String,
    pub(crate) graph: CompiledGraph<S>,
    pub(crate) store: Arc<dyn RunQueue>,
}

impl<S: ApplyResume> ServedGraph<S> {
    pub(crate) fn new(graph: CompiledGraph<S>, store: Arc<dyn RunQueue>) -> Self {
        ServedGraph {
            name: graph.name().to_owned(),
            graph: graph.with_checkpointer(Arc::clone(&store)),
            store,
        }
    }
}

#[async_trait]
impl<S> Served for ServedGraph<S>
where
    S: ApplyResume + Default,
    S::Input: DeserializeOwned,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn blueprint(&self) -> Blueprint {
        self.graph.blueprint().clone()
    }

    fn version(&self) -> String {
        self.graph.fingerprint().to_owned()
    }

    fn schemas(&self) -> (Option<StateSchemas>, Option<Value>) {
        (S::schemas(), S::answer_schema())
    }

    fn answer_sites(&self) -> Vec<trellis::interrupt::AnswerSiteInfo> {
        self.graph.answer_sites()
    }

    async fn enqueue(&self, input: Value) -> Result<RunId, ApiError> {
        let state: S = serde_json::from_value(input).map_err(|e| {
            ApiError::bad_request(format!(
                "the input is not a state of graph `{}`: {e}",
                self.name
            ))
        })?;
        Ok(self.graph.enqueue(state).await?)
    }

    async fn thread_start(
        &self,
        thread_id: &ThreadId,
        start: ThreadStart,
    ) -> Result<RunId, ApiError> {
        let thread = self.graph.thread(thread_id).await?;
        Ok(match start {
            ThreadStart::Input(input, options) => {
                thread.enqueue(self.update(input)?, options).await?
            }
            ThreadStart::Answers(run_id, answers, steer) => {
                self.resume(&run_id, answers, steer)
                    .await?
                    .enqueue()
                    .await?;
                run_id
            }
            ThreadStart::Pending => thread.proceed().await?.enqueue().await?,
            ThreadStart::Fork(at) => thread.fork(&at).await?.enqueue().await?,
        })
    }

    async fn thread_stream(
        &self,
        thread_id: &ThreadId,
        start: ThreadStart,
        modes: StreamModes,
    ) -> Result<ThreadStream, ApiError> {
        let thread = self.graph.thread(thread_id).await?;
        let answering = matches!(start, ThreadStart::Answers(..));
        let mut stream = match start {
            ThreadStart::Input(input, options) => {
                thread.stream(self.update(input)?, options, modes).await?
            }
            ThreadStart::Answers(run_id, answers, steer) => {
                self.resume(&run_id, answers, steer)
                    .await?
                    .stream(modes)
                    .await?
            }
            ThreadStart::Pending => thread.proceed().await?.stream(modes),
            ThreadStart::Fork(at) => thread.fork(&at).await?.stream(modes),
        };
        let run_id = stream.run_id().clone();
        // Read before anything drives the run: the stream is driven by the task below.
        let opening = if answering {
            None
        } else {
            let latest = self.store.latest_checkpoint(&run_id).await;
            latest.ok().flatten().map(|checkpoint| checkpoint.id)
        };
        let (send, receive) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(item) = stream.next().await {
                let item = match item {
                    StreamItem::Values { state, .. } => {
                        Streamed::Item("values", serde_json::to_value(state).unwrap_or_default())
                    }
                    StreamItem::Updates { node, update, .. } => {
                        let update = serde_json::to_value(update).unwrap_or_default();
                        Streamed::Item("updates", serde_json::json!({ node: update }))
                    }
                    StreamItem::Custom { value, .. } => Streamed::Item("custom", value),
                    StreamItem::Subgraph { namespace, item } => Streamed::Item(
                        "subgraph",
                        serde_json::json!({ "namespace": namespace, "item": item }),
                    ),
                    StreamItem::Messages { step, node, chunk } => Streamed::Item(
                        "messages",
                        serde_json::json!({ "node": node, "step": step, "chunk": chunk }),
                    ),
                    StreamItem::Event(event) => {
                        Streamed::Item("events", serde_json::to_value(event).unwrap_or_default())
                    }
                    _ => continue,
                };
                // A client that left does not stop the run: it is driven to its end here.
                let _ = send.send(item);
            }
            let ended = stream.finish().await.map(drop).map_err(|e| e.to_string());
            let _ = send.send(Streamed::Ended(ended));
        });
        Ok(ThreadStream {
            run_id,
            opening,
            items: receive,
        })
    }

    async fn thread_update(
        &self,
        thread_id: &ThreadId,
        at: Option<CheckpointRef>,
        values: Value,
        as_node: &str,
    ) -> Result<CheckpointRef, ApiError> {
        let thread = self.graph.thread(thread_id).await?;
        let update = self.update(values)?;
        Ok(match at {
            Some(at) => thread.update_state_at(&at, update, as_node).await?,
            None => thread.update_state(update, as_node).await?,
        })
    }

    async fn answer(&self, run_id: &RunId, answers: Vec<(String, Value)>) -> Result<(), ApiError> {
        let answers = self.answers(run_id, answers).await?;
        Ok(self.graph.resume(run_id, answers).enqueue().await?)
    }

    async fn retry(&self, run_id: &RunId) -> Result<(), ApiError> {
        Ok(self.graph.retry(run_id).enqueue().await?)
    }

    fn spawn_worker(&self, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        // Woken when a run is queued here (the store announces it); the poll finds runs
        // queued by other processes and leases that ran out.
        let worker = Worker::new(self.graph.clone(), Arc::clone(&self.store));
        let stopper = worker.stopper();
        tokio::spawn(async move {
            let run = tokio::spawn(worker.run());
            stop.cancelled().await;
            stopper.cancel();
            let _ = run.await;
        })
    }
}

impl<S> ServedGraph<S>
where
    S: ApplyResume + Default,
    S::Input: DeserializeOwned,
{
    /// `input` as an update of the state, or a 400 saying why it is not one.
    fn update(&self, input: Value) -> Result<S::Update, ApiError> {
        serde_json::from_value(input).map_err(|e| {
            ApiError::bad_request(format!(
                "the input is not an update of graph `{}`'s state: {e}",
                self.name
            ))
        })
    }

    /// A resume of `run_id` with `answers`, steered as `steer` says.
    async fn resume<'g>(
        &'g self,
        run_id: &RunId,
        answers: Option<Vec<(String, Value)>>,
        steer: Steer,
    ) -> Result<trellis::interrupt::Resume<'g, S>, ApiError> {
        let answers = match answers {
            Some(answers) => self.answers(run_id, answers).await?,
            None => trellis::interrupt::Answers::Proceed,
        };
        let mut resume = self.graph.resume(run_id, answers);
        if let Some(update) = steer.update {
            resume = resume.update(self.update(update)?);
        }
        for node in steer.goto {
            resume = resume.goto(node);
        }
        Ok(resume)
    }

    /// Answers by interrupt id, each read as the type its pause site declares (else as the
    /// graph's answer type), or a 400 naming the site and the type it takes.
    async fn answers(
        &self,
        run_id: &RunId,
        answers: Vec<(String, Value)>,
    ) -> Result<trellis::interrupt::Answers<S::Input>, ApiError> {
        let run = self.graph.load(run_id).await?;
        let pending = run.interrupts();
        let answers = answers
            .into_iter()
            .map(|(id, value)| {
                let asked = pending.iter().find(|interrupt| interrupt.id == id);
                let typed = asked.and_then(|interrupt| {
                    let ty = self.graph.answer_type(interrupt)?;
                    Some((
                        interrupt,
                        ty,
                        self.graph.read_answer(interrupt, value.clone())?,
                    ))
                });
                let read = match typed {
                    Some((interrupt, ty, read)) => read.map_err(|e| {
                        // A subgraph's question (`review@2/approve@1`) is its child node's.
                        let node = id
                            .rsplit_once('/')
                            .and_then(|(_, asked)| asked.split_once('@'))
                            .map_or(interrupt.node.as_str(), |(node, _)| node);
                        format!(
                            "the answer to `{id}` is not a `{ty}`, which node `{node}` takes: {e}"
                        )
                    }),
                    None => serde_json::from_value::<S::Input>(value).map_err(|e| {
                        format!(
                            "the answer to `{id}` is not one graph `{}` takes: {e}",
                            self.name
                        )
                    }),
                };
                read.map(|answer| (id.clone(), answer))
                    .map_err(ApiError::bad_request)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(trellis::interrupt::Answers::Each(answers))
    }
}
