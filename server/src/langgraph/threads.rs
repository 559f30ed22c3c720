//! Threads as LangGraph's server keeps them: create, search, get, patch (metadata), state and
//! history.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Map, Value, json};
use trellis::checkpoint::{Checkpoint, CheckpointRef, RunRecord, ThreadRecord};
use trellis::{RunError, ThreadId};

use super::shapes::{self, Detail};
use super::{Shared, body, served, unsupported};
use crate::ApiError;
use crate::state::App;

pub(super) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/threads", post(create))
        .route("/threads/search", post(search))
        .route(
            "/threads/{thread_id}",
            get(get_one).patch(patch).delete(delete),
        )
        .route("/threads/{thread_id}/copy", post(copy))
        .route("/threads/{thread_id}/state", get(state).post(update_state))
        .route("/threads/{thread_id}/state/{checkpoint_id}", get(state_at))
        .route(
            "/threads/{thread_id}/history",
            get(history_get).post(history_post),
        )
}

/// A thread id from a path or a body, or a 422 saying why it is not one.
pub(super) fn thread_id(text: &str) -> Result<ThreadId, Detail> {
    ThreadId::parse(text).map_err(|error| {
        Detail(ApiError {
            status: 422,
            code: "unprocessable",
            message: error.to_string(),
        })
    })
}

/// The thread's record and its newest run, or a 404.
pub(super) async fn load(
    app: &App,
    thread_id: &ThreadId,
) -> Result<(ThreadRecord, Option<RunRecord>), Detail> {
    let record = app.store.load_thread(thread_id).await?.ok_or_else(|| {
        Detail::from(RunError::ThreadNotFound {
            thread_id: thread_id.clone(),
        })
    })?;
    let newest = app.store.thread_runs(thread_id, 1, 0).await?.pop();
    Ok((record, newest))
}

pub(super) fn metadata_of(value: &Value) -> Result<Map<String, Value>, Detail> {
    match value {
        Value::Null => Ok(Map::new()),
        Value::Object(map) => Ok(map.clone()),
        _ => Err(Detail(ApiError {
            status: 422,
            code: "unprocessable",
            message: "`metadata` must be an object".to_owned(),
        })),
    }
}

/// Creates the thread `thread_id` if there is none (`if_exists`: `raise`, the default, or
/// `do_nothing`).
pub(super) async fn create_thread(
    app: &App,
    thread_id: ThreadId,
    metadata: Map<String, Value>,
    if_exists: &str,
) -> Result<Value, Detail> {
    let record = ThreadRecord::new(thread_id.clone(), metadata);
    if !app.store.create_thread(&record).await? && if_exists != "do_nothing" {
        return Err(RunError::ThreadExists { thread_id }.into());
    }
    let (record, newest) = load(app, &thread_id).await?;
    Ok(shapes::thread(&record, newest.as_ref()))
}

async fn create(
    State(app): Shared,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, Detail> {
    let request = body(json)?;
    if request.get("supersteps").is_some_and(|s| !s.is_null()) {
        return Err(unsupported("creating a thread with `supersteps`"));
    }
    let thread_id = match request["thread_id"].as_str() {
        Some(id) => thread_id(id)?,
        None => ThreadId::new(),
    };
    let metadata = metadata_of(&request["metadata"])?;
    let if_exists = request["if_exists"].as_str().unwrap_or("raise");
    Ok(Json(
        create_thread(&app, thread_id, metadata, if_exists).await?,
    ))
}

async fn search(
    State(app): Shared,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, Detail> {
    let query = body(json)?;
    let limit = query["limit"].as_u64().unwrap_or(10) as usize;
    let offset = query["offset"].as_u64().unwrap_or(0) as usize;
    let metadata = metadata_of(&query["metadata"])?;
    let status = query["status"].as_str();
    let ids: Vec<ThreadId> = match query["ids"].as_array() {
        Some(ids) => ids
            .iter()
            .filter_map(Value::as_str)
            .map(thread_id)
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    // Filtered in the server, a page of the store at a time: metadata and status are not
    // indexed (see docs/server.md).
    let mut found = Vec::new();
    let mut skipped = 0;
    let mut page = 0;
    const PAGE: usize = 200;
    'pages: loop {
        let threads = app.store.list_threads(PAGE, page * PAGE).await?;
        for record in &threads {
            if !ids.is_empty() && !ids.contains(&record.thread_id) {
                continue;
            }
            if !metadata
                .iter()
                .all(|(k, v)| record.metadata.get(k) == Some(v))
            {
                continue;
            }
            let newest = app.store.thread_runs(&record.thread_id, 1, 0).await?.pop();
            if status.is_some_and(|s| s != shapes::thread_status(newest.as_ref())) {
                continue;
            }
            if skipped < offset {
                skipped += 1;
                continue;
            }
            found.push(shapes::thread(record, newest.as_ref()));
            if found.len() == limit {
                break 'pages;
            }
        }
        if threads.len() < PAGE {
            break;
        }
        page += 1;
    }
    Ok(Json(Value::Array(found)))
}

async fn get_one(State(app): Shared, Path(id): Path<String>) -> Result<Json<Value>, Detail> {
    let (record, newest) = load(&app, &thread_id(&id)?).await?;
    Ok(Json(shapes::thread(&record, newest.as_ref())))
}

/// Merges `metadata` into the thread's, as LangGraph does.
async fn patch(
    State(app): Shared,
    Path(id): Path<String>,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, Detail> {
    let thread_id = thread_id(&id)?;
    let request = body(json)?;
    let (mut record, _) = load(&app, &thread_id).await?;
    record.metadata.extend(metadata_of(&request["metadata"])?);
    app.store
        .set_thread_metadata(&thread_id, &record.metadata, trellis::run::Timestamp::now())
        .await?;
    let (record, newest) = load(&app, &thread_id).await?;
    Ok(Json(shapes::thread(&record, newest.as_ref())))
}

/// The thread's checkpoints, newest first, as far back as `limit` (its newest run's, then the
/// runs' it went on from).
async fn history_of(
    app: &App,
    thread_id: &ThreadId,
    limit: usize,
) -> Result<Vec<trellis::checkpoint::Checkpoint>, Detail> {
    let (_, newest) = load(app, thread_id).await?;
    match newest {
        Some(run) => Ok(trellis::run::lineage(app.store.as_ref(), &run.run_id, limit).await?),
        None => Ok(Vec::new()),
    }
}

async fn state(State(app): Shared, Path(id): Path<String>) -> Result<Json<Value>, Detail> {
    let thread_id = thread_id(&id)?;
    let two = history_of(&app, &thread_id, 2).await?;
    Ok(Json(match two.first() {
        Some(latest) => shapes::state(thread_id.as_str(), latest, two.get(1)),
        None => shapes::empty_state(thread_id.as_str()),
    }))
}

#[derive(serde::Deserialize)]
struct HistoryQuery {
    limit: Option<usize>,
}

async fn history_get(
    State(app): Shared,
    Path(id): Path<String>,
    Query(query): Query<HistoryQuery>,
) -> Result<Json<Value>, Detail> {
    history(&app, &id, &json!({ "limit": query.limit })).await
}

async fn history_post(
    State(app): Shared,
    Path(id): Path<String>,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, Detail> {
    history(&app, &id, &body(json)?).await
}

/// `limit` (10 by default) states, newest first; `before` (a checkpoint) starts after it;
/// `filter` keeps the states whose `metadata` has each of its keys with its value (`source`,
/// `step`, `run_id`).
async fn history(app: &App, id: &str, query: &Value) -> Result<Json<Value>, Detail> {
    let thread_id = thread_id(id)?;
    let limit = query["limit"].as_u64().unwrap_or(10) as usize;
    let filter = match &query["filter"] {
        Value::Null => None,
        Value::Object(filter) => Some(filter),
        _ => {
            return Err(Detail(ApiError {
                status: 422,
                code: "unprocessable",
                message: "`filter` must be an object of metadata to match".to_owned(),
            }));
        }
    };
    let before = query["before"]["checkpoint_id"].as_str();
    // One more than asked, for the last state's parent; after `before`, or filtered, as far as
    // it goes.
    let reach = if before.is_some() || filter.is_some() {
        usize::MAX
    } else {
        limit.saturating_add(1)
    };
    let all = history_of(app, &thread_id, reach).await?;
    let start = match before {
        Some(id) => match all.iter().position(|c| shapes::checkpoint_id(c) == id) {
            Some(at) => at + 1,
            None => {
                return Err(Detail(ApiError::not_found(format!(
                    "no checkpoint `{id}` in thread {thread_id}"
                ))));
            }
        },
        None => 0,
    };
    let states: Vec<Value> = all[start..]
        .iter()
        .enumerate()
        .map(|(i, checkpoint)| {
            shapes::state(thread_id.as_str(), checkpoint, all.get(start + i + 1))
        })
        .filter(|state| {
            filter.is_none_or(|filter| {
                filter
                    .iter()
                    .all(|(key, value)| &state["metadata"][key] == value)
            })
        })
        .take(limit)
        .collect();
    Ok(Json(Value::Array(states)))
}

/// The thread's state at checkpoint `run:n` of its history.
async fn state_at(
    State(app): Shared,
    Path((id, checkpoint_id)): Path<(String, String)>,
) -> Result<Json<Value>, Detail> {
    let thread_id = thread_id(&id)?;
    let missing = || {
        Detail(ApiError::not_found(format!(
            "thread {thread_id} has no checkpoint `{checkpoint_id}`"
        )))
    };
    let (run_id, number) = checkpoint_id.rsplit_once(':').ok_or_else(missing)?;
    let number: u64 = number.parse().map_err(|_| missing())?;
    let run = app.run(run_id).await.map_err(|_| missing())?;
    if run.thread.as_ref() != Some(&thread_id) {
        return Err(missing());
    }
    let checkpoint = app
        .store
        .checkpoint(&run.run_id, number)
        .await?
        .ok_or_else(missing)?;
    let before = parent_of(app.store.as_ref(), &checkpoint).await;
    Ok(Json(shapes::state(
        thread_id.as_str(),
        &checkpoint,
        before.as_ref(),
    )))
}

/// The checkpoint before `checkpoint` in its thread's history: its run's one before it, or —
/// for a run's first — the checkpoint the run went on from. `None` for the first of all, and
/// when the store cannot say.
pub(super) async fn parent_of(
    store: &dyn trellis::checkpoint::RunQueue,
    checkpoint: &Checkpoint,
) -> Option<Checkpoint> {
    match checkpoint.id.checked_sub(1).filter(|n| *n > 0) {
        Some(n) => store.checkpoint(&checkpoint.run_id, n).await.ok()?,
        None => {
            let run = store.load_run(&checkpoint.run_id).await.ok()??;
            let parent = run.parent?;
            store
                .checkpoint(&parent.run_id, parent.checkpoint)
                .await
                .ok()?
        }
    }
}

/// Edits the thread's state (or, given `checkpoint`/`checkpoint_id`, that checkpoint's) as if
/// `as_node` had written `values` — by default the node that wrote last. The edit is the
/// thread's state; a run with no input takes it up.
async fn update_state(
    State(app): Shared,
    Path(id): Path<String>,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, Detail> {
    let thread_id = thread_id(&id)?;
    let request = body(json)?;
    let (record, newest) = load(&app, &thread_id).await?;
    let unprocessable = |message: String| {
        Detail(ApiError {
            status: 422,
            code: "unprocessable",
            message,
        })
    };
    // The thread's graph: its newest run's, or — before its first run — the one its metadata
    // names, as LangGraph's server reads it.
    let graph = newest
        .as_ref()
        .map(|run| run.graph.to_string())
        .or_else(|| record.metadata.get("graph_id")?.as_str().map(str::to_owned))
        .ok_or_else(|| {
            unprocessable(format!(
                "thread {thread_id} has not run yet and its metadata names no `graph_id`: there is no graph to edit its state with"
            ))
        })?;
    let graph = served(&app, &graph)?;
    let at = shapes::checkpoint_named(&request)?;
    let as_node = match request["as_node"].as_str() {
        Some(node) => node.to_owned(),
        None => {
            let writer = match &at {
                // At a checkpoint of the history: the node that wrote last up to there.
                Some(at) => last_writer(app.store.as_ref(), at).await?,
                None => newest
                    .and_then(|run| run.last_node)
                    .map(|node| node.to_string()),
            };
            writer.ok_or_else(|| {
                unprocessable(format!(
                    "no node of thread {thread_id} has written there yet: say which writes the update with `as_node`"
                ))
            })?
        }
    };
    let values = match &request["values"] {
        Value::Null => json!({}),
        Value::Object(values) => Value::Object(values.clone()),
        _ => {
            return Err(unprocessable(
                "`values` must be an object: one update of the state".to_owned(),
            ));
        }
    };
    let edit = graph
        .thread_update(&thread_id, at, values, &as_node)
        .await?;
    let checkpoint_id = format!("{}:{}", edit.run_id, edit.checkpoint);
    Ok(Json(json!({
        "checkpoint": shapes::checkpoint_ref(thread_id.as_str(), Some(checkpoint_id))
    })))
}

/// The node that wrote last up to checkpoint `at` of its run: the last of the nodes of the
/// newest checkpoint at or before it that records any (a step's nodes are listed in
/// declaration order, as a run's `last_node` is chosen); `None` when none has.
async fn last_writer(
    store: &dyn trellis::checkpoint::RunQueue,
    at: &CheckpointRef,
) -> Result<Option<String>, Detail> {
    let checkpoints = store.list_checkpoints(&at.run_id).await?;
    Ok(checkpoints
        .iter()
        .rev()
        .filter(|checkpoint| checkpoint.id <= at.checkpoint)
        .find_map(|checkpoint| checkpoint.nodes.last())
        .map(ToString::to_string))
}

/// Deletes the thread, its runs and their checkpoints (409 while a run of it runs): 204.
async fn delete(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<axum::http::StatusCode, Detail> {
    let thread_id = thread_id(&id)?;
    trellis::thread::delete_stored(app.store.as_ref(), &thread_id).await?;
    Ok(axum::http::StatusCode::NO_CONTENT)
}

/// A copy of the thread under a new id — its metadata, state, history and question — which
/// goes on apart from it; answers the copy.
async fn copy(State(app): Shared, Path(id): Path<String>) -> Result<Json<Value>, Detail> {
    let from = thread_id(&id)?;
    let to = ThreadId::new();
    trellis::thread::copy_stored(app.store.as_ref(), &from, &to).await?;
    let (record, newest) = load(&app, &to).await?;
    Ok(Json(shapes::thread(&record, newest.as_ref())))
}
