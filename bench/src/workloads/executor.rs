//! The executor alone, no checkpointer: `chain`, `loop`, `fanout`, and `memory` (a long loop
//! whose resident memory must stay flat).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use trellis::{CompiledGraph, END, GraphBuilder, GraphState, NodeResult, START};

use super::{Bench, BenchError, expect_eq, timed_run};
use crate::floor::{Floor, Next, NodeFn, node};
use crate::measure::{Samples, alone, alternate, per, resident_kib};
use crate::report::{Row, Target};

/// The targets for the executor.
const LOOP_AND_CHAIN: Target = Target::NsAndRatio(150.0, 3.0);
const FANOUT: Target = Target::Ns(1_000.0);
/// A long loop may grow by an allocator's slack, never by the step.
const FLAT: Target = Target::FlatMemory(1_024);

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub(crate) struct Counter {
    #[reducer(sum)]
    pub(crate) x: u64,
}

fn add_one() -> NodeResult<CounterUpdate> {
    NodeResult::Update(CounterUpdate::default().x(1))
}

fn compiled<S: GraphState>(
    workload: &'static str,
    builder: GraphBuilder<S>,
) -> Result<CompiledGraph<S>, BenchError> {
    builder
        .compile()
        .map_err(|source| BenchError::Compile { workload, source })
}

fn timed_floor<S, U>(bench: &Bench<'_>, floor: &Arc<Floor<S, U>>, input: S) -> (Duration, S)
where
    S: Clone + Send + Sync + 'static,
    U: Send + 'static,
{
    let started = Instant::now();
    let state = bench.rt.block_on(floor.run(input));
    (started.elapsed(), state)
}

/// Trellis's run of `graph` and the floor's, alternately; both must count to `expected`.
fn counter_against_floor(
    bench: &Bench<'_>,
    workload: &'static str,
    graph: &CompiledGraph<Counter>,
    floor: &Arc<Floor<Counter, u64>>,
    expected: u64,
    samples: Samples,
) -> Result<(Duration, Duration), BenchError> {
    alternate(
        samples,
        || {
            let (time, state, _) = timed_run(bench, workload, graph, Counter::default())?;
            expect_eq(workload, state.x, expected)?;
            Ok(time)
        },
        || {
            let (time, state) = timed_floor(bench, floor, Counter::default());
            expect_eq(workload, state.x, expected)?;
            Ok(time)
        },
    )
}

/// `START → n0 → … → n(N−1) → END`, each node adding 1 to `x`.
pub(crate) fn chain_graph(nodes: usize) -> GraphBuilder<Counter> {
    let mut b = GraphBuilder::<Counter>::new("Chain");
    let names: Vec<String> = (0..nodes).map(|i| format!("n{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        b.add_node_fn(name.clone(), |_, _| async { Ok(add_one()) });
        b.add_edge(name.clone(), names.get(i + 1).map_or(END, String::as_str));
    }
    b.add_edge(START, "n0").set_max_steps(u32::MAX);
    b
}

pub(crate) fn chain(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    const W: &str = "chain";
    for nodes in bench.scale.size(vec![100, 1_000], vec![10]) {
        let graph = compiled(W, chain_graph(nodes))?;
        let floor = Arc::new(Floor::<Counter, u64> {
            nodes: (0..nodes).map(|_| node(|_: &Counter| 1)).collect(),
            edges: (0..nodes)
                .map(|i| {
                    if i + 1 < nodes {
                        Next::To(i + 1)
                    } else {
                        Next::End
                    }
                })
                .collect(),
            apply: |s, d| s.x += d,
            entry: 0,
        });
        let samples = bench.scale.samples(if nodes < 1_000 { 301 } else { 51 });
        let expected = nodes as u64;
        let (ours, theirs) = counter_against_floor(bench, W, &graph, &floor, expected, samples)?;
        let row = Row::new(
            W,
            "memory",
            expected,
            "activation",
            per(ours, expected),
            Some(per(theirs, expected)),
        );
        bench.emit(row.judged(LOOP_AND_CHAIN));
    }
    Ok(())
}

/// `model` → `tools` while `x < k`, else END; `tools` (adds 1 to `x`) → `model`: 2k + 1
/// activations.
pub(crate) fn loop_graph(k: u64) -> GraphBuilder<Counter> {
    let mut b = GraphBuilder::<Counter>::new("Loop");
    b.add_node_fn("model", |_, _| async { Ok(NodeResult::None) })
        .add_node_fn("tools", |_, _| async { Ok(add_one()) })
        .add_edge(START, "model")
        .add_conditional_edges(
            "model",
            move |s: &Counter| if s.x < k { "tools" } else { END },
            ["tools", END],
        )
        .add_edge("tools", "model")
        .set_max_steps(u32::MAX);
    b
}

fn loop_floor(k: u64) -> Arc<Floor<Counter, u64>> {
    Arc::new(Floor {
        nodes: vec![node(|_: &Counter| 0), node(|_: &Counter| 1)],
        edges: vec![
            Next::Route(Box::new(move |s: &Counter| (s.x < k).then_some(1))),
            Next::To(0),
        ],
        apply: |s, d| s.x += d,
        entry: 0,
    })
}

pub(crate) fn looping(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    const W: &str = "loop";
    let k = bench.scale.size(1_000, 10);
    let graph = compiled(W, loop_graph(k))?;
    let floor = loop_floor(k);
    let activations = 2 * k + 1;
    let samples = bench.scale.samples(51);
    let (ours, theirs) = counter_against_floor(bench, W, &graph, &floor, k, samples)?;
    let row = Row::new(
        W,
        "memory",
        k,
        "activation",
        per(ours, activations),
        Some(per(theirs, activations)),
    );
    bench.emit(row.with("activations", activations).judged(LOOP_AND_CHAIN));
    Ok(())
}

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub(crate) struct Fan {
    #[reducer(append)]
    pub(crate) items: Vec<u64>,
    pub(crate) total: u64,
}

/// The floor's update for `Fan`.
enum FloorFan {
    Nothing,
    Item(u64),
    Total(u64),
}

/// `plan` forks to `w` branches; branch `i` appends `i`; `join` sums.
pub(crate) fn fanout_graph(w: u64) -> GraphBuilder<Fan> {
    let mut b = GraphBuilder::<Fan>::new("Fanout");
    let branches: Vec<String> = (0..w).map(|i| format!("b{i}")).collect();
    b.add_node_fn("plan", |_, _| async { Ok(NodeResult::None) });
    for (i, name) in (0..w).zip(&branches) {
        b.add_node_fn(name.clone(), move |_, _| async move {
            Ok(NodeResult::Update(FanUpdate::default().items(i)))
        })
        .add_edge(name.clone(), "join");
    }
    b.add_node_fn("join", |s: Arc<Fan>, _| async move {
        Ok(NodeResult::Update(
            FanUpdate::default().total(s.items.iter().sum::<u64>()),
        ))
    })
    .add_edge(START, "plan")
    .add_fork("plan", branches)
    .add_edge("join", END);
    b
}

fn fanout_floor(w: u64) -> Arc<Floor<Fan, FloorFan>> {
    let width = usize::try_from(w).unwrap_or(usize::MAX);
    let mut nodes: Vec<NodeFn<Fan, FloorFan>> = vec![node(|_| FloorFan::Nothing)];
    for i in 0..w {
        nodes.push(Box::new(move |_| {
            Box::pin(async move { FloorFan::Item(i) })
        }));
    }
    nodes.push(node(|s: &Fan| FloorFan::Total(s.items.iter().sum())));
    let mut edges = vec![Next::Fork((1..=width).collect())];
    edges.extend((0..width).map(|_| Next::To(width + 1)));
    edges.push(Next::End);
    Arc::new(Floor {
        nodes,
        edges,
        apply: |s, update| match update {
            FloorFan::Nothing => {}
            FloorFan::Item(i) => s.items.push(i),
            FloorFan::Total(total) => s.total = total,
        },
        entry: 0,
    })
}

pub(crate) fn fanout(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    const W: &str = "fanout";
    let w = bench.scale.size(100, 10);
    let graph = compiled(W, fanout_graph(w))?;
    let floor = fanout_floor(w);
    let expected: Vec<u64> = (0..w).collect();
    let total = w * (w - 1) / 2;
    let (ours, theirs) = alternate(
        bench.scale.samples(201),
        || {
            let (time, state, _) = timed_run(bench, W, &graph, Fan::default())?;
            expect_eq(W, (&state.items, state.total), (&expected, total))?;
            Ok(time)
        },
        || {
            let (time, state) = timed_floor(bench, &floor, Fan::default());
            expect_eq(W, (&state.items, state.total), (&expected, total))?;
            Ok(time)
        },
    )?;
    let row = Row::new(W, "memory", w, "branch", per(ours, w), Some(per(theirs, w)));
    bench.emit(row.judged(FANOUT));
    Ok(())
}

/// The loop for 100,000 steps with no checkpointer, its resident memory read a tenth of the way
/// in and at the end: a run that keeps something per step would grow by megabytes.
pub(crate) fn memory(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    const W: &str = "memory";
    let k = bench.scale.size(50_000, 1_000);
    let readings = Arc::new(Mutex::new(Vec::new()));
    let mut b = GraphBuilder::<Counter>::new("Memory");
    let seen = Arc::clone(&readings);
    b.add_node_fn("model", |_, _| async { Ok(NodeResult::None) })
        .add_node_fn("tools", move |s: Arc<Counter>, _| {
            if (s.x == k / 10 || s.x == k - 1)
                && let Ok(mut seen) = seen.lock()
            {
                seen.extend(resident_kib());
            }
            async { Ok(add_one()) }
        })
        .add_edge(START, "model")
        .add_conditional_edges(
            "model",
            move |s: &Counter| if s.x < k { "tools" } else { END },
            ["tools", END],
        )
        .add_edge("tools", "model")
        .set_max_steps(u32::MAX);
    let graph = compiled(W, b)?;
    let steps = 2 * k + 1;
    let time = alone(Samples::ONE, || {
        if let Ok(mut seen) = readings.lock() {
            seen.clear();
        }
        let (time, state, _) = timed_run(bench, W, &graph, Counter::default())?;
        expect_eq(W, state.x, k)?;
        Ok(time)
    })?;
    let readings = readings.lock().map(|seen| seen.clone()).unwrap_or_default();
    let mut row = Row::new(W, "loop", steps, "activation", per(time, steps), None);
    if let [early, late] = readings[..] {
        let growth = i64::try_from(late).unwrap_or(i64::MAX) - i64::try_from(early).unwrap_or(0);
        row = row
            .with("rss_kib_at_tenth", early)
            .with("rss_kib_at_end", late)
            .with("rss_kib_growth", growth);
    }
    bench.emit(row.judged(FLAT));
    Ok(())
}
