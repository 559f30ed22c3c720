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
        node plan;
        // Both run in step 2: `notes` appends, `answer` overwrites.
        node web { writes notes, answer; }
        node papers { writes notes, answer; }
        START -> plan -> web & papers;
        web -> END;
        papers -> END;
    }
}

struct Desk;

impl desk::Handlers for Desk {
    async fn plan(&self, _: Arc<Research>, _: &mut NodeContext) -> desk::NodeOutput {
        Ok(NodeResult::None)
    }

    async fn web(&self, _: Arc<Research>, _: &mut NodeContext) -> desk::Written<desk::WebWrites> {
        Ok(desk::WebWrites::default().notes("web").into())
    }

    async fn papers(&self, _: Arc<Research>, _: &mut NodeContext) -> desk::Written<desk::PapersWrites> {
        Ok(desk::PapersWrites::default().notes("papers").into())
    }
}

fn main() {
    let _ = desk::build(Desk);
}
