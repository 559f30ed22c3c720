// The subgraph misspells its state (`Clam`) where its parent names the one the user meant
// (`Claim`), so the user's code treats it as a same-state subgraph and maps nothing: one error,
// at `Clam`, and no `Mappings` asked of the user's correct code.
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{CompiledGraph, NodeContext, NodeResult};

#[derive(Clone, Default, Serialize, Deserialize, trellis::GraphState)]
struct Claim {
    amount: u32,
}

trellis::graph! {
    graph Legal {
        state Clam;
        node check;
        START -> check -> END;
    }

    graph Claims {
        state Claim;
        node assess;
        node legal { graph Legal; }
        START -> assess -> legal -> END;
    }
}

struct Lawyer;

impl legal::Handlers for Lawyer {
    async fn check(&self, _: Arc<Claim>, _: &mut NodeContext) -> legal::NodeOutput {
        Ok(NodeResult::None)
    }
}

struct Desk;

impl claims::Handlers for Desk {
    async fn assess(&self, _: Arc<Claim>, _: &mut NodeContext) -> claims::NodeOutput {
        Ok(NodeResult::None)
    }
    fn legal(&self) -> CompiledGraph<Claim> {
        legal::build(Lawyer)
    }
}

fn main() {
    let _ = claims::build(Desk);
}
