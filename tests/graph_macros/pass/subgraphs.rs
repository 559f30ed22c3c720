//! Subgraph nodes through `graph!`: one on the parent's own state, one on a state of its own
//! with generated mapping methods, one from another module named by its path; a pause inside
//! the first is answered through the parent.
#![deny(warnings, missing_docs, unreachable_pub, unused, clippy::all)]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{CompiledGraph, GraphState, NodeContext, WholeState};

/// The state of the desk and its review.
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Work {
    /// What ran, in order.
    #[reducer(append)]
    pub log: Vec<String>,
}

/// What the lookup finds.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct Found {
    /// The question.
    pub query: String,
    /// The answer.
    pub hits: Vec<String>,
}

impl WholeState for Found {}

impl trellis::interrupt::ApplyResume for Found {
    type Input = ();
    fn apply_resume(&self, _: &trellis::interrupt::Interrupt, _: ()) -> Found {
        self.clone()
    }
}

impl trellis::interrupt::ApplyResume for Work {
    type Input = ();
    fn apply_resume(&self, interrupt: &trellis::interrupt::Interrupt, _: ()) -> WorkUpdate {
        WorkUpdate::default().log(format!("approved {}", interrupt.id))
    }
}

trellis::graph! {
    /// Checks a draft, and asks before approving it.
    graph Review {
        state Work;
        node check;
        node approve { interrupt before; }
        START -> check -> approve -> END;
    }

    /// Looks things up, on a state of its own.
    graph Lookup {
        state Found;
        node search;
        START -> search -> END;
    }

    /// Runs them as nodes.
    graph Desk {
        state Work;
        node draft;
        node review { graph Review; }
        node lookup { graph Lookup; }
        node count { graph elsewhere::Counting; }
        START -> draft -> review -> lookup -> count -> END;
    }
}

/// A graph of another module, named by its path.
mod elsewhere {
    use super::Found;

    trellis::graph! {
        /// Counts what was found.
        graph Counting {
            state Found;
            node tally;
            START -> tally -> END;
        }
    }
}

struct Tally;

impl elsewhere::counting::Handlers for Tally {
    async fn tally(&self, found: Arc<Found>, _: &mut NodeContext) -> elsewhere::counting::NodeOutput {
        let mut found = (*found).clone();
        found.hits = vec![format!("{} lines", found.query.lines().count())];
        Ok(found.into())
    }
}

struct Reviewer;

impl review::Handlers for Reviewer {
    async fn check(&self, _: Arc<Work>, _: &mut NodeContext) -> review::NodeOutput {
        Ok(WorkUpdate::default().log("check").into())
    }
    async fn approve(&self, _: Arc<Work>, _: &mut NodeContext) -> review::NodeOutput {
        Ok(WorkUpdate::default().log("approve").into())
    }
}

struct Searcher;

impl lookup::Handlers for Searcher {
    async fn search(&self, found: Arc<Found>, _: &mut NodeContext) -> lookup::NodeOutput {
        let mut found = (*found).clone();
        found.hits.push(format!("{} found", found.query));
        Ok(found.into())
    }
}

struct Clerk;

impl desk::Handlers for Clerk {
    async fn draft(&self, _: Arc<Work>, _: &mut NodeContext) -> desk::NodeOutput {
        Ok(WorkUpdate::default().log("draft").into())
    }
    fn review(&self) -> CompiledGraph<Work> {
        review::build(Reviewer)
    }
    fn lookup(&self) -> CompiledGraph<Found> {
        lookup::build(Searcher)
    }
    fn count(&self) -> CompiledGraph<elsewhere::counting::State> {
        elsewhere::counting::build(Tally)
    }
}

impl desk::Mappings for Clerk {
    fn lookup_input(&self, work: &Work) -> Found {
        Found {
            query: work.log.join(" "),
            hits: Vec::new(),
        }
    }
    fn lookup_output(&self, _: &Work, found: Found) -> WorkUpdate {
        WorkUpdate::default().log(found.hits.join(", "))
    }
    fn count_input(&self, work: &Work) -> Found {
        Found {
            query: work.log.join("\n"),
            hits: Vec::new(),
        }
    }
    fn count_output(&self, _: &Work, found: Found) -> WorkUpdate {
        WorkUpdate::default().log(found.hits.join(", "))
    }
}

fn main() {
    assert_eq!(desk::blueprint().nodes[1].graph.as_deref(), Some("Review"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let graph = desk::build(Clerk)
            .with_checkpointer(Arc::new(trellis::checkpoint::InMemoryCheckpointer::new()));
        let paused = graph.invoke(Work::default()).await.expect("runs");
        assert_eq!(paused.interrupts()[0].id, "review@2/approve@2");
        let done = graph.resume(paused.run_id(), ()).await.expect("resumes");
        assert_eq!(
            done.state().log,
            [
                "draft",
                "check",
                "approved approve@2",
                "approve",
                "draft check approved approve@2 approve found",
                "5 lines"
            ]
        );
    });
}
