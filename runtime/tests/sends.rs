//! Sends (dynamic fan-out): a function of the state, or a node's command, sends branches that
//! each run a node with an input of their own; their updates merge in the order sent; the next
//! node runs once after all of them; `max_concurrency` bounds how many run at once; pending
//! branches are checkpointed.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{Answer, Ticket, TicketUpdate, drain, shape};
use serde::{Deserialize, Serialize};
use trellis::checkpoint::{Checkpointer, InMemoryCheckpointer, Name};
use trellis::{
    Command, END, GraphBuilder, GraphState, NodeOptions, NodeResult, RunError, START, Visits,
    interrupt::InterruptRequest, send::SendTo,
};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, GraphState)]
struct Batch {
    items: u32,
    #[reducer(append)]
    done: Vec<u32>,
    #[reducer(sum)]
    merged: u32,
}

/// A branch of `work` per item of the batch.
fn each_item_to_work(batch: &Batch, _: &Visits<'_>) -> Vec<SendTo> {
    (0..batch.items)
        .map(|item| SendTo::new("work", &item).expect("a number is JSON"))
        .collect()
}

#[tokio::test]
async fn a_thousand_branches_with_max_concurrency_8_never_run_more_than_8_at_once() {
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (now, peak) = (Arc::clone(&running), Arc::clone(&most));
    let mut builder = GraphBuilder::<Batch>::new("Batch");
    builder
        .add_node_fn_with(
            "work",
            move |_, ctx| {
                let (now, peak) = (Arc::clone(&now), Arc::clone(&peak));
                async move {
                    let item: u32 = ctx.input()?;
                    let at_once = now.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(at_once, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    now.fetch_sub(1, Ordering::SeqCst);
                    Ok(BatchUpdate::default().done(item).into())
                }
            },
            NodeOptions::new().max_concurrency(8),
        )
        .add_node_fn("merge", |batch, _| async move {
            Ok(BatchUpdate::default()
                .merged(batch.done.len() as u32)
                .into())
        })
        .add_send(START, each_item_to_work, ["work"])
        .add_edge("work", "merge")
        .add_edge("merge", END);
    let graph = builder.compile().unwrap();
    let mut events = graph.subscribe();
    let done = graph
        .invoke(Batch {
            items: 1000,
            ..Batch::default()
        })
        .await
        .unwrap();
    assert!(
        most.load(Ordering::SeqCst) <= 8,
        "{} at once",
        most.load(Ordering::SeqCst)
    );
    assert_eq!(
        most.load(Ordering::SeqCst),
        8,
        "the limit was reached, so it was what held"
    );
    assert_eq!(
        done.state().done,
        (0..1000).collect::<Vec<u32>>(),
        "merged in the order sent"
    );
    assert_eq!(
        done.state().merged,
        1000,
        "`merge` ran once, after all of them"
    );
    let entered = shape(&drain(&mut events))
        .into_iter()
        .filter(|e| e.ends_with("entered merge"))
        .collect::<Vec<_>>();
    assert_eq!(entered, ["2 entered merge"]);
}

#[tokio::test]
async fn the_next_step_lists_a_node_per_branch_sent_to_it() {
    let mut builder = GraphBuilder::<Batch>::new("Listed");
    builder
        .add_node_fn("plan", |_, _| async { Ok(BatchUpdate::default().into()) })
        .add_node_fn("work", |_, ctx| async move {
            let item: u32 = ctx.input()?;
            Ok(BatchUpdate::default().done(item).into())
        })
        .add_node_fn("merge", |_, _| async { Ok(BatchUpdate::default().into()) })
        .add_edge(START, "plan")
        .add_send("plan", each_item_to_work, ["work"])
        .add_edge("work", "merge")
        .add_edge("merge", END);
    let graph = builder
        .compile()
        .unwrap()
        .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let mut run = graph.start(Batch {
        items: 2,
        ..Batch::default()
    });
    run.step().await.unwrap();
    assert_eq!(run.next_nodes(), ["work", "work"]);
    run.step().await.unwrap();
    assert_eq!(run.state().done, [0, 1]);
    assert_eq!(run.next_nodes(), ["merge"]);
    let run_id = run.run_id().clone();
    run.run_to_end().await.unwrap();
    // The history says the same of every checkpoint: what its next step runs.
    let next: Vec<Vec<Name>> = graph
        .history(&run_id)
        .await
        .unwrap()
        .into_iter()
        .map(|snapshot| snapshot.next)
        .collect();
    assert!(
        next.contains(&vec!["work".into(), "work".into()]),
        "{next:?}"
    );
}

#[tokio::test]
async fn a_command_sends_and_an_undeclared_target_fails_the_run() {
    let build = |target: &'static str| {
        let mut builder = GraphBuilder::<Ticket>::new("Commands");
        builder
            .add_node_fn("plan", move |_, _| async move {
                let sends = ["a", "b"]
                    .iter()
                    .map(|word| SendTo::new(target, word).unwrap())
                    .collect();
                Ok(NodeResult::UpdateThen(
                    TicketUpdate::default().log("plan"),
                    Command::Sends(sends),
                ))
            })
            .add_node_fn("write", |_, ctx| async move {
                let word: String = ctx.input()?;
                Ok(TicketUpdate::default().log(format!("write {word}")).into())
            })
            .add_edge(START, "plan")
            .add_send("plan", |_: &Ticket, _| Vec::new(), ["write"])
            .add_edge("write", END);
        builder.compile().unwrap()
    };
    let done = build("write").invoke(Ticket::default()).await.unwrap();
    assert_eq!(done.state().log, ["plan", "write a", "write b"]);
    let error = build("wirte")
        .invoke(Ticket::default())
        .await
        .unwrap_err()
        .error;
    assert!(
        matches!(&error, RunError::UndeclaredTarget { node, target } if node == "plan" && target == "wirte"),
        "{error:?}"
    );
}

#[tokio::test]
async fn each_branch_asks_its_own_question_and_is_answered_on_its_own() {
    let mut builder = GraphBuilder::<Ticket>::new("Approvals");
    builder
        .add_node_fn("approve", |_, ctx| async move {
            let item: String = ctx.input()?;
            Ok(NodeResult::Interrupt(InterruptRequest::new(
                "approval",
                format!("approve {item}?"),
            )))
        })
        .add_send(
            START,
            |_: &Ticket, _| {
                vec![
                    SendTo::json("approve", "x".into()),
                    SendTo::json("approve", "y".into()),
                ]
            },
            ["approve"],
        )
        .add_edge("approve", END)
        .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let graph = builder.compile().unwrap();
    let paused = graph.invoke(Ticket::default()).await.unwrap();
    let asked: Vec<(String, String)> = paused
        .interrupts()
        .iter()
        .map(|i| (i.id.to_string(), i.request.question.to_string()))
        .collect();
    assert_eq!(
        asked,
        [
            ("approve@1#0".to_owned(), "approve x?".to_owned()),
            ("approve@1#1".to_owned(), "approve y?".to_owned()),
        ]
    );
    let done = graph
        .resume(
            paused.run_id(),
            trellis::interrupt::Answers::each([
                ("approve@1#1".to_owned(), Answer::Note("y ok".to_owned())),
                ("approve@1#0".to_owned(), Answer::Note("x ok".to_owned())),
            ]),
        )
        .await
        .unwrap();
    assert_eq!(
        done.state().log,
        [
            "answered approve@1#0",
            "x ok",
            "answered approve@1#1",
            "y ok"
        ]
    );
}

#[tokio::test]
async fn a_failed_branch_is_retried_with_all_its_siblings_from_the_checkpoint_before() {
    let broken = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flag = Arc::clone(&broken);
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    let mut builder = GraphBuilder::<Ticket>::new("Flaky");
    builder
        .add_node_fn("work", move |_, ctx| {
            let broken = flag.load(Ordering::SeqCst);
            async move {
                let n: u32 = ctx.input()?;
                if broken && n == 2 {
                    return Err(trellis::NodeError::msg("item 2 is broken"));
                }
                Ok(TicketUpdate::default().log(format!("work {n}")).into())
            }
        })
        .add_send(
            START,
            |_: &Ticket, _| (1..=3).map(|n| SendTo::new("work", &n).unwrap()).collect(),
            ["work"],
        )
        .add_edge("work", END)
        .set_checkpointer(Arc::clone(&store));
    let graph = builder.compile().unwrap();
    let error = graph.invoke(Ticket::default()).await.unwrap_err().error;
    assert!(error.to_string().contains("item 2 is broken"), "{error}");
    let run_id = store.list_runs(1, 0).await.unwrap()[0].run_id.clone();
    let failed = store.latest_checkpoint(&run_id).await.unwrap().unwrap();
    assert_eq!(
        failed.sends.len(),
        3,
        "the failed checkpoint shows the branches that could not run"
    );
    broken.store(false, Ordering::SeqCst);
    let done = graph.retry(&run_id).await.unwrap();
    assert_eq!(done.state().log, ["work 1", "work 2", "work 3"]);
}

#[test]
fn send_shapes_are_checked_by_the_shared_rules() {
    let codes = |configure: &dyn Fn(&mut GraphBuilder<Ticket>)| {
        let mut builder = GraphBuilder::<Ticket>::new("Sends");
        builder.add_node_fn("work", |_, _| async { Ok(NodeResult::None) });
        configure(&mut builder);
        common::codes(builder)
    };
    let into_end = codes(&|b| {
        b.add_send(START, |_: &Ticket, _| Vec::new(), ["work", END])
            .add_edge("work", END);
    });
    assert_eq!(into_end, ["E0207"]);
    let zero = codes(&|b| {
        b.add_node_fn_with(
            "limited",
            |_, _| async { Ok(NodeResult::None) },
            NodeOptions::new().max_concurrency(0),
        )
        .add_send(START, |_: &Ticket, _| Vec::new(), ["work", "limited"])
        .add_edge("work", END)
        .add_edge("limited", END);
    });
    assert_eq!(zero, ["E0002"]);
}

#[tokio::test]
async fn a_blueprint_send_without_its_function_fails_clearly_until_given_one() {
    let mut declared = GraphBuilder::<Ticket>::new("Loaded");
    declared
        .add_node_fn("work", |_, _| async { Ok(NodeResult::None) })
        .add_send(START, |_: &Ticket, _| Vec::new(), ["work"])
        .add_edge("work", END);
    let blueprint = declared.compile().unwrap().blueprint().clone();
    let node = |_: usize, _: &trellis::blueprint::Node| {
        trellis::node_fn(|_: Arc<Ticket>, ctx| async move {
            let word: String = ctx.input()?;
            Ok(TicketUpdate::default().log(word).into())
        })
    };
    let router = |_: usize, _: &trellis::blueprint::Edge| |_: &Ticket, _: &trellis::Visits<'_>| END;
    let error = GraphBuilder::from_blueprint(blueprint.clone(), node, router)
        .compile()
        .unwrap()
        .invoke(Ticket::default())
        .await
        .unwrap_err()
        .error;
    assert_eq!(
        error.to_string(),
        "the send edge from START has no function to say what to send: give it one with `GraphBuilder::set_send`"
    );
    let mut builder = GraphBuilder::from_blueprint(blueprint, node, router);
    builder.set_send(0, |_: &Ticket, _| {
        Ok(vec![SendTo::json("work", "given".into())])
    });
    let done = builder
        .compile()
        .unwrap()
        .invoke(Ticket::default())
        .await
        .unwrap();
    assert_eq!(done.state().log, ["given"]);
}

#[tokio::test]
async fn sent_branches_wait_across_a_pause_in_memory() {
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    common::sends::sent_branches_wait_across_a_pause(Arc::clone(&store), store).await;
}

#[tokio::test]
async fn sent_branches_wait_across_a_pause_in_sqlite_through_a_second_store() {
    let scratch = common::scratch("sends");
    let (first, second) = common::sqlite_pair(&scratch);
    common::sends::sent_branches_wait_across_a_pause(first, second).await;
}

#[tokio::test]
async fn a_sent_branch_resumes_to_itself_with_its_input_in_memory() {
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    common::sends::a_sent_branch_resumes_to_itself_with_its_input(Arc::clone(&store), store).await;
}

#[tokio::test]
async fn a_sent_branch_resumes_to_itself_with_its_input_in_sqlite() {
    let scratch = common::scratch("sends-resume");
    let (first, second) = common::sqlite_pair(&scratch);
    common::sends::a_sent_branch_resumes_to_itself_with_its_input(first, second).await;
}

/// The input of a typed send: a struct, so that its fields make the trip through JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Job {
    item: u32,
    weight: u32,
}

#[tokio::test]
async fn a_typed_send_runs_its_node_once_per_input_read_as_its_type() {
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (now, peak) = (Arc::clone(&running), Arc::clone(&most));
    let mut builder = GraphBuilder::<Batch>::new("TypedBatch");
    let work = builder.add_sent_node_fn_with(
        "work",
        move |_, job: Job, _| {
            let (now, peak) = (Arc::clone(&now), Arc::clone(&peak));
            async move {
                let at_once = now.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(at_once, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(1)).await;
                now.fetch_sub(1, Ordering::SeqCst);
                Ok(BatchUpdate::default()
                    .done(job.item)
                    .merged(job.weight)
                    .into())
            }
        },
        NodeOptions::new().max_concurrency(3),
    );
    assert_eq!(work.name(), "work");
    builder
        .add_send_to(START, &work, |batch: &Batch, _| {
            (0..batch.items)
                .map(|item| Job {
                    item,
                    weight: item * 10,
                })
                .collect()
        })
        .add_edge("work", END);
    let graph = builder
        .compile()
        .unwrap()
        .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let done = graph
        .invoke(Batch {
            items: 20,
            ..Batch::default()
        })
        .await
        .unwrap();
    assert_eq!(done.state().done, (0..20).collect::<Vec<u32>>());
    assert_eq!(done.state().merged, (0..20).map(|i| i * 10).sum::<u32>());
    assert_eq!(most.load(Ordering::SeqCst), 3, "its options hold");
    // The blueprint names the input's type, as `input Job;` in a `.graph` file does, and the
    // edge is a send edge to the node.
    let blueprint = graph.blueprint();
    let node = blueprint.nodes.iter().find(|n| n.id == "work").unwrap();
    assert_eq!(node.input.as_deref(), Some("Job"));
    assert!(
        blueprint
            .edges
            .iter()
            .any(|e| e.kind == trellis_graph::EdgeKind::Each && e.targets.len() == 1),
        "{:?}",
        blueprint.edges
    );
}

#[tokio::test]
async fn a_node_sends_typed_branches_by_command_and_a_wrong_input_fails_clearly() {
    let build = |by_json: bool| {
        let mut builder = GraphBuilder::<Ticket>::new("TypedCommands");
        let write = builder.add_sent_node_fn("write", |_, word: String, _| async move {
            Ok(TicketUpdate::default().log(format!("write {word}")).into())
        });
        let to_write = write.clone();
        builder
            .add_node_fn("plan", move |_, _| {
                let write = to_write.clone();
                async move {
                    let sends = if by_json {
                        // Past the types: JSON that is not a `String`.
                        vec![SendTo::json("write", serde_json::json!({ "word": 1 }))]
                    } else {
                        vec![write.with(&"a".to_owned())?, write.with(&"b".to_owned())?]
                    };
                    Ok(NodeResult::UpdateThen(
                        TicketUpdate::default().log("plan"),
                        Command::Sends(sends),
                    ))
                }
            })
            .add_edge(START, "plan")
            .add_send_to("plan", &write, |_: &Ticket, _| Vec::new())
            .add_edge("write", END);
        builder.compile().unwrap()
    };
    let done = build(false).invoke(Ticket::default()).await.unwrap();
    assert_eq!(done.state().log, ["plan", "write a", "write b"]);
    let error = build(true)
        .invoke(Ticket::default())
        .await
        .unwrap_err()
        .error;
    let text = error.to_string();
    assert!(
        text.contains("the input sent to node `write` is not what it reads"),
        "{text}"
    );
}

#[tokio::test]
async fn an_input_that_cannot_be_json_fails_the_run_naming_the_edge() {
    use std::collections::HashMap;
    #[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState)]
    struct Keys {
        #[reducer(sum)]
        seen: u32,
    }
    let mut builder = GraphBuilder::<Keys>::new("Keys");
    let count = builder.add_sent_node_fn("count", |_, keys: HashMap<(u8, u8), u8>, _| async move {
        Ok(KeysUpdate::default().seen(keys.len() as u32).into())
    });
    builder
        .add_send_to(START, &count, |_: &Keys, _| {
            // A map keyed by tuples has no JSON form.
            vec![HashMap::from([((1, 2), 3)])]
        })
        .add_edge("count", END);
    let error = builder
        .compile()
        .unwrap()
        .invoke(Keys::default())
        .await
        .unwrap_err()
        .error;
    assert!(
        matches!(&error, RunError::SendInput { from, .. } if from == "START"),
        "{error:?}"
    );
}
