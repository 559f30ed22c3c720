//! The chat-completions client against a server on 127.0.0.1 that speaks the protocol, started
//! by each test: a tool-call round trip through a whole turn, and a server error. Nothing
//! leaves the machine.

mod common;

use std::sync::Arc;

use common::{catalogue, recording};
use serde_json::json;
use tokio::net::TcpListener;
use trellis::RunError;
use trellis::checkpoint::{Checkpointer, InMemoryCheckpointer, RunStatus};
use trellis::stream::{StreamItem, StreamMode};
use trellis_agent::testing::{ChatServer, Received, Reply};
use trellis_agent::transcript::InMemoryTranscripts;
use trellis_agent::{
    AgentError, Catalogue, Message, Model, ModelError, ModelRequest, OpenAiCompatible, ToolEffect,
};

/// Serves chat completions on 127.0.0.1: the `n`th request (from 0) is answered by `reply`.
/// Returns the base URL and the server, whose requests the test reads.
async fn serve(reply: Reply) -> (String, ChatServer) {
    let server = ChatServer::start(reply).await;
    (server.url().to_owned(), server)
}

fn received(server: &ChatServer) -> Vec<Received> {
    server.received()
}

/// A model that calls the calculator for 6 × 7, then answers from the result it was sent.
fn calculator_model() -> Reply {
    Arc::new(|_, body| {
        // Answers from the tool result it was sent, as a model would; calls the tool first.
        let result = body["messages"].as_array().and_then(|m| {
            m.iter()
                .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_abc")
        });
        let answer = match result {
            None => json!({
                "id": "chatcmpl-1",
                "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null,
                    "tool_calls": [{ "id": "call_abc", "type": "function",
                        "function": { "name": "calculator", "arguments": "{\"expression\": \"6 * 7\"}" } }]
                } }],
                "usage": { "prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39 }
            }),
            Some(result) => json!({
                "choices": [{ "index": 0, "finish_reason": "stop",
                    "message": { "role": "assistant",
                        "content": format!("6 × 7 = {}.", result["content"].as_str().unwrap_or("?")) } }],
                "usage": { "prompt_tokens": 52, "completion_tokens": 7 }
            }),
        };
        (200, answer.to_string())
    })
}

#[tokio::test]
async fn a_tool_call_round_trip_through_a_whole_turn() {
    let (url, log) = serve(calculator_model()).await;
    let model = OpenAiCompatible::new(&url, "local-model")
        .expect("a client")
        .api_key("test-key");
    let assistant = Catalogue::shipped()
        .expect("shipped")
        .build("assistant", model, Arc::new(InMemoryTranscripts::new()))
        .expect("builds");

    let outcome = assistant
        .start("What is 6 × 7?")
        .await
        .expect("the turn runs");
    assert_eq!(outcome.answer.as_deref(), Some("6 × 7 = 42."));
    assert_eq!(
        (outcome.usage.input_tokens, outcome.usage.output_tokens),
        (82, 16)
    );

    let requests = received(&log);
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].header("authorization"), Some("Bearer test-key"));
    let first = &requests[0].body;
    assert_eq!(first["model"], "local-model");
    assert_eq!(first["messages"][0]["role"], "system");
    assert_eq!(
        first["messages"][1],
        json!({"role": "user", "content": "What is 6 × 7?"})
    );
    let advertised: Vec<&str> = first["tools"]
        .as_array()
        .expect("tools advertised")
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(advertised, ["calculator", "list_files"]);
    assert_eq!(first["tools"][0]["type"], "function");
    assert_eq!(
        first["tools"][0]["function"]["parameters"]["required"],
        json!(["expression"])
    );

    let second = &requests[1].body;
    assert_eq!(
        second["tools"], first["tools"],
        "the same tools are advertised again"
    );
    assert_eq!(
        second["messages"][2],
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_abc", "type": "function",
            "function": {"name": "calculator", "arguments": "{\"expression\": \"6 * 7\"}"}}]})
    );
    assert_eq!(
        second["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_abc", "content": "42"})
    );

    let transcript = assistant
        .transcript(&outcome.run_id)
        .await
        .expect("transcript");
    assert_eq!(
        transcript.last().map(|m| &m.body),
        Some(&Message::assistant("6 × 7 = 42.").body)
    );
}

#[tokio::test]
async fn a_server_error_fails_the_run_clearly_and_runs_nothing() {
    let (url, log) = serve(Arc::new(|_, _| {
        (
            500,
            json!({"error": {"message": "model overloaded", "type": "server_error"}}).to_string(),
        )
    }))
    .await;
    let send = recording("send", ToolEffect::SideEffects, "sent");
    let store = Arc::new(InMemoryCheckpointer::new());
    let agent = catalogue("canonical_turn", [send.clone()], false)
        .build(
            "tester",
            OpenAiCompatible::new(&url, "m").expect("client"),
            Arc::new(InMemoryTranscripts::new()),
        )
        .expect("builds")
        .with_checkpointer(Arc::clone(&store));

    let error = agent
        .start("Send the report.")
        .await
        .expect_err("the run fails");
    let AgentError::Failed(failed) = &error else {
        panic!("a failed run, not {error:?}");
    };
    let RunError::Node(failure) = &failed.error else {
        panic!("a node failure, not {error:?}");
    };
    assert_eq!(failure.node, "dispatch");
    assert_eq!(
        failure.message,
        "the model provider answered 500: model overloaded"
    );
    // The shipped blueprint retries the call twice, then gives up.
    assert_eq!(failure.attempts, 3);
    assert_eq!(received(&log).len(), 3);
    assert!(send.calls().is_empty(), "nothing was executed");
    let run = store.list_runs(1, 0).await.expect("store");
    assert_eq!(run[0].status, RunStatus::Failed);
    assert_eq!(
        run[0].error.as_deref(),
        Some(failed.error.to_string().as_str())
    );
    assert_eq!(
        run[0].run_id, failed.run_id,
        "the error names the failed run"
    );
}

#[tokio::test]
async fn a_streamed_turn_sends_tokens_as_they_arrive_and_ends_with_the_same_answer() {
    let (url, log) = serve(calculator_model()).await;
    let model = OpenAiCompatible::new(&url, "local-model").expect("a client");
    let assistant = Catalogue::shipped()
        .expect("shipped")
        .build("assistant", model, Arc::new(InMemoryTranscripts::new()))
        .expect("builds");

    let mut stream = assistant
        .graph()
        .stream(assistant.input("What is 6 × 7?"), StreamMode::Messages);
    let mut chunks = Vec::new();
    while let Some(item) = stream.next().await {
        if let StreamItem::Messages { node, chunk, .. } = item {
            chunks.push((node, chunk));
        }
    }
    let outcome = stream.finish().await.expect("the turn runs");
    let transcript = assistant
        .transcript(outcome.run_id())
        .await
        .expect("transcript");
    let answer = transcript.last().expect("an answer");
    assert_eq!(answer.body, Message::assistant("6 × 7 = 42.").body);

    // The answer came in pieces (three characters each from this server), each carrying the
    // id of the message they make up, and together they are its text.
    assert!(chunks.len() > 2, "{chunks:?}");
    assert!(chunks.iter().all(|(_, chunk)| chunk.id == answer.id));
    assert!(
        chunks.iter().all(|(node, _)| node == "dispatch"),
        "{chunks:?}"
    );
    let text: String = chunks
        .iter()
        .map(|(_, chunk)| chunk.content.as_str())
        .collect();
    assert_eq!(text, "6 × 7 = 42.");

    // The tool call, streamed in pieces, was put together as the provider meant it: the
    // calculator ran on the whole expression, and the usage of the last events was counted.
    let requests = received(&log);
    assert!(requests.iter().all(|r| r.body["stream"] == true));
    assert_eq!(
        requests[1].body["messages"][2]["tool_calls"][0]["function"]["arguments"],
        "{\"expression\": \"6 * 7\"}"
    );
    assert_eq!(
        requests[1].body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_abc", "content": "42"})
    );
    let state = outcome.state();
    assert_eq!((state.input_tokens, state.output_tokens), (82, 16));

    // Not streamed, the same turn asks without `stream` and answers the same.
    let plain = assistant
        .start("What is 6 × 7?")
        .await
        .expect("the turn runs");
    assert_eq!(plain.answer.as_deref(), Some("6 × 7 = 42."));
    assert!(
        received(&log)[2..]
            .iter()
            .all(|r| r.body.get("stream").is_none())
    );
}

#[tokio::test]
async fn an_unreachable_server_and_a_garbled_answer_are_errors_that_say_so() {
    // A port just released: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("port")
        .local_addr()
        .expect("addr")
        .port();
    let request = ModelRequest {
        messages: &[Message::user("hi")],
        tools: &[],
    };
    let model = OpenAiCompatible::new(&format!("http://127.0.0.1:{port}/v1"), "m").expect("client");
    let error = model.complete(request).await.expect_err("no server");
    assert!(matches!(error, ModelError::Transport(_)), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("the model provider could not be reached: http://127.0.0.1:"),
        "{error}"
    );

    let (url, _) = serve(Arc::new(|_, _| (200, "{\"choices\": \"no\"}".to_owned()))).await;
    let model = OpenAiCompatible::new(&url, "m").expect("client");
    let error = model.complete(request).await.expect_err("garbled");
    assert!(matches!(error, ModelError::Protocol(_)), "{error:?}");
}
