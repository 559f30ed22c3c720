//! `tooling`: what `trellis check`, `fmt` and `export` cost on the mixed shape of 10,000 nodes
//! (what an editor or a CI step waits for on a large graph).

use std::time::Instant;

use super::{Bench, BenchError};
use crate::measure::{alone, per};
use crate::report::Row;
use crate::shapes::mixed;

pub(crate) fn tooling(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    const W: &str = "tooling";
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
                trellis_dsl::export::to_json(&blueprint)
                    .map(|json| json.len())
                    .map_err(|error| wrong(error.to_string()))
            }),
        ),
        (
            "export-dot",
            Box::new(|| Ok(trellis_dsl::export::to_dot(&blueprint).len())),
        ),
        (
            "export-mermaid",
            Box::new(|| Ok(trellis_dsl::export::to_mermaid(&blueprint).len())),
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
    Ok(())
}
