//! A run's events as server-sent events: one per checkpoint, in order, with the checkpoint's id
//! as the event id, so a client that reconnects with `Last-Event-ID` gets what came after.
//!
//! Checkpoints rather than in-process events: they are what the store keeps, so the stream is
//! the same whichever server or worker executed the run, and after a restart.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use serde_json::json;
use trellis::checkpoint::{Checkpoint, RunRecord};

use crate::error::ApiError;
use crate::state::App;

/// How often the store is read for new checkpoints while a run goes on.
const POLL: Duration = Duration::from_millis(50);

/// The event a checkpoint is sent as: its label's kind (`start`, `step`, `pause`, `resume`, `retry`,
/// `complete`, `failed`), and its step, nodes, label and state.
fn event(checkpoint: &Checkpoint) -> Event {
    let label = checkpoint.label.to_string();
    let kind = label.split(':').next().unwrap_or("step").to_owned();
    let data = json!({
        "run_id": checkpoint.run_id,
        "checkpoint": checkpoint.id,
        "step": checkpoint.step,
        "label": label,
        "nodes": checkpoint.nodes,
        "next": checkpoint.frontier,
        "state": checkpoint.state,
        "created_at": checkpoint.created_at,
    });
    Event::default()
        .id(checkpoint.id.to_string())
        .event(kind)
        .data(data.to_string())
}

/// The last event of a run's stream: `end`, with where the run stands (`completed`, `failed`
/// or `cancelled`, and why) — so that a client knows the stream is over rather than dropped,
/// and does not rejoin it (a cancel writes no checkpoint of its own to send).
fn end(run: &RunRecord) -> Event {
    let data = json!({ "run_id": run.run_id, "status": run.status, "error": run.error });
    Event::default().event("end").data(data.to_string())
}

/// The run's events after `after` (a checkpoint id), until the run ends; then `end`.
pub(crate) async fn stream(
    app: Arc<App>,
    run_id: String,
    after: u64,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let run = app.run(&run_id).await?;
    let state = (app, run.run_id, after, Vec::<Event>::new(), false);
    let events = futures_util::stream::unfold(
        state,
        |(app, run_id, mut after, mut queue, mut ended)| async move {
            loop {
                if !queue.is_empty() {
                    let next = queue.remove(0);
                    return Some((Ok(next), (app, run_id, after, queue, ended)));
                }
                if ended {
                    return None;
                }
                // Read the status first: a run seen ended has written its last checkpoint.
                let run = match app.store.load_run(&run_id).await {
                    Ok(Some(run)) => run,
                    _ => return None,
                };
                let checkpoints = app
                    .store
                    .list_checkpoints(&run_id)
                    .await
                    .unwrap_or_default();
                let seen = after;
                for checkpoint in checkpoints.iter().filter(|c| c.id > seen) {
                    after = checkpoint.id;
                    queue.push(event(checkpoint));
                }
                ended = run.status.is_ended();
                if ended {
                    queue.push(end(&run));
                }
                if queue.is_empty() && !ended {
                    tokio::time::sleep(POLL).await;
                }
            }
        },
    );
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
