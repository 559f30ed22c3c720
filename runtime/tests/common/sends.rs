//! Sends, as scenarios every backend runs: branches sent before a pause are kept in the
//! checkpoint with their inputs, and run after the resume, in another process too.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use trellis::checkpoint::Checkpointer;
use trellis::{CompiledGraph, END, GraphBuilder, NodeOptions, START, SendTo};

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
