//! The workloads, in the order the table shows them, and what they share: the tokio runtime,
//! the scale, scratch files, and the way a wrong result is reported.

mod build;
mod checkpoints;
mod compile;
mod editor;
mod executor;
mod interrupts;
mod server;
mod threads;
mod tooling;

use std::path::PathBuf;

pub use compile::compile_once;

use crate::{Row, Scale};

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// How much to measure.
    pub scale: Scale,
    /// A PostgreSQL server for `loop_ckpt`'s `postgres` variant (`postgres://…`); without it
    /// that variant is skipped, and says so.
    pub postgres: Option<String>,
    /// Only the workloads with these names (all when empty).
    pub only: Vec<String>,
    /// The `trellis-bench` binary: `compile` then times each compile in a process of its own,
    /// as a build script runs it (see [`compile_once`]), and reports the compiles repeated in
    /// this process beside it. Without it, only those are measured.
    pub compile_in: Option<PathBuf>,
}

/// The workloads' names, in the order they run.
pub const WORKLOADS: &[&str] = &[
    "chain",
    "loop",
    "fanout",
    "memory",
    "loop_ckpt",
    "growing_state",
    "thread_run",
    "interrupt_resume",
    "server",
    "build",
    "compile",
    "tooling",
    "editor",
];

/// Why a workload could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A run failed.
    #[error("{workload}: the run failed: {source}")]
    Run {
        /// The workload.
        workload: &'static str,
        /// Why.
        source: trellis::RunError,
    },
    /// A graph did not build.
    #[error("{workload}: the graph did not compile: {source}")]
    Compile {
        /// The workload.
        workload: &'static str,
        /// Why.
        source: trellis::CompileError,
    },
    /// A store could not be opened.
    #[error("{workload}: the store failed: {source}")]
    Store {
        /// The workload.
        workload: &'static str,
        /// Why.
        source: trellis::checkpoint::CheckpointError,
    },
    /// The SQLite floor failed.
    #[error("{workload}: SQLite (the floor) failed: {source}")]
    Sqlite {
        /// The workload.
        workload: &'static str,
        /// Why.
        source: rusqlite::Error,
    },
    /// The PostgreSQL floor failed.
    #[error("{workload}: PostgreSQL (the floor) failed: {source}")]
    Postgres {
        /// The workload.
        workload: &'static str,
        /// Why.
        source: tokio_postgres::Error,
    },
    /// A scratch file or the tokio runtime could not be set up.
    #[error("{workload}: {source}")]
    Io {
        /// The workload.
        workload: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// A workload computed something else than it must: its figures would measure other work.
    #[error("{workload}: wrong result: {reason}")]
    Wrong {
        /// The workload.
        workload: &'static str,
        /// What was expected and what came.
        reason: String,
    },
}

/// Runs the chosen workloads, handing each row to `emit` as soon as it is measured, and each
/// skipped variant to `skipped` with the reason.
pub fn run(
    options: &Options,
    emit: &mut dyn FnMut(Row),
    skipped: &mut dyn FnMut(&str),
) -> Result<(), BenchError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| BenchError::Io {
            workload: "setup",
            source,
        })?;
    let scratch = Scratch::new().map_err(|source| BenchError::Io {
        workload: "setup",
        source,
    })?;
    let mut bench = Bench {
        rt: &rt,
        scale: options.scale,
        scratch: &scratch,
        compile_in: options.compile_in.as_deref(),
        emit,
        skipped,
    };
    let chosen = |name: &str| options.only.is_empty() || options.only.iter().any(|o| o == name);
    for &name in WORKLOADS {
        if !chosen(name) {
            continue;
        }
        match name {
            "chain" => executor::chain(&mut bench)?,
            "loop" => executor::looping(&mut bench)?,
            "fanout" => executor::fanout(&mut bench)?,
            "memory" => executor::memory(&mut bench)?,
            "loop_ckpt" => checkpoints::loop_ckpt(&mut bench, options.postgres.as_deref())?,
            "growing_state" => checkpoints::growing_state(&mut bench)?,
            "thread_run" => threads::thread_run(&mut bench)?,
            "interrupt_resume" => interrupts::interrupt_resume(&mut bench)?,
            "server" => server::server(&mut bench, options.postgres.as_deref())?,
            "build" => build::build(&mut bench)?,
            "compile" => compile::compile(&mut bench)?,
            "tooling" => tooling::tooling(&mut bench)?,
            "editor" => editor::editor(&mut bench)?,
            _ => unreachable!("every name of WORKLOADS has a workload"),
        }
    }
    Ok(())
}

/// What a workload gets.
pub(crate) struct Bench<'a> {
    pub(crate) rt: &'a tokio::runtime::Runtime,
    pub(crate) scale: Scale,
    pub(crate) scratch: &'a Scratch,
    pub(crate) compile_in: Option<&'a std::path::Path>,
    emit: &'a mut dyn FnMut(Row),
    skipped: &'a mut dyn FnMut(&str),
}

impl Bench<'_> {
    pub(crate) fn emit(&mut self, row: Row) {
        (self.emit)(row);
    }

    pub(crate) fn skip(&mut self, why: &str) {
        (self.skipped)(why);
    }
}

/// A directory of scratch files, removed at the end.
pub(crate) struct Scratch {
    dir: PathBuf,
    tag: String,
}

impl Scratch {
    fn new() -> std::io::Result<Self> {
        // One per `run`, even for two runs at once in one process (tests).
        static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tag = format!("{}_{run}", std::process::id());
        let dir = std::env::temp_dir().join(format!("trellis-bench-{tag}"));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch { dir, tag })
    }

    /// A fresh path in it (the file and its WAL removed if they were there).
    pub(crate) fn file(&self, name: &str) -> PathBuf {
        let path = self.dir.join(name);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        path
    }

    pub(crate) fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// What tells this run's things apart from another's (its database schemas).
    pub(crate) fn tag(&self) -> &str {
        &self.tag
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `graph` once from `input` to its end: the time, the final state and the steps.
pub(crate) fn timed_run<S: trellis::GraphState>(
    bench: &Bench<'_>,
    workload: &'static str,
    graph: &trellis::CompiledGraph<S>,
    input: S,
) -> Result<(std::time::Duration, S, u64), BenchError> {
    let started = std::time::Instant::now();
    let outcome = bench
        .rt
        .block_on(graph.invoke(input))
        .map_err(|failure| BenchError::Run {
            workload,
            source: failure.error,
        })?;
    let elapsed = started.elapsed();
    match outcome {
        trellis::Outcome::Completed { state, steps, .. } => Ok((elapsed, state, steps)),
        trellis::Outcome::Paused { .. } => Err(BenchError::Wrong {
            workload,
            reason: "the run paused".to_owned(),
        }),
    }
}

/// `Ok` if `got == expected`, else a [`BenchError::Wrong`].
pub(crate) fn expect_eq<T: PartialEq + std::fmt::Debug>(
    workload: &'static str,
    got: T,
    expected: T,
) -> Result<(), BenchError> {
    if got == expected {
        Ok(())
    } else {
        Err(BenchError::Wrong {
            workload,
            reason: format!("expected {expected:?}, got {got:?}"),
        })
    }
}
