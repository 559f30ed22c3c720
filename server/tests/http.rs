//! The control surface over real HTTP: the JSON-RPC flow of the seed specification, the same
//! through REST, the event stream and its rejoin, and every bad request refused with a clear
//! JSON error and nothing written.

mod common;

use std::sync::Arc;

use common::{Client, serve};
use serde_json::{Value, json};
use trellis::checkpoint::{InMemoryCheckpointer, RunQueue};
use trellis_server::ServeOptions;

fn store() -> Arc<dyn RunQueue> {
    Arc::new(InMemoryCheckpointer::new())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rpc_flow_lists_runs_gets_browses_and_resumes() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);

    let definitions = client
        .rpc("graph_definition_list", json!({}))
        .await
        .expect("definitions");
    assert_eq!(definitions[0]["name"], "Jobs");
    assert_eq!(definitions[0]["blueprint"]["format"], 1);
    assert!(
        definitions[0]["mermaid"]
            .as_str()
            .is_some_and(|m| m.starts_with("flowchart TD"))
    );

    let created = client
        .rpc(
            "graph_run",
            json!({"graph": "Jobs", "input": {"rounds": 2, "pause": true}}),
        )
        .await
        .expect("a run");
    let run_id = created["run"]["run_id"]
        .as_str()
        .expect("a run id")
        .to_owned();
    assert_eq!(
        created["audit"],
        format!("created run {run_id} of graph Jobs")
    );

    let paused = client.settle(&run_id).await;
    assert_eq!(paused["status"], "paused");
    let got = client
        .rpc("graph_run_get", json!({"run_id": run_id}))
        .await
        .expect("the run");
    assert_eq!(got["interrupts"][0]["request"]["question"], "Go on?");
    assert_eq!(got["state"]["done"], 2);

    let listed = client
        .rpc(
            "graph_run_list",
            json!({"graph": "Jobs", "status": "paused"}),
        )
        .await
        .expect("runs");
    assert_eq!(listed.as_array().map(Vec::len), Some(1));
    assert_eq!(listed[0]["run_id"], run_id.as_str());

    let checkpoints = client
        .rpc("graph_checkpoint_list", json!({"run_id": run_id}))
        .await
        .expect("checkpoints");
    let labels: Vec<&str> = checkpoints
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|c| c["label"].as_str())
        .collect();
    assert_eq!(labels, ["start", "step", "pause:before"]);

    let interrupt = got["interrupts"][0]["id"]
        .as_str()
        .expect("an interrupt id");
    let resumed = client
        .rpc(
            "graph_resume",
            json!({"run_id": run_id, "answers": {interrupt: "approve"}}),
        )
        .await
        .expect("resumed");
    assert_eq!(
        resumed["audit"],
        format!("answered run {run_id} of graph Jobs")
    );
    let done = client.settle(&run_id).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["state"]["log"],
        json!(["work", "work", "approved", "finish"])
    );

    let agents = client
        .rpc("graph_agent_list", json!({}))
        .await
        .expect("agents");
    assert_eq!(agents, json!([]));
    let unknown = client
        .rpc("graph_frobnicate", json!({}))
        .await
        .expect_err("no such method");
    assert_eq!(unknown["code"], -32601);
    let missing = client
        .rpc("graph_run_get", json!({}))
        .await
        .expect_err("no run id");
    assert_eq!(missing["code"], -32602);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_flow_through_rest() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (status, graphs) = client.get("/graphs").await;
    assert_eq!((status, graphs[0]["name"].clone()), (200, json!("Jobs")));
    // Its version is what its runs' checkpoints record.
    let version = common::jobs::build(common::Worker).fingerprint().to_owned();
    assert_eq!(graphs[0]["version"], json!(version));
    let mermaid = reqwest::get(format!("{}/graphs/Jobs/mermaid", client.base))
        .await
        .expect("mermaid");
    assert!(
        mermaid
            .text()
            .await
            .expect("text")
            .contains("n_work -.-> n_ask")
    );

    let run_id = client.paused_job().await;

    let (status, listed) = client.get("/runs?status=paused&limit=10").await;
    assert_eq!(status, 200);
    assert_eq!(listed[0]["run_id"], run_id.as_str());
    // A list is of summaries: no state, unless asked for.
    assert_eq!(listed[0].get("state"), None, "{listed}");
    assert_eq!(listed[0]["interrupts"][0]["id"], "ask@2");
    let (_, with_states) = client.get("/runs?status=paused&state=true").await;
    assert_eq!(with_states[0]["state"]["done"], 1, "{with_states}");
    let (_, checkpoints) = client.get(&format!("/runs/{run_id}/checkpoints")).await;
    // `start`, then the step that led to the question: its checkpoint is the pause.
    assert_eq!(checkpoints.as_array().map(Vec::len), Some(2));

    let (status, answered) = client
        .post(
            &format!("/runs/{run_id}/resume"),
            &json!({"answer": {"reject": {"reason": "not today"}}, "interrupt_id": "ask@2"}),
        )
        .await;
    assert_eq!(status, 200, "{answered}");
    let done = client.settle(&run_id).await;
    assert_eq!(
        done["state"]["log"],
        json!(["work", "rejected: not today", "finish"])
    );

    // Cancel: a paused run is cancelled; an ended one cannot be.
    let (_, run) = client
        .post(
            "/runs",
            &json!({"graph": "Jobs", "input": {"rounds": 1, "pause": true}}),
        )
        .await;
    let other = run["run_id"].as_str().expect("an id").to_owned();
    client.settle(&other).await;
    let (status, cancelled) = client
        .post(&format!("/runs/{other}/cancel"), &json!({}))
        .await;
    assert_eq!(
        (status, cancelled["status"].clone()),
        (200, json!("cancelled"))
    );
    assert_eq!(cancelled["error"], "cancelled by a request to the server");
    let (status, again) = client
        .post(&format!("/runs/{other}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 409, "{again}");

    // Retry: the run was cancelled while paused, so it is paused again, asking the same;
    // answered, it completes; a run that is not failed cannot be retried.
    let (status, retried) = client
        .post(&format!("/runs/{other}/retry"), &json!({}))
        .await;
    assert_eq!(
        (status, retried["status"].clone()),
        (200, json!("paused")),
        "{retried}"
    );
    assert_eq!(retried["error"], Value::Null);
    let (status, answered) = client
        .post(
            &format!("/runs/{other}/resume"),
            &json!({"answer": {"reject": {"reason": "after all"}}, "interrupt_id": retried["interrupts"][0]["id"]}),
        )
        .await;
    assert_eq!(status, 200, "{answered}");
    assert_eq!(client.settle(&other).await["status"], "completed");
    let (status, refused) = client
        .post(&format!("/runs/{other}/retry"), &json!({}))
        .await;
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not failed"),
        "{refused}"
    );
    let labels: Vec<String> = client
        .get(&format!("/runs/{other}/checkpoints"))
        .await
        .1
        .as_array()
        .map(|all| {
            all.iter()
                .map(|c| c["label"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(labels.contains(&"retry".to_owned()), "{labels:?}");
    running.shutdown().await;
}

/// The SSE events of `text`: (id, event, data).
fn events(text: &str) -> Vec<(u64, String, Value)> {
    text.split("\n\n")
        .filter_map(|block| {
            let field = |name: &str| {
                block
                    .lines()
                    .find_map(|line| line.strip_prefix(name).map(|v| v.trim_start().to_owned()))
            };
            let id = field("id:")?.parse().ok()?;
            let data = serde_json::from_str(&field("data:")?).ok()?;
            Some((id, field("event:")?, data))
        })
        .collect()
}

/// The next event of a server-sent stream, as its text (keep-alive comments skipped); `None`
/// when the stream ends.
async fn next_event(response: &mut reqwest::Response, buffer: &mut String) -> Option<String> {
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            if event.lines().any(|line| line.starts_with("event:")) {
                return Some(event);
            }
            continue;
        }
        let chunk = response.chunk().await.ok()??;
        buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
}

/// `GET /changes` tells a page that runs were written when they are, not on a timer, and a
/// burst of writes as a few events (at most one a quarter second); it ends when the server
/// stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_changes_stream_tells_of_writes_as_they_happen_and_few_at_a_time() {
    use std::time::{Duration, Instant};
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let mut changes = client
        .http
        .get(format!("{}/changes", client.base))
        .send()
        .await
        .expect("a stream");
    assert_eq!(changes.status(), 200);
    assert_eq!(changes.headers()["content-type"], "text/event-stream");
    let mut buffer = String::new();
    let quiet = tokio::time::timeout(
        Duration::from_millis(500),
        next_event(&mut changes, &mut buffer),
    )
    .await;
    assert!(quiet.is_err(), "an event with nothing written: {quiet:?}");

    // A run of many steps: a burst of writes.
    let started = Instant::now();
    let (code, _) = client
        .post("/runs", &json!({"graph": "Jobs", "input": {"rounds": 40}}))
        .await;
    assert_eq!(code, 201);
    let first = tokio::time::timeout(
        Duration::from_secs(3),
        next_event(&mut changes, &mut buffer),
    )
    .await
    .expect("told of the new run before the studio's fallback would look (5 s)")
    .expect("the stream goes on");
    assert_eq!(first, "event: changed\ndata: {}\n\n");
    let mut count = 1;
    while let Ok(Some(_)) = tokio::time::timeout(
        Duration::from_millis(600),
        next_event(&mut changes, &mut buffer),
    )
    .await
    {
        count += 1;
    }
    // The quiet wait that ended the loop is 600 ms of the elapsed time.
    let most = started.elapsed().as_millis() / 250 + 1;
    assert!(
        count <= most,
        "{count} events in {:?}: more than one a quarter second",
        started.elapsed()
    );
    let (_, run) = client.get("/runs?graph=Jobs").await;
    assert_eq!(run[0]["status"], "completed", "the burst is over: {run}");
    // The server stops with the stream open (a studio left open): the stream ends, and does
    // not hold the shutdown.
    tokio::time::timeout(Duration::from_secs(10), running.shutdown())
        .await
        .expect("the server stops with a page open");
    assert_eq!(next_event(&mut changes, &mut buffer).await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_arrive_in_order_and_a_rejoin_resumes_after_the_last_id() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (_, run) = client
        .post(
            "/runs",
            &json!({"graph": "Jobs", "input": {"rounds": 3, "slow_ms": 30}}),
        )
        .await;
    let run_id = run["run_id"].as_str().expect("an id").to_owned();

    // Opened while the run goes on; it ends when the run completes.
    let text = reqwest::get(format!("{}/runs/{run_id}/stream", client.base))
        .await
        .expect("a stream")
        .text()
        .await
        .expect("the whole stream");
    let seen = events(&text);
    let kinds: Vec<&str> = seen.iter().map(|(_, kind, _)| kind.as_str()).collect();
    // Three `work` steps, then `finish`, whose step is the run's completion.
    assert_eq!(
        kinds,
        ["start", "step", "step", "step", "complete"],
        "{text}"
    );
    let ids: Vec<u64> = seen.iter().map(|(id, _, _)| *id).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert_eq!(seen[1].2["nodes"], json!(["work"]));
    assert_eq!(
        seen[4].2["state"]["log"],
        json!(["work", "work", "work", "finish"])
    );

    let rejoined = client
        .http
        .get(format!("{}/runs/{run_id}/stream", client.base))
        .header("Last-Event-ID", ids[2].to_string())
        .send()
        .await
        .expect("a stream")
        .text()
        .await
        .expect("the rest");
    let rest: Vec<u64> = events(&rejoined).iter().map(|(id, _, _)| *id).collect();
    assert_eq!(rest, ids[3..]);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_request_is_a_clear_json_error_and_writes_nothing() {
    let store = store();
    let running = serve(
        Arc::clone(&store),
        ServeOptions {
            body_limit: 4096,
            ..ServeOptions::default()
        },
    )
    .await;
    let client = Client::new(&running);
    let (_, run) = client
        .post(
            "/runs",
            &json!({"graph": "Jobs", "input": {"rounds": 1, "pause": true}}),
        )
        .await;
    let paused_id = run["run_id"].as_str().expect("an id").to_owned();
    client.settle(&paused_id).await;
    let (_, run) = client
        .post("/runs", &json!({"graph": "Jobs", "input": {"rounds": 1}}))
        .await;
    let done_id = run["run_id"].as_str().expect("an id").to_owned();
    client.settle(&done_id).await;
    let before = store.list_runs(100, 0).await.expect("runs");

    let cases: Vec<(u16, (u16, Value))> = vec![
        (
            400,
            client.post_raw("/runs", "{\"graph\": \"Jobs\", ").await,
        ),
        (
            404,
            client
                .post("/runs", &json!({"graph": "Jbos", "input": {}}))
                .await,
        ),
        (
            400,
            client
                .post(
                    "/runs",
                    &json!({"graph": "Jobs", "input": {"rounds": "many"}}),
                )
                .await,
        ),
        (400, client.post("/runs", &json!({"input": {}})).await),
        (404, client.get("/runs/01JF3Q8ZK5V9W2T7M4N6P8R0XY").await),
        (
            404,
            client
                .get("/runs/01JF3Q8ZK5V9W2T7M4N6P8R0XY/checkpoints")
                .await,
        ),
        (
            409,
            client
                .post(
                    &format!("/runs/{paused_id}/resume"),
                    &json!({"answers": {"work@9": "approve"}}),
                )
                .await,
        ),
        (
            400,
            client
                .post(
                    &format!("/runs/{paused_id}/resume"),
                    &json!({"answer": "maybe", "interrupt_id": "ask@2"}),
                )
                .await,
        ),
        (
            400,
            client
                .post(&format!("/runs/{paused_id}/resume"), &json!({}))
                .await,
        ),
        (
            409,
            client
                .post(
                    &format!("/runs/{done_id}/resume"),
                    &json!({"answer": "approve", "interrupt_id": "ask@2"}),
                )
                .await,
        ),
        (400, client.get("/runs?status=sleeping").await),
        (404, client.get("/graphs/Nope").await),
        (
            413,
            client
                .post(
                    "/runs",
                    &json!({"graph": "Jobs", "input": {"log": ["x".repeat(5000)]}}),
                )
                .await,
        ),
    ];
    for (expected, (status, body)) in &cases {
        assert_eq!(status, expected, "{body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.is_empty(), "a message: {body}");
    }
    assert_eq!(
        cases[1].1.1["error"]["message"],
        "no graph is named `Jbos` (there are: Jobs)"
    );
    assert_eq!(
        cases[6].1.1["error"]["message"],
        format!(
            "run {paused_id} does not ask `work@9` (now it asks `ask@2`): nothing was answered"
        )
    );
    assert_eq!(
        cases[9].1.1["error"]["message"],
        format!("run {done_id} already completed; there is nothing to resume")
    );
    let after = store.list_runs(100, 0).await.expect("runs");
    assert_eq!(before, after, "nothing was written");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_is_required_off_this_machine_and_checked_when_set() {
    // No token, an empty one or a blank one: refused the same way (a blank token is none).
    for token in [None, Some(""), Some("  \t")] {
        let refused = trellis_server::Server::builder(store())
            .build()
            .expect("builds")
            .serve(ServeOptions {
                addr: "0.0.0.0:0".parse().expect("addr"),
                token: token.map(str::to_owned),
                ..ServeOptions::default()
            })
            .await
            .err()
            .expect("refused to start");
        assert_eq!(
            refused.to_string(),
            "binding 0.0.0.0:0 (not a loopback address) requires a bearer token: set `ServeOptions::token`",
            "token {token:?}"
        );
    }

    let running = serve(
        store(),
        ServeOptions {
            token: Some("s3cret".into()),
            ..ServeOptions::default()
        },
    )
    .await;
    let client = Client::new(&running);
    let (status, body) = client.get("/graphs").await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "unauthorized");
    let ok = client
        .http
        .get(format!("{}/graphs", client.base))
        .bearer_auth("s3cret")
        .send()
        .await
        .expect("answers");
    assert_eq!(ok.status().as_u16(), 200);
    let wrong = client
        .http
        .get(format!("{}/graphs", client.base))
        .bearer_auth("s3crex")
        .send()
        .await
        .expect("answers");
    assert_eq!(wrong.status().as_u16(), 401);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_are_listed_run_and_answered_through_the_server() {
    use trellis_agent::testing::RecordingTool;
    use trellis_agent::transcript::InMemoryTranscripts;
    use trellis_agent::{
        AgentDefinition, Catalogue, ScriptedModel, ToolCall, ToolEffect, ToolSpec,
    };

    let send = RecordingTool::new(
        ToolSpec::new(
            "send",
            "sends a message",
            json!({"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]}),
        )
        .with_effect(ToolEffect::SideEffects),
        "sent",
    );
    let mut catalogue = Catalogue::new();
    catalogue
        .add_tool(send.clone())
        .expect("the tool registers");
    catalogue
        .add_agent(AgentDefinition {
            name: "notifier".into(),
            description: "tells people things".into(),
            blueprint: "canonical_turn".into(),
            tools: vec!["send".into()],
            approve_tools: false,
            prompt: "Tell ops.".into(),
        })
        .expect("the agent checks");
    let model = ScriptedModel::new()
        .call(ToolCall::new("c1", "send", r#"{"to": "ops"}"#))
        .answer("Ops was told.");
    let agent = catalogue
        .build("notifier", model, Arc::new(InMemoryTranscripts::new()))
        .expect("builds");
    let running = trellis_server::Server::builder(store())
        .agent(catalogue.card("notifier").expect("a card"), &agent)
        .build()
        .expect("builds")
        .serve(ServeOptions {
            addr: "127.0.0.1:0".parse().expect("addr"),
            ..ServeOptions::default()
        })
        .await
        .expect("serves");
    let client = Client::new(&running);

    let agents = client
        .rpc("graph_agent_list", json!({}))
        .await
        .expect("agents");
    assert_eq!(agents[0]["name"], "notifier");
    assert_eq!(agents[0]["tools"][0]["effect"], "side_effects");
    let card = client
        .rpc("graph_agent_get", json!({"name": "notifier"}))
        .await
        .expect("the agent");
    assert_eq!(card["blueprint"], "canonical_turn");
    let missing = client
        .rpc("graph_agent_get", json!({"name": "notifer"}))
        .await
        .expect_err("no such agent");
    assert_eq!(missing["data"]["status"], 404);

    let created = client
        .rpc("graph_run", json!({"graph": "notifier", "input": {"agent": "notifier", "input": "The disk is full."}}))
        .await
        .expect("a run");
    let run_id = created["run"]["run_id"].as_str().expect("an id").to_owned();
    let paused = client.settle(&run_id).await;
    assert_eq!(paused["status"], "paused", "{paused}");
    assert_eq!(
        paused["interrupts"][0]["request"]["question"],
        r#"Run send({"to": "ops"})?"#
    );
    assert!(send.calls().is_empty());
    // The studio's Approve button sends a decision: agents take it too.
    let (status, body) = client
        .post(
            &format!("/runs/{run_id}/resume"),
            &json!({"answer": "approve", "interrupt_id": paused["interrupts"][0]["id"]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let done = client.settle(&run_id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["state"]["answer"], "Ops was told.");
    assert_eq!(send.calls(), [json!({"to": "ops"})]);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_cancelled_while_a_worker_executes_it_stays_cancelled() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (_, run) = client
        .post(
            "/runs",
            &json!({"graph": "Jobs", "input": {"rounds": 20, "slow_ms": 50}}),
        )
        .await;
    let run_id = run["run_id"].as_str().expect("an id").to_owned();
    // Under way: a worker holds it.
    for _ in 0..100 {
        let (_, now) = client.get(&format!("/runs/{run_id}")).await;
        if now["steps"].as_u64().unwrap_or(0) >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (status, cancelled) = client
        .post(&format!("/runs/{run_id}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 200, "{cancelled}");
    let steps_at_cancel = cancelled["steps"].as_u64().expect("steps");
    // The worker's next checkpoint is refused: the run neither goes on nor comes back.
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let (_, after) = client.get(&format!("/runs/{run_id}")).await;
    assert_eq!(after["status"], "cancelled", "{after}");
    assert_eq!(after["error"], "cancelled by a request to the server");
    assert_eq!(
        after["steps"].as_u64(),
        Some(steps_at_cancel),
        "no step was recorded after the cancel"
    );
    // The workers go on with other runs.
    let (_, next) = client
        .post("/runs", &json!({"graph": "Jobs", "input": {"rounds": 1}}))
        .await;
    let next_id = next["run_id"].as_str().expect("an id").to_owned();
    assert_eq!(client.settle(&next_id).await["status"], "completed");
    running.shutdown().await;
}

/// A resume racing a cancel: whichever wins, the loser is told so with a 409 and the run's
/// status, never a 500; a cancelled run says `cancelled`, and its event stream ends with an
/// `end` event naming that status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_racing_a_cancel_loses_with_a_409_and_the_run_says_cancelled() {
    // SQLite, as `support serve` runs: a claim and the checkpoint after it are two writes, and
    // a request can land between them (in memory nothing can).
    let dir = std::env::temp_dir().join(format!("trellis-race-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let sqlite = trellis::checkpoint::SqliteCheckpointer::open(dir.join("race.db")).expect("opens");
    let running = serve(Arc::new(sqlite), ServeOptions::default()).await;
    let client = Client::new(&running);
    let mut outcomes = Vec::new();
    for trial in 0..30 {
        let (_, run) = client
            .post(
                "/runs",
                &json!({"graph": "Jobs", "input": {"rounds": 1, "pause": true}}),
            )
            .await;
        let run_id = run["run_id"].as_str().expect("an id").to_owned();
        let paused = client.settle(&run_id).await;
        assert_eq!(paused["status"], "paused");
        let (resume_path, cancel_path) = (
            format!("/runs/{run_id}/resume"),
            format!("/runs/{run_id}/cancel"),
        );
        let (approve, nothing) = (
            json!({"answer": "approve", "interrupt_id": paused["interrupts"][0]["id"]}),
            json!({}),
        );
        // One request sent a little after the other, by a different lead each time (either
        // way round), so that some land inside the other.
        let lead = |first: bool| {
            let lead = if (trial % 2 == 0) == first {
                0
            } else {
                50 * (trial / 2)
            };
            tokio::time::sleep(std::time::Duration::from_micros(lead))
        };
        let resume = async {
            lead(true).await;
            client.post(&resume_path, &approve).await
        };
        let cancel = async {
            lead(false).await;
            client.post(&cancel_path, &nothing).await
        };
        let ((resumed, answer), (cancelled, refusal)) = tokio::join!(resume, cancel);
        for (status, body) in [(resumed, &answer), (cancelled, &refusal)] {
            assert!(
                status == 200 || status == 409,
                "a lost race is a 409, never {status}: {body}"
            );
            if status == 409 {
                assert_eq!(body["error"]["code"], "conflict", "{body}");
                let message = body["error"]["message"].as_str().unwrap_or_default();
                assert!(
                    ["running", "paused", "completed", "cancelled"]
                        .iter()
                        .any(|status| message.contains(status)),
                    "the message says where the run stands: {message}"
                );
            }
        }
        let settled = client.settle(&run_id).await;
        if cancelled == 200 {
            assert_eq!(settled["status"], "cancelled", "{settled}");
            assert_eq!(refusal["status"], "cancelled", "{refusal}");
        }
        outcomes.push((resumed, cancelled));
    }
    assert!(
        outcomes.iter().any(|&(_, cancel)| cancel == 200),
        "some cancel won: {outcomes:?}"
    );
    running.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_stream_of_an_ended_run_ends_with_its_status() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (_, run) = client
        .post(
            "/runs",
            &json!({"graph": "Jobs", "input": {"rounds": 1, "pause": true}}),
        )
        .await;
    let run_id = run["run_id"].as_str().expect("an id").to_owned();
    client.settle(&run_id).await;
    let (status, _) = client
        .post(&format!("/runs/{run_id}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 200);
    // From the start, and rejoined after the last event (as a browser rejoins).
    for after in ["0", "99"] {
        let text = client
            .http
            .get(format!("{}/runs/{run_id}/stream", client.base))
            .header("Last-Event-ID", after)
            .send()
            .await
            .expect("the stream answers")
            .text()
            .await
            .expect("the stream ends");
        let last = text
            .trim_end()
            .rsplit("\n\n")
            .next()
            .expect("an event")
            .to_owned();
        assert!(last.contains("event: end"), "{text}");
        assert!(last.contains(r#""status":"cancelled""#), "{last}");
    }
    running.shutdown().await;
}
