//! Checkpointing to PostgreSQL against a hand-written baseline (`cargo bench -p trellis
//! --features postgres --bench postgres`, with `TRELLIS_TEST_POSTGRES_URL` naming a server): the
//! 200-iteration loop of the SQLite bench (401 activations, a checkpoint after every super-step)
//! beside tokio-postgres inserting the same serialized state once per step with a prepared
//! statement, one implicit transaction each, on the same server. Prints the median time per
//! step of both and their ratio.

use std::sync::Arc;
use std::time::{Duration, Instant};

use trellis::checkpoint::{PostgresCheckpointer, PostgresOptions};

mod common;
use common::{graph, median, report};

/// One run of the graph in a fresh schema; (time per step, steps).
async fn trellis_run(url: &str, n: usize) -> (Duration, u64) {
    let options = PostgresOptions {
        schema: Some(format!("bench_{}_{n}", std::process::id())),
        ..PostgresOptions::default()
    };
    let store = PostgresCheckpointer::connect_with(url, options)
        .await
        .expect("connects");
    let graph = graph(Arc::new(store));
    let started = Instant::now();
    let steps = common::run(&graph).await;
    (
        started.elapsed() / u32::try_from(steps + 1).unwrap_or(1),
        steps,
    )
}

/// The baseline: per step, one insert of the serialized state.
async fn baseline_run(url: &str, steps: u64, n: usize) -> Duration {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    let table = format!("bench_baseline_{}_{n}", std::process::id());
    client
        .batch_execute(&format!(
            "CREATE TABLE {table} (run_id text, id bigint, step bigint, state text,
                 PRIMARY KEY (run_id, id))"
        ))
        .await
        .expect("schema");
    let insert = client
        .prepare(&format!(
            "INSERT INTO {table} VALUES ('run', $1, $2, $3::text::jsonb)"
        ))
        .await
        .expect("prepares");
    let started = Instant::now();
    for (step, json) in common::serialized_states(steps) {
        client
            .execute(&insert, &[&(step + 1), &step, &json])
            .await
            .expect("inserts");
    }
    started.elapsed() / u32::try_from(steps + 1).unwrap_or(1)
}

fn main() {
    let Some(url) = std::env::var("TRELLIS_TEST_POSTGRES_URL")
        .ok()
        .filter(|url| !url.is_empty())
    else {
        println!(
            "*** SKIPPED: set TRELLIS_TEST_POSTGRES_URL to a PostgreSQL server (see .ci/postgres) ***"
        );
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "{:<34} {:>12} {:>12} {:>7}",
        "200-iteration loop, per step", "trellis", "baseline", "ratio"
    );
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for n in 0..7 {
        let (per_step, steps) = rt.block_on(trellis_run(&url, n));
        ours.push(per_step);
        theirs.push(rt.block_on(baseline_run(&url, steps, n)));
    }
    report("PostgreSQL (server defaults)", median(ours), median(theirs));
}
