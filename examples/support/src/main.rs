#![doc = include_str!("../README.md")]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use trellis::checkpoint::{RunQueue, SqliteCheckpointer, StoreUrl};
use trellis::{GraphState, RunId, interrupt::Decision};

trellis::include_generated!("support");

pub mod conversation;
pub mod posts;

/// One support ticket as it moves through the graph. Every field has a default, so a run can
/// be started with the text alone (`{"text": "…"}`, as the server's clients do).
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState, schemars::JsonSchema)]
#[graph_state(schema)]
#[serde(default)]
pub struct Ticket {
    /// What the customer wrote.
    pub text: String,
    /// `billing` or `general`, set by `classify`.
    pub category: Option<String>,
    /// The invoice found by `lookup_invoice`.
    pub invoice: Option<String>,
    /// The reply being written.
    pub draft: Option<String>,
    /// Why the last draft was sent back, by the reviewer or a person.
    pub feedback: Option<String>,
    /// Drafts written so far.
    #[reducer(sum)]
    pub drafts: u32,
    /// The person's answer at `send`: a plain approve or reject needs no `ApplyResume` of its
    /// own, `#[answer]` stores it here.
    #[answer]
    pub decision: Option<Decision>,
    /// Replies sent.
    #[reducer(append)]
    pub sent: Vec<String>,
}

impl Ticket {
    /// Whether a person approved the current draft.
    fn approved(&self) -> bool {
        self.decision.as_ref().is_some_and(Decision::is_approved)
    }
}

/// The support desk: what each node of the graph does.
#[derive(Default)]
struct Desk {
    /// How long each node takes, to watch runs go by in the studio (`serve --pace MS`).
    pace: std::time::Duration,
}

impl Desk {
    async fn pace(&self) {
        if !self.pace.is_zero() {
            tokio::time::sleep(self.pace).await;
        }
    }
}

impl support::Handlers for Desk {
    async fn classify(
        &self,
        ticket: Arc<Ticket>,
        _: &mut trellis::NodeContext,
    ) -> support::NodeOutput {
        self.pace().await;
        let billing = ["invoice", "charge", "refund"]
            .iter()
            .any(|w| ticket.text.contains(w));
        let category = if billing { "billing" } else { "general" };
        Ok(TicketUpdate::default()
            .category(Some(category.to_owned()))
            .into())
    }

    async fn lookup_invoice(
        &self,
        _: Arc<Ticket>,
        _: &mut trellis::NodeContext,
    ) -> support::NodeOutput {
        self.pace().await;
        let invoice = "INV-2291 (€120, charged twice on 3 March)".to_owned();
        Ok(TicketUpdate::default().invoice(Some(invoice)).into())
    }

    async fn draft(
        &self,
        ticket: Arc<Ticket>,
        _: &mut trellis::NodeContext,
    ) -> support::NodeOutput {
        self.pace().await;
        let mut text = format!(
            "Hello, thank you for writing to us about \"{}\".",
            ticket.text
        );
        if let Some(invoice) = &ticket.invoice {
            text.push_str(&format!(
                " We found {invoice} and refunded the duplicate charge."
            ));
        }
        if let Some(Decision::Reject { reason }) = &ticket.decision {
            text.push_str(&format!(" ({reason})"));
        } else if let Some(feedback) = &ticket.feedback {
            text.push_str(&format!(" ({feedback})"));
        }
        Ok(TicketUpdate::default()
            .draft(Some(text))
            .drafts(1)
            .decision(None)
            .into())
    }

    async fn review(
        &self,
        ticket: Arc<Ticket>,
        _: &mut trellis::NodeContext,
    ) -> support::NodeOutput {
        self.pace().await;
        // The automatic reviewer only checks the reply greets the customer.
        let greets = ticket
            .draft
            .as_deref()
            .is_some_and(|d| d.starts_with("Hello"));
        let feedback = (!greets).then(|| "greet the customer".to_owned());
        Ok(TicketUpdate::default().feedback(feedback).into())
    }

    async fn send(&self, ticket: Arc<Ticket>, _: &mut trellis::NodeContext) -> support::NodeOutput {
        self.pace().await;
        let update = match (ticket.approved(), &ticket.draft) {
            (true, Some(draft)) => TicketUpdate::default().sent(draft.clone()),
            _ => TicketUpdate::default(),
        };
        Ok(update.into())
    }

    fn route_classify(&self, ticket: &Ticket, _: &trellis::Visits<'_>) -> support::ClassifyRoute {
        match ticket.category.as_deref() {
            Some("billing") => support::ClassifyRoute::LookupInvoice,
            _ => support::ClassifyRoute::Draft,
        }
    }

    fn route_review(&self, ticket: &Ticket, _: &trellis::Visits<'_>) -> support::ReviewRoute {
        if ticket.feedback.is_some() && ticket.decision.is_none() && ticket.drafts < 2 {
            support::ReviewRoute::Draft
        } else {
            support::ReviewRoute::Send
        }
    }

    fn route_send(&self, ticket: &Ticket, _: &trellis::Visits<'_>) -> support::SendRoute {
        if ticket.approved() {
            support::SendRoute::End
        } else {
            support::SendRoute::Draft
        }
    }
}

/// Where runs are kept without `--db`.
const DEFAULT_DB: &str = "trellis.db";

const USAGE: &str = "usage: support [start] [--text TEXT] [--db FILE]
       support resume RUN_ID (--approve | --reject REASON) [--db FILE]
       support demo [--text TEXT] [--approve | --reject REASON] [--db FILE]
       support serve [--port PORT] [--host ADDR] [--token TOKEN] [--pace MS] [--db FILE|URL]
                     [--allow-host NAME[:PORT]]... [--allow-origin URL]...";

/// What the command line asks for.
enum Command {
    /// Run a ticket to its pause and answer it in this process (then approve any redraft).
    Demo { text: String, first: Decision },
    /// Start a run on a new ticket; it pauses before `send`, and the process exits.
    Start { text: String },
    /// Answer a paused run, in this or any later process.
    Resume { run_id: RunId, decision: Decision },
    /// Serve the graph over HTTP, with the studio, until Ctrl-C.
    Serve(trellis_server::ServeOptions, std::time::Duration),
}

fn parse(args: Vec<String>) -> Result<(Command, PathBuf), String> {
    if args.first().map(String::as_str) == Some("serve") {
        return parse_serve(args.into_iter().skip(1));
    }
    let mut db = PathBuf::from(DEFAULT_DB);
    let mut text = "I was charged twice for my invoice".to_owned();
    let mut decision = None;
    let mut args = args.into_iter().peekable();
    // `None`: the one-process demo; `Some(None)`: start (the default); `Some(Some(id))`: resume.
    let mode = match args.peek().map(String::as_str) {
        Some("resume") => {
            args.next();
            Some(Some(RunId::from(args.next().ok_or(USAGE)?)))
        }
        Some("demo") => {
            args.next();
            None
        }
        Some("start") => {
            args.next();
            Some(None)
        }
        _ => Some(None),
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--db" => db = PathBuf::from(args.next().ok_or(USAGE)?),
            "--text" if !matches!(mode, Some(Some(_))) => text = args.next().ok_or(USAGE)?,
            "--approve" if mode != Some(None) => decision = Some(Decision::Approve),
            "--reject" if mode != Some(None) => {
                decision = Some(Decision::reject(args.next().ok_or(USAGE)?));
            }
            _ => return Err(USAGE.to_owned()),
        }
    }
    let command = match (mode, decision) {
        (None, first) => Command::Demo {
            text,
            first: first.unwrap_or(Decision::Approve),
        },
        (Some(None), _) => Command::Start { text },
        (Some(Some(run_id)), Some(decision)) => Command::Resume { run_id, decision },
        (Some(Some(_)), None) => {
            return Err(format!("say --approve or --reject REASON\n{USAGE}"));
        }
    };
    Ok((command, db))
}

/// Serves the support graph, the support chat and the publishing graph over HTTP, their runs in `store` and executed
/// by the server's workers, until Ctrl-C.
async fn serve(
    store: Arc<dyn RunQueue>,
    options: trellis_server::ServeOptions,
    pace: std::time::Duration,
    db: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let server = trellis_server::Server::builder(store)
        .graph(support::build(Desk { pace }))
        .graph(conversation::build(pace))
        .graph(posts::build(pace))
        .build()?;
    let running = server.serve(options).await?;
    println!("listening on http://{}", running.local_addr());
    println!("runs in {}; Ctrl-C stops", shown(db));
    running.wait().await;
    Ok(())
}

/// `serve`'s options: 127.0.0.1:8080 unless told otherwise.
fn parse_serve(mut args: impl Iterator<Item = String>) -> Result<(Command, PathBuf), String> {
    let mut db = PathBuf::from(DEFAULT_DB);
    let mut options = trellis_server::ServeOptions::default();
    let mut pace = std::time::Duration::ZERO;
    let bad = |what: &str| format!("{what}\n{USAGE}");
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| bad(&format!("{arg} needs a value")))
        };
        match arg.as_str() {
            "--db" => db = PathBuf::from(value()?),
            "--port" => {
                let port = value()?.parse().map_err(|_| bad("--port takes a number"))?;
                options.addr.set_port(port);
            }
            "--host" => {
                let ip = value()?
                    .parse()
                    .map_err(|_| bad("--host takes an IP address"))?;
                options.addr.set_ip(ip);
            }
            "--token" => options.token = Some(value()?),
            "--allow-host" => options.allowed_hosts.push(value()?),
            "--allow-origin" => options.allowed_origins.push(value()?),
            "--pace" => {
                let ms = value()?
                    .parse()
                    .map_err(|_| bad("--pace takes milliseconds"))?;
                pace = std::time::Duration::from_millis(ms);
            }
            _ => return Err(USAGE.to_owned()),
        }
    }
    Ok((Command::Serve(options, pace), db))
}

/// Says where the run stands; a paused run is shown with its draft and how to answer it.
fn report(outcome: &trellis::Outcome<Ticket>, db: &std::path::Path) {
    let run_id = outcome.run_id();
    let ticket = outcome.state();
    if outcome.is_paused() {
        println!("run {run_id} paused before `send`; draft awaiting approval:");
        println!("  {}", ticket.draft.as_deref().unwrap_or("(none)"));
        // The question is the graph's own: `interrupt before "…"` in support.graph.
        for interrupt in outcome.interrupts() {
            println!("{}", interrupt.request.question);
        }
        println!("answer it, now or later, from any process:");
        // The file, unless it is the default: the commands shown are the ones to type.
        let db = if db == std::path::Path::new(DEFAULT_DB) {
            String::new()
        } else {
            format!(" --db {}", shown(db))
        };
        println!("  cargo run -p support -- resume {run_id} --approve{db}");
        println!("  cargo run -p support -- resume {run_id} --reject \"reason\"{db}");
    } else {
        println!("run {run_id} completed after {} draft(s)", ticket.drafts);
        for reply in &ticket.sent {
            println!("sent: {reply}");
        }
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // What the example shows, and how to run it: its README.
    if std::env::args().skip(1).any(|a| a == "--help" || a == "-h") {
        println!("{}\n{USAGE}", include_str!("../README.md"));
        return std::process::ExitCode::SUCCESS;
    }
    let (command, db) = match parse(std::env::args().skip(1).collect()) {
        Ok(parsed) => parsed,
        Err(usage) => {
            eprintln!("{usage}");
            return std::process::ExitCode::from(2);
        }
    };
    match run(command, &db).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Where runs live: one SQLite file (a paused run outlives this process), or — given a
/// `postgres://` URL — a PostgreSQL database that several processes share.
async fn open(
    db: &std::path::Path,
) -> Result<Arc<dyn RunQueue>, trellis::checkpoint::CheckpointError> {
    match db.to_str() {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            url.parse::<StoreUrl>()?.open().await
        }
        _ => Ok(Arc::new(SqliteCheckpointer::open(db)?)),
    }
}

/// `db` as it may be printed: a PostgreSQL URL without its password.
fn shown(db: &std::path::Path) -> String {
    match db.to_str().map(str::parse::<StoreUrl>) {
        Some(Ok(url @ StoreUrl::Postgres(_))) => url.to_string(),
        _ => db.display().to_string(),
    }
}

async fn run(command: Command, db: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let store = open(db).await?;
    let graph = support::build(Desk::default()).with_checkpointer(Arc::clone(&store));
    let outcome = match command {
        Command::Serve(options, pace) => return serve(store, options, pace, db).await,
        Command::Demo { text, first } => {
            let mut outcome = graph
                .invoke(Ticket {
                    text,
                    ..Ticket::default()
                })
                .await?;
            let mut decision = Some(first);
            while outcome.is_paused() {
                let run_id = outcome.run_id().clone();
                println!("run {run_id} paused before `send`; draft awaiting approval:");
                println!("  {}", outcome.state().draft.as_deref().unwrap_or("(none)"));
                let answer = decision.take().unwrap_or(Decision::Approve);
                match &answer {
                    Decision::Approve => println!("approved"),
                    Decision::Reject { reason } => println!("rejected: {reason}"),
                }
                outcome = graph.resume(&run_id, answer).await?;
            }
            outcome
        }
        Command::Start { text } => {
            graph
                .invoke(Ticket {
                    text,
                    ..Ticket::default()
                })
                .await?
        }
        Command::Resume { run_id, decision } => {
            let said = match &decision {
                Decision::Approve => "approved".to_owned(),
                Decision::Reject { reason } => format!("rejected: {reason}"),
            };
            let outcome = graph.resume(&run_id, decision).await?;
            println!("{said}");
            outcome
        }
    };
    report(&outcome, db);
    Ok(())
}
