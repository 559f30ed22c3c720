//! A subgraph node writes what its child graph writes: beside a node of the same step, a field
//! both write and whose reducer overwrites is E0214. (Two subgraph nodes on this state in one
//! step are E0218, whatever they write.)

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{CompiledGraph, GraphState, NodeContext};

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Research {
    #[reducer(append)]
    pub notes: Vec<String>,
    pub answer: Option<String>,
    pub verdict: Option<String>,
}

trellis::graph! {
    graph Review {
        state Research;
        node read { writes notes; }
        node judge { writes answer, verdict; }
        START -> read -> judge -> END;
    }

    graph Desk {
        state Research;
        node plan;
        // Both run in step 2 and write `answer`, which overwrites (`notes` appends).
        node web { writes notes, answer; }
        node review { graph Review; }
        START -> plan -> web & review;
        web -> END;
        review -> END;
    }
}

struct Reviewer;

impl review::Handlers for Reviewer {
    async fn read(&self, _: Arc<Research>, _: &mut NodeContext) -> review::Written<review::ReadWrites> {
        Ok(review::ReadWrites::default().notes("read").into())
    }

    async fn judge(&self, _: Arc<Research>, _: &mut NodeContext) -> review::Written<review::JudgeWrites> {
        Ok(review::JudgeWrites::default().verdict(Some("fine".into())).into())
    }
}

struct Desk;

impl desk::Handlers for Desk {
    async fn plan(&self, _: Arc<Research>, _: &mut NodeContext) -> desk::NodeOutput {
        Ok(trellis::NodeResult::None)
    }

    async fn web(&self, _: Arc<Research>, _: &mut NodeContext) -> desk::Written<desk::WebWrites> {
        Ok(desk::WebWrites::default().answer(Some("web".into())).into())
    }

    fn review(&self) -> CompiledGraph<Research> {
        review::build(Reviewer)
    }
}

fn main() {
    let _ = desk::build(Desk);
}
