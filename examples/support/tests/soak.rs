//! The soak: three `support serve` processes on one PostgreSQL database, 5,000 runs created,
//! paused and answered through whichever server a client picks, and every two seconds one
//! server killed with SIGKILL (no chance to clean up) and started again. At the end every run
//! the database holds has completed, sent its reply once, and recorded each step once.

mod common;

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Server, serve};
use serde_json::{Value, json};

/// How many runs the clients create (`TRELLIS_SOAK_RUNS` for a shorter soak by hand).
fn runs() -> usize {
    std::env::var("TRELLIS_SOAK_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5_000)
}

const SERVERS: usize = 3;
const CLIENTS: usize = 40;

/// The servers now up, by slot: a killed one is replaced at once (on another port).
#[derive(Clone)]
struct Fleet(Arc<Mutex<Vec<(Server, String)>>>);

impl Fleet {
    /// One server's URL, picked by `n`.
    fn url(&self, n: usize) -> String {
        let servers = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        servers[n % servers.len().max(1)].1.clone()
    }

    /// Kills the server in `slot` (SIGKILL) and starts another in its place — unless the fleet
    /// was disbanded meanwhile (then the new one goes too).
    fn kill_and_restart(&self, slot: usize, db: &str) {
        let replacement = serve(db, 0);
        let mut servers = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(server) = servers.get_mut(slot) {
            let _killed = std::mem::replace(server, replacement);
        }
    }
}

/// Stops the killer and kills every server when the test ends, whether it passes or panics: a
/// server left running would hold its database connections past the test.
struct Disband {
    stop: Arc<std::sync::atomic::AtomicBool>,
    fleet: Fleet,
}

impl Drop for Disband {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.fleet
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

/// A request sent to server after server until one answers it: (status, body).
async fn request(
    fleet: &Fleet,
    http: &reqwest::Client,
    mut pick: usize,
    send: impl Fn(&reqwest::Client, &str) -> reqwest::RequestBuilder,
) -> (u16, Value) {
    for _ in 0..200 {
        let url = fleet.url(pick);
        pick += 1;
        if let Ok(response) = send(http, &url).send().await {
            let status = response.status().as_u16();
            if let Ok(body) = response.json::<Value>().await {
                return (status, body);
            }
        }
        // That server was killed under the request: another one.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no server answered 200 times in a row");
}

/// Waits (through any server) until the run is no longer running: its record.
async fn settle(fleet: &Fleet, http: &reqwest::Client, pick: usize, run_id: &str) -> Value {
    loop {
        let (status, run) = request(fleet, http, pick, |http, url| {
            http.get(format!("{url}/runs/{run_id}/wait?timeout=10"))
        })
        .await;
        assert_eq!(status, 200, "{run}");
        if run["status"] != "running" {
            return run;
        }
    }
}

/// Answers a paused run (through any server) until the answer has landed: what the server
/// that took it said.
async fn approve(
    fleet: &Fleet,
    http: &reqwest::Client,
    pick: usize,
    paused: &Value,
) -> (u16, Value) {
    let run_id = paused["run_id"].as_str().expect("an id");
    let answer = json!({"answer": "approve", "interrupt_id": paused["interrupts"][0]["id"]});
    let (status, body) = request(fleet, http, pick, |http, url| {
        http.post(format!("{url}/runs/{run_id}/resume"))
            .json(&answer)
    })
    .await;
    // A 409: an earlier try landed before its server died, and the run has moved on.
    assert!(status == 200 || status == 409, "{status}: {body}");
    (status, body)
}

/// Every run in the database, with its state.
async fn all_runs(fleet: &Fleet, http: &reqwest::Client) -> Vec<Value> {
    let mut runs = Vec::new();
    loop {
        let offset = runs.len();
        let (status, page) = request(fleet, http, 0, |http, url| {
            http.get(format!("{url}/runs?limit=500&offset={offset}&state=true"))
        })
        .await;
        assert_eq!(status, 200, "{page}");
        let page = page.as_array().cloned().unwrap_or_default();
        let done = page.len() < 500;
        runs.extend(page);
        if done {
            return runs;
        }
    }
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_servers_killed_in_turn_lose_no_run_and_repeat_no_step() {
    let server = match std::env::var("TRELLIS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!("TRELLIS_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL"),
    };
    let name = format!("soak_{}", std::process::id());
    for sql in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        let status = Command::new("psql")
            .args([server.as_str(), "-qc", &sql])
            .env("PGOPTIONS", "-c client_min_messages=warning")
            .status()
            .expect("psql runs");
        assert!(status.success(), "{sql}");
    }
    let (base, _) = server
        .rsplit_once('/')
        .expect("the URL ends with /DATABASE");
    let db = format!("{base}/{name}");

    let fleet = Fleet(Arc::new(Mutex::new(
        (0..SERVERS).map(|_| serve(&db, 0)).collect(),
    )));
    // A request has a deadline: one wedged on a connection whose server died (seen once: every
    // client stuck at once, no socket open, for as long as CI let it) fails and is sent again
    // to another server. Longer than a wait's own 10 s.
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(30))
        .build()
        .expect("an HTTP client");
    let started = Instant::now();
    let total = runs();

    // One server killed and restarted every two seconds while the clients work.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _disband = Disband {
        stop: Arc::clone(&stop),
        fleet: fleet.clone(),
    };
    let killer = {
        let (fleet, db, stop) = (fleet.clone(), db.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut kills = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_secs(2));
                fleet.kill_and_restart(kills % SERVERS, &db);
                kills += 1;
            }
            kills
        })
    };

    let clients: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let (fleet, http) = (fleet.clone(), http.clone());
            tokio::spawn(async move {
                let (mut created, mut asked_again) = (Vec::new(), 0);
                for n in (client..total).step_by(CLIENTS) {
                    let input = json!({"graph": "Support", "input": {"text": "I was charged twice for my invoice"}});
                    let (status, run) = request(&fleet, &http, n, |http, url| {
                        http.post(format!("{url}/runs")).json(&input)
                    })
                    .await;
                    assert_eq!(status, 201, "{run}");
                    let run_id = run["run_id"].as_str().expect("an id").to_owned();
                    let mut paused = settle(&fleet, &http, n + 1, &run_id).await;
                    loop {
                        assert_eq!(paused["status"], "paused", "{paused}");
                        let answered = approve(&fleet, &http, n + 2, &paused).await;
                        let done = settle(&fleet, &http, n + 3, &run_id).await;
                        if done["status"] == "completed" {
                            break;
                        }
                        // The answer was never acknowledged: its server died after claiming
                        // the run and before checkpointing the answer. The run, taken over,
                        // asks the same question again; a client answers again.
                        assert_eq!(
                            (&done["status"], &done["interrupts"][0]["id"]),
                            (&json!("paused"), &paused["interrupts"][0]["id"]),
                            "answered {answered:?}: {done}"
                        );
                        asked_again += 1;
                        paused = done;
                    }
                    created.push(run_id);
                }
                (created, asked_again)
            })
        })
        .collect();
    let (mut created, mut asked_again) = (Vec::new(), 0);
    for client in clients {
        let (runs, again) = client.await.expect("a client");
        created.extend(runs);
        asked_again += again;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let kills = killer.join().expect("the killer");
    assert_eq!(created.len(), total);

    // A create whose answer was lost with its server may have made a run no client knows:
    // answered here, so that every run stored completes.
    let http = &http;
    for run in all_runs(&fleet, http).await {
        let run_id = run["run_id"].as_str().expect("an id");
        let mut run = settle(&fleet, http, 0, run_id).await;
        if run["status"] == "paused" {
            approve(&fleet, http, 0, &run).await;
            run = settle(&fleet, http, 0, run_id).await;
        }
        assert_eq!(run["status"], "completed", "{run}");
    }
    let stored = all_runs(&fleet, http).await;
    assert!(
        stored.len() >= total,
        "{} stored, {total} created",
        stored.len()
    );
    for run in &stored {
        let run_id = run["run_id"].as_str().expect("an id");
        assert_eq!(run["status"], "completed", "{run}");
        assert_eq!(run["state"]["drafts"], 1, "drafted once: {run}");
        assert_eq!(
            run["state"]["sent"].as_array().map(Vec::len),
            Some(1),
            "sent once: {run}"
        );
        let (status, checkpoints) = request(&fleet, http, 0, |http, url| {
            http.get(format!("{url}/runs/{run_id}/checkpoints"))
        })
        .await;
        assert_eq!(status, 200, "{checkpoints}");
        common::assert_each_step_once(&checkpoints);
    }
    eprintln!(
        "soak: {} runs stored ({total} created by the clients), {kills} servers killed, {asked_again} answers lost with their server and given again, {:.1} s",
        stored.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(kills >= 1, "servers were killed along the way");
}
