//! Runs as LangGraph's server makes them: on a thread (create, wait, list, get, join, cancel)
//! and stateless (`/runs/wait`, on a thread of its own), with `multitask_strategy` and
//! `Command(resume=…)`.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use std::convert::Infallible;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Map, Value, json};
use trellis::checkpoint::Name;
use trellis::checkpoint::{RunRecord, RunStatus};
use trellis::interrupt::{Breakpoints, InterruptPoint};
use trellis::thread::{Multitask, StartOptions};
use trellis::{RunId, ThreadId};

use super::chain::Chain;
use super::chat::Chat;
use super::modes::{Asked, Shaper};
use super::shapes::{self, Detail};
use super::threads::{create_thread, load, metadata_of, thread_id};
use super::{Shared, body, served, unsupported};
use crate::ApiError;
use crate::registry::{Steer, Streamed, ThreadStart, ThreadStream};
use crate::state::App;

pub(super) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/threads/{thread_id}/runs", post(create).get(list))
        .route("/threads/{thread_id}/runs/wait", post(wait))
        .route("/threads/{thread_id}/runs/stream", post(stream))
        .route("/threads/{thread_id}/runs/{run_id}", get(get_one))
        .route("/threads/{thread_id}/runs/{run_id}/join", get(join))
        .route(
            "/threads/{thread_id}/runs/{run_id}/stream",
            get(join_stream),
        )
        .route("/threads/{thread_id}/runs/{run_id}/cancel", post(cancel))
        .route("/runs/wait", post(wait_stateless))
        .route("/runs/stream", post(stream_stateless))
}

/// How long a wait lasts before it answers with the run as it is (LangGraph's keeps the
/// connection open without end; an hour is as long as a client is likely to hold one).
const WAIT: Duration = Duration::from_secs(3600);

/// What a run request may ask that this server does not do: refused, not ignored.
const UNSUPPORTED: &[(&str, &str)] = &[
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

/// `interrupt_before` and `interrupt_after`: `"*"` or a list of node names each.
fn breakpoints(request: &Value) -> Result<Breakpoints, Detail> {
    let names = |option: &str| -> Result<Vec<Name>, Detail> {
        match &request[option] {
            Value::Null => Ok(Vec::new()),
            Value::String(all) if all == "*" => Ok(vec![Name::from("*")]),
            Value::Array(nodes) if nodes.iter().all(Value::is_string) => Ok(nodes
                .iter()
                .filter_map(Value::as_str)
                .map(Name::from)
                .collect()),
            _ => Err(Detail(ApiError {
                status: 422,
                code: "unprocessable",
                message: format!("`{option}` must be \"*\" or a list of node names"),
            })),
        }
    };
    Ok(Breakpoints {
        before: names("interrupt_before")?,
        after: names("interrupt_after")?,
    })
}

/// The assistant's graph and the thread, checked as every run request is: no option this
/// server cannot honour, an assistant it has, the thread created first when asked.
async fn prepare<'a>(
    app: &'a App,
    thread_id: &ThreadId,
    request: &Value,
) -> Result<&'a Arc<dyn crate::registry::Served>, Detail> {
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
    if request["if_not_exists"].as_str() == Some("create") {
        create_thread(app, thread_id.clone(), Map::new(), "do_nothing").await?;
    }
    name_graph(app, thread_id, graph.name()).await?;
    Ok(graph)
}

/// Writes the graph a run starts on into its thread's metadata (`graph_id`, `assistant_id`),
/// as LangGraph's server does: a client (the studio) finds a graph's threads by it, and a
/// later `update_state` knows the graph. A thread that is not there is left to the run's
/// start to report.
async fn name_graph(app: &App, thread_id: &ThreadId, graph: &str) -> Result<(), Detail> {
    let Some(mut record) = app.store.load_thread(thread_id).await? else {
        return Ok(());
    };
    let named = [
        ("graph_id", Value::from(graph)),
        ("assistant_id", Value::from(shapes::assistant_id(graph))),
    ];
    if named
        .iter()
        .all(|(key, value)| record.metadata.get(*key) == Some(value))
    {
        return Ok(());
    }
    for (key, value) in named {
        record.metadata.insert(key.to_owned(), value);
    }
    app.store
        .set_thread_metadata(thread_id, &record.metadata, trellis::run::Timestamp::now())
        .await?;
    Ok(())
}

/// `command.goto` as node names: one, or a list; a `Send` (`{node, arg}`) is not taken.
fn goto_of(command: &Value) -> Result<Vec<String>, Detail> {
    let name = |value: &Value| {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| unsupported("`Command(goto=…)` to a `Send`: name the node"))
    };
    match &command["goto"] {
        Value::Null => Ok(Vec::new()),
        Value::Array(nodes) => nodes.iter().map(name).collect(),
        node => Ok(vec![name(node)?]),
    }
}

/// With `command.resume`: the thread's paused run and the answers to it.
async fn resuming(
    app: &App,
    thread_id: &ThreadId,
    request: &Value,
) -> Result<Option<(RunRecord, Vec<(String, Value)>)>, Detail> {
    let Some(resume) = request["command"].get("resume").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let (_, newest) = load(app, thread_id).await?;
    let paused = newest
        .filter(|run| run.status == RunStatus::Paused)
        .ok_or_else(|| {
            Detail(ApiError::conflict(format!(
                "thread {thread_id} has no paused run to resume"
            )))
        })?;
    let answers = answers(&paused, resume)?;
    Ok(Some((paused, answers)))
}

/// The breakpoints `run` was started with (its newest checkpoint keeps them).
async fn breakpoints_of(app: &App, run: &RunRecord) -> Result<Breakpoints, Detail> {
    let latest = app.store.latest_checkpoint(&run.run_id).await?;
    Ok(latest
        .map(|checkpoint| checkpoint.breakpoints)
        .unwrap_or_default())
}

/// Whether every question `run` waits on is a pause at one of `breakpoints`, which asks
/// nothing: a run given no input goes on past them, as LangGraph's does past its own.
fn only_breakpoints(run: &RunRecord, breakpoints: &Breakpoints) -> bool {
    let at =
        |names: &[Name], node: &str| names.iter().any(|name| &**name == "*" || &**name == node);
    !run.interrupts.is_empty()
        && run.interrupts.iter().all(|asked| match asked.point {
            InterruptPoint::Before => at(&breakpoints.before, &asked.node),
            InterruptPoint::After => at(&breakpoints.after, &asked.node),
            _ => false,
        })
}

/// A run goes on with the breakpoints it started with: a request that names others is
/// refused rather than ignored.
fn same_breakpoints(asked: &Breakpoints, kept: &Breakpoints) -> Result<(), Detail> {
    fn sorted(names: &[Name]) -> Vec<&str> {
        let mut names: Vec<&str> = names.iter().map(|name| &**name).collect();
        names.sort_unstable();
        names
    }
    let same = |a: &[Name], b: &[Name]| a.is_empty() || sorted(a) == sorted(b);
    if same(&asked.before, &kept.before) && same(&asked.after, &kept.after) {
        return Ok(());
    }
    Err(unsupported(
        "other `interrupt_before`/`interrupt_after` for a run that goes on: it keeps those it started with",
    ))
}

/// A run goes on with the metadata it started with: other metadata is refused rather than
/// ignored.
fn same_metadata(asked: &Map<String, Value>, run: &RunRecord) -> Result<(), Detail> {
    if asked.is_empty() || *asked == run.metadata {
        return Ok(());
    }
    Err(unsupported(
        "other `metadata` for a run that goes on: it keeps what it started with",
    ))
}

/// What `request` starts on thread `thread_id`: with `command.resume`, the answers to the
/// thread's paused run; with a checkpoint and no input, a fork of that checkpoint; with no
/// input on a thread whose state was edited, the edit taken up; otherwise a new run on the
/// input.
async fn start_of(app: &App, thread_id: &ThreadId, request: &Value) -> Result<ThreadStart, Detail> {
    let command = &request["command"];
    let goto = goto_of(command)?;
    let update = command.get("update").filter(|v| !v.is_null()).cloned();
    let asked = breakpoints(request)?;
    let metadata = metadata_of(&request["metadata"])?;
    if let Some((run, answers)) = resuming(app, thread_id, request).await? {
        same_metadata(&metadata, &run)?;
        if !asked.is_empty() {
            same_breakpoints(&asked, &breakpoints_of(app, &run).await?)?;
        }
        return Ok(ThreadStart::Answers(
            run.run_id,
            Some(answers),
            Steer { update, goto },
        ));
    }
    if !goto.is_empty() {
        return Err(unsupported(
            "`Command(goto=…)` without `resume`: a new run starts from START",
        ));
    }
    // `Command(update=…)` alone is a new run's input, as LangGraph takes it.
    let input = match update {
        Some(update) if request["input"].is_null() => update,
        _ => request["input"].clone(),
    };
    let at = shapes::checkpoint_named(request)?;
    if input.is_null() && at.is_none() {
        // A run paused at its breakpoints goes on past them.
        let (_, newest) = load(app, thread_id).await?;
        if let Some(run) = newest.filter(|run| run.status == RunStatus::Paused) {
            let kept = breakpoints_of(app, &run).await?;
            if only_breakpoints(&run, &kept) {
                same_breakpoints(&asked, &kept)?;
                same_metadata(&metadata, &run)?;
                return Ok(ThreadStart::Answers(run.run_id, None, Steer::default()));
            }
        }
    }
    if (!asked.is_empty() || !metadata.is_empty()) && (input.is_null() || at.is_some()) {
        return Err(unsupported(
            "`interrupt_before`, `interrupt_after` or `metadata` on a fork or an edit taken up: give them to a run with an input",
        ));
    }
    if let Some(at) = at {
        if !input.is_null() {
            return Err(unsupported(
                "a run from a checkpoint with an input (fork with `input: null`, or `update_state` first)",
            ));
        }
        return Ok(ThreadStart::Fork(at));
    }
    if input.is_null() {
        let (_, newest) = load(app, thread_id).await?;
        if newest.is_some_and(|run| run.status == RunStatus::Paused && run.interrupts.is_empty()) {
            return Ok(ThreadStart::Pending);
        }
    }
    // No input at all is an empty update.
    let input = if input.is_null() { json!({}) } else { input };
    let mut options = StartOptions::from(strategy(request)?).metadata(metadata);
    options.breakpoints = asked;
    Ok(ThreadStart::Input(input, options))
}

/// Starts what `request` asks on thread `thread_id` (see [`start_of`]). Returns the run and
/// the assistant it ran as.
async fn start(
    app: &App,
    thread_id: &ThreadId,
    request: &Value,
) -> Result<(RunRecord, String), Detail> {
    let graph = prepare(app, thread_id, request).await?;
    let assistant = shapes::assistant_id(graph.name());
    let start = start_of(app, thread_id, request).await?;
    let run_id = graph.thread_start(thread_id, start).await?;
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
    Ok(Json(shapes::run(&run, &assistant, Some(&strategy))))
}

/// LangGraph's stateless `POST /runs`: a run on a thread of its own, created for it, answered
/// as it starts. The route is Trellis's own `POST /runs` too, which sends a request naming an
/// `assistant_id` (and no `graph`) here.
pub(crate) async fn create_stateless(app: &App, mut request: Value) -> Response {
    if let Value::Object(map) = &mut request {
        map.insert("if_not_exists".to_owned(), json!("create"));
    }
    let created = async {
        let (run, assistant) = start(app, &ThreadId::new(), &request).await?;
        let strategy = strategy(&request)?.to_string();
        Ok::<_, Detail>(Json(shapes::run(&run, &assistant, Some(&strategy))))
    };
    created.await.into_response()
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
        .map(|run| shapes::run(run, &shapes::assistant_id(&run.graph), None))
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
        None,
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
    /// `wait` needs no handling: the run is cancelled in the store before this answers.
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
    Ok(Json(shapes::run(
        &cancelled,
        &shapes::assistant_id(&cancelled.graph),
        None,
    )))
}

fn event(kind: &str, data: &Value) -> Result<Event, Infallible> {
    Ok(Event::default().event(kind).data(data.to_string()))
}

/// A run streamed as LangGraph streams one: `metadata` first, the modes' items as they come, at
/// a pause what it asks (as an update `{"__interrupt__": …}`, and in the last values), then
/// `end` — or `error` when the run failed.
async fn streamed(
    app: &App,
    thread_id: &ThreadId,
    request: &Value,
) -> Result<Sse<impl futures_util::Stream<Item = Result<Event, Infallible>> + use<>>, Detail> {
    let graph = prepare(app, thread_id, request).await?;
    let graph_name = graph.name().to_owned();
    let asked = Asked::of(request)?;
    let start = start_of(app, thread_id, request).await?;
    let ThreadStream {
        run_id,
        opening,
        mut items,
    } = graph
        .thread_stream(thread_id, start, asked.runtime_modes())
        .await?;
    let store = Arc::clone(&app.store);
    let thread_id = thread_id.clone();
    let (values, updates) = (asked.wants("values"), asked.wants("updates"));
    let (send, receive) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let _ = send.send(event(
            "metadata",
            &json!({ "run_id": run_id, "attempt": 1 }),
        ));
        let mut shaper = Shaper {
            asked: &asked,
            store: store.as_ref(),
            thread_id: &thread_id,
            run_id: &run_id,
            state: Value::Null,
            step: 0,
            chat: Chat::default(),
            chain: asked
                .wants("events")
                .then(|| Chain::new(&graph_name, run_id.as_str())),
        };
        if let Some(number) = opening {
            for (mode, data) in shaper.opening(number).await {
                let _ = send.send(event(mode, &data));
            }
        }
        while let Some(item) = items.recv().await {
            match item {
                Streamed::Item("subgraph", data) => {
                    if let Some((name, data)) = super::modes::nested(&asked, &data) {
                        let _ = send.send(event(&name, &data));
                    }
                }
                Streamed::Item(mode, data) => {
                    for (mode, data) in shaper.shape(mode, data).await {
                        let _ = send.send(event(mode, &data));
                    }
                }
                Streamed::Ended(Err(message)) => {
                    let error = json!({ "error": "RunError", "message": message });
                    let _ = send.send(event("error", &error));
                    return;
                }
                Streamed::Ended(Ok(())) => {
                    for (mode, data) in shaper.ended() {
                        let _ = send.send(event(mode, &data));
                    }
                    break;
                }
            }
        }
        if let Ok(Some(run)) = store.load_run(&run_id).await
            && run.status == RunStatus::Paused
        {
            let asked: Vec<Value> = run.interrupts.iter().map(shapes::interrupt).collect();
            if updates {
                let _ = send.send(event("updates", &json!({ "__interrupt__": asked })));
            }
            if values && let Value::Object(mut last) = shaper.state.clone() {
                last.insert("__interrupt__".to_owned(), Value::Array(asked));
                let _ = send.send(event("values", &Value::Object(last)));
            }
        }
        let _ = send.send(event("end", &Value::Null));
    });
    let events = futures_util::stream::unfold(receive, |mut receive| async move {
        receive.recv().await.map(|event| (event, receive))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

async fn stream(
    State(app): Shared,
    Path(id): Path<String>,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<impl IntoResponse, Detail> {
    let request = body(json)?;
    streamed(&app, &thread_id(&id)?, &request).await
}

/// A run streamed on a thread of its own, created for it.
async fn stream_stateless(
    State(app): Shared,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<impl IntoResponse, Detail> {
    let mut request = body(json)?;
    if let Value::Object(map) = &mut request {
        map.insert("if_not_exists".to_owned(), json!("create"));
    }
    streamed(&app, &ThreadId::new(), &request).await
}

/// A run's stream joined again: its state at each checkpoint after
/// `Last-Event-ID` (all of them without it) as `values`, its question at a pause, then `end`.
async fn join_stream(
    State(app): Shared,
    Path((id, run_id)): Path<(String, String)>,
    headers: axum::http::HeaderMap,
) -> Result<impl IntoResponse, Detail> {
    let run = run_of(&app, &thread_id(&id)?, &run_id).await?;
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let follow = crate::events::follow(
        Arc::clone(&app),
        run.run_id.to_string(),
        after,
        crate::events::Shape::LangGraph,
    )
    .await?;
    Ok(follow)
}
