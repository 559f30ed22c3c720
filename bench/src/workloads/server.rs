//! `server`: the server's create → pause cycle over HTTP, as a client sees it. Each run of a
//! three-node graph is created (`POST /runs`), executed by the server's workers to the
//! question before its fourth node, and waited for (`GET /runs/{id}/wait`) — on SQLite
//! `NORMAL`, the embedded default. One client at a time gives the latency of a run; fifty at
//! once, the throughput and the tail — and on PostgreSQL too, given a server. Then an idle
//! server (10,000 stored runs, 200 open event streams): the CPU it burns; and 100,000 runs
//! through one server: whether its memory stays flat. The server runs in this process, on
//! this runtime, as `support serve` would; the clients are plain HTTP (reqwest).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trellis::checkpoint::{
    Durability, PostgresCheckpointer, PostgresOptions, RunQueue, SqliteCheckpointer,
};
use trellis::{END, GraphBuilder, NodeOptions, NodeResult, START};
use trellis_server::{Running, ServeOptions, Server};

use super::interrupts::{Approval, ApprovalUpdate};
use super::{Bench, BenchError};
use crate::measure::resident_kib;
use crate::report::{Row, Target};

const W: &str = "server";

/// The targets: p50 one run at a time, a run's share of the time at 50 clients
/// (≥ 2,000 runs a second), p99 at 50 clients.
const ALONE_P50: Target = Target::Ns(5e6);
const THROUGHPUT: Target = Target::Ns(500_000.0);
const CONCURRENT_P99: Target = Target::Ns(100e6);
/// Idle with 10,000 stored runs and 200 open event streams: ≤ 2 % of one core.
const IDLE: Target = Target::Ns(20e6);
/// Flat over 100,000 runs: what grows is the store, not the process — at most SQLite's page
/// cache filling up (2 MiB a connection) and the allocator's slack: 0.5–1.6 MiB in the first
/// measurements, under 20 bytes a run.
const FLAT: Target = Target::FlatMemory(4 * 1024);

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

/// A server of [`graph`] on `store`, on a free local port: it and its base URL.
async fn start(store: Arc<dyn RunQueue>) -> Result<(Running, String), BenchError> {
    let running = Server::builder(store)
        .graph(graph()?)
        .build()
        .map_err(|e| wrong(e.to_string()))?
        .serve(ServeOptions {
            addr: "127.0.0.1:0".parse().map_err(|_| wrong("an address"))?,
            ..ServeOptions::default()
        })
        .await
        .map_err(|e| wrong(e.to_string()))?;
    let base = format!("http://{}", running.local_addr());
    Ok((running, base))
}

fn client() -> Result<reqwest::Client, BenchError> {
    reqwest::Client::builder()
        .pool_max_idle_per_host(CLIENTS)
        .build()
        .map_err(|e| wrong(e.to_string()))
}

/// `runs` cycles by `CLIENTS` clients at once: each cycle's time, and the wall time.
async fn together(
    http: &reqwest::Client,
    base: &str,
    runs: usize,
) -> Result<(Vec<Duration>, Duration), BenchError> {
    let started = Instant::now();
    let per_client = runs / CLIENTS;
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (http, base) = (http.clone(), base.to_owned());
            tokio::spawn(async move {
                let mut times = Vec::with_capacity(per_client);
                for _ in 0..per_client {
                    times.push(cycle(&http, &base).await?);
                }
                Ok::<_, BenchError>(times)
            })
        })
        .collect();
    let mut times = Vec::new();
    for client in clients {
        times.extend(client.await.map_err(|e| wrong(e.to_string()))??);
    }
    Ok((times, started.elapsed()))
}

/// The cycle alone and at 50 clients on `store`: three rows, judged by the targets when
/// `judge` (SQLite, where the issue sets them).
fn cycles(
    bench: &mut Bench<'_>,
    store: Arc<dyn RunQueue>,
    backend: &str,
    judge: bool,
) -> Result<(), BenchError> {
    let alone_runs = bench.scale.size(300, 5);
    let concurrent_runs = bench.scale.size(4_000, 2 * CLIENTS);
    let (mut alone, mut concurrent, wall) = bench.rt.block_on(async {
        let (running, base) = start(store).await?;
        let http = client()?;
        // Warm up: connections, statements, the first runs.
        for _ in 0..5 {
            cycle(&http, &base).await?;
        }
        let mut alone = Vec::new();
        for _ in 0..alone_runs {
            alone.push(cycle(&http, &base).await?);
        }
        let (concurrent, wall) = together(&http, &base, concurrent_runs).await?;
        running.shutdown().await;
        Ok::<_, BenchError>((alone, concurrent, wall))
    })?;
    let runs = concurrent.len() as u64;
    let per_run = wall.as_nanos() as f64 / runs as f64;
    let judged = |row: Row, target| if judge { row.judged(target) } else { row };
    let p50 = quantile(&mut alone, 0.5);
    let row = Row::new(
        W,
        format!("{backend}-1-client"),
        alone.len() as u64,
        "run",
        p50,
        None,
    )
    .with("p99_ms", quantile(&mut alone, 0.99) / 1e6);
    bench.emit(judged(row, ALONE_P50));
    let row = Row::new(
        W,
        format!("{backend}-50-clients"),
        runs,
        "run",
        per_run,
        None,
    )
    .with("runs_per_s", (1e9 / per_run).round())
    .with("p50_ms", quantile(&mut concurrent, 0.5) / 1e6);
    bench.emit(judged(row, THROUGHPUT));
    let p99 = quantile(&mut concurrent, 0.99);
    let row = Row::new(W, format!("{backend}-50-p99"), runs, "run", p99, None);
    bench.emit(judged(row, CONCURRENT_P99));
    Ok(())
}

/// This process's CPU time so far: the time each of its threads has run, in nanoseconds, from
/// `/proc/self/task/*/schedstat` (`/proc/self/stat` counts in 10 ms ticks, too coarse for an
/// idle process over a short window).
fn cpu_time() -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("schedstat");
        // A thread that ended since the listing has no file: it ran nothing since.
        if let Ok(stat) = std::fs::read_to_string(path) {
            total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
        }
    }
    Some(Duration::from_nanos(total))
}

/// A fresh SQLite store (`NORMAL`, the embedded default) in the scratch folder.
fn sqlite(bench: &Bench<'_>, name: &str) -> Result<Arc<dyn RunQueue>, BenchError> {
    let path = bench.scratch.file(name);
    let store = SqliteCheckpointer::open_with(&path, Durability::Normal).map_err(|source| {
        BenchError::Store {
            workload: W,
            source,
        }
    })?;
    Ok(Arc::new(store))
}

/// An idle server: `STORED` paused runs in its store, `STREAMS` clients following the event
/// streams of some of them, nothing else happening. Its CPU time per second of wall time.
fn idle(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    const STORED: u64 = 10_000;
    const STREAMS: usize = 200;
    let stored = bench.scale.size(STORED, 50);
    let window = match bench.scale {
        crate::Scale::Full => Duration::from_secs(10),
        crate::Scale::Quick => Duration::from_secs(3),
        crate::Scale::Smoke => Duration::from_millis(200),
    };
    let store = sqlite(bench, "server-idle.db")?;
    let (used, streams) = bench.rt.block_on(async {
        // Stored as any paused run is, straight through the runtime.
        let paused = graph()?.with_checkpointer(Arc::clone(&store));
        let mut ids = Vec::new();
        for _ in 0..stored {
            let outcome = paused
                .invoke(Approval::default())
                .await
                .map_err(|failure| BenchError::Run {
                    workload: W,
                    source: failure.error,
                })?;
            ids.push(outcome.run_id().clone());
        }
        let (running, base) = start(store).await?;
        let http = reqwest::Client::new();
        let mut open = Vec::new();
        for run_id in ids.iter().take(STREAMS) {
            let response = http
                .get(format!("{base}/runs/{run_id}/stream"))
                .send()
                .await
                .map_err(|e| wrong(format!("a stream did not open: {e}")))?;
            open.push(response);
        }
        // Settled: the streams sent what there was; the workers looked once.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let before = cpu_time().ok_or_else(|| wrong("no /proc/self/stat"))?;
        tokio::time::sleep(window).await;
        let after = cpu_time().ok_or_else(|| wrong("no /proc/self/stat"))?;
        let streams = open.len();
        drop(open);
        running.shutdown().await;
        Ok::<_, BenchError>((after.saturating_sub(before), streams))
    })?;
    let per_second = used.as_nanos() as f64 / window.as_secs_f64();
    bench.emit(
        Row::new(W, "sqlite-idle", stored, "second", per_second, None)
            .with("streams", streams as u64)
            .with("cpu_percent", per_second / 1e7)
            .judged(IDLE),
    );
    Ok(())
}

/// Many runs through one server: its resident memory after the first tenth of them and at
/// the end (the SQLite file grows; the process must not).
fn memory(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    let runs = bench.scale.size(100_000, 2 * CLIENTS);
    let store = sqlite(bench, "server-memory.db")?;
    let (early, late, wall) = bench.rt.block_on(async {
        let (running, base) = start(store).await?;
        let http = client()?;
        let tenth = (runs / 10).max(CLIENTS);
        let (_, first) = together(&http, &base, tenth).await?;
        let early = resident_kib().ok_or_else(|| wrong("no /proc/self/status"))?;
        let (_, rest) = together(&http, &base, runs - tenth).await?;
        let late = resident_kib().ok_or_else(|| wrong("no /proc/self/status"))?;
        running.shutdown().await;
        Ok::<_, BenchError>((early, late, first + rest))
    })?;
    let growth = i64::try_from(late).unwrap_or(i64::MAX) - i64::try_from(early).unwrap_or(0);
    bench.emit(
        Row::new(
            W,
            "sqlite-memory",
            runs as u64,
            "run",
            wall.as_nanos() as f64 / runs as f64,
            None,
        )
        .with("rss_kib_growth", growth)
        .judged(FLAT),
    );
    Ok(())
}

pub(crate) fn server(bench: &mut Bench<'_>, postgres: Option<&str>) -> Result<(), BenchError> {
    let store = sqlite(bench, "server.db")?;
    cycles(bench, store, "sqlite", true)?;
    idle(bench)?;
    memory(bench)?;
    match postgres {
        Some(url) => {
            let schema = format!("bench_server_{}", bench.scratch.tag());
            let options = PostgresOptions {
                schema: Some(schema),
                ..PostgresOptions::default()
            };
            let store = bench
                .rt
                .block_on(PostgresCheckpointer::connect_with(url, options))
                .map_err(|source| BenchError::Store {
                    workload: W,
                    source,
                })?;
            cycles(bench, Arc::new(store), "postgres", false)
        }
        None => {
            bench.skip("server postgres: skipped, no server given (--postgres URL)");
            Ok(())
        }
    }
}
