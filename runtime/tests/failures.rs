//! Compile errors, and the ways a run fails or recovers: node errors, on_error, retry,
//! timeout, panics, cancellation.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use common::{Ticket, TicketUpdate, log, ticket};
use trellis::{
    END, GraphBuilder, NodeError, NodeOptions, NodeResult, RunError, START,
    checkpoint::Checkpointer, checkpoint::InMemoryCheckpointer, checkpoint::RunStatus,
    error::FailureKind, run::CancellationToken,
};

fn noop() -> impl Fn(
    Arc<Ticket>,
    trellis::NodeContext,
) -> std::future::Ready<Result<NodeResult<TicketUpdate>, NodeError>>
+ Send
+ Sync
+ 'static {
    |_, _| std::future::ready(Ok(NodeResult::None))
}

#[test]
fn unknown_and_dangling_nodes_are_compile_errors_with_the_language_codes() {
    let mut builder = GraphBuilder::<Ticket>::new("Broken");
    builder
        .add_node_fn("draft", noop())
        .add_node_fn("review", noop())
        .add_node_fn("orphan", noop())
        .add_edge(START, "draft")
        .add_edge("draft", "reveiw")
        .add_conditional_edges("review", |_: &Ticket| END, ["draft", END]);
    let error = builder.compile().unwrap_err();
    assert_eq!(codes(&error), ["E0202", "E0204"]);
    assert_eq!(
        error.diagnostics[0].message, "node `reveiw` is not declared in graph `Broken`",
        "the language's message for the same mistake"
    );
    assert_eq!(
        error.diagnostics[0].help.as_deref(),
        Some("did you mean `review`?")
    );
    assert_eq!(
        error.diagnostics[1].message,
        "node `orphan` has no outgoing edge"
    );
    assert!(
        error
            .to_string()
            .starts_with("graph has 2 errors\nerror[E0202]: ")
    );
}

#[test]
fn an_undeclared_name_near_no_declared_one_is_answered_with_the_declared_nodes() {
    let mut builder = GraphBuilder::<Ticket>::new("Broken");
    builder
        .add_node_fn("draft", noop())
        .add_node_fn("review", noop())
        .add_edge(START, "draft")
        .add_edge("draft", "publish")
        .add_edge("review", END);
    let error = builder.compile().unwrap_err();
    assert_eq!(
        error.diagnostics[0].help.as_deref(),
        Some(
            "declare it with `add_node(\"publish\", …)`, or use a declared node: `draft`, `review`"
        )
    );
    let mut many = GraphBuilder::<Ticket>::new("Many");
    for name in ["a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"] {
        many.add_node_fn(name, noop()).add_edge(name, END);
    }
    many.add_edge(START, "zzzzzz");
    let error = many.compile().unwrap_err();
    let help = error.diagnostics[0].help.clone().unwrap();
    assert!(
        help.ends_with("`a0`, `a1`, `a2`, `a3`, `a4`, `a5`, `a6`, `a7`, and 2 more"),
        "{help}"
    );
}

#[test]
fn every_builder_rule_reports_its_code() {
    let case = |build: &dyn Fn(&mut GraphBuilder<Ticket>)| {
        let mut builder = GraphBuilder::<Ticket>::new("Case");
        build(&mut builder);
        builder
            .compile()
            .err()
            .map(|e| codes(&e))
            .unwrap_or_default()
    };
    assert_eq!(case(&|_| {}), ["E0208"]);
    assert_eq!(
        case(&|b| {
            b.add_node_fn("a", noop()).add_edge("a", END);
        }),
        ["E0201"]
    );
    assert_eq!(
        case(&|b| {
            b.add_node_fn("a", noop())
                .add_node_fn("a", noop())
                .add_edge(START, "a")
                .add_edge("a", END);
        }),
        ["E0102"]
    );
    assert_eq!(
        case(&|b| {
            b.add_node_fn(END, noop())
                .add_node_fn("a", noop())
                .add_edge(START, "a")
                .add_edge("a", END);
        }),
        ["E0103"]
    );
    assert_eq!(
        case(&|b| {
            b.add_node_fn("a", noop())
                .add_node_fn("b", noop())
                .add_edge(START, "a")
                .add_edge(START, "b")
                .add_edge("a", END)
                .add_edge("b", END);
        }),
        ["E0203"]
    );
    assert_eq!(
        case(&|b| {
            b.add_node_fn("a", noop())
                .add_edge(START, "a")
                .add_edge("a", END)
                .add_edge("a", "a");
        }),
        ["E0205"]
    );
    assert_eq!(
        case(&|b| {
            b.add_node_fn("a", noop())
                .add_node_fn("b", noop())
                .add_edge(START, "a")
                .add_fork("a", ["b", "b"])
                .add_edge("b", END);
        }),
        ["E0206"]
    );
    assert_eq!(
        case(&|b| {
            b.add_node_fn("a", noop())
                .add_edge(START, "a")
                .add_fork("a", ["a", END])
                .add_edge(END, "a");
        }),
        ["E0207", "E0207"]
    );
    assert_eq!(
        case(&|b| {
            b.add_node_fn_with(
                "a",
                noop(),
                NodeOptions::new().on_error("nobody").max_visits(0),
            )
            .add_edge(START, "a")
            .add_edge("a", START)
            .set_max_steps(0);
        }),
        ["E0002", "E0002", "E0202", "E0207"]
    );
}

fn codes(error: &trellis::CompileError) -> Vec<&'static str> {
    error
        .codes()
        .into_iter()
        .map(|code| code.as_str())
        .collect()
}

#[tokio::test]
async fn a_node_error_fails_the_run_and_is_recorded_with_the_last_committed_state() {
    let store = Arc::new(InMemoryCheckpointer::new());
    let mut builder = GraphBuilder::<Ticket>::new("Failing");
    builder
        .add_node_fn("ok", |_, _| async { Ok(log("ok")) })
        .add_node_fn("boom", |_, _| async {
            Err(NodeError::msg("the invoice service said 503"))
        })
        .add_edge(START, "ok")
        .add_edge("ok", "boom")
        .add_edge("boom", END)
        .set_checkpointer(store.clone());
    let graph = builder.compile().unwrap();
    let error = graph.invoke(ticket("")).await.unwrap_err().error;
    let RunError::Node(failure) = &error else {
        panic!("expected a node error, got {error:?}");
    };
    assert_eq!(
        (failure.node.as_str(), failure.step, failure.attempts),
        ("boom", 2, 1)
    );
    assert_eq!(failure.kind, FailureKind::Failed);
    assert_eq!(
        error.to_string(),
        "node `boom` failed in step 2 after 1 attempt: the invoice service said 503"
    );
    let runs = store.list_runs(10, 0).await.unwrap();
    assert_eq!(runs[0].status, RunStatus::Failed);
    assert_eq!(runs[0].error.as_deref(), Some(error.to_string().as_str()));
    assert_eq!(runs[0].state["log"], serde_json::json!(["ok"]));
    let latest = store
        .latest_checkpoint(&runs[0].run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.label.to_string(), "failed");
    assert_eq!(
        latest.frontier,
        ["boom"],
        "the failed checkpoint shows the step that failed"
    );
}

#[tokio::test]
async fn on_error_routes_the_failure_to_its_handler_which_receives_it() {
    let mut builder = GraphBuilder::<Ticket>::new("Handled");
    builder
        .add_node_fn_with(
            "lookup",
            |_, _| async { Err(NodeError::msg("no such invoice")) },
            NodeOptions::new().on_error("fallback"),
        )
        .add_node_fn("fallback", |_, ctx| async move {
            let failure = ctx.failure().expect("a handler receives the failure");
            Ok(log(&format!(
                "handled {} from {}",
                failure.message, failure.node
            )))
        })
        .add_node_fn("draft", |_, _| async { Ok(log("draft")) })
        .add_edge(START, "lookup")
        .add_edge("lookup", "draft")
        .add_edge("fallback", "draft")
        .add_edge("draft", END);
    let outcome = builder.compile().unwrap().invoke(ticket("")).await.unwrap();
    assert_eq!(
        outcome.state().log,
        ["handled no such invoice from lookup", "draft"]
    );
}

/// A node that is not retried runs its attempt 1, whether or not anyone observes the run (the
/// two take different activation paths).
#[tokio::test]
async fn a_node_without_retry_runs_attempt_one() {
    let mut builder = GraphBuilder::<Ticket>::new("Once");
    builder
        .add_node_fn("once", |_, ctx| async move {
            Ok(log(&format!("attempt {}", ctx.attempt())))
        })
        .add_edge(START, "once")
        .add_edge("once", END);
    let graph = builder.compile().unwrap();
    let unobserved = graph.invoke(ticket("")).await.unwrap();
    assert_eq!(unobserved.state().log, ["attempt 1"]);
    let _events = graph.subscribe();
    let observed = graph.invoke(ticket("")).await.unwrap();
    assert_eq!(observed.state().log, ["attempt 1"]);
}

#[tokio::test(start_paused = true)]
async fn retry_with_backoff_then_success() {
    let options = NodeOptions::new().retry(3, Duration::from_millis(200));
    let (attempts, elapsed, log) = failing(
        2,
        |n| NodeError::msg(format!("attempt {n} failed")),
        options,
    )
    .await;
    assert_eq!(log.unwrap(), ["succeeded on attempt 3"]);
    assert_eq!(attempts, 3);
    // 200 ms before the 2nd attempt, 400 ms before the 3rd (tokio's paused clock).
    assert_eq!(elapsed, Duration::from_millis(600));
}

/// A node failing `failures` times in a row with `error`, under `options`: the attempts it made
/// and how long the run took on tokio's paused clock.
async fn failing(
    failures: u32,
    error: fn(u32) -> NodeError,
    options: NodeOptions,
) -> (u32, Duration, Result<Vec<String>, RunError>) {
    let attempts = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&attempts);
    let mut builder = GraphBuilder::<Ticket>::new("Flaky");
    builder
        .add_node_fn_with(
            "flaky",
            move |_, ctx| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.fetch_add(1, Ordering::SeqCst);
                    if ctx.attempt() <= failures {
                        Err(error(ctx.attempt()))
                    } else {
                        Ok(log(&format!("succeeded on attempt {}", ctx.attempt())))
                    }
                }
            },
            options,
        )
        .add_edge(START, "flaky")
        .add_edge("flaky", END);
    let graph = builder.compile().expect("the graph compiles");
    let started = tokio::time::Instant::now();
    let outcome = graph.invoke(ticket("")).await;
    (
        attempts.load(Ordering::SeqCst),
        started.elapsed(),
        outcome
            .map(|done| done.state().log.clone())
            .map_err(|failure| failure.error),
    )
}

#[tokio::test(start_paused = true)]
async fn the_backoff_doubles_up_to_its_max() {
    let options = NodeOptions::new()
        .retry(5, Duration::from_millis(100))
        .max_backoff(Duration::from_millis(300));
    let (attempts, elapsed, log) =
        failing(4, |n| NodeError::msg(format!("attempt {n}")), options).await;
    assert_eq!(attempts, 5);
    assert_eq!(log.unwrap(), ["succeeded on attempt 5"]);
    // 100, 200, then 300 twice (400 and 800 capped).
    assert_eq!(elapsed, Duration::from_millis(900));
}

#[tokio::test(start_paused = true)]
async fn jitter_spreads_each_wait_within_half_of_it() {
    let plain = NodeOptions::new().retry(6, Duration::from_millis(1000));
    let (_, unspread, _) = failing(6, |_| NodeError::msg("down"), plain.clone()).await;
    assert_eq!(
        unspread,
        Duration::from_millis(1000 + 2000 + 4000 + 8000 + 16000 + 32000)
    );
    let (attempts, spread, log) = failing(6, |_| NodeError::msg("down"), plain.jitter()).await;
    assert_eq!((attempts, log.unwrap().len()), (7, 1));
    // Each wait is between half and one and a half of its unspread length; six random draws
    // summing to exactly the unspread total would be a coincidence.
    assert!(
        spread >= unspread / 2 && spread <= unspread * 3 / 2,
        "{spread:?}"
    );
    assert_ne!(spread, unspread);
}

#[tokio::test(start_paused = true)]
async fn retry_on_names_the_failures_retried() {
    let timeout = |_| NodeError::Timeout(Duration::from_millis(5));
    let error = |_| NodeError::msg("down");
    let panic = |_| NodeError::Panicked("bug".into());
    let only_timeouts = || {
        NodeOptions::new()
            .retry(2, Duration::ZERO)
            .retry_on([FailureKind::Timeout])
    };
    assert_eq!(failing(1, timeout, only_timeouts()).await.0, 2);
    let (attempts, _, outcome) = failing(1, error, only_timeouts()).await;
    assert_eq!(
        attempts, 1,
        "an error is not retried when only timeouts are"
    );
    assert!(matches!(outcome, Err(RunError::Node(f)) if f.kind == FailureKind::Failed));
    // Without `retry_on`, a panic is not retried; named, it is.
    let plain = NodeOptions::new().retry(2, Duration::ZERO);
    assert_eq!(failing(1, panic, plain.clone()).await.0, 1);
    let with_panics = plain.retry_on([FailureKind::Panicked, FailureKind::Failed]);
    let (attempts, _, outcome) = failing(1, panic, with_panics).await;
    assert_eq!(attempts, 2);
    assert_eq!(outcome.unwrap(), ["succeeded on attempt 2"]);
}

#[tokio::test(start_paused = true)]
async fn retries_run_out() {
    let mut builder = GraphBuilder::<Ticket>::new("Hopeless");
    builder
        .add_node_fn_with(
            "hopeless",
            |_, _| async { Err(NodeError::msg("down")) },
            NodeOptions::new().retry(2, Duration::from_millis(10)),
        )
        .add_edge(START, "hopeless")
        .add_edge("hopeless", END);
    let error = builder
        .compile()
        .unwrap()
        .invoke(ticket(""))
        .await
        .unwrap_err()
        .error;
    assert!(
        matches!(&error, RunError::Node(f) if f.attempts == 3),
        "{error:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_node_over_its_timeout_fails_with_a_timeout() {
    let mut builder = GraphBuilder::<Ticket>::new("Slow");
    builder
        .add_node_fn_with(
            "slow",
            |_, _| async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok(log("too late"))
            },
            NodeOptions::new().timeout(Duration::from_secs(10)),
        )
        .add_edge(START, "slow")
        .add_edge("slow", END);
    let error = builder
        .compile()
        .unwrap()
        .invoke(ticket(""))
        .await
        .unwrap_err()
        .error;
    let RunError::Node(failure) = &error else {
        panic!("expected a node error, got {error:?}");
    };
    assert_eq!(failure.kind, FailureKind::Timeout);
    assert_eq!(failure.message, "timed out after 10s");
}

#[tokio::test]
async fn a_panicking_node_becomes_a_node_error_and_other_runs_carry_on() {
    let mut builder = GraphBuilder::<Ticket>::new("Panicky");
    builder
        .add_node_fn("maybe_panic", |state, _| async move {
            if state.text == "panic" {
                panic!("index out of bounds in the parser");
            }
            Ok(log("fine"))
        })
        .add_node_fn("sibling", |_, _| async { Ok(log("sibling")) })
        .add_node_fn("root", |_, _| async { Ok(NodeResult::None) })
        .add_edge(START, "root")
        .add_fork("root", ["maybe_panic", "sibling"])
        .add_edge("maybe_panic", END)
        .add_edge("sibling", END);
    let graph = builder.compile().unwrap();
    let (bad, good) = tokio::join!(graph.invoke(ticket("panic")), graph.invoke(ticket("ok")));
    let RunError::Node(failure) = bad.unwrap_err().error else {
        panic!("expected a node error");
    };
    assert_eq!(failure.kind, FailureKind::Panicked);
    assert_eq!(
        failure.message,
        "panicked: index out of bounds in the parser"
    );
    assert_eq!(good.unwrap().state().log, ["fine", "sibling"]);

    // Inline (single-node step) panics are caught too.
    let mut builder = GraphBuilder::<Ticket>::new("Inline");
    builder
        .add_node_fn("alone", |_, _| async { panic!("alone") })
        .add_edge(START, "alone")
        .add_edge("alone", END);
    let error = builder
        .compile()
        .unwrap()
        .invoke(ticket(""))
        .await
        .unwrap_err()
        .error;
    assert!(matches!(error, RunError::Node(f) if f.kind == FailureKind::Panicked));
}

/// A node that does work in `run` itself, before it hands over its future.
struct PanicsWhenCalled;

impl trellis::Node<Ticket> for PanicsWhenCalled {
    fn run<'node, 'ctx, 'work>(
        &'node self,
        _: Arc<Ticket>,
        _: &'ctx mut trellis::NodeContext,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Result<NodeResult<TicketUpdate>, NodeError>>
                + Send
                + 'work,
        >,
    >
    where
        'node: 'work,
        'ctx: 'work,
        Self: 'work,
    {
        panic!("while called")
    }
}

#[tokio::test]
async fn a_node_that_panics_before_returning_its_future_is_caught_too() {
    fn before_its_future(
        _: Arc<Ticket>,
        _: trellis::NodeContext,
    ) -> std::future::Ready<Result<NodeResult<TicketUpdate>, NodeError>> {
        panic!("before its future")
    }
    // A closure node and a hand-written one, each alone in its step and beside a sibling.
    for (alone, closure) in [(true, true), (true, false), (false, true), (false, false)] {
        let mut builder = GraphBuilder::<Ticket>::new("Eager");
        if closure {
            builder.add_node_fn("eager", before_its_future);
        } else {
            builder.add_node("eager", PanicsWhenCalled);
        }
        builder
            .add_node_fn("sibling", |_, _| async { Ok(log("sibling")) })
            .add_edge("eager", END)
            .add_edge("sibling", END);
        if alone {
            builder.add_edge(START, "eager");
        } else {
            builder.add_fork(START, ["eager", "sibling"]);
        }
        let error = builder
            .compile()
            .unwrap()
            .invoke(ticket(""))
            .await
            .unwrap_err()
            .error;
        let RunError::Node(failure) = error else {
            panic!("expected a node error, got {error:?}");
        };
        let expected = if closure {
            "before its future"
        } else {
            "while called"
        };
        assert_eq!(
            (failure.kind, failure.message.as_str()),
            (
                FailureKind::Panicked,
                format!("panicked: {expected}").as_str()
            ),
            "alone: {alone}, closure: {closure}"
        );
    }
}

#[tokio::test]
async fn cancellation_stops_a_node_midway() {
    let (entered_tx, entered_rx) = tokio::sync::oneshot::channel::<()>();
    let entered_tx = std::sync::Mutex::new(Some(entered_tx));
    let finished = Arc::new(AtomicU32::new(0));
    let finished_seen = Arc::clone(&finished);
    let mut builder = GraphBuilder::<Ticket>::new("Long");
    builder
        .add_node_fn("long", move |_, _| {
            if let Some(tx) = entered_tx.lock().unwrap().take() {
                let _ = tx.send(());
            }
            let finished = Arc::clone(&finished_seen);
            async move {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                finished.fetch_add(1, Ordering::SeqCst);
                Ok(log("finished"))
            }
        })
        .add_edge(START, "long")
        .add_edge("long", END);
    let graph = builder.compile().unwrap();
    let token = CancellationToken::new();
    let run = graph.start(ticket("")).with_cancellation(token.clone());
    let handle = tokio::spawn(async move {
        let mut run = run;
        let result = run.run_to_end().await;
        (result, run.state().clone())
    });
    entered_rx.await.unwrap();
    token.cancel();
    let (result, state) = tokio::time::timeout(Duration::from_secs(10), handle)
        .await
        .expect("cancellation ends the run promptly")
        .unwrap();
    assert!(
        matches!(result, Err(RunError::Cancelled { step: 1 })),
        "{result:?}"
    );
    assert_eq!(finished.load(Ordering::SeqCst), 0);
    assert!(state.log.is_empty());
}

#[tokio::test]
async fn cancellation_before_a_step_stops_the_run_between_steps() {
    let mut builder = GraphBuilder::<Ticket>::new("Between");
    builder
        .add_node_fn("a", |_, _| async { Ok(log("a")) })
        .add_node_fn("b", |_, _| async { Ok(log("b")) })
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", END);
    let graph = builder.compile().unwrap();
    let mut run = graph.start(ticket(""));
    run.step().await.unwrap();
    run.cancellation().cancel();
    assert!(matches!(
        run.step().await,
        Err(RunError::Cancelled { step: 2 })
    ));
    assert_eq!(run.state().log, ["a"]);
}

#[tokio::test]
async fn a_deferred_handler_keeps_its_failure_until_it_runs() {
    let mut builder = GraphBuilder::<Ticket>::new("LateHandler");
    builder
        .add_node_fn("root", |_, _| async { Ok(NodeResult::None) })
        .add_node_fn_with(
            "fragile",
            |_, _| async { Err(NodeError::msg("broke early")) },
            NodeOptions::new().on_error("report"),
        )
        .add_node_fn("long1", |_, _| async { Ok(log("long1")) })
        .add_node_fn("long2", |_, _| async { Ok(log("long2")) })
        .add_node_fn_with(
            "report",
            |_, ctx| async move {
                let seen = ctx
                    .failure()
                    .map_or("no failure".to_owned(), |f| f.message.clone());
                Ok(log(&format!("report: {seen}")))
            },
            NodeOptions::new().defer(),
        )
        .add_edge(START, "root")
        .add_fork("root", ["fragile", "long1"])
        .add_edge("fragile", "report")
        .add_edge("long1", "long2")
        .add_edge("long2", "report")
        .add_edge("report", END);
    let outcome = builder.compile().unwrap().invoke(ticket("")).await.unwrap();
    assert_eq!(
        outcome.state().log,
        ["long1", "long2", "report: broke early"]
    );
}

/// A runtime without timers (`Builder::new_current_thread()` without `enable_time`) cannot wait
/// for a backoff or time a node out: one rule for both, the node fails with tokio's panic (a
/// panic, not retried) and says what it could not wait for; the caller does not panic.
#[test]
fn without_timers_a_backoff_or_a_timeout_fails_the_node_not_the_caller() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime without timers");
    let flaky = |options: NodeOptions| {
        let mut builder = GraphBuilder::<Ticket>::new("Flaky");
        builder
            .add_node_fn_with("call", |_, _| async { Err(NodeError::msg("503")) }, options)
            .add_edge(START, "call")
            .add_edge("call", END);
        builder.compile().unwrap()
    };
    let backoff = flaky(NodeOptions::new().retry(2, Duration::from_millis(10)));
    let error = runtime
        .block_on(backoff.invoke(ticket("")))
        .expect_err("the node fails")
        .error;
    let RunError::Node(failure) = &error else {
        panic!("expected a node failure, got {error:?}");
    };
    assert_eq!((failure.node.as_str(), failure.attempts), ("call", 1));
    assert_eq!(failure.kind, FailureKind::Panicked);
    assert!(
        failure
            .message
            .starts_with("panicked: cannot wait 10ms before retrying: "),
        "{}",
        failure.message
    );
    let timed = flaky(
        NodeOptions::new()
            .timeout(Duration::from_secs(1))
            .retry(2, Duration::ZERO),
    );
    let error = runtime
        .block_on(timed.invoke(ticket("")))
        .expect_err("the node fails")
        .error;
    let RunError::Node(timed_out) = &error else {
        panic!("expected a node failure, got {error:?}");
    };
    assert_eq!(
        (timed_out.kind, timed_out.attempts),
        (FailureKind::Panicked, 1),
        "the same kind, and not retried"
    );
    assert!(
        timed_out
            .message
            .starts_with("panicked: cannot wait 1s for its timeout: "),
        "{}",
        timed_out.message
    );
    let reason = |message: &str| {
        message
            .split_once(": ")
            .unwrap()
            .1
            .split_once(": ")
            .unwrap()
            .1
            .to_owned()
    };
    assert_eq!(
        reason(&failure.message),
        reason(&timed_out.message),
        "tokio's own words, for both"
    );
}

/// A run of `graph` that fails, and what it left: its error, its record's state and step, and
/// its failed checkpoint's frontier and step.
async fn failed_run(
    graph: &trellis::CompiledGraph<Ticket>,
    store: &InMemoryCheckpointer,
) -> (String, serde_json::Value, u64, Vec<String>, u64) {
    let error = graph
        .invoke(ticket(""))
        .await
        .expect_err("the run fails")
        .error;
    let run = store.list_runs(1, 0).await.expect("lists").remove(0);
    let latest = store
        .latest_checkpoint(&run.run_id)
        .await
        .expect("reads")
        .expect("a failed checkpoint");
    assert_eq!(latest.label.to_string(), "failed");
    (
        error.to_string(),
        (*run.state).clone(),
        run.steps,
        latest.frontier.iter().map(ToString::to_string).collect(),
        latest.step,
    )
}

/// A step of one node commits its one result at once unless someone watches the run, which
/// sends it through the general gathering (see `docs/runtime.md`, execution): every way such a
/// step can fail must leave the same record either way.
#[tokio::test]
async fn a_failing_step_leaves_the_same_record_whether_watched_or_not() {
    type Build = fn(&mut GraphBuilder<Ticket>);
    let failing: [(&str, Build); 4] = [
        ("a router naming an undeclared target", |b| {
            b.add_conditional_edges("last", |_: &Ticket| "nowhere", ["first", END]);
        }),
        ("a node error", |b| {
            b.add_node_fn("boom", |_, _| async { Err(NodeError::msg("no")) })
                .add_edge("last", "boom")
                .add_edge("boom", END);
        }),
        ("a visit limit", |b| {
            b.add_edge("last", "first");
        }),
        ("a command to an undeclared target", |b| {
            b.add_node_fn("goto", |_, _| async { Ok(NodeResult::goto("first")) })
                .add_edge("last", "goto")
                .add_edge("goto", END);
        }),
    ];
    for (what, finish) in failing {
        let mut left = Vec::new();
        for watched in [false, true] {
            let store = Arc::new(InMemoryCheckpointer::new());
            let mut builder = GraphBuilder::<Ticket>::new("Failing");
            builder
                .add_node_fn_with(
                    "first",
                    |_, _| async { Ok(log("first")) },
                    NodeOptions::new().max_visits(1),
                )
                .add_node_fn("last", |_, _| async { Ok(log("last")) })
                .add_edge(START, "first")
                .add_edge("first", "last")
                .set_checkpointer(store.clone());
            finish(&mut builder);
            let graph = builder.compile().unwrap();
            let _watching = watched.then(|| graph.subscribe());
            left.push(failed_run(&graph, &store).await);
        }
        assert_eq!(left[0], left[1], "{what}");
    }
}
