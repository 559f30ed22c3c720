//! Agent turns end to end, on a scripted model: the shipped blueprints and agents, the safety
//! rules of tool use, pauses and answers, reviews and delegation.

mod common;

use std::sync::Arc;

use common::{build, catalogue, recording, results};
use trellis::RunError;
use trellis::blueprint::InterruptPoint;
use trellis::checkpoint::{Checkpointer, InMemoryCheckpointer, RunStatus};
use trellis_agent::blueprints;
use trellis_agent::transcript::InMemoryTranscripts;
use trellis_agent::{
    AgentDefinition, AgentError, Body, Catalogue, Message, ModelError, ModelResponse, Models,
    ScriptedModel, ToolCall, ToolEffect, TurnAnswer,
};

fn call(id: &str, tool: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, tool, arguments)
}

/// What the messages say, without their ids.
fn bodies(messages: &[Message]) -> Vec<&Body> {
    messages.iter().map(|m| &m.body).collect()
}

#[test]
fn every_shipped_blueprint_validates_and_builds() {
    let catalogue = Catalogue::new();
    let names: Vec<&str> = catalogue.blueprints().map(|(name, _)| name).collect();
    assert_eq!(
        names,
        [
            "canonical_turn",
            "delegate",
            "plan_execute_review",
            "single_shot"
        ]
    );
    for (name, blueprint) in blueprints::shipped() {
        // The runtime's rules (the same as `trellis check`), then the agent's: every node has a
        // kind it knows, every conditional edge can be routed.
        trellis::GraphBuilder::<trellis_agent::TurnState>::from_blueprint(
            blueprint.clone(),
            |_, _| trellis::node_fn(|_, _| async { Ok(trellis::NodeResult::None) }),
            |_, _| |_: &trellis_agent::TurnState, _: &trellis::Visits<'_>| "",
        )
        .compile()
        .unwrap_or_else(|error| panic!("{name}: {error}"));
        Catalogue::new()
            .add_blueprint(name, blueprint)
            .unwrap_or_else(|error| panic!("{name}: {error}"));
    }
}

#[tokio::test]
async fn every_shipped_agent_loads_checks_and_builds() {
    let catalogue = Catalogue::shipped().expect("the shipped agents check");
    let cards = catalogue.cards();
    let names: Vec<&str> = cards.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "assistant",
            "critic",
            "orchestrator",
            "planner",
            "researcher",
            "summarizer"
        ]
    );
    for card in &cards {
        assert!(
            !card.prompt.is_empty() && !card.description.is_empty(),
            "{}",
            card.name
        );
        let json = serde_json::to_value(card).expect("a card serializes");
        assert_eq!(
            json["graph"]["format"], 1,
            "{}: the blueprint is the export JSON",
            card.name
        );
        catalogue
            .build(
                &card.name,
                ScriptedModel::new(),
                Arc::new(InMemoryTranscripts::new()),
            )
            .unwrap_or_else(|error| panic!("{}: {error}", card.name));
    }
    let orchestrator = &cards[2];
    assert_eq!(orchestrator.helpers, ["researcher", "critic"]);
    let assistant = &cards[0];
    let tools: Vec<&str> = assistant.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["calculator", "list_files"]);
}

#[tokio::test]
async fn the_turn_advertises_the_agents_tools_on_every_call_and_answers_from_their_results() {
    let lookup = recording("lookup", ToolEffect::ReadOnly, "order 17 shipped on Monday");
    let model = ScriptedModel::new()
        .call(call("call_1", "lookup", r#"{"to": "order 17"}"#))
        .step(|request| {
            let found = request.result_of("call_1").unwrap_or("nothing");
            Ok(ModelResponse::text(format!("Your order: {found}.")))
        });
    let agent = build(
        &catalogue("canonical_turn", [lookup.clone()], false),
        model.clone(),
    );
    let outcome = agent
        .start("Where is my order?")
        .await
        .expect("the turn runs");
    assert_eq!(
        outcome.answer.as_deref(),
        Some("Your order: order 17 shipped on Monday.")
    );
    assert_eq!(outcome.iterations, 2);
    let seen = model.seen();
    assert_eq!(seen.len(), 2);
    for request in &seen {
        assert_eq!(
            request.tools,
            ["lookup"],
            "the advertisement is kept for every call"
        );
    }
    assert_eq!(
        bodies(&seen[0].messages),
        bodies(&[
            Message::system("You test things."),
            Message::user("Where is my order?")
        ])
    );
    assert_eq!(lookup.calls(), [serde_json::json!({"to": "order 17"})]);
    let transcript = agent
        .transcript(&outcome.run_id)
        .await
        .expect("the transcript");
    assert_eq!(transcript.len(), 5, "{transcript:#?}");
    assert_eq!(
        transcript[4].body,
        Message::assistant("Your order: order 17 shipped on Monday.").body
    );
    let ids: std::collections::HashSet<&str> = transcript.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids.len(),
        transcript.len(),
        "each message has an id of its own"
    );
}

#[tokio::test]
async fn the_answer_depends_on_what_the_tool_actually_returned() {
    let mut answers = Vec::new();
    for stock in ["3 left", "sold out"] {
        let tool = recording("stock", ToolEffect::ReadOnly, stock);
        let model = ScriptedModel::new()
            .call(call("c1", "stock", r#"{"to": "blue mug"}"#))
            .step(|request| {
                Ok(ModelResponse::text(format!(
                    "Blue mug: {}",
                    request.result_of("c1").unwrap_or("?")
                )))
            });
        let agent = build(&catalogue("canonical_turn", [tool], false), model);
        answers.push(agent.start("Any blue mugs?").await.expect("runs").answer);
    }
    assert_eq!(
        answers,
        [
            Some("Blue mug: 3 left".to_owned()),
            Some("Blue mug: sold out".to_owned())
        ]
    );
}

#[tokio::test]
async fn a_call_to_a_tool_not_advertised_is_refused_and_reported_and_nothing_runs() {
    let send = recording("send", ToolEffect::SideEffects, "sent");
    // `delete_all` is no tool of the agent; `send` is, but is only offered on the next line.
    let model = ScriptedModel::new()
        .calls([
            call("c1", "delete_all", r#"{"to": "everyone"}"#),
            call("c2", "list_files", r#"{"path": "."}"#),
        ])
        .step(|request| {
            Ok(ModelResponse::text(
                request.result_of("c1").unwrap_or("?").to_owned(),
            ))
        });
    let agent = build(
        &catalogue("canonical_turn", [send.clone()], false),
        model.clone(),
    );
    let outcome = agent.start("Clean up.").await.expect("runs");
    assert!(send.calls().is_empty());
    let shown = results(&model.seen()[1].messages);
    assert_eq!(
        shown,
        [
            (
                "c1".to_owned(),
                "refused, not run: `delete_all` is not a tool offered in this turn (offered: send)"
                    .to_owned(),
                true
            ),
            (
                "c2".to_owned(),
                "refused, not run: `list_files` is not a tool offered in this turn (offered: send)"
                    .to_owned(),
                true
            ),
        ]
    );
    assert_eq!(
        outcome.answer.as_deref(),
        Some(shown[0].1.as_str()),
        "the model read the refusal"
    );
}

#[tokio::test]
async fn malformed_arguments_fail_closed_and_the_tool_never_runs() {
    let send = recording("send", ToolEffect::SideEffects, "sent");
    let model = ScriptedModel::new()
        .calls([
            call("bad_json", "send", r#"{"to": "ops""#),
            call("missing", "send", r#"{"body": "hi"}"#),
            call("empty", "send", ""),
            call("empty_object", "send", "{}"),
            call("extra", "send", r#"{"to": "ops", "cc": "everyone"}"#),
            call("wrong_type", "send", r#"{"to": 7}"#),
        ])
        .answer("I could not send it.");
    let agent = build(
        &catalogue("canonical_turn", [send.clone()], false),
        model.clone(),
    );
    let outcome = agent.start("Send it.").await.expect("runs");
    assert_eq!(send.calls(), Vec::<serde_json::Value>::new(), "nothing ran");
    let shown = results(&model.seen()[1].messages);
    let reasons: Vec<(&str, &str)> = shown
        .iter()
        .map(|(id, text, _)| (id.as_str(), text.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            (
                "bad_json",
                "refused, not run: the arguments are not valid JSON (EOF while parsing an object at line 1 column 12)"
            ),
            (
                "missing",
                "refused, not run: the arguments do not fit the tool's schema: `to` is required and missing"
            ),
            ("empty", "refused, not run: the arguments are empty"),
            (
                "empty_object",
                "refused, not run: the arguments do not fit the tool's schema: `to` is required and missing"
            ),
            (
                "extra",
                "refused, not run: the arguments do not fit the tool's schema: `cc` is not an argument of this tool"
            ),
            (
                "wrong_type",
                "refused, not run: the arguments do not fit the tool's schema: `to` must be a string"
            ),
        ]
    );
    assert!(shown.iter().all(|(_, _, is_error)| *is_error));
    assert_eq!(outcome.answer.as_deref(), Some("I could not send it."));
}

#[tokio::test]
async fn results_keep_the_providers_call_ids_in_the_calls_order() {
    let a = recording("alpha", ToolEffect::ReadOnly, "A");
    let b = recording("beta", ToolEffect::ReadOnly, "B");
    let model = ScriptedModel::new()
        .calls([
            call("toolu_9", "beta", r#"{"to": "x"}"#),
            call("toolu_1", "alpha", r#"{"to": "y"}"#),
            call("toolu_5", "beta", r#"{"to": "z"}"#),
        ])
        .answer("done");
    let agent = build(&catalogue("canonical_turn", [a, b], false), model.clone());
    agent.start("Go.").await.expect("runs");
    let shown = results(&model.seen()[1].messages);
    let ids: Vec<(&str, &str)> = shown
        .iter()
        .map(|(id, text, _)| (id.as_str(), text.as_str()))
        .collect();
    assert_eq!(ids, [("toolu_9", "B"), ("toolu_1", "A"), ("toolu_5", "B")]);
}

#[tokio::test]
async fn a_side_effecting_call_waits_for_approval_and_runs_once_approved() {
    let send = recording("send", ToolEffect::SideEffects, "sent to ops");
    let model = ScriptedModel::new()
        .call(call("c1", "send", r#"{"to": "ops", "body": "disk full"}"#))
        .step(|request| {
            Ok(ModelResponse::text(format!(
                "Done: {}",
                request.result_of("c1").unwrap_or("?")
            )))
        });
    let store = Arc::new(InMemoryCheckpointer::new());
    let agent = build(&catalogue("canonical_turn", [send.clone()], false), model)
        .with_checkpointer(Arc::clone(&store));

    let paused = agent.start("Tell ops.").await.expect("runs");
    assert!(paused.is_paused());
    let asked = &paused.interrupts[0];
    assert_eq!(asked.node, "approve");
    assert_eq!(asked.request.kind, "approval");
    assert_eq!(
        asked.request.question,
        r#"Run send({"to": "ops", "body": "disk full"})?"#
    );
    assert_eq!(asked.request.options, ["approve", "reject"]);
    assert!(send.calls().is_empty(), "nothing runs before the answer");

    let done = agent
        .resume(&paused.run_id, TurnAnswer::Approve)
        .await
        .expect("resumes");
    assert_eq!(done.answer.as_deref(), Some("Done: sent to ops"));
    assert_eq!(send.calls().len(), 1);
    let record = store
        .load_run(&done.run_id)
        .await
        .expect("store")
        .expect("recorded");
    assert_eq!(record.status, RunStatus::Completed);
}

#[tokio::test]
async fn a_rejected_call_runs_nothing_and_the_model_is_told_why() {
    let send = recording("send", ToolEffect::SideEffects, "sent");
    let model = ScriptedModel::new()
        .call(call("c1", "send", r#"{"to": "all-staff"}"#))
        .step(|request| {
            Ok(ModelResponse::text(format!(
                "Not sent ({}).",
                request.result_of("c1").unwrap_or("?")
            )))
        });
    let store = Arc::new(InMemoryCheckpointer::new());
    let agent = build(
        &catalogue("canonical_turn", [send.clone()], false),
        model.clone(),
    )
    .with_checkpointer(store);
    let paused = agent.start("Tell everyone.").await.expect("runs");
    let done = agent
        .resume(
            &paused.run_id,
            trellis::interrupt::Decision::reject("too many recipients"),
        )
        .await
        .expect("resumes");
    assert!(send.calls().is_empty());
    assert_eq!(
        done.answer.as_deref(),
        Some("Not sent (rejected by a person, not run: too many recipients).")
    );
    assert!(results(&model.seen()[1].messages)[0].2, "shown as an error");
}

#[tokio::test]
async fn an_approval_answered_with_anything_but_approve_runs_nothing() {
    let send = recording("send", ToolEffect::SideEffects, "sent");
    let model = ScriptedModel::new()
        .call(call("c1", "send", r#"{"to": "ops"}"#))
        .step(|request| Ok(ModelResponse::text(request.result_of("c1").unwrap_or("?"))));
    let store = Arc::new(InMemoryCheckpointer::new());
    let agent =
        build(&catalogue("canonical_turn", [send.clone()], false), model).with_checkpointer(store);
    let paused = agent.start("Tell ops.").await.expect("runs");
    let done = agent
        .resume(&paused.run_id, TurnAnswer::reply("sure, whatever"))
        .await
        .expect("resumes");
    assert!(send.calls().is_empty());
    assert_eq!(
        done.answer.as_deref(),
        Some("rejected by a person, not run: the answer was not an approval (sure, whatever)")
    );
}

#[tokio::test]
async fn a_failing_tool_is_a_result_the_model_reads_and_the_turn_goes_on() {
    let spec =
        trellis_agent::ToolSpec::new("flaky", "fails", serde_json::json!({"type": "object"}));
    let flaky = trellis_agent::testing::RecordingTool::failing(spec, "the disk is gone");
    let model = ScriptedModel::new()
        .call(call("c1", "flaky", "{}"))
        .step(|request| Ok(ModelResponse::text(request.result_of("c1").unwrap_or("?"))));
    let agent = build(
        &catalogue("canonical_turn", [flaky.clone()], false),
        model.clone(),
    );
    let outcome = agent.start("Try it.").await.expect("runs");
    assert_eq!(flaky.calls(), [serde_json::json!({})]);
    assert_eq!(outcome.answer.as_deref(), Some("failed: the disk is gone"));
    assert!(results(&model.seen()[1].messages)[0].2);
}

#[tokio::test]
async fn read_only_calls_run_without_asking() {
    let look = recording("look", ToolEffect::ReadOnly, "seen");
    let model = ScriptedModel::new()
        .call(call("c1", "look", r#"{"to": "x"}"#))
        .answer("ok");
    let agent = build(&catalogue("canonical_turn", [look.clone()], false), model);
    let outcome = agent.start("Look.").await.expect("runs");
    assert!(!outcome.is_paused());
    assert_eq!(look.calls().len(), 1);
}

/// `approve_tools` on a blueprint whose `stop_check` asks through a `hitl` node: that node
/// asks before every batch, read-only ones too, naming the calls — and only it asks.
#[tokio::test]
async fn approve_tools_asks_once_before_every_batch_naming_its_calls() {
    let look = recording("look", ToolEffect::ReadOnly, "seen");
    let model = ScriptedModel::new()
        .call(call("c1", "look", r#"{"to": "x"}"#))
        .call(call("c2", "look", r#"{"to": "y"}"#))
        .answer("ok");
    let store = Arc::new(InMemoryCheckpointer::new());
    let agent =
        build(&catalogue("canonical_turn", [look.clone()], true), model).with_checkpointer(store);
    let first = agent.start("Look twice.").await.expect("runs");
    assert_eq!(first.interrupts.len(), 1);
    assert_eq!(first.interrupts[0].node, "approve");
    assert_eq!(
        first.interrupts[0].request.question,
        r#"Run look({"to": "x"})?"#
    );
    assert!(look.calls().is_empty());
    let second = agent
        .resume(&first.run_id, TurnAnswer::Approve)
        .await
        .expect("resumes");
    assert_eq!(
        second.interrupts[0].node, "approve",
        "the next batch asks again, and the approved one ran without a second question"
    );
    assert_eq!(
        second.interrupts[0].request.question,
        r#"Run look({"to": "y"})?"#
    );
    assert_eq!(look.calls().len(), 1);
    let third = agent
        .resume(&first.run_id, TurnAnswer::reject("enough"))
        .await
        .expect("resumes");
    assert_eq!(third.answer.as_deref(), Some("ok"));
    assert_eq!(look.calls().len(), 1, "the rejected batch did not run");
}

/// A side-effecting call under `approve_tools` is asked about once, not by the `hitl` node and
/// again by a pause before `tools`.
#[tokio::test]
async fn approve_tools_asks_once_for_a_side_effecting_call() {
    let send = recording("send", ToolEffect::SideEffects, "sent");
    let model = ScriptedModel::new()
        .call(call("c1", "send", r#"{"to": "ops"}"#))
        .answer("done");
    let agent = build(&catalogue("canonical_turn", [send.clone()], true), model)
        .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let paused = agent.start("Tell ops.").await.expect("runs");
    assert_eq!(paused.interrupts[0].node, "approve");
    let done = agent
        .resume(&paused.run_id, TurnAnswer::Approve)
        .await
        .expect("resumes");
    assert!(
        done.interrupts.is_empty(),
        "asked again: {:?}",
        done.interrupts
    );
    assert_eq!(done.answer.as_deref(), Some("done"));
    assert_eq!(send.calls().len(), 1);
}

/// `approve_tools` on a blueprint with no `hitl` node: the run pauses before every `tools`
/// step instead.
#[tokio::test]
async fn approve_tools_without_a_hitl_node_pauses_before_every_tools_step() {
    let look = recording("look", ToolEffect::ReadOnly, "seen");
    // The plan, then the call that carries it out.
    let model =
        ScriptedModel::new()
            .answer("1. Look at x.")
            .call(call("c1", "look", r#"{"to": "x"}"#));
    let agent = build(
        &catalogue("plan_execute_review", [look.clone()], true),
        model,
    )
    .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let paused = agent.start("Look.").await.expect("runs");
    assert_eq!(paused.interrupts[0].node, "tools");
    assert_eq!(paused.interrupts[0].point, InterruptPoint::Before);
    assert_eq!(
        paused.interrupts[0].request.question,
        "Run the model's tool calls?"
    );
    assert!(look.calls().is_empty());
}

#[tokio::test]
async fn an_early_exit_tool_pauses_the_turn_and_the_reply_becomes_its_result() {
    let ask = recording(
        "ask_user",
        ToolEffect::Pause,
        "May I write to the billing team?",
    );
    let model = ScriptedModel::new()
        .call(call("q1", "ask_user", r#"{"to": "the billing team"}"#))
        .step(|request| {
            Ok(ModelResponse::text(format!(
                "You said: {}",
                request.result_of("q1").unwrap_or("?")
            )))
        });
    let store = Arc::new(InMemoryCheckpointer::new());
    let agent = build(&catalogue("canonical_turn", [ask], false), model).with_checkpointer(store);
    let paused = agent.start("Write to billing.").await.expect("runs");
    assert!(paused.answer.is_none(), "no final answer is faked");
    assert_eq!(paused.interrupts[0].request.kind, "tool:ask_user");
    assert_eq!(
        paused.interrupts[0].request.question,
        "May I write to the billing team?"
    );
    let done = agent
        .resume(&paused.run_id, TurnAnswer::reply("yes, but cc me"))
        .await
        .expect("resumes");
    assert_eq!(done.answer.as_deref(), Some("You said: yes, but cc me"));
}

#[tokio::test]
async fn a_model_repeating_itself_trips_the_breaker() {
    let look = recording("look", ToolEffect::ReadOnly, "same");
    let again = || call("c", "look", r#"{"to": "x"}"#);
    // Same call, same id: the same answer three times in a row.
    let model = ScriptedModel::new()
        .call(again())
        .call(again())
        .call(again())
        .answer("never reached");
    let agent = build(&catalogue("canonical_turn", [look.clone()], false), model);
    let outcome = agent.start("Look.").await.expect("runs");
    assert_eq!(outcome.answer, None);
    assert_eq!(
        outcome.stopped.as_deref(),
        Some("the repeat breaker tripped: the model gave the same answer 3 times in a row")
    );
    assert_eq!(look.calls().len(), 2, "the third repeat is not run");
}

#[tokio::test]
async fn the_iteration_cap_comes_from_the_blueprint() {
    let mut catalogue = catalogue(
        "canonical_turn",
        [recording("look", ToolEffect::ReadOnly, "r")],
        false,
    );
    let mut short = blueprints::canonical_turn::blueprint();
    let stop_check = short
        .nodes
        .iter_mut()
        .find(|n| n.id == "stop_check")
        .expect("a stop_check");
    stop_check.max_visits = Some(2);
    catalogue
        .add_blueprint("short_turn", short)
        .expect("checks");
    catalogue
        .add_agent(AgentDefinition {
            name: "short".into(),
            description: "two answers at most".into(),
            blueprint: "short_turn".into(),
            tools: vec!["look".into()],
            approve_tools: false,
            prompt: "p".into(),
        })
        .expect("checks");
    let model = ScriptedModel::new()
        .call(call("a", "look", r#"{"to": "1"}"#))
        .call(call("b", "look", r#"{"to": "2"}"#))
        .call(call("c", "look", r#"{"to": "3"}"#));
    let agent = catalogue
        .build("short", model.clone(), Arc::new(InMemoryTranscripts::new()))
        .expect("builds");
    let outcome = agent.start("Look forever.").await.expect("runs");
    assert_eq!(
        outcome.stopped.as_deref(),
        Some("the turn reached its cap of 2 model answers and the model was still calling tools")
    );
    assert_eq!(model.seen().len(), 2);
}

#[tokio::test]
async fn a_model_error_fails_the_run_and_runs_no_tool() {
    let send = recording("send", ToolEffect::SideEffects, "sent");
    let model = ScriptedModel::new().step(|_| {
        Err(ModelError::Status {
            status: 503,
            message: "overloaded".into(),
        })
    });
    let mut catalogue = catalogue("canonical_turn", [send.clone()], false);
    // No retry backoff to wait through in a test.
    let mut quick = blueprints::canonical_turn::blueprint();
    quick.nodes[0].retry = None;
    catalogue
        .add_blueprint("canonical_turn", quick)
        .expect("checks");
    let store = Arc::new(InMemoryCheckpointer::new());
    let agent = build(&catalogue, model).with_checkpointer(Arc::clone(&store));
    let error = agent.start("Send.").await.expect_err("fails");
    let AgentError::Failed(trellis::RunFailure {
        error: RunError::Node(failure),
        ..
    }) = &error
    else {
        panic!("a node failure, not {error:?}");
    };
    assert_eq!(failure.node, "dispatch");
    assert_eq!(
        failure.message,
        "the model provider answered 503: overloaded"
    );
    assert!(send.calls().is_empty());
    let runs = store.list_runs(10, 0).await.expect("store");
    assert_eq!(runs[0].status, RunStatus::Failed);
}

#[tokio::test]
async fn plan_execute_review_reworks_a_rejected_result_then_finishes() {
    let calc = recording("calc", ToolEffect::ReadOnly, "42");
    let model = ScriptedModel::new()
        .answer("1. compute 6 × 7")
        .call(call("c1", "calc", r#"{"to": "6*7"}"#))
        .answer("It is 41.")
        .call(call(
            "r1",
            "submit_review",
            r#"{"approved": false, "feedback": "the tool said 42"}"#,
        ))
        .answer("It is 42.")
        .call(call(
            "r2",
            "submit_review",
            r#"{"approved": true, "feedback": "right"}"#,
        ));
    let agent = build(
        &catalogue("plan_execute_review", [calc], false),
        model.clone(),
    );
    let outcome = agent.start("What is 6 × 7?").await.expect("runs");
    assert_eq!(outcome.answer.as_deref(), Some("It is 42."));
    let seen = model.seen();
    assert_eq!(
        seen[0].tools,
        Vec::<String>::new(),
        "the plan step offers no tool"
    );
    assert_eq!(seen[1].tools, ["calc"]);
    assert_eq!(seen[3].tools, ["submit_review"]);
    assert_eq!(
        seen[4].messages.iter().rev().find_map(Message::text),
        Some("Carry out the plan, using the tools you need, then give the result.")
    );
    assert!(
        results(&seen[4].messages)
            .iter()
            .any(|(_, text, _)| text == "review recorded: rework: the tool said 42")
    );
}

#[tokio::test]
async fn plan_execute_review_stops_after_its_last_review_round() {
    let reject = |id: &'static str| {
        call(
            id,
            "submit_review",
            r#"{"approved": false, "feedback": "not yet"}"#,
        )
    };
    let model = ScriptedModel::new()
        .answer("plan")
        .answer("try 1")
        .call(reject("r1"))
        .answer("try 2")
        .call(reject("r2"))
        .answer("try 3")
        // An unreadable review is no approval.
        .call(call("r3", "submit_review", r#"{"approved": "yes"}"#));
    let agent = build(&catalogue("plan_execute_review", [], false), model);
    let outcome = agent.start("Do it.").await.expect("runs");
    assert_eq!(outcome.answer, None);
    assert_eq!(
        outcome.stopped.as_deref(),
        Some("the result was still not approved after 3 reviews: the review could not be read")
    );
}

#[tokio::test]
async fn an_orchestrator_delegates_to_helpers_side_by_side_and_joins_their_results() {
    let catalogue = Catalogue::shipped().expect("shipped");
    let orchestrator = ScriptedModel::new()
        .calls([
            call("h1", "researcher", r#"{"task": "which files are there?"}"#),
            call("h2", "critic", r#"{"task": "what could go wrong?"}"#),
            call("h3", "nobody", r#"{"task": "x"}"#),
        ])
        .step(|request| {
            let research = request.result_of("h1").unwrap_or("?");
            let critique = request.result_of("h2").unwrap_or("?");
            Ok(ModelResponse::text(format!("{research} / {critique}")))
        });
    let researcher = ScriptedModel::new().answer("three files");
    let critic = ScriptedModel::new().answer("one risk");
    let models = Models::new(orchestrator.clone())
        .with("researcher", researcher.clone())
        .with("critic", critic);
    let agent = catalogue
        .build("orchestrator", models, Arc::new(InMemoryTranscripts::new()))
        .expect("builds");
    let outcome = agent.start("Review the workspace.").await.expect("runs");
    assert_eq!(outcome.answer.as_deref(), Some("three files / one risk"));
    assert_eq!(orchestrator.seen()[0].tools, ["researcher", "critic"]);
    assert_eq!(
        researcher.seen()[0].messages[1].body,
        Message::user("which files are there?").body
    );
    let shown = results(&orchestrator.seen()[1].messages);
    let ids: Vec<&str> = shown.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        ["h1", "h2", "h3"],
        "joined in the orchestrator's order"
    );
    assert!(shown[2].2, "a call to no helper is answered as not run");
}

#[test]
fn a_tool_whose_schema_cannot_be_checked_in_full_is_refused_when_added() {
    let spec = trellis_agent::ToolSpec::new(
        "lookup",
        "finds an order",
        serde_json::json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^[0-9]+$"}}}),
    );
    let error = Catalogue::new()
        .add_tool(trellis_agent::testing::RecordingTool::new(spec, "found"))
        .map(drop)
        .expect_err("refused");
    assert_eq!(
        error.to_string(),
        "tool `lookup` has a schema that cannot be checked: arguments.id: `pattern` is not checked by this crate; remove it, or check it in the tool"
    );
}

#[tokio::test]
async fn a_blueprint_an_agent_cannot_run_is_refused_naming_the_node() {
    let mut blueprint = blueprints::canonical_turn::blueprint();
    blueprint.nodes[1].kind = None;
    let error = Catalogue::new()
        .add_blueprint("broken", blueprint)
        .map(drop)
        .expect_err("refused");
    assert_eq!(
        error.to_string(),
        "blueprint `CanonicalTurn`: node `parse` has no `kind`: in an agent blueprint every node says what it does (`kind dispatch;`, `kind tools;`, …)"
    );
    let mut catalogue = Catalogue::shipped().expect("shipped");
    let error = catalogue
        .add_agent(AgentDefinition {
            name: "x".into(),
            description: String::new(),
            blueprint: "canonical_trun".into(),
            tools: Vec::new(),
            approve_tools: false,
            prompt: "p".into(),
        })
        .map(drop)
        .expect_err("refused");
    assert_eq!(
        error.to_string(),
        "agent `x` runs on blueprint `canonical_trun`, which the catalogue does not have (there are: canonical_turn, delegate, plan_execute_review, single_shot)"
    );
}

/// A replay (or any branch) goes on with the turn where its checkpoint stood: the transcript
/// is branched with the run. From after the tool call, the model reads the call's result and
/// the tool does not run again; from before it, the tool runs and the model is not asked
/// again for the call it already made.
#[tokio::test]
async fn a_replay_goes_on_with_the_turn_where_its_checkpoint_stood() {
    let lookup = recording("lookup", ToolEffect::ReadOnly, "order 17 shipped on Monday");
    let answer = |request: &trellis_agent::ModelRequest<'_>| {
        let found = request.result_of("call_1").unwrap_or("nothing");
        Ok(ModelResponse::text(format!("Your order: {found}.")))
    };
    let model = ScriptedModel::new()
        .call(call("call_1", "lookup", r#"{"to": "order 17"}"#))
        .step(answer)
        .step(answer)
        .step(answer);
    let store = Arc::new(InMemoryCheckpointer::new());
    let agent = build(
        &catalogue("canonical_turn", [lookup.clone()], false),
        model.clone(),
    )
    .with_checkpointer(store);
    let first = agent
        .start("Where is my order?")
        .await
        .expect("the turn runs");
    let original = agent
        .transcript(&first.run_id)
        .await
        .expect("its transcript");
    assert_eq!(original.len(), 5);
    let history = agent
        .graph()
        .history(&first.run_id)
        .await
        .expect("its history");
    let at = |node: &str| {
        history
            .iter()
            .rev()
            .find(|snapshot| snapshot.ran.iter().any(|n| n.as_str() == node))
            .expect("a checkpoint after the node")
            .checkpoint
    };

    // After `tools`: the result is in the branch's transcript; only the answer is asked for.
    let after = agent
        .graph()
        .replay(&first.run_id, at("tools"))
        .await
        .expect("the replay runs");
    assert_eq!(
        after.state().answer.as_deref(),
        Some("Your order: order 17 shipped on Monday.")
    );
    assert_eq!(model.seen().len(), 3, "one more model call, for the answer");
    assert_eq!(lookup.calls().len(), 1, "the tool did not run again");
    let branched = agent
        .transcript(after.run_id())
        .await
        .expect("the branch's");
    assert_eq!(branched.len(), 5, "{branched:#?}");
    assert_eq!(
        branched[..4],
        original[..4],
        "the turn up to the checkpoint, ids and all"
    );
    assert_ne!(
        branched[4].id, original[4].id,
        "the answer is the branch's own"
    );

    // Before `tools` (the model had asked for the call): the tool runs, the model answers.
    let before = agent
        .graph()
        .replay(&first.run_id, at("stop_check"))
        .await
        .expect("the replay runs");
    assert_eq!(
        before.state().answer.as_deref(),
        Some("Your order: order 17 shipped on Monday.")
    );
    assert_eq!(model.seen().len(), 4, "the call was not asked for again");
    assert_eq!(lookup.calls().len(), 2, "the tool ran in the branch");
    let branched = agent
        .transcript(before.run_id())
        .await
        .expect("the branch's");
    assert_eq!(branched.len(), 5, "{branched:#?}");
    assert_eq!(branched[..3], original[..3]);
    assert_eq!(
        agent
            .transcript(&first.run_id)
            .await
            .expect("the original's"),
        original,
        "the original is untouched"
    );
}

/// On a thread, each turn goes on from the conversation so far: the model reads the earlier
/// turns (with their tool calls and results), the turn's own counts start afresh, and the
/// history keeps every message's id.
#[tokio::test]
async fn turns_on_a_thread_go_on_from_the_conversation_so_far() {
    for blueprint in ["single_shot", "canonical_turn"] {
        let lookup = recording("lookup", ToolEffect::ReadOnly, "order 17 shipped on Monday");
        let model = ScriptedModel::new().answer("Hello, Ada.");
        let model = if blueprint == "canonical_turn" {
            model.call(call("call_1", "lookup", r#"{"to": "order 17"}"#))
        } else {
            model
        };
        let model = model.step(|request| {
            let told = request
                .messages
                .iter()
                .any(|m| m.text() == Some("I am Ada."));
            let found = request.result_of("call_1").unwrap_or("not looked up");
            Ok(ModelResponse::text(if told {
                format!("Ada, your order: {found}.")
            } else {
                "Who are you?".to_owned()
            }))
        });
        let agent = build(
            &catalogue(blueprint, [lookup.clone()], false),
            model.clone(),
        )
        .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
        let thread = agent
            .graph()
            .create_thread(Default::default())
            .await
            .expect("a thread");
        let first = thread
            .invoke(agent.next_turn("I am Ada."))
            .await
            .expect("the first turn runs");
        assert_eq!(first.state().answer.as_deref(), Some("Hello, Ada."));
        let before = agent.transcript(first.run_id()).await.expect("its history");

        let second = thread
            .invoke(agent.next_turn("Where is my order?"))
            .await
            .expect("the second turn runs");
        let found = if blueprint == "canonical_turn" {
            "order 17 shipped on Monday"
        } else {
            "not looked up"
        };
        assert_eq!(
            second.state().answer.as_deref(),
            Some(format!("Ada, your order: {found}.").as_str()),
            "{blueprint}: the second turn read the first"
        );
        let turns = if blueprint == "canonical_turn" { 2 } else { 0 };
        assert_eq!(
            second.state().iterations,
            turns,
            "{blueprint}: counted afresh"
        );
        let history = agent
            .transcript(second.run_id())
            .await
            .expect("its history");
        assert_eq!(
            history[..before.len()],
            before[..],
            "{blueprint}: the first turn, ids and all"
        );
        assert_eq!(
            bodies(&history[before.len()..before.len() + 1]),
            bodies(&[Message::user("Where is my order?")]),
            "{blueprint}: then the new input, once"
        );
        let ids: std::collections::HashSet<&str> = history.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids.len(), history.len());
        let system = history
            .iter()
            .filter(|m| matches!(m.body, Body::System { .. }))
            .count();
        assert_eq!(system, 1, "{blueprint}: the prompt once");
        assert_eq!(
            model.seen().len(),
            if blueprint == "canonical_turn" { 3 } else { 2 }
        );
    }
}
