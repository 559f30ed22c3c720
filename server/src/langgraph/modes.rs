//! LangGraph's stream modes over a Trellis run's stream: which of Trellis's modes a request
//! needs, and each item as LangGraph shapes it — `values`, `updates` and `custom` as they come;
//! `tasks` (a node starting, then its result), `checkpoints` (each checkpoint as a thread state
//! of LangGraph's) and `debug` (both, wrapped with a type, a step and a time), made from the
//! run's events, updates and the checkpoints they name.

use serde_json::{Map, Value, json};
use trellis::checkpoint::RunQueue;
use trellis::run::Timestamp;
use trellis::stream::{StreamMode, StreamModes};
use trellis::{RunId, ThreadId};

use super::chain::Chain;
use super::chat::{self, Chat};
use super::shapes::{self, Detail};
use super::unsupported;

/// The modes a request asks for, as LangGraph names them.
pub(super) struct Asked {
    names: Vec<String>,
    /// `stream_subgraphs`: the subgraphs' items too, namespaced.
    subgraphs: bool,
}

impl Asked {
    /// `stream_mode` (`values` when none is asked), or a 422 naming a mode this server does
    /// not stream.
    pub(super) fn of(request: &Value) -> Result<Asked, Detail> {
        let names: Vec<String> = match &request["stream_mode"] {
            Value::Null => vec!["values".to_owned()],
            Value::String(mode) => vec![mode.clone()],
            Value::Array(modes) => modes
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => {
                return Err(unsupported(
                    "a `stream_mode` that is not a name or a list of names",
                ));
            }
        };
        for name in &names {
            if !KNOWN.contains(&name.as_str()) {
                return Err(unsupported(&format!("stream mode `{name}`")));
            }
        }
        let subgraphs = request["stream_subgraphs"].as_bool() == Some(true);
        Ok(Asked { names, subgraphs })
    }

    pub(super) fn wants(&self, mode: &str) -> bool {
        self.names.iter().any(|name| name == mode)
    }

    /// What the runtime streams for them: tasks need the run's events, its updates (a task's
    /// result) and its states (a task's input); checkpoints the events that name them.
    pub(super) fn runtime_modes(&self) -> StreamModes {
        let mut modes = StreamModes::default();
        for name in &self.names {
            let needs: &[StreamMode] = match name.as_str() {
                "updates" => &[StreamMode::Updates],
                "custom" => &[StreamMode::Custom],
                "tasks" | "debug" => &[StreamMode::Events, StreamMode::Updates, StreamMode::Values],
                "checkpoints" => &[StreamMode::Events, StreamMode::Values],
                // Pieces as models stream them; whole messages in updates, unless in the
                // state a node read; the step from the events.
                "messages" | "messages-tuple" | "events" => &[
                    StreamMode::Messages,
                    StreamMode::Updates,
                    StreamMode::Values,
                    StreamMode::Events,
                ],
                _ => &[StreamMode::Values],
            };
            for &mode in needs {
                modes = modes | mode;
            }
        }
        if self.subgraphs {
            modes = modes | StreamMode::Subgraphs;
        }
        modes
    }
}

/// A subgraph's item (`{namespace, item}`, the child's own stream item) as LangGraph names and
/// shapes it with `stream_subgraphs`: `updates|research@2` and the like, for the modes asked
/// that a child streams (`values`, `updates`, `custom`, `messages-tuple`).
pub(super) fn nested(asked: &Asked, data: &Value) -> Option<(String, Value)> {
    let item = &data["item"];
    let (mode, shaped) = match item["mode"].as_str()? {
        "values" => ("values", item["state"].clone()),
        "updates" => {
            let node = item["node"].as_str()?;
            ("updates", json!({ node: item["update"] }))
        }
        "custom" => ("custom", item["value"].clone()),
        "messages" => {
            let chunk = &item["chunk"];
            let piece = chat::chunk(chunk["id"].as_str()?, chunk["content"].as_str()?);
            let metadata = json!({
                "langgraph_node": item["node"],
                "langgraph_step": item["step"],
            });
            ("messages", json!([piece, metadata]))
        }
        _ => return None,
    };
    let wanted = match mode {
        "messages" => "messages-tuple",
        other => other,
    };
    if !asked.wants(wanted) {
        return None;
    }
    let namespace: Vec<&str> = data["namespace"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    Some((format!("{mode}|{}", namespace.join("|")), shaped))
}

/// The modes this server streams.
const KNOWN: &[&str] = &[
    "values",
    "updates",
    "custom",
    "tasks",
    "checkpoints",
    "debug",
    "messages",
    "messages-tuple",
    "events",
];

/// What one stream item becomes: LangGraph's events, as `(mode, data)`.
pub(super) struct Shaper<'a> {
    pub(super) asked: &'a Asked,
    pub(super) store: &'a dyn RunQueue,
    pub(super) thread_id: &'a ThreadId,
    pub(super) run_id: &'a RunId,
    /// The state before the step now running: a task's input.
    pub(super) state: Value,
    /// The step now running.
    pub(super) step: u64,
    /// What the `messages` modes have said.
    pub(super) chat: Chat,
    /// With the `events` mode: what it has said.
    pub(super) chain: Option<Chain>,
}

impl Shaper<'_> {
    /// The LangGraph events of Trellis stream item `(mode, data)`.
    pub(super) async fn shape(&mut self, mode: &str, data: Value) -> Vec<(&'static str, Value)> {
        let mut out = Vec::new();
        match mode {
            "values" => {
                if self.says_messages() {
                    self.chat.read(&data);
                }
                if let Some(start) = self.chain.as_mut().and_then(|chain| chain.state(&data)) {
                    out.push(("events", start));
                }
                self.state = data.clone();
                if self.asked.wants("values") {
                    out.push(("values", data));
                }
            }
            "updates" => {
                if let Some((node, update)) = data.as_object().and_then(|map| map.iter().next()) {
                    let result = json!({
                        "id": self.task_id(self.step, node),
                        "name": node,
                        "error": null,
                        "result": update,
                        "interrupts": [],
                    });
                    self.task(&mut out, "task_result", self.step, result);
                    if let Some(chain) = &self.chain {
                        let task = self.task_id(self.step, node);
                        let metadata = self.metadata(node, self.step);
                        let ended = chain.node_ended(node, &task, &self.state, update, &metadata);
                        out.push(("events", ended));
                    }
                    if self.says_messages() {
                        let metadata = self.metadata(node, self.step);
                        for said in self.chat.written(update, &metadata) {
                            self.say(&mut out, &said);
                        }
                    }
                }
                if self.asked.wants("updates") {
                    out.push(("updates", data));
                }
            }
            "custom" => out.push(("custom", data)),
            "messages" => {
                let node = data["node"].as_str().unwrap_or_default();
                let step = data["step"].as_u64().unwrap_or(self.step);
                let metadata = self.metadata(node, step);
                let chunk = &data["chunk"];
                if let Some(chain) = &self.chain {
                    let task = self.task_id(step, node);
                    let piece = chat::chunk(
                        chunk["id"].as_str().unwrap_or_default(),
                        chunk["content"].as_str().unwrap_or_default(),
                    );
                    out.push(("events", chain.token(&task, &piece, &metadata)));
                }
                if !self.says_messages() {
                    return out;
                }
                let said = self.chat.piece(
                    chunk["id"].as_str().unwrap_or_default(),
                    chunk["content"].as_str().unwrap_or_default(),
                    metadata,
                );
                self.say(&mut out, &said);
            }
            "events" => self.event(&mut out, &data).await,
            _ => {}
        }
        out
    }

    async fn event(&mut self, out: &mut Vec<(&'static str, Value)>, event: &Value) {
        // A subgraph's child run's events are its own (`stream_subgraphs` is not streamed).
        if event["run_id"].as_str() != Some(self.run_id.as_str()) {
            return;
        }
        let step = event["step"].as_u64().unwrap_or(self.step);
        match event["event"].as_str() {
            Some("graph.node.entered") => {
                self.step = step;
                let node = event["node"].as_str().unwrap_or_default();
                let task = json!({
                    "id": self.task_id(step, node),
                    "name": node,
                    "input": self.state,
                    "triggers": [],
                });
                self.task(out, "task", step, task);
                if let Some(chain) = &self.chain {
                    let (task, metadata) = (self.task_id(step, node), self.metadata(node, step));
                    out.push((
                        "events",
                        chain.node_started(node, &task, &self.state, &metadata),
                    ));
                }
            }
            Some("graph.node.failed") if event["retrying"] == false => {
                let node = event["node"].as_str().unwrap_or_default();
                let result = json!({
                    "id": self.task_id(step, node),
                    "name": node,
                    "error": event["error"],
                    "result": {},
                    "interrupts": [],
                });
                self.task(out, "task_result", step, result);
            }
            // A node that asked from inside: its task ends with the question.
            Some("graph.run.paused") => {
                for question in event["interrupts"].as_array().into_iter().flatten() {
                    if question["point"] != "node" {
                        continue;
                    }
                    let node = question["node"].as_str().unwrap_or_default();
                    let asked_in = question["step"].as_u64().unwrap_or(step);
                    let result = json!({
                        "id": self.task_id(asked_in, node),
                        "name": node,
                        "error": null,
                        "result": {},
                        "interrupts": [{ "value": question["request"], "id": question["id"] }],
                    });
                    self.task(out, "task_result", asked_in, result);
                }
            }
            Some("graph.checkpoint.saved") => {
                if let Some(number) = event["checkpoint"].as_u64() {
                    self.checkpoint_event(out, number).await;
                }
            }
            _ => {}
        }
    }

    /// The run's end, as the modes asked say it: the graph's `on_chain_end`.
    pub(super) fn ended(&self) -> Vec<(&'static str, Value)> {
        self.chain
            .iter()
            .map(|chain| ("events", chain.ended(&self.state)))
            .collect()
    }

    /// The run's checkpoint `number`, written before its stream began (what it starts from).
    pub(super) async fn opening(&mut self, number: u64) -> Vec<(&'static str, Value)> {
        let mut out = Vec::new();
        self.checkpoint_event(&mut out, number).await;
        out
    }

    /// Checkpoint `number` of the run in `checkpoints` mode, and wrapped in `debug`.
    async fn checkpoint_event(&mut self, out: &mut Vec<(&'static str, Value)>, number: u64) {
        if !(self.asked.wants("checkpoints") || self.asked.wants("debug")) {
            return;
        }
        let Some((step, payload)) = self.checkpoint(number).await else {
            return;
        };
        if self.asked.wants("checkpoints") {
            out.push(("checkpoints", payload.clone()));
        }
        if self.asked.wants("debug") {
            out.push(("debug", debug("checkpoint", step, payload)));
        }
    }

    /// A task event in `tasks` mode, and wrapped in `debug`.
    fn task(&self, out: &mut Vec<(&'static str, Value)>, kind: &str, step: u64, payload: Value) {
        if self.asked.wants("debug") {
            out.push(("debug", debug(kind, step, payload.clone())));
        }
        if self.asked.wants("tasks") {
            out.push(("tasks", payload));
        }
    }

    /// A message said, in the `messages` modes asked.
    fn say(&mut self, out: &mut Vec<(&'static str, Value)>, said: &chat::Said) {
        let (tuples, dicts) = (self.tuples(), self.dicts());
        out.extend(said.events(&mut self.chat, tuples, dicts));
    }

    fn tuples(&self) -> bool {
        self.asked.wants("messages-tuple")
    }

    fn dicts(&self) -> bool {
        self.asked.wants("messages")
    }

    fn says_messages(&self) -> bool {
        self.tuples() || self.dicts()
    }

    /// LangGraph's metadata of a message `node` said in `step`.
    fn metadata(&self, node: &str, step: u64) -> Value {
        chat::metadata(
            self.thread_id.as_str(),
            self.run_id.as_str(),
            node,
            step,
            &self.task_id(step, node),
        )
    }

    /// A task's id: its run, the step it runs in and its node — as a thread state's `tasks`
    /// name it.
    fn task_id(&self, step: u64, node: &str) -> String {
        shapes::task_id(self.run_id, step, node)
    }

    /// Checkpoint `number` of the run as LangGraph's `checkpoints` mode shows one — its config
    /// and its parent's, its values, metadata, next nodes and their tasks — and its step.
    async fn checkpoint(&self, number: u64) -> Option<(u64, Value)> {
        let checkpoint = self.store.checkpoint(self.run_id, number).await.ok()??;
        let parent = super::threads::parent_of(self.store, &checkpoint).await;
        let state = shapes::state(self.thread_id.as_str(), &checkpoint, parent.as_ref());
        let config = |at: &Value| {
            if at.is_null() {
                Value::Null
            } else {
                json!({ "configurable": at })
            }
        };
        let payload = json!({
            "config": config(&state["checkpoint"]),
            "parent_config": config(&state["parent_checkpoint"]),
            "values": state["values"],
            "metadata": state["metadata"],
            "next": state["next"],
            "tasks": state["tasks"],
        });
        Some((checkpoint.step, payload))
    }
}

/// LangGraph's `debug` wrapper: `{type, timestamp, step, payload}`.
fn debug(kind: &str, step: u64, payload: Value) -> Value {
    let mut wrapper = Map::new();
    wrapper.insert("type".to_owned(), json!(kind));
    wrapper.insert("timestamp".to_owned(), json!(Timestamp::now()));
    wrapper.insert("step".to_owned(), json!(step));
    wrapper.insert("payload".to_owned(), payload);
    Value::Object(wrapper)
}
