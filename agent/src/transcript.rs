//! Where a turn's history is kept between nodes, pauses and processes: the transcript stores.
//!
//! The graph state of a turn stays small (counters, call ids, flags); the messages live here,
//! written through after every node that changes them, keyed by run id. A turn paused in one
//! process is resumed in another with its whole history.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use trellis::RunId;
use trellis::retention::{RetentionError, RunData};

use crate::message::Message;

/// One message of a turn, with the node activation that wrote it.
///
/// The step and node let a node that runs again (a retry, or a step re-run after a crash
/// before its checkpoint) replace what it wrote the first time instead of adding to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The super-step that wrote it (0 for the prompt and the user's input).
    pub step: u64,
    /// The node that wrote it (empty for the prompt and the input).
    pub node: String,
    /// The message.
    pub message: Message,
    /// For a model's answer: the tools advertised to it for that call. A call to any other
    /// tool is refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub advertised: Vec<String>,
}

/// Keeps transcripts by run id.
///
/// A store is also [`RunData`]: what it keeps for a run is forgotten when the run is pruned
/// ([`Pruner::with`](trellis::retention::Pruner::with) takes it as it is, `Arc<dyn
/// TranscriptStore>` becoming `Arc<dyn RunData>`).
#[async_trait]
pub trait TranscriptStore: RunData + Send + Sync + 'static {
    /// The run's entries, in the order written; empty for a run never saved.
    ///
    /// # Errors
    /// The store's error.
    async fn load(&self, run_id: &RunId) -> Result<Vec<Entry>, TranscriptError>;

    /// Replaces the run's entries with `entries`, atomically.
    ///
    /// # Errors
    /// The store's error; the node that saved fails, and the step is not committed.
    async fn save(&self, run_id: &RunId, entries: &[Entry]) -> Result<(), TranscriptError>;
}

/// Takes a run's transcript along into its branches (a replay, a fork, an edit): the branch's
/// own transcript is what the run had written up to the checkpoint it starts from, so that it
/// goes on with the turn where that checkpoint stood — the tool calls made, their results —
/// instead of starting the turn again.
pub(crate) struct BranchTranscripts(pub(crate) Arc<dyn TranscriptStore>);

#[async_trait]
impl trellis::run::Branching for BranchTranscripts {
    async fn branch(
        &self,
        from: &trellis::checkpoint::CheckpointRef,
        step: u64,
        to: &RunId,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        // Before any node ran, nothing was written: the branch's first call writes the prompt
        // and the input (perhaps edited) itself.
        if step == 0 {
            return Ok(());
        }
        self.copy(from, step, to, |_| {}).await
    }

    /// A new turn on a thread goes on from the earlier turns' conversation: what they wrote up
    /// to where the thread stopped becomes the new run's past, at its step 0, marked as an
    /// earlier turn's (the new turn then writes its own input after it).
    async fn continues(
        &self,
        from: &trellis::checkpoint::CheckpointRef,
        step: u64,
        to: &RunId,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        self.copy(from, step, to, |entry| {
            entry.step = 0;
            crate::turn::EARLIER_TURN.clone_into(&mut entry.node);
        })
        .await
    }
}

impl BranchTranscripts {
    /// Saves as `to`'s what `from.run_id` wrote in a step up to `step` (committed at the
    /// checkpoint; later steps are the original's future, not the new run's past), each entry
    /// as `relabel` leaves it.
    async fn copy(
        &self,
        from: &trellis::checkpoint::CheckpointRef,
        step: u64,
        to: &RunId,
        relabel: impl Fn(&mut Entry),
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let mut entries = self.0.load(&from.run_id).await?;
        entries.retain(|entry| entry.step <= step);
        entries.iter_mut().for_each(relabel);
        if !entries.is_empty() {
            self.0.save(to, &entries).await?;
        }
        Ok(())
    }
}

/// Why a transcript could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TranscriptError {
    /// The database failed.
    #[error("transcript store: {0}")]
    Store(String),
    /// A stored transcript could not be read back.
    #[error("the stored transcript of run {run_id} cannot be read: {error}")]
    Corrupt {
        /// The run.
        run_id: String,
        /// What is wrong.
        error: String,
    },
}

/// Transcripts in this process's memory: for tests, and for turns that do not outlive it.
#[derive(Debug, Default)]
pub struct InMemoryTranscripts {
    runs: Mutex<HashMap<RunId, Vec<Entry>>>,
}

impl InMemoryTranscripts {
    /// An empty store.
    pub fn new() -> Self {
        InMemoryTranscripts::default()
    }
}

#[async_trait]
impl TranscriptStore for InMemoryTranscripts {
    async fn load(&self, run_id: &RunId) -> Result<Vec<Entry>, TranscriptError> {
        let runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(runs.get(run_id).cloned().unwrap_or_default())
    }

    async fn save(&self, run_id: &RunId, entries: &[Entry]) -> Result<(), TranscriptError> {
        let mut runs = self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        runs.insert(run_id.clone(), entries.to_vec());
        Ok(())
    }
}

#[async_trait]
impl RunData for InMemoryTranscripts {
    async fn forget(&self, run_ids: &[RunId]) -> Result<(), RetentionError> {
        let prefixes: Vec<String> = run_ids.iter().map(|id| format!("{id}/")).collect();
        self.runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|run_id, _| {
                !run_ids.contains(run_id)
                    && !prefixes.iter().any(|p| run_id.as_str().starts_with(p))
            });
        Ok(())
    }
}

#[cfg(feature = "sqlite")]
pub use sqlite::SqliteTranscripts;

#[cfg(feature = "sqlite")]
mod sqlite {
    use std::path::Path;
    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;
    use rusqlite::{Connection, OptionalExtension, params};
    use trellis::RunId;
    use trellis::retention::{RetentionError, RunData};

    use super::{Entry, TranscriptError, TranscriptStore};

    /// Transcripts in a SQLite file: one row per run, in table `trellis_agent_transcripts`
    /// (so the file can be the one the runs are in).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use trellis_agent::transcript::{SqliteTranscripts, TranscriptStore};
    ///
    /// let store = SqliteTranscripts::open_in_memory()?;
    /// assert!(store.load(&"01JF3Q8ZK5V9W2T7M4N6P8R0XY".into()).await?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    #[derive(Debug, Clone)]
    pub struct SqliteTranscripts {
        connection: Arc<Mutex<Connection>>,
    }

    impl SqliteTranscripts {
        /// Opens (or creates) the file at `path`.
        ///
        /// # Errors
        /// The file cannot be opened or its table created.
        pub fn open(path: impl AsRef<Path>) -> Result<Self, TranscriptError> {
            SqliteTranscripts::with(Connection::open(path).map_err(store)?)
        }

        /// A store in memory, for tests.
        ///
        /// # Errors
        /// The table cannot be created.
        pub fn open_in_memory() -> Result<Self, TranscriptError> {
            SqliteTranscripts::with(Connection::open_in_memory().map_err(store)?)
        }

        fn with(connection: Connection) -> Result<Self, TranscriptError> {
            // WAL as the runs' store uses, and a wait rather than an error when both write.
            connection
                .execute_batch(
                    "PRAGMA journal_mode = WAL;
                     PRAGMA busy_timeout = 5000;
                     CREATE TABLE IF NOT EXISTS trellis_agent_transcripts (
                         run_id TEXT PRIMARY KEY,
                         entries TEXT NOT NULL
                     ) WITHOUT ROWID;",
                )
                .map_err(store)?;
            Ok(SqliteTranscripts {
                connection: Arc::new(Mutex::new(connection)),
            })
        }

        async fn blocking<T: Send + 'static>(
            &self,
            job: impl FnOnce(&Connection) -> Result<T, TranscriptError> + Send + 'static,
        ) -> Result<T, TranscriptError> {
            let connection = Arc::clone(&self.connection);
            tokio::task::spawn_blocking(move || {
                let connection = connection
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                job(&connection)
            })
            .await
            .map_err(|error| TranscriptError::Store(error.to_string()))?
        }
    }

    #[async_trait]
    impl TranscriptStore for SqliteTranscripts {
        async fn load(&self, run_id: &RunId) -> Result<Vec<Entry>, TranscriptError> {
            let id = run_id.to_string();
            let text: Option<String> = self
                .blocking({
                    let id = id.clone();
                    move |c| {
                        c.query_row(
                            "SELECT entries FROM trellis_agent_transcripts WHERE run_id = ?1",
                            params![id],
                            |row| row.get(0),
                        )
                        .optional()
                        .map_err(store)
                    }
                })
                .await?;
            match text {
                None => Ok(Vec::new()),
                Some(text) => {
                    serde_json::from_str(&text).map_err(|error| TranscriptError::Corrupt {
                        run_id: id,
                        error: error.to_string(),
                    })
                }
            }
        }

        async fn save(&self, run_id: &RunId, entries: &[Entry]) -> Result<(), TranscriptError> {
            let id = run_id.to_string();
            let text = serde_json::to_string(entries)
                .map_err(|e| TranscriptError::Store(e.to_string()))?;
            self.blocking(move |c| {
                c.execute(
                    "INSERT INTO trellis_agent_transcripts (run_id, entries) VALUES (?1, ?2)
                     ON CONFLICT (run_id) DO UPDATE SET entries = excluded.entries",
                    params![id, text],
                )
                .map(drop)
                .map_err(store)
            })
            .await
        }
    }

    #[async_trait]
    impl RunData for SqliteTranscripts {
        async fn forget(&self, run_ids: &[RunId]) -> Result<(), RetentionError> {
            let ids: Vec<String> = run_ids.iter().map(ToString::to_string).collect();
            self.blocking(move |c| {
                let transaction = c.unchecked_transaction().map_err(store)?;
                {
                    // The run and its children: the ids between `<run>/` and `<run>0`.
                    let mut delete = transaction
                        .prepare_cached(
                            "DELETE FROM trellis_agent_transcripts
                             WHERE run_id = ?1 OR (run_id > ?1 || '/' AND run_id < ?1 || '0')",
                        )
                        .map_err(store)?;
                    for id in &ids {
                        delete.execute([id]).map_err(store)?;
                    }
                }
                transaction.commit().map_err(store)
            })
            .await
            .map_err(|error| RetentionError::RunData(Box::new(error)))
        }
    }

    fn store(error: rusqlite::Error) -> TranscriptError {
        TranscriptError::Store(error.to_string())
    }
}
