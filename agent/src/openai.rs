//! `OpenAiCompatible`: the chat-completions protocol, which OpenAI, Ollama, vLLM, llama.cpp's
//! server and many others speak. A URL, a key and a model name reach any of them.
//!
//! A small client of our own rather than a framework's adapter: a turn needs one request shape
//! (messages, tools, tool calls with the provider's ids, usage), and owning it keeps the call
//! ids and the arguments text exactly as the provider sent them, which the safety rules need.

use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::message::{Body, Message, ToolCall, Usage};
use crate::model::{Model, ModelError, ModelRequest, ModelResponse};

/// A chat-completions client.
///
/// ```no_run
/// use trellis_agent::OpenAiCompatible;
///
/// // Ollama on this machine; for OpenAI, "https://api.openai.com/v1" and a key.
/// let model = OpenAiCompatible::new("http://127.0.0.1:11434/v1", "llama3.1")?;
/// # Ok::<(), trellis_agent::ModelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    client: reqwest::Client,
    endpoint: String,
    model: String,
    api_key: Option<String>,
    temperature: Option<f32>,
}

impl OpenAiCompatible {
    /// A client of the server at `base_url` (the part before `/chat/completions`, as
    /// `https://api.openai.com/v1`), asking for `model`. Requests time out after 120 s.
    ///
    /// # Errors
    /// [`ModelError::Transport`] when the HTTP client cannot be set up (no TLS roots).
    pub fn new(base_url: &str, model: &str) -> Result<Self, ModelError> {
        OpenAiCompatible::with_timeout(base_url, model, Duration::from_secs(120))
    }

    /// As [`new`](Self::new), with another request timeout.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_timeout(
        base_url: &str,
        model: &str,
        timeout: Duration,
    ) -> Result<Self, ModelError> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| ModelError::Transport(e.to_string()))?;
        Ok(OpenAiCompatible {
            client,
            endpoint: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            model: model.to_owned(),
            api_key: None,
            temperature: None,
        })
    }

    /// Sends `key` as a bearer token.
    #[must_use]
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Asks for this sampling temperature (the server's default otherwise).
    #[must_use]
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    fn body(&self, request: &ModelRequest<'_>) -> Value {
        let messages: Vec<Value> = request.messages.iter().filter_map(wire_message).collect();
        let mut body = json!({ "model": self.model, "messages": messages });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": tool.parameters,
                        }
                    })
                })
                .collect();
        }
        if let Some(temperature) = self.temperature {
            body["temperature"] = json!(temperature);
        }
        body
    }
}

/// A history message in the protocol's shape; `None` for what is no message (a removal).
fn wire_message(message: &Message) -> Option<Value> {
    Some(match &message.body {
        Body::System { content } => json!({ "role": "system", "content": content }),
        Body::User { content } => json!({ "role": "user", "content": content }),
        Body::Assistant {
            content,
            tool_calls,
        } => {
            let mut wire = json!({ "role": "assistant", "content": content });
            if !tool_calls.is_empty() {
                wire["tool_calls"] = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": { "name": call.name, "arguments": call.arguments }
                        })
                    })
                    .collect();
            }
            wire
        }
        Body::Tool {
            call_id, content, ..
        } => json!({ "role": "tool", "tool_call_id": call_id, "content": content }),
        _ => return None,
    })
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: WireMessage,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<WireCall>,
}

#[derive(Deserialize)]
struct WireCall {
    id: String,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    /// JSON text; some servers send an object instead, kept as its JSON text.
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

#[async_trait]
impl Model for OpenAiCompatible {
    async fn complete(&self, request: ModelRequest<'_>) -> Result<ModelResponse, ModelError> {
        let mut http = self.client.post(&self.endpoint).json(&self.body(&request));
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
        }
        let response = http
            .send()
            .await
            .map_err(|e| ModelError::Transport(format!("{}: {e}", self.endpoint)))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| ModelError::Transport(e.to_string()))?;
        if !status.is_success() {
            // `{"error": {"message": …}}` when the server says why; else the body itself.
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
                .unwrap_or_else(|| text.chars().take(500).collect());
            return Err(ModelError::Status {
                status: status.as_u16(),
                message,
            });
        }
        let completion: Completion =
            serde_json::from_str(&text).map_err(|e| ModelError::Protocol(e.to_string()))?;
        let Some(choice) = completion.choices.into_iter().next() else {
            return Err(ModelError::Protocol("the answer has no choices".into()));
        };
        let tool_calls = choice
            .message
            .tool_calls
            .into_iter()
            .map(|call| {
                let arguments = match call.function.arguments {
                    Value::String(text) => text,
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                ToolCall::new(call.id, call.function.name, arguments)
            })
            .collect();
        let usage = completion.usage.map_or_else(Usage::default, |u| Usage {
            input_tokens: u.prompt_tokens,
            output_tokens: u.completion_tokens,
        });
        Ok(ModelResponse {
            content: choice.message.content.filter(|c| !c.is_empty()),
            tool_calls,
            usage,
        })
    }
}
