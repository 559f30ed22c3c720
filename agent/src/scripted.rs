//! `ScriptedModel`: a model that plays a script, for tests, examples and end-to-end tests of
//! apps built on agent turns. No network, same answers every run.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;

use crate::message::{Body, Message, ToolCall};
use crate::model::{Model, ModelError, ModelRequest, ModelResponse};

type Step = Arc<dyn Fn(&ModelRequest<'_>) -> Result<ModelResponse, ModelError> + Send + Sync>;

/// A model that plays a script: step *n* answers the request whose history already holds *n*
/// model answers. The step is read off the history, not off a counter, so a turn resumed in a
/// new process gets the step it is at, and a retried call gets the same step again.
///
/// A step is a fixed answer, or a function of the request: it can read the tool results so far
/// ([`ModelRequest::result_of`]) and answer from them.
///
/// ```
/// use trellis_agent::{ModelResponse, ScriptedModel, ToolCall};
///
/// let model = ScriptedModel::new()
///     .call(ToolCall::new("call_1", "calculator", r#"{"expression": "12 * 7"}"#))
///     .step(|request| {
///         let product = request.result_of("call_1").unwrap_or("nothing");
///         Ok(ModelResponse::text(format!("12 × 7 = {product}.")))
///     });
/// assert_eq!(model.len(), 2);
/// ```
#[derive(Clone, Default)]
pub struct ScriptedModel {
    steps: Vec<Step>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

/// A request a scripted model received: the history and the names of the tools advertised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The history sent.
    pub messages: Vec<Message>,
    /// The tools advertised, by name.
    pub tools: Vec<String>,
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("steps", &self.steps.len())
            .finish_non_exhaustive()
    }
}

impl ScriptedModel {
    /// An empty script.
    pub fn new() -> Self {
        ScriptedModel::default()
    }

    /// Then answers with `text` and no tool call.
    #[must_use]
    pub fn answer(self, text: &str) -> Self {
        self.respond(ModelResponse::text(text))
    }

    /// Then calls one tool.
    #[must_use]
    pub fn call(self, call: ToolCall) -> Self {
        self.respond(ModelResponse::calls([call]))
    }

    /// Then calls several tools in one answer.
    #[must_use]
    pub fn calls(self, calls: impl IntoIterator<Item = ToolCall>) -> Self {
        self.respond(ModelResponse::calls(calls))
    }

    /// Then answers `response`.
    #[must_use]
    pub fn respond(self, response: ModelResponse) -> Self {
        self.step(move |_| Ok(response.clone()))
    }

    /// Then answers what `step` makes of the request.
    #[must_use]
    pub fn step(
        mut self,
        step: impl Fn(&ModelRequest<'_>) -> Result<ModelResponse, ModelError> + Send + Sync + 'static,
    ) -> Self {
        self.steps.push(Arc::new(step));
        self
    }

    /// How many steps the script has.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The requests received so far, by any clone of this model, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl Model for ScriptedModel {
    async fn complete(&self, request: ModelRequest<'_>) -> Result<ModelResponse, ModelError> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Seen {
                messages: request.messages.to_vec(),
                tools: request.tools.iter().map(|t| t.name.clone()).collect(),
            });
        let at = request
            .messages
            .iter()
            .filter(|m| matches!(m.body, Body::Assistant { .. }))
            .count();
        let step = self.steps.get(at).ok_or_else(|| {
            ModelError::Script(format!(
                "has no step {} (it has {})",
                at + 1,
                self.steps.len()
            ))
        })?;
        step(&request)
    }
}
