//! A run's events as server-sent events: one per checkpoint, in order, with the checkpoint's id
//! as the event id, so a client that reconnects with `Last-Event-ID` gets what came after.
//!
//! Checkpoints rather than in-process events: they are what the store keeps, so the stream is
//! the same whichever server or worker executed the run, and after a restart.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use serde_json::json;
use trellis::RunId;
use trellis::checkpoint::{Checkpoint, RunRecord, RunWatch};

use crate::error::ApiError;
use crate::state::App;

/// How long a stream waits for a write it has not heard of before it reads the store again.
/// This process's writes wake it at once (the store announces them), and so do other
/// processes' on PostgreSQL (`LISTEN`); this catches the rest — another process writing the
/// same SQLite file, a write made while the listener reconnected — at little cost when idle
/// (200 open streams read 40 runs a second).
pub(crate) const LOOK_AGAIN: Duration = Duration::from_secs(5);

/// How often the store is read while a run goes on when it does not announce its writes.
const POLL: Duration = Duration::from_millis(50);

/// At most one `changed` event this often on `GET /changes`: a busy store writes hundreds of
/// times a second, and a page showing a list reads it again once per event.
const CHANGED_EVERY: Duration = Duration::from_millis(250);

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

/// How a stream shows a run's checkpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Trellis's: an event per checkpoint named by its kind, open while the run is paused.
    Trellis,
    /// LangGraph's `join_stream`: `values` per checkpoint (the state), and at a stop — a pause
    /// too — the question in a last `values`, then `end`.
    LangGraph,
}

/// A checkpoint as LangGraph's `values` part: the state, the checkpoint's id as the event's.
fn values(checkpoint: &Checkpoint) -> Event {
    Event::default()
        .id(checkpoint.id.to_string())
        .event("values")
        .data(checkpoint.state.to_string())
}

/// How a run stopped, in LangGraph's shape: its last state with what it asks at a pause, or
/// `error` when it failed.
fn stopped(run: &RunRecord) -> Event {
    let outcome = crate::langgraph::outcome(run);
    match outcome.get("__error__") {
        Some(error) => Event::default().event("error").data(error.to_string()),
        None => Event::default().event("values").data(outcome.to_string()),
    }
}

/// The run's events after `after` (a checkpoint id), until the run ends (or, in LangGraph's
/// shape, stops); then `end`.
///
/// Each wake reads the run's record and the checkpoints it has not sent (the newest, and any
/// between): the work per event does not grow with the run's length.
pub(crate) async fn stream(
    app: Arc<App>,
    run_id: String,
    after: u64,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    follow(app, run_id, after, Shape::Trellis).await
}

pub(crate) async fn follow(
    app: Arc<App>,
    run_id: String,
    after: u64,
    shape: Shape,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>> + use<>>, ApiError> {
    let run = app.run(&run_id).await?;
    // Watched before the first read: a write between the read and the wait still wakes it.
    let watch = app
        .store
        .changes()
        .map(|changes| changes.watch_run(&run.run_id));
    let follow = Follow {
        app,
        run_id: run.run_id,
        after,
        queue: VecDeque::new(),
        ended: false,
        watch,
        shape,
    };
    let events = futures_util::stream::unfold(follow, |mut follow| async move {
        loop {
            if let Some(next) = follow.queue.pop_front() {
                return Some((Ok(next), follow));
            }
            if follow.ended {
                return None;
            }
            follow.read().await?;
            if follow.queue.is_empty() && !follow.ended {
                follow.wait().await;
                if follow.app.stopping.is_cancelled() {
                    // The server stops: the client may rejoin another (`Last-Event-ID`).
                    return None;
                }
            }
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

/// Where a stream stands: what it sent, what it is about to send.
struct Follow {
    app: Arc<App>,
    run_id: RunId,
    /// The last checkpoint sent.
    after: u64,
    queue: VecDeque<Event>,
    ended: bool,
    watch: Option<RunWatch>,
    shape: Shape,
}

impl Follow {
    /// Queues the checkpoints after `after`, and `end` when the run has ended; `None` when the
    /// run is gone or the store fails (the stream ends, and the client may rejoin).
    async fn read(&mut self) -> Option<()> {
        let store = &self.app.store;
        // The status first: a run seen ended has written its last checkpoint.
        let run = store.load_run(&self.run_id).await.ok()??;
        if let Some(latest) = store.latest_checkpoint(&self.run_id).await.ok()?
            && latest.id > self.after
        {
            let shown = match self.shape {
                Shape::Trellis => event,
                Shape::LangGraph => values,
            };
            for id in self.after + 1..latest.id {
                if let Some(checkpoint) = store.checkpoint(&self.run_id, id).await.ok()? {
                    self.queue.push_back(shown(&checkpoint));
                }
            }
            self.queue.push_back(shown(&latest));
            self.after = latest.id;
        }
        match self.shape {
            Shape::Trellis if run.status.is_ended() => {
                self.ended = true;
                self.queue.push_back(end(&run));
            }
            Shape::LangGraph if run.status != trellis::checkpoint::RunStatus::Running => {
                self.ended = true;
                self.queue.push_back(stopped(&run));
                self.queue
                    .push_back(Event::default().event("end").data("null"));
            }
            _ => {}
        }
        Some(())
    }

    /// Until the run's next write (or, unheard, a while), or the server stops.
    async fn wait(&mut self) {
        let written = async {
            match &mut self.watch {
                Some(watch) => {
                    let _ = tokio::time::timeout(LOOK_AGAIN, watch.changed()).await;
                }
                None => tokio::time::sleep(POLL).await,
            }
        };
        tokio::select! {
            () = written => {}
            () = self.app.stopping.cancelled() => {}
        }
    }
}

/// `GET /changes`: an event `changed` (`data: {}`) each time runs were written since the last
/// one, at most one per [`CHANGED_EVERY`] — the first at once — so that a page showing lists
/// of runs reads them again then, and not on a timer. Writes this process makes are heard at
/// once, and other processes' where the store tells of them (PostgreSQL's `LISTEN`); a store
/// that announces nothing gives an event every [`LOOK_AGAIN`].
pub(crate) fn changes(app: Arc<App>) -> Sse<impl Stream<Item = Result<Event, Infallible>> + use<>> {
    let watch = app.store.changes().map(|changes| changes.watch_all());
    let events =
        futures_util::stream::unfold((app, watch, false), |(app, mut watch, sent)| async move {
            let written = async {
                if sent {
                    tokio::time::sleep(CHANGED_EVERY).await;
                }
                match &mut watch {
                    Some(watch) => watch.changed().await,
                    None => tokio::time::sleep(LOOK_AGAIN).await,
                }
            };
            tokio::select! {
                () = written => {}
                () = app.stopping.cancelled() => return None,
            }
            let changed = Event::default().event("changed").data("{}");
            Some((Ok(changed), (app, watch, true)))
        });
    Sse::new(events).keep_alive(KeepAlive::default())
}
