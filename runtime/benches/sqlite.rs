//! Checkpointing to SQLite against a hand-written baseline (`cargo bench -p trellis --features
//! sqlite --bench sqlite`): a 200-iteration loop (401 activations, a checkpoint after every
//! super-step) beside plain rusqlite inserting the same serialized state once per step, one
//! transaction each, in the same journal mode and sync setting. Prints the median time per step
//! of both and their ratio.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use trellis::checkpoint::{Durability, SqliteCheckpointer};

mod common;
use common::{graph, median, report};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trellis-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

/// One run of the graph on a fresh file; returns (time per step, steps).
fn trellis_run(rt: &tokio::runtime::Runtime, durability: Durability, n: usize) -> (Duration, u64) {
    let path = scratch(&format!("trellis-{n}.db"));
    let store = Arc::new(SqliteCheckpointer::open_with(&path, durability).expect("opens"));
    let graph = graph(store as Arc<dyn trellis::checkpoint::Checkpointer>);
    let started = Instant::now();
    let steps = rt.block_on(common::run(&graph));
    (
        started.elapsed() / u32::try_from(steps + 1).unwrap_or(1),
        steps,
    )
}

/// The baseline: per step, one transaction inserting the serialized state.
fn baseline_run(durability: Durability, steps: u64, n: usize) -> Duration {
    let path = scratch(&format!("baseline-{n}.db"));
    let mut connection = rusqlite::Connection::open(&path).expect("opens");
    let sync = if durability == Durability::Full {
        "FULL"
    } else {
        "NORMAL"
    };
    connection
        .execute_batch(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync};
             CREATE TABLE checkpoints (run_id TEXT, id INTEGER, step INTEGER, state TEXT,
                 PRIMARY KEY (run_id, id));"
        ))
        .expect("schema");
    let started = Instant::now();
    // The start checkpoint, then one per step: as many commits as the run makes.
    for (step, json) in common::serialized_states(steps) {
        let transaction = connection.transaction().expect("begins");
        transaction
            .execute(
                "INSERT INTO checkpoints VALUES ('run', ?1, ?2, ?3)",
                rusqlite::params![step + 1, step, json],
            )
            .expect("checkpoint row");
        transaction.commit().expect("commits");
    }
    started.elapsed() / u32::try_from(steps + 1).unwrap_or(1)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "{:<34} {:>12} {:>12} {:>7}",
        "200-iteration loop, per step", "trellis", "baseline", "ratio"
    );
    for (label, durability, runs) in [
        ("synchronous=FULL (WAL)", Durability::Full, 7),
        ("synchronous=NORMAL (WAL)", Durability::Normal, 15),
    ] {
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for n in 0..runs {
            let (per_step, steps) = trellis_run(&rt, durability, n);
            ours.push(per_step);
            theirs.push(baseline_run(durability, steps, n));
        }
        report(label, median(ours), median(theirs));
    }
}
