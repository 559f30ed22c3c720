use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{NodeContext, NodeResult};

#[derive(Clone, Default, Serialize, Deserialize, trellis::GraphState)]
struct Ticket {}

#[derive(Clone, Default, Serialize, Deserialize, trellis::GraphState)]
struct Invoice {}

trellis::graph! {
    graph Support {
        state Ticket;
        node review;
        START -> review;
        review -> END;
    }
}

struct Desk;

impl support::Handlers for Desk {
    async fn review(&self, _: Arc<Invoice>, _: &mut NodeContext) -> support::NodeOutput {
        Ok(NodeResult::None)
    }
}

fn main() {
    let _ = support::build(Desk);
}
