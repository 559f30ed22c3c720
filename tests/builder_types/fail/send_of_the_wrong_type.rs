use serde::{Deserialize, Serialize};
use trellis::{END, GraphBuilder, GraphState, START};

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
struct Review {
    documents: Vec<String>,
    #[reducer(append)]
    summaries: Vec<String>,
}

fn main() {
    let mut graph = GraphBuilder::<Review>::new("Review");
    let summarize = graph.add_sent_node_fn("summarize", |_, document: String, _| async move {
        Ok(ReviewUpdate::default().summaries(document).into())
    });
    // The node reads a `String`: sending it the documents' count does not compile.
    graph
        .add_send_to(START, &summarize, |review: &Review, _| vec![review.documents.len()])
        .add_edge("summarize", END);
    let _ = summarize.with(&3_u32);
}
