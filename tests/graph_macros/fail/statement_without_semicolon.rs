// A `;` missing after `node greet`: one error, where the `;` belongs, and nothing about `wave`
// (declared on the next line) or about the handlers that implement both.
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{NodeContext, NodeResult};

#[derive(Clone, Default, Serialize, Deserialize, trellis::GraphState)]
struct Hello {}

trellis::graph! {
    graph Greeting {
        state Hello;
        node greet
        node wave;
        START -> greet;
        greet -> wave;
        wave -> END;
    }
}

struct Host;

impl greeting::Handlers for Host {
    async fn greet(&self, _: Arc<Hello>, _: &mut NodeContext) -> greeting::NodeOutput {
        Ok(NodeResult::None)
    }
    async fn wave(&self, _: Arc<Hello>, _: &mut NodeContext) -> greeting::NodeOutput {
        Ok(NodeResult::None)
    }
}

fn main() {
    let _ = greeting::build(Host);
}
