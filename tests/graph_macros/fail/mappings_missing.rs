// A subgraph runs on another state type and the handlers map nothing: the error is at the
// `build` call, names the subgraph and the methods to write.
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{CompiledGraph, NodeContext, NodeResult};

#[derive(Clone, Default, Serialize, Deserialize, trellis::GraphState)]
struct Claim {
    amount: u32,
}

#[derive(Clone, Default, Serialize, Deserialize, trellis::GraphState)]
struct Case {
    notes: u32,
}

impl trellis::interrupt::ApplyResume for Case {
    type Input = ();
    fn apply_resume(&self, _: &trellis::interrupt::Interrupt, _: ()) -> CaseUpdate {
        CaseUpdate::default()
    }
}

trellis::graph! {
    graph Legal {
        state Case;
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
    async fn check(&self, _: Arc<Case>, _: &mut NodeContext) -> legal::NodeOutput {
        Ok(NodeResult::None)
    }
}

struct Desk;

impl claims::Handlers for Desk {
    async fn assess(&self, _: Arc<Claim>, _: &mut NodeContext) -> claims::NodeOutput {
        Ok(NodeResult::None)
    }
    fn legal(&self) -> CompiledGraph<Case> {
        legal::build(Lawyer)
    }
}

fn main() {
    let _ = claims::build(Desk);
}
