//! What a turn's history is made of: messages, the model's tool calls, token usage.

use serde::{Deserialize, Serialize};

/// One message of a turn's history, as models read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the agent is and how it works: its prompt, and a step's instruction.
    System {
        /// The text.
        content: String,
    },
    /// What the user asked.
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
        /// The tool called.
        name: String,
        /// The result, or the reason it was refused or failed.
        content: String,
        /// Whether `content` is an error (refused, failed, rejected by a person).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::System {
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
        }
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message::Assistant {
            content: Some(content.into()),
            tool_calls: Vec::new(),
        }
    }

    /// The text of a system, user or assistant message, or a tool's result.
    pub fn text(&self) -> Option<&str> {
        match self {
            Message::System { content } | Message::User { content } => Some(content),
            Message::Assistant { content, .. } => content.as_deref(),
            Message::Tool { content, .. } => Some(content),
        }
    }

    /// The tool calls of an assistant message (none for the others).
    pub fn tool_calls(&self) -> &[ToolCall] {
        match self {
            Message::Assistant { tool_calls, .. } => tool_calls,
            _ => &[],
        }
    }
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// Tokens a model call used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read (the prompt).
    pub input_tokens: u64,
    /// Tokens written (the answer).
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }
}
