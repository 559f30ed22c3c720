//! `build`: declaring a 1,000-node chain through `GraphBuilder` and compiling it (the checks a
//! builder program pays at start-up).

use std::time::Instant;

use super::executor::chain_graph;
use super::{Bench, BenchError};
use crate::measure::{alone, per};
use crate::report::{Row, Target};

const PER_NODE: Target = Target::Ns(1_000.0);

pub(crate) fn build(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    const W: &str = "build";
    let nodes = bench.scale.size(1_000, 20);
    let time = alone(bench.scale.samples(51), || {
        let started = Instant::now();
        let graph = chain_graph(nodes)
            .compile()
            .map_err(|source| BenchError::Compile {
                workload: W,
                source,
            })?;
        let time = started.elapsed();
        std::hint::black_box(graph);
        Ok(time)
    })?;
    let nodes = nodes as u64;
    bench.emit(Row::new(W, "builder", nodes, "node", per(time, nodes), None).judged(PER_NODE));
    Ok(())
}
