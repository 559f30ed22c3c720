//! The support-ticket flow, from `examples/graphs/support.graph` compiled by `build.rs`:
//! classify → lookup_invoice → draft ⇄ review → send, pausing before `send` for a person.
//!
//! `cargo run -p support` runs to the pause, prints the draft awaiting approval and the run id,
//! resumes with an approval and prints the result. `-- --reject "reason"` rejects the first
//! draft: it is redrafted with the reason, the run pauses again, and the new draft is approved.
//! `-- --text "…"` sets the ticket's text.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{ApplyResume, GraphState, InMemoryCheckpointer, Interrupt, NodeResult};

trellis::include_graphs!("support");

/// One support ticket as it moves through the graph.
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState)]
pub struct Ticket {
    /// What the customer wrote.
    pub text: String,
    /// `billing` or `general`, set by `classify`.
    pub category: Option<String>,
    /// The invoice found by `lookup_invoice`.
    pub invoice: Option<String>,
    /// The reply being written.
    pub draft: Option<String>,
    /// Why the last draft was sent back, by the reviewer or a person.
    pub feedback: Option<String>,
    /// Drafts written so far.
    #[reducer(sum)]
    pub drafts: u32,
    /// The person's decision at `send`.
    pub approved: Option<bool>,
    /// Replies sent.
    #[reducer(append)]
    pub sent: Vec<String>,
}

/// A person's decision before `send`.
pub enum Decision {
    /// Send the draft.
    Approve,
    /// Send it back to be redrafted, with a reason.
    Reject(String),
}

impl ApplyResume for Ticket {
    type Input = Decision;
    fn apply_resume(&self, _: &Interrupt, decision: Decision) -> TicketUpdate {
        match decision {
            Decision::Approve => TicketUpdate::default().approved(Some(true)),
            Decision::Reject(reason) => TicketUpdate::default()
                .approved(Some(false))
                .feedback(Some(reason)),
        }
    }
}

/// The support desk: what each node of the graph does.
struct Desk;

#[trellis::async_trait]
impl support::Handlers for Desk {
    async fn classify(
        &self,
        ticket: Arc<Ticket>,
        _: &mut trellis::NodeContext,
    ) -> support::Outcome<Ticket> {
        let billing = ["invoice", "charge", "refund"]
            .iter()
            .any(|w| ticket.text.contains(w));
        let category = if billing { "billing" } else { "general" };
        Ok(NodeResult::Update(
            TicketUpdate::default().category(Some(category.to_owned())),
        ))
    }

    async fn lookup_invoice(
        &self,
        _: Arc<Ticket>,
        _: &mut trellis::NodeContext,
    ) -> support::Outcome<Ticket> {
        let invoice = "INV-2291 (€120, charged twice on 3 March)".to_owned();
        Ok(NodeResult::Update(
            TicketUpdate::default().invoice(Some(invoice)),
        ))
    }

    async fn draft(
        &self,
        ticket: Arc<Ticket>,
        _: &mut trellis::NodeContext,
    ) -> support::Outcome<Ticket> {
        let mut text = format!(
            "Hello, thank you for writing to us about \"{}\".",
            ticket.text
        );
        if let Some(invoice) = &ticket.invoice {
            text.push_str(&format!(
                " We found {invoice} and refunded the duplicate charge."
            ));
        }
        if let Some(feedback) = &ticket.feedback {
            text.push_str(&format!(" ({feedback})"));
        }
        Ok(NodeResult::Update(
            TicketUpdate::default()
                .draft(Some(text))
                .drafts(1)
                .approved(None),
        ))
    }

    async fn review(
        &self,
        ticket: Arc<Ticket>,
        _: &mut trellis::NodeContext,
    ) -> support::Outcome<Ticket> {
        // The automatic reviewer only checks the reply greets the customer.
        let greets = ticket
            .draft
            .as_deref()
            .is_some_and(|d| d.starts_with("Hello"));
        let feedback = (!greets).then(|| "greet the customer".to_owned());
        Ok(NodeResult::Update(
            TicketUpdate::default().feedback(feedback),
        ))
    }

    async fn send(
        &self,
        ticket: Arc<Ticket>,
        _: &mut trellis::NodeContext,
    ) -> support::Outcome<Ticket> {
        let update = match (ticket.approved, &ticket.draft) {
            (Some(true), Some(draft)) => TicketUpdate::default().sent(draft.clone()),
            _ => TicketUpdate::default(),
        };
        Ok(NodeResult::Update(update))
    }

    fn route_classify(&self, ticket: &Ticket) -> support::ClassifyRoute {
        match ticket.category.as_deref() {
            Some("billing") => support::ClassifyRoute::LookupInvoice,
            _ => support::ClassifyRoute::Draft,
        }
    }

    fn route_review(&self, ticket: &Ticket) -> support::ReviewRoute {
        if ticket.feedback.is_some() && ticket.approved.is_none() && ticket.drafts < 2 {
            support::ReviewRoute::Draft
        } else {
            support::ReviewRoute::Send
        }
    }

    fn route_send(&self, ticket: &Ticket) -> support::SendRoute {
        if ticket.approved == Some(true) {
            support::SendRoute::End
        } else {
            support::SendRoute::Draft
        }
    }
}

fn usage() -> String {
    "usage: support [--text TEXT] [--approve | --reject REASON]".to_owned()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut text = "I was charged twice for my invoice".to_owned();
    let mut reject = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--approve" => reject = None,
            "--reject" => reject = Some(args.next().ok_or_else(usage)?),
            "--text" => text = args.next().ok_or_else(usage)?,
            _ => return Err(usage().into()),
        }
    }

    let graph = support::build(Desk).with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let mut outcome = graph
        .invoke(Ticket {
            text,
            ..Ticket::default()
        })
        .await?;
    let run_id = outcome.run_id().clone();
    let mut decision = reject.map(Decision::Reject);
    while outcome.is_paused() {
        println!("run {run_id} paused before `send`; draft awaiting approval:");
        println!("  {}", outcome.state().draft.as_deref().unwrap_or("(none)"));
        let answer = decision.take().unwrap_or(Decision::Approve);
        match &answer {
            Decision::Approve => println!("approved"),
            Decision::Reject(reason) => println!("rejected: {reason}"),
        }
        outcome = graph.resume(&run_id, answer).await?;
    }
    let ticket = outcome.state();
    println!("run {run_id} completed after {} draft(s)", ticket.drafts);
    for reply in &ticket.sent {
        println!("sent: {reply}");
    }
    Ok(())
}
