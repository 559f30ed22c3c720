//! Checkpointing: `loop_ckpt` (the loop, a checkpoint after every step, beside a client
//! inserting the same serialized state) and `growing_state` (a state that grows by 1 KB a step:
//! what a step costs, in time and bytes, as the state grows; delta checkpoints keep it flat).

use std::cell::Cell;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use trellis::checkpoint::{Durability, PostgresCheckpointer, PostgresOptions, SqliteCheckpointer};
use trellis::{CompiledGraph, END, GraphBuilder, GraphState, NodeResult, START};

use super::executor::{Counter, loop_graph};
use super::{Bench, BenchError, expect_eq, timed_run};
use crate::measure::{alternate, bytes_written, median, per};
use crate::report::{Row, Target};

/// The targets: close to the floor, whose cost is the database's.
const SQLITE_FULL: Target = Target::Ratio(1.2);
const SQLITE_NORMAL: Target = Target::Ratio(1.3);

fn store_error(
    workload: &'static str,
) -> impl Fn(trellis::checkpoint::CheckpointError) -> BenchError {
    move |source| BenchError::Store { workload, source }
}

fn sqlite_error(workload: &'static str) -> impl Fn(rusqlite::Error) -> BenchError {
    move |source| BenchError::Sqlite { workload, source }
}

fn postgres_error(workload: &'static str) -> impl Fn(tokio_postgres::Error) -> BenchError {
    move |source| BenchError::Postgres { workload, source }
}

/// The SQLite floor's table, in the journal mode and sync setting of the store it stands beside.
fn sqlite_floor(
    path: &std::path::Path,
    durability: Durability,
) -> Result<rusqlite::Connection, rusqlite::Error> {
    let connection = rusqlite::Connection::open(path)?;
    let sync = match durability {
        Durability::Full => "FULL",
        Durability::Normal => "NORMAL",
    };
    connection.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync};
         CREATE TABLE checkpoints (run_id TEXT, id INTEGER, step INTEGER, state TEXT,
             PRIMARY KEY (run_id, id)) WITHOUT ROWID;"
    ))?;
    Ok(connection)
}

/// One checkpoint of the floor: a transaction inserting the serialized state, every statement
/// prepared once (as the store's are).
fn sqlite_insert(
    connection: &mut rusqlite::Connection,
    step: u64,
    json: &str,
) -> Result<(), rusqlite::Error> {
    let step = i64::try_from(step).unwrap_or(i64::MAX);
    connection.prepare_cached("BEGIN")?.execute([])?;
    connection
        .prepare_cached("INSERT INTO checkpoints VALUES ('run', ?1, ?2, ?3)")?
        .execute(rusqlite::params![step + 1, step, json])?;
    connection.prepare_cached("COMMIT")?.execute([])?;
    Ok(())
}

/// The loop's state after `step` steps, as the floor serializes it (`tools` adds one every
/// other step).
fn loop_state(step: u64) -> String {
    serde_json::json!({ "x": step / 2 }).to_string()
}

pub(crate) fn loop_ckpt(bench: &mut Bench<'_>, postgres: Option<&str>) -> Result<(), BenchError> {
    const W: &str = "loop_ckpt";
    let k = bench.scale.size(200, 10);
    let graph = loop_graph(k)
        .compile()
        .map_err(|source| BenchError::Compile {
            workload: W,
            source,
        })?;
    for (variant, durability, samples, target) in [
        // An fsync's time on this machine varies by tens of percent from one moment to the
        // next: enough samples that a slow stretch on one side is outvoted.
        ("sqlite-full", Durability::Full, 21, SQLITE_FULL),
        ("sqlite-normal", Durability::Normal, 15, SQLITE_NORMAL),
    ] {
        let sample = Cell::new(0);
        let mut steps = 0;
        let (ours, theirs) = alternate(
            bench.scale.samples(samples),
            || {
                sample.set(sample.get() + 1);
                let sample = sample.get();
                let path = bench.scratch.file(&format!("loop-{variant}-{sample}.db"));
                let store =
                    SqliteCheckpointer::open_with(&path, durability).map_err(store_error(W))?;
                let (time, ran) = loop_in(bench, &graph, Arc::new(store), k)?;
                steps = ran;
                Ok(time)
            },
            || {
                let path = bench
                    .scratch
                    .file(&format!("floor-{variant}-{}.db", sample.get()));
                let mut connection = sqlite_floor(&path, durability).map_err(sqlite_error(W))?;
                let started = Instant::now();
                // The start checkpoint, then one per step: as many commits as the run makes.
                for step in 0..=2 * k + 1 {
                    sqlite_insert(&mut connection, step, &loop_state(step))
                        .map_err(sqlite_error(W))?;
                }
                Ok(started.elapsed())
            },
        )?;
        expect_eq(W, steps, 2 * k + 1)?;
        let row = Row::new(
            W,
            variant,
            k,
            "step",
            per(ours, steps),
            Some(per(theirs, steps)),
        );
        bench.emit(row.with("steps", steps).judged(target));
    }
    match postgres {
        Some(url) => loop_ckpt_postgres(bench, &graph, k, url),
        None => {
            bench.skip("loop_ckpt postgres: skipped, no server given (--postgres URL)");
            Ok(())
        }
    }
}

/// One run of the loop checkpointed in `store`, checked: its time and its steps.
fn loop_in(
    bench: &Bench<'_>,
    graph: &CompiledGraph<Counter>,
    store: Arc<dyn trellis::checkpoint::Checkpointer>,
    k: u64,
) -> Result<(Duration, u64), BenchError> {
    const W: &str = "loop_ckpt";
    let graph = graph.clone().with_checkpointer(store);
    let (time, state, steps) = timed_run(bench, W, &graph, Counter::default())?;
    expect_eq(W, state.x, k)?;
    Ok((time, steps))
}

/// The loop checkpointed in PostgreSQL, in a schema of its own per sample, beside
/// tokio-postgres inserting the same state with a prepared statement (one implicit
/// transaction per step) on the same server.
fn loop_ckpt_postgres(
    bench: &mut Bench<'_>,
    graph: &CompiledGraph<Counter>,
    k: u64,
    url: &str,
) -> Result<(), BenchError> {
    const W: &str = "loop_ckpt";
    let tag = bench.scratch.tag();
    let (client, connection) = bench
        .rt
        .block_on(tokio_postgres::connect(url, tokio_postgres::NoTls))
        .map_err(postgres_error(W))?;
    bench.rt.spawn(connection);
    let sample = Cell::new(0);
    let mut steps = 0;
    let result = alternate(
        bench.scale.samples(7),
        || {
            sample.set(sample.get() + 1);
            let sample = sample.get();
            let options = PostgresOptions {
                schema: Some(format!("trellis_bench_{tag}_{sample}")),
                ..PostgresOptions::default()
            };
            let store = bench
                .rt
                .block_on(PostgresCheckpointer::connect_with(url, options))
                .map_err(store_error(W))?;
            let (time, ran) = loop_in(bench, graph, Arc::new(store), k)?;
            steps = ran;
            Ok(time)
        },
        || {
            bench
                .rt
                .block_on(async {
                    let table = format!("trellis_bench_floor_{tag}_{}", sample.get());
                    client
                        .batch_execute(&format!(
                        "CREATE TABLE {table} (run_id text, id bigint, step bigint, state jsonb,
                             PRIMARY KEY (run_id, id))"
                    ))
                        .await?;
                    let insert = client
                        .prepare(&format!(
                            "INSERT INTO {table} VALUES ('run', $1, $2, $3::text::jsonb)"
                        ))
                        .await?;
                    let started = Instant::now();
                    for step in 0..=2 * k + 1 {
                        let id = i64::try_from(step).unwrap_or(i64::MAX);
                        client
                            .execute(&insert, &[&(id + 1), &id, &loop_state(step)])
                            .await?;
                    }
                    Ok(started.elapsed())
                })
                .map_err(postgres_error(W))
        },
    );
    // Leave the server as it was, whatever the figures.
    let cleanup = bench.rt.block_on(async {
        for n in 0..=sample.get() {
            client
                .batch_execute(&format!(
                    "DROP SCHEMA IF EXISTS trellis_bench_{tag}_{n} CASCADE;
                     DROP TABLE IF EXISTS trellis_bench_floor_{tag}_{n};"
                ))
                .await?;
        }
        Ok(())
    });
    let (ours, theirs) = result?;
    cleanup.map_err(postgres_error(W))?;
    expect_eq(W, steps, 2 * k + 1)?;
    let row = Row::new(
        W,
        "postgres",
        k,
        "step",
        per(ours, steps),
        Some(per(theirs, steps)),
    );
    bench.emit(row.with("steps", steps));
    Ok(())
}

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub(crate) struct Chat {
    #[reducer(append)]
    pub(crate) messages: Vec<String>,
}

/// The `n`th message: 1,024 bytes.
fn message(n: usize) -> String {
    format!("{n:>8} {}", "m".repeat(1024 - 9))
}

/// When each step began and the bytes written by then, plus the same at the end.
type Marks = Arc<Mutex<Vec<(Instant, u64)>>>;

fn mark(marks: &Marks) {
    if let Ok(mut marks) = marks.lock() {
        marks.push((Instant::now(), bytes_written().unwrap_or(0)));
    }
}

/// The time and bytes of one step.
type StepCost = (Duration, u64);

/// The time and bytes of step `s` (from 1) from the marks: from its start to the next's.
fn step_cost(marks: &[(Instant, u64)], s: usize) -> StepCost {
    match (marks.get(s - 1), marks.get(s)) {
        (Some((t0, b0)), Some((t1, b1))) => (*t1 - *t0, b1.saturating_sub(*b0)),
        _ => (Duration::ZERO, 0),
    }
}

/// An agent-like loop, `model` ⇄ `tools`, each step appending one 1 KB message, until the
/// state holds `steps` messages.
fn chat_graph(steps: usize, marks: &Marks) -> GraphBuilder<Chat> {
    let mut b = GraphBuilder::<Chat>::new("Chat");
    for name in ["model", "tools"] {
        let marks = Arc::clone(marks);
        b.add_node_fn(name, move |s: Arc<Chat>, _| {
            mark(&marks);
            let next = message(s.messages.len());
            async move { Ok(NodeResult::Update(ChatUpdate::default().messages(next))) }
        });
    }
    b.add_edge(START, "model").set_max_steps(u32::MAX);
    for (from, to) in [("model", "tools"), ("tools", "model")] {
        b.add_conditional_edges(
            from,
            move |s: &Chat| if s.messages.len() < steps { to } else { END },
            [to, END],
        );
    }
    b
}

pub(crate) fn growing_state(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    const W: &str = "growing_state";
    // Three steps reported: early, mid-run and late; one step more than the last, so that the
    // last reported step is an ordinary one.
    let points = [10, bench.scale.size(500, 15), bench.scale.size(2000, 20)];
    let steps = points[2] + 1;
    let marks: Marks = Arc::default();
    let graph = chat_graph(steps, &marks)
        .compile()
        .map_err(|source| BenchError::Compile {
            workload: W,
            source,
        })?;
    let (mut ours_steps, mut floor_steps) = (Vec::new(), Vec::new());
    let (mut ours_means, mut loads) = (Vec::new(), Vec::new());
    let sample = Cell::new(0);
    let (ours, theirs) = alternate(
        bench.scale.samples(5),
        || {
            sample.set(sample.get() + 1);
            let sample = sample.get();
            let path = bench.scratch.file(&format!("chat-{sample}.db"));
            let store = Arc::new(
                SqliteCheckpointer::open_with(&path, Durability::Normal).map_err(store_error(W))?,
            );
            let graph = graph.clone().with_checkpointer(Arc::clone(&store));
            if let Ok(mut marks) = marks.lock() {
                marks.clear();
            }
            let (time, state, _) = timed_run(bench, W, &graph, Chat::default())?;
            mark(&marks);
            expect_eq(W, state.messages.len(), steps)?;
            let marks = marks.lock().map(|m| m.clone()).unwrap_or_default();
            ours_steps.push(points.map(|point| step_cost(&marks, point)));
            ours_means.push(mean_bytes(&marks));
            loads.push(load_latest(bench, &store, steps)?);
            // Each sample's file goes when measured: the floor's hold gigabytes at 2,000 steps.
            drop((graph, store));
            bench.scratch.file(&format!("chat-{sample}.db"));
            Ok(time)
        },
        || {
            let path = bench
                .scratch
                .file(&format!("chat-floor-{}.db", sample.get()));
            let mut connection =
                sqlite_floor(&path, Durability::Normal).map_err(sqlite_error(W))?;
            let mut state = Chat::default();
            let mut marks = Vec::with_capacity(steps + 1);
            let started = Instant::now();
            sqlite_insert(&mut connection, 0, &to_json(&state)).map_err(sqlite_error(W))?;
            for step in 1..=steps {
                marks.push((Instant::now(), bytes_written().unwrap_or(0)));
                state.messages.push(message(step - 1));
                let json = to_json(&state);
                sqlite_insert(&mut connection, step as u64, &json).map_err(sqlite_error(W))?;
            }
            marks.push((Instant::now(), bytes_written().unwrap_or(0)));
            let elapsed = started.elapsed();
            floor_steps.push(points.map(|point| step_cost(&marks, point)));
            drop(connection);
            bench
                .scratch
                .file(&format!("chat-floor-{}.db", sample.get()));
            Ok(elapsed)
        },
    )?;
    let at = |costs: &[[StepCost; 3]], i: usize| {
        let time = median(costs.iter().map(|c| c[i].0).collect());
        let bytes = middle(costs.iter().map(|c| c[i].1).collect());
        (per(time, 1).round() as u64, bytes)
    };
    let steps = steps as u64;
    let mut row = Row::new(
        W,
        "sqlite-normal",
        points[2] as u64,
        "step",
        per(ours, steps),
        Some(per(theirs, steps)),
    );
    for (i, point) in points.iter().enumerate() {
        let (ns, bytes) = at(&ours_steps, i);
        let (floor_ns, floor_bytes) = at(&floor_steps, i);
        row = row
            .with(&format!("ns_at_step_{point}"), ns)
            .with(&format!("bytes_at_step_{point}"), bytes)
            .with(&format!("floor_ns_at_step_{point}"), floor_ns)
            .with(&format!("floor_bytes_at_step_{point}"), floor_bytes);
    }
    let load = median(loads);
    row = row.with("mean_bytes_per_step", middle(ours_means)).with(
        &format!("load_latest_ns_at_step_{}", points[2]),
        per(load, 1).round() as u64,
    );
    bench.emit(row);
    Ok(())
}

/// The median of `values`.
fn middle(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or(0)
}

/// The bytes written per step over the whole run, the whole checkpoints among them.
fn mean_bytes(marks: &[(Instant, u64)]) -> u64 {
    match (marks.first(), marks.last()) {
        (Some((_, first)), Some((_, last))) if marks.len() > 1 => {
            last.saturating_sub(*first) / (marks.len() as u64 - 1)
        }
        _ => 0,
    }
}

/// How long reading the newest run's latest state back takes, as a process picking the thread
/// up would: its newest checkpoint, folded, and read as the state type (a median of five).
fn load_latest(
    bench: &Bench<'_>,
    store: &Arc<SqliteCheckpointer>,
    steps: usize,
) -> Result<Duration, BenchError> {
    use trellis::checkpoint::Checkpointer;
    const W: &str = "growing_state";
    let runs = bench
        .rt
        .block_on(store.list_runs(1, 0))
        .map_err(store_error(W))?;
    let Some(run) = runs.first() else {
        return Err(BenchError::Wrong {
            workload: W,
            reason: "no run stored".to_owned(),
        });
    };
    let mut times = Vec::with_capacity(5);
    for _ in 0..5 {
        let started = Instant::now();
        let latest = bench
            .rt
            .block_on(store.latest_checkpoint(&run.run_id))
            .map_err(store_error(W))?;
        let state: Option<Chat> = latest.and_then(|c| c.state_as().ok());
        times.push(started.elapsed());
        expect_eq(W, state.map(|s| s.messages.len()), Some(steps))?;
    }
    Ok(median(times))
}

fn to_json(state: &Chat) -> String {
    serde_json::to_string(state).unwrap_or_default()
}
