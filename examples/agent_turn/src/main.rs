#![doc = include_str!("../README.md")]

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use trellis::RunId;
use trellis::checkpoint::SqliteCheckpointer;
use trellis_agent::toolbox::ListFiles;
use trellis_agent::transcript::{InMemoryTranscripts, SqliteTranscripts, TranscriptStore};
use trellis_agent::{
    AgentDefinition, AgentGraph, Body, Catalogue, ModelResponse, Models, OpenAiCompatible,
    ScriptedModel, ToolCall, TurnAnswer, TurnOutcome,
};

const USAGE: &str = "usage: agent_turn [--approve-tools | approve RUN_ID | reject RUN_ID REASON] [--db FILE] [--base-url URL --model NAME]";

/// The value after `flag`, taken out of `args`.
fn option(args: &mut Vec<String>, flag: &str) -> Result<Option<String>, String> {
    match args.iter().position(|a| a == flag) {
        Some(at) if at + 1 < args.len() => Ok(args.drain(at..=at + 1).nth(1)),
        Some(_) => Err(format!("{flag} needs a value")),
        None => Ok(None),
    }
}

const QUESTION: &str = "How many notes do I have, and what is 12 × 7?";

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// What the command line asks for.
enum Command {
    /// Run a turn to its end, in memory.
    Run,
    /// Run a turn to the pause before its tools, in the file.
    Pause,
    /// Answer a paused turn, from the file.
    Answer(RunId, TurnAnswer),
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{}", include_str!("../README.md"));
        return Ok(());
    }
    let db =
        option(&mut args, "--db")?.map_or_else(|| PathBuf::from("agent_turn.db"), PathBuf::from);
    // A real model when a server is named; the scripted one otherwise.
    let models = match (
        option(&mut args, "--base-url")?,
        option(&mut args, "--model")?,
    ) {
        (Some(url), Some(name)) => {
            let mut model = OpenAiCompatible::new(&url, &name)?;
            if let Ok(key) = std::env::var("OPENAI_API_KEY") {
                model = model.api_key(key);
            }
            Models::new(model)
        }
        (None, None) => Models::new(scripted()),
        _ => return Err("--base-url and --model go together".into()),
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let command = match args[..] {
        [] => Command::Run,
        ["--approve-tools"] => Command::Pause,
        ["approve", id] => Command::Answer(RunId::from(id), TurnAnswer::Approve),
        ["reject", id, reason] => Command::Answer(RunId::from(id), TurnAnswer::reject(reason)),
        _ => return Err(USAGE.into()),
    };

    let outcome = match command {
        Command::Run => {
            let desk = desk(false, models, Arc::new(InMemoryTranscripts::new()))?;
            let outcome = desk.start(QUESTION).await?;
            print_transcript(&desk, &outcome).await?;
            outcome
        }
        Command::Pause => {
            let desk = durable_desk(&db, models)?;
            let outcome = desk.start(QUESTION).await?;
            print_transcript(&desk, &outcome).await?;
            outcome
        }
        Command::Answer(run_id, answer) => {
            let desk = durable_desk(&db, models)?;
            let outcome = desk.resume(&run_id, answer).await?;
            print_transcript(&desk, &outcome).await?;
            outcome
        }
    };
    if outcome.is_paused() {
        let question = &outcome.interrupts[0].request.question;
        println!();
        println!("run {} is waiting: {question}", outcome.run_id);
        println!(
            "answer it with: cargo run -p agent_turn -- approve {}",
            outcome.run_id
        );
    }
    Ok(())
}

/// The desk agent on `models`, its list_files over this example's notes.
fn desk(
    approve_tools: bool,
    models: Models,
    transcripts: Arc<dyn TranscriptStore>,
) -> Result<AgentGraph, Box<dyn std::error::Error>> {
    let mut catalogue = Catalogue::shipped()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    catalogue.add_tool(ListFiles::new(root))?;
    let mut definition =
        AgentDefinition::parse("agents/desk.md", include_str!("../agents/desk.md"))?;
    definition.approve_tools = approve_tools;
    catalogue.add_agent(definition)?;
    Ok(catalogue.build("desk", models, transcripts)?)
}

/// The desk with approval before tools, its runs and history in the SQLite file `db`.
fn durable_desk(db: &Path, models: Models) -> Result<AgentGraph, Box<dyn std::error::Error>> {
    let runs = Arc::new(SqliteCheckpointer::open(db)?);
    let transcripts = Arc::new(SqliteTranscripts::open(db)?);
    Ok(desk(true, models, transcripts)?.with_checkpointer(runs))
}

/// The scripted model: two tool calls in one answer, then an answer made of their results.
fn scripted() -> ScriptedModel {
    ScriptedModel::new()
        .calls([
            ToolCall::new("call_1", "list_files", r#"{"path": "notes"}"#),
            ToolCall::new("call_2", "calculator", r#"{"expression": "12 * 7"}"#),
        ])
        .step(|request| {
            let files = request.result_of("call_1").unwrap_or_default();
            let product = request.result_of("call_2").unwrap_or_default();
            if files.starts_with("rejected") || product.starts_with("rejected") {
                return Ok(ModelResponse::text(format!("I did not look: {files}")));
            }
            let notes: Vec<&str> = files.lines().map(|f| f.trim_end_matches(".md")).collect();
            Ok(ModelResponse::text(format!(
                "You have {} notes ({}), and 12 × 7 = {product}.",
                notes.len(),
                notes.join(", ")
            )))
        })
}

/// Prints the run's history: who said what, which tool ran with which arguments, and what it
/// returned.
async fn print_transcript(
    desk: &AgentGraph,
    outcome: &TurnOutcome,
) -> Result<(), Box<dyn std::error::Error>> {
    for message in desk.transcript(&outcome.run_id).await? {
        match message.body {
            Body::User { content } => println!("user: {content}"),
            Body::Assistant {
                content,
                tool_calls,
            } => {
                if let Some(content) = content {
                    println!("assistant: {content}");
                }
                for call in tool_calls {
                    println!(
                        "assistant calls {} {} [{}]",
                        call.name, call.arguments, call.id
                    );
                }
            }
            Body::Tool {
                call_id,
                name,
                content,
                is_error,
            } => {
                let shown = content.lines().collect::<Vec<_>>().join(", ");
                let marker = if is_error { " (error)" } else { "" };
                println!("tool {name} [{call_id}]{marker}: {shown}");
            }
            // The prompt, and what is no message, are not shown.
            _ => {}
        }
    }
    if let Some(stopped) = &outcome.stopped {
        println!("stopped: {stopped}");
    }
    Ok(())
}
