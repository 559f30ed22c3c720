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

impl OpenAiCompatible {
    /// Sends `body`; the response when the provider accepted it, else its error.
    async fn send(&self, body: &Value) -> Result<reqwest::Response, ModelError> {
        let mut http = self.client.post(&self.endpoint).json(body);
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
        }
        let response = http
            .send()
            .await
            .map_err(|e| ModelError::Transport(format!("{}: {e}", self.endpoint)))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let text = response
            .text()
            .await
            .map_err(|e| ModelError::Transport(e.to_string()))?;
        // `{"error": {"message": …}}` when the server says why; else the body itself.
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
            .unwrap_or_else(|| text.chars().take(500).collect());
        Err(ModelError::Status {
            status: status.as_u16(),
            message,
        })
    }
}

/// A call's arguments as JSON text: some servers send an object instead, kept as its text.
fn arguments_text(arguments: Value) -> String {
    match arguments {
        Value::String(text) => text,
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn usage_of(usage: Option<WireUsage>) -> Usage {
    usage.map_or_else(Usage::default, |u| Usage {
        input_tokens: u.prompt_tokens,
        output_tokens: u.completion_tokens,
    })
}

/// One event of a streamed completion (`data: {…}`): a piece of the answer.
#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    choices: Vec<DeltaChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct DeltaChoice {
    #[serde(default)]
    delta: DeltaMessage,
}

#[derive(Deserialize, Default)]
struct DeltaMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<DeltaCall>,
}

/// A piece of a tool call: the first piece of call `index` has its id and name, the
/// following ones more of its arguments.
#[derive(Deserialize)]
struct DeltaCall {
    #[serde(default)]
    index: usize,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: DeltaFunction,
}

#[derive(Deserialize, Default)]
struct DeltaFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Value,
}

/// A streamed answer as its pieces arrive: the text so far, each call's id, name and
/// arguments so far, the usage when the provider sends it (in the last event).
#[derive(Default)]
struct Gathered {
    content: String,
    calls: Vec<(String, String, String)>,
    usage: Usage,
}

impl Gathered {
    /// Takes one event's data; returns the text it adds.
    fn take(&mut self, data: &str) -> Result<Option<String>, ModelError> {
        let delta: Delta = serde_json::from_str(data)
            .map_err(|e| ModelError::Protocol(format!("a streamed event: {e}")))?;
        if delta.usage.is_some() {
            self.usage = usage_of(delta.usage);
        }
        let mut added = None;
        for choice in delta.choices.into_iter().take(1) {
            for call in choice.delta.tool_calls {
                if self.calls.len() <= call.index {
                    self.calls.resize_with(call.index + 1, Default::default);
                }
                let (id, name, arguments) = &mut self.calls[call.index];
                if let Some(piece) = call.id {
                    id.push_str(&piece);
                }
                if let Some(piece) = call.function.name {
                    name.push_str(&piece);
                }
                arguments.push_str(&arguments_text(call.function.arguments));
            }
            if let Some(text) = choice.delta.content.filter(|text| !text.is_empty()) {
                self.content.push_str(&text);
                added = Some(text);
            }
        }
        Ok(added)
    }

    fn into_response(self) -> ModelResponse {
        ModelResponse {
            content: Some(self.content).filter(|c| !c.is_empty()),
            tool_calls: self
                .calls
                .into_iter()
                .map(|(id, name, arguments)| ToolCall::new(id, name, arguments))
                .collect(),
            usage: self.usage,
        }
    }
}

/// The data of each whole event in `buffer` (events end with a blank line), taken out of it;
/// what is left is an event still arriving. Split on bytes, decoded whole: a character split
/// between two reads is read once both halves are in.
fn whole_events(buffer: &mut Vec<u8>) -> Result<Vec<String>, ModelError> {
    let mut events = Vec::new();
    while let Some(end) = buffer.windows(2).position(|pair| pair == b"\n\n") {
        let event: Vec<u8> = buffer.drain(..end + 2).collect();
        let text = std::str::from_utf8(&event)
            .map_err(|e| ModelError::Protocol(format!("a streamed event is not UTF-8: {e}")))?;
        let data: Vec<&str> = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| data.strip_prefix(' ').unwrap_or(data))
            .collect();
        if !data.is_empty() {
            events.push(data.join("\n"));
        }
    }
    Ok(events)
}

#[async_trait]
impl Model for OpenAiCompatible {
    async fn complete(&self, request: ModelRequest<'_>) -> Result<ModelResponse, ModelError> {
        let response = self.send(&self.body(&request)).await?;
        let text = response
            .text()
            .await
            .map_err(|e| ModelError::Transport(e.to_string()))?;
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
                ToolCall::new(
                    call.id,
                    call.function.name,
                    arguments_text(call.function.arguments),
                )
            })
            .collect();
        Ok(ModelResponse {
            content: choice.message.content.filter(|c| !c.is_empty()),
            tool_calls,
            usage: usage_of(completion.usage),
        })
    }

    /// Asks with `stream: true` (and the usage in the last event) and reads the server-sent
    /// events as they arrive.
    async fn stream(
        &self,
        request: ModelRequest<'_>,
        tokens: &(dyn for<'t> Fn(&'t str) + Send + Sync),
    ) -> Result<ModelResponse, ModelError> {
        let mut body = self.body(&request);
        body["stream"] = json!(true);
        body["stream_options"] = json!({ "include_usage": true });
        let mut response = self.send(&body).await?;
        let mut buffer = Vec::new();
        let mut gathered = Gathered::default();
        loop {
            let read = response
                .chunk()
                .await
                .map_err(|e| ModelError::Transport(e.to_string()))?;
            let closed = read.is_none();
            match read {
                // Carriage returns only ever end lines (JSON escapes its own): dropped, so
                // that `\r\n\r\n` ends an event as `\n\n` does.
                Some(bytes) => buffer.extend(bytes.iter().filter(|&&byte| byte != b'\r')),
                // A server that closes without `[DONE]` ends its last event with the stream.
                None => buffer.extend_from_slice(b"\n\n"),
            }
            for data in whole_events(&mut buffer)? {
                if data.trim() == "[DONE]" {
                    return Ok(gathered.into_response());
                }
                if let Some(text) = gathered.take(&data)? {
                    tokens(&text);
                }
            }
            if closed {
                break;
            }
        }
        Ok(gathered.into_response())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_anywhere_are_read_whole_once_their_end_arrives() {
        let sse = "data: {\"choices\":[{\"delta\":{\"content\":\"× ü\"}}]}\n\ndata: [DONE]\n\n";
        // Every place a read can end, inside a character too.
        for split in 0..=sse.len() {
            let (first, second) = sse.as_bytes().split_at(split);
            let mut buffer = first.to_vec();
            let mut events = whole_events(&mut buffer).expect("UTF-8 once whole");
            buffer.extend_from_slice(second);
            events.extend(whole_events(&mut buffer).expect("UTF-8 once whole"));
            assert_eq!(
                events,
                [
                    "{\"choices\":[{\"delta\":{\"content\":\"× ü\"}}]}",
                    "[DONE]"
                ],
                "split at {split}"
            );
            assert!(buffer.is_empty());
        }
    }

    #[test]
    fn a_tool_call_streamed_in_pieces_is_put_back_together() {
        let mut gathered = Gathered::default();
        let events = [
            r#"{"choices":[{"delta":{"role":"assistant","content":"Let me "}}]}"#,
            r#"{"choices":[{"delta":{"content":"check."}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"calculator","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"expr"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_2","function":{"name":"list_files","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ession\": \"1\"}"}}]}}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#,
        ];
        let added: Vec<Option<String>> = events
            .iter()
            .map(|data| gathered.take(data).expect("an event"))
            .collect();
        assert_eq!(added[..2], [Some("Let me ".into()), Some("check.".into())]);
        assert!(added[2..].iter().all(Option::is_none));
        let response = gathered.into_response();
        assert_eq!(response.content.as_deref(), Some("Let me check."));
        assert_eq!(
            response.tool_calls,
            [
                ToolCall::new("call_1", "calculator", "{\"expression\": \"1\"}"),
                ToolCall::new("call_2", "list_files", "{}"),
            ]
        );
        assert_eq!(
            (response.usage.input_tokens, response.usage.output_tokens),
            (3, 4)
        );
        assert!(matches!(
            Gathered::default().take("{not json"),
            Err(ModelError::Protocol(_))
        ));
    }
}
