//! Every construct of the language through `graph!`, in a crate that denies every warning the
//! generated code could raise; then the graphs run.
#![deny(warnings, missing_docs, unreachable_pub, unused, clippy::all)]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{GraphState, NodeContext};

/// The state of the first graph.
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Work {
    /// What ran, in order.
    #[reducer(append)]
    pub log: Vec<String>,
}

trellis::graph! {
    //! Two graphs in one block.

    /// Every attribute, a conditional entry, a fork, a keyword as a node name.
    graph Everything {
        state Work;
        max_steps 50;

        /// Starts the work.
        node plan { kind dispatch; meta owner = "team"; meta pages = 3; meta live = true; }
        node r#type { retry 2 backoff 10ms max 15ms jitter; retry_on timeout, panic; timeout 5s; max_visits 3; }
        node left { interrupt after; }
        node right { on_error fallback; }
        node fallback { kind "custom"; }
        node join { defer; kind finalize; }
        node skip;

        START -> plan | skip;
        plan -> type & left & right;
        type -> join;
        left -> join;
        right -> join;
        fallback -> join;
        join -> END;
        skip -> END;
    }

    /// A waiting join: `merge` runs once, after `quick` (step 2) and `slow` (step 3).
    graph Joined {
        state Work;
        node split;
        node quick;
        node long;
        node slow;
        node merge;
        START -> split;
        split -> quick & long;
        long -> slow;
        quick & slow -> merge -> END;
    }

    /// Sends: `plan` sends one `summarize` per document, two at most at once; `merge` runs
    /// once, after all of them.
    graph Batch {
        state Work;
        node plan;
        node summarize { input String; max_concurrency 2; }
        node merge;
        START -> plan;
        plan -> each summarize;
        summarize -> merge -> END;
    }

    /// No `state`: the handlers choose it.
    graph Generic {
        node only;
        START -> only;
        only -> END;
    }
}

struct Worker;

fn log(entry: &str) -> everything::NodeOutput {
    Ok(WorkUpdate::default().log(entry).into())
}

impl everything::Handlers for Worker {
    async fn plan(&self, _: Arc<Work>, _: &mut NodeContext) -> everything::NodeOutput {
        log("plan")
    }
    async fn r#type(&self, _: Arc<Work>, _: &mut NodeContext) -> everything::NodeOutput {
        log("type")
    }
    async fn left(&self, _: Arc<Work>, _: &mut NodeContext) -> everything::NodeOutput {
        log("left")
    }
    async fn right(&self, _: Arc<Work>, _: &mut NodeContext) -> everything::NodeOutput {
        log("right")
    }
    async fn fallback(&self, _: Arc<Work>, _: &mut NodeContext) -> everything::NodeOutput {
        log("fallback")
    }
    async fn join(&self, _: Arc<Work>, _: &mut NodeContext) -> everything::NodeOutput {
        log("join")
    }
    async fn skip(&self, _: Arc<Work>, _: &mut NodeContext) -> everything::NodeOutput {
        log("skip")
    }
    fn route_start(&self, _: &Work, _: &trellis::Visits<'_>) -> everything::StartRoute {
        everything::StartRoute::Plan
    }
}

struct Joiner;

impl joined::Handlers for Joiner {
    async fn split(&self, _: Arc<Work>, _: &mut NodeContext) -> joined::NodeOutput {
        log("split")
    }
    async fn quick(&self, _: Arc<Work>, _: &mut NodeContext) -> joined::NodeOutput {
        log("quick")
    }
    async fn long(&self, _: Arc<Work>, _: &mut NodeContext) -> joined::NodeOutput {
        log("long")
    }
    async fn slow(&self, _: Arc<Work>, _: &mut NodeContext) -> joined::NodeOutput {
        log("slow")
    }
    async fn merge(&self, _: Arc<Work>, _: &mut NodeContext) -> joined::NodeOutput {
        log("merge")
    }
}

struct Batcher;

impl batch::Handlers for Batcher {
    async fn plan(&self, _: Arc<Work>, _: &mut NodeContext) -> batch::NodeOutput {
        log("plan")
    }
    async fn summarize(
        &self,
        _: Arc<Work>,
        document: String,
        _: &mut NodeContext,
    ) -> batch::NodeOutput {
        log(&format!("summarize {document}"))
    }
    async fn merge(&self, _: Arc<Work>, _: &mut NodeContext) -> batch::NodeOutput {
        log("merge")
    }
    fn send_plan(&self, _: &Work, _: &trellis::Visits<'_>) -> Vec<batch::PlanSend> {
        ["a", "b", "c"]
            .into_iter()
            .map(|document| batch::PlanSend::Summarize(document.to_owned()))
            .collect()
    }
}

/// A state chosen by the handlers of the generic graph.
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Count {
    #[reducer(sum)]
    n: u32,
}

struct Counter;

impl generic::Handlers for Counter {
    type State = Count;
    async fn only(&self, _: Arc<Count>, _: &mut NodeContext) -> generic::NodeOutput<Count> {
        Ok(CountUpdate::default().n(1).into())
    }
}

fn main() {
    assert_eq!(everything::Node::ALL.len(), 7);
    assert_eq!(everything::Node::Type.as_str(), "type");
    assert_eq!(everything::StartRoute::Skip.as_str(), "skip");
    let blueprint = everything::blueprint();
    assert!(blueprint.nodes.iter().any(|node| node.meta.iter().any(|(key, _)| key == "owner")));
    let retry = blueprint.nodes[1].retry.expect("`type` retries");
    assert_eq!((retry.max_backoff_ms, retry.jitter), (Some(15), true));
    assert_eq!(retry.on.names().collect::<Vec<_>>(), ["timeout", "panic"]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let graph = everything::build(Worker)
            .with_checkpointer(Arc::new(trellis::checkpoint::InMemoryCheckpointer::new()));
        let paused = graph.invoke(Work::default()).await.expect("runs");
        assert_eq!(paused.interrupts()[0].id, "left@2", "interrupt after `left`");
        let done = graph.resume(paused.run_id(), ()).await.expect("resumes");
        assert_eq!(done.state().log, ["plan", "type", "left", "right", "join"]);
        let joined = joined::build(Joiner).invoke(Work::default()).await.expect("runs");
        assert_eq!(joined.state().log, ["split", "quick", "long", "slow", "merge"]);
        let sent = batch::build(Batcher).invoke(Work::default()).await.expect("runs");
        assert_eq!(
            sent.state().log,
            ["plan", "summarize a", "summarize b", "summarize c", "merge"]
        );
        assert_eq!(batch::PlanSend::Summarize(String::new()).node(), "summarize");
        let counted = generic::build(Counter).invoke(Count::default()).await.expect("runs");
        assert_eq!(counted.state().n, 1);
    });
}

impl trellis::interrupt::ApplyResume for Work {
    type Input = ();
    fn apply_resume(&self, _: &trellis::interrupt::Interrupt, _: ()) -> WorkUpdate {
        WorkUpdate::default()
    }
}
