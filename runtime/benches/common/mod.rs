//! What the checkpointing benchmarks share: the looping graph, running it, and the report.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use trellis::{
    CompiledGraph, END, GraphBuilder, GraphState, NodeResult, START, checkpoint::Checkpointer,
};

/// The state, as the baselines serialize it too.
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Counter {
    #[reducer(sum)]
    pub count: u64,
    #[reducer(append)]
    pub log: Vec<u64>,
}

pub const ITERATIONS: u64 = 200;

/// The loop: `start` ⇄ `tick` for `ITERATIONS` rounds, checkpointed in `store` at every step.
pub fn graph(store: Arc<dyn Checkpointer>) -> CompiledGraph<Counter> {
    let mut b = GraphBuilder::<Counter>::new("Loop");
    b.add_node_fn("start", |_, _| async {
        Ok(NodeResult::Update(CounterUpdate::default().count(1)))
    })
    .add_node_fn("tick", |s, _| async move {
        Ok(NodeResult::Update(
            CounterUpdate::default().count(1).log(s.count),
        ))
    })
    .add_edge(START, "start")
    .add_conditional_edges(
        "start",
        |s: &Counter| {
            if s.count > 2 * ITERATIONS {
                END
            } else {
                "tick"
            }
        },
        ["tick", END],
    )
    .add_conditional_edges(
        "tick",
        |s: &Counter| {
            if s.count > 2 * ITERATIONS {
                END
            } else {
                "start"
            }
        },
        ["start", END],
    )
    .set_max_steps(10_000)
    .set_checkpointer(store);
    b.compile().expect("valid graph")
}

/// What the baselines commit, as the run would: the start, then the state after each of
/// `steps` steps, serialized lazily (so that serializing is timed with each commit). Yields
/// `(step, json)`.
pub fn serialized_states(steps: u64) -> impl Iterator<Item = (i64, String)> {
    let mut state = Counter::default();
    (0..=steps).map(move |step| {
        if step > 0 {
            state.count += 1;
            state.log.push(state.count);
        }
        let json = serde_json::to_string(&state).expect("serializes");
        (i64::try_from(step).unwrap_or(i64::MAX), json)
    })
}

/// Runs the loop to its end; the number of super-steps.
pub async fn run(graph: &CompiledGraph<Counter>) -> u64 {
    match graph.invoke(Counter::default()).await.expect("runs") {
        trellis::Outcome::Completed { steps, .. } => steps,
        trellis::Outcome::Paused { .. } => panic!("the loop never pauses"),
    }
}

pub fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

/// One line: the median per step of both and their ratio.
pub fn report(label: &str, ours: Duration, theirs: Duration) {
    println!(
        "{label:<34} {:>9.1} µs {:>9.1} µs {:>6.2}x",
        ours.as_secs_f64() * 1e6,
        theirs.as_secs_f64() * 1e6,
        ours.as_secs_f64() / theirs.as_secs_f64()
    );
}
