//! Sends, as scenarios every backend runs: branches sent before a pause are kept in the
//! checkpoint with their inputs, and run after the resume, in another process too.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::checkpoint::Checkpointer;
use trellis::{
    CompiledGraph, END, GraphBuilder, GraphState, NodeOptions, NodeResult, START,
    interrupt::InterruptRequest, send::SendTo,
};

use super::{Answer, Ticket, TicketUpdate};

/// START sends one `review` per word of the ticket's text; `review` asks before it runs;
/// `publish` runs once after every review.
pub fn reviews_graph(store: Arc<dyn Checkpointer>) -> CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Reviews");
    builder
        .add_node_fn_with(
            "review",
            |_, ctx| async move {
                let word: String = ctx.input()?;
                Ok(TicketUpdate::default()
                    .reviews(1)
                    .log(format!("review {word}"))
                    .into())
            },
            NodeOptions::new().interrupt_before(),
        )
        .add_node_fn("publish", |_, _| async {
            Ok(TicketUpdate::default().log("publish").into())
        })
        .add_send(
            START,
            |ticket: &Ticket, _| {
                let each = |word: &str| SendTo::new("review", &word).unwrap();
                ticket.text.split(' ').map(each).collect()
            },
            ["review"],
        )
        .add_edge("review", "publish")
        .add_edge("publish", END)
        .set_checkpointer(store);
    builder.compile().expect("valid graph")
}

/// The branches wait in the `pause:before` checkpoint, inputs and all; resumed through
/// `second`, each runs once with its own input, in the order sent.
pub async fn sent_branches_wait_across_a_pause(
    first: Arc<dyn Checkpointer>,
    second: Arc<dyn Checkpointer>,
) {
    let ticket = Ticket {
        text: "alpha beta gamma".to_owned(),
        ..Ticket::default()
    };
    let paused = reviews_graph(first).invoke(ticket).await.unwrap();
    assert!(paused.is_paused());
    assert_eq!(
        paused.interrupts().len(),
        1,
        "one question for the node, not per branch"
    );
    let pause = second
        .latest_checkpoint(paused.run_id())
        .await
        .unwrap()
        .unwrap();
    let sent: Vec<(String, serde_json::Value)> = pause
        .sends
        .iter()
        .map(|s| (s.node.to_string(), s.input.clone()))
        .collect();
    assert_eq!(
        sent,
        [
            ("review".to_owned(), serde_json::json!("alpha")),
            ("review".to_owned(), serde_json::json!("beta")),
            ("review".to_owned(), serde_json::json!("gamma")),
        ]
    );
    let done = reviews_graph(Arc::clone(&second))
        .resume(paused.run_id(), Answer::Note("go".to_owned()))
        .await
        .unwrap();
    assert_eq!(
        done.state().log,
        [
            "answered review@1",
            "go",
            "review alpha",
            "review beta",
            "review gamma",
            "publish"
        ]
    );
    assert_eq!(done.state().reviews, 3);
    let last = second
        .latest_checkpoint(paused.run_id())
        .await
        .unwrap()
        .unwrap();
    assert!(last.sends.is_empty());
    let record = second.load_run(paused.run_id()).await.unwrap().unwrap();
    assert_eq!(record.transitions, 4, "three branches and `publish`");
}

/// A batch whose second item needs a person's approval: `work` asks, resuming to itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, GraphState)]
pub struct Approvals {
    pub items: u32,
    #[reducer(append)]
    pub done: Vec<u32>,
    #[answer]
    pub decision: Option<trellis::interrupt::Decision>,
}

/// `work` for each item; item 1 asks first and, answered, runs again with its own input.
/// `runs` counts each item's activations.
pub fn asking_batch(
    store: Arc<dyn Checkpointer>,
    runs: Arc<std::sync::Mutex<Vec<u32>>>,
) -> trellis::CompiledGraph<Approvals> {
    let mut builder = GraphBuilder::<Approvals>::new("Approvals");
    builder
        .add_node_fn("work", move |state, ctx| {
            let runs = Arc::clone(&runs);
            async move {
                let item: u32 = ctx.input()?;
                runs.lock().unwrap().push(item);
                if item == 1 && state.decision.is_none() {
                    return Ok(NodeResult::Interrupt(
                        InterruptRequest::new("approval", "item 1?").resume_to("work"),
                    ));
                }
                Ok(ApprovalsUpdate::default().done(item).into())
            }
        })
        .add_send(
            START,
            |batch: &Approvals, _: &trellis::Visits<'_>| {
                (0..batch.items)
                    .map(|item| SendTo::new("work", &item).unwrap())
                    .collect()
            },
            ["work"],
        )
        .add_edge("work", END);
    builder.compile().unwrap().with_checkpointer(store)
}

/// The branch that asked runs again with its own input after the answer (in a second store:
/// another process); its siblings, done at the pause, do not run again.
pub async fn a_sent_branch_resumes_to_itself_with_its_input(
    first: Arc<dyn Checkpointer>,
    second: Arc<dyn Checkpointer>,
) {
    let runs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let batch = Approvals {
        items: 3,
        ..Approvals::default()
    };
    let paused = asking_batch(first, Arc::clone(&runs))
        .invoke(batch)
        .await
        .unwrap();
    assert!(paused.is_paused());
    assert_eq!(paused.state().done, [0, 2]);
    let id = paused.interrupts()[0].id.clone();
    assert_eq!(id, "work@1#1");
    let done = asking_batch(second, Arc::clone(&runs))
        .resume(
            paused.run_id(),
            trellis::interrupt::Answers::each([(id, trellis::interrupt::Decision::Approve)]),
        )
        .await
        .unwrap();
    assert!(!done.is_paused());
    assert_eq!(done.state().done, [0, 2, 1]);
    assert_eq!(
        *runs.lock().unwrap(),
        [0, 1, 2, 1],
        "only the asking branch again"
    );
}
