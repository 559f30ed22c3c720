//! `server`: the server's create → pause cycle over HTTP, as a client sees it. Each run of a
//! three-node graph is created (`POST /runs`), executed by the server's workers to the
//! question before its fourth node, and waited for (`GET /runs/{id}/wait`) — on SQLite
//! `NORMAL`, the embedded default. One client at a time gives the latency of a run; fifty at
//! once, the throughput and the tail. The server runs in this process, on this runtime, as
//! `support serve` would; the clients are plain HTTP (reqwest).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trellis::checkpoint::{Durability, SqliteCheckpointer};
use trellis::{END, GraphBuilder, NodeOptions, NodeResult, START};
use trellis_server::{ServeOptions, Server};

use super::interrupts::{Approval, ApprovalUpdate};
use super::{Bench, BenchError};
use crate::report::{Row, Target};

const W: &str = "server";

/// The targets: p50 one run at a time, a run's share of the time at 50 clients
/// (≥ 2,000 runs a second), p99 at 50 clients.
const ALONE_P50: Target = Target::Ns(5e6);
const THROUGHPUT: Target = Target::Ns(500_000.0);
const CONCURRENT_P99: Target = Target::Ns(100e6);

/// How many clients at once in the concurrent variant.
const CLIENTS: usize = 50;

/// `a → b → c → ask`, a question before `ask`: three steps, then a pause.
fn graph() -> Result<trellis::CompiledGraph<Approval>, BenchError> {
    let step = || NodeResult::Update(ApprovalUpdate::default().x(1));
    let mut b = GraphBuilder::<Approval>::new("Approval");
    b.add_node_fn("a", move |_, _| async move { Ok(step()) })
        .add_node_fn("b", move |_, _| async move { Ok(step()) })
        .add_node_fn("c", move |_, _| async move { Ok(step()) })
        .add_node_fn_with(
            "ask",
            move |_, _| async move { Ok(step()) },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .add_edge("c", "ask")
        .add_edge("ask", END);
    b.compile().map_err(|source| BenchError::Compile {
        workload: W,
        source,
    })
}

fn wrong(reason: impl Into<String>) -> BenchError {
    BenchError::Wrong {
        workload: W,
        reason: reason.into(),
    }
}

/// The JSON a request is answered with.
async fn answer(request: reqwest::RequestBuilder) -> Result<Value, BenchError> {
    let failed = |error: reqwest::Error| wrong(format!("a request failed: {error}"));
    request
        .send()
        .await
        .map_err(failed)?
        .json()
        .await
        .map_err(failed)
}

/// One cycle: create a run, wait until it pauses; how long it took.
async fn cycle(http: &reqwest::Client, base: &str) -> Result<Duration, BenchError> {
    let started = Instant::now();
    let created = answer(
        http.post(format!("{base}/runs"))
            .json(&json!({"graph": "Approval", "input": {"x": 0}})),
    )
    .await?;
    let run_id = created["run_id"]
        .as_str()
        .ok_or_else(|| wrong(format!("no run was created: {created}")))?;
    let paused = answer(http.get(format!("{base}/runs/{run_id}/wait?timeout=60"))).await?;
    if paused["status"] != "paused" || paused["state"]["x"] != 3 {
        return Err(wrong(format!(
            "the run did not pause after three steps: {paused}"
        )));
    }
    Ok(started.elapsed())
}

/// The `q`-quantile of `times` (sorted here), in nanoseconds.
fn quantile(times: &mut [Duration], q: f64) -> f64 {
    times.sort_unstable();
    let at = ((times.len() as f64 - 1.0) * q).round() as usize;
    times.get(at).map_or(0.0, |t| t.as_nanos() as f64)
}

pub(crate) fn server(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    let alone_runs = bench.scale.size(300, 5);
    let concurrent_runs = bench.scale.size(4_000, 2 * CLIENTS);
    let path = bench.scratch.file("server.db");
    let store = SqliteCheckpointer::open_with(&path, Durability::Normal).map_err(|source| {
        BenchError::Store {
            workload: W,
            source,
        }
    })?;
    let graph = graph()?;
    let rt = bench.rt;
    let (alone, concurrent, wall) = rt.block_on(async {
        let running = Server::builder(Arc::new(store))
            .graph(graph)
            .build()
            .map_err(|e| wrong(e.to_string()))?
            .serve(ServeOptions {
                addr: "127.0.0.1:0".parse().map_err(|_| wrong("an address"))?,
                ..ServeOptions::default()
            })
            .await
            .map_err(|e| wrong(e.to_string()))?;
        let base = format!("http://{}", running.local_addr());
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(CLIENTS)
            .build()
            .map_err(|e| wrong(e.to_string()))?;
        // Warm up: connections, statements, the first runs.
        for _ in 0..5 {
            cycle(&http, &base).await?;
        }
        let mut alone = Vec::new();
        for _ in 0..alone_runs {
            alone.push(cycle(&http, &base).await?);
        }
        let started = Instant::now();
        let per_client = concurrent_runs / CLIENTS;
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let (http, base) = (http.clone(), base.clone());
                tokio::spawn(async move {
                    let mut times = Vec::with_capacity(per_client);
                    for _ in 0..per_client {
                        times.push(cycle(&http, &base).await?);
                    }
                    Ok::<_, BenchError>(times)
                })
            })
            .collect();
        let mut concurrent = Vec::new();
        for client in clients {
            concurrent.extend(client.await.map_err(|e| wrong(e.to_string()))??);
        }
        let wall = started.elapsed();
        running.shutdown().await;
        Ok::<_, BenchError>((alone, concurrent, wall))
    })?;
    let (mut alone, mut concurrent) = (alone, concurrent);
    let runs = concurrent.len() as u64;
    let per_run = wall.as_nanos() as f64 / runs as f64;
    let p50_alone = quantile(&mut alone, 0.5);
    bench.emit(
        Row::new(
            W,
            "sqlite-1-client",
            alone.len() as u64,
            "run",
            p50_alone,
            None,
        )
        .with("p99_ms", quantile(&mut alone, 0.99) / 1e6)
        .judged(ALONE_P50),
    );
    bench.emit(
        Row::new(W, "sqlite-50-clients", runs, "run", per_run, None)
            .with("runs_per_s", (1e9 / per_run).round())
            .with("p50_ms", quantile(&mut concurrent, 0.5) / 1e6)
            .judged(THROUGHPUT),
    );
    bench.emit(
        Row::new(
            W,
            "sqlite-50-p99",
            runs,
            "run",
            quantile(&mut concurrent, 0.99),
            None,
        )
        .judged(CONCURRENT_P99),
    );
    Ok(())
}
