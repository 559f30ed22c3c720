//! The REST resources, in the style of the LangGraph Agent Server: graph definitions, agents,
//! runs (create, list, get, cancel, wait, resume, retry), a run's checkpoints and its event
//! stream, and the stream of writes to any run.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::events;
use crate::state::{App, RunFilter};

type Shared = State<Arc<App>>;

pub(crate) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/graphs", get(list_graphs))
        .route("/graphs/{name}", get(get_graph))
        .route("/graphs/{name}/mermaid", get(get_mermaid))
        .route("/agents", get(list_agents))
        .route("/agents/{name}", get(get_agent))
        .route("/runs", get(list_runs).post(create_run))
        .route("/runs/{id}", get(get_run))
        .route("/runs/{id}/cancel", post(cancel_run))
        .route("/runs/{id}/wait", get(wait_run))
        .route("/runs/{id}/resume", post(resume_run))
        .route("/runs/{id}/retry", post(retry_run))
        .route("/runs/{id}/checkpoints", get(list_checkpoints))
        .route("/runs/{id}/stream", get(stream_run))
        .route("/changes", get(changes))
}

/// A JSON body, or a 400 that says what is wrong with it (axum's own rejection is plain text).
pub(crate) fn body(json: Result<Json<Value>, JsonRejection>) -> Result<Value, ApiError> {
    json.map(|Json(value)| value).map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::too_large()
        } else {
            ApiError::bad_request(format!(
                "the request body is not valid JSON: {}",
                rejection.body_text()
            ))
        }
    })
}

async fn changes(State(app): Shared) -> Response {
    events::changes(app).into_response()
}

async fn list_graphs(State(app): Shared) -> Json<Value> {
    Json(json!(app.definitions()))
}

async fn get_graph(State(app): Shared, Path(name): Path<String>) -> Result<Json<Value>, ApiError> {
    let graph = app.graph(&name)?;
    Ok(Json(json!(app.definition(graph.as_ref()))))
}

async fn get_mermaid(State(app): Shared, Path(name): Path<String>) -> Result<Response, ApiError> {
    let graph = app.graph(&name)?;
    let text = app.definition(graph.as_ref()).mermaid;
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response())
}

async fn list_agents(State(app): Shared) -> Json<Value> {
    Json(json!(app.agents.values().collect::<Vec<_>>()))
}

async fn get_agent(State(app): Shared, Path(name): Path<String>) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!(app.agent(&name)?)))
}

async fn list_runs(
    State(app): Shared,
    Query(filter): Query<RunFilter>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!(app.runs(&filter).await?)))
}

async fn create_run(
    State(app): Shared,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<Response, ApiError> {
    let body = body(json)?;
    if body.get("graph").is_none() && body.get("assistant_id").is_some() {
        // LangGraph's stateless run, on the same route.
        return Ok(crate::langgraph::create_stateless(&app, body).await);
    }
    let Some(graph) = body.get("graph").and_then(Value::as_str) else {
        return Err(ApiError::bad_request(
            "give the `graph` to run, by name, and its `input`",
        ));
    };
    let input = body.get("input").cloned().unwrap_or_else(|| json!({}));
    let run = app.create(graph, input).await?;
    Ok((StatusCode::CREATED, Json(json!(run))).into_response())
}

async fn get_run(State(app): Shared, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!(app.run(&id).await?)))
}

async fn cancel_run(State(app): Shared, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!(app.cancel(&id).await?)))
}

#[derive(Deserialize)]
struct WaitQuery {
    /// Seconds, at most 300 (30 by default).
    timeout: Option<u64>,
}

async fn wait_run(
    State(app): Shared,
    Path(id): Path<String>,
    Query(query): Query<WaitQuery>,
) -> Result<Json<Value>, ApiError> {
    let timeout = Duration::from_secs(query.timeout.unwrap_or(30).min(300));
    Ok(Json(json!(app.wait(&id, timeout).await?)))
}

async fn resume_run(
    State(app): Shared,
    Path(id): Path<String>,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let body = body(json)?;
    Ok(Json(json!(app.resume(&id, &body).await?)))
}

async fn retry_run(State(app): Shared, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!(app.retry(&id).await?)))
}

async fn list_checkpoints(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!(app.checkpoints(&id).await?)))
}

async fn stream_run(
    State(app): Shared,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let after = match headers.get("last-event-id") {
        None => 0,
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| {
                ApiError::bad_request("`Last-Event-ID` is a checkpoint id: a whole number")
            })?,
    };
    Ok(events::stream(app, id, after).await?.into_response())
}
