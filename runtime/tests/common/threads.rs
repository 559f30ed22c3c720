//! Threads, as scenarios every backend runs: state carried from run to run, one run at a time
//! (of runs started at once, one wins), a paused or failed run's thread going on, a thread's
//! history across its runs.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use std::time::Duration;

use trellis::checkpoint::{Checkpointer, RunStatus};
use trellis::interrupt::{Answers, InterruptPoint};
use trellis::thread::{Multitask, StartOptions, Thread};
use trellis::{CompiledGraph, END, GraphBuilder, NodeError, RunError, RunId, START, ThreadId};

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

/// A run started with breakpoints pauses before and after the nodes named, asking nothing; it
/// goes on past them without an answer (read back from the store, so the breakpoints were
/// kept), where a graph's own question still needs one. The next run has none of them.
pub async fn a_run_pauses_at_its_breakpoints_and_goes_on_past_them(store: Arc<dyn Checkpointer>) {
    let graph = steps_graph(Arc::clone(&store), Duration::ZERO);
    let thread = graph.create_thread(Default::default()).await.unwrap();

    let refused = thread
        .start_with(
            say("go"),
            StartOptions::default().interrupt_before(["nope"]),
        )
        .await
        .map(|run| run.run_id().clone());
    assert!(
        matches!(&refused, Err(RunError::UnknownNode { node, .. }) if node == "nope"),
        "{refused:?}"
    );
    assert!(
        thread.runs(10, 0).await.unwrap().is_empty(),
        "nothing written"
    );

    let options = StartOptions::from(Multitask::Reject)
        .interrupt_before(["two"])
        .interrupt_after(["three"]);
    let mut run = thread.start_with(say("go"), options).await.unwrap();
    let paused = run.run_to_end().await.unwrap();
    assert!(paused.is_paused());
    assert_eq!(paused.state().log, ["go", "one"]);
    let asked = &paused.interrupts()[0];
    assert_eq!(
        (asked.node.as_str(), asked.point),
        ("two", InterruptPoint::Before)
    );
    assert_eq!(thread.state().await.unwrap().unwrap().next, ["two"]);

    let after = graph
        .resume(paused.run_id(), Answers::Proceed)
        .await
        .unwrap();
    assert_eq!(after.state().log, ["go", "one", "two", "three"]);
    let asked = &after.interrupts()[0];
    assert_eq!(
        (asked.node.as_str(), asked.point),
        ("three", InterruptPoint::After)
    );
    let done = graph
        .resume(paused.run_id(), Answers::Proceed)
        .await
        .unwrap();
    assert!(!done.is_paused());
    assert_eq!(done.state().log, ["go", "one", "two", "three"]);

    let next = thread.invoke(say("again")).await.unwrap();
    assert!(!next.is_paused(), "the next run has no breakpoints");

    // A graph's own question is not a breakpoint: going on without an answer is refused.
    let approvals = approval_graph(store);
    let asking = approvals.create_thread(Default::default()).await.unwrap();
    let paused = asking.invoke(say("please")).await.unwrap();
    let refused = approvals.resume(paused.run_id(), Answers::Proceed).await;
    assert!(
        matches!(refused, Err(RunError::Answers { .. })),
        "{refused:?}"
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

/// START → one → two → three → END, each step taking `STEP` and logging its node: a run long
/// enough to start another beside.
pub fn slow_graph(store: Arc<dyn Checkpointer>) -> CompiledGraph<Ticket> {
    steps_graph(store, STEP)
}

/// START → one → two → three → END, each step taking `step` and logging its node.
fn steps_graph(store: Arc<dyn Checkpointer>, step: Duration) -> CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Steps");
    for name in ["one", "two", "three"] {
        builder.add_node_fn(name, move |_, _| async move {
            tokio::time::sleep(step).await;
            Ok(TicketUpdate::default().log(name).into())
        });
    }
    builder
        .add_edge(START, "one")
        .add_edge("one", "two")
        .add_edge("two", "three")
        .add_edge("three", END)
        .set_checkpointer(store);
    builder.compile().expect("valid graph")
}

const STEP: Duration = Duration::from_millis(150);

/// A thread whose first run has completed (`before`), and a second run on it executing in a
/// task of its own, once it has committed its first step: its id and the task.
async fn busy_thread(
    store: Arc<dyn Checkpointer>,
) -> (
    Thread<Ticket>,
    RunId,
    tokio::task::JoinHandle<Result<trellis::Outcome<Ticket>, RunError>>,
) {
    let thread = slow_graph(store)
        .create_thread(Default::default())
        .await
        .unwrap();
    thread.invoke(say("before")).await.unwrap();
    let mut running = thread.start(say("busy")).await.unwrap();
    let run_id = running.run_id().clone();
    let task = tokio::spawn(async move { running.run_to_end().await });
    loop {
        let state = thread.state().await.unwrap().unwrap();
        if state.run_id == run_id && state.state.log.last().map(String::as_str) == Some("one") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    (thread, run_id, task)
}

const BEFORE: [&str; 4] = ["before", "one", "two", "three"];

/// `interrupt`: the running run stops at its next step boundary (its step in flight never
/// committed) and the new run goes on from what it had committed.
pub async fn interrupt_goes_on_from_the_running_run_s_committed_state(
    store: Arc<dyn Checkpointer>,
) {
    let (thread, busy, task) = busy_thread(Arc::clone(&store)).await;
    let mut next = thread
        .start_with(say("instead"), Multitask::Interrupt)
        .await
        .unwrap();
    let outcome = task.await.unwrap();
    assert!(
        matches!(
            outcome,
            Err(RunError::Checkpoint(
                trellis::checkpoint::CheckpointError::Fenced { .. }
            ))
        ),
        "the interrupted run is fenced out: {:?}",
        outcome.map(|o| o.state().log.clone())
    );
    let stopped = store.load_run(&busy).await.unwrap().unwrap();
    assert_eq!(stopped.status, RunStatus::Cancelled);
    assert!(stopped.error.unwrap().contains("interrupted by a new run"));
    let committed: trellis::checkpoint::Checkpoint =
        store.latest_checkpoint(&busy).await.unwrap().unwrap();
    let committed_log = committed.state_as::<super::Ticket>().unwrap().log;
    // Stopped after its first step or its second (the one in flight when it was interrupted
    // may have committed first), never at its end.
    let started: Vec<String> = BEFORE
        .iter()
        .chain(&["busy", "one"])
        .map(|s| s.to_string())
        .collect();
    assert!(committed_log.starts_with(&started), "{committed_log:?}");
    assert!(
        committed_log.len() <= started.len() + 1,
        "{committed_log:?}"
    );
    let done = next.run_to_end().await.unwrap();
    let mut want = committed_log.clone();
    want.extend(["instead", "one", "two", "three"].map(String::from));
    assert_eq!(done.state().log, want);
    let record = store.load_run(done.run_id()).await.unwrap().unwrap();
    assert_eq!(
        record.parent.map(|p| (p.run_id, p.checkpoint)),
        Some((busy, committed.id))
    );
}

/// `rollback`: the running run is cancelled and set aside; the new run goes on from the state
/// it started from, and the thread's history no longer shows it.
pub async fn rollback_goes_on_as_if_the_running_run_never_ran(store: Arc<dyn Checkpointer>) {
    let (thread, busy, task) = busy_thread(Arc::clone(&store)).await;
    let done = thread
        .start_with(say("instead"), Multitask::Rollback)
        .await
        .unwrap()
        .run_to_end()
        .await
        .unwrap();
    assert!(
        task.await.unwrap().is_err(),
        "the rolled-back run is fenced out"
    );
    let mut want = BEFORE.map(String::from).to_vec();
    want.extend(["instead", "one", "two", "three"].map(String::from));
    assert_eq!(done.state().log, want);
    let set_aside = store.load_run(&busy).await.unwrap().unwrap();
    assert_eq!(set_aside.status, RunStatus::Cancelled);
    assert!(
        set_aside
            .error
            .unwrap()
            .contains("rolled back by a new run")
    );
    let history = thread.history(100).await.unwrap();
    assert!(
        history.iter().all(|s| s.run_id != busy),
        "the rolled-back run is not in the history"
    );
    assert_eq!(
        history.len(),
        8,
        "the new run's four checkpoints and the first run's four"
    );
}

/// `enqueue`: the new run waits for the running one to end on its own, then goes on from it.
pub async fn enqueue_runs_after_the_running_run(store: Arc<dyn Checkpointer>) {
    let (thread, busy, task) = busy_thread(Arc::clone(&store)).await;
    let waiting = {
        let thread = thread.clone();
        tokio::spawn(async move {
            thread
                .start_with(say("after"), Multitask::Enqueue)
                .await
                .unwrap()
                .run_to_end()
                .await
                .unwrap()
        })
    };
    let first = task.await.unwrap().unwrap();
    let mut want = BEFORE.map(String::from).to_vec();
    want.extend(["busy", "one", "two", "three"].map(String::from));
    assert_eq!(first.state().log, want, "the running run was left to end");
    let done = waiting.await.unwrap();
    want.extend(["after", "one", "two", "three"].map(String::from));
    assert_eq!(done.state().log, want);
    let record = store.load_run(done.run_id()).await.unwrap().unwrap();
    let ended = store.latest_checkpoint(&busy).await.unwrap().unwrap();
    assert_eq!(
        record.parent.map(|p| (p.run_id, p.checkpoint)),
        Some((busy, ended.id))
    );
}

/// A thread's run read as a stream shows where it starts from (the thread's state with the
/// input folded in), then each step, as a new run's stream does.
pub async fn a_thread_s_run_streams_from_its_start(store: Arc<dyn Checkpointer>) {
    use trellis::stream::{StreamItem, StreamMode};
    let graph = chat_graph(store);
    let thread = graph.create_thread(Default::default()).await.unwrap();
    thread.invoke(say("hi")).await.unwrap();
    let mut stream = thread
        .stream(say("again"), Multitask::Reject, StreamMode::Values)
        .await
        .unwrap();
    let mut seen = Vec::new();
    while let Some(item) = stream.next().await {
        if let StreamItem::Values { state, .. } = item {
            seen.push(state.log);
        }
    }
    assert_eq!(
        seen,
        [
            vec!["hi", "re: hi", "again"],
            vec!["hi", "re: hi", "again", "re: again"],
        ]
    );
    assert!(!stream.finish().await.unwrap().is_paused());
}

/// Every scenario, each on a fresh thread of `store`.
pub async fn all(store: Arc<dyn Checkpointer>) {
    a_thread_carries_state_from_run_to_run(Arc::clone(&store)).await;
    a_busy_thread_refuses_a_second_run(Arc::clone(&store)).await;
    of_runs_started_at_once_one_wins(Arc::clone(&store)).await;
    a_paused_thread_goes_on_answered_or_not(Arc::clone(&store)).await;
    a_run_pauses_at_its_breakpoints_and_goes_on_past_them(Arc::clone(&store)).await;
    a_failed_run_s_thread_goes_on(Arc::clone(&store)).await;
    a_thread_s_run_streams_from_its_start(Arc::clone(&store)).await;
    interrupt_goes_on_from_the_running_run_s_committed_state(Arc::clone(&store)).await;
    rollback_goes_on_as_if_the_running_run_never_ran(Arc::clone(&store)).await;
    enqueue_runs_after_the_running_run(Arc::clone(&store)).await;
    super::thread_edits::all(store).await;
}
