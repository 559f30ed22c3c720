//! `trellis-bench`: runs the workloads and prints a table, or JSON lines with `--json`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use trellis_bench::{Options, Row, Scale, WORKLOADS, compile_once, run};

/// Trellis's benchmarks, each beside a hand-written floor (release builds only mean anything).
#[derive(Parser)]
#[command(name = "trellis-bench")]
struct Cli {
    /// One JSON line per workload and variant instead of the table.
    #[arg(long)]
    json: bool,
    /// Few samples: a smoke run that stays under a minute.
    #[arg(long)]
    quick: bool,
    /// A PostgreSQL server for `loop_ckpt`'s postgres variant (`postgres://user@host:port/db`).
    #[arg(long, value_name = "URL")]
    postgres: Option<String>,
    /// Only these workloads (all when none is named).
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(WORKLOADS))]
    workloads: Vec<String>,
    /// One timed compile of INPUT into OUT_DIR, in nanoseconds: what `compile` runs in a process
    /// of its own.
    #[arg(long, hide = true, num_args = 2, value_names = ["INPUT", "OUT_DIR"])]
    compile_once: Option<Vec<PathBuf>>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some([input, out_dir]) = cli.compile_once.as_deref() {
        return match compile_once(input, out_dir) {
            Ok(time) => {
                println!("{}", time.as_nanos());
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let options = Options {
        scale: if cli.quick { Scale::Quick } else { Scale::Full },
        postgres: cli.postgres,
        only: cli.workloads,
        // Each compile in a process of its own runs this very binary.
        compile_in: std::env::current_exe().ok(),
    };
    if !cli.json {
        if cfg!(debug_assertions) {
            println!("(a debug build: these figures mean nothing; run with --release)");
        }
        println!("{}", Row::header());
    }
    let (mut met, mut missed) = (0, Vec::new());
    let result = run(
        &options,
        &mut |row| {
            match row.met {
                Some(true) => met += 1,
                Some(false) => {
                    missed.push(format!("{} {} {}", row.workload, row.variant, row.size))
                }
                None => {}
            }
            if cli.json {
                match serde_json::to_string(&row) {
                    Ok(line) => println!("{line}"),
                    Err(error) => eprintln!("{}: {error}", row.workload),
                }
            } else {
                println!("{}", row.line());
            }
        },
        // A skipped variant shows as skipped, where the figures go (stderr beside JSON lines).
        &mut |skipped| {
            if cli.json {
                eprintln!("{skipped}");
            } else {
                println!("{skipped}");
            }
        },
    );
    if let Err(error) = result {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    let summary = format!("targets: {met} met, {} missed", missed.len());
    let mut summary = if missed.is_empty() {
        summary
    } else {
        format!("{summary} ({})", missed.join(", "))
    };
    if cli.quick {
        // Three compiles, a few samples: one slow moment of the machine can tip a figure.
        summary.push_str("; a quick pass, few samples: a full run judges the targets");
    }
    if cli.json {
        eprintln!("{summary}");
    } else {
        println!("{summary}");
    }
    ExitCode::SUCCESS
}
