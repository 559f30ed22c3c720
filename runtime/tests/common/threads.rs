//! Threads, as scenarios every backend runs: state carried from run to run, one run at a time
//! (of runs started at once, one wins), a paused or failed run's thread going on, a thread's
//! history across its runs.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use trellis::checkpoint::{Checkpointer, RunStatus};
use trellis::{CompiledGraph, END, GraphBuilder, NodeError, RunError, START, ThreadId};

use super::{Answer, Ticket, TicketUpdate, approval_graph};

/// START → reply → END: `reply` answers the newest entry of the log; an entry `fail` fails it.
pub fn chat_graph(store: Arc<dyn Checkpointer>) -> CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Chat");
    builder
        .add_node_fn("reply", |ticket, _| async move {
            let heard = ticket.log.last().cloned().unwrap_or_default();
            if heard == "fail" {
                return Err(NodeError::msg("cannot answer `fail`"));
            }
            Ok(TicketUpdate::default()
                .log(format!("re: {heard}"))
                .reviews(1)
                .into())
        })
        .add_edge(START, "reply")
        .add_edge("reply", END)
        .set_checkpointer(store);
    builder.compile().expect("valid graph")
}

fn say(text: &str) -> TicketUpdate {
    TicketUpdate::default().log(text)
}

/// Three runs on one thread: each starts from the state the one before committed, its input
/// folded in by the reducers (`log` appends, `reviews` sums).
pub async fn a_thread_carries_state_from_run_to_run(store: Arc<dyn Checkpointer>) {
    let graph = chat_graph(store);
    let metadata = serde_json::json!({ "user": "ü" })
        .as_object()
        .cloned()
        .unwrap();
    let thread = graph.create_thread(metadata.clone()).await.unwrap();
    assert!(thread.state().await.unwrap().is_none(), "no run yet");
    let mut run_ids = Vec::new();
    for text in ["hi", "how are you", "bye"] {
        let outcome = thread.invoke(say(text)).await.unwrap();
        assert!(!outcome.is_paused());
        run_ids.push(outcome.run_id().clone());
    }
    let state = thread.state().await.unwrap().unwrap();
    assert_eq!(
        state.state.log,
        [
            "hi",
            "re: hi",
            "how are you",
            "re: how are you",
            "bye",
            "re: bye"
        ]
    );
    assert_eq!(state.state.reviews, 3);
    assert_eq!(&state.run_id, run_ids.last().unwrap());
    assert!(state.next.is_empty(), "the newest run completed");

    let runs = thread.runs(10, 0).await.unwrap();
    let listed: Vec<_> = runs.iter().map(|r| r.run_id.clone()).collect();
    assert_eq!(listed, run_ids.iter().rev().cloned().collect::<Vec<_>>());
    assert!(runs.iter().all(|r| r.thread.as_ref() == Some(thread.id())));
    let record = thread.record().await.unwrap();
    assert_eq!(record.head.as_ref(), run_ids.last());
    assert_eq!(record.metadata, metadata);

    // Newest first, across runs: the last run's end and start (its input folded in), then
    // the run before's.
    let history = thread.history(100).await.unwrap();
    let labels: Vec<_> = history.iter().map(|s| s.label.to_string()).collect();
    assert_eq!(
        labels,
        [
            "complete", "start", "complete", "start", "complete", "start"
        ]
    );
    let runs_of: Vec<_> = history.iter().map(|s| &s.run_id).collect();
    let want = [2, 2, 1, 1, 0, 0].map(|i| &run_ids[i]);
    assert_eq!(runs_of, want);
    assert_eq!(
        history[1].state.log,
        ["hi", "re: hi", "how are you", "re: how are you", "bye"]
    );
    assert_eq!(history[1].next, ["reply"]);
    assert_eq!(history[5].state.log, ["hi"]);
    assert_eq!(thread.history(3).await.unwrap(), history[..3]);

    // Found again by id, from a graph built anew.
    let again = graph.thread(thread.id()).await.unwrap();
    assert_eq!(again.state().await.unwrap().unwrap().state, state.state);
    let unknown = ThreadId::new();
    assert!(matches!(
        graph.thread(&unknown).await,
        Err(RunError::ThreadNotFound { thread_id }) if thread_id == unknown
    ));
    assert!(matches!(
        graph
            .create_thread_with_id(thread.id().clone(), Default::default())
            .await,
        Err(RunError::ThreadExists { .. })
    ));
}

/// A run started while the thread's newest still runs is refused, naming that run; once it
/// ends, the next goes on from it.
pub async fn a_busy_thread_refuses_a_second_run(store: Arc<dyn Checkpointer>) {
    let graph = chat_graph(store);
    let thread = graph.create_thread(Default::default()).await.unwrap();
    let mut first = thread.start(say("one")).await.unwrap();
    match thread.start(say("two")).await {
        Err(RunError::ThreadBusy { thread_id, run_id }) => {
            assert_eq!(&thread_id, thread.id());
            assert_eq!(&run_id, first.run_id());
        }
        other => panic!(
            "expected ThreadBusy, got {:?}",
            other.map(|r| r.run_id().clone())
        ),
    }
    first.run_to_end().await.unwrap();
    let second = thread.invoke(say("two")).await.unwrap();
    assert_eq!(second.state().log, ["one", "re: one", "two", "re: two"]);
}

/// Runs started at the same moment from the same state, on threads of a multi-thread
/// runtime: exactly one starts, the others are told the thread is busy. (The winner is run
/// only once every racer has its answer: a racer that came after it ended would rightly start.)
pub async fn of_runs_started_at_once_one_wins(store: Arc<dyn Checkpointer>) {
    let graph = chat_graph(store);
    let thread = graph.create_thread(Default::default()).await.unwrap();
    thread.invoke(say("first")).await.unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(8));
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let (thread, barrier) = (thread.clone(), Arc::clone(&barrier));
            tokio::spawn(async move {
                barrier.wait().await;
                thread.start(say(&format!("racer {i}"))).await
            })
        })
        .collect();
    let mut winners = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(run) => winners.push(run),
            Err(RunError::ThreadBusy { .. }) => {}
            Err(other) => panic!("a racer failed otherwise: {other}"),
        }
    }
    assert_eq!(winners.len(), 1, "one racer starts");
    let done = winners.remove(0).run_to_end().await.unwrap();
    let state = thread.state().await.unwrap().unwrap();
    assert_eq!(&state.run_id, done.run_id());
    assert_eq!(
        state.state.log.len(),
        4,
        "first, its reply, one racer, its reply"
    );
    assert_eq!(thread.runs(10, 0).await.unwrap().len(), 2);
}

/// A run paused on a thread can be answered as any run; new input instead goes on from the
/// pause's state, and the question is left unanswered.
pub async fn a_paused_thread_goes_on_answered_or_not(store: Arc<dyn Checkpointer>) {
    let graph = approval_graph(Arc::clone(&store));
    let thread = graph.create_thread(Default::default()).await.unwrap();
    let paused = thread.invoke(say("please")).await.unwrap();
    assert!(paused.is_paused());
    let state = thread.state().await.unwrap().unwrap();
    assert_eq!(state.next, ["send"]);
    assert_eq!(state.interrupts.len(), 1);
    // Answered: the thread's newest run completes, and the thread is its state.
    graph
        .resume(paused.run_id(), Answer::Approve)
        .await
        .unwrap();
    let state = thread.state().await.unwrap().unwrap();
    assert_eq!(
        state.state.log,
        ["please", "draft", "answered send@2", "sent"]
    );

    // Paused again, and new input given instead of an answer.
    let paused = thread.invoke(say("again")).await.unwrap();
    assert!(paused.is_paused());
    let next = thread.invoke(say("instead")).await.unwrap();
    assert!(next.is_paused());
    assert_eq!(
        next.state().log,
        [
            "please",
            "draft",
            "answered send@2",
            "sent",
            "again",
            "draft",
            "instead",
            "draft"
        ]
    );
    let left = store.load_run(paused.run_id()).await.unwrap().unwrap();
    assert_eq!(
        left.status,
        RunStatus::Paused,
        "the question is left as it was"
    );
}

/// A run that fails leaves the thread at its last committed state: the next run goes on from
/// there, without the failed step's input lost.
pub async fn a_failed_run_s_thread_goes_on(store: Arc<dyn Checkpointer>) {
    let graph = chat_graph(store);
    let thread = graph.create_thread(Default::default()).await.unwrap();
    thread.invoke(say("hi")).await.unwrap();
    let error = thread.invoke(say("fail")).await.unwrap_err();
    assert!(matches!(error, RunError::Node(_)), "{error}");
    let failed = thread.runs(1, 0).await.unwrap().remove(0);
    assert_eq!(
        failed.status,
        RunStatus::Failed,
        "the failed run is the thread's newest"
    );
    let next = thread.invoke(say("ok")).await.unwrap();
    assert_eq!(next.state().log, ["hi", "re: hi", "fail", "ok", "re: ok"]);
}

/// Every scenario, each on a fresh thread of `store`.
pub async fn all(store: Arc<dyn Checkpointer>) {
    a_thread_carries_state_from_run_to_run(Arc::clone(&store)).await;
    a_busy_thread_refuses_a_second_run(Arc::clone(&store)).await;
    of_runs_started_at_once_one_wins(Arc::clone(&store)).await;
    a_paused_thread_goes_on_answered_or_not(Arc::clone(&store)).await;
    a_failed_run_s_thread_goes_on(store).await;
}
