#![doc = include_str!("../README.md")]

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use trellis::checkpoint::StoreUrl;
use trellis::{
    GraphState, NodeContext, Outcome, RunId,
    checkpoint::Checkpointer,
    checkpoint::RunStatus,
    interrupt::{ApplyResume, Interrupt},
    worker::Worker,
};

trellis::graph! {
    /// Counts to `target`, one super-step at a time.
    graph Counter {
        state Count;
        max_steps 1000000;

        /// Adds one and logs the step's number (a million at most).
        node tick { max_visits 1000000; }

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

impl counter::Handlers for Ticker {
    async fn tick(&self, count: Arc<Count>, _: &mut NodeContext) -> counter::NodeOutput {
        tokio::time::sleep(Duration::from_millis(count.delay_ms)).await;
        let step = count.count + 1;
        Ok(CountUpdate::default().count(1).log(step).into())
    }

    fn route_tick(&self, count: &Count, _: &trellis::Visits<'_>) -> counter::TickRoute {
        if count.count < count.target {
            counter::TickRoute::Tick
        } else {
            counter::TickRoute::End
        }
    }
}

const USAGE: &str = "usage: durable_counter run --steps N [--db URL] [--step-delay-ms D]
       durable_counter resume [--run ID] [--db URL]
       durable_counter show [--run ID] [--db URL]
       durable_counter enqueue --steps N [--db URL] [--step-delay-ms D]
       durable_counter worker [--db URL] [--lease-ms L] [--runs K]";

enum Command {
    Run { steps: u64, delay_ms: u64 },
    Resume { run: Option<RunId> },
    Show { run: Option<RunId> },
    Enqueue { steps: u64, delay_ms: u64 },
    Worker { lease_ms: u64, runs: Option<u64> },
}

/// With no arguments: what the example does, shown on a small count.
const DEFAULT: &[&str] = &["run", "--steps", "5"];

fn parse(args: Vec<String>) -> Result<(Command, StoreUrl), String> {
    let args = if args.is_empty() {
        eprintln!(
            "durable_counter: counting to 5 in sqlite:trellis.db, one checkpointed step at a time \
             (kill it mid-run and `resume`; `durable_counter help` lists every command)"
        );
        DEFAULT.iter().map(|arg| (*arg).to_owned()).collect()
    } else {
        args
    };
    let mut args = args.into_iter();
    let verb = args.next().ok_or(USAGE)?;
    let counts = verb == "run" || verb == "enqueue";
    let picks = verb == "resume" || verb == "show";
    let mut db = "sqlite:trellis.db".to_owned();
    let (mut steps, mut delay, mut run, mut lease, mut runs) = (None, 0, None, 30_000, None);
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
            "--steps" if counts => steps = Some(number()?),
            "--step-delay-ms" if counts => delay = number()?,
            "--run" if picks => run = Some(RunId::from(value.as_str())),
            "--lease-ms" if verb == "worker" => lease = number()?,
            "--runs" if verb == "worker" => runs = Some(number()?),
            _ => return Err(USAGE.to_owned()),
        }
    }
    let url = db.parse::<StoreUrl>().map_err(|e| e.to_string())?;
    let command = match verb.as_str() {
        "run" => Command::Run {
            steps: steps.ok_or(USAGE)?,
            delay_ms: delay,
        },
        "enqueue" => Command::Enqueue {
            steps: steps.ok_or(USAGE)?,
            delay_ms: delay,
        },
        "resume" => Command::Resume { run },
        "show" => Command::Show { run },
        "worker" => Command::Worker {
            lease_ms: lease,
            runs,
        },
        _ => return Err(USAGE.to_owned()),
    };
    Ok((command, url))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // What the example shows, and how to run it: its README.
    if matches!(
        args.first().map(String::as_str),
        Some("help" | "--help" | "-h")
    ) {
        println!("{USAGE}\n\n{}", include_str!("../README.md"));
        return ExitCode::SUCCESS;
    }
    let (command, db) = match parse(args) {
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

/// Prints `run <id>` at once: whoever reads it can resume the run, which is recorded.
fn announce(run_id: &RunId) -> std::io::Result<()> {
    println!("run {run_id}");
    std::io::stdout().flush()
}

fn completed(outcome: &Outcome<Count>) {
    println!(
        "completed run {}: count {}",
        outcome.run_id(),
        outcome.state().count
    );
}

async fn run(command: Command, db: &StoreUrl) -> Result<(), Box<dyn std::error::Error>> {
    let store = db.open().await?;
    let graph = counter::build(Ticker).with_checkpointer(Arc::clone(&store));
    let counting = |steps, delay_ms| Count {
        target: steps,
        delay_ms,
        ..Count::default()
    };
    match command {
        Command::Run { steps, delay_ms } => {
            let mut run = graph.start(counting(steps, delay_ms));
            run.begin().await?;
            announce(run.run_id())?;
            completed(&run.run_to_end().await?);
        }
        Command::Enqueue { steps, delay_ms } => {
            announce(&graph.enqueue(counting(steps, delay_ms)).await?)?;
        }
        Command::Worker { lease_ms, runs } => {
            let worker = Worker::new(graph, store)
                .with_lease(Duration::from_millis(lease_ms))
                .with_poll_interval(Duration::from_millis(50));
            println!("worker {}", worker.id());
            std::io::stdout().flush()?;
            work(worker, runs).await?;
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
                RunStatus::Failed | RunStatus::Cancelled => {
                    let why = record.error.unwrap_or_default();
                    let ended = record.status;
                    return Err(format!("run {} {ended}: {why}", record.run_id).into());
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
            completed(&outcome);
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
                "owner": record.owner,
                "state": record.state,
            });
            println!("{shown}");
        }
    }
    Ok(())
}

/// Executes ready runs, printing each: `runs` of them, or until Ctrl-C (which hands a run in
/// progress back to the queue after its current step).
async fn work(worker: Worker<Count>, runs: Option<u64>) -> Result<(), Box<dyn std::error::Error>> {
    let stop = worker.stopper();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    let mut handled = 0;
    while runs.is_none_or(|limit| handled < limit) && !worker.stopper().is_cancelled() {
        match worker.run_once().await {
            Ok(Some(run)) => {
                handled += 1;
                match run.result {
                    Ok(outcome) => completed(&outcome),
                    Err(error) => println!("run {}: {error}", run.run_id),
                }
                std::io::stdout().flush()?;
            }
            Ok(None) => tokio::time::sleep(Duration::from_millis(50)).await,
            // The database may be restarting: keep trying, as a worker should.
            Err(error) => {
                eprintln!("cannot claim a run: {error}");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    }
    Ok(())
}

/// The newest run that is paused or was running.
async fn newest_unfinished(
    store: &dyn Checkpointer,
) -> Result<Option<trellis::checkpoint::RunRecord>, trellis::checkpoint::CheckpointError> {
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
