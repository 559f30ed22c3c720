//! Subgraph nodes (`GraphBuilder::add_subgraph`, `add_subgraph_mapped`): a graph run as one
//! node of another, on the same state or through a mapping; its pauses pause the parent and are
//! answered through it, in memory and durably; its failures are the node's; the rules refuse a
//! send into one.

mod common;

use std::sync::Arc;

use common::subgraphs::{review_graph, support_graph};
use common::{Answer, Ticket, TicketUpdate, log, ticket};
use serde::{Deserialize, Serialize};
use trellis::checkpoint::{Checkpointer, InMemoryCheckpointer};
use trellis::{
    Command, CompileError, END, GraphBuilder, NodeError, NodeOptions, NodeResult, RunError, START,
    WholeState,
    interrupt::{ApplyResume, Interrupt},
    send::SendTo,
    subgraph::MapFn,
};

#[tokio::test]
async fn a_subgraph_on_the_same_state_hands_back_its_final_state() {
    let mut child = GraphBuilder::<Ticket>::new("Triage");
    child
        .add_node_fn("classify", |_, _| async {
            Ok(TicketUpdate::default()
                .category(Some("billing".into()))
                .log("classify")
                .into())
        })
        .add_node_fn("tag", |_, _| async { Ok(log("tag")) })
        .add_edge(START, "classify")
        .add_edge("classify", "tag")
        .add_edge("tag", END);
    let mut parent = GraphBuilder::<Ticket>::new("Desk");
    parent
        .add_node_fn("open", |_, _| async { Ok(log("open")) })
        .add_subgraph("triage", child.compile().unwrap())
        .add_node_fn("close", |state, _| async move {
            Ok(log(&format!(
                "close {}",
                state.category.as_deref().unwrap_or("-")
            )))
        })
        .add_edge(START, "open")
        .add_edge("open", "triage")
        .add_edge("triage", "close")
        .add_edge("close", END);
    let graph = parent.compile().unwrap();
    let node = &graph.blueprint().nodes[1];
    assert_eq!(
        node.graph.as_deref(),
        Some("Triage"),
        "the blueprint names the child"
    );
    let done = graph.invoke(ticket("refund")).await.unwrap();
    // Two steps of the child, one step of the parent.
    assert_eq!(
        done.state().log,
        ["open", "classify", "tag", "close billing"]
    );
    let trellis::Outcome::Completed { steps, .. } = done else {
        panic!("completed")
    };
    assert_eq!(steps, 3);
}

#[tokio::test]
async fn a_sibling_update_is_merged_after_the_subgraph_state() {
    let mut parent = GraphBuilder::<Ticket>::new("Fork");
    parent
        .add_node_fn("plan", |_, _| async { Ok(log("plan")) })
        .add_subgraph("triage", {
            let mut child = GraphBuilder::<Ticket>::new("Triage");
            child
                .add_node_fn("classify", |_, _| async { Ok(log("classify")) })
                .add_edge(START, "classify")
                .add_edge("classify", END);
            child.compile().unwrap()
        })
        .add_node_fn("count", |_, _| async {
            Ok(TicketUpdate::default().reviews(1).log("count").into())
        })
        .add_edge(START, "plan")
        .add_fork("plan", ["triage", "count"])
        .add_join(["triage", "count"], "done")
        .add_node_fn("done", |_, _| async { Ok(log("done")) })
        .add_edge("done", END);
    let done = parent
        .compile()
        .unwrap()
        .invoke(Ticket::default())
        .await
        .unwrap();
    assert_eq!(done.state().log, ["plan", "classify", "count", "done"]);
    assert_eq!(done.state().reviews, 1);
}

#[tokio::test]
async fn two_subgraphs_replacing_the_state_in_one_step_conflict() {
    // A fork into both is refused when the graph compiles (E0218).
    let mut forked = GraphBuilder::<Ticket>::new("Twice");
    forked
        .add_node_fn("plan", |_, _| async { Ok(NodeResult::None) })
        .add_subgraph("first", review_like("A"))
        .add_subgraph("second", review_like("B"))
        .add_edge(START, "plan")
        .add_fork("plan", ["first", "second"])
        .add_edge("first", END)
        .add_edge("second", END);
    let refused = forked.compile().expect_err("two whole states in one step");
    assert_eq!(refused.codes(), [trellis::blueprint::Code::E0218]);
    assert_eq!(
        refused.diagnostics[0].message,
        "subgraph nodes `first` and `second` can run in one super-step, and each hands back the whole state of `Twice`: two whole states cannot be merged"
    );

    // A router picks one target as far as the check can tell; a node that forks with a
    // command runs both, and the run fails with the conflict.
    let mut commanded = GraphBuilder::<Ticket>::new("Twice");
    commanded
        .add_node_fn("plan", |_, _| async {
            Ok(NodeResult::Command(Command::fork(["first", "second"])))
        })
        .add_subgraph("first", review_like("A"))
        .add_subgraph("second", review_like("B"))
        .add_edge(START, "plan")
        .add_conditional_edges("plan", |_: &Ticket| "first", ["first", "second"])
        .add_edge("first", END)
        .add_edge("second", END);
    let error = commanded
        .compile()
        .unwrap()
        .invoke(Ticket::default())
        .await
        .unwrap_err()
        .error;
    let RunError::MergeConflict { conflict, step } = error else {
        panic!("{error}")
    };
    assert_eq!(
        (
            conflict.field,
            conflict.first.as_str(),
            conflict.second.as_str(),
            step
        ),
        ("state", "first", "second", 2)
    );
}

fn review_like(name: &str) -> trellis::CompiledGraph<Ticket> {
    let mut child = GraphBuilder::<Ticket>::new(name);
    child
        .add_node_fn("work", |_, _| async { Ok(log("work")) })
        .add_edge(START, "work")
        .add_edge("work", END);
    child.compile().expect("the child graph compiles")
}

/// A child on a state of its own: what it found, and the person's answer.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Findings {
    topic: String,
    notes: Vec<String>,
    approved: bool,
}

impl WholeState for Findings {}

impl ApplyResume for Findings {
    type Input = Answer;
    fn apply_resume(&self, _: &Interrupt, input: Answer) -> Findings {
        Findings {
            approved: input == Answer::Approve,
            ..self.clone()
        }
    }
}

fn research_graph(ask: bool) -> trellis::CompiledGraph<Findings> {
    let mut child = GraphBuilder::<Findings>::new("Research");
    child
        .add_node_fn("search", |state, _| async move {
            let mut found = (*state).clone();
            found.notes.push(format!("web on {}", found.topic));
            Ok(found.into())
        })
        .add_node_fn_with(
            "publish",
            |state, _| async move {
                let mut found = (*state).clone();
                found
                    .notes
                    .push(if found.approved { "published" } else { "kept" }.into());
                Ok(found.into())
            },
            if ask {
                NodeOptions::new().interrupt_before()
            } else {
                NodeOptions::new()
            },
        )
        .add_edge(START, "search")
        .add_edge("search", "publish")
        .add_edge("publish", END);
    child.compile().expect("the child graph compiles")
}

fn mapped_parent(ask: bool) -> GraphBuilder<Ticket> {
    let mut parent = GraphBuilder::<Ticket>::new("Desk");
    parent
        .add_node_fn("plan", |_, _| async { Ok(log("plan")) })
        .add_subgraph_mapped(
            "research",
            research_graph(ask),
            MapFn(
                |ticket: &Ticket| Findings {
                    topic: ticket.text.clone(),
                    ..Findings::default()
                },
                |_: &Ticket, found: Findings| TicketUpdate::default().log(found.notes.join(" + ")),
            ),
            NodeOptions::new(),
        )
        .add_node_fn("other", |_, _| async { Ok(log("other")) })
        .add_edge(START, "plan")
        .add_fork("plan", ["research", "other"])
        .add_edge("research", END)
        .add_edge("other", END);
    parent
}

#[tokio::test]
async fn a_mapped_subgraph_merges_its_output_by_the_parents_reducers() {
    let done = mapped_parent(false)
        .compile()
        .unwrap()
        .invoke(ticket("tides"))
        .await
        .unwrap();
    assert_eq!(done.state().log, ["plan", "web on tides + kept", "other"]);
}

#[tokio::test]
async fn a_parent_streamed_with_its_subgraphs_streams_their_items_under_their_node() {
    use trellis::stream::{StreamItem, StreamMode};
    let graph = mapped_parent(false).compile().unwrap();
    let mut stream = graph.stream(ticket("tides"), StreamMode::Updates | StreamMode::Subgraphs);
    let (mut own, mut nested) = (Vec::new(), Vec::new());
    while let Some(item) = stream.next().await {
        match item {
            StreamItem::Updates { node, .. } => own.push(node),
            StreamItem::Subgraph { namespace, item } => nested.push((namespace, item)),
            _ => {}
        }
    }
    assert_eq!(own, ["plan", "research", "other"]);
    let nodes: Vec<(&[String], &str, &str)> = nested
        .iter()
        .map(|(namespace, item)| {
            (
                namespace.as_slice(),
                item["mode"].as_str().unwrap(),
                item["node"].as_str().unwrap(),
            )
        })
        .collect();
    let at = ["research@2".to_owned()];
    assert_eq!(
        nodes,
        [
            (&at[..], "updates", "search"),
            (&at[..], "updates", "publish")
        ]
    );
    assert_eq!(
        nested[0].1["update"]["notes"],
        serde_json::json!(["web on tides"])
    );
    stream.finish().await.unwrap();

    // Without `Subgraphs`, none.
    let mut stream = graph.stream(ticket("tides"), StreamMode::Updates);
    while let Some(item) = stream.next().await {
        assert!(!matches!(item, StreamItem::Subgraph { .. }));
    }
}

#[tokio::test]
async fn a_mapped_subgraph_pauses_and_is_answered_through_its_parent_in_memory() {
    // No checkpointer: the child runs are kept in memory for the parent run's life.
    let graph = mapped_parent(true).compile().unwrap();
    let mut run = graph.start(ticket("tides"));
    let paused = run.run_to_end().await.unwrap();
    assert_eq!(paused.interrupts()[0].id, "research@2/publish@2");
    assert_eq!(paused.state().log, ["plan", "other"]);
    run.resume(trellis::interrupt::Answers::each([(
        "research@2/publish@2".to_owned(),
        Answer::Approve,
    )]))
    .await
    .unwrap();
    let done = run.run_to_end().await.unwrap();
    assert!(!done.is_paused());
    assert_eq!(
        done.state().log,
        ["plan", "other", "web on tides + published"]
    );
}

#[tokio::test]
async fn a_pause_inside_a_subgraph_resumes_from_memory() {
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    common::subgraphs::a_pause_inside_a_subgraph_resumes_in_another_process(
        Arc::clone(&store),
        store,
    )
    .await;
}

#[tokio::test]
async fn a_pause_inside_a_subgraph_resumes_in_sqlite_through_a_second_store() {
    let scratch = common::scratch("subgraphs");
    let (first, second) = common::sqlite_pair(&scratch);
    common::subgraphs::a_pause_inside_a_subgraph_resumes_in_another_process(first, second).await;
}

#[tokio::test]
async fn replaying_a_pause_inside_a_subgraph_copies_the_child_in_memory() {
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    common::subgraphs::replaying_a_pause_inside_a_subgraph_copies_the_child(store).await;
}

#[tokio::test]
async fn replaying_a_pause_inside_a_subgraph_copies_the_child_in_sqlite() {
    let scratch = common::scratch("subgraph-replay");
    let (store, _) = common::sqlite_pair(&scratch);
    common::subgraphs::replaying_a_pause_inside_a_subgraph_copies_the_child(store).await;
}

#[tokio::test]
async fn a_pause_two_graphs_down_is_answered_from_the_top() {
    let mut middle = GraphBuilder::<Ticket>::new("Middle");
    middle
        .add_subgraph("review", review_graph())
        .add_edge(START, "review")
        .add_edge("review", END);
    let mut top = GraphBuilder::<Ticket>::new("Top");
    top.add_subgraph("middle", middle.compile().unwrap())
        .add_edge(START, "middle")
        .add_edge("middle", END);
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    let graph = top.compile().unwrap().with_checkpointer(Arc::clone(&store));
    let paused = graph.invoke(ticket("x")).await.unwrap();
    let id = paused.interrupts()[0].id.clone();
    assert_eq!(id, "middle@1/review@1/approve@2");
    let done = graph
        .resume(
            paused.run_id(),
            trellis::interrupt::Answers::each([(id, Answer::Reject("not yet".into()))]),
        )
        .await
        .unwrap();
    assert_eq!(done.state().log, ["check", "answered approve@2", "held"]);
    let deepest = trellis::RunId::from(format!("{}/middle@1/review@1", paused.run_id()));
    assert_eq!(
        deepest.namespace().collect::<Vec<_>>(),
        ["middle@1", "review@1"]
    );
    assert!(store.load_run(&deepest).await.unwrap().is_some());
}

#[tokio::test]
async fn a_failing_child_fails_the_node_and_retry_runs_a_fresh_child() {
    let mut child = GraphBuilder::<Ticket>::new("Flaky");
    child
        .add_node_fn("call", |_, _| async {
            Err::<NodeResult<TicketUpdate>, _>(NodeError::msg("provider down"))
        })
        .add_edge(START, "call")
        .add_edge("call", END);
    let mut parent = GraphBuilder::<Ticket>::new("Desk");
    parent
        .add_subgraph_with(
            "flaky",
            child.compile().unwrap(),
            NodeOptions::new().retry(1, std::time::Duration::ZERO),
        )
        .add_edge(START, "flaky")
        .add_edge("flaky", END);
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    let graph = parent
        .compile()
        .unwrap()
        .with_checkpointer(Arc::clone(&store));
    let error = graph.invoke(Ticket::default()).await.unwrap_err().error;
    let RunError::Node(failure) = error else {
        panic!("{error}")
    };
    assert_eq!(failure.node, "flaky");
    assert_eq!(failure.attempts, 2);
    assert!(
        failure.message.contains("subgraph `Flaky`"),
        "{}",
        failure.message
    );
    assert!(
        failure.message.contains("provider down"),
        "{}",
        failure.message
    );
    let runs = store.list_runs(100, 0).await.unwrap();
    let children: Vec<String> = runs
        .iter()
        .filter_map(|r| r.run_id.namespace().next().map(str::to_owned))
        .collect();
    assert_eq!(children.len(), 2, "one child per attempt: {children:?}");
    assert!(children.contains(&"flaky@1".to_owned()) && children.contains(&"flaky@1.2".to_owned()));
}

#[test]
fn a_subgraph_node_cannot_be_sent_to() {
    let mut parent = GraphBuilder::<Ticket>::new("Desk");
    parent
        .add_node_fn("plan", |_, _| async { Ok(NodeResult::None) })
        .add_subgraph("review", review_graph())
        .add_edge(START, "plan")
        .add_send(
            "plan",
            |_: &Ticket, _| vec![SendTo::json("review", ().into())],
            ["review"],
        )
        .add_edge("review", END);
    let error: CompileError = parent.compile().unwrap_err();
    assert_eq!(
        error.codes().iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        ["E0213"]
    );
    assert_eq!(
        error.diagnostics[0].message,
        "node `review` runs a graph and cannot be sent to"
    );
    let _ = support_graph(None);
}

/// draft → work (a child: check → finish, where `finish` hangs while `hang` is set) → END;
/// `checks` counts the child's `check` activations.
fn hanging_parent(
    store: Arc<dyn Checkpointer>,
    hang: Arc<std::sync::atomic::AtomicBool>,
    checks: Arc<std::sync::atomic::AtomicUsize>,
) -> trellis::CompiledGraph<Ticket> {
    use std::sync::atomic::Ordering;
    let mut child = GraphBuilder::<Ticket>::new("Work");
    child
        .add_node_fn("check", move |_, _| {
            checks.fetch_add(1, Ordering::SeqCst);
            async { Ok(log("check")) }
        })
        .add_node_fn("finish", move |_, _| {
            let hang = hang.load(Ordering::SeqCst);
            async move {
                if hang {
                    std::future::pending::<()>().await;
                }
                Ok(log("finish"))
            }
        })
        .add_edge(START, "check")
        .add_edge("check", "finish")
        .add_edge("finish", END);
    let mut parent = GraphBuilder::<Ticket>::new("Desk");
    parent
        .add_node_fn("draft", |_, _| async { Ok(log("draft")) })
        .add_subgraph("work", child.compile().expect("the child compiles"))
        .add_edge(START, "draft")
        .add_edge("draft", "work")
        .add_edge("work", END);
    parent
        .compile()
        .expect("the parent compiles")
        .with_checkpointer(store)
}

#[tokio::test]
async fn a_child_left_running_by_a_stopped_process_is_taken_up_not_run_again() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    let (hang, checks) = (
        Arc::new(AtomicBool::new(true)),
        Arc::new(AtomicUsize::new(0)),
    );
    let graph = hanging_parent(Arc::clone(&store), Arc::clone(&hang), Arc::clone(&checks));
    let mut run = graph.start(ticket(""));
    run.step().await.unwrap();
    let run_id = run.run_id().clone();
    // The process "dies" in step 2, inside the child, after the child's first step committed.
    let stopped = tokio::time::timeout(std::time::Duration::from_millis(200), run.step()).await;
    assert!(stopped.is_err(), "the child hangs");
    drop(run);
    let child = trellis::RunId::from(format!("{run_id}/work@2"));
    assert_eq!(
        common::labels(store.as_ref(), &child).await,
        ["start", "step"]
    );
    // Both records now look like a dead machine's, their leases run out.
    for id in [&run_id, &child] {
        common::hand_to_a_gone_owner(store.as_ref(), id).await;
    }

    hang.store(false, Ordering::SeqCst);
    let graph = hanging_parent(Arc::clone(&store), hang, Arc::clone(&checks));
    let done = graph.continue_run(&run_id).await.unwrap();
    assert_eq!(done.state().log, ["draft", "check", "finish"]);
    assert_eq!(
        checks.load(Ordering::SeqCst),
        1,
        "the child's committed step ran once"
    );
    let record = store.load_run(&child).await.unwrap().unwrap();
    assert_eq!(record.status, trellis::checkpoint::RunStatus::Completed);
    assert_ne!(record.owner.as_deref(), Some("another-machine:1:1"));
}

#[tokio::test]
async fn a_child_that_completed_before_its_parents_step_was_lost_is_not_run_again() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    let (hang, checks) = (
        Arc::new(AtomicBool::new(true)),
        Arc::new(AtomicUsize::new(0)),
    );
    let build = |hang: Arc<AtomicBool>, checks: Arc<AtomicUsize>| {
        let mut child = GraphBuilder::<Ticket>::new("Quick");
        child
            .add_node_fn("check", move |_, _| {
                checks.fetch_add(1, Ordering::SeqCst);
                async { Ok(log("check")) }
            })
            .add_edge(START, "check")
            .add_edge("check", END);
        let mut parent = GraphBuilder::<Ticket>::new("Desk");
        parent
            .add_node_fn("plan", |_, _| async { Ok(NodeResult::None) })
            .add_subgraph("quick", child.compile().expect("compiles"))
            .add_node_fn("slow", move |_, _| {
                let hang = hang.load(Ordering::SeqCst);
                async move {
                    if hang {
                        std::future::pending::<()>().await;
                    }
                    Ok(log("slow"))
                }
            })
            .add_edge(START, "plan")
            .add_fork("plan", ["quick", "slow"])
            .add_edge("quick", END)
            .add_edge("slow", END);
        parent
            .compile()
            .expect("compiles")
            .with_checkpointer(Arc::clone(&store))
    };
    let mut run = build(Arc::clone(&hang), Arc::clone(&checks)).start(ticket(""));
    run.step().await.unwrap();
    let run_id = run.run_id().clone();
    // The child completes; its sibling hangs; the process "dies" before the step commits.
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(200), run.step())
            .await
            .is_err()
    );
    drop(run);
    common::hand_to_a_gone_owner(store.as_ref(), &run_id).await;

    hang.store(false, Ordering::SeqCst);
    let done = build(hang, Arc::clone(&checks))
        .continue_run(&run_id)
        .await
        .unwrap();
    assert_eq!(done.state().log, ["check", "slow"]);
    assert_eq!(
        checks.load(Ordering::SeqCst),
        1,
        "the completed child's state is used as is"
    );
}

#[tokio::test]
async fn a_streamed_parent_streams_its_childrens_events_with_their_path() {
    use trellis::stream::{StreamItem, StreamMode};
    let mut stream = support_graph(None).stream(ticket("x"), StreamMode::Events);
    let mut seen = Vec::new();
    while let Some(item) = stream.next().await {
        if let StreamItem::Event(trellis::event::Event::NodeEntered { run_id, node, .. }) = item {
            let path: Vec<String> = run_id.namespace().map(str::to_owned).collect();
            seen.push(format!(
                "{}{node}",
                path.iter().map(|p| format!("{p}/")).collect::<String>()
            ));
        }
    }
    // `approve` asks before it runs: the child pauses, and so does the parent.
    assert_eq!(seen, ["draft", "review", "review@2/check"]);
    assert!(stream.finish().await.unwrap().is_paused());
}

/// The second process of the test below: set by it, this test resumes the paused run.
const SECOND_PROCESS: &str = "TRELLIS_TEST_SUBGRAPH_RESUME";

#[tokio::test]
async fn a_pause_inside_a_subgraph_is_resumed_by_another_os_process() {
    use trellis::checkpoint::SqliteCheckpointer;
    const TEST: &str = "a_pause_inside_a_subgraph_is_resumed_by_another_os_process";
    if let Ok(given) = std::env::var(SECOND_PROCESS) {
        // The second process: a store opened on the file, a graph built anew, one resume.
        let (path, run_id) = given.split_once('|').expect("path|run");
        let store: Arc<dyn Checkpointer> = Arc::new(SqliteCheckpointer::open(path).expect("opens"));
        common::subgraphs::resume_in_this_process(store, run_id).await;
        return;
    }
    let scratch = common::scratch("subgraph-os");
    let path = scratch.path().join("runs.db");
    let store: Arc<dyn Checkpointer> = Arc::new(SqliteCheckpointer::open(&path).expect("opens"));
    common::subgraphs::resumed_by_another_os_process(store, |run_id| {
        let given = format!("{}|{run_id}", path.display());
        common::subgraphs::this_test_again(TEST, SECOND_PROCESS, given)
    })
    .await;
}

#[tokio::test]
async fn a_siblings_write_outlives_a_pause_inside_a_subgraph_in_memory() {
    for depth in [1, 2] {
        let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
        common::subgraphs::a_siblings_write_outlives_a_pause_inside_a_subgraph(
            Arc::clone(&store),
            store,
            depth,
        )
        .await;
    }
}

#[tokio::test]
async fn a_siblings_write_outlives_a_pause_inside_a_subgraph_in_sqlite() {
    for depth in [1, 2] {
        let scratch = common::scratch("subgraph-sibling");
        let (first, second) = common::sqlite_pair(&scratch);
        common::subgraphs::a_siblings_write_outlives_a_pause_inside_a_subgraph(
            first, second, depth,
        )
        .await;
    }
}

#[tokio::test]
async fn without_a_pause_the_siblings_write_is_kept_the_same_way() {
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    let mut child = GraphBuilder::<Ticket>::new("Quick");
    child
        .add_node_fn("check", |_, _| async { Ok(log("check")) })
        .add_edge(START, "check")
        .add_edge("check", END);
    let mut builder = GraphBuilder::<Ticket>::new("Parallel");
    builder
        .add_node_fn("plan", |_, _| async { Ok(log("plan")) })
        .add_subgraph("inner", child.compile().unwrap())
        .add_node_fn("outer", |_, _| async {
            Ok(TicketUpdate::default()
                .verdict(Some("outer's".to_owned()))
                .log("outer")
                .into())
        })
        .add_edge(START, "plan")
        .add_fork("plan", ["inner", "outer"])
        .add_edge("inner", END)
        .add_edge("outer", END);
    let graph = builder.compile().unwrap().with_checkpointer(store);
    let done = graph.invoke(ticket("x")).await.unwrap();
    assert_eq!(done.state().log, ["plan", "check", "outer"]);
    assert_eq!(done.state().verdict.as_deref(), Some("outer's"));
}

#[tokio::test]
async fn retrying_a_run_whose_subgraph_failed_runs_a_fresh_child_and_keeps_the_failed_one() {
    let down = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flag = Arc::clone(&down);
    let mut child = GraphBuilder::<Ticket>::new("Flaky");
    child
        .add_node_fn("call", move |_, _| {
            let down = flag.load(std::sync::atomic::Ordering::SeqCst);
            async move {
                if down {
                    Err(NodeError::msg("provider down"))
                } else {
                    Ok(log("called"))
                }
            }
        })
        .add_edge(START, "call")
        .add_edge("call", END);
    let mut parent = GraphBuilder::<Ticket>::new("Desk");
    parent
        .add_node_fn("open", |_, _| async { Ok(log("open")) })
        .add_subgraph("flaky", child.compile().unwrap())
        .add_edge(START, "open")
        .add_edge("open", "flaky")
        .add_edge("flaky", END);
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    let graph = parent
        .compile()
        .unwrap()
        .with_checkpointer(Arc::clone(&store));
    let mut events = graph.subscribe();
    graph.invoke(Ticket::default()).await.unwrap_err();
    let failed = common::drain(&mut events)
        .into_iter()
        .find_map(|event| match event {
            trellis::event::Event::RunFailed { run_id, .. } if run_id.namespace().count() == 0 => {
                Some(run_id)
            }
            _ => None,
        })
        .expect("the parent failed");
    down.store(false, std::sync::atomic::Ordering::SeqCst);
    let done = graph.retry(&failed).await.unwrap();
    assert_eq!(done.state().log, ["open", "called"]);
    let first = trellis::RunId::from(format!("{failed}/flaky@2"));
    let second = trellis::RunId::from(format!("{failed}/flaky@2~2"));
    let status = |record: Option<trellis::checkpoint::RunRecord>| record.map(|r| r.status);
    assert_eq!(
        status(store.load_run(&first).await.unwrap()),
        Some(trellis::checkpoint::RunStatus::Failed),
        "the failed child stays in history"
    );
    assert_eq!(
        status(store.load_run(&second).await.unwrap()),
        Some(trellis::checkpoint::RunStatus::Completed)
    );
}

#[tokio::test]
async fn retrying_a_run_whose_answered_subgraph_failed_goes_on_with_the_answer() {
    let down = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flag = Arc::clone(&down);
    let mut child = GraphBuilder::<Ticket>::new("Review");
    child
        .add_node_fn("check", |_, _| async { Ok(log("check")) })
        .add_node_fn_with(
            "approve",
            move |state, _| {
                let down = flag.load(std::sync::atomic::Ordering::SeqCst);
                async move {
                    if down {
                        return Err(NodeError::msg("mail server down"));
                    }
                    let said = if state.approved == Some(true) {
                        "approved"
                    } else {
                        "held"
                    };
                    Ok(log(said))
                }
            },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "check")
        .add_edge("check", "approve")
        .add_edge("approve", END);
    let mut parent = GraphBuilder::<Ticket>::new("Desk");
    parent
        .add_subgraph("review", child.compile().unwrap())
        .add_edge(START, "review")
        .add_edge("review", END);
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    let graph = parent
        .compile()
        .unwrap()
        .with_checkpointer(Arc::clone(&store));
    let paused = graph.invoke(ticket("x")).await.unwrap();
    let id = paused.interrupts()[0].id.clone();
    let error = graph
        .resume(
            paused.run_id(),
            trellis::interrupt::Answers::each([(id, Answer::Approve)]),
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("mail server down"), "{error}");
    down.store(false, std::sync::atomic::Ordering::SeqCst);
    let done = graph.retry(paused.run_id()).await.unwrap();
    assert!(!done.is_paused());
    assert_eq!(
        done.state().log,
        ["check", "answered approve@2", "approved"],
        "the child went on from its checkpoint, the answer kept, asking nothing again"
    );
}
