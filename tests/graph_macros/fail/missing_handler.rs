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
        review -> send;
        send -> END;
    }
}

struct Desk;

impl support::Handlers for Desk {
    async fn review(&self, _: Arc<Ticket>, _: &mut NodeContext) -> support::NodeOutput {
        Ok(NodeResult::None)
    }
}

fn main() {
    let _ = support::build(Desk);
}
