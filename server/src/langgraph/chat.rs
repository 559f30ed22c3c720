//! LangGraph's `messages` stream modes over a Trellis run: the messages a node writes and the
//! pieces a model streams, as LangChain's message dicts with LangGraph's metadata.
//!
//! As LangGraph's messages handler does: a model's pieces are sent as they come; a message a
//! node's update writes is sent whole, unless its pieces were streamed already or it was in the
//! state the node read (a node that hands a message on does not say it again).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};
use trellis::messages::{Body, Message};

/// What the `messages` modes have sent of a run so far.
#[derive(Default)]
pub(super) struct Chat {
    /// Messages sent, or in a state a node read: not sent (again) when an update writes them.
    seen: HashSet<String>,
    /// The text streamed so far of each message (`messages` mode sends it whole each time).
    partial: HashMap<String, String>,
    /// Messages whose `messages/metadata` was sent.
    announced: HashSet<String>,
}

/// One message event before it is named for the mode asked.
pub(super) struct Said {
    /// The message (a LangChain dict): a piece as it came, or a whole message.
    message: Value,
    /// For a piece: the message so far (its text streamed until now).
    so_far: Option<Value>,
    /// Where it comes from: LangGraph's metadata.
    metadata: Value,
}

impl Chat {
    /// Takes the state a node is about to read: its messages are not the node's to say.
    pub(super) fn read(&mut self, state: &Value) {
        for message in messages_in(state) {
            self.seen.insert(message.id);
        }
    }

    /// A piece of message `id`, from where `metadata` says.
    pub(super) fn piece(&mut self, id: &str, content: &str, metadata: Value) -> Said {
        self.seen.insert(id.to_owned());
        let text = self.partial.entry(id.to_owned()).or_default();
        text.push_str(content);
        Said {
            message: chunk(id, content),
            so_far: Some(chunk(id, text)),
            metadata,
        }
    }

    /// The messages `update` writes that were neither streamed nor read.
    pub(super) fn written(&mut self, update: &Value, metadata: &Value) -> Vec<Said> {
        messages_in(update)
            .into_iter()
            .filter(|message| self.seen.insert(message.id.clone()))
            .map(|message| Said {
                message: langchain(&message),
                so_far: None,
                metadata: metadata.clone(),
            })
            .collect()
    }
}

impl Said {
    /// The events of `messages` mode (`messages/metadata` the first time a message is said,
    /// then the message so far or whole) and of `messages-tuple`, as `chat` has said them.
    pub(super) fn events(
        &self,
        chat: &mut Chat,
        tuples: bool,
        dicts: bool,
    ) -> Vec<(&'static str, Value)> {
        let mut out = Vec::new();
        if tuples {
            out.push(("messages", self.tuple()));
        }
        if dicts {
            if chat.announced.insert(self.id().to_owned()) {
                out.push(("messages/metadata", self.metadata_event()));
            }
            out.push(self.partial_or_complete());
        }
        out
    }

    /// As a `messages-tuple` event: `[message, metadata]`, a piece as it came.
    pub(super) fn tuple(&self) -> Value {
        json!([self.message, self.metadata])
    }

    /// As `messages` mode's event: `messages/partial` with the message so far, or
    /// `messages/complete` with the whole message, each a list of one.
    pub(super) fn partial_or_complete(&self) -> (&'static str, Value) {
        match &self.so_far {
            Some(so_far) => ("messages/partial", json!([so_far])),
            None => ("messages/complete", json!([self.message])),
        }
    }

    /// The message's id, for `messages/metadata`.
    pub(super) fn id(&self) -> &str {
        self.message["id"].as_str().unwrap_or_default()
    }

    /// `messages/metadata`'s data: `{id: {"metadata": …}}`.
    pub(super) fn metadata_event(&self) -> Value {
        json!({ self.id(): { "metadata": self.metadata } })
    }
}

/// LangGraph's metadata of what `node` did in `step` of run `run_id` on thread `thread_id`.
pub(super) fn metadata(thread_id: &str, run_id: &str, node: &str, step: u64, task: &str) -> Value {
    json!({
        "thread_id": thread_id,
        "run_id": run_id,
        "langgraph_step": step,
        "langgraph_node": node,
        "langgraph_triggers": [format!("branch:to:{node}")],
        "langgraph_path": ["__pregel_pull", node],
        "langgraph_checkpoint_ns": format!("{node}:{task}"),
    })
}

/// The messages in a state or an update: each field that holds one, or a list of them.
fn messages_in(value: &Value) -> Vec<Message> {
    let mut found = Vec::new();
    for field in value.as_object().into_iter().flat_map(Map::values) {
        match field {
            Value::Array(items) => found.extend(items.iter().filter_map(message_of)),
            item => found.extend(message_of(item)),
        }
    }
    found
}

/// `value` read as a message, when it is one as Trellis writes them (an id and a role).
fn message_of(value: &Value) -> Option<Message> {
    let fields = value.as_object()?;
    fields.get("id")?.as_str()?;
    let role = fields.get("role")?.as_str()?;
    if !["system", "user", "assistant", "tool"].contains(&role) {
        return None;
    }
    serde_json::from_value(value.clone()).ok()
}

/// A message as LangChain's dicts are (what LangGraph's SDKs and chat UIs read).
pub(super) fn langchain(message: &Message) -> Value {
    let base = |kind: &str, content: &str| {
        json!({
            "type": kind,
            "id": message.id,
            "content": content,
            "name": null,
            "additional_kwargs": {},
            "response_metadata": {},
        })
    };
    match &message.body {
        Body::System { content } => base("system", content),
        Body::User { content } => base("human", content),
        Body::Assistant {
            content,
            tool_calls,
        } => {
            let mut ai = base("ai", content.as_deref().unwrap_or_default());
            ai["tool_calls"] = tool_calls
                .iter()
                .map(|call| {
                    json!({
                        "name": call.name,
                        "args": serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| json!({})),
                        "id": call.id,
                        "type": "tool_call",
                    })
                })
                .collect();
            ai["invalid_tool_calls"] = json!([]);
            ai["usage_metadata"] = Value::Null;
            ai
        }
        Body::Tool {
            call_id,
            name,
            content,
            is_error,
        } => {
            let mut tool = base("tool", content);
            tool["tool_call_id"] = json!(call_id);
            tool["name"] = json!(name);
            tool["status"] = json!(if *is_error { "error" } else { "success" });
            tool
        }
        _ => base("remove", ""),
    }
}

/// A piece of an assistant message as LangChain's `AIMessageChunk` dict.
pub(super) fn chunk(id: &str, content: &str) -> Value {
    json!({
        "type": "AIMessageChunk",
        "id": id,
        "content": content,
        "name": null,
        "additional_kwargs": {},
        "response_metadata": {},
        "tool_calls": [],
        "invalid_tool_calls": [],
        "tool_call_chunks": [],
        "usage_metadata": null,
    })
}
