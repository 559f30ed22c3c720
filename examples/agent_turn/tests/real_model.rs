//! The example on a real model, as its README says to run it: `--base-url` and `--model`, against
//! a chat-completions server on 127.0.0.1 that answers as a model would (tool calls first, then
//! an answer from their results). The key comes from `OPENAI_API_KEY`.

use std::sync::Arc;

use serde_json::{Value, json};
use trellis_agent::testing::ChatServer;

/// The model's answers: the two tool calls, then the results it was sent, quoted.
fn reply(n: usize, body: &Value) -> (u16, String) {
    let answer = if n == 0 {
        json!({
            "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [
                    { "id": "call_a", "type": "function",
                      "function": { "name": "list_files", "arguments": "{\"path\": \"notes\"}" } },
                    { "id": "call_b", "type": "function",
                      "function": { "name": "calculator", "arguments": "{\"expression\": \"12 * 7\"}" } }
                ]
            } }]
        })
    } else {
        let result = |id: &str| {
            body["messages"]
                .as_array()
                .and_then(|m| {
                    m.iter()
                        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
                })
                .and_then(|m| m["content"].as_str())
                .unwrap_or("none")
                .replace('\n', ", ")
        };
        json!({
            "choices": [{ "index": 0, "finish_reason": "stop", "message": {
                "role": "assistant",
                "content": format!("Notes: {}; 12 × 7 = {}.", result("call_a"), result("call_b"))
            } }]
        })
    };
    (200, answer.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_turn_runs_on_the_server_named_with_the_key_from_the_environment() {
    let server = ChatServer::start(Arc::new(reply)).await;
    let url = server.url().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_agent_turn"))
            .args(["--base-url", &url, "--model", "local-model"])
            .env("OPENAI_API_KEY", "sk-test")
            .output()
            .expect("the example runs")
    })
    .await
    .expect("joined");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("assistant calls calculator {\"expression\": \"12 * 7\"} [call_b]"),
        "{stdout}"
    );
    assert!(stdout.contains("tool calculator [call_b]: 84"), "{stdout}");
    assert!(
        stdout.contains("assistant: Notes: ") && stdout.contains("12 × 7 = 84."),
        "{stdout}"
    );
    let received = server.received();
    assert_eq!(received.len(), 2, "two model calls");
    assert_eq!(received[0].body["model"], "local-model");
    assert_eq!(
        received[0].header("authorization"),
        Some("Bearer sk-test"),
        "the key from OPENAI_API_KEY"
    );
}

#[test]
fn help_says_what_it_shows_and_that_the_model_is_scripted() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agent_turn"))
        .arg("--help")
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success());
    assert!(stdout.contains("The model is scripted"), "{stdout}");
    assert!(stdout.contains("--base-url"), "{stdout}");
}
