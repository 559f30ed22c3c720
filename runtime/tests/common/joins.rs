//! Waiting joins, as scenarios every backend runs: a join whose sources are not all done is
//! kept in the checkpoint, and a run resumed elsewhere still waits for the rest.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use trellis::checkpoint::Checkpointer;
use trellis::{CompiledGraph, END, GraphBuilder, NodeOptions, START};

use super::{Answer, Ticket, log};

/// plan → (web | papers → deep), `web & deep -> summarize`; `deep` asks before it runs.
pub fn research_graph(store: Arc<dyn Checkpointer>) -> CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("JoinedResearch");
    for name in ["plan", "web", "papers", "summarize"] {
        builder.add_node_fn(name, move |_, _| async move { Ok(log(name)) });
    }
    builder
        .add_node_fn_with(
            "deep",
            |_, _| async { Ok(log("deep")) },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "plan")
        .add_fork("plan", ["web", "papers"])
        .add_edge("papers", "deep")
        .add_join(["web", "deep"], "summarize")
        .add_edge("summarize", END)
        .set_checkpointer(store);
    builder.compile().expect("valid graph")
}

/// `web` is done before the pause, `deep` after it: the join's state survives the pause in the
/// store, and `summarize` runs once, after both, in the process that resumes.
pub async fn a_join_waits_across_a_pause(
    first: Arc<dyn Checkpointer>,
    second: Arc<dyn Checkpointer>,
) {
    let paused = research_graph(first)
        .invoke(Ticket::default())
        .await
        .unwrap();
    assert!(paused.is_paused());
    assert_eq!(paused.state().log, ["plan", "web", "papers"]);
    let pause = second
        .latest_checkpoint(paused.run_id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        pause.joins.get("summarize").map(Vec::as_slice),
        Some(&["web".into()][..]),
        "the join remembers that `web` is done"
    );
    let done = research_graph(Arc::clone(&second))
        .resume(paused.run_id(), Answer::Note("go deep".to_owned()))
        .await
        .unwrap();
    assert_eq!(
        done.state().log,
        [
            "plan",
            "web",
            "papers",
            "answered deep@3",
            "go deep",
            "deep",
            "summarize"
        ]
    );
    let last = second
        .latest_checkpoint(paused.run_id())
        .await
        .unwrap()
        .unwrap();
    assert!(last.joins.is_empty(), "the join started over once it ran");
}
