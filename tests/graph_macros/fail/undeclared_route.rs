use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{NodeContext, NodeResult};

#[derive(Clone, Default, Serialize, Deserialize, trellis::GraphState)]
struct Ticket {
    approved: bool,
}

trellis::graph! {
    graph Support {
        state Ticket;
        node review;
        node send;
        START -> review;
        review -> send | END;
        send -> END;
    }
}

struct Desk;

impl support::Handlers for Desk {
    async fn review(&self, _: Arc<Ticket>, _: &mut NodeContext) -> support::NodeOutput {
        Ok(NodeResult::None)
    }
    async fn send(&self, _: Arc<Ticket>, _: &mut NodeContext) -> support::NodeOutput {
        Ok(NodeResult::None)
    }
    fn route_review(&self, ticket: &Ticket, _: &trellis::Visits<'_>) -> support::ReviewRoute {
        // `draft` is not a target of `review`: the enum has no such variant.
        if ticket.approved { support::ReviewRoute::Send } else { support::ReviewRoute::Draft }
    }
}

fn main() {
    let _ = support::build(Desk);
}
