//! For tests of apps built on agent turns (feature `test-util`): a tool that records what it
//! was asked. With [`ScriptedModel`](crate::ScriptedModel) it makes a turn deterministic end to
//! end, and shows what ran, with which arguments — and that nothing ran when nothing should.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde_json::Value;

use crate::tool::{Tool, ToolError, ToolSpec};

/// A tool that records the arguments of every call it runs and answers with a fixed output
/// (for a [`ToolEffect::Pause`](crate::ToolEffect::Pause) tool, the question it puts).
/// Clones share the record.
///
/// ```
/// use serde_json::json;
/// use trellis_agent::testing::RecordingTool;
/// use trellis_agent::{ToolEffect, ToolSpec};
///
/// let send = RecordingTool::new(
///     ToolSpec::new("send", "sends a message", json!({"type": "object"}))
///         .with_effect(ToolEffect::SideEffects),
///     "sent",
/// );
/// assert!(send.calls().is_empty());
/// ```
#[derive(Clone, Debug)]
pub struct RecordingTool {
    spec: ToolSpec,
    output: Result<String, String>,
    calls: Arc<Mutex<Vec<Value>>>,
}

impl RecordingTool {
    /// A tool described by `spec` that answers `output`.
    pub fn new(spec: ToolSpec, output: impl Into<String>) -> Self {
        RecordingTool {
            spec,
            output: Ok(output.into()),
            calls: Arc::default(),
        }
    }

    /// A tool described by `spec` that fails with `message` (after recording the call).
    pub fn failing(spec: ToolSpec, message: impl Into<String>) -> Self {
        RecordingTool {
            spec,
            output: Err(message.into()),
            calls: Arc::default(),
        }
    }

    /// The arguments of every call run, in order.
    pub fn calls(&self) -> Vec<Value> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl Tool for RecordingTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    async fn call(&self, arguments: Value) -> Result<String, ToolError> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(arguments);
        self.output.clone().map_err(ToolError)
    }
}
