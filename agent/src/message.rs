//! What a turn's history is made of: messages, the model's tool calls, token usage.

use serde::{Deserialize, Serialize};

/// A turn's messages are the runtime's: ids, roles, tool calls with their provider ids.
pub use trellis::messages::{Body, Message, ToolCall};

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
