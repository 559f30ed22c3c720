use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{GraphState, NodeContext};

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
        START -> web -> END;
    }
}

struct Desk;

impl desk::Handlers for Desk {
    async fn web(&self, _: Arc<Research>, _: &mut NodeContext) -> desk::Written<desk::WebWrites> {
        // `web` declares `writes notes`: setting `answer` does not compile.
        Ok(desk::WebWrites::default().notes("found").answer("done".to_owned()).into())
    }
}

fn main() {
    let _ = desk::build(Desk);
}
