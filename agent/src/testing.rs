//! For tests of apps built on agent turns (feature `test-util`): a tool that records what it
//! was asked — with [`ScriptedModel`](crate::ScriptedModel) it makes a turn deterministic end to
//! end, and shows what ran, with which arguments, and that nothing ran when nothing should —
//! and a chat-completions server on 127.0.0.1 for code that talks to a real provider.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

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

/// A request a [`ChatServer`] received: its headers (lower-case names) and its JSON body.
#[derive(Debug, Clone)]
pub struct Received {
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body, as JSON (`null` when it is not JSON).
    pub body: Value,
}

impl Received {
    /// The value of header `name` (lower case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// How a [`ChatServer`] answers its `n`th request (from 0), given its body: a status and a body.
pub type Reply = Arc<dyn Fn(usize, &Value) -> (u16, String) + Send + Sync>;

/// A chat-completions server on 127.0.0.1, for tests of [`OpenAiCompatible`] and of apps that
/// point it at a URL: `POST /v1/chat/completions` answered by a function of yours, every request
/// kept. Nothing leaves the machine. A request with `"stream": true` is answered as a provider
/// streams: your answer (a whole completion) sent as server-sent events, the text a few
/// characters an event, each tool call's arguments in pieces, the usage last, then `[DONE]`.
///
/// [`OpenAiCompatible`]: crate::OpenAiCompatible
///
/// ```
/// use std::sync::Arc;
/// use trellis_agent::testing::ChatServer;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = ChatServer::start(Arc::new(|_, _| (200, "{}".to_owned()))).await;
/// assert!(server.url().starts_with("http://127.0.0.1:"));
/// assert!(server.received().is_empty());
/// # }
/// ```
pub struct ChatServer {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl ChatServer {
    /// Starts serving on a free port, on the current tokio runtime.
    ///
    /// # Panics
    ///
    /// If no local port can be bound: a test cannot go on without one.
    pub async fn start(reply: Reply) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a local port");
        let url = format!("http://{}/v1", listener.local_addr().expect("bound"));
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let log = Arc::clone(&received);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let mut stream = BufReader::new(stream);
                let mut request_line = String::new();
                if stream.read_line(&mut request_line).await.is_err() {
                    continue;
                }
                let mut headers = Vec::new();
                loop {
                    let mut line = String::new();
                    if stream.read_line(&mut line).await.unwrap_or(0) == 0 || line.trim().is_empty()
                    {
                        break;
                    }
                    if let Some((name, value)) = line.trim().split_once(':') {
                        headers.push((name.trim().to_lowercase(), value.trim().to_owned()));
                    }
                }
                let length: usize = headers
                    .iter()
                    .find(|(n, _)| n == "content-length")
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0; length];
                if stream.read_exact(&mut body).await.is_err() {
                    continue;
                }
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let n = {
                    let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
                    log.push(Received {
                        headers,
                        body: body.clone(),
                    });
                    log.len() - 1
                };
                let (status, text) = if request_line.starts_with("POST /v1/chat/completions ") {
                    reply(n, &body)
                } else {
                    (
                        404,
                        format!("{{\"error\": \"no route: {}\"}}", request_line.trim()),
                    )
                };
                let out = stream.get_mut();
                if status == 200 && body["stream"] == Value::Bool(true) {
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                    let _ = out.write_all(head.as_bytes()).await;
                    // A few bytes at a time, flushed apart: events, and characters, arrive
                    // split across reads, as they do from a real server.
                    for piece in server_sent_events(&text).as_bytes().chunks(7) {
                        if out.write_all(piece).await.is_err() || out.flush().await.is_err() {
                            break;
                        }
                        tokio::task::yield_now().await;
                    }
                } else {
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                        text.len()
                    );
                    let _ = out.write_all(response.as_bytes()).await;
                }
                let _ = out.shutdown().await;
            }
        });
        ChatServer { url, received }
    }

    /// The base URL to give a client: `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request so far, in order.
    pub fn received(&self) -> Vec<Received> {
        self.received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// A whole completion (`{"choices": [{"message": …}], "usage": …}`) as the server-sent events
/// a provider streams it in. Text that is no completion is sent as one event.
fn server_sent_events(completion: &str) -> String {
    let Ok(completion) = serde_json::from_str::<Value>(completion) else {
        return format!("data: {completion}\n\ndata: [DONE]\n\n");
    };
    let message = &completion["choices"][0]["message"];
    let delta = |delta: Value| json!({ "choices": [{ "index": 0, "delta": delta }] });
    let mut events = vec![delta(json!({ "role": "assistant" }))];
    let text: Vec<char> = message["content"]
        .as_str()
        .unwrap_or_default()
        .chars()
        .collect();
    for piece in text.chunks(3) {
        events.push(delta(
            json!({ "content": piece.iter().collect::<String>() }),
        ));
    }
    for (index, call) in message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        events.push(delta(json!({ "tool_calls": [{
            "index": index, "id": call["id"], "type": "function",
            "function": { "name": call["function"]["name"], "arguments": "" }
        }] })));
        let arguments: Vec<char> = call["function"]["arguments"]
            .as_str()
            .unwrap_or_default()
            .chars()
            .collect();
        for piece in arguments.chunks(5) {
            events.push(delta(json!({ "tool_calls": [{
                "index": index, "function": { "arguments": piece.iter().collect::<String>() }
            }] })));
        }
    }
    let finish = completion["choices"][0]["finish_reason"].clone();
    events.push(json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": finish }] }));
    if !completion["usage"].is_null() {
        events.push(json!({ "choices": [], "usage": completion["usage"] }));
    }
    let mut sse: String = events
        .iter()
        .map(|event| format!("data: {event}\n\n"))
        .collect();
    sse.push_str("data: [DONE]\n\n");
    sse
}
