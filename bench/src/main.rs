//! `trellis-bench`: runs the workloads and prints a table, or JSON lines with `--json`.

use std::process::ExitCode;

use clap::Parser;
use trellis_bench::{Options, Row, Scale, WORKLOADS, run};

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let options = Options {
        scale: if cli.quick { Scale::Quick } else { Scale::Full },
        postgres: cli.postgres,
        only: cli.workloads,
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
    let summary = if missed.is_empty() {
        summary
    } else {
        format!("{summary} ({})", missed.join(", "))
    };
    if cli.json {
        eprintln!("{summary}");
    } else {
        println!("{summary}");
    }
    ExitCode::SUCCESS
}
