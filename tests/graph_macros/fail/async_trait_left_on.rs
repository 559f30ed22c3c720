// An implementation written for the trait as it was generated before (with `#[async_trait]`):
// rustc points at the method whose signature no longer matches.
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{NodeContext, NodeResult};

#[derive(Clone, Default, Serialize, Deserialize, trellis::GraphState)]
struct Ticket {}

trellis::graph! {
    graph Support {
        state Ticket;
        node review;
        START -> review;
        review -> END;
    }
}

struct Desk;

#[trellis::async_trait]
impl support::Handlers for Desk {
    async fn review(&self, _: Arc<Ticket>, _: &mut NodeContext) -> support::NodeOutput {
        Ok(NodeResult::None)
    }
}

fn main() {
    let _ = support::build(Desk);
}
