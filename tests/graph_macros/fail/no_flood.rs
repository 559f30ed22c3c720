// The graph has one error; the code that names its module must add no error of its own.
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{NodeContext, NodeResult};

#[derive(Clone, Default, Serialize, Deserialize, trellis::GraphState)]
struct Ticket {}

trellis::graph! {
    graph Support {
        state Ticket;
        node review;
        node send;
        START -> review;
        review -> send | ENDD;
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
    fn route_review(&self, _: &Ticket, _: &trellis::Visits<'_>) -> support::ReviewRoute {
        support::ReviewRoute::Send
    }
}

fn main() {
    let graph = support::build(Desk);
    let _ = (graph, support::Node::ALL, support::blueprint());
}
