//! Runs as LangGraph's server makes them: on a thread (create, wait, list, get, join, cancel)
//! and stateless (`/runs/wait`, on a thread of its own), with `multitask_strategy` and
//! `Command(resume=…)`.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Map, Value, json};
use trellis::checkpoint::{RunRecord, RunStatus};
use trellis::thread::Multitask;
use trellis::{RunId, ThreadId};

use super::shapes::{self, Detail};
use super::threads::{create_thread, load, thread_id};
use super::{Shared, body, served, unsupported};
use crate::ApiError;
use crate::state::App;

pub(super) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/threads/{thread_id}/runs", post(create).get(list))
        .route("/threads/{thread_id}/runs/wait", post(wait))
        .route("/threads/{thread_id}/runs/{run_id}", get(get_one))
        .route("/threads/{thread_id}/runs/{run_id}/join", get(join))
        .route("/threads/{thread_id}/runs/{run_id}/cancel", post(cancel))
        .route("/runs/wait", post(wait_stateless))
}

/// How long a wait lasts before it answers with the run as it is (LangGraph's keeps the
/// connection open without end; an hour is as long as a client is likely to hold one).
const WAIT: Duration = Duration::from_secs(3600);

/// What a run request may ask that this server does not do: refused, not ignored.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("interrupt_before", "`interrupt_before` at run creation"),
    ("interrupt_after", "`interrupt_after` at run creation"),
    (
        "checkpoint_id",
        "starting a run from a checkpoint (`checkpoint_id`)",
    ),
    (
        "checkpoint",
        "starting a run from a checkpoint (`checkpoint`)",
    ),
    ("webhook", "`webhook`"),
    ("after_seconds", "`after_seconds`"),
];

fn strategy(request: &Value) -> Result<Multitask, Detail> {
    match request["multitask_strategy"].as_str() {
        None | Some("reject") => Ok(Multitask::Reject),
        Some("interrupt") => Ok(Multitask::Interrupt),
        Some("rollback") => Ok(Multitask::Rollback),
        Some("enqueue") => Ok(Multitask::Enqueue),
        Some(other) => Err(Detail(ApiError {
            status: 422,
            code: "unprocessable",
            message: format!(
                "`{other}` is not a multitask_strategy (reject, interrupt, rollback, enqueue)"
            ),
        })),
    }
}

/// Starts what `request` asks on thread `thread_id`: a new run on `input`, or — with
/// `command.resume` — the answers to the thread's paused run. Returns the run and the assistant
/// it ran as.
async fn start(
    app: &App,
    thread_id: &ThreadId,
    request: &Value,
) -> Result<(RunRecord, String), Detail> {
    for (option, what) in UNSUPPORTED {
        if request.get(*option).is_some_and(|v| !v.is_null()) {
            return Err(unsupported(what));
        }
    }
    let assistant = request["assistant_id"].as_str().ok_or_else(|| {
        Detail(ApiError {
            status: 422,
            code: "unprocessable",
            message: "`assistant_id` is required".to_owned(),
        })
    })?;
    let graph = served(app, assistant)?;
    let assistant = shapes::assistant_id(graph.name());
    if request["if_not_exists"].as_str() == Some("create") {
        create_thread(app, thread_id.clone(), Map::new(), "do_nothing").await?;
    }
    let strategy = strategy(request)?;
    let command = &request["command"];
    if command.get("goto").is_some_and(|v| !v.is_null())
        || command.get("update").is_some_and(|v| !v.is_null())
    {
        return Err(unsupported("`Command(goto=…, update=…)`"));
    }
    let run_id = match command.get("resume").filter(|v| !v.is_null()) {
        Some(resume) => {
            let (_, newest) = load(app, thread_id).await?;
            let paused = newest
                .filter(|run| run.status == RunStatus::Paused)
                .ok_or_else(|| {
                    Detail(ApiError::conflict(format!(
                        "thread {thread_id} has no paused run to resume"
                    )))
                })?;
            graph
                .answer(&paused.run_id, answers(&paused, resume)?)
                .await?;
            paused.run_id
        }
        None => {
            let input = match &request["input"] {
                Value::Null => json!({}),
                input => input.clone(),
            };
            graph.thread_enqueue(thread_id, input, strategy).await?
        }
    };
    Ok((app.run(run_id.as_str()).await?, assistant))
}

/// `resume` as answers by interrupt id: a map whose keys are all ids of the run's questions is
/// one answer each; anything else answers its only question.
fn answers(paused: &RunRecord, resume: &Value) -> Result<Vec<(String, Value)>, Detail> {
    let asked: Vec<&str> = paused.interrupts.iter().map(|q| q.id.as_str()).collect();
    if let Value::Object(map) = resume
        && !map.is_empty()
        && map.keys().all(|key| asked.contains(&key.as_str()))
    {
        return Ok(map.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
    }
    match asked.as_slice() {
        [only] => Ok(vec![((*only).to_owned(), resume.clone())]),
        _ => Err(Detail(ApiError::bad_request(format!(
            "run {} asks {} questions ({}): resume with a map from interrupt id to answer",
            paused.run_id,
            asked.len(),
            asked.join(", ")
        )))),
    }
}

async fn create(
    State(app): Shared,
    Path(id): Path<String>,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, Detail> {
    let request = body(json)?;
    let thread_id = thread_id(&id)?;
    let (run, assistant) = start(&app, &thread_id, &request).await?;
    let strategy = strategy(&request)?.to_string();
    Ok(Json(shapes::run(&run, &assistant, &strategy)))
}

/// Waits for the run to leave `running`, then answers its outcome.
async fn outcome(app: &App, run_id: &RunId) -> Result<Value, Detail> {
    let run = app.wait(run_id.as_str(), WAIT).await?;
    Ok(shapes::outcome(&run))
}

async fn wait(
    State(app): Shared,
    Path(id): Path<String>,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, Detail> {
    let request = body(json)?;
    let thread_id = thread_id(&id)?;
    let (run, _) = start(&app, &thread_id, &request).await?;
    Ok(Json(outcome(&app, &run.run_id).await?))
}

/// A run on a thread of its own, created for it.
async fn wait_stateless(
    State(app): Shared,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, Detail> {
    let mut request = body(json)?;
    if let Value::Object(map) = &mut request {
        map.insert("if_not_exists".to_owned(), json!("create"));
    }
    let (run, _) = start(&app, &ThreadId::new(), &request).await?;
    Ok(Json(outcome(&app, &run.run_id).await?))
}

/// The run `run_id` of thread `thread_id`, or a 404.
async fn run_of(app: &App, thread_id: &ThreadId, run_id: &str) -> Result<RunRecord, Detail> {
    let run = app.run(run_id).await?;
    if run.thread.as_ref() != Some(thread_id) {
        return Err(Detail(ApiError::not_found(format!(
            "thread {thread_id} has no run `{run_id}`"
        ))));
    }
    Ok(run)
}

#[derive(serde::Deserialize)]
struct Page {
    limit: Option<usize>,
    offset: Option<usize>,
    status: Option<String>,
}

async fn list(
    State(app): Shared,
    Path(id): Path<String>,
    Query(page): Query<Page>,
) -> Result<Json<Value>, Detail> {
    let thread_id = thread_id(&id)?;
    load(&app, &thread_id).await?;
    let runs = app
        .store
        .thread_runs(
            &thread_id,
            page.limit.unwrap_or(10).min(1000),
            page.offset.unwrap_or(0),
        )
        .await?;
    let listed = runs
        .iter()
        .filter(|run| {
            page.status
                .as_deref()
                .is_none_or(|s| s == shapes::run_status(run.status))
        })
        .map(|run| shapes::run(run, &shapes::assistant_id(&run.graph), "reject"))
        .collect();
    Ok(Json(Value::Array(listed)))
}

async fn get_one(
    State(app): Shared,
    Path((id, run_id)): Path<(String, String)>,
) -> Result<Json<Value>, Detail> {
    let run = run_of(&app, &thread_id(&id)?, &run_id).await?;
    Ok(Json(shapes::run(
        &run,
        &shapes::assistant_id(&run.graph),
        "reject",
    )))
}

async fn join(
    State(app): Shared,
    Path((id, run_id)): Path<(String, String)>,
) -> Result<Json<Value>, Detail> {
    let run = run_of(&app, &thread_id(&id)?, &run_id).await?;
    Ok(Json(outcome(&app, &run.run_id).await?))
}

#[derive(serde::Deserialize)]
struct CancelQuery {
    wait: Option<bool>,
    action: Option<String>,
}

/// Cancels the run (`action=interrupt`, the default, or `rollback`: both stop it at its next
/// step boundary; its committed steps are kept either way, see docs/server.md).
async fn cancel(
    State(app): Shared,
    Path((id, run_id)): Path<(String, String)>,
    Query(query): Query<CancelQuery>,
) -> Result<Json<Value>, Detail> {
    let run = run_of(&app, &thread_id(&id)?, &run_id).await?;
    let reason = match query.action.as_deref() {
        None | Some("interrupt") => "cancelled (interrupt) by a request to the server",
        Some("rollback") => "cancelled (rollback) by a request to the server",
        Some(other) => {
            return Err(Detail(ApiError {
                status: 422,
                code: "unprocessable",
                message: format!("`{other}` is not a cancel action (interrupt, rollback)"),
            }));
        }
    };
    let cancelled = trellis::run::cancel_stored(app.store.as_ref(), &run.run_id, reason).await?;
    let _ = query.wait;
    Ok(Json(shapes::run(
        &cancelled,
        &shapes::assistant_id(&cancelled.graph),
        "reject",
    )))
}
