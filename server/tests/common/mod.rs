//! A served graph with work steps, an optional pause and a slow mode, and an HTTP client, for
//! the server tests.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use trellis::checkpoint::RunQueue;
use trellis::{GraphState, NodeContext, Visits, interrupt::Decision};
use trellis_server::{Running, ServeOptions, Server};

/// A job: `rounds` work steps (each `slow_ms` long), then a question when `pause` is set.
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState, schemars::JsonSchema)]
#[graph_state(schema)]
#[serde(default)]
pub struct Job {
    pub rounds: u32,
    pub pause: bool,
    pub slow_ms: u64,
    #[reducer(sum)]
    pub done: u32,
    #[reducer(append)]
    pub log: Vec<String>,
    #[answer]
    pub decision: Option<Decision>,
}

trellis::graph! {
    /// Works a number of rounds, asks when told to, and finishes.
    graph Jobs {
        state Job;
        node work { max_visits 50; }
        node ask { interrupt before "Go on?"; }
        node finish;
        START -> work;
        work -> work | ask | finish;
        ask -> finish;
        finish -> END;
    }
}

pub struct Worker;

impl jobs::Handlers for Worker {
    async fn work(&self, job: Arc<Job>, _: &mut NodeContext) -> jobs::NodeOutput {
        tokio::time::sleep(Duration::from_millis(job.slow_ms)).await;
        Ok(JobUpdate::default().done(1).log("work").into())
    }
    async fn ask(&self, job: Arc<Job>, _: &mut NodeContext) -> jobs::NodeOutput {
        let said = match &job.decision {
            Some(Decision::Approve) => "approved".to_owned(),
            Some(Decision::Reject { reason }) => format!("rejected: {reason}"),
            None => "unanswered".to_owned(),
        };
        Ok(JobUpdate::default().log(said).into())
    }
    async fn finish(&self, _: Arc<Job>, _: &mut NodeContext) -> jobs::NodeOutput {
        Ok(JobUpdate::default().log("finish").into())
    }
    fn route_work(&self, job: &Job, _: &Visits<'_>) -> jobs::WorkRoute {
        if job.done < job.rounds {
            jobs::WorkRoute::Work
        } else if job.pause {
            jobs::WorkRoute::Ask
        } else {
            jobs::WorkRoute::Finish
        }
    }
}

/// A server of the `Jobs` graph on `store`, on a free local port.
pub async fn serve(store: Arc<dyn RunQueue>, options: ServeOptions) -> Running {
    Server::builder(store)
        .graph(jobs::build(Worker))
        .build()
        .expect("the server builds")
        .serve(ServeOptions {
            addr: "127.0.0.1:0".parse().expect("an address"),
            ..options
        })
        .await
        .expect("the server listens")
}

/// A server of `graph` alone, in memory, on a free local port.
pub async fn serve_graph<S>(graph: trellis::CompiledGraph<S>) -> Running
where
    S: trellis::interrupt::ApplyResume + Default,
    S::Input: serde::de::DeserializeOwned,
{
    Server::builder(Arc::new(trellis::checkpoint::InMemoryCheckpointer::new()))
        .graph(graph)
        .build()
        .expect("the server builds")
        .serve(ServeOptions {
            addr: "127.0.0.1:0".parse().expect("an address"),
            ..ServeOptions::default()
        })
        .await
        .expect("the server listens")
}

/// A client of the server at `base`.
#[derive(Clone)]
pub struct Client {
    pub base: String,
    pub http: reqwest::Client,
}

impl Client {
    pub fn new(running: &Running) -> Self {
        Client {
            base: format!("http://{}", running.local_addr()),
            http: reqwest::Client::new(),
        }
    }

    /// GET `path`: (status, JSON body).
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("the server answers");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// DELETE `path`: (status, JSON body, `null` when there is none).
    pub async fn delete(&self, path: &str) -> (u16, Value) {
        let response = self
            .http
            .delete(format!("{}{path}", self.base))
            .send()
            .await
            .expect("the server answers");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// POST `body` as JSON to `path`: (status, JSON body).
    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .json(body)
            .send()
            .await
            .expect("the server answers");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// POST raw `body` with a JSON content type.
    pub async fn post_raw(&self, path: &str, body: &str) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .expect("the server answers");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// A JSON-RPC call: its `result`, or its `error`.
    pub async fn rpc(&self, method: &str, params: Value) -> Result<Value, Value> {
        let (status, body) = self
            .post(
                "/rpc",
                &json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["id"], 7);
        match body.get("result") {
            Some(result) => Ok(result.clone()),
            None => Err(body["error"].clone()),
        }
    }

    /// A run of `Jobs` (one round, then its question) created and paused: its id.
    pub async fn paused_job(&self) -> String {
        let (status, run) = self
            .post(
                "/runs",
                &json!({"graph": "Jobs", "input": {"rounds": 1, "pause": true}}),
            )
            .await;
        assert_eq!(status, 201, "{run}");
        let run_id = run["run_id"].as_str().expect("an id").to_owned();
        assert_eq!(self.settle(&run_id).await["status"], "paused");
        run_id
    }

    /// Waits for the run to stop running; its record.
    pub async fn settle(&self, run_id: &str) -> Value {
        let (status, run) = self.get(&format!("/runs/{run_id}/wait?timeout=30")).await;
        assert_eq!(status, 200, "{run}");
        assert_ne!(
            run["status"], "running",
            "run {run_id} did not settle: {run}"
        );
        run
    }
}

/// The events of a server-sent event stream: (event, data as JSON).
pub fn sse(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter_map(|block| {
            let field = |name: &str| {
                block
                    .lines()
                    .find_map(|line| line.strip_prefix(name).map(str::trim))
            };
            Some((
                field("event:")?.to_owned(),
                serde_json::from_str(field("data:").unwrap_or("null")).unwrap_or(Value::Null),
            ))
        })
        .collect()
}

/// The events of a run streamed on thread `id` as `request` asks.
pub async fn streamed(client: &Client, id: &str, request: Value) -> Vec<(String, Value)> {
    let response = client
        .http
        .post(format!("{}/threads/{id}/runs/stream", client.base))
        .json(&request)
        .send()
        .await
        .expect("the server answers");
    assert_eq!(response.status(), 200);
    sse(&response.text().await.expect("a body"))
}
