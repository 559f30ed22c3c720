//! 200 runs created at once over HTTP, a third of them pausing and answered at once: every run
//! is accounted for, none is duplicated, and no step ran twice.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::{Client, serve};
use serde_json::json;
use trellis::checkpoint::{Checkpointer, RunStatus, SqliteCheckpointer};
use trellis_server::ServeOptions;

const RUNS: u32 = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_runs_with_pauses_are_all_accounted_for_once() {
    let dir = std::env::temp_dir().join(format!("trellis-server-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("runs.db");
    let _ = std::fs::remove_file(&path);
    let store = Arc::new(SqliteCheckpointer::open(&path).expect("the store opens"));
    let running = serve(store.clone(), ServeOptions::default()).await;
    let client = Client::new(&running);

    // Which runs pause, and how many rounds each works: scattered, the same every time.
    let pauses = |i: u32| (i * 7919).is_multiple_of(3);
    let rounds = |i: u32| 1 + (i * 31) % 3;
    let created = join_all(
        (0..RUNS)
            .map(|i| {
                let client = client.clone();
                tokio::spawn(async move {
                    let input = json!({"rounds": rounds(i), "pause": pauses(i), "log": [format!("job {i}")]});
                    let (status, run) = client.post("/runs", &json!({"graph": "Jobs", "input": input})).await;
                    assert_eq!(status, 201, "{run}");
                    (i, run["run_id"].as_str().expect("an id").to_owned())
                })
            })
            .collect(),
    )
    .await;
    let ids: BTreeSet<&str> = created.iter().map(|(_, id)| id.as_str()).collect();
    assert_eq!(ids.len(), RUNS as usize, "every creation made its own run");

    // Answer the paused ones as they pause, all at once.
    let answered = join_all(
        created
            .iter()
            .filter(|(i, _)| pauses(*i))
            .map(|(_, id)| {
                let (client, id) = (client.clone(), id.clone());
                tokio::spawn(async move {
                    let paused = client.settle(&id).await;
                    assert_eq!(paused["status"], "paused");
                    let answer =
                        json!({"answer": "approve", "interrupt_id": paused["interrupts"][0]["id"]});
                    let (status, body) = client.post(&format!("/runs/{id}/resume"), &answer).await;
                    assert_eq!(status, 200, "{body}");
                })
            })
            .collect(),
    )
    .await;
    assert_eq!(
        answered.len() as u32,
        (0..RUNS).filter(|i| pauses(*i)).count() as u32
    );

    for (i, id) in &created {
        let run = client.settle(id).await;
        assert_eq!(run["status"], "completed", "{run}");
        let mut log = vec![format!("job {i}")];
        log.extend((0..rounds(*i)).map(|_| "work".to_owned()));
        if pauses(*i) {
            log.push("approved".to_owned());
        }
        log.push("finish".to_owned());
        assert_eq!(
            run["state"]["log"],
            json!(log),
            "run {id}: each step once, in order"
        );
    }
    let stored = store.list_runs(1000, 0).await.expect("runs");
    assert_eq!(stored.len(), RUNS as usize);
    assert!(stored.iter().all(|r| r.status == RunStatus::Completed));
    running.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Awaits every task, in order.
async fn join_all<T>(tasks: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::with_capacity(tasks.len());
    for task in tasks {
        out.push(task.await.expect("the task ran"));
    }
    out
}
