use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{GraphState, NodeContext};

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Batch {
    pub documents: Vec<String>,
    pub summary: Option<String>,
}

trellis::graph! {
    graph Digest {
        state Batch;
        node plan { writes documents; }
        // Every sent branch runs in one step, and each writes `summary`.
        node summarize { input String; writes summary; }
        START -> plan -> each summarize;
        summarize -> END;
    }
}

struct Digest;

impl digest::Handlers for Digest {
    async fn plan(&self, _: Arc<Batch>, _: &mut NodeContext) -> digest::Written<digest::PlanWrites> {
        Ok(digest::PlanWrites::default().documents(vec!["a".to_owned(), "b".to_owned()]).into())
    }

    async fn summarize(&self, _: Arc<Batch>, document: String, _: &mut NodeContext) -> digest::Written<digest::SummarizeWrites> {
        Ok(digest::SummarizeWrites::default().summary(Some(document)).into())
    }

    fn send_plan(&self, state: &Batch, _: &trellis::Visits<'_>) -> Vec<digest::PlanSend> {
        state.documents.iter().cloned().map(digest::PlanSend::Summarize).collect()
    }
}

fn main() {
    let _ = digest::build(Digest);
}
