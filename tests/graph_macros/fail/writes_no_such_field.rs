use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{GraphState, NodeContext, NodeResult};

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Research {
    #[reducer(append)]
    pub notes: Vec<String>,
    pub answer: Option<String>,
}

trellis::graph! {
    graph Desk {
        state Research;
        node web { writes notes; }
        node write { writes answr; }
        START -> web -> write -> END;
    }
}

struct Desk;

impl desk::Handlers for Desk {
    async fn web(&self, _: Arc<Research>, _: &mut NodeContext) -> desk::Written<desk::WebWrites> {
        Ok(desk::WebWrites::default().notes("found").into())
    }

    async fn write(&self, _: Arc<Research>, _: &mut NodeContext) -> desk::Written<desk::WriteWrites> {
        Ok(NodeResult::None)
    }
}

fn main() {
    let _ = desk::build(Desk);
}
