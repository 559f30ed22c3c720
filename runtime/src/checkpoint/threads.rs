//! What a store keeps of a thread: its record, apart from the runs started on it.

use serde::{Deserialize, Serialize};

use crate::id::{RunId, ThreadId, Timestamp};

/// A thread as stored: state that outlives a run. Its runs carry its id
/// ([`RunRecord::thread`](super::RunRecord::thread)); its state is that of its newest run
/// (`head`). See [`Thread`](crate::thread::Thread).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ThreadRecord {
    /// The thread's id.
    pub thread_id: ThreadId,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it was last written: created, its metadata changed, or a run started on it.
    pub updated_at: Timestamp,
    /// What the caller keeps with it (a JSON object; `{}` when nothing is).
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// The newest run started on it, if any: the run a new one goes on from. Moved only by
    /// [`Checkpointer::move_thread_head`](super::Checkpointer::move_thread_head), so that of
    /// two runs started at once on the same head, one wins.
    pub head: Option<RunId>,
}

impl ThreadRecord {
    /// A thread created now, with `metadata` and no run yet.
    pub fn new(thread_id: ThreadId, metadata: serde_json::Map<String, serde_json::Value>) -> Self {
        let now = Timestamp::now();
        ThreadRecord {
            thread_id,
            created_at: now,
            updated_at: now,
            metadata,
            head: None,
        }
    }
}
