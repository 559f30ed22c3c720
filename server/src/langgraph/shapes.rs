//! Trellis's records as LangGraph's Agent Server shapes them: assistants, threads, thread
//! states, runs, and errors as `{"detail": …}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use trellis::RunId;
use trellis::checkpoint::{Checkpoint, CheckpointRef, RunRecord, RunStatus, ThreadRecord};
use trellis::interrupt::Interrupt;
use trellis::run::Timestamp;

use crate::error::ApiError;

/// LangGraph's namespace for assistant ids (`langgraph_api.graph.NAMESPACE_GRAPH`): a graph's
/// assistant has the id LangGraph's own server gives it.
const NAMESPACE_GRAPH: uuid::Uuid = uuid::uuid!("6ba7b821-9dad-11d1-80b4-00c04fd430c8");

/// The id of the assistant that runs graph `name`.
pub(crate) fn assistant_id(name: &str) -> String {
    uuid::Uuid::new_v5(&NAMESPACE_GRAPH, name.as_bytes()).to_string()
}

/// An error as LangGraph's server answers one: the status, and `{"detail": message}`.
pub(crate) struct Detail(pub(crate) ApiError);

impl From<ApiError> for Detail {
    fn from(error: ApiError) -> Self {
        Detail(error)
    }
}

impl From<trellis::RunError> for Detail {
    fn from(error: trellis::RunError) -> Self {
        Detail(error.into())
    }
}

impl From<trellis::checkpoint::CheckpointError> for Detail {
    fn from(error: trellis::checkpoint::CheckpointError) -> Self {
        Detail(error.into())
    }
}

impl IntoResponse for Detail {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(json!({ "detail": self.0.message }))).into_response()
    }
}

/// The assistant of graph `name` (one per graph, created with the server: version 1).
pub(crate) fn assistant(name: &str, doc: Option<&str>, started: Timestamp) -> Value {
    json!({
        "assistant_id": assistant_id(name),
        "graph_id": name,
        "name": name,
        "description": doc,
        "config": {},
        "context": {},
        "metadata": { "created_by": "system" },
        "version": 1,
        "created_at": started,
        "updated_at": started,
    })
}

/// A run's status as LangGraph names it.
pub(crate) fn run_status(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Running => "running",
        RunStatus::Paused | RunStatus::Cancelled => "interrupted",
        RunStatus::Completed => "success",
        RunStatus::Failed => "error",
    }
}

/// A thread's status: that of its newest run (`idle` before its first).
pub(crate) fn thread_status(newest: Option<&RunRecord>) -> &'static str {
    match newest.map(|run| run.status) {
        None | Some(RunStatus::Completed | RunStatus::Cancelled) => "idle",
        Some(RunStatus::Running) => "busy",
        // Paused with no question: an edit waiting to be taken up.
        Some(RunStatus::Paused) if newest.is_some_and(|run| run.interrupts.is_empty()) => "idle",
        Some(RunStatus::Paused) => "interrupted",
        Some(RunStatus::Failed) => "error",
    }
}

/// A question as LangGraph shows one: `{value, id}`, the value being what the node asked.
pub(crate) fn interrupt(question: &Interrupt) -> Value {
    json!({ "value": question.request, "id": question.id })
}

pub(crate) fn thread(record: &ThreadRecord, newest: Option<&RunRecord>) -> Value {
    let interrupts: Map<String, Value> = newest
        .filter(|run| run.status == RunStatus::Paused)
        .map(|run| {
            run.interrupts
                .iter()
                .map(|q| (q.id.as_str().to_owned(), json!([interrupt(q)])))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "thread_id": record.thread_id,
        "created_at": record.created_at,
        "updated_at": newest.map_or(record.updated_at, |run| run.updated_at.max(record.updated_at)),
        "metadata": record.metadata,
        "status": thread_status(newest),
        "values": newest.map_or(json!({}), |run| (*run.state).clone()),
        "interrupts": interrupts,
    })
}

/// A checkpoint's id as LangGraph carries one: its run and its number, `run:n`.
pub(crate) fn checkpoint_id(checkpoint: &Checkpoint) -> String {
    format!("{}:{}", checkpoint.run_id, checkpoint.id)
}

/// The checkpoint a request names — `checkpoint_id`, or `checkpoint.checkpoint_id` — as
/// [`checkpoint_id`] writes it (`<run>:<n>`); a 422 for an id not so written.
pub(crate) fn checkpoint_named(request: &Value) -> Result<Option<CheckpointRef>, Detail> {
    let named = request["checkpoint_id"]
        .as_str()
        .or_else(|| request["checkpoint"]["checkpoint_id"].as_str());
    let Some(text) = named else {
        return Ok(None);
    };
    let parsed = text
        .rsplit_once(':')
        .filter(|(run, _)| !run.is_empty())
        .and_then(|(run, number)| {
            Some(CheckpointRef {
                run_id: RunId::from(run),
                checkpoint: number.parse().ok()?,
            })
        });
    parsed.map(Some).ok_or_else(|| {
        Detail(ApiError {
            status: 422,
            code: "unprocessable",
            message: format!(
                "`{text}` is not a checkpoint id of this server (`<run id>:<number>`)"
            ),
        })
    })
}

pub(crate) fn checkpoint_ref(thread_id: &str, id: Option<String>) -> Value {
    json!({ "thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": id, "checkpoint_map": null })
}

/// A task's id: its run, the super-step it runs in, its node (`<run>:<step>:<node>`) — the
/// same in a thread state's `tasks` and in the `tasks` stream mode.
pub(crate) fn task_id(run_id: &RunId, step: u64, node: &str) -> String {
    format!("{run_id}:{step}:{node}")
}

/// A thread's state at `checkpoint` (`parent`: the one before it in the thread's history).
pub(crate) fn state(
    thread_id: &str,
    checkpoint: &Checkpoint,
    parent: Option<&Checkpoint>,
) -> Value {
    let interrupts: Vec<Value> = checkpoint.interrupts.iter().map(interrupt).collect();
    // One task per next node, as LangGraph lists the tasks of the next step; a question is on
    // the task of the node that asked it.
    let next = checkpoint.next_nodes();
    let tasks: Vec<Value> = next
        .iter()
        .map(|node| {
            let asked: Vec<Value> = checkpoint
                .interrupts
                .iter()
                .filter(|q| q.node == node.as_str())
                .map(interrupt)
                .collect();
            json!({
                "id": task_id(&checkpoint.run_id, checkpoint.step + 1, node),
                "name": node.as_str(),
                "path": ["__pregel_pull", node.as_str()],
                "error": null,
                "interrupts": asked,
                "checkpoint": null,
                "state": null,
                "result": null,
            })
        })
        .collect();
    let next: Vec<&str> = next.iter().map(|n| n.as_str()).collect();
    let parent_id = parent.map(checkpoint_id);
    json!({
        "values": *checkpoint.state,
        "next": next,
        "tasks": tasks,
        "metadata": {
            "step": checkpoint.step,
            "source": checkpoint.label.to_string(),
            "run_id": checkpoint.run_id,
            "writes": null,
        },
        "created_at": checkpoint.created_at,
        "checkpoint": checkpoint_ref(thread_id, Some(checkpoint_id(checkpoint))),
        "parent_checkpoint": parent_id.clone().map(|id| checkpoint_ref(thread_id, Some(id))),
        "interrupts": interrupts,
        "checkpoint_id": checkpoint_id(checkpoint),
        "parent_checkpoint_id": parent_id,
    })
}

/// A thread's state before its first run.
pub(crate) fn empty_state(thread_id: &str) -> Value {
    json!({
        "values": {},
        "next": [],
        "tasks": [],
        "metadata": {},
        "created_at": null,
        "checkpoint": checkpoint_ref(thread_id, None),
        "parent_checkpoint": null,
        "interrupts": [],
        "checkpoint_id": null,
        "parent_checkpoint_id": null,
    })
}

/// A run as LangGraph lists one. `strategy` is what its creation asked, known only in the
/// answer to that request: a run's strategy is not stored, so a run read back says `null`
/// rather than a guess.
pub(crate) fn run(record: &RunRecord, assistant: &str, strategy: Option<&str>) -> Value {
    json!({
        "run_id": record.run_id,
        "thread_id": record.thread,
        "assistant_id": assistant,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "status": run_status(record.status),
        "metadata": record.metadata,
        "multitask_strategy": strategy,
        "kwargs": {},
        "cancel_reason": (record.status == RunStatus::Cancelled).then(|| record.error.clone()).flatten(),
    })
}

/// What `runs/wait` and `join` answer: the run's last state, with what it asks under
/// `__interrupt__` at a pause, or `__error__` when it failed.
pub(crate) fn outcome(record: &RunRecord) -> Value {
    let mut values = match &*record.state {
        Value::Object(map) => map.clone(),
        other => {
            let mut map = Map::new();
            map.insert("__root__".to_owned(), other.clone());
            map
        }
    };
    match record.status {
        RunStatus::Paused => {
            let asked: Vec<Value> = record.interrupts.iter().map(interrupt).collect();
            values.insert("__interrupt__".to_owned(), Value::Array(asked));
        }
        RunStatus::Failed => {
            let message = record.error.clone().unwrap_or_default();
            values.insert(
                "__error__".to_owned(),
                json!({ "error": "RunError", "message": message }),
            );
        }
        _ => {}
    }
    Value::Object(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_s_assistant_id_is_the_one_langgraph_gives_it() {
        // `uuid.uuid5(UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8"), "agent")` in Python, as
        // `langgraph_api.graph` computes it for graph `agent`.
        assert_eq!(
            assistant_id("agent"),
            "fe096781-5601-53d2-b2f6-0d3403f7e9ca"
        );
    }

    /// A question asked inside a node leaves the frontier empty until the answer; the state
    /// still names the node the answer leads to in `next`, with its task holding the question.
    #[test]
    fn a_question_asked_inside_a_node_names_where_its_answer_leads() {
        let run_id = RunId::from("01JRUN");
        let question = Interrupt {
            id: "review@2".into(),
            node: "review".into(),
            step: 2,
            point: trellis::interrupt::InterruptPoint::Node,
            request: trellis::interrupt::InterruptRequest::new("approval", "Send it?")
                .resume_to("review"),
        };
        let checkpoint = Checkpoint {
            id: 3,
            run_id: run_id.clone(),
            step: 2,
            nodes: vec!["review".into()],
            label: trellis::checkpoint::CheckpointLabel::Pause("approval".into()),
            state: json!({ "n": 1 }).into(),
            frontier: Vec::new(),
            visits: Default::default(),
            approved: Vec::new(),
            failures: Vec::new(),
            interrupts: vec![question],
            joins: Default::default(),
            sends: Vec::new(),
            children: Default::default(),
            pending: Vec::new(),
            breakpoints: Default::default(),
            graph_fingerprint: "f".into(),
            state_type: "S".into(),
            created_at: Timestamp::now(),
            delta: None,
            chain: 0,
        };
        let state = state("t", &checkpoint, None);
        assert_eq!(state["next"], json!(["review"]));
        assert_eq!(state["tasks"][0]["name"], "review");
        assert_eq!(state["tasks"][0]["interrupts"][0]["id"], "review@2");
        assert_eq!(state["tasks"][0]["id"], "01JRUN:3:review");
    }

    #[test]
    fn statuses_are_langgraph_s() {
        let names: Vec<_> = RunStatus::ALL.iter().map(|s| run_status(*s)).collect();
        assert_eq!(
            names,
            ["running", "interrupted", "success", "error", "interrupted"]
        );
        assert_eq!(thread_status(None), "idle");
    }
}
