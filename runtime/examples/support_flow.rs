//! The support-ticket flow on the runtime alone (no `.graph` file): classify → lookup_invoice →
//! draft ⇄ review → send, pausing before `send` for a person's approval.
//!
//! `cargo run -p trellis-runtime --example support_flow` runs to the pause, prints the draft and the
//! run id, then resumes with an approval. `-- --reject "reason"` rejects the first draft
//! instead: the flow goes back to `draft`, pauses again, and the second draft is approved.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{
    END, GraphBuilder, GraphState, NodeOptions, Outcome, START,
    checkpoint::Checkpointer,
    checkpoint::InMemoryCheckpointer,
    event::Event,
    interrupt::{ApplyResume, Interrupt},
};

#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState)]
struct Ticket {
    text: String,
    category: Option<String>,
    invoice: Option<String>,
    draft: Option<String>,
    feedback: Option<String>,
    #[reducer(sum)]
    reviews: u32,
    approved: Option<bool>,
    #[reducer(append)]
    sent: Vec<String>,
}

/// What the person at the `send` pause decides.
enum Decision {
    Approve,
    Reject(String),
}

impl ApplyResume for Ticket {
    type Input = Decision;
    fn apply_resume(&self, _: &Interrupt, decision: Decision) -> TicketUpdate {
        match decision {
            Decision::Approve => TicketUpdate::default().approved(Some(true)),
            Decision::Reject(why) => TicketUpdate::default()
                .approved(Some(false))
                .feedback(Some(why)),
        }
    }
}

fn support_graph(store: Arc<InMemoryCheckpointer>) -> trellis::CompiledGraph<Ticket> {
    let mut graph = GraphBuilder::<Ticket>::new("Support");
    graph
        .add_node_fn("classify", |ticket, _| async move {
            let category = if ticket.text.contains("invoice") {
                "billing"
            } else {
                "general"
            };
            Ok(TicketUpdate::default()
                .category(Some(category.to_owned()))
                .into())
        })
        .add_node_fn_with(
            "lookup_invoice",
            |_, _| async {
                Ok(TicketUpdate::default()
                    .invoice(Some("INV-2291: €120, paid twice".to_owned()))
                    .into())
            },
            NodeOptions::new().retry(3, std::time::Duration::from_millis(200)),
        )
        .add_node_fn_with(
            "draft",
            |ticket, _| async move {
                let mut text = format!("Hello, thank you for writing about: {}.", ticket.text);
                if let Some(invoice) = &ticket.invoice {
                    text.push_str(&format!(" We found {invoice} and refunded the duplicate."));
                }
                if let Some(feedback) = &ticket.feedback {
                    text.push_str(&format!(" ({feedback})"));
                }
                Ok(TicketUpdate::default().draft(Some(text)).into())
            },
            NodeOptions::new().max_visits(4),
        )
        .add_node_fn("review", |_, _| async {
            Ok(TicketUpdate::default().reviews(1).into())
        })
        .add_node_fn_with(
            "send",
            |ticket, _| async move {
                let update = match (ticket.approved, &ticket.draft) {
                    (Some(true), Some(draft)) => TicketUpdate::default().sent(draft.clone()),
                    _ => TicketUpdate::default(),
                };
                Ok(update.into())
            },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "classify")
        .add_conditional_edges(
            "classify",
            |t: &Ticket| {
                if t.category.as_deref() == Some("billing") {
                    "lookup_invoice"
                } else {
                    "draft"
                }
            },
            ["lookup_invoice", "draft"],
        )
        .add_edge("lookup_invoice", "draft")
        .add_edge("draft", "review")
        .add_conditional_edges("review", |_: &Ticket| "send", ["send", "draft"])
        .add_conditional_edges(
            "send",
            |t: &Ticket| {
                if t.approved == Some(true) {
                    END
                } else {
                    "draft"
                }
            },
            ["draft", END],
        )
        .set_max_steps(25)
        .set_checkpointer(store);
    graph.compile().unwrap_or_else(|error| panic!("{error}"))
}

fn show_pause(outcome: &Outcome<Ticket>) {
    println!(
        "paused: run {} waits for {}",
        outcome.run_id(),
        outcome.interrupts()[0].id
    );
    println!(
        "  draft awaiting approval: {}",
        outcome.state().draft.as_deref().unwrap_or("")
    );
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // Errors read as sentences (`Display`), not as `Debug` output.
    match support_flow().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn support_flow() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reject = match args.as_slice() {
        [] => None,
        [flag, reason] if flag == "--reject" => Some(reason.clone()),
        _ => return Err("usage: support_flow [--reject REASON]".into()),
    };

    let store = Arc::new(InMemoryCheckpointer::new());
    let graph = support_graph(Arc::clone(&store));
    let mut events = graph.subscribe();

    let ticket = Ticket {
        text: "my invoice was charged twice".to_owned(),
        ..Ticket::default()
    };
    let mut outcome = graph.invoke(ticket).await?;
    show_pause(&outcome);
    let run_id = outcome.run_id().clone();
    if let Some(reason) = reject {
        println!("rejected: {reason}");
        outcome = graph.resume(&run_id, Decision::Reject(reason)).await?;
        show_pause(&outcome);
    }
    println!("approved");
    outcome = graph.resume(&run_id, Decision::Approve).await?;

    println!("completed: sent {:?}", outcome.state().sent);
    let record = store
        .load_run(&run_id)
        .await?
        .ok_or("the run was recorded")?;
    println!(
        "run {}: {} after {} steps, {} node activations, {} checkpoints",
        record.run_id,
        record.status,
        record.steps,
        record.transitions,
        store.list_checkpoints(&run_id).await?.len()
    );
    let path: Vec<String> = std::iter::from_fn(|| events.try_next())
        .filter_map(|event| match event {
            Event::NodeCompleted { node, .. } => Some(node),
            _ => None,
        })
        .collect();
    println!("path: {}", path.join(" → "));
    Ok(())
}
