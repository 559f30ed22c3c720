//! An open agent: the application's own fields beside the turn's, changed by state tools under
//! the same rules as any tool, kept across the turns of a thread and through checkpoints.

mod common;

use std::sync::Arc;

use serde_json::{Value, json};
use trellis::GraphState;
use trellis::checkpoint::{InMemoryCheckpointer, SqliteCheckpointer};
use trellis_agent::transcript::{InMemoryTranscripts, SqliteTranscripts, TranscriptStore};
use trellis_agent::{
    AgentDefinition, AgentGraph, Catalogue, ModelResponse, NoFields, ScriptedModel, StateTool,
    ToolCall, ToolEffect, ToolError, ToolOutput, ToolSpec, TurnAnswer, TurnState,
};

/// What the application keeps about the person it talks to.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize, GraphState)]
struct Profile {
    name: Option<String>,
    birthday: Option<String>,
    /// How often `visit` was called.
    visits: u32,
}

/// Records a name and a birthday: a typed update of the profile beside its text result.
struct Remember(ToolEffect);

#[trellis_agent::async_trait]
impl StateTool<Profile> for Remember {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "remember",
            "Records a person's name and birthday.",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}, "birthday": {"type": "string"}},
                "required": ["name", "birthday"],
                "additionalProperties": false
            }),
        )
        .with_effect(self.0)
    }

    async fn call(
        &self,
        arguments: Value,
        _: &Profile,
    ) -> Result<ToolOutput<ProfileUpdate>, ToolError> {
        let text = |key: &str| arguments[key].as_str().map(str::to_owned);
        Ok(ToolOutput::text("recorded").with_update(
            ProfileUpdate::default()
                .name(text("name"))
                .birthday(text("birthday")),
        ))
    }
}

/// A tool that takes no arguments.
fn without_arguments(name: &str, description: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        description,
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
}

/// Says what the profile holds: it reads the fields and changes nothing.
struct Recall;

#[trellis_agent::async_trait]
impl StateTool<Profile> for Recall {
    fn spec(&self) -> ToolSpec {
        without_arguments("recall", "Says what is known of the person.")
    }

    async fn call(
        &self,
        _: Value,
        profile: &Profile,
    ) -> Result<ToolOutput<ProfileUpdate>, ToolError> {
        Ok(ToolOutput::text(format!(
            "{} was born on {}",
            profile.name.as_deref().unwrap_or("nobody"),
            profile.birthday.as_deref().unwrap_or("no known day")
        )))
    }
}

/// Counts its calls in the profile, from the count it reads.
struct Visit;

#[trellis_agent::async_trait]
impl StateTool<Profile> for Visit {
    fn spec(&self) -> ToolSpec {
        without_arguments("visit", "Counts a visit.")
    }

    async fn call(
        &self,
        _: Value,
        profile: &Profile,
    ) -> Result<ToolOutput<ProfileUpdate>, ToolError> {
        let visits = profile.visits + 1;
        Ok(ToolOutput::text(format!("visit {visits}"))
            .with_update(ProfileUpdate::default().visits(visits)))
    }
}

fn call(id: &str, tool: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, tool, arguments)
}

/// The agent `keeper` on `canonical_turn`, with no tools of its own, the state tools given.
fn keeper(
    model: ScriptedModel,
    transcripts: Arc<dyn TranscriptStore>,
    tools: Vec<Arc<dyn StateTool<Profile>>>,
) -> AgentGraph<Profile> {
    let mut catalogue = Catalogue::new();
    catalogue
        .add_agent(AgentDefinition {
            name: "keeper".into(),
            description: "keeps a profile".into(),
            blueprint: "canonical_turn".into(),
            tools: Vec::new(),
            approve_tools: false,
            prompt: "You keep a profile.".into(),
        })
        .expect("checks");
    catalogue
        .build_with_fields("keeper", model, transcripts, tools)
        .expect("builds")
}

#[tokio::test]
async fn a_state_tool_changes_the_fields_and_the_next_turn_on_the_thread_reads_them() {
    let model = ScriptedModel::new()
        .call(call(
            "c1",
            "remember",
            r#"{"name": "Ada", "birthday": "10 December"}"#,
        ))
        .answer("Noted.")
        .call(call("c2", "recall", "{}"))
        .step(|request| {
            Ok(ModelResponse::text(format!(
                "I know: {}.",
                request.result_of("c2").unwrap_or("?")
            )))
        });
    let agent = keeper(
        model,
        Arc::new(InMemoryTranscripts::new()),
        vec![Arc::new(Remember(ToolEffect::ReadOnly)), Arc::new(Recall)],
    )
    .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let thread = agent
        .graph()
        .create_thread(Default::default())
        .await
        .expect("a thread");
    let first = thread
        .invoke(agent.next_turn("I am Ada, born on 10 December."))
        .await
        .expect("runs");
    assert_eq!(
        first.state().fields,
        Profile {
            name: Some("Ada".into()),
            birthday: Some("10 December".into()),
            visits: 0
        }
    );
    let second = thread
        .invoke(agent.next_turn("When is my birthday?"))
        .await
        .expect("runs");
    assert_eq!(
        second.state().answer.as_deref(),
        Some("I know: Ada was born on 10 December."),
        "the second turn's tool read what the first one's wrote"
    );
    assert_eq!(
        second.state().fields.name.as_deref(),
        Some("Ada"),
        "a new turn leaves the fields as they are"
    );
}

#[tokio::test]
async fn each_call_of_one_answer_reads_the_fields_as_the_calls_before_it_left_them() {
    let model = ScriptedModel::new()
        .calls([
            call("v1", "visit", "{}"),
            call("v2", "visit", "{}"),
            // Refused (not the schema's arguments): its tool never runs, nothing changes.
            call("v3", "visit", r#"{"twice": true}"#),
        ])
        .answer("Counted.");
    let transcripts = Arc::new(InMemoryTranscripts::new());
    let agent = keeper(model, transcripts, vec![Arc::new(Visit)]);
    let start = TurnState::with_fields(
        "keeper",
        "Count my visits.",
        Profile {
            visits: 40,
            ..Profile::default()
        },
    );
    let outcome = agent.start_from(start).await.expect("runs");
    assert_eq!(outcome.fields.visits, 42);
    let said = common::results(&agent.transcript(&outcome.run_id).await.expect("kept"));
    assert_eq!(said[0], ("v1".into(), "visit 41".into(), false));
    assert_eq!(said[1], ("v2".into(), "visit 42".into(), false));
    assert!(
        said[2].2 && said[2].1.starts_with("refused, not run"),
        "{:?}",
        said[2]
    );
}

#[tokio::test]
async fn a_state_tool_with_side_effects_changes_nothing_until_a_person_approves() {
    let model = ScriptedModel::new()
        .call(call(
            "c1",
            "remember",
            r#"{"name": "Ada", "birthday": "10 December"}"#,
        ))
        .call(call(
            "c2",
            "remember",
            r#"{"name": "Ada", "birthday": "10 Dec 1815"}"#,
        ))
        .answer("Done.");
    // The blueprint's own `approve` node asks before side effects.
    let agent = keeper(
        model,
        Arc::new(InMemoryTranscripts::new()),
        vec![Arc::new(Remember(ToolEffect::SideEffects))],
    )
    .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let asked = agent.start("Remember me.").await.expect("runs");
    assert!(asked.is_paused());
    assert_eq!(
        asked.fields,
        Profile::default(),
        "nothing ran before the answer"
    );
    let rejected = agent
        .resume(&asked.run_id, TurnAnswer::reject("not now"))
        .await
        .expect("resumes");
    assert!(rejected.is_paused(), "the second call asks again");
    assert_eq!(
        rejected.fields,
        Profile::default(),
        "a rejected call changes nothing"
    );
    let approved = agent
        .resume(&asked.run_id, TurnAnswer::Approve)
        .await
        .expect("resumes");
    assert_eq!(approved.answer.as_deref(), Some("Done."));
    assert_eq!(approved.fields.birthday.as_deref(), Some("10 Dec 1815"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fields_are_checkpointed_and_a_turn_paused_in_one_process_ends_in_another() {
    let dir = std::env::temp_dir().join(format!("trellis-agent-fields-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("fields.db");
    let _ = std::fs::remove_file(&path);
    let open = |model: ScriptedModel| {
        let transcripts = Arc::new(SqliteTranscripts::open(&path).expect("opens"));
        keeper(
            model,
            transcripts,
            vec![Arc::new(Visit), Arc::new(Remember(ToolEffect::SideEffects))],
        )
        .with_checkpointer(Arc::new(SqliteCheckpointer::open(&path).expect("opens")))
    };
    let script = || {
        ScriptedModel::new()
            .calls([
                call("v1", "visit", "{}"),
                call(
                    "r1",
                    "remember",
                    r#"{"name": "Ada", "birthday": "10 December"}"#,
                ),
            ])
            .answer("Done.")
    };
    let start = TurnState::with_fields(
        "keeper",
        "Remember me.",
        Profile {
            name: Some("A.".into()),
            ..Profile::default()
        },
    );
    let paused = open(script()).start_from(start).await.expect("runs");
    assert!(paused.is_paused());
    assert_eq!(paused.fields.name.as_deref(), Some("A."));
    // Another process: the fields come back from the file, and the turn ends there.
    let done = open(script())
        .resume(&paused.run_id, TurnAnswer::Approve)
        .await
        .expect("resumes");
    assert_eq!(
        done.fields,
        Profile {
            name: Some("Ada".into()),
            birthday: Some("10 December".into()),
            visits: 1
        }
    );
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

#[test]
fn a_turn_without_fields_writes_none_and_one_with_fields_writes_them() {
    let plain = serde_json::to_value(TurnState::new("a", "hi")).expect("serializes");
    assert!(plain.get("fields").is_none(), "{plain}");
    let back: TurnState<NoFields> = serde_json::from_value(plain).expect("reads");
    assert_eq!(back, TurnState::new("a", "hi"));
    let open = TurnState::with_fields(
        "a",
        "hi",
        Profile {
            visits: 3,
            ..Profile::default()
        },
    );
    let written = serde_json::to_value(&open).expect("serializes");
    assert_eq!(written["fields"]["visits"], 3);
    let back: TurnState<Profile> = serde_json::from_value(written).expect("reads");
    assert_eq!(back, open);
}
