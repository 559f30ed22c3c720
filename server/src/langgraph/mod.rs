//! LangGraph's Agent Server protocol, beside Trellis's own routes: what `langgraph-sdk` (Python)
//! and `@langchain/langgraph-sdk` (JavaScript) call — assistants (one per graph), threads and
//! their state and history, runs on a thread (create, wait, join, cancel, list) and stateless
//! runs waited for. See `docs/server.md` for what is answered and what differs.

mod chain;
mod chat;
mod modes;
mod runs;
mod shapes;
mod threads;

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::registry::Served;
use crate::state::App;
pub(crate) use runs::create_stateless;
use shapes::Detail;
pub(crate) use shapes::outcome;

type Shared = State<Arc<App>>;

pub(crate) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/ok", get(ok))
        .route("/info", get(info))
        .route("/assistants/search", post(search_assistants))
        .route("/assistants/{id}", get(get_assistant))
        .route("/assistants/{id}/graph", get(assistant_graph))
        .route("/assistants/{id}/schemas", get(assistant_schemas))
        .route("/assistants/{id}/subgraphs", get(assistant_subgraphs))
        .merge(threads::routes())
        .merge(runs::routes())
}

/// A JSON body (an empty one is `{}`), or a 422 as LangGraph answers a body it cannot read.
fn body(json: Result<Json<Value>, JsonRejection>) -> Result<Value, Detail> {
    match json {
        Ok(Json(value)) => Ok(value),
        Err(JsonRejection::MissingJsonContentType(_)) => Ok(json!({})),
        Err(rejection) => Err(Detail(crate::ApiError {
            status: 422,
            code: "unprocessable",
            message: format!(
                "the request body is not valid JSON: {}",
                rejection.body_text()
            ),
        })),
    }
}

/// An option this server cannot honour: refused as LangGraph refuses an invalid one (422).
fn unsupported(what: &str) -> Detail {
    Detail(crate::ApiError {
        status: 422,
        code: "unsupported",
        message: format!("{what} is not supported by this server (Trellis); see docs/server.md"),
    })
}

async fn ok() -> Json<Value> {
    Json(json!({ "ok": true }))
}

async fn info() -> Json<Value> {
    Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "server": "trellis",
        "flags": { "assistants": true, "crons": false, "langsmith": false },
    }))
}

/// The graph an assistant id names: a graph's assistant id, or the graph's name.
fn served<'a>(app: &'a App, id: &str) -> Result<&'a Arc<dyn Served>, Detail> {
    app.graphs
        .values()
        .find(|graph| graph.name() == id || shapes::assistant_id(graph.name()) == id)
        .ok_or_else(|| {
            Detail(crate::ApiError::not_found(format!(
                "no assistant is `{id}` (there is one per graph: {})",
                app.graphs.keys().cloned().collect::<Vec<_>>().join(", ")
            )))
        })
}

fn assistant_of(app: &App, graph: &dyn Served) -> Value {
    shapes::assistant(graph.name(), graph.blueprint().doc.as_deref(), app.started)
}

async fn search_assistants(
    State(app): Shared,
    json: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, Detail> {
    let query = body(json)?;
    let limit = query["limit"].as_u64().unwrap_or(10) as usize;
    let offset = query["offset"].as_u64().unwrap_or(0) as usize;
    let graph_id = query["graph_id"].as_str();
    let name = query["name"].as_str().map(str::to_lowercase);
    let metadata = query["metadata"].as_object();
    let found: Vec<Value> = app
        .graphs
        .values()
        .map(|graph| assistant_of(&app, graph.as_ref()))
        .filter(|assistant| graph_id.is_none_or(|id| assistant["graph_id"] == id))
        .filter(|assistant| {
            name.as_deref().is_none_or(|name| {
                assistant["name"]
                    .as_str()
                    .is_some_and(|n| n.to_lowercase().contains(name))
            })
        })
        .filter(|assistant| {
            metadata.is_none_or(|wanted| {
                wanted
                    .iter()
                    .all(|(key, value)| &assistant["metadata"][key] == value)
            })
        })
        .skip(offset)
        .take(limit)
        .collect();
    Ok(Json(Value::Array(found)))
}

async fn get_assistant(State(app): Shared, Path(id): Path<String>) -> Result<Json<Value>, Detail> {
    let graph = served(&app, &id)?;
    Ok(Json(assistant_of(&app, graph.as_ref())))
}

/// The graph as LangGraph draws it: nodes (with `__start__` and `__end__`) and edges.
async fn assistant_graph(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<Json<Value>, Detail> {
    let blueprint = served(&app, &id)?.blueprint();
    let blueprint = serde_json::to_value(&blueprint).unwrap_or_default();
    let mut nodes = vec![json!({ "id": "__start__", "type": "schema", "data": "__start__" })];
    for node in blueprint["nodes"].as_array().into_iter().flatten() {
        let name = node["id"].clone();
        nodes.push(json!({ "id": name, "type": "runnable", "data": { "id": [], "name": name } }));
    }
    nodes.push(json!({ "id": "__end__", "type": "schema", "data": "__end__" }));
    // Every edge kind names where it comes from (`from`: a node, or a join's nodes) and where
    // it leads (`to`, or `targets`); those a router or a send function picks among are
    // conditional.
    let names = |value: &Value| -> Vec<Value> {
        match value {
            Value::Array(list) => list.clone(),
            Value::Null => Vec::new(),
            one => vec![one.clone()],
        }
    };
    let mut edges = Vec::new();
    for edge in blueprint["edges"].as_array().into_iter().flatten() {
        let conditional = matches!(edge["kind"].as_str(), Some("conditional" | "send"));
        let mut targets = names(&edge["to"]);
        targets.extend(names(&edge["targets"]));
        for source in names(&edge["from"]) {
            for target in &targets {
                edges.push(
                    json!({ "source": source, "target": target, "conditional": conditional }),
                );
            }
        }
    }
    Ok(Json(json!({ "nodes": nodes, "edges": edges })))
}

/// The graph's schemas as LangGraph names them — a run's input is an update of the state, its
/// output the state; Trellis graphs take no config — and, beside them, `answer_schema`: what a
/// pause takes, and `answer_sites`: per node whose pauses declare their answer type, what its
/// `interrupt` (`"interrupt"`) and its own question (`"asks"`) take, each as `{"type",
/// "schema"}`. `null` where the state gives none (as LangGraph answers a schema it cannot
/// make).
async fn assistant_schemas(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<Json<Value>, Detail> {
    let graph = served(&app, &id)?;
    let (schemas, answer) = graph.schemas();
    let mut sites = serde_json::Map::new();
    for site in graph.answer_sites() {
        let entry = sites.entry(site.node.clone()).or_insert_with(|| json!({}));
        entry[if site.asked { "asks" } else { "interrupt" }] =
            json!({ "type": site.type_name, "schema": site.schema });
    }
    let (state, update) = match schemas {
        Some(schemas) => (schemas.state, schemas.update),
        None => (Value::Null, Value::Null),
    };
    Ok(Json(json!({
        "graph_id": graph.name(),
        "input_schema": update,
        "output_schema": state,
        "state_schema": state,
        "config_schema": null,
        "context_schema": null,
        "answer_schema": answer,
        "answer_sites": sites,
    })))
}

async fn assistant_subgraphs(
    State(app): Shared,
    Path(id): Path<String>,
) -> Result<Json<Value>, Detail> {
    served(&app, &id)?;
    Ok(Json(json!({})))
}
