//! A turn paused for approval outlives its process: the run in SQLite, the history in SQLite,
//! and a new process (new catalogue, new model, new stores opened on the file) finishes it.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{catalogue, recording};
use trellis::checkpoint::{Checkpointer, RunStatus, SqliteCheckpointer};
use trellis_agent::testing::RecordingTool;
use trellis_agent::transcript::SqliteTranscripts;
use trellis_agent::{
    AgentGraph, Message, ModelResponse, ScriptedModel, ToolCall, ToolEffect, TurnAnswer,
};

/// What one process builds: the agent on the file at `path`.
fn open(
    path: &Path,
    model: ScriptedModel,
    send: RecordingTool,
) -> (AgentGraph, Arc<SqliteCheckpointer>) {
    let runs = Arc::new(SqliteCheckpointer::open(path).expect("the runs' file opens"));
    let transcripts =
        Arc::new(SqliteTranscripts::open(path).expect("the transcripts' table opens"));
    let agent = catalogue("canonical_turn", [send], false)
        .build("tester", model, transcripts)
        .expect("builds")
        .with_checkpointer(Arc::clone(&runs));
    (agent, runs)
}

fn script() -> ScriptedModel {
    ScriptedModel::new()
        .call(ToolCall::new(
            "call_7",
            "send",
            r#"{"to": "ops", "body": "disk full"}"#,
        ))
        .step(|request| {
            let sent = request.result_of("call_7").unwrap_or("nothing");
            Ok(ModelResponse::text(format!("Ops was told ({sent}).")))
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_paused_for_approval_survives_a_restart_and_completes() {
    let dir = std::env::temp_dir().join(format!("trellis-agent-durable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("agent.db");
    let _ = std::fs::remove_file(&path);

    let run_id = {
        let send = recording("send", ToolEffect::SideEffects, "ticket 881 opened");
        let (agent, _) = open(&path, script(), send.clone());
        let paused = agent
            .start("The disk is full; tell ops.")
            .await
            .expect("runs");
        assert!(paused.is_paused());
        assert!(send.calls().is_empty());
        paused.run_id
        // Everything this "process" built is dropped here: only the file remains.
    };

    let send = recording("send", ToolEffect::SideEffects, "ticket 881 opened");
    let model = script();
    let (agent, runs) = open(&path, model.clone(), send.clone());
    let done = agent
        .resume(&run_id, TurnAnswer::Approve)
        .await
        .expect("resumes");
    assert_eq!(
        done.answer.as_deref(),
        Some("Ops was told (ticket 881 opened).")
    );
    assert_eq!(
        send.calls(),
        [serde_json::json!({"to": "ops", "body": "disk full"})]
    );

    // The model in the new process was sent the whole history, read back from the file.
    let sent = &model.seen()[0].messages;
    let said: Vec<_> = sent[..2].iter().map(|m| &m.body).collect();
    assert_eq!(
        said,
        [
            &Message::system("You test things.").body,
            &Message::user("The disk is full; tell ops.").body
        ]
    );
    assert_eq!(sent[2].tool_calls()[0].id, "call_7");
    assert_eq!(
        sent.len(),
        4,
        "prompt, input, the call, its result: {sent:#?}"
    );

    let transcript = agent.transcript(&run_id).await.expect("the transcript");
    assert_eq!(transcript.len(), 5);
    let record = runs
        .load_run(&run_id)
        .await
        .expect("store")
        .expect("the run");
    assert_eq!(record.status, RunStatus::Completed);
    assert_eq!(
        record.graph, "tester",
        "runs are recorded under the agent's name"
    );
    assert_eq!(record.state["answer"], "Ops was told (ticket 881 opened).");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Pruning a thread's older turns takes their transcripts with them (the same SQLite file as
/// the runs), and the thread's newest turn keeps the whole conversation: the next turn reads
/// it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pruned_turns_take_their_transcripts_and_the_thread_goes_on() {
    use trellis::retention::{Per, Pruner, Retention};
    use trellis_agent::transcript::TranscriptStore;

    let dir = std::env::temp_dir().join(format!("trellis-agent-prune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("agent.db");
    let _ = std::fs::remove_file(&path);
    let runs = Arc::new(SqliteCheckpointer::open(&path).expect("the runs' file opens"));
    let transcripts =
        Arc::new(SqliteTranscripts::open(&path).expect("the transcripts' table opens"));
    let model = ScriptedModel::new()
        .answer("Hello, Ada.")
        .answer("Noted.")
        .step(|request| {
            let told = request
                .messages
                .iter()
                .any(|m| m.text() == Some("I am Ada."));
            Ok(ModelResponse::text(if told {
                "You are Ada."
            } else {
                "Who?"
            }))
        });
    let agent = catalogue("single_shot", [], false)
        .build(
            "tester",
            model,
            Arc::clone(&transcripts) as Arc<dyn TranscriptStore>,
        )
        .expect("builds")
        .with_checkpointer(Arc::clone(&runs));
    let thread = agent
        .graph()
        .create_thread(Default::default())
        .await
        .expect("a thread");
    let first = thread
        .invoke(agent.next_turn("I am Ada."))
        .await
        .expect("runs");
    let second = thread
        .invoke(agent.next_turn("I like tea."))
        .await
        .expect("runs");
    let before = agent
        .transcript(second.run_id())
        .await
        .expect("its history");

    let gone = Pruner::new(runs.clone())
        .with(transcripts.clone())
        .prune(
            &Retention::keep_last(1).per(Per::Thread),
            trellis::run::Timestamp::now(),
        )
        .await
        .expect("prunes");
    assert_eq!(gone.len(), 1);
    assert_eq!(&gone[0].run_id, first.run_id());
    assert!(runs.load_run(first.run_id()).await.unwrap().is_none());
    assert!(
        transcripts.load(first.run_id()).await.unwrap().is_empty(),
        "the pruned turn's transcript went with it"
    );
    assert_eq!(
        agent.transcript(second.run_id()).await.expect("kept"),
        before
    );
    let third = thread
        .invoke(agent.next_turn("Who am I?"))
        .await
        .expect("runs");
    assert_eq!(third.state().answer.as_deref(), Some("You are Ada."));
}
