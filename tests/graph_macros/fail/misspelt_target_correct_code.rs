// The graph misspells a routed target (`pyy`); the user's code names the node it meant
// (`AssessRoute::Pay`) and implements every handler: one error, at `pyy`, and none in the
// user's correct code.
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{NodeContext, NodeResult};

#[derive(Clone, Default, Serialize, Deserialize, trellis::GraphState)]
struct Claim {
    amount: u32,
}

trellis::graph! {
    graph Claims {
        state Claim;
        node assess;
        node pay;
        node decline;
        START -> assess;
        assess -> pyy | decline;
        pay -> END;
        decline -> END;
    }
}

struct Desk;

impl claims::Handlers for Desk {
    async fn assess(&self, _: Arc<Claim>, _: &mut NodeContext) -> claims::NodeOutput {
        Ok(NodeResult::None)
    }
    async fn pay(&self, _: Arc<Claim>, _: &mut NodeContext) -> claims::NodeOutput {
        Ok(NodeResult::None)
    }
    async fn decline(&self, _: Arc<Claim>, _: &mut NodeContext) -> claims::NodeOutput {
        Ok(NodeResult::None)
    }
    fn route_assess(&self, claim: &Claim, _: &trellis::Visits<'_>) -> claims::AssessRoute {
        if claim.amount < 100 {
            claims::AssessRoute::Pay
        } else {
            claims::AssessRoute::Decline
        }
    }
}

fn main() {
    let _ = (claims::build(Desk), claims::Node::Pay);
}
