//! Subgraphs, as scenarios every backend runs: a pause inside a child pauses its parent, the
//! child's run is kept under the parent's namespace, and resuming the parent (in another
//! process too) continues the child where it stopped.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use trellis::checkpoint::{Checkpointer, RunStatus};
use trellis::event::Event;
use trellis::{CompiledGraph, END, GraphBuilder, NodeOptions, NodeResult, RunId, START};

use super::{Answer, Ticket, TicketUpdate, drain, labels, log};

/// check → approve (asks before it runs) → END; `approve` logs `approved` or `held`.
pub fn review_graph() -> CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Review");
    builder
        .add_node_fn("check", |_, _| async { Ok(log("check")) })
        .add_node_fn_with(
            "approve",
            |state, _| async move {
                let verdict = if state.approved == Some(true) {
                    "approved"
                } else {
                    "held"
                };
                Ok(NodeResult::Update(TicketUpdate::default().log(verdict)))
            },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "check")
        .add_edge("check", "approve")
        .add_edge("approve", END);
    builder.compile().expect("compiles")
}

/// draft → review (the `Review` graph, on the same state) → send.
pub fn support_graph(store: Option<Arc<dyn Checkpointer>>) -> CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Support");
    builder
        .add_node_fn("draft", |_, _| async { Ok(log("draft")) })
        .add_subgraph("review", review_graph())
        .add_node_fn("send", |_, _| async { Ok(log("sent")) })
        .add_edge(START, "draft")
        .add_edge("draft", "review")
        .add_edge("review", "send")
        .add_edge("send", END);
    let graph = builder.compile().unwrap();
    match store {
        Some(store) => graph.with_checkpointer(store),
        None => graph,
    }
}

pub async fn a_pause_inside_a_subgraph_resumes_in_another_process(
    first: Arc<dyn Checkpointer>,
    second: Arc<dyn Checkpointer>,
) {
    let paused = support_graph(Some(Arc::clone(&first)))
        .invoke(super::ticket("refund"))
        .await
        .unwrap();
    assert!(paused.is_paused());
    let run_id = paused.run_id().clone();
    let asked = paused.interrupts();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].id, "review@2/approve@2",
        "the child's question, under its segment"
    );
    assert_eq!(asked[0].node, "review");
    assert_eq!(asked[0].request.kind, "before");
    // The parent committed what ran before the subgraph; the child's own progress is its own.
    assert_eq!(paused.state().log, ["draft"]);

    let child = RunId::from(format!("{run_id}/review@2"));
    let record = first
        .load_run(&child)
        .await
        .unwrap()
        .expect("the child is stored");
    assert_eq!(record.status, RunStatus::Paused);
    assert_eq!(record.graph, "Review");
    assert_eq!(child.namespace().collect::<Vec<_>>(), ["review@2"]);
    assert_eq!(child.parent().as_ref(), Some(&run_id));
    assert_eq!(
        labels(first.as_ref(), &child).await,
        ["start", "pause:before"]
    );
    assert_eq!(
        first.load_run(&run_id).await.unwrap().unwrap().status,
        RunStatus::Paused
    );

    // Another process answers the parent: the answer goes to the child, which goes on.
    let graph = support_graph(Some(Arc::clone(&second)));
    let mut events = graph.subscribe();
    let done = graph
        .resume(
            &run_id,
            trellis::interrupt::Answers::each([("review@2/approve@2".to_owned(), Answer::Approve)]),
        )
        .await
        .unwrap();
    assert!(!done.is_paused());
    assert_eq!(
        done.state().log,
        ["draft", "check", "answered approve@2", "approved", "sent"]
    );
    assert_eq!(done.state().approved, Some(true));
    let child_labels = labels(second.as_ref(), &child).await;
    assert_eq!(
        child_labels,
        ["start", "pause:before", "resume", "complete"]
    );
    let parent_labels = labels(second.as_ref(), &run_id).await;
    assert_eq!(
        parent_labels,
        [
            "start",
            "step",
            "pause:before",
            "resume",
            "step",
            "complete"
        ]
    );
    assert_eq!(
        second.load_run(&child).await.unwrap().unwrap().status,
        RunStatus::Completed
    );

    // The events of the child's steps are the parent's too, tagged with the child's path.
    let events = drain(&mut events);
    let entered: Vec<(Vec<String>, String)> = events
        .iter()
        .filter_map(|event| match event {
            Event::NodeEntered { run_id, node, .. } => Some((
                run_id.namespace().map(str::to_owned).collect(),
                node.clone(),
            )),
            _ => None,
        })
        .collect();
    let top: Vec<String> = Vec::new();
    assert_eq!(
        entered,
        [
            (top.clone(), "review".to_owned()),
            (vec!["review@2".to_owned()], "approve".to_owned()),
            (top, "send".to_owned()),
        ]
    );
}

/// A replay of the parent's pause inside its subgraph asks again, on a copy of the child: the
/// branch and the original are answered differently, and neither sees the other's answer.
pub async fn replaying_a_pause_inside_a_subgraph_copies_the_child(store: Arc<dyn Checkpointer>) {
    let graph = support_graph(Some(Arc::clone(&store)));
    let paused = graph.invoke(super::ticket("refund")).await.unwrap();
    let run_id = paused.run_id().clone();
    let history = graph.history(&run_id).await.unwrap();
    let pause = history.first().expect("the pause is the newest checkpoint");
    assert_eq!(pause.label.to_string(), "pause:before");

    let branch = graph.replay(&run_id, pause.checkpoint).await.unwrap();
    assert!(branch.is_paused());
    assert_eq!(branch.interrupts()[0].id, "review@2/approve@2");
    let branch_id = branch.run_id().clone();
    let copy = RunId::from(format!("{branch_id}/review@2"));
    let copied = store
        .load_run(&copy)
        .await
        .unwrap()
        .expect("the child is copied");
    assert_eq!(copied.status, RunStatus::Paused);
    assert_eq!(
        copied.parent.map(|p| p.run_id),
        Some(RunId::from(format!("{run_id}/review@2")))
    );

    let held = graph
        .resume(
            &branch_id,
            trellis::interrupt::Answers::each([(
                "review@2/approve@2".to_owned(),
                Answer::Reject("no".into()),
            )]),
        )
        .await
        .unwrap();
    assert_eq!(
        held.state().log,
        ["draft", "check", "answered approve@2", "held", "sent"]
    );
    let original_child = RunId::from(format!("{run_id}/review@2"));
    assert_eq!(
        labels(store.as_ref(), &original_child).await,
        ["start", "pause:before"],
        "the original child is untouched"
    );
    let approved = graph.resume(&run_id, Answer::Approve).await.unwrap();
    assert_eq!(
        approved.state().log,
        ["draft", "check", "answered approve@2", "approved", "sent"]
    );
}

/// A pause inside a subgraph answered by another OS process, the first process's half: the
/// run pauses here; `second` (this test binary run again, told where the store is and which
/// run) resumes it; what it wrote is read back here.
pub async fn resumed_by_another_os_process(
    store: Arc<dyn Checkpointer>,
    second: impl FnOnce(&RunId) -> std::process::Command,
) {
    let paused = support_graph(Some(Arc::clone(&store)))
        .invoke(super::ticket("refund"))
        .await
        .unwrap();
    assert_eq!(paused.interrupts()[0].id, "review@2/approve@2");
    let run_id = paused.run_id().clone();
    let output = second(&run_id).output().expect("the second process runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("resumed: draft,check,answered approve@2,approved,sent"),
        "{stdout}"
    );
    let record = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    let child = RunId::from(format!("{run_id}/review@2"));
    assert_eq!(
        labels(store.as_ref(), &child).await,
        ["start", "pause:before", "resume", "complete"]
    );
    let owner = record.owner.expect("the last writer");
    let pid = format!(":{}:", std::process::id());
    assert!(
        !owner.contains(&pid),
        "written by the other process: {owner}"
    );
}

/// The second process's half: a graph built anew on `store` resumes `run_id` and prints its log.
pub async fn resume_in_this_process(store: Arc<dyn Checkpointer>, run_id: &str) {
    let done = support_graph(Some(store))
        .resume(&RunId::from(run_id), Answer::Approve)
        .await
        .expect("resumes");
    println!("resumed: {}", done.state().log.join(","));
}

/// This test binary, to run `test` alone again with `env` set to `value`.
pub fn this_test_again(test: &str, env: &str, value: String) -> std::process::Command {
    let mut command = std::process::Command::new(std::env::current_exe().expect("this binary"));
    command
        .args(["--exact", test, "--nocapture", "--include-ignored"])
        .env(env, value);
    command
}

/// A fork of the same-state `Review` graph (`inner`, `depth` levels down) beside `outer`, which
/// writes `verdict` and counts a review; both join at `after`. LangGraph's
/// `test_nested_graph_interrupts_parallel`.
pub fn parallel_graph(store: Arc<dyn Checkpointer>, depth: usize) -> CompiledGraph<Ticket> {
    let mut inner = review_graph();
    for level in 1..depth {
        let mut wrapper = GraphBuilder::<Ticket>::new(format!("Level{level}"));
        wrapper
            .add_subgraph("nested", inner)
            .add_edge(START, "nested")
            .add_edge("nested", END);
        inner = wrapper.compile().unwrap();
    }
    let mut builder = GraphBuilder::<Ticket>::new("Parallel");
    builder
        .add_node_fn("plan", |_, _| async { Ok(log("plan")) })
        .add_subgraph("inner", inner)
        .add_node_fn("outer", |_, _| async {
            Ok(TicketUpdate::default()
                .verdict(Some("outer's".to_owned()))
                .reviews(1)
                .log("outer")
                .into())
        })
        .add_node_fn("after", |_, _| async { Ok(log("after")) })
        .add_edge(START, "plan")
        .add_fork("plan", ["inner", "outer"])
        .add_join(["inner", "outer"], "after")
        .add_edge("after", END);
    builder.compile().unwrap().with_checkpointer(store)
}

/// The sibling's write, committed at the child's pause, survives the child's completion after
/// the resume (in a second store: another process), as it does without a pause.
pub async fn a_siblings_write_outlives_a_pause_inside_a_subgraph(
    first: Arc<dyn Checkpointer>,
    second: Arc<dyn Checkpointer>,
    depth: usize,
) {
    let paused = parallel_graph(first, depth)
        .invoke(super::ticket("refund"))
        .await
        .unwrap();
    assert!(paused.is_paused());
    assert_eq!(paused.state().log, ["plan", "outer"]);
    assert_eq!(paused.state().verdict.as_deref(), Some("outer's"));
    let id = paused.interrupts()[0].id.clone();
    let done = parallel_graph(second, depth)
        .resume(
            paused.run_id(),
            trellis::interrupt::Answers::each([(id, Answer::Approve)]),
        )
        .await
        .unwrap();
    assert!(!done.is_paused());
    let state = done.state();
    assert_eq!(
        state.verdict.as_deref(),
        Some("outer's"),
        "the sibling's overwrite is kept"
    );
    assert_eq!(state.reviews, 1, "the sibling's sum is kept");
    assert_eq!(
        state.log,
        [
            "plan",
            "check",
            "answered approve@2",
            "approved",
            "outer",
            "after"
        ],
        "the child's final state, then the sibling's update, as without a pause"
    );
}
