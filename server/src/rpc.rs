//! `POST /rpc`: JSON-RPC 2.0 with the method names of the seed specification. Queries return
//! bare values; mutations return the value with an audit message (`{"run": …, "audit": "…"}`),
//! also logged.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::state::{App, RunFilter};

/// The methods, as `graph_*` names.
pub(crate) const METHODS: [&str; 9] = [
    "graph_definition_list",
    "graph_agent_list",
    "graph_agent_get",
    "graph_run",
    "graph_run_list",
    "graph_run_get",
    "graph_checkpoint_list",
    "graph_resume",
    "graph_retry",
];

pub(crate) async fn handle(
    State(app): State<Arc<App>>,
    json: Result<Json<Value>, JsonRejection>,
) -> Json<Value> {
    let request = match crate::api::body(json) {
        Ok(request) => request,
        Err(error) => {
            return Json(failure(
                Value::Null,
                -32700,
                &format!("parse error: {}", error.message),
                None,
            ));
        }
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let (Some(method), Some("2.0")) = (
        request.get("method").and_then(Value::as_str),
        request.get("jsonrpc").and_then(Value::as_str),
    ) else {
        return Json(failure(
            id,
            -32600,
            "invalid request: a JSON-RPC 2.0 request has `jsonrpc: \"2.0\"` and a `method`",
            None,
        ));
    };
    let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
    Json(match call(&app, method, &params).await {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(Failure::Method) => failure(
            id,
            -32601,
            &format!(
                "no method `{method}` (the methods are: {})",
                METHODS.join(", ")
            ),
            None,
        ),
        Err(Failure::Params(message)) => failure(id, -32602, &message, None),
        Err(Failure::Api(error)) => failure(
            id,
            -32000,
            &error.message,
            Some(json!({ "status": error.status, "code": error.code })),
        ),
    })
}

enum Failure {
    Method,
    Params(String),
    Api(ApiError),
}

impl From<ApiError> for Failure {
    fn from(error: ApiError) -> Self {
        Failure::Api(error)
    }
}

fn failure(id: Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

fn text<'a>(params: &'a Value, name: &str) -> Result<&'a str, Failure> {
    params
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| Failure::Params(format!("invalid params: `{name}` (a string) is required")))
}

async fn call(app: &App, method: &str, params: &Value) -> Result<Value, Failure> {
    Ok(match method {
        "graph_definition_list" => json!(app.definitions()),
        "graph_agent_list" => json!(app.agents.values().collect::<Vec<_>>()),
        "graph_agent_get" => json!(app.agent(text(params, "name")?)?),
        "graph_run" => {
            let graph = text(params, "graph")?;
            let input = params.get("input").cloned().unwrap_or_else(|| json!({}));
            let run = app.create(graph, input).await?;
            let audit = format!("created run {} of graph {graph}", run.run_id);
            json!({ "run": run, "audit": audit })
        }
        "graph_run_list" => {
            let filter: RunFilter = serde_json::from_value(params.clone())
                .map_err(|e| Failure::Params(format!("invalid params: {e}")))?;
            json!(app.runs(&filter).await?)
        }
        "graph_run_get" => json!(app.run(text(params, "run_id")?).await?),
        "graph_checkpoint_list" => json!(app.checkpoints(text(params, "run_id")?).await?),
        "graph_resume" => {
            let run_id = text(params, "run_id")?;
            let run = app.resume(run_id, params).await?;
            let audit = format!("answered run {run_id} of graph {}", run.graph);
            json!({ "run": run, "audit": audit })
        }
        "graph_retry" => {
            let run_id = text(params, "run_id")?;
            let run = app.retry(run_id).await?;
            let audit = format!("retried run {run_id} of graph {}", run.graph);
            json!({ "run": run, "audit": audit })
        }
        _ => return Err(Failure::Method),
    })
}
