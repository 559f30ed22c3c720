//! `tooling`: what `trellis check`, `fmt` and `export` cost on the mixed shape of 10,000 nodes
//! (what an editor or a CI step waits for on a large graph); and `trellis check` with its
//! report, as a terminal (`report-human`) and a program (`report-json`) read it, on forks that
//! rejoin unevenly — a warning every ten nodes — at 1,000, 10,000 and 20,000 nodes, judged on
//! staying linear.

use std::time::Instant;

use super::{Bench, BenchError};
use crate::measure::{alone, per};
use trellis_dsl::render::HumanStyle;

use crate::report::{Row, Target};
use crate::shapes::{mixed, uneven};

const W: &str = "tooling";

pub(crate) fn tooling(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    let nodes = bench.scale.size(10_000, 100);
    let text = mixed(nodes);
    let wrong = |reason: String| BenchError::Wrong {
        workload: W,
        reason,
    };
    let mut checked = trellis_dsl::check(&text);
    if let Some(first) = checked.diagnostics.first() {
        return Err(wrong(first.message.clone()));
    }
    let blueprint = checked.module.graphs.remove(0);
    type Tool<'a> = Box<dyn Fn() -> Result<usize, BenchError> + 'a>;
    let tools: [(&str, Tool<'_>); 5] = [
        (
            "check",
            Box::new(|| Ok(trellis_dsl::check(&text).module.graphs.len())),
        ),
        (
            "fmt",
            Box::new(|| {
                trellis_dsl::format(&text)
                    .map(|formatted| formatted.len())
                    .map_err(|error| wrong(error.to_string()))
            }),
        ),
        (
            "export-json",
            Box::new(|| {
                trellis_graph::export::to_json(&blueprint)
                    .map(|json| json.len())
                    .map_err(|error| wrong(error.to_string()))
            }),
        ),
        (
            "export-dot",
            Box::new(|| Ok(trellis_graph::export::to_dot(&blueprint).len())),
        ),
        (
            "export-mermaid",
            Box::new(|| Ok(trellis_graph::export::to_mermaid(&blueprint).len())),
        ),
    ];
    for (variant, tool) in tools {
        let time = alone(bench.scale.samples(21), || {
            let started = Instant::now();
            std::hint::black_box(tool()?);
            Ok(started.elapsed())
        })?;
        let units = nodes as u64;
        bench.emit(Row::new(W, variant, units, "node", per(time, units), None));
    }
    report(bench)
}

/// `trellis check`'s work on a file with a diagnostic every ten nodes: check, then every
/// diagnostic rendered as the CLI prints it (one line index for the file, as the CLI makes).
fn report(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    let sizes = bench
        .scale
        .size(vec![1_000, 10_000, 20_000], vec![100, 1_000]);
    let style = HumanStyle::default();
    type Render = fn(&trellis_dsl::Diagnostic, &trellis_dsl::LineIndex<'_>, HumanStyle) -> usize;
    let renders: [(&str, Render); 2] = [
        ("report-human", |d, index, style| {
            trellis_dsl::render::human(d, "big.graph", index, style).len()
        }),
        ("report-json", |d, index, _| {
            trellis_dsl::render::json_line(d, "big.graph", index).len()
        }),
    ];
    for (variant, render) in renders {
        // (nodes, ns per node) of the size before.
        let mut smaller: Option<(usize, f64)> = None;
        for &nodes in &sizes {
            let text = uneven(nodes);
            let time = alone(
                bench.scale.samples(if nodes >= 10_000 { 11 } else { 21 }),
                || {
                    let started = Instant::now();
                    let checked = trellis_dsl::check(&text);
                    let index = trellis_dsl::LineIndex::new(&text);
                    let written: usize = checked
                        .diagnostics
                        .iter()
                        .map(|d| render(d, &index, style))
                        .sum();
                    std::hint::black_box(written);
                    Ok::<_, BenchError>(started.elapsed())
                },
            )?;
            let units = nodes as u64;
            let per_node = per(time, units);
            let mut row = Row::new(W, variant, units, "node", per_node, None)
                .with("whole_ms", (time.as_secs_f64() * 1e5).round() / 100.0);
            if let Some((before, before_ns)) = smaller {
                // How many times the whole time of the size before (10 or 2 when linear).
                let growth = per_node * nodes as f64 / (before_ns * before as f64);
                row = row.with(
                    &format!("time_vs_{before}"),
                    (growth * 100.0).round() / 100.0,
                );
                if before * 10 == nodes && nodes >= 10_000 {
                    row = row.judged(Target::TotalAndScaling {
                        total_ns: 50e6,
                        smaller_ns_per_unit: before_ns,
                        factor: 1.2,
                    });
                }
            }
            smaller = Some((nodes, per_node));
            bench.emit(row);
        }
    }
    Ok(())
}
