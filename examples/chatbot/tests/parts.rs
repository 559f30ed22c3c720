//! Each part of the tutorial, run offline on the stand-in model, printing the conversation the
//! tutorial shows.

use std::sync::Arc;

use chatbot::{Printed, StandIn};

fn model() -> Arc<dyn trellis_agent::Model> {
    Arc::new(StandIn)
}

fn has(printed: &Printed, line: &str) -> bool {
    printed.iter().any(|l| l == line)
}

#[tokio::test]
async fn part1_a_chatbot_answers() {
    let printed = chatbot::part1(model()).await.expect("runs");
    assert_eq!(printed.len(), 2, "{printed:#?}");
    assert_eq!(printed[0], "user: What do you know about LangGraph?");
    assert!(
        printed[1].starts_with("assistant: LangGraph is a library"),
        "{printed:#?}"
    );
}

#[tokio::test]
async fn part2_the_model_searches_and_answers_from_the_result() {
    let printed = chatbot::part2(model()).await.expect("runs");
    assert_eq!(
        printed[1..],
        [
            r#"assistant: search({"query":"Could you research LangGraph for me?"})"#,
            "tool search: LangGraph is a library for stateful, multi-actor applications with LLMs.",
            "assistant: Here is what I found: LangGraph is a library for stateful, multi-actor applications with LLMs.",
        ]
    );
}

#[tokio::test]
async fn part3_a_thread_remembers_and_another_does_not() {
    let printed = chatbot::part3(model()).await.expect("runs");
    let split = printed
        .iter()
        .position(|l| l == "-- another thread")
        .expect("two threads");
    assert_eq!(
        printed[..split].len(),
        4,
        "the first thread holds both turns: {printed:#?}"
    );
    assert_eq!(printed[split - 1], "assistant: Of course, Will.");
    assert_eq!(
        printed[split + 1..],
        [
            "user: Remember my name?",
            "assistant: I do not know your name: you have not told me."
        ]
    );
}

#[tokio::test]
async fn part4_a_tool_asks_a_person_and_the_answer_goes_on() {
    let printed = chatbot::part4(model()).await.expect("runs");
    let asked = printed
        .iter()
        .position(|l| l.starts_with("paused, asking: "))
        .expect("a pause");
    assert!(
        printed[asked - 1].starts_with("assistant: human_assistance("),
        "{printed:#?}"
    );
    let reply = "We, the experts, are here to help! We'd recommend you check out LangGraph to build your agent.";
    assert_eq!(
        printed[asked + 1],
        format!("tool human_assistance: {reply}")
    );
    assert_eq!(
        printed[asked + 2],
        format!("assistant: Here is what I found: {reply}")
    );
}

#[tokio::test]
async fn part5_a_person_corrects_what_is_kept_in_the_state_s_own_fields() {
    let printed = chatbot::part5(model()).await.expect("runs");
    assert!(
        has(
            &printed,
            "tool search: LangGraph was released on January 17, 2024."
        ),
        "{printed:#?}"
    );
    assert!(has(
        &printed,
        r#"assistant: human_assistance({"birthday":"Jan 2024","name":"LangGraph"})"#
    ));
    assert!(has(
        &printed,
        "tool human_assistance: Made a correction: LangGraph, Jan 17, 2024"
    ));
    assert!(has(
        &printed,
        r#"name: Some("LangGraph"), birthday: Some("Jan 17, 2024")"#
    ));
    assert_eq!(
        printed.last().map(String::as_str),
        Some(r#"name after the edit: Some("LangGraph (library)")"#)
    );
}

#[tokio::test]
async fn part6_a_replay_runs_again_from_before_the_second_search() {
    let printed = chatbot::part6(model()).await.expect("runs");
    let at = printed
        .iter()
        .position(|l| l.starts_with("-- replaying from checkpoint"))
        .expect("a replay");
    assert_eq!(
        printed[at + 1..],
        [
            "tool search: LangGraph builds autonomous agents as graphs of nodes and edges.",
            "assistant: Here is what I found: LangGraph builds autonomous agents as graphs of nodes and edges.",
        ],
        "the search and the answer ran again: {printed:#?}"
    );
    assert_eq!(printed[..at - 1].len(), 8, "two turns of four messages");
}
