//! A thread's time travel, copies and deletion, as scenarios every backend runs: `update_state`
//! on the thread's state and on an older checkpoint, an edit taken up, a fork from a checkpoint
//! and from a pause, a copy that goes on apart (a subgraph's pause in it), a deleted thread,
//! and what each refuses.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use trellis::checkpoint::{Checkpointer, RunStatus};
use trellis::{CompiledGraph, END, GraphBuilder, RunError, RunId, START, ThreadId};

use super::{Answer, Ticket, TicketUpdate, approval_graph};

/// START → plan → write → END: `plan` logs `plan`, `write` logs `write <text>`.
fn writer_graph(store: Arc<dyn Checkpointer>) -> CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Writer");
    builder
        .add_node_fn("plan", |_, _| async move {
            Ok(TicketUpdate::default().log("plan").into())
        })
        .add_node_fn("write", |ticket: Arc<Ticket>, _| async move {
            Ok(TicketUpdate::default()
                .log(format!("write {}", ticket.text))
                .into())
        })
        .add_edge(START, "plan")
        .add_edge("plan", "write")
        .add_edge("write", END)
        .set_checkpointer(store);
    builder.compile().expect("valid graph")
}

fn topic(text: &str) -> TicketUpdate {
    TicketUpdate::default().text(text.to_owned())
}

/// An edit is the thread's state, with what it leads to pending and parked (no worker takes
/// it); the thread goes on from it when asked, in the same run.
pub async fn an_edit_waits_until_the_thread_proceeds(store: Arc<dyn Checkpointer>) {
    let graph = writer_graph(Arc::clone(&store));
    let thread = graph.create_thread(Default::default()).await.unwrap();
    let first = thread.invoke(topic("tea")).await.unwrap();
    assert_eq!(first.state().log, ["plan", "write tea"]);

    let edit = thread.update_state(topic("coffee"), "plan").await.unwrap();
    assert_ne!(&edit.run_id, first.run_id(), "an edit is a branch");
    let state = thread.state().await.unwrap().unwrap();
    assert_eq!(state.at(), edit);
    assert_eq!(state.label.to_string(), "update");
    assert_eq!(state.next, ["write"]);
    assert_eq!(state.ran, ["plan"]);
    assert_eq!(state.state.text, "coffee");
    assert_eq!(state.state.log, ["plan", "write tea"]);
    let parked = store.load_run(&edit.run_id).await.unwrap().unwrap();
    assert_eq!(parked.status, RunStatus::Paused);
    assert!(parked.interrupts.is_empty(), "parked, with no question");
    assert_eq!(parked.thread.as_ref(), Some(thread.id()));
    let last_of_first = graph.history(first.run_id()).await.unwrap()[0].at();
    assert_eq!(parked.parent, Some(last_of_first));
    assert_eq!(
        thread.record().await.unwrap().head,
        Some(edit.run_id.clone())
    );
    let history = thread.history(2).await.unwrap();
    assert_eq!(history[0].at(), edit);
    assert_eq!(&history[1].run_id, first.run_id());

    let done = thread.proceed().await.unwrap().run_to_end().await.unwrap();
    assert_eq!(done.run_id(), &edit.run_id, "the edit's own run goes on");
    assert_eq!(done.state().log, ["plan", "write tea", "write coffee"]);
    assert_eq!(thread.runs(10, 0).await.unwrap().len(), 2);
    assert!(matches!(
        thread.proceed().await,
        Err(RunError::AlreadyCompleted { .. })
    ));

    // A new run with input on an edited thread goes on from the edit's state.
    thread.update_state(topic("juice"), "plan").await.unwrap();
    let next = thread.invoke(topic("water")).await.unwrap();
    assert_eq!(
        next.state().log,
        ["plan", "write tea", "write coffee", "plan", "write water"]
    );

    // Before any run: the state's default is edited; with nothing done, nothing to go on with.
    let fresh = graph.create_thread(Default::default()).await.unwrap();
    assert!(matches!(
        fresh.proceed().await,
        Err(RunError::NothingPending { thread_id }) if &thread_id == fresh.id()
    ));
    fresh.update_state(topic("soup"), "plan").await.unwrap();
    let done = fresh.proceed().await.unwrap().run_to_end().await.unwrap();
    assert_eq!(done.state().log, ["write soup"]);
}

/// An older checkpoint edited, or forked as it was: a branch the thread goes on from, the runs
/// before it as they were. A fork from a pause asks its question again.
pub async fn an_old_checkpoint_is_edited_or_forked(store: Arc<dyn Checkpointer>) {
    let graph = writer_graph(Arc::clone(&store));
    let thread = graph.create_thread(Default::default()).await.unwrap();
    let first = thread.invoke(topic("tea")).await.unwrap();
    let before = graph.history(first.run_id()).await.unwrap();
    let after_plan = before.iter().find(|s| s.next == ["write"]).unwrap().at();

    let edit = thread
        .update_state_at(&after_plan, topic("milk"), "plan")
        .await
        .unwrap();
    let parked = store.load_run(&edit.run_id).await.unwrap().unwrap();
    assert_eq!(parked.parent.as_ref(), Some(&after_plan));
    let done = thread.proceed().await.unwrap().run_to_end().await.unwrap();
    assert_eq!(done.state().log, ["plan", "write milk"]);

    let mut fork = thread.fork(&after_plan).await.unwrap();
    let fork_id = fork.run_id().clone();
    assert_eq!(thread.record().await.unwrap().head, Some(fork_id.clone()));
    let forked = fork.run_to_end().await.unwrap();
    assert_eq!(forked.state().log, ["plan", "write tea"]);
    let history = thread.history(10).await.unwrap();
    let of_fork: Vec<_> = history.iter().filter(|s| s.run_id == fork_id).collect();
    assert_eq!(of_fork.last().unwrap().label.to_string(), "fork");
    let past_fork = &history[of_fork.len()];
    assert_eq!(
        past_fork.at(),
        after_plan,
        "then the checkpoint it went on from"
    );
    assert_eq!(
        graph.history(first.run_id()).await.unwrap(),
        before,
        "the first run is as it was"
    );

    // Not the thread's: refused, and nothing written.
    let other = graph.create_thread(Default::default()).await.unwrap();
    let runs_before = thread.runs(100, 0).await.unwrap().len();
    assert!(matches!(
        other.fork(&after_plan).await,
        Err(RunError::NotOnThread { .. })
    ));
    assert!(matches!(
        other.update_state_at(&after_plan, topic("x"), "plan").await,
        Err(RunError::NotOnThread { .. })
    ));
    assert!(matches!(
        thread.update_state(topic("x"), "nowhere").await,
        Err(RunError::UnknownNode { .. })
    ));
    assert_eq!(thread.runs(100, 0).await.unwrap().len(), runs_before);
    assert!(other.record().await.unwrap().head.is_none());

    // While a run of the thread runs, it is neither edited nor forked.
    let mut running = thread.start(topic("busy")).await.unwrap();
    assert!(matches!(
        thread.update_state(topic("x"), "plan").await,
        Err(RunError::ThreadBusy { run_id, .. }) if &run_id == running.run_id()
    ));
    assert!(matches!(
        thread.fork(&after_plan).await,
        Err(RunError::ThreadBusy { .. })
    ));
    running.run_to_end().await.unwrap();

    // A fork from a pause is paused with the same question, answered on the branch.
    let approval = approval_graph(Arc::clone(&store));
    let asks = approval.create_thread(Default::default()).await.unwrap();
    let paused = asks
        .invoke(TicketUpdate::default().log("please"))
        .await
        .unwrap();
    let at = approval.history(paused.run_id()).await.unwrap()[0].at();
    let again = asks.fork(&at).await.unwrap();
    assert_eq!(again.interrupts(), paused.interrupts());
    let branch = again.run_id().clone();
    drop(again);
    let answered = approval.resume(&branch, Answer::Approve).await.unwrap();
    assert_eq!(answered.state().log.last().unwrap(), "sent");
}

/// A copy has the thread's state, history and question — a subgraph's, with its child run —
/// under runs of its own: answered there, the original still waits; the original deleted, the
/// copy keeps all of it.
pub async fn a_copy_goes_on_apart_and_outlives_the_original(store: Arc<dyn Checkpointer>) {
    let graph = super::subgraphs::support_graph(Some(Arc::clone(&store)));
    let thread = graph.create_thread(Default::default()).await.unwrap();
    let paused = thread
        .invoke(TicketUpdate::default().log("refund"))
        .await
        .unwrap();
    assert!(paused.is_paused());
    let copy_id = ThreadId::parse("copy-of-refund").unwrap();
    let copy = thread.copy(copy_id.clone()).await.unwrap();
    assert_eq!(copy.id(), &copy_id);
    assert!(matches!(
        thread.copy(copy_id.clone()).await,
        Err(RunError::ThreadExists { .. })
    ));

    let (original, copied) = (
        thread.history(100).await.unwrap(),
        copy.history(100).await.unwrap(),
    );
    assert_eq!(copied.len(), original.len());
    for (a, b) in original.iter().zip(&copied) {
        assert_eq!((&a.state, &a.next, &a.label), (&b.state, &b.next, &b.label));
        assert_eq!(a.interrupts, b.interrupts);
        assert_ne!(a.run_id, b.run_id, "the copy's own runs");
    }
    let head = copy.record().await.unwrap().head.unwrap();
    assert_eq!(copy.runs(10, 0).await.unwrap()[0].run_id, head);
    let child = RunId::from(format!("{head}/review@2"));
    assert!(
        store.load_run(&child).await.unwrap().is_some(),
        "the child run is copied"
    );

    let answered = graph.resume(&head, Answer::Approve).await.unwrap();
    assert_eq!(
        answered.state().log,
        [
            "refund",
            "draft",
            "check",
            "answered approve@2",
            "approved",
            "sent"
        ]
    );
    let still = store.load_run(paused.run_id()).await.unwrap().unwrap();
    assert_eq!(still.status, RunStatus::Paused, "the original still waits");

    // Deleted: the thread, its runs, its child runs; the copy keeps its history.
    let kept = copy.history(100).await.unwrap();
    assert!(kept.len() > copied.len());
    let original_child = RunId::from(format!("{}/review@2", paused.run_id()));
    let mut running = thread
        .start(TicketUpdate::default().log("busy"))
        .await
        .unwrap();
    assert!(matches!(
        thread.clone().delete().await,
        Err(RunError::ThreadBusy { .. })
    ));
    running.run_to_end().await.unwrap();
    let gone = thread.id().clone();
    thread.delete().await.unwrap();
    assert!(matches!(
        graph.thread(&gone).await,
        Err(RunError::ThreadNotFound { .. })
    ));
    assert!(store.load_run(paused.run_id()).await.unwrap().is_none());
    assert!(store.load_run(&original_child).await.unwrap().is_none());
    assert!(
        store
            .list_checkpoints(paused.run_id())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(copy.history(100).await.unwrap(), kept);
    assert!(store.load_run(&child).await.unwrap().is_some());
}

pub async fn all(store: Arc<dyn Checkpointer>) {
    an_edit_waits_until_the_thread_proceeds(Arc::clone(&store)).await;
    an_old_checkpoint_is_edited_or_forked(Arc::clone(&store)).await;
    a_copy_goes_on_apart_and_outlives_the_original(store).await;
}
