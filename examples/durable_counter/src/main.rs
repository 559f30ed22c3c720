//! The crash test bed: every super-step adds 1 to `count` and appends the step's number to
//! `log`, and is checkpointed. Kill it at any moment and `resume` continues from the last
//! committed step: at the end `count == N` and `log == [1, 2, …, N]`.
//!
//! ```text
//! durable_counter run --steps N [--db URL] [--step-delay-ms D]
//! durable_counter resume [--run ID] [--db URL]
//! durable_counter show [--run ID] [--db URL]
//! ```
//!
//! `URL` is `sqlite:PATH` (default `sqlite:trellis.db`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use trellis::checkpoint::SqliteCheckpointer;
use trellis::{
    ApplyResume, Checkpointer, GraphState, Interrupt, NodeContext, NodeResult, RunId, RunStatus,
};

trellis::graph! {
    /// Counts to `target`, one super-step at a time.
    graph Counter {
        state Count;
        max_steps 1000000;

        /// Adds one and logs the step's number.
        node tick;

        START -> tick;
        tick -> tick | END;
    }
}

/// The counter's state.
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState)]
pub struct Count {
    /// How far to count.
    pub target: u64,
    /// How long each step takes, in milliseconds (to give a kill somewhere to land).
    pub delay_ms: u64,
    /// Steps taken.
    #[reducer(sum)]
    pub count: u64,
    /// The number of every step, in order.
    #[reducer(append)]
    pub log: Vec<u64>,
}

impl ApplyResume for Count {
    type Input = ();
    fn apply_resume(&self, _: &Interrupt, (): ()) -> CountUpdate {
        CountUpdate::default()
    }
}

struct Ticker;

#[trellis::async_trait]
impl counter::Handlers for Ticker {
    async fn tick(&self, count: Arc<Count>, _: &mut NodeContext) -> counter::Outcome<Count> {
        tokio::time::sleep(Duration::from_millis(count.delay_ms)).await;
        let step = count.count + 1;
        Ok(NodeResult::Update(
            CountUpdate::default().count(1).log(step),
        ))
    }

    fn route_tick(&self, count: &Count) -> counter::TickRoute {
        if count.count < count.target {
            counter::TickRoute::Tick
        } else {
            counter::TickRoute::End
        }
    }
}

const USAGE: &str = "usage: durable_counter run --steps N [--db URL] [--step-delay-ms D]
       durable_counter resume [--run ID] [--db URL]
       durable_counter show [--run ID] [--db URL]";

enum Command {
    Run { steps: u64, delay_ms: u64 },
    Resume { run: Option<RunId> },
    Show { run: Option<RunId> },
}

fn parse(args: Vec<String>) -> Result<(Command, PathBuf), String> {
    let mut args = args.into_iter();
    let verb = args.next().ok_or(USAGE)?;
    let (mut db, mut steps, mut delay, mut run) = ("sqlite:trellis.db".to_owned(), None, 0, None);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag} needs a number, not `{value}`"))
        };
        match flag.as_str() {
            "--db" => db = value.clone(),
            "--steps" if verb == "run" => steps = Some(number()?),
            "--step-delay-ms" if verb == "run" => delay = number()?,
            "--run" if verb != "run" => run = Some(RunId::from(value.as_str())),
            _ => return Err(USAGE.to_owned()),
        }
    }
    let path = match db.split_once(':') {
        Some(("sqlite", path)) => PathBuf::from(path),
        _ => {
            return Err(format!(
                "unsupported database URL `{db}`: this build reads `sqlite:PATH`"
            ));
        }
    };
    let command = match verb.as_str() {
        "run" => Command::Run {
            steps: steps.ok_or(USAGE)?,
            delay_ms: delay,
        },
        "resume" => Command::Resume { run },
        "show" => Command::Show { run },
        _ => return Err(USAGE.to_owned()),
    };
    Ok((command, path))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (command, db) = match parse(std::env::args().skip(1).collect()) {
        Ok(parsed) => parsed,
        Err(usage) => {
            eprintln!("{usage}");
            return ExitCode::from(2);
        }
    };
    match run(command, &db).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command, db: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let store = Arc::new(SqliteCheckpointer::open(db)?);
    let graph = counter::build(Ticker).with_checkpointer(store.clone());
    match command {
        Command::Run { steps, delay_ms } => {
            let mut run = graph.start(Count {
                target: steps,
                delay_ms,
                ..Count::default()
            });
            run.begin().await?;
            // The id goes out only once the run is recorded: whoever reads it can resume it.
            println!("run {}", run.run_id());
            std::io::stdout().flush()?;
            let outcome = run.run_to_end().await?;
            println!(
                "completed run {}: count {}",
                outcome.run_id(),
                outcome.state().count
            );
        }
        Command::Resume { run } => {
            let record = match run {
                Some(id) => store.load_run(&id).await?.ok_or(format!("no run {id}"))?,
                None => newest_unfinished(store.as_ref())
                    .await?
                    .ok_or("no unfinished run")?,
            };
            let outcome = match record.status {
                RunStatus::Completed => {
                    return Err(format!("run {} is already complete", record.run_id).into());
                }
                RunStatus::Failed => {
                    let why = record.error.unwrap_or_default();
                    return Err(format!("run {} failed: {why}", record.run_id).into());
                }
                RunStatus::Paused => {
                    println!("resuming paused run {}", record.run_id);
                    graph.resume(&record.run_id, ()).await?
                }
                RunStatus::Running => {
                    println!(
                        "continuing run {} from step {}",
                        record.run_id, record.steps
                    );
                    graph.continue_run(&record.run_id).await?
                }
            };
            println!(
                "completed run {}: count {}",
                outcome.run_id(),
                outcome.state().count
            );
        }
        Command::Show { run } => {
            let record = match run {
                Some(id) => store.load_run(&id).await?.ok_or(format!("no run {id}"))?,
                None => store.list_runs(1, 0).await?.pop().ok_or("no run")?,
            };
            let shown = serde_json::json!({
                "run_id": record.run_id,
                "status": record.status,
                "steps": record.steps,
                "state": record.state,
            });
            println!("{shown}");
        }
    }
    Ok(())
}

/// The newest run that is paused or was running.
async fn newest_unfinished(
    store: &SqliteCheckpointer,
) -> Result<Option<trellis::RunRecord>, trellis::CheckpointError> {
    let mut offset = 0;
    loop {
        let page = store.list_runs(100, offset).await?;
        if page.is_empty() {
            return Ok(None);
        }
        if let Some(run) = page
            .iter()
            .find(|r| matches!(r.status, RunStatus::Running | RunStatus::Paused))
        {
            return Ok(Some(run.clone()));
        }
        offset += page.len();
    }
}
