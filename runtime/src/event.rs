//! Run events: a typed, serializable enum fanned out to subscribers and to `tracing`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::checkpoint::CheckpointRef;
use crate::id::{RunId, Timestamp};
use crate::interrupt::Interrupt;

/// What happened in a run. Serialized with its name in `"event"` (`"graph.node.completed"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event")]
#[non_exhaustive]
pub enum Event {
    /// A run began.
    #[serde(rename = "graph.run.started")]
    RunStarted {
        /// The run.
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// When.
        at: Timestamp,
    },
    /// A node began an attempt.
    #[serde(rename = "graph.node.entered")]
    NodeEntered {
        /// The run.
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// The super-step, from 1.
        step: u64,
        /// The node.
        node: String,
    },
    /// A node finished; `command` is what it returned ([`NodeResult::label`](crate::NodeResult::label)).
    #[serde(rename = "graph.node.completed")]
    NodeCompleted {
        /// The run.
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// The super-step, from 1.
        step: u64,
        /// The node.
        node: String,
        /// What the node returned: `update`, `goto:review`, `interrupt:approval`, …
        command: String,
        /// How long the node took, retries included, in microseconds.
        elapsed_us: u64,
    },
    /// A node attempt failed.
    #[serde(rename = "graph.node.failed")]
    NodeFailed {
        /// The run.
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// The super-step, from 1.
        step: u64,
        /// The node.
        node: String,
        /// The attempt that failed, from 1.
        attempt: u32,
        /// The error, as text.
        error: String,
        /// Whether another attempt follows.
        retrying: bool,
    },
    /// The run paused for a person.
    #[serde(rename = "graph.run.paused")]
    RunPaused {
        /// The run.
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// Super-steps completed.
        step: u64,
        /// What is asked.
        interrupts: Vec<Interrupt>,
    },
    /// The run reached its end.
    #[serde(rename = "graph.run.completed")]
    RunCompleted {
        /// The run.
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// Super-steps completed.
        step: u64,
    },
    /// The run failed.
    #[serde(rename = "graph.run.failed")]
    RunFailed {
        /// The run.
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// Super-steps completed.
        step: u64,
        /// Why, as text.
        error: String,
    },
    /// A checkpoint was written.
    #[serde(rename = "graph.checkpoint.saved")]
    CheckpointSaved {
        /// The run.
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// Super-steps completed.
        step: u64,
        /// `start`, `step`, `pause:<kind>`, `resume`, `complete`, `failed`, `retry`, `fork` or
        /// `update` ([`CheckpointLabel`](crate::checkpoint::CheckpointLabel)).
        label: String,
        /// The checkpoint's number in the run, to read it back
        /// ([`Checkpointer::checkpoint`](crate::checkpoint::Checkpointer::checkpoint)).
        #[serde(default)]
        checkpoint: u64,
    },
    /// A paused run was taken up again.
    #[serde(rename = "graph.resume.started")]
    ResumeStarted {
        /// The run.
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// Super-steps completed.
        step: u64,
        /// The interrupts answered.
        interrupts: Vec<String>,
    },
    /// The answers were folded into the state; the run continues.
    #[serde(rename = "graph.resume.completed")]
    ResumeCompleted {
        /// The run.
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// Super-steps completed.
        step: u64,
    },
    /// A failed run was taken up again from its last committed checkpoint
    /// ([`retry`](crate::CompiledGraph::retry)).
    #[serde(rename = "graph.run.retried")]
    RunRetried {
        /// The run.
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// Super-steps completed (those of the checkpoint it goes on from).
        step: u64,
        /// The checkpoint it goes on from.
        checkpoint: u64,
    },
    /// A branch was forked from a checkpoint of another run
    /// ([`replay`](crate::CompiledGraph::replay),
    /// [`update_state`](crate::CompiledGraph::update_state)).
    #[serde(rename = "graph.run.forked")]
    RunForked {
        /// The new run (the branch).
        run_id: RunId,
        /// The graph's name.
        graph: String,
        /// Super-steps completed (those of the checkpoint it was forked from).
        step: u64,
        /// The run and checkpoint it was forked from.
        parent: CheckpointRef,
    },
}

impl Event {
    /// The event's name, as serialized: `graph.node.completed`, …
    pub fn name(&self) -> &'static str {
        match self {
            Event::RunStarted { .. } => "graph.run.started",
            Event::NodeEntered { .. } => "graph.node.entered",
            Event::NodeCompleted { .. } => "graph.node.completed",
            Event::NodeFailed { .. } => "graph.node.failed",
            Event::RunPaused { .. } => "graph.run.paused",
            Event::RunCompleted { .. } => "graph.run.completed",
            Event::RunFailed { .. } => "graph.run.failed",
            Event::CheckpointSaved { .. } => "graph.checkpoint.saved",
            Event::ResumeStarted { .. } => "graph.resume.started",
            Event::ResumeCompleted { .. } => "graph.resume.completed",
            Event::RunRetried { .. } => "graph.run.retried",
            Event::RunForked { .. } => "graph.run.forked",
        }
    }

    /// The run the event belongs to.
    pub fn run_id(&self) -> &RunId {
        match self {
            Event::RunStarted { run_id, .. }
            | Event::NodeEntered { run_id, .. }
            | Event::NodeCompleted { run_id, .. }
            | Event::NodeFailed { run_id, .. }
            | Event::RunPaused { run_id, .. }
            | Event::RunCompleted { run_id, .. }
            | Event::RunFailed { run_id, .. }
            | Event::CheckpointSaved { run_id, .. }
            | Event::ResumeStarted { run_id, .. }
            | Event::ResumeCompleted { run_id, .. }
            | Event::RunRetried { run_id, .. }
            | Event::RunForked { run_id, .. } => run_id,
        }
    }
}

/// Fans a graph's events out to its subscribers and to `tracing`.
#[derive(Debug)]
pub(crate) struct EventBus {
    sender: broadcast::Sender<Event>,
    subscribers: Arc<AtomicUsize>,
    /// How far a subscriber may fall behind: the number given, not the power of two the
    /// channel rounds it up to.
    capacity: usize,
}

impl EventBus {
    pub(crate) fn new(capacity: usize) -> Self {
        EventBus {
            sender: broadcast::channel(capacity.max(1)).0,
            subscribers: Arc::new(AtomicUsize::new(0)),
            capacity: capacity.max(1),
        }
    }

    /// Whether anyone would see an event: then, and only then, is it built.
    #[inline]
    pub(crate) fn is_observed(&self) -> bool {
        self.subscribers.load(Ordering::Relaxed) > 0
            || tracing::enabled!(target: "trellis", tracing::Level::DEBUG)
    }

    /// Builds the event only when someone listens; with nobody listening it costs an atomic
    /// load and `tracing`'s cached "disabled" check.
    pub(crate) fn emit(&self, make: impl FnOnce() -> Event) {
        if !self.is_observed() {
            return;
        }
        let event = make();
        tracing::debug!(target: "trellis", event = event.name(), run_id = %event.run_id(), detail = ?event);
        if self.subscribers.load(Ordering::Relaxed) > 0 {
            // Err only when every receiver was dropped in between: nobody to tell.
            let _ = self.sender.send(event);
        }
    }

    pub(crate) fn subscribe(&self) -> EventStream {
        self.subscribers.fetch_add(1, Ordering::Relaxed);
        EventStream {
            receiver: self.sender.subscribe(),
            subscribers: Arc::clone(&self.subscribers),
            missed: 0,
            capacity: self.capacity,
        }
    }
}

/// A subscription to a graph's events, from every run of that graph.
///
/// Events are buffered per subscriber up to the graph's event capacity
/// ([`GraphBuilder::DEFAULT_EVENT_CAPACITY`](crate::GraphBuilder::DEFAULT_EVENT_CAPACITY) unless set with
/// [`GraphBuilder::set_event_capacity`](crate::GraphBuilder::set_event_capacity)). A subscriber
/// that falls further behind never slows a run down and never makes it buffer more: it loses
/// the oldest events it had not read, and [`missed`](EventStream::missed) counts them.
#[derive(Debug)]
pub struct EventStream {
    receiver: broadcast::Receiver<Event>,
    subscribers: Arc<AtomicUsize>,
    missed: u64,
    capacity: usize,
}

impl EventStream {
    /// The next event; `None` once the graph is dropped and every event was read.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            match self.receiver.recv().await {
                Ok(event) if self.kept() => return Some(event),
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(lost)) => self.missed += lost,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The next event if one is waiting, without waiting.
    pub fn try_next(&mut self) -> Option<Event> {
        loop {
            match self.receiver.try_recv() {
                Ok(event) if self.kept() => return Some(event),
                Ok(_) => {}
                Err(broadcast::error::TryRecvError::Lagged(lost)) => self.missed += lost,
                Err(_) => return None,
            }
        }
    }

    /// Whether the event just received is among the newest `capacity` waiting (the channel keeps
    /// a power of two); if not, it counts as missed.
    fn kept(&mut self) -> bool {
        let kept = self.receiver.len() < self.capacity;
        if !kept {
            self.missed += 1;
        }
        kept
    }

    /// How many events this subscriber lost by falling more than the capacity behind.
    pub fn missed(&self) -> u64 {
        self.missed
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        self.subscribers.fetch_sub(1, Ordering::Relaxed);
    }
}
