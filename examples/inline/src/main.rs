#![doc = include_str!("../README.md")]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{
    GraphState, NodeContext, NodeResult,
    checkpoint::InMemoryCheckpointer,
    interrupt::{ApplyResume, Interrupt, InterruptRequest},
};

trellis::graph! {
    /// Handles a refund request: assesses it, asks a person above the limit, then pays or
    /// declines, and tells the customer.
    graph Refund {
        state Request;
        max_steps 20;

        /// Reads the request and decides whether it needs a person.
        node assess { timeout 5s; }
        /// Asks a person to approve a large refund.
        node approve { kind hitl; }
        node pay { retry 2 backoff 100ms; }
        node decline;
        /// Tells the customer what happened.
        node notify;

        START -> assess;
        assess -> pay | approve | decline;
        approve -> pay | decline;
        pay -> notify;
        decline -> notify;
        notify -> END;
    }
}

/// Refunds above this many euros need a person.
const LIMIT: u32 = 100;

/// One refund request.
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState)]
pub struct Request {
    /// The customer.
    pub customer: String,
    /// The amount, in euros.
    pub amount: u32,
    /// The person's decision, when one was needed.
    pub approved: Option<bool>,
    /// What was done, in order.
    #[reducer(append)]
    pub log: Vec<String>,
}

impl ApplyResume for Request {
    type Input = bool;
    fn apply_resume(&self, interrupt: &Interrupt, approve: bool) -> RequestUpdate {
        let verdict = if approve { "approved" } else { "declined" };
        RequestUpdate::default()
            .approved(Some(approve))
            .log(format!("a person {verdict} ({})", interrupt.id))
    }
}

struct Desk;

impl refund::Handlers for Desk {
    async fn assess(&self, request: Arc<Request>, _: &mut NodeContext) -> refund::NodeOutput {
        let log = format!("assessed €{} for {}", request.amount, request.customer);
        Ok(RequestUpdate::default().log(log).into())
    }

    async fn approve(&self, request: Arc<Request>, _: &mut NodeContext) -> refund::NodeOutput {
        let question = format!("refund €{} to {}?", request.amount, request.customer);
        Ok(NodeResult::Interrupt(
            InterruptRequest::new("approval", question).with_options(["approve", "decline"]),
        ))
    }

    async fn pay(&self, request: Arc<Request>, _: &mut NodeContext) -> refund::NodeOutput {
        Ok(RequestUpdate::default()
            .log(format!("paid €{}", request.amount))
            .into())
    }

    async fn decline(&self, _: Arc<Request>, _: &mut NodeContext) -> refund::NodeOutput {
        Ok(RequestUpdate::default().log("declined").into())
    }

    async fn notify(&self, request: Arc<Request>, _: &mut NodeContext) -> refund::NodeOutput {
        let log = format!("told {}", request.customer);
        Ok(RequestUpdate::default().log(log).into())
    }

    fn route_assess(&self, request: &Request, _: &trellis::Visits<'_>) -> refund::AssessRoute {
        match request.amount {
            0 => refund::AssessRoute::Decline,
            amount if amount > LIMIT => refund::AssessRoute::Approve,
            _ => refund::AssessRoute::Pay,
        }
    }

    fn route_approve(&self, request: &Request, _: &trellis::Visits<'_>) -> refund::ApproveRoute {
        if request.approved == Some(true) {
            refund::ApproveRoute::Pay
        } else {
            refund::ApproveRoute::Decline
        }
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // What the example shows, and how to run it: its README.
    if std::env::args().skip(1).any(|a| a == "--help" || a == "-h") {
        println!("{}", include_str!("../README.md"));
        return std::process::ExitCode::SUCCESS;
    }
    // Errors read as sentences (`Display`), not as `Debug` output.
    match refund_flow().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn refund_flow() -> Result<(), Box<dyn std::error::Error>> {
    let approve_large = match std::env::args().nth(1).as_deref() {
        None => true,
        Some("--decline") => false,
        Some(_) => return Err("usage: inline [--decline]".into()),
    };
    let graph = refund::build(Desk).with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    for (customer, amount) in [("Ada", 40), ("Grace", 250)] {
        let request = Request {
            customer: customer.to_owned(),
            amount,
            ..Request::default()
        };
        let mut outcome = graph.invoke(request).await?;
        if let [interrupt] = outcome.interrupts() {
            println!(
                "{customer}: paused, {} asks: {}",
                interrupt.node, interrupt.request.question
            );
            outcome = graph.resume(outcome.run_id(), approve_large).await?;
        }
        println!("{customer}: {}", outcome.state().log.join("; "));
    }
    Ok(())
}
