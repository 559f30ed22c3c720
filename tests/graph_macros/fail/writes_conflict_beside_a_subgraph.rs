//! A subgraph node writes what its child graph writes: beside a node of the same step, or
//! beside another subgraph node, a field both write and whose reducer overwrites is E0214.

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

    graph Check {
        state Research;
        node check { writes notes, verdict; }
        START -> check -> END;
    }

    graph Desk {
        state Research;
        node plan;
        // All three run in step 2: `web` and `review` both write `answer`, `review` and
        // `check` both write `verdict`; both overwrite.
        node web { writes notes, answer; }
        node review { graph Review; }
        node check { graph Check; }
        START -> plan -> web & review & check;
        web -> END;
        review -> END;
        check -> END;
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

struct Checker;

impl check::Handlers for Checker {
    async fn check(&self, _: Arc<Research>, _: &mut NodeContext) -> check::Written<check::CheckWrites> {
        Ok(check::CheckWrites::default().verdict(Some("checked".into())).into())
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

    fn check(&self) -> CompiledGraph<Research> {
        check::build(Checker)
    }
}

fn main() {
    let _ = desk::build(Desk);
}
