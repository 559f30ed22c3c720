//! `SqliteCheckpointer`: runs and checkpoints in one SQLite file, the embedded default.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};

use super::{
    Checkpoint, CheckpointError, Checkpointer, RunQueue, RunRecord, RunStatus, ThreadRecord,
    corrupt,
};
use crate::id::{RunId, ThreadId, Timestamp};
use rows::{
    SELECT_CHECKPOINT, SELECT_RUN, SELECT_STORED, ShapeIds, Stored, checkpoint_row,
    decode_checkpoint, decode_run, decode_stored, insert_checkpoint, run_row, shape_id, upsert_run,
};

mod chain;
mod prune;
mod rows;
pub use prune::Vacuumed;
mod schema;
mod threads;
mod transaction;
use transaction::{KnownRow, data_version, lock, write_transaction};

/// How hard SQLite makes each commit durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=FULL`: a committed step survives a power loss (the default).
    Full,
    /// `synchronous=NORMAL`: in WAL mode a commit survives a crash of the process but may be
    /// lost with the machine's power; faster.
    Normal,
}

/// Runs and checkpoints in one SQLite file: created on first use, schema versioned and
/// migrated, WAL journal, a step's checkpoint and run record committed in one transaction.
///
/// Under full sync, calls run on tokio's blocking pool, so a slow disk never stalls other tasks.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use trellis::checkpoint::Checkpointer;
/// use trellis::checkpoint::SqliteCheckpointer;
///
/// let store = SqliteCheckpointer::open_in_memory()?;
/// assert!(store.list_runs(10, 0).await?.is_empty());
/// # Ok::<(), trellis::checkpoint::CheckpointError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct SqliteCheckpointer {
    connection: Arc<Mutex<Connection>>,
    /// The run row the last step read or left as it was, while nothing can have changed it
    /// (see [`KnownRow`]). Only touched with `connection` locked.
    known: Arc<Mutex<Option<KnownRow>>>,
    /// The `shapes` rows this connection knows. Only touched with `connection` locked.
    shapes: Arc<Mutex<ShapeIds>>,
    durability: Durability,
}

/// The running runs of a graph, oldest first, with who holds them and until when: where a
/// claim looks for a ready one. Read through the `runs_ready` index (schema 6).
const QUEUED: &str = "SELECT run_id, owner, lease_until FROM runs
    WHERE graph = ?1 AND status = 'running'
    ORDER BY created_us, run_id";

/// The running runs of a graph that someone holds, oldest first (`held_runs`).
const HELD: &str = "SELECT run_id, owner FROM runs
    WHERE graph = ?1 AND status = 'running' AND owner IS NOT NULL
    ORDER BY created_us, run_id";

/// The one row (or none) `sql` reads, through a statement parsed once per connection:
/// rusqlite's `query_row` parses it anew on every call, which was most of a resume's reads.
fn cached_row<T, P: rusqlite::Params>(
    connection: &Connection,
    sql: &str,
    params: P,
    read: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<Option<T>> {
    connection
        .prepare_cached(sql)?
        .query_row(params, read)
        .optional()
}

/// What `save_step` compares of a run's row, or `None` when there is no row.
fn read_stored(connection: &Connection, run_id: &str) -> Result<Option<Stored>, CheckpointError> {
    cached_row(connection, SELECT_STORED, [run_id], decode_stored).map_err(backend)
}

fn backend(error: rusqlite::Error) -> CheckpointError {
    CheckpointError::Backend(Box::new(error))
}

fn json<T: serde::Serialize>(what: &'static str, value: &T) -> Result<String, CheckpointError> {
    serde_json::to_string(value).map_err(|source| CheckpointError::Serialize { what, source })
}

impl SqliteCheckpointer {
    /// Opens (creating if needed) the database at `path`, with full sync.
    ///
    /// # Errors
    /// [`CheckpointError::Backend`] when the file cannot be opened or written;
    /// [`CheckpointError::Corrupt`] when it holds a schema newer than this build knows.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CheckpointError> {
        Self::open_with(path, Durability::Full)
    }

    /// Opens the database at `path` with the given durability.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_with(path: impl AsRef<Path>, sync: Durability) -> Result<Self, CheckpointError> {
        let connection = Connection::open(path).map_err(backend)?;
        Self::setup(connection, sync)
    }

    /// A database in memory, gone when the last clone is dropped (for tests).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_in_memory() -> Result<Self, CheckpointError> {
        Self::setup(
            Connection::open_in_memory().map_err(backend)?,
            Durability::Full,
        )
    }

    fn setup(mut connection: Connection, sync: Durability) -> Result<Self, CheckpointError> {
        let synchronous = match sync {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        };
        // Foreign keys are not enforced: a checkpoint is only ever written in the transaction
        // that read its run's row (`save_step`, which writes that row first when it has to),
        // and no run is deleted. Enforced, they cost every step a second lookup of its run
        // (~4,000 instructions, 8% of a step's under `Durability::Normal`).
        connection
            .execute_batch(&format!(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = {synchronous}; \
                 PRAGMA foreign_keys = OFF; PRAGMA busy_timeout = 5000;"
            ))
            .map_err(backend)?;
        // Room for every statement this store prepares, with some to spare: rusqlite keeps
        // 16, and one evicted would be parsed again at its next use.
        connection.set_prepared_statement_cache_capacity(64);
        // A cached statement keeps its plan: with the query planner's stability guarantee off,
        // SQLite (built with STAT4) re-parses a statement whose bound run id changed, which
        // cost more than not caching it (~200,000 instructions a read of a run).
        connection
            .set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
                true,
            )
            .map_err(backend)?;
        schema::migrate(&mut connection)?;
        Ok(SqliteCheckpointer {
            connection: Arc::new(Mutex::new(connection)),
            known: Arc::new(Mutex::new(None)),
            shapes: Arc::new(Mutex::new(ShapeIds::default())),
            durability: sync,
        })
    }

    /// Runs `work` with the connection. Under `Durability::Normal` a commit is a few writes
    /// into the WAL: it runs in place, since handing it to another thread and back would cost
    /// more than the commit itself. Under `Durability::Full` a commit waits for the disk (an
    /// fsync, often a millisecond): on a multi-thread runtime it runs in place too but with
    /// `block_in_place`, which first hands this worker's other tasks to another thread (cheaper
    /// than a round trip to the blocking pool: 1.1× the baseline instead of 1.2–1.5×); on a
    /// current-thread runtime, where that is impossible, on the blocking pool.
    async fn with<T, F>(&self, work: F) -> Result<T, CheckpointError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, CheckpointError> + Send + 'static,
    {
        let connection = Arc::clone(&self.connection);
        let run = move || work(&mut lock(&connection));
        match self.durability {
            Durability::Normal => run(),
            Durability::Full
                if tokio::runtime::Handle::try_current().is_ok_and(|handle| {
                    handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
                }) =>
            {
                tokio::task::block_in_place(run)
            }
            Durability::Full => tokio::task::spawn_blocking(run)
                .await
                .map_err(|error| CheckpointError::Backend(Box::new(error)))?,
        }
    }
}

#[async_trait]
impl Checkpointer for SqliteCheckpointer {
    async fn claim_run(
        &self,
        run: &RunRecord,
        expected: RunStatus,
    ) -> Result<bool, CheckpointError> {
        let row = run_row(run, None)?;
        self.with(move |connection| {
            let transaction = write_transaction(connection)?;
            let current: Option<String> = cached_row(
                &transaction,
                "SELECT status FROM runs WHERE run_id = ?1",
                [&row.run_id],
                |r| r.get(0),
            )
            .map_err(backend)?;
            if current.as_deref() != Some(expected.as_str()) {
                return Ok(false);
            }
            upsert_run(&transaction, &row)?;
            transaction.commit().map_err(backend)?;
            Ok(true)
        })
        .await
    }

    async fn take_over(
        &self,
        run: &RunRecord,
        previous_owner: Option<&str>,
    ) -> Result<bool, CheckpointError> {
        let run_id = run.run_id.to_string();
        let status = run.status.as_str();
        let updated_at = run.updated_at.to_string();
        let error = run.error.clone();
        let owner = run.owner.as_deref().map(str::to_owned);
        let lease_until = run.lease_until.map(|t| t.to_string());
        let previous = previous_owner.map(str::to_owned);
        self.with(move |connection| {
            // One statement: the check and the change are one write, never interleaved.
            let changed = connection
                .prepare_cached(
                    "UPDATE runs SET status = ?2, updated_at = ?3, error = ?4, owner = ?5,
                        lease_until = ?6
                    WHERE run_id = ?1 AND status = 'running' AND owner IS ?7",
                )
                .and_then(|mut statement| {
                    statement.execute(params![
                        run_id,
                        status,
                        updated_at,
                        error,
                        owner,
                        lease_until,
                        previous
                    ])
                })
                .map_err(backend)?;
            Ok(changed == 1)
        })
        .await
    }

    async fn save_step(
        &self,
        run: RunRecord,
        checkpoint: Checkpoint,
    ) -> Result<(), CheckpointError> {
        let checkpoint = &checkpoint;
        if run.run_id != checkpoint.run_id {
            return Err(corrupt(
                format!("checkpoint {} of run {}", checkpoint.id, checkpoint.run_id),
                format!("saved with the record of run {}", run.run_id),
            ));
        }
        // The runtime gives both the same state: serialize and store it once, in the checkpoint.
        let state = rows::stored_state(checkpoint)?;
        let same_as = run
            .shares_state_with(checkpoint)
            .then(|| i64::try_from(checkpoint.id).unwrap_or(i64::MAX));
        // An ordinary step of a running run changes only what the checkpoint records (its
        // state, step, time) and the run's last node and transitions, which it carries too:
        // then the run row is left as it is — one row written per step, not two — unless its
        // lease is half gone (see `Stored::fits`).
        let progress_only = run.status == RunStatus::Running
            && run.interrupts.is_empty()
            && run.error.is_none()
            && same_as.is_some()
            && run.updated_at == checkpoint.created_at
            && run.steps == checkpoint.step;
        let mut row = checkpoint_row(checkpoint, state)?;
        row.progress = Some((
            run.last_node.as_deref().map(str::to_owned),
            i64::try_from(run.transitions).unwrap_or(i64::MAX),
        ));
        let known = Arc::clone(&self.known);
        let shapes = Arc::clone(&self.shapes);
        self.with(move |connection| {
            // Both or neither: a crash between them leaves the previous step intact.
            let transaction = write_transaction(connection)?;
            let mut known = lock(&known);
            let stored = match known.take() {
                Some(seen)
                    if seen.run_id == row.run_id
                        && data_version(&transaction) == Some(seen.data_version) =>
                {
                    Some(seen.stored)
                }
                _ => read_stored(&transaction, row.run_id.as_str())?,
            };
            if let Some(stored) = &stored
                && stored.owner.as_deref() != run.owner.as_deref()
            {
                return Err(CheckpointError::Fenced {
                    run_id: run.run_id.clone(),
                    owner: stored.owner.clone().unwrap_or_else(|| "nobody".to_owned()),
                });
            }
            let skip_row = progress_only && stored.as_ref().is_some_and(|stored| stored.fits(&run));
            if !skip_row {
                // Built only now: an ordinary step never needs the run's columns.
                upsert_run(&transaction, &run_row(&run, same_as)?)?;
            }
            // The run's number: as read, or the new row's (a write never changes it).
            let seq = match stored.as_ref().and_then(|stored| stored.seq) {
                Some(seq) => Some(seq),
                None => cached_row(
                    &transaction,
                    "SELECT seq FROM runs WHERE run_id = ?1",
                    [row.run_id.as_str()],
                    |r| r.get(0),
                )
                .map_err(backend)?
                .flatten(),
            };
            let mut shapes = lock(&shapes);
            let (fingerprint, state_type) = &row.shape;
            let (shape, new_shape) = match shapes.get(fingerprint, state_type) {
                Some(id) => (id, false),
                None => (shape_id(&transaction, fingerprint, state_type)?, true),
            };
            insert_checkpoint(&transaction, &row, seq, shape)?;
            transaction.commit().map_err(backend)?;
            if new_shape {
                shapes.remember(fingerprint.clone(), state_type.clone(), shape);
            }
            // The row is as read only when this step left it; else the next step reads it.
            if skip_row
                && let Some(stored) = stored
                && let Some(data_version) = data_version(connection)
            {
                *known = Some(KnownRow {
                    run_id: row.run_id,
                    stored,
                    data_version,
                });
            }
            Ok(())
        })
        .await
    }

    async fn load_run(&self, run_id: &RunId) -> Result<Option<RunRecord>, CheckpointError> {
        let run_id = run_id.to_string();
        self.with(move |connection| {
            cached_row(
                connection,
                &format!("{SELECT_RUN} WHERE r.run_id = ?1"),
                [&run_id],
                decode_run,
            )
            .map_err(backend)?
            .map(|row| chain::fold(connection, row?))
            .transpose()
        })
        .await
    }

    async fn list_runs(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        self.with(move |connection| {
            let mut statement = connection
                .prepare_cached(&format!(
                    "{SELECT_RUN} ORDER BY r.created_us DESC, r.run_id DESC LIMIT ?1 OFFSET ?2"
                ))
                .map_err(backend)?;
            let rows = statement
                .query_map(params![limit, offset], decode_run)
                .map_err(backend)?;
            let rows = rows
                .map(|row| row.map_err(backend)?)
                .collect::<Result<Vec<_>, _>>()?;
            rows.into_iter()
                .map(|row| chain::fold(connection, row))
                .collect()
        })
        .await
    }

    async fn list_checkpoints(&self, run_id: &RunId) -> Result<Vec<Checkpoint>, CheckpointError> {
        let run_id = run_id.to_string();
        self.with(move |connection| {
            let mut statement = connection
                .prepare_cached(&format!("{SELECT_CHECKPOINT} ORDER BY c.key"))
                .map_err(backend)?;
            let rows = statement
                .query_map([&run_id], decode_checkpoint)
                .map_err(backend)?;
            let rows = rows
                .map(|row| row.map_err(backend)?)
                .collect::<Result<Vec<_>, _>>()?;
            chain::fold_in_order(connection, rows)
        })
        .await
    }

    async fn latest_checkpoint(
        &self,
        run_id: &RunId,
    ) -> Result<Option<Checkpoint>, CheckpointError> {
        let run_id = run_id.to_string();
        self.with(move |connection| {
            cached_row(
                connection,
                &format!("{SELECT_CHECKPOINT} ORDER BY c.key DESC LIMIT 1"),
                [&run_id],
                decode_checkpoint,
            )
            .map_err(backend)?
            .map(|row| chain::fold(connection, row?))
            .transpose()
        })
        .await
    }

    async fn checkpoint(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<Option<Checkpoint>, CheckpointError> {
        let run_id = run_id.to_string();
        let Ok(id) = i64::try_from(id) else {
            return Ok(None);
        };
        self.with(move |connection| {
            cached_row(
                connection,
                &format!("{SELECT_CHECKPOINT} AND c.key = (r.seq << 32) + ?2"),
                params![run_id, id],
                decode_checkpoint,
            )
            .map_err(backend)?
            .map(|row| chain::fold(connection, row?))
            .transpose()
        })
        .await
    }

    async fn create_thread(&self, thread: &ThreadRecord) -> Result<bool, CheckpointError> {
        self.create_thread_row(thread).await
    }

    async fn load_thread(
        &self,
        thread_id: &ThreadId,
    ) -> Result<Option<ThreadRecord>, CheckpointError> {
        self.load_thread_row(thread_id).await
    }

    async fn list_threads(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ThreadRecord>, CheckpointError> {
        self.list_thread_rows(limit, offset).await
    }

    async fn set_thread_metadata(
        &self,
        thread_id: &ThreadId,
        metadata: &serde_json::Map<String, serde_json::Value>,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        self.set_thread_metadata_row(thread_id, metadata, now).await
    }

    async fn move_thread_head(
        &self,
        thread_id: &ThreadId,
        expected: Option<&RunId>,
        head: &RunId,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        self.move_thread_head_row(thread_id, expected, head, now)
            .await
    }

    async fn thread_runs(
        &self,
        thread_id: &ThreadId,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError> {
        self.thread_run_rows(thread_id, limit, offset).await
    }

    async fn delete_thread(&self, thread_id: &ThreadId) -> Result<bool, CheckpointError> {
        self.delete_thread_rows(thread_id).await
    }

    async fn delete_runs(&self, run_ids: &[RunId]) -> Result<Vec<RunId>, CheckpointError> {
        self.delete_run_rows(run_ids).await
    }

    async fn delete_checkpoints_before(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<u64, CheckpointError> {
        self.delete_checkpoint_rows_before(run_id, id).await
    }
}

#[async_trait]
impl RunQueue for SqliteCheckpointer {
    async fn claim_next(
        &self,
        graph: &str,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> Result<Option<RunRecord>, CheckpointError> {
        let graph = graph.to_owned();
        let owner = owner.to_owned();
        self.with(move |connection| {
            let transaction = write_transaction(connection)?;
            let candidates: Vec<(String, Option<String>, Option<String>)> = {
                let mut statement = transaction.prepare_cached(QUEUED).map_err(backend)?;
                let rows = statement
                    .query_map([&graph], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .map_err(backend)?;
                rows.collect::<Result<_, _>>().map_err(backend)?
            };
            let mut ready = None;
            for (run_id, held_by, until) in candidates {
                let expired = match until {
                    None => true,
                    Some(text) => {
                        Timestamp::parse(&text).map_err(|e| {
                            corrupt(format!("column `lease_until` of run {run_id}"), e)
                        })? < now
                    }
                };
                if held_by.is_none() || expired {
                    ready = Some(run_id);
                    break;
                }
            }
            let Some(run_id) = ready else {
                return Ok(None);
            };
            transaction
                .execute(
                    "UPDATE runs SET owner = ?2, lease_until = ?3 WHERE run_id = ?1",
                    params![run_id, owner, lease_until.to_string()],
                )
                .map_err(backend)?;
            let record = cached_row(
                &transaction,
                &format!("{SELECT_RUN} WHERE r.run_id = ?1"),
                [&run_id],
                decode_run,
            )
            .map_err(backend)?
            .ok_or_else(|| corrupt(format!("run {run_id}"), "claimed, then not found"))??;
            let record = chain::fold(&transaction, record)?;
            transaction.commit().map_err(backend)?;
            Ok(Some(record))
        })
        .await
    }

    async fn held_runs(&self, graph: &str) -> Result<Vec<(RunId, String)>, CheckpointError> {
        let graph = graph.to_owned();
        self.with(move |connection| {
            let mut statement = connection.prepare_cached(HELD).map_err(backend)?;
            let rows = statement
                .query_map([&graph], |r| {
                    Ok((RunId::from(r.get::<_, String>(0)?), r.get(1)?))
                })
                .map_err(backend)?;
            rows.collect::<Result<_, _>>().map_err(backend)
        })
        .await
    }

    async fn renew_lease(
        &self,
        run_id: &RunId,
        owner: &str,
        lease_until: Timestamp,
    ) -> Result<bool, CheckpointError> {
        let run_id = run_id.to_string();
        let owner = owner.to_owned();
        self.with(move |connection| {
            let changed = connection
                .execute(
                    "UPDATE runs SET lease_until = ?3
                     WHERE run_id = ?1 AND owner = ?2 AND status = 'running'",
                    params![run_id, owner, lease_until.to_string()],
                )
                .map_err(backend)?;
            Ok(changed == 1)
        })
        .await
    }
}
