//! `compile`: `.graph` files of 100, 1,000 and 10,000 nodes through what a build script runs —
//! read, parse, validate, generate, lay out and write `OUT_DIR/<stem>.rs` — in each shape.
//!
//! A build script compiles in a process of its own: that is what is timed and judged, one
//! compile per process (after a warm-up compile of a one-node graph, so that the process's
//! first-call costs are not counted). The same compile repeated in this process is reported
//! beside it (`in_process_ns`): there the allocator's state, left by earlier compiles and
//! earlier workloads, decides whether each large compile faults its heap in again
//! (`docs/bench.md`).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::{Bench, BenchError};
use crate::measure::{alone, per};
use crate::report::{Row, Target};
use crate::shapes::SHAPES;

const W: &str = "compile";

pub(crate) fn compile(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    let sizes = bench.scale.size(vec![100, 1_000, 10_000], vec![20, 200]);
    let io = |source| BenchError::Io {
        workload: W,
        source,
    };
    for (shape, source) in SHAPES {
        // (nodes, per node in processes of their own, per node in this process)
        let mut smaller: Option<(usize, f64, f64)> = None;
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
            let in_process = alone(samples, || {
                let started = Instant::now();
                builder.compile(&[&input]).map_err(wrong)?;
                Ok(started.elapsed())
            })?;
            let own_process = match bench.compile_in {
                Some(exe) => Some(alone(samples.without_warm_up(), || {
                    in_own_process(exe, &input, &out_dir)
                })?),
                None => None,
            };
            let units = nodes as u64;
            let in_process = per(in_process, units);
            let judged = own_process.map_or(in_process, |time| per(time, units));
            let mut row = Row::new(W, *shape, units, "node", judged, None);
            if own_process.is_some() {
                row = row.with("in_process_ns", in_process.round() as u64);
            }
            if let Some((smaller_nodes, smaller_judged, smaller_in_process)) =
                smaller.filter(|(n, _, _)| n * 10 == nodes)
            {
                // How many times the time of the size ten times smaller (10 when linear).
                let factor = |now: f64, before: f64| (now * 1000.0 / before).round() / 100.0;
                row = row.with(
                    &format!("time_vs_{smaller_nodes}"),
                    factor(judged, smaller_judged),
                );
                if own_process.is_some() {
                    row = row.with(
                        &format!("in_process_vs_{smaller_nodes}"),
                        factor(in_process, smaller_in_process),
                    );
                }
                if nodes >= 10_000 {
                    row = row.judged(Target::TotalAndScaling {
                        total_ns: 50e6,
                        smaller_ns_per_unit: smaller_judged,
                        factor: 1.2,
                    });
                }
            }
            smaller = Some((nodes, judged, in_process));
            bench.emit(row);
        }
    }
    Ok(())
}

fn wrong(error: impl std::fmt::Display) -> BenchError {
    BenchError::Wrong {
        workload: W,
        reason: error.to_string(),
    }
}

/// One compile of `input` in a process of its own: `exe --compile-once input out_dir`.
fn in_own_process(exe: &Path, input: &Path, out_dir: &Path) -> Result<Duration, BenchError> {
    let output = Command::new(exe)
        .arg("--compile-once")
        .arg(input)
        .arg(out_dir)
        .output()
        .map_err(|source| BenchError::Io {
            workload: W,
            source,
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match stdout.trim().parse::<u64>() {
        Ok(nanos) if output.status.success() => Ok(Duration::from_nanos(nanos)),
        _ => Err(wrong(format_args!(
            "`{} --compile-once` ({}) printed {:?}: {}",
            exe.display(),
            output.status,
            stdout.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        ))),
    }
}

/// What `trellis-bench --compile-once INPUT OUT_DIR` runs in its process: a compile of a one-node
/// graph (the process's first-call costs), then the compile of `input` into `out_dir`, timed.
///
/// # Errors
/// [`BenchError::Io`] when the warm-up graph cannot be written, [`BenchError::Wrong`] when a
/// compile fails.
pub fn compile_once(input: &Path, out_dir: &Path) -> Result<Duration, BenchError> {
    let builder = trellis_codegen::Builder::new()
        .out_dir(out_dir)
        .emit_rerun_if_changed(false);
    let warm_up = out_dir.join("warm_up.graph");
    std::fs::write(
        &warm_up,
        "graph WarmUp { state S; node a { retry 2; } START -> a; a -> a | END; }",
    )
    .map_err(|source| BenchError::Io {
        workload: W,
        source,
    })?;
    builder.compile(&[&warm_up]).map_err(wrong)?;
    let started = Instant::now();
    builder.compile(&[input]).map_err(wrong)?;
    Ok(started.elapsed())
}
