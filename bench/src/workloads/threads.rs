//! `thread_run`: a new run on a thread of thousands of runs beside one on a thread of one run,
//! in SQLite — the thread's newest run is found through its index, so the long thread costs
//! what the short one does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use trellis::checkpoint::{Durability, SqliteCheckpointer};
use trellis::thread::Thread;
use trellis::{CompiledGraph, END, GraphBuilder, GraphState, START};

use super::{Bench, BenchError, expect_eq};
use crate::measure::alternate;
use crate::report::{Row, Target};

/// The "stays as fast as one run", give or take the machine's noise.
const AS_FAST: Target = Target::Ratio(1.2);

/// A state that stays the same size however many runs a thread has had: what is measured is
/// finding the thread's newest run, not reading a state that grows.
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub(crate) struct Turns {
    #[reducer(sum)]
    turns: u64,
    said: String,
}

fn graph(store: Arc<SqliteCheckpointer>) -> Result<CompiledGraph<Turns>, BenchError> {
    let mut builder = GraphBuilder::<Turns>::new("Turns");
    builder
        .add_node_fn("reply", |_, _| async {
            Ok(TurnsUpdate::default().turns(1).into())
        })
        .add_edge(START, "reply")
        .add_edge("reply", END)
        .set_checkpointer(store);
    builder.compile().map_err(|source| BenchError::Compile {
        workload: W,
        source,
    })
}

const W: &str = "thread_run";

fn run_error(source: trellis::RunError) -> BenchError {
    BenchError::Run {
        workload: W,
        source,
    }
}

/// One run on `thread` and a read of its state: what a chat turn costs the store.
fn turn(bench: &Bench<'_>, thread: &Thread<Turns>) -> Result<Duration, BenchError> {
    let started = Instant::now();
    bench
        .rt
        .block_on(async {
            thread
                .invoke(TurnsUpdate::default().said("hi".to_owned()))
                .await?;
            thread.state().await.map(drop)
        })
        .map_err(run_error)?;
    Ok(started.elapsed())
}

pub(crate) fn thread_run(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    let runs = bench.scale.size(5_000, 200);
    let store = Arc::new(
        SqliteCheckpointer::open_with(bench.scratch.file("threads.db"), Durability::Normal)
            .map_err(|source| BenchError::Store {
                workload: W,
                source,
            })?,
    );
    let graph = graph(store)?;
    let (long, short) = bench
        .rt
        .block_on(async {
            let long = graph.create_thread(Default::default()).await?;
            for _ in 0..runs {
                long.invoke(TurnsUpdate::default()).await?;
            }
            let short = graph.create_thread(Default::default()).await?;
            short.invoke(TurnsUpdate::default()).await?;
            Ok((long, short))
        })
        .map_err(run_error)?;
    let (ours, theirs) = alternate(
        bench.scale.samples(31),
        || turn(bench, &long),
        || turn(bench, &short),
    )?;
    let turns = bench
        .rt
        .block_on(long.state())
        .map_err(run_error)?
        .map(|snapshot| snapshot.state.turns);
    // Every run of the long thread went on from the one before.
    expect_eq(W, turns.is_some_and(|t| t > runs), true)?;
    let row = Row::new(
        W,
        "sqlite-normal",
        runs,
        "run",
        ours.as_nanos() as f64,
        Some(theirs.as_nanos() as f64),
    );
    bench.emit(row.judged(AS_FAST));
    Ok(())
}
