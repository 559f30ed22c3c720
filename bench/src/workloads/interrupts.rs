//! `interrupt_resume`: `a → b → c` with a pause before `c`; a cycle is running to the pause and
//! resuming with an approval to the end — in memory and in SQLite.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use trellis::checkpoint::{Checkpointer, InMemoryCheckpointer, SqliteCheckpointer};
use trellis::{
    CompiledGraph, END, GraphBuilder, GraphState, NodeOptions, NodeResult, START,
    interrupt::Decision,
};

use super::{Bench, BenchError, expect_eq};
use crate::measure::{alone, per};
use crate::report::{Row, Target};

/// The target in memory.
const IN_MEMORY: Target = Target::Ns(10_000.0);

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub(crate) struct Approval {
    #[reducer(sum)]
    pub(crate) x: u64,
    #[answer]
    pub(crate) decision: Option<Decision>,
}

fn add_one() -> NodeResult<ApprovalUpdate> {
    NodeResult::Update(ApprovalUpdate::default().x(1))
}

pub(crate) fn approval_graph() -> GraphBuilder<Approval> {
    let mut b = GraphBuilder::<Approval>::new("Approval");
    b.add_node_fn("a", |_, _| async { Ok(add_one()) })
        .add_node_fn("b", |_, _| async { Ok(add_one()) })
        .add_node_fn_with(
            "c",
            |_, _| async { Ok(add_one()) },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .add_edge("c", END);
    b
}

/// `cycles` pauses and resumes on `graph`; their time.
fn cycles(
    bench: &Bench<'_>,
    graph: &CompiledGraph<Approval>,
    count: u64,
) -> Result<Duration, BenchError> {
    const W: &str = "interrupt_resume";
    let run = |source: trellis::RunError| BenchError::Run {
        workload: W,
        source,
    };
    let started = Instant::now();
    for _ in 0..count {
        let paused = bench
            .rt
            .block_on(graph.invoke(Approval::default()))
            .map_err(|failure| run(failure.error))?;
        let trellis::Outcome::Paused { run_id, .. } = paused else {
            return Err(BenchError::Wrong {
                workload: W,
                reason: "the run did not pause before c".to_owned(),
            });
        };
        let done = bench
            .rt
            .block_on(graph.resume(&run_id, Decision::Approve).run())
            .map_err(run)?;
        let trellis::Outcome::Completed { state, .. } = done else {
            return Err(BenchError::Wrong {
                workload: W,
                reason: "the resumed run did not complete".to_owned(),
            });
        };
        expect_eq(W, (state.x, state.decision), (3, Some(Decision::Approve)))?;
    }
    Ok(started.elapsed())
}

pub(crate) fn interrupt_resume(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    const W: &str = "interrupt_resume";
    let count = bench.scale.size(100, 5);
    let graph = approval_graph()
        .compile()
        .map_err(|source| BenchError::Compile {
            workload: W,
            source,
        })?;
    let store_error = |source| BenchError::Store {
        workload: W,
        source,
    };
    let mut sample = 0;
    // A memory sample takes about a millisecond: many of them, so that a slow moment of the
    // machine is a minority of the samples, not most of a short window.
    for (variant, samples) in [("memory", 101), ("sqlite-full", 15)] {
        let time = alone(bench.scale.samples(samples), || {
            // A fresh store per sample, so that no sample pays for the runs of the one before.
            sample += 1;
            let store: Arc<dyn Checkpointer> = if variant == "memory" {
                Arc::new(InMemoryCheckpointer::new())
            } else {
                let path = bench.scratch.file(&format!("approval-{sample}.db"));
                Arc::new(SqliteCheckpointer::open(&path).map_err(store_error)?)
            };
            cycles(bench, &graph.clone().with_checkpointer(store), count)
        })?;
        let mut row = Row::new(W, variant, count, "cycle", per(time, count), None);
        if variant == "memory" {
            row = row.judged(IN_MEMORY);
        }
        bench.emit(row);
    }
    Ok(())
}
