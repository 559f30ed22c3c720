//! Human in the loop: pauses before, after and inside nodes; resumes, refusals, and several
//! interrupts answered by id.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use common::{Answer, Ticket, TicketUpdate, log, shape, ticket};
use trellis::{
    Command, CompiledGraph, END, GraphBuilder, NodeOptions, NodeResult, RunError, RunId, START,
    blueprint::InterruptPoint, checkpoint::Checkpointer, checkpoint::InMemoryCheckpointer,
    checkpoint::RunStatus, interrupt::InterruptRequest, run::StepOutcome,
};

/// The support flow: classify → lookup_invoice | draft; draft ⇄ review; interrupt before send.
/// The automatic reviewer rejects the first draft; a person approves or rejects at `send`.
fn support(store: Arc<InMemoryCheckpointer>) -> CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Support");
    builder
        .add_node_fn("classify", |s, _| async move {
            let category = if s.text.contains("invoice") {
                "billing"
            } else {
                "general"
            };
            Ok(NodeResult::Update(
                TicketUpdate::default()
                    .category(Some(category.to_owned()))
                    .log("classify"),
            ))
        })
        .add_node_fn("lookup_invoice", |_, _| async { Ok(log("lookup_invoice")) })
        .add_node_fn_with(
            "draft",
            |s, _| async move {
                let version = s.log.iter().filter(|l| l.starts_with("draft")).count() + 1;
                let text = match &s.verdict {
                    Some(why) => format!("draft {version} (fixing: {why})"),
                    None => format!("draft {version}"),
                };
                Ok(NodeResult::Update(
                    TicketUpdate::default().draft(Some(text.clone())).log(text),
                ))
            },
            NodeOptions::new().max_visits(5),
        )
        .add_node_fn("review", |s, _| async move {
            // The automatic reviewer wants at least two drafts.
            let verdict = if s.reviews == 0 {
                Some("too curt".to_owned())
            } else {
                None
            };
            Ok(NodeResult::Update(
                TicketUpdate::default()
                    .reviews(1)
                    .verdict(verdict)
                    .log("review"),
            ))
        })
        .add_node_fn_with(
            "send",
            |s, _| async move {
                let entry = match s.approved {
                    Some(true) => format!("sent {}", s.draft.clone().unwrap_or_default()),
                    _ => "send refused".to_owned(),
                };
                Ok(NodeResult::Update(TicketUpdate::default().log(entry)))
            },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "classify")
        .add_conditional_edges(
            "classify",
            |s: &Ticket| match s.category.as_deref() {
                Some("billing") => "lookup_invoice",
                _ => "draft",
            },
            ["lookup_invoice", "draft"],
        )
        .add_edge("lookup_invoice", "draft")
        .add_edge("draft", "review")
        .add_conditional_edges(
            "review",
            |s: &Ticket| if s.verdict.is_some() { "draft" } else { "send" },
            ["send", "draft"],
        )
        .add_conditional_edges(
            "send",
            |s: &Ticket| {
                if s.approved == Some(true) {
                    END
                } else {
                    "draft"
                }
            },
            ["draft", END],
        )
        .set_checkpointer(store);
    builder.compile().expect("the support graph is valid")
}

#[tokio::test]
async fn support_flow_rejects_then_approves_and_completes() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let graph = support(Arc::clone(&store));
    let first = graph.invoke(ticket("my invoice is wrong")).await.unwrap();
    let run_id = first.run_id().clone();
    assert!(first.is_paused());
    let [interrupt] = first.interrupts() else {
        panic!("one interrupt expected: {:?}", first.interrupts());
    };
    assert_eq!(interrupt.node, "send");
    assert_eq!(interrupt.point, InterruptPoint::Before);
    assert_eq!(
        interrupt.id, "send@7",
        "six steps ran; send would be the seventh"
    );
    assert_eq!(
        first.state().log,
        [
            "classify",
            "lookup_invoice",
            "draft 1",
            "review",
            "draft 2 (fixing: too curt)",
            "review"
        ]
    );
    let record = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Paused);
    assert_eq!(record.interrupts, first.interrupts());

    // A person rejects: send runs (refusing), the run goes back to draft, and pauses again.
    let second = graph
        .resume(&run_id, Answer::Reject("say sorry".to_owned()))
        .await
        .unwrap();
    assert!(second.is_paused());
    assert_eq!(second.interrupts()[0].id, "send@10");
    assert_eq!(
        second.state().log[6..],
        [
            "answered send@7",
            "send refused",
            "draft 3 (fixing: say sorry)",
            "review"
        ]
    );

    // A second process (a fresh graph on the same store) approves.
    let done = support(Arc::clone(&store))
        .resume(&run_id, Answer::Approve)
        .await
        .unwrap();
    assert!(!done.is_paused());
    assert_eq!(
        done.state().log.last().map(String::as_str),
        Some("sent draft 3 (fixing: say sorry)")
    );
    let record = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    assert!(record.interrupts.is_empty());
    let labels: Vec<String> = store
        .list_checkpoints(&run_id)
        .await
        .unwrap()
        .iter()
        .map(|c| c.label.to_string())
        .collect();
    assert_eq!(labels.first().map(String::as_str), Some("start"));
    assert_eq!(labels.iter().filter(|l| *l == "pause:before").count(), 2);
    assert_eq!(labels.iter().filter(|l| *l == "resume").count(), 2);
    assert_eq!(labels.last().map(String::as_str), Some("complete"));
    // One checkpoint per step: the last step's is the completion, and the two steps after
    // which the run paused (before `send`) wrote the pauses.
    assert_eq!(
        labels.iter().filter(|l| *l == "step").count(),
        10 - 1 - 2,
        "every other step"
    );
}

#[tokio::test]
async fn a_node_interrupt_pauses_commits_its_update_and_is_not_rerun() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let calls = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&calls);
    let mut builder = GraphBuilder::<Ticket>::new("Ask");
    builder
        .add_node_fn("ask", move |_, _| {
            seen.fetch_add(1, Ordering::SeqCst);
            async {
                // A side effect before the interrupt: must happen once.
                Ok(NodeResult::UpdateThen(
                    TicketUpdate::default().log("asked"),
                    Command::Interrupt(
                        InterruptRequest::new("approval", "send the refund?")
                            .with_options(["approve", "reject"]),
                    ),
                ))
            }
        })
        .add_node_fn("refund", |_, _| async { Ok(log("refund")) })
        .add_node_fn("apologise", |_, _| async { Ok(log("apologise")) })
        .add_edge(START, "ask")
        // The router sees the answer: it is folded in before routing.
        .add_conditional_edges(
            "ask",
            |s: &Ticket| {
                if s.approved == Some(true) {
                    "refund"
                } else {
                    "apologise"
                }
            },
            ["refund", "apologise"],
        )
        .add_edge("refund", END)
        .add_edge("apologise", END)
        .set_checkpointer(store.clone());
    let graph = builder.compile().unwrap();
    let mut events = graph.subscribe();
    let paused = graph.invoke(ticket("")).await.unwrap();
    assert_eq!(paused.state().log, ["asked"]);
    let interrupt = &paused.interrupts()[0];
    assert_eq!(interrupt.request.kind, "approval");
    assert_eq!(interrupt.request.options, ["approve", "reject"]);
    assert_eq!(interrupt.point, InterruptPoint::Node);
    let latest = store
        .latest_checkpoint(paused.run_id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.label.to_string(), "pause:approval");
    assert!(latest.frontier.is_empty(), "the route is decided at resume");

    let done = graph
        .resume(paused.run_id(), Answer::Approve)
        .await
        .unwrap();
    assert_eq!(done.state().log, ["asked", "answered ask@1", "refund"]);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the interrupted node was not re-run"
    );
    let shape = shape(&common::drain(&mut events));
    assert_eq!(
        shape,
        [
            "graph.run.started",
            "0 checkpoint start",
            "1 entered ask",
            "1 completed ask update+interrupt:approval",
            "1 checkpoint pause:approval",
            "paused ask@1",
            "graph.resume.started",
            "1 checkpoint resume",
            "graph.resume.completed",
            "2 entered refund",
            "2 completed refund update",
            "2 checkpoint complete",
            "graph.run.completed",
        ]
    );
}

/// `draft → send`, `send` asking first, at most `max_steps` steps.
fn ask_before_send(max_steps: u32) -> CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Before");
    builder
        .add_node_fn("draft", |_, _| async { Ok(log("draft")) })
        .add_node_fn_with(
            "send",
            |_, _| async { Ok(log("send")) },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "draft")
        .add_edge("draft", "send")
        .add_edge("send", END)
        .set_max_steps(max_steps)
        .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    builder.compile().expect("valid graph")
}

#[tokio::test]
async fn a_pause_before_the_next_step_is_the_step_s_own_end_unless_no_step_may_follow() {
    let paused = ask_before_send(2).invoke(ticket("")).await.unwrap();
    assert_eq!(paused.interrupts()[0].id, "send@2");
    // Stepped by hand: the step that ran `draft` is the one that pauses.
    let mut run = ask_before_send(2).start(ticket(""));
    let StepOutcome::Paused(asked) = run.step().await.unwrap() else {
        panic!("the first step pauses before `send`");
    };
    assert_eq!((asked[0].id.as_str(), run.steps()), ("send@2", 1));
    assert_eq!(run.state().log, ["draft"]);
    // With the step limit reached, the next step is never taken: the run fails on the limit,
    // as it did when the pause was asked at the next step's start, and asks nothing.
    let error = ask_before_send(1)
        .invoke(ticket(""))
        .await
        .unwrap_err()
        .error;
    assert!(
        matches!(error, RunError::StepLimit { max_steps: 1 }),
        "{error:?}"
    );
}

#[tokio::test]
async fn interrupt_after_pauses_once_the_node_ran() {
    let mut builder = GraphBuilder::<Ticket>::new("After");
    builder
        .add_node_fn_with(
            "draft",
            |_, _| async { Ok(log("draft")) },
            NodeOptions::new().interrupt_after(),
        )
        .add_node_fn("send", |_, _| async { Ok(log("send")) })
        .add_edge(START, "draft")
        .add_edge("draft", "send")
        .add_edge("send", END)
        .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let graph = builder.compile().unwrap();
    let paused = graph.invoke(ticket("")).await.unwrap();
    assert_eq!(paused.interrupts()[0].point, InterruptPoint::After);
    assert_eq!(paused.state().log, ["draft"]);
    let done = graph
        .resume(paused.run_id(), Answer::Note("looks fine".to_owned()))
        .await
        .unwrap();
    assert_eq!(
        done.state().log,
        ["draft", "answered draft@1", "looks fine", "send"]
    );
}

#[tokio::test]
async fn parallel_interrupts_each_get_an_id_and_resume_takes_an_answer_per_id() {
    let mut builder = GraphBuilder::<Ticket>::new("Parallel");
    let asking = |name: &'static str| {
        move |_: Arc<Ticket>, _| async move {
            Ok(NodeResult::Interrupt(
                InterruptRequest::new("note", format!("{name}?")).resume_to(format!("{name}_done")),
            ))
        }
    };
    builder
        .add_node_fn("fork", |_, _| async { Ok(NodeResult::None) })
        .add_node_fn("left", asking("left"))
        .add_node_fn("right", asking("right"))
        .add_node_fn("quiet", |_, _| async { Ok(log("quiet ran")) })
        .add_node_fn("left_done", |_, _| async { Ok(log("left_done")) })
        .add_node_fn("right_done", |_, _| async { Ok(log("right_done")) })
        .add_edge(START, "fork")
        .add_fork("fork", ["left", "right", "quiet"])
        .add_conditional_edges("left", |_: &Ticket| END, ["left_done", END])
        .add_conditional_edges("right", |_: &Ticket| END, ["right_done", END])
        .add_edge("quiet", END)
        .add_edge("left_done", END)
        .add_edge("right_done", END)
        .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let graph = builder.compile().unwrap();
    let paused = graph.invoke(ticket("")).await.unwrap();
    let ids: Vec<&str> = paused.interrupts().iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["left@2", "right@2"]);
    assert_eq!(
        paused.state().log,
        ["quiet ran"],
        "the sibling kept its result"
    );
    // The pause's snapshot names where the answers lead, as `next`.
    let history = graph.history(paused.run_id()).await.unwrap();
    assert_eq!(history[0].next, ["left_done", "right_done"]);

    let one = graph
        .resume(paused.run_id(), Answer::Approve)
        .await
        .unwrap_err();
    assert!(
        matches!(&one, RunError::Answers { pending, given, .. }
            if pending == &["left@2", "right@2"] && given == &["(one answer without an id)"]),
        "{one:?}"
    );
    let wrong = graph
        .resume(
            paused.run_id(),
            trellis::interrupt::Answers::each([("left@2".to_owned(), Answer::Approve)]),
        )
        .await
        .unwrap_err();
    assert_eq!(
        wrong.to_string(),
        format!(
            "run {} waits for answers to [left@2, right@2], got answers to [left@2]",
            paused.run_id()
        )
    );

    let done = graph
        .resume(
            paused.run_id(),
            trellis::interrupt::Answers::each([
                ("right@2".to_owned(), Answer::Note("from right".to_owned())),
                ("left@2".to_owned(), Answer::Note("from left".to_owned())),
            ]),
        )
        .await
        .unwrap();
    // Answers fold in declaration order whatever order they were given in; each interrupt
    // resumes to its own `resume_to`.
    assert_eq!(
        done.state().log,
        [
            "quiet ran",
            "answered left@2",
            "from left",
            "answered right@2",
            "from right",
            "left_done",
            "right_done"
        ]
    );
}

#[tokio::test]
async fn resume_refuses_completed_failed_missing_and_running_runs() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    let release = std::sync::Mutex::new(Some(release_rx));
    let mut builder = GraphBuilder::<Ticket>::new("Refusals");
    builder
        .add_node_fn("work", move |s, _| {
            let wait = if s.text == "wait" {
                release.lock().unwrap().take()
            } else {
                None
            };
            async move {
                match s.text.as_str() {
                    "fail" => Err("broken".into()),
                    _ => {
                        if let Some(wait) = wait {
                            let _ = wait.await;
                        }
                        Ok(log("work"))
                    }
                }
            }
        })
        .add_edge(START, "work")
        .add_edge("work", END)
        .set_checkpointer(store.clone());
    let graph = builder.compile().unwrap();

    let completed = graph.invoke(ticket("ok")).await.unwrap();
    let error = graph
        .resume(completed.run_id(), Answer::Approve)
        .await
        .unwrap_err();
    assert!(
        matches!(error, RunError::AlreadyCompleted { .. }),
        "{error:?}"
    );

    graph.invoke(ticket("fail")).await.unwrap_err();
    let failed = store.list_runs(1, 0).await.unwrap().remove(0);
    assert_eq!(failed.status, RunStatus::Failed);
    let error = graph
        .resume(&failed.run_id, Answer::Approve)
        .await
        .unwrap_err();
    assert!(matches!(error, RunError::AlreadyFailed { .. }), "{error:?}");

    let missing = RunId::new();
    let error = graph.resume(&missing, Answer::Approve).await.unwrap_err();
    assert!(matches!(error, RunError::RunNotFound { .. }), "{error:?}");

    let mut running = graph.start(ticket("wait"));
    let running_id = running.run_id().clone();
    let task = tokio::spawn(async move { running.run_to_end().await.map(|o| o.into_state()) });
    while store.load_run(&running_id).await.unwrap().is_none() {
        tokio::task::yield_now().await;
    }
    let error = graph
        .resume(&running_id, Answer::Approve)
        .await
        .unwrap_err();
    assert!(matches!(error, RunError::StillRunning { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!("run {running_id} is running, not paused; only a paused run can be resumed")
    );
    release_tx.send(()).unwrap();
    assert_eq!(task.await.unwrap().unwrap().log, ["work"]);

    let mut bare = GraphBuilder::<Ticket>::new("Bare");
    bare.add_node_fn("a", |_, _| async { Ok(NodeResult::None) })
        .add_edge(START, "a")
        .add_edge("a", END);
    let error = bare
        .compile()
        .unwrap()
        .resume(&missing, Answer::Approve)
        .await
        .unwrap_err();
    assert!(
        matches!(error, RunError::NoCheckpointer { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn of_two_resumes_of_one_run_exactly_one_proceeds() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let graph = support(Arc::clone(&store));
    let paused = graph.invoke(ticket("hello")).await.unwrap();
    let other = support(Arc::clone(&store));
    // Both load the run while it is paused; the claim decides.
    let mut first = graph.load(paused.run_id()).await.unwrap();
    let mut second = other.load(paused.run_id()).await.unwrap();
    let answer =
        |run: &trellis::run::Run<Ticket>| vec![(run.interrupts()[0].id.clone(), Answer::Approve)];
    let first_answers = answer(&first);
    let second_answers = answer(&second);
    first
        .resume(trellis::interrupt::Answers::each(first_answers))
        .await
        .unwrap();
    let refused = second
        .resume(trellis::interrupt::Answers::each(second_answers))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, RunError::StillRunning { .. }),
        "{refused:?}"
    );
    let state = first.run_to_end().await.unwrap().into_state();
    assert_eq!(
        state.log.iter().filter(|l| l.starts_with("sent")).count(),
        1
    );
    // Once it completed, a late resume is told so.
    let late = other
        .resume(paused.run_id(), Answer::Approve)
        .await
        .unwrap_err();
    assert!(
        matches!(late, RunError::AlreadyCompleted { .. }),
        "{late:?}"
    );
}

#[tokio::test]
async fn a_paused_run_in_hand_can_be_resumed_without_a_checkpointer() {
    let mut builder = GraphBuilder::<Ticket>::new("InHand");
    builder
        .add_node_fn_with(
            "send",
            |_, _| async { Ok(log("send")) },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "send")
        .add_edge("send", END);
    let graph = builder.compile().unwrap();
    let mut run = graph.start(ticket(""));
    let outcome = run.run_to_end().await.unwrap();
    assert!(outcome.is_paused());
    assert!(matches!(run.step().await, Err(RunError::Paused { .. })));
    run.resume(trellis::interrupt::Answers::each([(
        "send@1".to_owned(),
        Answer::Approve,
    )]))
    .await
    .unwrap();
    let done = run.run_to_end().await.unwrap();
    assert_eq!(done.state().log, ["answered send@1", "send"]);
    assert_eq!(done.state().approved, Some(true));
}

#[tokio::test]
async fn a_run_saved_by_another_topology_is_refused_only_where_it_breaks() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let v1 = common::versioned(Arc::clone(&store), "send", false);
    assert_eq!(
        v1.fingerprint(),
        common::versioned(Arc::clone(&store), "send", false).fingerprint()
    );
    assert_eq!(v1.fingerprint().len(), 16);
    let paused = v1.invoke(ticket("")).await.unwrap();
    let checkpoint = store
        .latest_checkpoint(paused.run_id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(checkpoint.graph_fingerprint, v1.fingerprint());
    assert!(
        checkpoint.state_type.ends_with("Ticket"),
        "{}",
        checkpoint.state_type
    );

    // `send` was renamed: the saved frontier names a node that no longer exists.
    let renamed = common::versioned(Arc::clone(&store), "deliver", false);
    assert_ne!(renamed.fingerprint(), v1.fingerprint());
    let error = renamed
        .resume(paused.run_id(), Answer::Approve)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "run {} cannot be resumed: it was saved by another version of graph `Versioned`: node `send` (runs next) is gone; if a node was renamed, move the run onto this graph with `migrate` (`trellis runs migrate RUN --rename OLD=NEW`)",
            paused.run_id()
        )
    );
    // Refused before anything changed: the run is still paused and v1 can finish it.
    assert_eq!(
        store
            .load_run(paused.run_id())
            .await
            .unwrap()
            .unwrap()
            .status,
        RunStatus::Paused
    );

    // Migrated with the rename stated, the renamed graph resumes it; the question keeps its
    // id. A migration the graph cannot take (no such node) is refused and writes nothing.
    let wrong = trellis::versions::Renames::from([("send".to_owned(), "post".to_owned())]);
    let refused = renamed.migrate(paused.run_id(), &wrong).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .ends_with("node `post` (runs next) is gone"),
        "{refused}"
    );
    let before = store.list_checkpoints(paused.run_id()).await.unwrap();
    let renames = trellis::versions::Renames::from([("send".to_owned(), "deliver".to_owned())]);
    let moved = renamed.migrate(paused.run_id(), &renames).await.unwrap();
    assert_eq!(moved.checkpoint, before.last().unwrap().id + 1);
    assert_eq!(moved.from, v1.fingerprint());
    let done = renamed
        .resume(paused.run_id(), Answer::Approve)
        .await
        .unwrap();
    assert_eq!(done.state().log, ["draft", "answered send@2", "last"]);

    // A node added elsewhere does not break a saved run: it resumes as it is.
    let paused = v1.invoke(ticket("")).await.unwrap();
    let extended = common::versioned(Arc::clone(&store), "send", true);
    assert_ne!(extended.fingerprint(), v1.fingerprint());
    let done = extended
        .resume(paused.run_id(), Answer::Approve)
        .await
        .unwrap();
    assert_eq!(done.state().log, ["draft", "answered send@2", "last"]);
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Other(u32);
impl trellis::WholeState for Other {}
impl trellis::interrupt::ApplyResume for Other {
    type Input = ();
    fn apply_resume(&self, _: &trellis::interrupt::Interrupt, _: ()) -> Other {
        self.clone()
    }
}

#[tokio::test]
async fn a_run_saved_with_another_state_type_is_refused() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let paused = common::versioned(Arc::clone(&store), "send", false)
        .invoke(ticket(""))
        .await
        .unwrap();
    let mut builder = GraphBuilder::<Other>::new("Versioned");
    builder
        .add_node_fn("draft", |_, _| async { Ok(NodeResult::None) })
        .add_node_fn("send", |_, _| async { Ok(NodeResult::None) })
        .add_edge(START, "draft")
        .add_edge("draft", "send")
        .add_edge("send", END)
        .set_checkpointer(store.clone());
    let error = builder
        .compile()
        .unwrap()
        .resume(paused.run_id(), ())
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("it was saved with state type `") && text.contains("Ticket`"),
        "{text}"
    );
    assert!(text.ends_with("Other`"), "{text}");
}

/// A state whose `#[answer]` field takes a person's decision: no `ApplyResume` by hand.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, trellis::GraphState)]
struct Reply {
    text: String,
    #[answer]
    decision: Option<trellis::interrupt::Decision>,
    #[reducer(append)]
    sent: Vec<String>,
}

fn reply_graph(store: Arc<InMemoryCheckpointer>) -> CompiledGraph<Reply> {
    let mut builder = GraphBuilder::<Reply>::new("Reply");
    builder
        .add_node_fn("draft", |_, _| async {
            Ok(ReplyUpdate::default()
                .text("hello".to_owned())
                .decision(None)
                .into())
        })
        .add_node_fn_with(
            "send",
            |reply: Arc<Reply>, _| async move {
                let approved = reply
                    .decision
                    .as_ref()
                    .is_some_and(trellis::interrupt::Decision::is_approved);
                let update = ReplyUpdate::default();
                Ok(if approved {
                    update.sent(reply.text.clone())
                } else {
                    update
                }
                .into())
            },
            NodeOptions::new()
                .interrupt_before()
                .question("Send this reply?"),
        )
        .add_edge(START, "draft")
        .add_edge("draft", "send")
        .add_conditional_edges(
            "send",
            |reply: &Reply| match reply.decision {
                Some(trellis::interrupt::Decision::Approve) => END,
                _ => "draft",
            },
            [END, "draft"],
        )
        .set_checkpointer(store);
    builder.compile().expect("a sound graph")
}

#[tokio::test]
async fn an_answer_field_takes_decisions_and_the_pause_asks_its_own_question() {
    let graph = reply_graph(Arc::new(InMemoryCheckpointer::new()));
    let paused = graph.invoke(Reply::default()).await.unwrap();
    assert_eq!(paused.interrupts()[0].request.question, "Send this reply?");
    // A rejection lands in the field; the router sends the run back to be redrafted.
    let again = graph
        .resume(
            paused.run_id(),
            trellis::interrupt::Decision::reject("too short"),
        )
        .await
        .unwrap();
    assert!(
        again.is_paused(),
        "redrafted, and paused again before `send`"
    );
    assert!(
        again.state().decision.is_none(),
        "the redraft cleared the answer"
    );
    let done = graph
        .resume(again.run_id(), trellis::interrupt::Decision::Approve)
        .await
        .unwrap();
    assert!(!done.is_paused());
    assert_eq!(done.state().sent, ["hello"]);
    assert_eq!(
        done.state().decision,
        Some(trellis::interrupt::Decision::Approve)
    );
}

/// LangGraph's `Command(resume=…, update=…, goto=…)`: the update folded in before the
/// answers, in the same `resume` checkpoint; `goto`'s node run next beside what the answers
/// lead to; a `goto` to no node refused before anything is written.
#[tokio::test]
async fn a_resume_can_update_the_state_and_add_a_node_to_the_next_step() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let graph = common::approval_graph(Arc::clone(&store));
    let paused = graph.invoke(ticket("refund")).await.unwrap();
    assert!(paused.is_paused());
    let run_id = paused.run_id().clone();

    let refused = graph.resume(&run_id, Answer::Approve).goto("nowhere").await;
    assert!(
        matches!(refused, Err(RunError::UnknownNode { .. })),
        "{refused:?}"
    );
    let still = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(still.status, trellis::checkpoint::RunStatus::Paused);

    let done = graph
        .resume(&run_id, Answer::Approve)
        .update(TicketUpdate::default().log("edited by a person"))
        .await
        .unwrap();
    assert_eq!(
        done.state().log,
        ["draft", "edited by a person", "answered send@2", "sent"]
    );
    let resumed = graph
        .history(&run_id)
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.label.to_string() == "resume")
        .unwrap();
    assert_eq!(
        resumed.state.log,
        ["draft", "edited by a person", "answered send@2"],
        "checkpointed with the answers"
    );

    // `goto`: `draft` runs again beside `send`, and leads to `send`, which asks again.
    let again = graph.invoke(ticket("refund")).await.unwrap();
    let steered = graph
        .resume(again.run_id(), Answer::Approve)
        .goto("draft")
        .await
        .unwrap();
    assert!(steered.is_paused(), "`draft` leads to `send`, which asks");
    assert_eq!(
        steered.state().log,
        ["draft", "answered send@2", "draft", "sent"]
    );
}

/// `ctx.approved()` is true exactly in the activation a person's answer to the question asked
/// before it let run: not in a node asked nothing, not in the next activation (asked again).
#[tokio::test]
async fn a_node_knows_the_activation_a_person_let_run() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (on_draft, on_send) = (Arc::clone(&seen), Arc::clone(&seen));
    let mut builder = GraphBuilder::<Reply>::new("Reply");
    builder
        .add_node_fn("draft", move |_, ctx| {
            on_draft
                .lock()
                .expect("not poisoned")
                .push(("draft", ctx.approved()));
            async { Ok(ReplyUpdate::default().decision(None).into()) }
        })
        .add_node_fn_with(
            "send",
            move |_, ctx| {
                on_send
                    .lock()
                    .expect("not poisoned")
                    .push(("send", ctx.approved()));
                async { Ok(ReplyUpdate::default().into()) }
            },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "draft")
        .add_edge("draft", "send")
        .add_conditional_edges(
            "send",
            |reply: &Reply| match reply.decision {
                Some(trellis::interrupt::Decision::Approve) => END,
                _ => "draft",
            },
            [END, "draft"],
        )
        .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let graph = builder.compile().expect("a sound graph");
    let paused = graph.invoke(Reply::default()).await.unwrap();
    let run_id = paused.run_id().clone();
    let again = graph
        .resume(&run_id, trellis::interrupt::Decision::reject("no"))
        .await
        .unwrap();
    assert!(again.is_paused(), "asked again before the next `send`");
    graph
        .resume(&run_id, trellis::interrupt::Decision::Approve)
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("draft", false),
            ("send", true),
            ("draft", false),
            ("send", true)
        ]
    );
}
