//! `stream_subgraphs`: a subgraph's items in LangGraph's namespaced events
//! (`updates|research@2`), beside the parent's own, only when asked.

mod common;

use common::{Client, serve_graph, streamed};
use serde_json::{Value, json};
use trellis::{END, GraphBuilder, GraphState, START};

#[derive(Clone, Default, serde::Serialize, serde::Deserialize, GraphState)]
struct Desk {
    #[reducer(append)]
    log: Vec<String>,
}

/// Nothing here asks a person: an answer is taken as an empty update.
impl trellis::interrupt::ApplyResume for Desk {
    type Input = ();
    fn apply_resume(&self, _: &trellis::interrupt::Interrupt, (): ()) -> DeskUpdate {
        DeskUpdate::default()
    }
}

/// plan → research (search → sum, on the same state) → END.
async fn desk_server() -> trellis_server::Running {
    let mut child = GraphBuilder::<Desk>::new("Research");
    child
        .add_node_fn("search", |_, _| async {
            Ok(DeskUpdate::default().log("searched").into())
        })
        .add_node_fn("sum", |_, _| async {
            Ok(DeskUpdate::default().log("summed").into())
        })
        .add_edge(START, "search")
        .add_edge("search", "sum")
        .add_edge("sum", END);
    let mut parent = GraphBuilder::<Desk>::new("Desk");
    parent
        .add_node_fn("plan", |_, _| async {
            Ok(DeskUpdate::default().log("planned").into())
        })
        .add_subgraph("research", child.compile().expect("a valid child"))
        .add_edge(START, "plan")
        .add_edge("plan", "research")
        .add_edge("research", END);
    serve_graph(parent.compile().expect("a valid graph")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subgraph_s_updates_and_values_come_namespaced_when_asked() {
    let running = desk_server().await;
    let client = Client::new(&running);
    let (_, thread) = client.post("/threads", &json!({})).await;
    let id = thread["thread_id"].as_str().unwrap();
    let request = |subgraphs: bool| {
        json!({ "assistant_id": "Desk", "input": {}, "stream_mode": ["updates", "values"],
            "stream_subgraphs": subgraphs })
    };
    let events = streamed(&client, id, request(true)).await;
    let named: Vec<(&str, Value)> = events
        .iter()
        .filter(|(name, _)| name.starts_with("updates"))
        .map(|(name, data)| {
            (
                name.as_str(),
                json!(data.as_object().unwrap().keys().collect::<Vec<_>>()),
            )
        })
        .collect();
    assert_eq!(
        named,
        [
            ("updates", json!(["plan"])),
            // The child on the parent's state: each of its updates is the subgraph node's
            // too, then its own under its namespace.
            ("updates", json!(["research"])),
            ("updates|research@2", json!(["search"])),
            ("updates", json!(["research"])),
            ("updates|research@2", json!(["sum"])),
        ]
    );
    let child_values: Vec<&Value> = events
        .iter()
        .filter(|(name, _)| name == "values|research@2")
        .map(|(_, data)| &data["log"])
        .collect();
    assert_eq!(
        child_values.last().copied(),
        Some(&json!(["planned", "searched", "summed"]))
    );

    let plain = streamed(&client, id, request(false)).await;
    assert!(
        plain.iter().all(|(name, _)| !name.contains('|')),
        "{plain:?}"
    );
    running.shutdown().await;
}
