//! `compile`: `.graph` files of 100, 1,000 and 10,000 nodes through what a build script runs —
//! read, parse, validate, generate, lay out and write `OUT_DIR/<stem>.rs` — in each shape.

use std::time::Instant;

use super::{Bench, BenchError};
use crate::measure::{alone, per};
use crate::report::{Row, Target};
use crate::shapes::SHAPES;

pub(crate) fn compile(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    const W: &str = "compile";
    let sizes = bench.scale.size(vec![100, 1_000, 10_000], vec![20, 200]);
    let io = |source| BenchError::Io {
        workload: W,
        source,
    };
    for (shape, source) in SHAPES {
        let mut smaller: Option<(usize, f64)> = None;
        for &nodes in &sizes {
            let text = source(nodes);
            // A clean graph (no error, no warning): what is timed is the whole path.
            if let Some(error) = trellis_dsl::check(&text).diagnostics.first() {
                return Err(BenchError::Wrong {
                    workload: W,
                    reason: format!("the {shape} shape of {nodes} nodes: {}", error.message),
                });
            }
            let input = bench.scratch.file(&format!("{shape}{nodes}.graph"));
            std::fs::write(&input, &text).map_err(io)?;
            let out_dir = bench.scratch.dir().join(format!("out-{shape}{nodes}"));
            std::fs::create_dir_all(&out_dir).map_err(io)?;
            let builder = trellis_codegen::Builder::new()
                .out_dir(&out_dir)
                .emit_rerun_if_changed(false);
            let samples = bench.scale.samples(if nodes >= 10_000 { 11 } else { 31 });
            let time = alone(samples, || {
                let started = Instant::now();
                builder
                    .compile(&[&input])
                    .map_err(|source| BenchError::Wrong {
                        workload: W,
                        reason: source.to_string(),
                    })?;
                Ok(started.elapsed())
            })?;
            let units = nodes as u64;
            let mut row = Row::new(W, *shape, units, "node", per(time, units), None);
            if let Some((smaller_nodes, smaller_ns)) = smaller.filter(|(n, _)| n * 10 == nodes) {
                // How many times the time of the size ten times smaller (10 when linear).
                let factor = row.trellis_ns * 10.0 / smaller_ns;
                row = row.with(
                    &format!("time_vs_{smaller_nodes}"),
                    (factor * 100.0).round() / 100.0,
                );
                if nodes >= 10_000 {
                    row = row.judged(Target::TotalAndScaling {
                        total_ns: 50e6,
                        smaller_ns_per_unit: smaller_ns,
                        factor: 1.2,
                    });
                }
            }
            smaller = Some((nodes, row.trellis_ns));
            bench.emit(row);
        }
    }
    Ok(())
}
