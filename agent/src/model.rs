//! The model seam: a chat model that reads a history and the tools advertised for this call,
//! and answers with text, tool calls, or both.

use async_trait::async_trait;

use crate::message::{Body, Message, ToolCall, Usage};
use crate::tool::ToolSpec;

/// A chat model. Implement it over any provider; [`ScriptedModel`](crate::ScriptedModel) replays
/// a script for tests, and `OpenAiCompatible` (feature `openai`) speaks the chat-completions
/// protocol.
#[async_trait]
pub trait Model: Send + Sync + 'static {
    /// Answers `request`.
    ///
    /// # Errors
    /// A [`ModelError`] when the provider cannot answer; the `dispatch` node fails (and is
    /// retried as its blueprint says), and no tool runs.
    async fn complete(&self, request: ModelRequest<'_>) -> Result<ModelResponse, ModelError>;

    /// Answers `request` as [`complete`](Self::complete) does, sending the answer's text to
    /// `tokens` piece by piece as the provider writes it; the answer returned is the same as
    /// `complete`'s. A turn calls this when its run's messages are streamed. By default the
    /// text is sent whole, once `complete` answers.
    ///
    /// # Errors
    /// As [`complete`](Self::complete).
    async fn stream(
        &self,
        request: ModelRequest<'_>,
        tokens: &(dyn for<'t> Fn(&'t str) + Send + Sync),
    ) -> Result<ModelResponse, ModelError> {
        let response = self.complete(request).await?;
        if let Some(text) = &response.content {
            tokens(text);
        }
        Ok(response)
    }
}

/// What a model is asked: the history, and the tools it may call this time.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The history, system prompt first.
    pub messages: &'a [Message],
    /// The tools advertised for this call; a call to any other is refused.
    pub tools: &'a [ToolSpec],
}

/// What a model answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelResponse {
    /// The text, if any.
    pub content: Option<String>,
    /// The tools it asks to run, with the provider's call ids, in its order.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens used.
    pub usage: Usage,
}

impl ModelResponse {
    /// An answer with text and no tool call.
    pub fn text(content: impl Into<String>) -> Self {
        ModelResponse {
            content: Some(content.into()),
            ..ModelResponse::default()
        }
    }

    /// An answer calling tools.
    pub fn calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        ModelResponse {
            tool_calls: calls.into_iter().collect(),
            ..ModelResponse::default()
        }
    }

    /// The same answer, with its token usage.
    #[must_use]
    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Usage {
            input_tokens,
            output_tokens,
        };
        self
    }

    /// The answer as a history message.
    pub fn to_message(&self) -> Message {
        Message::calls(self.content.clone(), self.tool_calls.clone())
    }

    /// The answer as the history message with id `id` (the id its streamed pieces carried).
    pub fn to_message_with_id(&self, id: String) -> Message {
        Message {
            id,
            body: self.to_message().body,
        }
    }
}

/// Why a model could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an error status.
    #[error("the model provider answered {status}: {message}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The provider's error message, or the body.
        message: String,
    },
    /// The provider could not be reached, or the connection failed.
    #[error("the model provider could not be reached: {0}")]
    Transport(String),
    /// The provider's answer does not follow its protocol.
    #[error("the model provider's answer could not be read: {0}")]
    Protocol(String),
    /// A scripted model has no step left, or a step refused the request.
    #[error("the scripted model {0}")]
    Script(String),
}

impl ModelRequest<'_> {
    /// The result of the call `call_id`, if the history has it.
    pub fn result_of(&self, call_id: &str) -> Option<&str> {
        self.messages.iter().rev().find_map(|m| match &m.body {
            Body::Tool {
                call_id: id,
                content,
                ..
            } if id == call_id => Some(content.as_str()),
            _ => None,
        })
    }

    /// The last message, if any.
    pub fn last(&self) -> Option<&Message> {
        self.messages.last()
    }
}

/// Asks `model` for its answer to `request` from a node: streamed a piece at a time to whoever
/// streams the run's messages (each piece with the id of the message it builds), or in one
/// call when nobody does. Returns the answer and its message, with that id.
pub(crate) async fn answer(
    model: &dyn Model,
    request: ModelRequest<'_>,
    ctx: &trellis::NodeContext,
) -> Result<(ModelResponse, Message), ModelError> {
    let id = Message::new_id();
    let response = if ctx.streams_messages() {
        let tokens = |text: &str| {
            ctx.stream_chunk(trellis::messages::MessageChunk {
                id: id.clone(),
                content: text.to_owned(),
            });
        };
        model.stream(request, &tokens).await?
    } else {
        model.complete(request).await?
    };
    let message = response.to_message_with_id(id);
    Ok((response, message))
}
