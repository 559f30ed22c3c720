//! `docs/server.md` says what is true: its JSON-RPC table lists the methods the server has, and
//! its REST table the routes it answers.

mod common;

use std::sync::Arc;

use common::{Client, serve};
use serde_json::json;
use trellis::checkpoint::InMemoryCheckpointer;
use trellis_server::ServeOptions;

fn document() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/server.md");
    std::fs::read_to_string(path).expect("docs/server.md")
}

/// The first cell of each row of the table under `heading`.
fn first_cells(text: &str, heading: &str) -> Vec<String> {
    text.split(heading)
        .nth(1)
        .expect("the section")
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .filter_map(|row| row.split('|').nth(1))
        .map(|cell| cell.trim().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_methods_and_routes_are_the_servers() {
    let running = serve(
        Arc::new(InMemoryCheckpointer::new()),
        ServeOptions::default(),
    )
    .await;
    let client = Client::new(&running);
    let text = document();

    let documented: Vec<String> = first_cells(&text, "## JSON-RPC")
        .iter()
        .map(|cell| cell.trim_matches('`').to_owned())
        .collect();
    let refusal = client
        .rpc("graph_nothing", json!({}))
        .await
        .expect_err("no such method");
    let listed = refusal["message"].as_str().expect("a message");
    let listed: Vec<String> = listed
        .split("(the methods are: ")
        .nth(1)
        .expect("the list")
        .trim_end_matches(')')
        .split(", ")
        .map(str::to_owned)
        .collect();
    assert_eq!(documented, listed);

    // Every documented route is one the server answers (a 404 here would be the router's, with
    // no JSON body; the server's own 404s say what was not found).
    let (_, run) = client
        .post("/runs", &json!({"graph": "Jobs", "input": {"rounds": 1}}))
        .await;
    let run_id = run["run_id"].as_str().expect("an id").to_owned();
    client.settle(&run_id).await;
    for cell in first_cells(&text, "## REST") {
        // The backticked `METHOD /path` pieces of the cell (a body's shape may follow).
        let routes = cell
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|piece| piece.starts_with("GET ") || piece.starts_with("POST "));
        for route in routes {
            let (method, path) = route.split_once(' ').expect("METHOD /path");
            let path = path
                .split(' ')
                .next()
                .unwrap_or(path)
                .split('?')
                .next()
                .unwrap_or(path);
            let path = path.replace("{name}", "Jobs").replace("{id}", &run_id);
            let path = if path.starts_with("/agents/") {
                "/agents".to_owned()
            } else {
                path
            };
            let url = format!("{}{path}", client.base);
            let response = match method {
                "GET" if path.ends_with("/stream") => client.http.get(&url).send().await,
                "GET" => client.http.get(&url).send().await,
                "POST" => client.http.post(&url).json(&json!({})).send().await,
                other => panic!("a method the table should not have: {other}"),
            }
            .expect("the server answers");
            let status = response.status().as_u16();
            // A stream that stays open (`/changes`) is not read to an end it never reaches:
            // a 200 with its content type says the route is there.
            let body = if response
                .headers()
                .get("content-type")
                .is_some_and(|kind| kind == "text/event-stream")
                && path == "/changes"
            {
                String::new()
            } else {
                response.text().await.unwrap_or_default()
            };
            assert!(
                status != 404 || body.contains("\"error\""),
                "{route}: the router knows no {path}"
            );
            assert!(status != 405, "{route}: not a {method} route");
        }
    }

    // The same for LangGraph's routes, with a thread and a run of it for `{id}` and `{run_id}`
    // (the server's own 404s say what was not found, in LangGraph's `{"detail": …}`).
    let (_, thread) = client.post("/threads", &json!({})).await;
    let thread_id = thread["thread_id"].as_str().expect("a thread").to_owned();
    let (_, thread_run) = client
        .post(
            &format!("/threads/{thread_id}/runs/wait"),
            &json!({"assistant_id": "Jobs", "input": {"rounds": 1}}),
        )
        .await;
    assert_eq!(thread_run["done"], 1);
    let (_, runs) = client.get(&format!("/threads/{thread_id}/runs")).await;
    let thread_run_id = runs[0]["run_id"].as_str().expect("its run").to_owned();
    let mut checked = 0;
    for cell in first_cells(&text, "## LangGraph's Agent Server protocol") {
        let routes = cell.split('`').skip(1).step_by(2).filter(|piece| {
            ["GET ", "POST ", "PATCH "]
                .iter()
                .any(|method| piece.starts_with(method))
        });
        for route in routes {
            let (method, path) = route.split_once(' ').expect("METHOD /path");
            let path = path.split('?').next().unwrap_or(path);
            let path = path
                .replace("{run_id}", &thread_run_id)
                .replace("/assistants/{id}", "/assistants/Jobs")
                .replace("{id}", &thread_id);
            let url = format!("{}{path}", client.base);
            let response = match method {
                "GET" => client.http.get(&url).send().await,
                "POST" => {
                    client
                        .http
                        .post(&url)
                        .json(&json!({"assistant_id": "Jobs", "input": {"rounds": 1}}))
                        .send()
                        .await
                }
                "PATCH" => client.http.patch(&url).json(&json!({})).send().await,
                other => panic!("a method the table should not have: {other}"),
            }
            .expect("the server answers");
            let status = response.status().as_u16();
            let body = response.text().await.unwrap_or_default();
            assert!(
                status != 404 || body.contains("\"detail\""),
                "{route}: the router knows no {path}"
            );
            assert!(status != 405, "{route}: not a {method} route");
            checked += 1;
        }
    }
    assert!(
        checked >= 23,
        "every route of the LangGraph table ({checked})"
    );
    running.shutdown().await;
}
