//! A subgraph node runs beside a node of the same step, and both write `notes`, which appends:
//! the graph compiles (E0214 reads the child's write sets), and the run keeps both writes.
#![deny(warnings, missing_docs, unreachable_pub, unused, clippy::all)]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{CompiledGraph, GraphState, NodeContext};

/// What a research run gathers.
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Research {
    /// Notes, from every branch.
    #[reducer(append)]
    pub notes: Vec<String>,
    /// The review's verdict; only the review writes it.
    pub verdict: Option<String>,
}

trellis::graph! {
    /// Reads what was found, then judges it.
    graph Review {
        state Research;
        node read { writes notes; }
        node judge { writes verdict; }
        START -> read -> judge -> END;
    }

    /// Searches the web while the review runs.
    graph Desk {
        state Research;
        node plan;
        node web { writes notes; }
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
        Ok(ResearchUpdate::default().notes("plan").into())
    }

    async fn web(&self, _: Arc<Research>, _: &mut NodeContext) -> desk::Written<desk::WebWrites> {
        Ok(desk::WebWrites::default().notes("web").into())
    }

    fn review(&self) -> CompiledGraph<Research> {
        review::build(Reviewer)
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let outcome = runtime
        .block_on(desk::build(Desk).invoke(Research::default()))
        .expect("the run ends");
    let state = outcome.state();
    // The child's final state, with `web`'s append of the same step merged over it.
    assert_eq!(state.notes, ["plan", "read", "web"]);
    assert_eq!(state.verdict.as_deref(), Some("fine"));
}
