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

/// The run list the studio reads: subgraph runs under their run, one run's subgraph runs, a
/// thread's runs; and the thread, once run on, names its graph as LangGraph's server does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_are_listed_with_their_subgraph_runs_and_by_thread() {
    let running = desk_server().await;
    let client = Client::new(&running);
    let (_, thread) = client.post("/threads", &json!({})).await;
    let id = thread["thread_id"].as_str().unwrap();
    let mut runs = Vec::new();
    for _ in 0..2 {
        let (status, run) = client
            .post(
                &format!("/threads/{id}/runs/wait"),
                &json!({ "assistant_id": "Desk", "input": {} }),
            )
            .await;
        assert_eq!(status, 200, "{run}");
    }
    let (_, listed) = client.get(&format!("/threads/{id}/runs")).await;
    for run in listed.as_array().unwrap() {
        runs.push(run["run_id"].as_str().unwrap().to_owned());
    }
    assert_eq!(runs.len(), 2);

    // Beside each other by default; nested (only under their own run) when asked.
    let (_, all) = client.get("/runs").await;
    let ids: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            format!("{}/research@2", runs[0]),
            runs[0].clone(),
            format!("{}/research@2", runs[1]),
            runs[1].clone()
        ]
    );
    let (_, nested) = client.get("/runs?subgraphs=true&graph=Desk").await;
    let nested = nested.as_array().unwrap();
    assert_eq!(nested.len(), 2);
    for (run, id) in nested.iter().zip(&runs) {
        assert_eq!(run["run_id"], json!(id));
        assert_eq!(run["subgraphs"].as_array().unwrap().len(), 1, "{run}");
        let child = &run["subgraphs"][0];
        assert_eq!(child["run_id"], json!(format!("{id}/research@2")));
        assert_eq!(
            (&child["graph"], &child["status"]),
            (&json!("Research"), &json!("completed"))
        );
        assert!(child.get("state").is_none(), "a summary: {child}");
    }
    let (_, under) = client.get(&format!("/runs?parent={}", runs[1])).await;
    assert_eq!(under.as_array().unwrap().len(), 1);
    assert_eq!(under[0]["run_id"], json!(format!("{}/research@2", runs[1])));
    let (_, none) = client
        .get(&format!("/runs?parent={}/research@2", runs[1]))
        .await;
    assert_eq!(none, json!([]));

    // A thread's runs, through its index, with their states when asked.
    let (_, on_thread) = client
        .get(&format!("/runs?thread={id}&state=true&limit=1"))
        .await;
    assert_eq!(on_thread.as_array().unwrap().len(), 1);
    assert_eq!(on_thread[0]["run_id"], json!(runs[0]));
    assert_eq!(on_thread[0]["state"]["log"].as_array().unwrap().len(), 6);
    let (status, refused) = client
        .get(&format!("/runs?thread={id}&subgraphs=true"))
        .await;
    assert_eq!(status, 400, "{refused}");
    let (status, _) = client.get("/runs?thread=not%20an%20id").await;
    assert_eq!(status, 400);

    let (_, thread) = client.get(&format!("/threads/{id}")).await;
    assert_eq!(thread["metadata"]["graph_id"], json!("Desk"));
    let (_, assistant) = client.get("/assistants/Desk").await;
    assert_eq!(
        thread["metadata"]["assistant_id"],
        assistant["assistant_id"]
    );
    let (_, found) = client
        .post(
            "/threads/search",
            &json!({ "metadata": { "graph_id": "Desk" } }),
        )
        .await;
    assert_eq!(found[0]["thread_id"], json!(id));
    running.shutdown().await;
}
