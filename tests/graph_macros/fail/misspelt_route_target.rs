// A conditional target that is not declared: one error, at the target. The router that names
// the target as the source spells it adds no "no variant" error while that error stands.
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
        review -> sned | END;
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
        if ticket.approved { support::ReviewRoute::Sned } else { support::ReviewRoute::End }
    }
}

fn main() {
    let _ = support::build(Desk);
}
