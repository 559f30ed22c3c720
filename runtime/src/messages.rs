//! Chat messages in the runtime's vocabulary, for any graph (the agent crate's turns use them
//! too): a [`Message`] with a stable id, what it says by role ([`Body`]), the model's
//! [`ToolCall`]s with their provider ids, and [`add_messages`], the reducer that appends them,
//! replaces one by id, removes one by id or all (LangGraph's `add_messages` and
//! `RemoveMessage`).
//!
//! ```
//! use trellis::GraphState;
//! use trellis::messages::{Message, add_messages};
//!
//! #[derive(Clone, Default, serde::Serialize, serde::Deserialize, GraphState)]
//! struct Chat {
//!     #[reducer(with = add_messages)]
//!     messages: Vec<Message>,
//! }
//!
//! let mut chat = Chat::default();
//! let hi = Message::user("hi");
//! chat.apply_one("input", ChatUpdate::default().messages(vec![hi.clone(), Message::assistant("hello")]))?;
//! // The same id replaces; a removal takes one out.
//! chat.apply_one("edit", ChatUpdate::default().messages(vec![hi.edited("hi there")]))?;
//! assert_eq!(chat.messages[0].text(), Some("hi there"));
//! chat.apply_one("trim", ChatUpdate::default().messages(vec![Message::remove(&hi.id)]))?;
//! assert_eq!(chat.messages.len(), 1);
//! # Ok::<(), trellis::error::MergeConflict>(())
//! ```

use serde::{Deserialize, Serialize};

/// The id [`Message::remove_all`] carries (LangGraph's `REMOVE_ALL_MESSAGES`).
pub const REMOVE_ALL: &str = "__remove_all__";

/// One message of a conversation: its id and what it says.
///
/// The id is made when the message is (a new id each time one of the constructors is called),
/// kept through checkpoints, replays and forks, and given as JSON by clients that have their
/// own; a message read without one (a client's input) gets one then, once, before the reducers
/// fold it in. JSON: `{"id": …, "role": "user", "content": …}`. Read, it also takes the shape
/// LangChain's clients send (LangGraph's SDKs, chat UIs): `type` or `role` as `human`, `ai`,
/// `system` or `tool`, `tool_call_id`, tool calls with `args`, content as a list of text parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Message {
    /// Stable across checkpoints: what [`add_messages`] replaces and removes by. A message
    /// given without one gets a new one.
    #[serde(default = "new_id")]
    #[cfg_attr(feature = "schema", schemars(transform = no_default))]
    pub id: String,
    /// What it says, by role.
    #[serde(flatten)]
    pub body: Body,
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The message as written here, once LangChain's names are read as these.
        #[derive(Deserialize)]
        struct Written {
            #[serde(default = "new_id")]
            id: String,
            #[serde(flatten)]
            body: Body,
        }
        let mut fields = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        from_langchain(&mut fields);
        let written: Written = serde_json::from_value(serde_json::Value::Object(fields))
            .map_err(serde::de::Error::custom)?;
        Ok(Message {
            id: written.id,
            body: written.body,
        })
    }
}

/// LangChain's message fields as this module names them: `type` for `role`, `human` and `ai`
/// for `user` and `assistant`, `tool_call_id` for `call_id`, a call's `args` (an object) as its
/// `arguments` (JSON text), content given as parts as its text. A message already written
/// here is left as it is.
fn from_langchain(fields: &mut serde_json::Map<String, serde_json::Value>) {
    use serde_json::Value;
    if !fields.contains_key("role")
        && let Some(kind) = fields.remove("type")
    {
        fields.insert("role".to_owned(), kind);
    }
    if let Some(Value::String(role)) = fields.get_mut("role") {
        match role.as_str() {
            "human" => *role = "user".to_owned(),
            "ai" => *role = "assistant".to_owned(),
            _ => {}
        }
    }
    if !fields.contains_key("call_id")
        && let Some(id) = fields.remove("tool_call_id")
    {
        fields.insert("call_id".to_owned(), id);
    }
    if let Some(Value::Array(parts)) = fields.get("content") {
        let text: String = parts
            .iter()
            .filter_map(|part| part.as_str().or_else(|| part["text"].as_str()))
            .collect();
        fields.insert("content".to_owned(), Value::String(text));
    }
    if let Some(Value::Array(calls)) = fields.get_mut("tool_calls") {
        for call in calls.iter_mut().filter_map(Value::as_object_mut) {
            if !call.contains_key("arguments")
                && let Some(args) = call.remove("args")
            {
                call.insert("arguments".to_owned(), Value::String(args.to_string()));
            }
            call.remove("type");
        }
    }
}

/// What a message says, by role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Body {
    /// What the assistant is and how it works: its prompt, and a step's instruction.
    System {
        /// The text.
        content: String,
    },
    /// What the user said.
    User {
        /// The text.
        content: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The text, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// The tools the model asked to run, in its order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// A tool call's result, or why it did not run.
    Tool {
        /// The provider's id of the call this answers.
        call_id: String,
        /// The tool called (LangChain's clients may leave it out).
        #[serde(default)]
        name: String,
        /// The result, or the reason it was refused or failed.
        content: String,
        /// Whether `content` is an error (refused, failed, rejected by a person).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// Not a message: in an update, [`add_messages`] removes the message with this id (or,
    /// with [`REMOVE_ALL`], every message before it).
    Remove,
}

/// A schema without the `default` schemars would give the id: a new id each time the schema
/// is made, not a value a form could offer.
#[cfg(feature = "schema")]
fn no_default(schema: &mut schemars::Schema) {
    schema.remove("default");
}

/// A new message id: a ULID from the process's generator, as run ids are, so that ids sort
/// by when they were made.
fn new_id() -> String {
    crate::id::next_ulid().to_string()
}

impl Message {
    /// A new message id, as the constructors give (for a message built piece by piece, whose
    /// pieces carry its id before it is whole).
    pub fn new_id() -> String {
        new_id()
    }

    /// A message saying `body`, with a new id.
    pub fn new(body: Body) -> Self {
        Message { id: new_id(), body }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::new(Body::System {
            content: content.into(),
        })
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::new(Body::User {
            content: content.into(),
        })
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message::new(Body::Assistant {
            content: Some(content.into()),
            tool_calls: Vec::new(),
        })
    }

    /// An assistant message calling tools (with text, if the model wrote some).
    pub fn calls(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::new(Body::Assistant {
            content,
            tool_calls,
        })
    }

    /// A tool call's result (`is_error` when it was refused or failed).
    pub fn tool(call: &ToolCall, content: impl Into<String>, is_error: bool) -> Self {
        Message::new(Body::Tool {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: content.into(),
            is_error,
        })
    }

    /// In an update: removes the message with id `id`.
    pub fn remove(id: impl Into<String>) -> Self {
        Message {
            id: id.into(),
            body: Body::Remove,
        }
    }

    /// In an update: removes every message before it; messages after it in the same update
    /// are the new conversation.
    pub fn remove_all() -> Self {
        Message::remove(REMOVE_ALL)
    }

    /// This message with its text replaced, keeping its id: in an update, it replaces the
    /// message.
    #[must_use]
    pub fn edited(&self, content: impl Into<String>) -> Self {
        let content = content.into();
        let body = match &self.body {
            Body::System { .. } => Body::System { content },
            Body::User { .. } => Body::User { content },
            Body::Assistant { tool_calls, .. } => Body::Assistant {
                content: Some(content),
                tool_calls: tool_calls.clone(),
            },
            Body::Tool {
                call_id,
                name,
                is_error,
                ..
            } => Body::Tool {
                call_id: call_id.clone(),
                name: name.clone(),
                content,
                is_error: *is_error,
            },
            Body::Remove => Body::Remove,
        };
        Message {
            id: self.id.clone(),
            body,
        }
    }

    /// The text of a system, user or assistant message, or a tool's result.
    pub fn text(&self) -> Option<&str> {
        match &self.body {
            Body::System { content } | Body::User { content } => Some(content),
            Body::Assistant { content, .. } => content.as_deref(),
            Body::Tool { content, .. } => Some(content),
            Body::Remove => None,
        }
    }

    /// The tool calls of an assistant message (none for the others).
    pub fn tool_calls(&self) -> &[ToolCall] {
        match &self.body {
            Body::Assistant { tool_calls, .. } => tool_calls,
            _ => &[],
        }
    }
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolCall {
    /// The provider's id for the call; its result carries the same id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them: JSON text, checked against the tool's schema
    /// before anything runs (never defaulted when malformed).
    pub arguments: String,
}

impl ToolCall {
    /// A call of `name` with `arguments` (JSON text), identified by `id`.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// A piece of a message as a model writes it, streamed with
/// [`StreamMode::Messages`](crate::stream::StreamMode::Messages) while the node runs: text to
/// append to the message with id `id`, the id of the whole message the node then returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageChunk {
    /// The id of the message this is a piece of.
    pub id: String,
    /// The text to append.
    pub content: String,
}

/// The reducer of a conversation (`#[reducer(with = add_messages)]` on a `Vec<Message>`): each
/// message of `update`, in order, replaces the message with its id, or is appended; a
/// [`Message::remove`] takes the message with its id out (one with no such message changes
/// nothing), and [`Message::remove_all`] empties the conversation. It reads only ids, so
/// folding an update is the same on a replay as on the first run.
pub fn add_messages(messages: &mut Vec<Message>, update: Vec<Message>) {
    for message in update {
        match message.body {
            Body::Remove if message.id == REMOVE_ALL => messages.clear(),
            Body::Remove => messages.retain(|kept| kept.id != message.id),
            _ => match messages.iter_mut().find(|kept| kept.id == message.id) {
                Some(kept) => *kept = message,
                None => messages.push(message),
            },
        }
    }
}

/// A state that holds a conversation: what prebuilt chat nodes (a tool node, a router on the
/// last message) read and write, whatever else the state holds.
///
/// ```
/// use trellis::GraphState;
/// use trellis::messages::{Conversation, Message, add_messages, calls_tools};
///
/// #[derive(Clone, Default, serde::Serialize, serde::Deserialize, GraphState)]
/// struct Chat {
///     #[reducer(with = add_messages)]
///     messages: Vec<Message>,
/// }
///
/// impl Conversation for Chat {
///     fn messages(&self) -> &[Message] {
///         &self.messages
///     }
///     fn add(messages: Vec<Message>) -> ChatUpdate {
///         ChatUpdate::default().messages(messages)
///     }
/// }
///
/// let chat = Chat { messages: vec![Message::user("hi"), Message::assistant("hello")] };
/// assert!(!calls_tools(chat.messages()));
/// ```
pub trait Conversation: crate::GraphState {
    /// The conversation, oldest first.
    fn messages(&self) -> &[Message];

    /// The update that adds `messages` to the conversation (through its reducer, which
    /// replaces a message with the same id).
    fn add(messages: Vec<Message>) -> Self::Update;

    /// What a person decided about the tool calls waiting to run, as the state keeps the
    /// answer to the tools node's `interrupt before` (an `#[answer]` field): `None` when the
    /// state keeps none — an answer then lets the calls run, as LangGraph's resume does.
    fn decision(&self) -> Option<&crate::interrupt::Decision> {
        None
    }
}

/// Whether the conversation's last message is a model's answer calling tools: where a chat
/// graph goes to its tool node rather than ending (LangGraph's `tools_condition`).
pub fn calls_tools(messages: &[Message]) -> bool {
    messages
        .last()
        .is_some_and(|message| !message.tool_calls().is_empty())
}

/// The calls of the conversation's last answer that called tools and that no result answers
/// yet, in the model's order: what a tool node runs.
pub fn pending_calls(messages: &[Message]) -> Vec<&ToolCall> {
    let Some(at) = messages
        .iter()
        .rposition(|message| !message.tool_calls().is_empty())
    else {
        return Vec::new();
    };
    let answered: std::collections::HashSet<&str> = messages[at + 1..]
        .iter()
        .filter_map(|message| match &message.body {
            Body::Tool { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    messages[at]
        .tool_calls()
        .iter()
        .filter(|call| !answered.contains(call.id.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(messages: &[Message]) -> Vec<&str> {
        messages.iter().map(|m| m.id.as_str()).collect()
    }

    #[test]
    fn new_messages_are_appended_in_order_each_with_an_id_of_its_own() {
        let mut chat = Vec::new();
        let (a, b) = (Message::user("a"), Message::assistant("b"));
        assert_ne!(a.id, b.id);
        add_messages(&mut chat, vec![a.clone(), b.clone()]);
        assert_eq!(ids(&chat), [a.id.as_str(), b.id.as_str()]);
    }

    #[test]
    fn a_known_id_replaces_in_place() {
        let (a, b) = (Message::user("a"), Message::assistant("b"));
        let mut chat = vec![a.clone(), b.clone()];
        add_messages(&mut chat, vec![a.edited("a, edited")]);
        assert_eq!(ids(&chat), [a.id.as_str(), b.id.as_str()]);
        assert_eq!(chat[0].text(), Some("a, edited"));
    }

    #[test]
    fn removals_take_one_out_or_everything_before_them() {
        let (a, b, c) = (Message::user("a"), Message::user("b"), Message::user("c"));
        let mut chat = vec![a.clone(), b.clone()];
        add_messages(
            &mut chat,
            vec![Message::remove(&a.id), Message::remove("none")],
        );
        assert_eq!(ids(&chat), [b.id.as_str()], "an unknown id removes nothing");
        add_messages(&mut chat, vec![Message::remove_all(), c.clone()]);
        assert_eq!(ids(&chat), [c.id.as_str()]);
    }

    /// LangChain's shape, as LangGraph's SDKs and chat UIs send it, read as the same messages.
    #[test]
    fn langchain_s_shape_is_read_as_the_same_messages() {
        let read = |json: serde_json::Value| serde_json::from_value::<Message>(json).unwrap().body;
        let user = Message::user("hi").body;
        assert_eq!(
            read(serde_json::json!({ "type": "human", "content": "hi" })),
            user
        );
        assert_eq!(
            read(serde_json::json!({ "role": "human", "content": "hi" })),
            user
        );
        assert_eq!(
            read(
                serde_json::json!({ "type": "human", "content": [{ "type": "text", "text": "hi" }] })
            ),
            user
        );
        let call = ToolCall::new("call_1", "search", r#"{"q":"ü"}"#);
        assert_eq!(
            read(serde_json::json!({
                "type": "ai",
                "content": "",
                "tool_calls": [{ "id": "call_1", "name": "search", "args": { "q": "ü" }, "type": "tool_call" }],
            })),
            Message::calls(Some(String::new()), vec![call.clone()]).body
        );
        assert_eq!(
            read(
                serde_json::json!({ "type": "tool", "tool_call_id": "call_1", "name": "search", "content": "found" })
            ),
            Message::tool(&call, "found", false).body
        );
        let kept: Message = serde_json::from_value(
            serde_json::json!({ "type": "human", "content": "x", "id": "m1" }),
        )
        .unwrap();
        assert_eq!(kept.id, "m1", "a client's own id is kept");
        assert!(serde_json::from_value::<Message>(serde_json::json!({ "type": "robot" })).is_err());
    }

    #[test]
    fn json_keeps_the_id_and_a_message_without_one_gets_one_once() {
        let call = ToolCall::new("call_1", "search", r#"{"q":"ü"}"#);
        let asked = Message::calls(None, vec![call.clone()]);
        let answered = Message::tool(&call, "found", false);
        for message in [Message::system("s"), Message::user("u"), asked, answered] {
            let text = serde_json::to_string(&message).unwrap();
            let back: Message = serde_json::from_str(&text).unwrap();
            assert_eq!(back, message, "{text}");
        }
        let json = serde_json::json!({ "role": "user", "content": "hi" });
        let read: Message = serde_json::from_value(json.clone()).unwrap();
        let again: Message = serde_json::from_value(json).unwrap();
        assert_eq!(read.text(), Some("hi"));
        assert!(!read.id.is_empty());
        assert_ne!(
            read.id, again.id,
            "a message without an id gets a new one when read"
        );
        let stored: Message = serde_json::to_value(&read)
            .and_then(serde_json::from_value)
            .unwrap();
        assert_eq!(stored.id, read.id, "and keeps it from then on");
    }

    #[test]
    fn the_pending_calls_are_the_last_answer_s_without_a_result() {
        let (a, b) = (
            ToolCall::new("a", "search", "{}"),
            ToolCall::new("b", "send", "{}"),
        );
        let asked = Message::calls(Some("let me look".into()), vec![a.clone(), b.clone()]);
        let mut chat = vec![Message::user("go"), asked];
        assert!(super::calls_tools(&chat));
        assert_eq!(super::pending_calls(&chat), [&a, &b]);
        chat.push(Message::tool(&b, "sent", false));
        assert!(!super::calls_tools(&chat), "the last message is a result");
        assert_eq!(
            super::pending_calls(&chat),
            [&a],
            "in the model's order, less the answered"
        );
        chat.push(Message::tool(&a, "found", false));
        assert!(super::pending_calls(&chat).is_empty());
        chat.push(Message::assistant("done"));
        assert!(!super::calls_tools(&chat));
        assert!(super::pending_calls(&chat).is_empty());
        assert!(super::pending_calls(&[]).is_empty());
    }
}
