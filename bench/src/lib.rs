//! Trellis's benchmark suite: every workload beside a hand-written floor doing the same work,
//! measured in the same process, alternating, medians of several samples (`compile`, which has
//! no floor, times each compile in a process of its own, as a build script runs it).
//!
//! The `trellis-bench` binary prints a table (or, with `--json`, one JSON line per workload and
//! variant); `bench/langgraph/compare` runs LangGraph on the same workloads and prints both
//! sides in one table. Node bodies are trivial, so what is measured is the runtime's own cost.
//!
//! ```
//! use trellis_bench::{Options, Scale, run};
//!
//! let options = Options {
//!     scale: Scale::Smoke,
//!     postgres: None,
//!     only: vec!["loop".into()],
//!     compile_in: None,
//! };
//! let mut rows = Vec::new();
//! run(&options, &mut |row| rows.push(row), &mut |_skipped| {})?;
//! assert_eq!(rows[0].workload, "loop");
//! assert!(rows[0].baseline_ns.is_some(), "the loop runs beside its floor");
//! # Ok::<(), trellis_bench::BenchError>(())
//! ```

mod floor;
mod measure;
mod report;
mod shapes;
mod workloads;

pub use measure::Scale;
pub use report::Row;
pub use workloads::{BenchError, Options, WORKLOADS, compile_once, run};
