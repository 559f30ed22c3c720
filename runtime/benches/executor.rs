//! Executor overhead against a hand-written baseline doing the same work: a `Vec` of boxed
//! async node functions and an edge table, no checkpointer, trivial node bodies.
//!
//! `cargo bench -p trellis --bench executor` prints, per workload, the median nanoseconds per
//! node activation of both and their ratio.

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use trellis::{CompiledGraph, END, GraphBuilder, GraphState, NodeResult, START};

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
struct Counter {
    #[reducer(sum)]
    n: u64,
}

fn add_one() -> NodeResult<CounterUpdate> {
    NodeResult::Update(CounterUpdate::default().n(1))
}

const LOOP_ITERATIONS: u64 = 1000;
const CHAIN: usize = 1000;
const FORK: usize = 100;

/// ping → pong → ping … until `n` reaches 2 × 1000 (2,000 activations, 1,000 routings).
fn loop_graph() -> CompiledGraph<Counter> {
    let mut b = GraphBuilder::<Counter>::new("Loop");
    b.add_node_fn("ping", |_, _| async { Ok(add_one()) })
        .add_node_fn("pong", |_, _| async { Ok(add_one()) })
        .add_edge(START, "ping")
        .add_edge("ping", "pong")
        .add_conditional_edges(
            "pong",
            |s: &Counter| {
                if s.n < 2 * LOOP_ITERATIONS {
                    "ping"
                } else {
                    END
                }
            },
            ["ping", END],
        )
        .set_max_steps(u32::MAX);
    b.compile().expect("valid loop graph")
}

fn chain_graph() -> CompiledGraph<Counter> {
    let mut b = GraphBuilder::<Counter>::new("Chain");
    let names: Vec<String> = (0..CHAIN).map(|i| format!("n{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        b.add_node_fn(name.clone(), |_, _| async { Ok(add_one()) });
        let next = names.get(i + 1).map_or(END, String::as_str);
        b.add_edge(name.clone(), next);
    }
    b.add_edge(START, "n0").set_max_steps(u32::MAX);
    b.compile().expect("valid chain graph")
}

/// root → 100 branches → join.
fn fork_graph() -> CompiledGraph<Counter> {
    let mut b = GraphBuilder::<Counter>::new("Fork");
    let branches: Vec<String> = (0..FORK).map(|i| format!("b{i}")).collect();
    b.add_node_fn("root", |_, _| async { Ok(add_one()) });
    for name in &branches {
        b.add_node_fn(name.clone(), |_, _| async { Ok(add_one()) })
            .add_edge(name.clone(), "join");
    }
    b.add_node_fn("join", |_, _| async { Ok(add_one()) })
        .add_edge(START, "root")
        .add_fork("root", branches)
        .add_edge("join", END);
    b.compile().expect("valid fork graph")
}

// ---- the hand-written baseline -------------------------------------------------------------

type BoxedNode =
    Box<dyn Fn(Arc<Counter>) -> Pin<Box<dyn Future<Output = u64> + Send>> + Send + Sync>;

enum Next {
    To(usize),
    Route(fn(&Counter) -> Option<usize>),
    Fork(Vec<usize>),
    End,
}

struct Baseline {
    nodes: Vec<BoxedNode>,
    edges: Vec<Next>,
}

fn boxed() -> BoxedNode {
    Box::new(|_| Box::pin(async { 1 }))
}

impl Baseline {
    fn looping() -> Self {
        Baseline {
            nodes: vec![boxed(), boxed()],
            edges: vec![
                Next::To(1),
                Next::Route(|s| (s.n < 2 * LOOP_ITERATIONS).then_some(0)),
            ],
        }
    }

    fn chain() -> Self {
        Baseline {
            nodes: (0..CHAIN).map(|_| boxed()).collect(),
            edges: (0..CHAIN)
                .map(|i| {
                    if i + 1 < CHAIN {
                        Next::To(i + 1)
                    } else {
                        Next::End
                    }
                })
                .collect(),
        }
    }

    fn fork() -> Self {
        let mut edges = vec![Next::Fork((1..=FORK).collect())];
        edges.extend((0..FORK).map(|_| Next::To(FORK + 1)));
        edges.push(Next::End);
        Baseline {
            nodes: (0..FORK + 2).map(|_| boxed()).collect(),
            edges,
        }
    }

    /// The same work as the executor: state behind an `Arc`, updates summed, routing on the
    /// new state, several nodes spawned and awaited in order.
    async fn run(self: &Arc<Self>) -> Counter {
        let mut state = Arc::new(Counter::default());
        let mut frontier = vec![0];
        while !frontier.is_empty() {
            let mut updates = Vec::with_capacity(frontier.len());
            if let [only] = frontier[..] {
                updates.push((self.nodes[only])(Arc::clone(&state)).await);
            } else {
                let handles: Vec<_> = frontier
                    .iter()
                    .map(|&i| {
                        let this = Arc::clone(self);
                        let state = Arc::clone(&state);
                        tokio::spawn(async move { (this.nodes[i])(state).await })
                    })
                    .collect();
                for handle in handles {
                    updates.push(handle.await.expect("baseline node"));
                }
            }
            Arc::make_mut(&mut state).n += updates.iter().sum::<u64>();
            let mut next = Vec::new();
            for &i in &frontier {
                match &self.edges[i] {
                    Next::To(j) => next.push(*j),
                    Next::Route(route) => next.extend(route(&state)),
                    Next::Fork(all) => next.extend_from_slice(all),
                    Next::End => {}
                }
            }
            next.sort_unstable();
            next.dedup();
            frontier = next;
        }
        Arc::try_unwrap(state).unwrap_or_else(|s| (*s).clone())
    }
}

// ---- measurement ---------------------------------------------------------------------------

/// Median wall time of `runs` executions of `work`, after a warm-up.
fn median<F, Fut>(rt: &tokio::runtime::Runtime, runs: usize, mut work: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future<Output = u64>,
{
    for _ in 0..runs.div_ceil(5) {
        black_box(rt.block_on(work()));
    }
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            black_box(rt.block_on(work()));
            started.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[runs / 2]
}

/// Runs only the workloads whose label contains `$BENCH_FILTER`, when set (for profiling one).
fn selected(label: &str) -> bool {
    std::env::var("BENCH_FILTER").map_or(true, |filter| label.contains(&filter))
}

fn row(
    rt: &tokio::runtime::Runtime,
    label: &str,
    graph: CompiledGraph<Counter>,
    baseline: Baseline,
    activations: u64,
    runs: usize,
) {
    if !selected(label) {
        return;
    }
    let baseline = Arc::new(baseline);
    let ours = median(rt, runs, || {
        let graph = graph.clone();
        async move {
            let outcome = graph.invoke(Counter::default()).await.expect("bench run");
            outcome.state().n
        }
    });
    let theirs = median(rt, runs, || {
        let baseline = Arc::clone(&baseline);
        async move { baseline.run().await.n }
    });
    let check = rt.block_on(async {
        graph
            .invoke(Counter::default())
            .await
            .expect("run")
            .state()
            .n
    });
    assert_eq!(check, activations, "{label}: every activation adds one");
    let per = |d: Duration| d.as_nanos() as f64 / activations as f64;
    println!(
        "{label:<34} {activations:>6} {:>10.0} {:>10.0} {:>7.2}x",
        per(ours),
        per(theirs),
        per(ours) / per(theirs)
    );
}

fn main() {
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let multi = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    println!(
        "{:<34} {:>6} {:>10} {:>10} {:>8}",
        "workload (median of runs)", "nodes", "trellis", "baseline", "ratio"
    );
    println!("{:<34} {:>6} {:>10} {:>10}", "", "", "ns/node", "ns/node");
    // What a listener costs: the same loop while one subscriber holds a stream (never read, so
    // it keeps the newest events and loses the rest, as a slow subscriber would).
    {
        let graph = loop_graph();
        let _listener = graph.subscribe();
        row(
            &current,
            "loop, one subscriber, current-thread",
            graph,
            Baseline::looping(),
            2 * LOOP_ITERATIONS,
            51,
        );
    }
    for (name, rt) in [("current-thread", &current), ("multi-thread", &multi)] {
        row(
            rt,
            &format!("loop 2 nodes x 1000, {name}"),
            loop_graph(),
            Baseline::looping(),
            2 * LOOP_ITERATIONS,
            51,
        );
        row(
            rt,
            &format!("chain of 1000, {name}"),
            chain_graph(),
            Baseline::chain(),
            CHAIN as u64,
            51,
        );
        row(
            rt,
            &format!("fork/join 100, {name}"),
            fork_graph(),
            Baseline::fork(),
            FORK as u64 + 2,
            201,
        );
    }
}
