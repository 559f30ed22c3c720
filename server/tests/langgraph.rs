//! LangGraph's Agent Server routes over real HTTP, as its SDKs call them: assistants, a thread
//! run to its question and resumed with `Command(resume=…)`, its state and history, a second
//! input on the same thread, the double-texting strategies, and LangGraph's error shapes.
//! (`langgraph/sdk_test.py` runs LangGraph's own Python SDK against `support serve` in CI.)

mod common;

use std::sync::Arc;

use common::{Client, serve, sse, streamed};
use serde_json::{Value, json};
use trellis::checkpoint::{InMemoryCheckpointer, RunQueue};
use trellis_server::ServeOptions;

fn store() -> Arc<dyn RunQueue> {
    Arc::new(InMemoryCheckpointer::new())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_pauses_resumes_and_goes_on_through_langgraph_s_routes() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);

    assert_eq!(client.get("/ok").await, (200, json!({ "ok": true })));
    let (status, assistants) = client.post("/assistants/search", &json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(assistants[0]["graph_id"], "Jobs");
    let assistant = assistants[0]["assistant_id"].as_str().unwrap().to_owned();
    let (_, by_name) = client.get("/assistants/Jobs").await;
    assert_eq!(by_name["assistant_id"], assistant);
    // The state's schemas: a run's input is an update, its output the state; a pause takes a
    // `Decision`.
    let (status, schemas) = client
        .get(&format!("/assistants/{assistant}/schemas"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(schemas["graph_id"], "Jobs");
    assert_eq!(schemas["state_schema"]["title"], "Job");
    assert_eq!(schemas["output_schema"], schemas["state_schema"]);
    assert_eq!(
        schemas["input_schema"]["properties"]["rounds"]["type"],
        json!(["integer", "null"])
    );
    assert_eq!(
        schemas["state_schema"]["properties"]["log"]["type"],
        "array"
    );
    assert!(schemas["config_schema"].is_null());
    let answer = schemas["answer_schema"].to_string();
    assert!(
        answer.contains("\"approve\"") && answer.contains("\"reject\""),
        "{answer}"
    );

    let (status, thread) = client
        .post("/threads", &json!({ "metadata": { "user": "ada" } }))
        .await;
    assert_eq!(status, 200);
    assert_eq!(thread["status"], "idle");
    let id = thread["thread_id"].as_str().unwrap().to_owned();

    let (status, paused) = client
        .post(
            &format!("/threads/{id}/runs/wait"),
            &json!({ "assistant_id": assistant, "input": { "rounds": 2, "pause": true } }),
        )
        .await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["done"], 2);
    let question = &paused["__interrupt__"][0];
    assert_eq!(question["id"], "ask@3");
    assert_eq!(question["value"]["question"], "Go on?");

    let (_, state) = client.get(&format!("/threads/{id}/state")).await;
    assert_eq!(state["next"], json!(["ask"]));
    assert_eq!(state["tasks"][0]["name"], "ask");
    assert_eq!(state["tasks"][0]["interrupts"][0]["id"], "ask@3");
    assert_eq!(state["interrupts"][0]["id"], "ask@3");
    let (_, got) = client.get(&format!("/threads/{id}")).await;
    assert_eq!(got["status"], "interrupted");
    assert_eq!(got["interrupts"]["ask@3"][0]["id"], "ask@3");

    let (status, done) = client
        .post(
            &format!("/threads/{id}/runs/wait"),
            &json!({ "assistant_id": "Jobs", "command": { "resume": "approve" } }),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(
        done["log"],
        json!(["work", "work", "approved", "finish"]),
        "answered, then to the end"
    );
    assert!(done.get("__interrupt__").is_none());

    // A second input on the same thread: `done` sums, `log` appends.
    let (_, again) = client
        .post(
            &format!("/threads/{id}/runs/wait"),
            &json!({ "assistant_id": "Jobs", "input": { "rounds": 3, "pause": false } }),
        )
        .await;
    assert_eq!(
        again["done"], 3,
        "the thread's 2 and one more round to reach 3"
    );
    assert_eq!(again["log"].as_array().map(Vec::len), Some(6));

    let (_, history) = client
        .post(&format!("/threads/{id}/history"), &json!({ "limit": 50 }))
        .await;
    let history = history.as_array().unwrap();
    let (_, state) = client.get(&format!("/threads/{id}/state")).await;
    assert_eq!(history[0]["checkpoint"], state["checkpoint"]);
    for pair in history.windows(2) {
        assert_eq!(pair[0]["parent_checkpoint"], pair[1]["checkpoint"]);
    }
    assert!(history.last().unwrap()["parent_checkpoint"].is_null());
    let runs_of = |h: &[Value]| -> Vec<String> {
        let mut runs: Vec<String> = h
            .iter()
            .map(|s| s["metadata"]["run_id"].as_str().unwrap().to_owned())
            .collect();
        runs.dedup();
        runs
    };
    assert_eq!(runs_of(history).len(), 2, "both runs, newest first");

    // Filtered by metadata: the runs' starts, newest first.
    let (_, starts) = client
        .post(
            &format!("/threads/{id}/history"),
            &json!({ "limit": 50, "filter": { "source": "start" } }),
        )
        .await;
    let starts = starts.as_array().unwrap();
    assert_eq!(starts.len(), 2, "one start per run");
    assert!(starts.iter().all(|s| s["metadata"]["source"] == "start"));
    assert_eq!(runs_of(starts), runs_of(history));

    // Any state of the history by its checkpoint id, the same as listed.
    for listed in [&history[0], &history[3], history.last().unwrap()] {
        let checkpoint = listed["checkpoint"]["checkpoint_id"].as_str().unwrap();
        let (status, at) = client
            .get(&format!("/threads/{id}/state/{checkpoint}"))
            .await;
        assert_eq!(status, 200);
        assert_eq!(&at, listed);
    }
    let (status, _) = client.get(&format!("/threads/{id}/state/nothing:1")).await;
    assert_eq!(status, 404);

    let (_, runs) = client.get(&format!("/threads/{id}/runs")).await;
    assert_eq!(runs.as_array().map(Vec::len), Some(2));
    assert_eq!(runs[0]["status"], "success");
    assert_eq!(runs[0]["thread_id"], id);
    assert_eq!(runs_of(history)[0], runs[0]["run_id"].as_str().unwrap());

    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_is_edited_taken_up_and_forked_through_langgraph_s_routes() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (_, thread) = client.post("/threads", &json!({})).await;
    let id = thread["thread_id"].as_str().unwrap().to_owned();
    let wait = |body: Value| waited(&client, &id, body);
    let (_, first) = wait(json!({ "assistant_id": "Jobs", "input": { "rounds": 1 } })).await;
    assert_eq!(first["log"], json!(["work", "finish"]));

    // Edited as if `work` had asked for two rounds: `work` is pending, and nothing runs it.
    let (status, edit) = client
        .post(
            &format!("/threads/{id}/state"),
            &json!({ "values": { "rounds": 2 }, "as_node": "work" }),
        )
        .await;
    assert_eq!(status, 200, "{edit}");
    let edit_id = edit["checkpoint"]["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(edit["checkpoint"]["thread_id"], id);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let (_, state) = client.get(&format!("/threads/{id}/state")).await;
    assert_eq!(state["checkpoint_id"], edit_id.as_str());
    assert_eq!(state["next"], json!(["work"]));
    assert_eq!(state["values"]["rounds"], 2);
    assert_eq!(state["values"]["log"], json!(["work", "finish"]));
    assert_eq!(state["metadata"]["source"], "update");
    let (_, got) = client.get(&format!("/threads/{id}")).await;
    assert_eq!(got["status"], "idle", "an edit asks no question");

    // A run with no input takes the edit up, in the edit's own run.
    let (status, taken) = wait(json!({ "assistant_id": "Jobs", "input": null })).await;
    assert_eq!(status, 200, "{taken}");
    assert_eq!(taken["log"], json!(["work", "finish", "work", "finish"]));
    assert_eq!(taken["done"], 2);
    let (_, runs) = client.get(&format!("/threads/{id}/runs")).await;
    let newest = runs[0]["run_id"].as_str().unwrap();
    assert!(
        edit_id.starts_with(&format!("{newest}:")),
        "{edit_id} {runs}"
    );

    // `as_node` by default: the node that wrote last (`finish`, whose edge is END).
    let (status, _) = client
        .post(
            &format!("/threads/{id}/state"),
            &json!({ "values": { "pause": true } }),
        )
        .await;
    assert_eq!(status, 200);
    let (_, state) = client.get(&format!("/threads/{id}/state")).await;
    assert_eq!(state["next"], json!([]));
    assert_eq!(state["values"]["pause"], true);

    // A fork: run again from the first run's checkpoint before `finish`.
    let (_, history) = client
        .post(&format!("/threads/{id}/history"), &json!({ "limit": 100 }))
        .await;
    let first_id = first_run_id(&client, &id).await;
    let before_finish = history
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["next"] == json!(["finish"]) && s["metadata"]["run_id"] == first_id.as_str())
        .unwrap()["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, forked) = wait(json!({
        "assistant_id": "Jobs",
        "input": null,
        "checkpoint_id": before_finish,
    }))
    .await;
    assert_eq!(status, 200, "{forked}");
    assert_eq!(forked["log"], json!(["work", "finish"]));
    let (_, state) = client.get(&format!("/threads/{id}/state")).await;
    assert_eq!(state["values"]["log"], json!(["work", "finish"]));
    let (_, history) = client
        .post(&format!("/threads/{id}/history"), &json!({ "limit": 100 }))
        .await;
    assert!(
        history
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["checkpoint_id"] == before_finish.as_str()),
        "the fork's history goes through the checkpoint it went on from"
    );

    // At a checkpoint of the history, `as_node` by default is the node that wrote last up to
    // there (`work`, whose router now asks), not the newest run's last node (`finish`).
    let (status, edit) = client
        .post(
            &format!("/threads/{id}/state"),
            &json!({ "values": { "pause": true }, "checkpoint_id": before_finish }),
        )
        .await;
    assert_eq!(status, 200, "{edit}");
    let (_, state) = client.get(&format!("/threads/{id}/state")).await;
    assert_eq!(state["next"], json!(["ask"]), "{state}");
    assert_eq!(state["values"]["log"], json!(["work"]));

    // What is refused: an unknown node, an id not of this server, a checkpoint of another
    // thread, an input with a checkpoint, a thread with no graph to edit with.
    let (status, unknown) = client
        .post(
            &format!("/threads/{id}/state"),
            &json!({ "values": {}, "as_node": "nowhere" }),
        )
        .await;
    assert_eq!(status, 400, "{unknown}");
    let (status, _) = client
        .post(
            &format!("/threads/{id}/state"),
            &json!({ "values": {}, "checkpoint_id": "garbage" }),
        )
        .await;
    assert_eq!(status, 422);
    let (_, other) = client.post("/threads", &json!({})).await;
    let other = other["thread_id"].as_str().unwrap().to_owned();
    let (status, refused) = client
        .post(
            &format!("/threads/{other}/state"),
            &json!({ "values": {}, "as_node": "work" }),
        )
        .await;
    assert_eq!(status, 422, "{refused}");
    assert!(refused["detail"].as_str().unwrap().contains("graph_id"));
    let (status, _) = client
        .post(
            &format!("/threads/{other}/runs/wait"),
            &json!({ "assistant_id": "Jobs", "input": null, "checkpoint_id": before_finish }),
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = wait(json!({
        "assistant_id": "Jobs",
        "input": { "rounds": 1 },
        "checkpoint_id": before_finish,
    }))
    .await;
    assert_eq!(status, 422);

    // Before its first run, a thread whose metadata names its graph is edited from the
    // state's default.
    let (_, named) = client
        .post("/threads", &json!({ "metadata": { "graph_id": "Jobs" } }))
        .await;
    let named = named["thread_id"].as_str().unwrap().to_owned();
    let (status, _) = client
        .post(
            &format!("/threads/{named}/state"),
            &json!({ "values": { "rounds": 1 }, "as_node": "work" }),
        )
        .await;
    assert_eq!(status, 200);
    let (_, state) = client.get(&format!("/threads/{named}/state")).await;
    assert_eq!(state["next"], json!(["work"]));

    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_is_copied_and_deleted_through_langgraph_s_routes() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (_, thread) = client
        .post("/threads", &json!({ "metadata": { "user": "ada" } }))
        .await;
    let id = thread["thread_id"].as_str().unwrap().to_owned();
    let (_, paused) = client
        .post(
            &format!("/threads/{id}/runs/wait"),
            &json!({ "assistant_id": "Jobs", "input": { "rounds": 1, "pause": true } }),
        )
        .await;
    assert_eq!(paused["__interrupt__"][0]["id"], "ask@2");

    let (status, copy) = client
        .post(&format!("/threads/{id}/copy"), &json!({}))
        .await;
    assert_eq!(status, 200, "{copy}");
    let copy_id = copy["thread_id"].as_str().unwrap().to_owned();
    assert_ne!(copy_id, id);
    // The original's metadata: the client's, and the graph its run named.
    assert_eq!(copy["metadata"]["user"], "ada");
    assert_eq!(copy["metadata"]["graph_id"], "Jobs");
    assert_eq!(
        copy["status"], "interrupted",
        "the copy asks the question too"
    );
    let (_, original) = client.get(&format!("/threads/{id}/state")).await;
    let (_, copied) = client.get(&format!("/threads/{copy_id}/state")).await;
    assert_eq!(copied["values"], original["values"]);
    assert_eq!(copied["next"], original["next"]);
    assert_ne!(copied["checkpoint_id"], original["checkpoint_id"]);
    let (_, copied_history) = client
        .post(
            &format!("/threads/{copy_id}/history"),
            &json!({ "limit": 100 }),
        )
        .await;
    let (_, original_history) = client
        .post(&format!("/threads/{id}/history"), &json!({ "limit": 100 }))
        .await;
    assert_eq!(
        copied_history.as_array().map(Vec::len),
        original_history.as_array().map(Vec::len)
    );

    // Answered on the copy, the original still waits; deleted, the copy keeps all of it.
    let (_, done) = client
        .post(
            &format!("/threads/{copy_id}/runs/wait"),
            &json!({ "assistant_id": "Jobs", "command": { "resume": "approve" } }),
        )
        .await;
    assert_eq!(done["log"], json!(["work", "approved", "finish"]));
    let (_, original) = client.get(&format!("/threads/{id}")).await;
    assert_eq!(original["status"], "interrupted");
    let (status, _) = client.delete(&format!("/threads/{id}")).await;
    assert_eq!(status, 204);
    let (status, _) = client.get(&format!("/threads/{id}")).await;
    assert_eq!(status, 404);
    let (status, _) = client.delete(&format!("/threads/{id}")).await;
    assert_eq!(status, 404);
    let (_, kept) = client.get(&format!("/threads/{copy_id}/state")).await;
    assert_eq!(kept["values"]["log"], json!(["work", "approved", "finish"]));

    // A thread whose run is running is neither copied nor deleted.
    let slow = json!({ "assistant_id": "Jobs", "input": { "rounds": 20, "slow_ms": 50 } });
    let (_, busy) = client
        .post(&format!("/threads/{copy_id}/runs"), &slow)
        .await;
    assert_eq!(busy["status"], "running");
    let (status, _) = client.delete(&format!("/threads/{copy_id}")).await;
    assert_eq!(status, 409);
    let (status, _) = client
        .post(&format!("/threads/{copy_id}/copy"), &json!({}))
        .await;
    assert_eq!(status, 409);

    running.shutdown().await;
}

/// `Command(resume=…, update=…, goto=…)`: the update folded in before the answer, `goto`'s node
/// run beside what the answer leads to; a node that is not one is a 400, `goto` without
/// `resume` a 422, and `update` alone a new run's input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_updates_and_steers_a_resume() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (_, thread) = client.post("/threads", &json!({})).await;
    let id = thread["thread_id"].as_str().unwrap().to_owned();
    let wait = |body: Value| waited(&client, &id, body);
    wait(json!({ "assistant_id": "Jobs", "input": { "rounds": 1, "pause": true } })).await;
    let (status, refused) = wait(json!({
        "assistant_id": "Jobs",
        "command": { "resume": "approve", "goto": "nowhere" },
    }))
    .await;
    assert_eq!(status, 400, "{refused}");
    let (_, done) = wait(json!({
        "assistant_id": "Jobs",
        "command": { "resume": "approve", "update": { "log": ["a note"] } },
    }))
    .await;
    assert_eq!(done["log"], json!(["work", "a note", "approved", "finish"]));

    // `goto`: `finish` runs beside `ask`, and again after it.
    wait(json!({ "assistant_id": "Jobs", "input": { "rounds": 2, "pause": true } })).await;
    let (_, steered) = wait(json!({
        "assistant_id": "Jobs",
        "command": { "resume": "approve", "goto": ["finish"] },
    }))
    .await;
    let log = steered["log"].as_array().unwrap();
    assert_eq!(
        log[log.len() - 3..],
        [json!("approved"), json!("finish"), json!("finish")]
    );

    let (status, _) =
        wait(json!({ "assistant_id": "Jobs", "command": { "goto": "finish" } })).await;
    assert_eq!(status, 422);
    let (_, alone) = wait(json!({
        "assistant_id": "Jobs",
        "command": { "update": { "rounds": 1, "pause": false } },
    }))
    .await;
    assert_eq!(
        alone["log"].as_array().unwrap().last(),
        Some(&json!("finish"))
    );

    running.shutdown().await;
}

/// A run on thread `id` as `body` asks, waited for: (status, its outcome).
async fn waited(client: &Client, id: &str, body: Value) -> (u16, Value) {
    client
        .post(&format!("/threads/{id}/runs/wait"), &body)
        .await
}

/// `interrupt_before`/`interrupt_after` at run creation: the run pauses there, asking nothing,
/// and a run with no input goes on past them; other breakpoints for a run that goes on, and a
/// node the graph does not have, are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_pauses_at_the_breakpoints_it_was_created_with() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (_, thread) = client.post("/threads", &json!({})).await;
    let id = thread["thread_id"].as_str().unwrap();
    let body = |input: Value, after: Value| json!({ "assistant_id": "Jobs", "input": input, "interrupt_after": after });

    let (status, refused) =
        waited(&client, id, body(json!({ "rounds": 1 }), json!(["nope"]))).await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["detail"].as_str().unwrap().contains("nope"),
        "{refused}"
    );

    let (status, paused) = waited(&client, id, body(json!({ "rounds": 1 }), json!(["work"]))).await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["log"], json!(["work"]));
    assert_eq!(paused["__interrupt__"][0]["id"], "work@1");
    let (_, state) = client.get(&format!("/threads/{id}/state")).await;
    assert_eq!(state["next"], json!(["finish"]));

    let (status, refused) = waited(&client, id, body(Value::Null, json!(["finish"]))).await;
    assert_eq!(status, 422, "{refused}");
    // Given again (or not at all), the run goes on past its breakpoint.
    let (status, done) = waited(&client, id, body(Value::Null, json!(["work"]))).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["log"], json!(["work", "finish"]));
    assert!(done.get("__interrupt__").is_none(), "{done}");

    // `*` is every node: the next run pauses before its first.
    let everywhere =
        json!({ "assistant_id": "Jobs", "input": { "rounds": 2 }, "interrupt_before": "*" });
    let (_, paused) = waited(&client, id, everywhere).await;
    assert_eq!(paused["__interrupt__"][0]["id"], "work@1");
    assert_eq!(paused["done"], 1, "nothing ran since the last run");
    running.shutdown().await;
}

/// A stateless `POST /runs` (LangGraph's, on Trellis's own route): a run on a thread of its
/// own, answered as it starts, its `metadata` kept; Trellis's `{graph}` body still starts a
/// run of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_run_starts_on_a_thread_of_its_own() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (status, run) = client
        .post(
            "/runs",
            &json!({ "assistant_id": "Jobs", "input": { "rounds": 2 }, "metadata": { "user": "Jürgen" } }),
        )
        .await;
    assert_eq!(status, 200, "{run}");
    assert_eq!(run["metadata"], json!({ "user": "Jürgen" }));
    let (thread_id, run_id) = (
        run["thread_id"].as_str().unwrap(),
        run["run_id"].as_str().unwrap(),
    );
    assert_eq!(run["multitask_strategy"], "reject");
    let (status, outcome) = client
        .get(&format!("/threads/{thread_id}/runs/{run_id}/join"))
        .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["done"], 2);
    // The run's metadata is kept with it, and read back.
    let (_, read) = client
        .get(&format!("/threads/{thread_id}/runs/{run_id}"))
        .await;
    assert_eq!(read["metadata"], json!({ "user": "Jürgen" }));
    let (status, refused) = client
        .post(
            &format!("/threads/{thread_id}/runs"),
            &json!({ "assistant_id": "Jobs", "metadata": [] }),
        )
        .await;
    assert_eq!(status, 422, "{refused}");

    let (status, refused) = client
        .post("/runs", &json!({ "assistant_id": "nobody", "input": {} }))
        .await;
    assert_eq!(status, 404, "{refused}");
    assert!(
        refused["detail"].is_string(),
        "LangGraph's error shape: {refused}"
    );
    let (status, own) = client
        .post(
            "/runs",
            &json!({ "graph": "Jobs", "input": { "rounds": 1 } }),
        )
        .await;
    assert_eq!(status, 201, "{own}");
    assert!(own.get("thread_id").is_none_or(Value::is_null), "{own}");
    running.shutdown().await;
}

/// The id of thread `id`'s oldest run.
async fn first_run_id(client: &Client, id: &str) -> String {
    let (_, runs) = client.get(&format!("/threads/{id}/runs?limit=100")).await;
    let oldest = runs.as_array().and_then(|runs| runs.last());
    let run_id = oldest.and_then(|run| run["run_id"].as_str());
    run_id.expect("the thread has run").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_thread_rejects_interrupts_or_rolls_back_as_asked() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (_, thread) = client.post("/threads", &json!({})).await;
    let id = thread["thread_id"].as_str().unwrap().to_owned();
    let slow = json!({ "assistant_id": "Jobs", "input": { "rounds": 20, "slow_ms": 50 } });
    let (status, first) = client.post(&format!("/threads/{id}/runs"), &slow).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["status"], "running");

    let (status, refused) = client.post(&format!("/threads/{id}/runs"), &slow).await;
    assert_eq!(status, 409);
    assert!(
        refused["detail"].as_str().unwrap().contains("is busy"),
        "{refused}"
    );

    let instead = json!({
        "assistant_id": "Jobs",
        "input": { "rounds": 1 },
        "multitask_strategy": "interrupt",
    });
    let (status, second) = client.post(&format!("/threads/{id}/runs"), &instead).await;
    assert_eq!(status, 200, "{second}");
    let first_id = first["run_id"].as_str().unwrap();
    let (_, stopped) = client.get(&format!("/threads/{id}/runs/{first_id}")).await;
    assert_eq!(stopped["status"], "interrupted");
    assert_eq!(
        second["multitask_strategy"], "interrupt",
        "as asked at creation"
    );
    assert!(
        stopped["multitask_strategy"].is_null(),
        "not stored, so not guessed"
    );
    let second_id = second["run_id"].as_str().unwrap();
    let (_, outcome) = client
        .get(&format!("/threads/{id}/runs/{second_id}/join"))
        .await;
    // Went on from what the interrupted run had committed: some rounds of its own, and no more
    // than its committed ones plus one for `rounds: 1` to be met.
    assert!(outcome["done"].as_u64().unwrap() >= 1, "{outcome}");
    assert_eq!(
        outcome["log"].as_array().unwrap().last(),
        Some(&json!("finish"))
    );

    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn langgraph_s_errors_are_its_shapes() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (status, missing) = client
        .get("/threads/2f9c1c4e-4b1a-4f53-9d4e-0c6f1e2a7b10")
        .await;
    assert_eq!(status, 404);
    assert!(missing["detail"].as_str().unwrap().contains("no thread"));
    let (status, _) = client.get("/assistants/nobody").await;
    assert_eq!(status, 404);
    let (_, thread) = client.post("/threads", &json!({})).await;
    let id = thread["thread_id"].as_str().unwrap();
    let (status, refused) = client
        .post(
            &format!("/threads/{id}/runs/wait"),
            &json!({ "assistant_id": "Jobs", "input": {}, "webhook": "http://127.0.0.1:9/done" }),
        )
        .await;
    assert_eq!(status, 422);
    assert!(
        refused["detail"]
            .as_str()
            .unwrap()
            .contains("`webhook` is not supported")
    );
    let (status, _) = client
        .post(&format!("/threads/{id}/runs/wait"), &json!({ "input": {} }))
        .await;
    assert_eq!(status, 422, "assistant_id is required");
    let (status, _) = client
        .post(
            "/threads",
            &json!({ "thread_id": id, "if_exists": "raise" }),
        )
        .await;
    assert_eq!(status, 409);
    let (status, _) = client
        .post("/threads", &json!({ "thread_id": "a/b" }))
        .await;
    assert_eq!(status, 422);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_streams_its_updates_and_values_then_its_question_then_end() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (_, thread) = client.post("/threads", &json!({})).await;
    let id = thread["thread_id"].as_str().unwrap();
    let events = streamed(
        &client,
        id,
        json!({
            "assistant_id": "Jobs",
            "input": { "rounds": 2, "pause": true },
            "stream_mode": ["updates", "values"],
        }),
    )
    .await;
    let kinds: Vec<&str> = events.iter().map(|(kind, _)| kind.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"metadata"));
    assert_eq!(kinds.last(), Some(&"end"));
    let updates: Vec<&Value> = events
        .iter()
        .filter(|(kind, _)| kind == "updates")
        .map(|(_, data)| data)
        .collect();
    assert_eq!(
        updates[0],
        &json!({ "work": { "done": 1, "log": ["work"] } })
    );
    assert_eq!(updates.len(), 3, "two rounds of work, then the question");
    assert_eq!(updates[2]["__interrupt__"][0]["id"], "ask@3");
    let last_values = events
        .iter()
        .rev()
        .find(|(kind, _)| kind == "values")
        .map(|(_, data)| data)
        .unwrap();
    let first_values = events.iter().find(|(kind, _)| kind == "values").unwrap();
    assert_eq!(
        first_values.1["rounds"], 2,
        "the stream starts from the input"
    );
    assert_eq!(first_values.1["done"], 0);
    assert_eq!(last_values["done"], 2);
    assert_eq!(last_values["__interrupt__"][0]["id"], "ask@3");

    // Joined again: the run's states, checkpoint by checkpoint, after `Last-Event-ID`.
    let (_, runs) = client.get(&format!("/threads/{id}/runs")).await;
    let run_id = runs[0]["run_id"].as_str().unwrap();
    let join = |after: Option<&'static str>| {
        let mut request = client
            .http
            .get(format!("{}/threads/{id}/runs/{run_id}/stream", client.base));
        if let Some(after) = after {
            request = request.header("last-event-id", after);
        }
        async move { sse(&request.send().await.unwrap().text().await.unwrap()) }
    };
    let all = join(None).await;
    let kinds: Vec<&str> = all.iter().map(|(kind, _)| kind.as_str()).collect();
    // Start, the first round, the pause after the second; the question; end.
    assert_eq!(kinds, ["values", "values", "values", "values", "end"]);
    assert_eq!(all[0].1["done"], 0, "the start: the input");
    assert_eq!(all[2].1["done"], 2);
    assert_eq!(
        all[3].1["__interrupt__"][0]["id"], "ask@3",
        "at the stop, the question"
    );
    assert_eq!(join(Some("2")).await.len(), all.len() - 2);

    let (status, refused) = client
        .post(
            &format!("/threads/{id}/runs/stream"),
            &json!({ "assistant_id": "Jobs", "stream_mode": "tools" }),
        )
        .await;
    assert_eq!(status, 422);
    assert!(
        refused["detail"]
            .as_str()
            .unwrap()
            .contains("stream mode `tools`")
    );
    running.shutdown().await;
}

/// `tasks`, `checkpoints` and `debug`: each node's task as it starts (its input, the state
/// before it) and as it ends (its update), each checkpoint as a thread state of LangGraph's —
/// the same ids as the thread's state names — and `debug` wrapping both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_streams_its_tasks_and_checkpoints_and_debug() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let (_, thread) = client.post("/threads", &json!({})).await;
    let id = thread["thread_id"].as_str().unwrap();
    let events = streamed(
        &client,
        id,
        json!({
            "assistant_id": "Jobs",
            "input": { "rounds": 1, "pause": true },
            "stream_mode": ["tasks", "checkpoints", "debug"],
        }),
    )
    .await;
    let of = |mode: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|(kind, _)| kind == mode)
            .map(|(_, data)| data)
            .collect()
    };
    let kinds: Vec<&str> = events.iter().map(|(kind, _)| kind.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"metadata"));
    assert_eq!(kinds.last(), Some(&"end"));
    assert!(
        !kinds.contains(&"values") && !kinds.contains(&"updates"),
        "{kinds:?}"
    );
    let run_id = events[0].1["run_id"].as_str().unwrap();

    // `work` ran in step 1: its task, then its result; `ask` asks before it runs, so it has no
    // task of its own yet.
    let tasks = of("tasks");
    assert_eq!(tasks.len(), 2, "{tasks:?}");
    assert_eq!(tasks[0]["id"], format!("{run_id}:1:work"));
    assert_eq!(tasks[0]["name"], "work");
    assert_eq!(tasks[0]["input"]["rounds"], 1);
    assert_eq!(tasks[0]["input"]["done"], 0, "the state before the step");
    assert_eq!(tasks[1]["id"], tasks[0]["id"]);
    assert_eq!(tasks[1]["result"], json!({ "done": 1, "log": ["work"] }));
    assert!(tasks[1]["error"].is_null());

    // Its checkpoints, each as a thread state: the start, the step, the pause before `ask`.
    let checkpoints = of("checkpoints");
    let sources: Vec<&str> = checkpoints
        .iter()
        .map(|c| c["metadata"]["source"].as_str().unwrap())
        .collect();
    // Step 1 leads to `ask`, which asks first: its checkpoint is the pause's.
    assert_eq!(sources, ["start", "pause:before"]);
    for pair in checkpoints.windows(2) {
        assert_eq!(pair[1]["parent_config"], pair[0]["config"]);
    }
    assert!(checkpoints[0]["parent_config"].is_null());
    let pause = checkpoints[1];
    assert_eq!(pause["next"], json!(["ask"]));
    assert_eq!(pause["values"]["done"], 1);
    assert_eq!(pause["tasks"][0]["id"], format!("{run_id}:2:ask"));
    let (_, state) = client.get(&format!("/threads/{id}/state")).await;
    assert_eq!(pause["config"]["configurable"], state["checkpoint"]);
    assert_eq!(
        pause["tasks"], state["tasks"],
        "the same tasks, by the same ids"
    );

    // `debug`: the same, wrapped with their type and step, in the order they happened.
    let debug = of("debug");
    let types: Vec<&str> = debug.iter().map(|d| d["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["checkpoint", "task", "task_result", "checkpoint"]);
    assert_eq!(debug[1]["payload"], *tasks[0]);
    assert_eq!(debug[1]["step"], 1);
    assert_eq!(debug[3]["payload"], *pause);
    assert!(debug[0]["timestamp"].as_str().is_some());

    running.shutdown().await;
}
