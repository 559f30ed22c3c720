//! Super-steps: linear, conditional, cycles and their limits, fork/join, commands, defer,
//! merge conflicts, state copies, stepping.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{Counted, Ticket, TicketUpdate, log, ticket};
use trellis::{
    Command, END, GraphBuilder, GraphState, NodeOptions, NodeResult, RunError, START, WholeState,
    run::StepOutcome,
};

#[tokio::test]
async fn linear_graph_runs_each_node_once_in_order() {
    let mut builder = GraphBuilder::<Ticket>::new("Linear");
    for name in ["a", "b", "c"] {
        builder.add_node_fn(name, move |_, _| async move { Ok(log(name)) });
    }
    builder
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .add_edge("c", END);
    let outcome = builder
        .compile()
        .unwrap()
        .invoke(ticket("hi"))
        .await
        .unwrap();
    assert!(!outcome.is_paused());
    assert_eq!(outcome.state().log, ["a", "b", "c"]);
    assert!(matches!(
        outcome,
        trellis::Outcome::Completed { steps: 3, .. }
    ));
}

fn classifier() -> trellis::CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Classify");
    builder
        .add_node_fn("classify", |state, _| async move {
            let category = if state.text.contains("invoice") {
                "billing"
            } else {
                "general"
            };
            Ok(NodeResult::Update(
                TicketUpdate::default().category(Some(category.to_owned())),
            ))
        })
        .add_node_fn("billing", |_, _| async { Ok(log("billing")) })
        .add_node_fn("general", |_, _| async { Ok(log("general")) })
        .add_edge(START, "classify")
        // The router sees the state merged after `classify` ran.
        .add_conditional_edges(
            "classify",
            |s: &Ticket| match s.category.as_deref() {
                Some("billing") => "billing",
                Some("spam") => END,
                _ => "general",
            },
            ["billing", "general", END],
        )
        .add_edge("billing", END)
        .add_edge("general", END);
    builder.compile().expect("the graph is valid")
}

#[tokio::test]
async fn conditional_edge_routes_on_the_merged_state() {
    let graph = classifier();
    let billing = graph.invoke(ticket("my invoice is wrong")).await.unwrap();
    assert_eq!(billing.state().log, ["billing"]);
    assert_eq!(billing.state().category.as_deref(), Some("billing"));
    let general = graph.invoke(ticket("hello")).await.unwrap();
    assert_eq!(general.state().log, ["general"]);
}

#[tokio::test]
async fn a_router_returning_an_undeclared_target_fails_the_run() {
    let mut builder = GraphBuilder::<Ticket>::new("Bad");
    builder
        .add_node_fn("a", |_, _| async { Ok(NodeResult::None) })
        .add_node_fn("b", |_, _| async { Ok(NodeResult::None) })
        .add_edge(START, "a")
        .add_conditional_edges("a", |_: &Ticket| "nowhere", ["b", END])
        .add_edge("b", END);
    let error = builder
        .compile()
        .unwrap()
        .invoke(ticket(""))
        .await
        .unwrap_err()
        .error;
    match error {
        RunError::UndeclaredTarget { node, target } => {
            assert_eq!((node.as_str(), target.as_str()), ("a", "nowhere"));
        }
        other => panic!("expected UndeclaredTarget, got {other:?}"),
    }
}

fn ping_pong(max_steps: u32, options: NodeOptions) -> trellis::CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("PingPong");
    builder
        .add_node_fn_with("ping", |_, _| async { Ok(log("ping")) }, options)
        .add_node_fn("pong", |_, _| async { Ok(log("pong")) })
        .add_edge(START, "ping")
        .add_edge("ping", "pong")
        .add_conditional_edges("pong", |_: &Ticket| "ping", ["ping", END])
        .set_max_steps(max_steps);
    builder.compile().expect("the graph is valid")
}

#[tokio::test]
async fn a_cycle_is_stopped_by_max_steps() {
    let error = ping_pong(7, NodeOptions::new())
        .invoke(ticket(""))
        .await
        .unwrap_err()
        .error;
    assert!(
        matches!(error, RunError::StepLimit { max_steps: 7 }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the run reached max_steps (7) with nodes still to run"
    );
}

#[tokio::test]
async fn a_cycle_is_stopped_by_max_visits() {
    let graph = ping_pong(1000, NodeOptions::new().max_visits(3));
    let mut run = graph.start(ticket(""));
    let error = run.run_to_end().await.unwrap_err();
    match error {
        RunError::VisitLimit { node, max_visits } => {
            assert_eq!((node.as_str(), max_visits), ("ping", 3));
        }
        other => panic!("expected VisitLimit, got {other:?}"),
    }
    // ping ran three times; the fourth visit was refused before it ran.
    assert_eq!(
        run.state().log,
        ["ping", "pong", "ping", "pong", "ping", "pong"]
    );
}

#[tokio::test]
async fn fork_and_join_merge_branches_through_reducers_and_join_once() {
    let mut builder = GraphBuilder::<Ticket>::new("Research");
    builder.add_node_fn("plan", |_, _| async { Ok(log("plan")) });
    for (name, delay) in [("web", 30), ("papers", 1), ("code", 15)] {
        builder.add_node_fn(name, move |_, _| async move {
            // Finish in an order unlike declaration order: the merge must not care.
            tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
            Ok(NodeResult::Update(
                TicketUpdate::default().log(name).reviews(1),
            ))
        });
        builder.add_edge(name, "summarize");
    }
    let joined = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&joined);
    builder
        .add_node_fn("summarize", move |state, _| {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok(log(&format!("summary of {}", state.log[1..].join("+"))))
            }
        })
        .add_edge(START, "plan")
        .add_fork("plan", ["web", "papers", "code"])
        .add_edge("summarize", END);
    let outcome = builder.compile().unwrap().invoke(ticket("")).await.unwrap();
    assert_eq!(
        outcome.state().log,
        [
            "plan",
            "web",
            "papers",
            "code",
            "summary of web+papers+code"
        ]
    );
    assert_eq!(outcome.state().reviews, 3, "sum reducer added every branch");
    assert_eq!(joined.load(Ordering::SeqCst), 1, "the join ran once");
}

#[tokio::test]
async fn a_deferred_node_waits_for_longer_branches() {
    let mut builder = GraphBuilder::<Ticket>::new("Uneven");
    builder
        .add_node_fn("start", |_, _| async { Ok(log("start")) })
        .add_node_fn("short", |_, _| async { Ok(log("short")) })
        .add_node_fn("long1", |_, _| async { Ok(log("long1")) })
        .add_node_fn("long2", |_, _| async { Ok(log("long2")) })
        .add_node_fn_with(
            "join",
            |_, _| async { Ok(log("join")) },
            NodeOptions::new().defer(),
        )
        .add_edge(START, "start")
        .add_fork("start", ["short", "long1"])
        .add_edge("short", "join")
        .add_edge("long1", "long2")
        .add_edge("long2", "join")
        .add_edge("join", END);
    let outcome = builder.compile().unwrap().invoke(ticket("")).await.unwrap();
    assert_eq!(
        outcome.state().log,
        ["start", "short", "long1", "long2", "join"]
    );
}

#[tokio::test]
async fn two_branches_overwriting_one_field_is_a_merge_conflict() {
    let mut builder = GraphBuilder::<Ticket>::new("Conflict");
    builder.add_node_fn("fork", |_, _| async { Ok(NodeResult::None) });
    for name in ["left", "right"] {
        builder
            .add_node_fn(name, move |_, _| async move {
                Ok(NodeResult::Update(
                    TicketUpdate::default()
                        .draft(Some(name.to_owned()))
                        .log(name),
                ))
            })
            .add_edge(name, END);
    }
    builder
        .add_edge(START, "fork")
        .add_fork("fork", ["left", "right"]);
    let mut run = builder.compile().unwrap().start(ticket(""));
    let error = run.run_to_end().await.unwrap_err();
    match &error {
        RunError::MergeConflict { step, conflict } => {
            assert_eq!(*step, 2);
            assert_eq!(
                (
                    conflict.field,
                    conflict.first.as_str(),
                    conflict.second.as_str()
                ),
                ("draft", "left", "right")
            );
        }
        other => panic!("expected a merge conflict, got {other:?}"),
    }
    assert_eq!(
        error.to_string(),
        "merge conflict in step 2: nodes `left` and `right` both overwrite `draft` in one super-step"
    );
    assert!(
        run.state().log.is_empty(),
        "nothing of the conflicting step was committed"
    );
}

#[tokio::test]
async fn commands_go_only_to_declared_targets() {
    let build = |command: Command| {
        let mut builder = GraphBuilder::<Ticket>::new("Commands");
        builder
            .add_node_fn("decide", move |_, _| {
                let command = command.clone();
                async move {
                    Ok(NodeResult::UpdateThen(
                        TicketUpdate::default().log("decide"),
                        command,
                    ))
                }
            })
            .add_node_fn("a", |_, _| async { Ok(log("a")) })
            .add_node_fn("b", |_, _| async { Ok(log("b")) })
            .add_node_fn("c", |_, _| async { Ok(log("c")) })
            .add_edge(START, "decide")
            .add_conditional_edges("decide", |_: &Ticket| "a", ["a", "b", END])
            .add_edge("a", END)
            .add_edge("b", END)
            .add_edge("c", END);
        builder.compile().unwrap()
    };
    let goto = build(Command::goto("b")).invoke(ticket("")).await.unwrap();
    assert_eq!(goto.state().log, ["decide", "b"]);
    let fork = build(Command::fork(["a", "b"]))
        .invoke(ticket(""))
        .await
        .unwrap();
    assert_eq!(fork.state().log, ["decide", "a", "b"]);
    let end = build(Command::End).invoke(ticket("")).await.unwrap();
    assert_eq!(end.state().log, ["decide"]);
    let cont = build(Command::Continue).invoke(ticket("")).await.unwrap();
    assert_eq!(cont.state().log, ["decide", "a"]);
    for command in [
        Command::goto("c"),
        Command::fork(["a", "c"]),
        Command::goto("zzz"),
    ] {
        let error = build(command.clone())
            .invoke(ticket(""))
            .await
            .unwrap_err()
            .error;
        match error {
            RunError::UndeclaredTarget { node, target } => {
                assert_eq!(node, "decide");
                assert!(target == "c" || target == "zzz", "{command:?} → {target}");
            }
            other => panic!("{command:?}: expected UndeclaredTarget, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn end_command_needs_end_among_the_targets() {
    let mut builder = GraphBuilder::<Ticket>::new("NoEnd");
    builder
        .add_node_fn("a", |_, _| async { Ok(NodeResult::Command(Command::End)) })
        .add_node_fn("b", |_, _| async { Ok(NodeResult::None) })
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", END);
    let error = builder
        .compile()
        .unwrap()
        .invoke(ticket(""))
        .await
        .unwrap_err()
        .error;
    assert!(
        matches!(&error, RunError::UndeclaredTarget { node, target } if node == "a" && target == END),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_super_step_clones_the_state_at_most_once_whatever_the_fan_out() {
    let mut builder = GraphBuilder::<Counted>::new("FanOut");
    let branches: Vec<String> = (0..16).map(|i| format!("b{i:02}")).collect();
    builder.add_node_fn("root", |_, _| async {
        Ok(NodeResult::Update(
            common::CountedUpdate::default().log("root"),
        ))
    });
    for name in &branches {
        let label = name.clone();
        builder
            .add_node_fn(name.clone(), move |state: Arc<Counted>, _| {
                let label = label.clone();
                async move {
                    // Reading through the shared Arc; no branch gets a copy.
                    let seen = state.log.len();
                    Ok(NodeResult::Update(
                        common::CountedUpdate::default().log(format!("{label}:{seen}")),
                    ))
                }
            })
            .add_edge(name.clone(), "join");
    }
    builder
        .add_node_fn("join", |_, _| async {
            Ok(NodeResult::Update(
                common::CountedUpdate::default().log("join"),
            ))
        })
        .add_edge(START, "root")
        .add_fork("root", branches.clone())
        .add_edge("join", END);
    let graph = builder.compile().unwrap();
    let input = Counted::default();
    let clones = Arc::clone(&input.clones.0);
    let mut run = graph.start(input);
    let mut steps = 0;
    loop {
        let before = clones.load(Ordering::SeqCst);
        let outcome = run.step().await.unwrap();
        steps += 1;
        assert!(
            clones.load(Ordering::SeqCst) - before <= 1,
            "step {steps} cloned the state more than once"
        );
        if outcome == StepOutcome::Completed {
            break;
        }
    }
    assert_eq!(run.state().log.len(), 18);
    assert_eq!(run.state().log[1], "b00:1");
    assert_eq!(
        clones.load(Ordering::SeqCst),
        0,
        "nodes dropped their Arcs: no copy needed at all"
    );
}

#[tokio::test]
async fn stepping_shows_each_step_and_override_next_steers_the_run() {
    let mut builder = GraphBuilder::<Ticket>::new("Steps");
    for name in ["a", "b", "c"] {
        builder.add_node_fn(name, move |_, _| async move { Ok(log(name)) });
    }
    builder
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .add_edge("c", END);
    let graph = builder.compile().unwrap();
    let mut run = graph.start(ticket(""));
    assert_eq!(run.step().await.unwrap(), StepOutcome::Stepped { step: 1 });
    assert_eq!(run.next_nodes(), ["b"]);
    assert_eq!(run.state().log, ["a"]);
    run.override_next("c").unwrap();
    assert_eq!(
        run.next_nodes(),
        ["c"],
        "what will run, not what the edges said"
    );
    assert!(matches!(
        run.override_next("zzz"),
        Err(RunError::UnknownNode { .. })
    ));
    assert_eq!(run.step().await.unwrap(), StepOutcome::Completed);
    assert_eq!(run.state().log, ["a", "c"]);
    assert_eq!(run.steps(), 2);
    assert!(matches!(run.step().await, Err(RunError::Ended { .. })));
}

#[tokio::test]
async fn every_node_runs_on_the_runs_own_task_and_fork_branches_run_at_once() {
    let mut builder = GraphBuilder::<Ticket>::new("Where");
    // Both branches wait at the barrier: the step ends only if they are under way together.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let where_ran = |name: &'static str, barrier: Option<Arc<tokio::sync::Barrier>>| {
        move |_: Arc<Ticket>, _| {
            let barrier = barrier.clone();
            async move {
                if let Some(barrier) = barrier {
                    barrier.wait().await;
                }
                let spawned = tokio::task::try_id().is_some();
                Ok(log(&format!(
                    "{name}:{}",
                    if spawned { "task" } else { "inline" }
                )))
            }
        }
    };
    builder
        .add_node_fn("one", where_ran("one", None))
        .add_node_fn("left", where_ran("left", Some(Arc::clone(&barrier))))
        .add_node_fn("right", where_ran("right", Some(barrier)))
        .add_edge(START, "one")
        .add_fork("one", ["left", "right"])
        .add_edge("left", END)
        .add_edge("right", END);
    let graph = builder.compile().unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(10), graph.invoke(ticket("")))
        .await
        .expect("the fork's branches ran one after the other")
        .unwrap();
    // The test's body is not a spawned task: a node that ran inline sees no task id.
    assert_eq!(
        outcome.state().log,
        ["one:inline", "left:inline", "right:inline"]
    );
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Total(u64);
impl WholeState for Total {
    const COMBINES: bool = true;
    fn merge(&mut self, update: Self) {
        self.0 += update.0;
    }
}

#[tokio::test]
async fn whole_state_mode_runs_a_graph_without_derived_reducers() {
    let mut builder = GraphBuilder::<Total>::new("Whole");
    builder
        .add_node_fn(
            "a",
            |s, _| async move { Ok(NodeResult::Update(Total(s.0 + 1))) },
        )
        .add_node_fn("b", |_, _| async { Ok(NodeResult::Update(Total(10))) })
        .add_node_fn("c", |_, _| async { Ok(NodeResult::Update(Total(100))) })
        .add_edge(START, "a")
        .add_fork("a", ["b", "c"])
        .add_edge("b", END)
        .add_edge("c", END);
    let outcome = builder.compile().unwrap().invoke(Total(1)).await.unwrap();
    // a: 1 + (1 + 1) = 3; then b and c both fold in: 3 + 10 + 100.
    assert_eq!(outcome.state().0, 113);
}

#[test]
fn derived_reducers_fold_in_declaration_order() {
    let mut state = ticket("x");
    state
        .apply(vec![
            (
                "a",
                TicketUpdate::default()
                    .log("a1")
                    .log("a2")
                    .reviews(2)
                    .draft(Some("A".to_owned())),
            ),
            (
                "b",
                TicketUpdate::default()
                    .log("b1")
                    .reviews(3)
                    .category(Some("c".to_owned())),
            ),
        ])
        .unwrap();
    assert_eq!(state.log, ["a1", "a2", "b1"]);
    assert_eq!(state.reviews, 5);
    assert_eq!(state.draft.as_deref(), Some("A"));
    assert_eq!(state.category.as_deref(), Some("c"));
    let before = state.clone();
    let conflict = state
        .apply(vec![
            (
                "a",
                TicketUpdate::default()
                    .log("lost")
                    .verdict(Some("x".to_owned())),
            ),
            ("b", TicketUpdate::default().verdict(Some("y".to_owned()))),
        ])
        .unwrap_err();
    assert_eq!((conflict.field, conflict.first.as_str()), ("verdict", "a"));
    assert_eq!(state, before, "a refused merge leaves the state as it was");
}

#[tokio::test]
async fn a_router_sees_how_often_nodes_ran_and_ends_a_loop_before_max_visits() {
    let mut builder = GraphBuilder::<Ticket>::new("Redraft");
    builder
        .add_node_fn_with(
            "draft",
            |_, _| async { Ok(log("draft")) },
            trellis::NodeOptions::new().max_visits(5),
        )
        .add_edge(START, "draft")
        .add_conditional_edges_with_visits(
            "draft",
            |_: &Ticket, visits: &trellis::Visits<'_>| {
                // This step's activation is already counted; unknown names count 0.
                assert_eq!(visits.of("no such node"), 0);
                if visits.of("draft") < 3 { "draft" } else { END }
            },
            ["draft", END],
        );
    let outcome = builder.compile().unwrap().invoke(ticket("")).await.unwrap();
    assert_eq!(outcome.state().log, ["draft", "draft", "draft"]);
}

/// Several updates from one node merge as a step's do: combining reducers take each, two
/// overwrites of one field conflict; the command after them is followed.
#[tokio::test]
async fn a_node_s_several_updates_merge_by_the_reducers() {
    let mut graph = GraphBuilder::<Ticket>::new("Tools");
    graph
        .add_node_fn("tools", |_, _| async {
            Ok(NodeResult::Updates(
                vec![
                    TicketUpdate::default().log("a").reviews(1),
                    TicketUpdate::default()
                        .log("b")
                        .reviews(2)
                        .draft(Some("d".into())),
                ],
                Command::goto("after"),
            ))
        })
        .add_node_fn("after", |_, _| async {
            Ok(TicketUpdate::default().log("after").into())
        })
        .add_edge(START, "tools")
        .add_conditional_edges("tools", |_: &Ticket| END, ["after", END])
        .add_edge("after", END);
    let done = graph.compile().unwrap().invoke(ticket("t")).await.unwrap();
    assert_eq!(done.state().log, ["a", "b", "after"]);
    assert_eq!(done.state().reviews, 3);
    assert_eq!(done.state().draft.as_deref(), Some("d"));

    let mut graph = GraphBuilder::<Ticket>::new("Clash");
    graph
        .add_node_fn("tools", |_, _| async {
            Ok(NodeResult::Updates(
                vec![
                    TicketUpdate::default().draft(Some("one".into())),
                    TicketUpdate::default().draft(Some("two".into())),
                ],
                Command::Continue,
            ))
        })
        .add_edge(START, "tools")
        .add_edge("tools", END);
    let failed = graph
        .compile()
        .unwrap()
        .invoke(ticket("t"))
        .await
        .unwrap_err();
    assert!(
        matches!(failed.error, RunError::MergeConflict { .. }),
        "{}",
        failed.error
    );
}

/// A conversation whose input goes through `add_messages`.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, GraphState)]
struct Chat {
    #[reducer(with = trellis::messages::add_messages)]
    messages: Vec<trellis::messages::Message>,
}

#[tokio::test]
async fn a_run_s_input_goes_through_the_reducers_and_keeps_its_ids() {
    use trellis::checkpoint::InMemoryCheckpointer;
    use trellis::messages::Message;
    let mut builder = GraphBuilder::<Chat>::new("Echo");
    builder
        .add_node_fn("echo", |state: Arc<Chat>, _| async move {
            let heard: Vec<&str> = state.messages.iter().filter_map(Message::text).collect();
            Ok(NodeResult::Update(ChatUpdate::default().messages(vec![
                Message::assistant(format!("heard {}", heard.join(" / "))),
            ])))
        })
        .add_edge(START, "echo")
        .add_edge("echo", END);
    let graph = builder
        .compile()
        .unwrap()
        .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let typo = Message::user("helo");
    // Given as JSON, as a client sends it: the second message corrects the first by its id.
    let input: Chat = serde_json::from_value(serde_json::json!({"messages": [
        {"id": typo.id, "type": "human", "content": "helo"},
        {"id": typo.id, "type": "human", "content": "hello"},
        {"type": "human", "content": "how are you?"},
    ]}))
    .unwrap();
    let asked = input.messages[2].id.clone();
    let outcome = graph.invoke(input).await.unwrap();
    let texts: Vec<&str> = outcome
        .state()
        .messages
        .iter()
        .filter_map(Message::text)
        .collect();
    assert_eq!(
        texts,
        ["hello", "how are you?", "heard hello / how are you?"]
    );
    // The ids given, and the one made when the message was read, are the ones kept.
    let history = graph.history(outcome.run_id()).await.unwrap();
    let first = history.last().expect("the start checkpoint");
    let ids: Vec<&str> = first.state.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, [typo.id.as_str(), asked.as_str()]);
    let last = &outcome.state().messages;
    assert_eq!(
        (last[0].id.as_str(), last[1].id.as_str()),
        (typo.id.as_str(), asked.as_str())
    );
}
