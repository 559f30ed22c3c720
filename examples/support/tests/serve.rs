//! `support serve` killed mid-run (SIGKILL, no chance to clean up) and started again on the same
//! file: the run is picked up where its last checkpoint left it and completes, no step twice.

mod common;

use std::path::Path;
use std::time::Duration;

use common::serve;
use serde_json::{Value, json};

async fn get(url: &str) -> Value {
    reqwest::get(url)
        .await
        .expect("the server answers")
        .json()
        .await
        .expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_run_and_restarted_completes_the_run() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("support-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let db = dir.join("runs.db");
    let _ = std::fs::remove_file(&db);

    let (mut first, url) = serve(&db, 300);
    let client = reqwest::Client::new();
    let created: Value = client
        .post(format!("{url}/runs"))
        .json(&json!({"graph": "Support", "input": {"text": "I was charged twice for my invoice"}}))
        .send()
        .await
        .expect("created")
        .json()
        .await
        .expect("JSON");
    let run_id = created["run_id"].as_str().expect("a run id").to_owned();

    // Kill it once the run is under way: past its first step, short of its pause.
    let mut progress = 0;
    for _ in 0..100 {
        progress = get(&format!("{url}/runs/{run_id}/checkpoints"))
            .await
            .as_array()
            .map_or(0, Vec::len);
        if progress >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(progress >= 2, "the run got under way");
    let before = get(&format!("{url}/runs/{run_id}")).await;
    first.kill();
    // Each node takes 300 ms: the run, running a moment ago, is killed before its pause.
    assert_eq!(before["status"], "running", "killed mid-run: {before}");

    let (mut second, url) = serve(&db, 0);
    let run = get(&format!("{url}/runs/{run_id}/wait?timeout=60")).await;
    assert_eq!(run["status"], "paused", "{run}");
    assert_eq!(run["state"]["drafts"], 1, "the draft was written once");
    let checkpoints = get(&format!("{url}/runs/{run_id}/checkpoints")).await;
    common::assert_each_step_once(&checkpoints);

    let answered = client
        .post(format!("{url}/runs/{run_id}/resume"))
        .json(&json!({"answer": "approve", "interrupt_id": run["interrupts"][0]["id"]}))
        .send()
        .await
        .expect("answered");
    assert_eq!(answered.status().as_u16(), 200);
    let done = get(&format!("{url}/runs/{run_id}/wait?timeout=60")).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["state"]["sent"].as_array().map(Vec::len), Some(1));
    second.kill();
    let _ = std::fs::remove_dir_all(&dir);
}
