//! Deleting from SQLite: ended runs with their checkpoints and child runs, and a run's older
//! checkpoints (retention and thread compaction); and giving the freed space back
//! ([`SqliteCheckpointer::vacuum`]).

use rusqlite::{OptionalExtension, params};

use super::{SqliteCheckpointer, backend, lock, write_transaction};
use crate::checkpoint::CheckpointError;
use crate::id::RunId;

/// Deletes run `seq` (whose id is `run_id`), its children and all their checkpoints, inside
/// the caller's write transaction.
pub(super) fn delete_with_children(
    transaction: &rusqlite::Connection,
    run_id: &RunId,
    seq: i64,
) -> Result<(), CheckpointError> {
    // Its children: the ids between `<run>/` and `<run>0`, the next byte after `/`.
    let mut seqs = transaction
        .prepare_cached("SELECT seq FROM runs WHERE run_id > ?1 || '/' AND run_id < ?1 || '0'")
        .and_then(|mut children| {
            children
                .query_map([run_id.as_str()], |row| row.get::<_, i64>(0))
                .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        })
        .map_err(backend)?;
    seqs.push(seq);
    let mut checkpoints = transaction
        .prepare_cached("DELETE FROM checkpoints WHERE key >= ?1 AND key < ?2")
        .map_err(backend)?;
    let mut runs = transaction
        .prepare_cached("DELETE FROM runs WHERE seq = ?1")
        .map_err(backend)?;
    for seq in seqs {
        checkpoints
            .execute(params![seq << 32, (seq + 1) << 32])
            .map_err(backend)?;
        runs.execute([seq]).map_err(backend)?;
    }
    Ok(())
}

/// What [`SqliteCheckpointer::vacuum`] did: the database's size before and after, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vacuumed {
    /// The size before, pages left free by deletes included.
    pub bytes_before: u64,
    /// The size after: what the runs kept take.
    pub bytes_after: u64,
}

impl SqliteCheckpointer {
    /// Rewrites the database without the pages that deleted runs left free, so that the file
    /// shrinks: SQLite's `VACUUM`, then a checkpoint of the write-ahead log that truncates it.
    /// Deleting runs (pruning, compacting a thread) frees pages for later writes but never
    /// shrinks the file.
    ///
    /// It copies the whole database and needs it to itself meanwhile: run it when no other
    /// process uses the file.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use trellis::checkpoint::SqliteCheckpointer;
    ///
    /// let store = SqliteCheckpointer::open_in_memory()?;
    /// let vacuumed = store.vacuum().await?;
    /// assert!(vacuumed.bytes_after <= vacuumed.bytes_before);
    /// # Ok::<(), trellis::checkpoint::CheckpointError>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// [`CheckpointError::Backend`] when another connection holds the database past the busy
    /// timeout (5 s), or the disk has no room for the copy; the database is then as it was.
    pub async fn vacuum(&self) -> Result<Vacuumed, CheckpointError> {
        let known = std::sync::Arc::clone(&self.known);
        self.with(move |connection| {
            let size = |connection: &rusqlite::Connection| -> Result<u64, CheckpointError> {
                connection
                    .query_row(
                        "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
                        [],
                        |row| row.get::<_, i64>(0),
                    )
                    .map(|bytes| u64::try_from(bytes).unwrap_or_default())
                    .map_err(backend)
            };
            let bytes_before = size(connection)?;
            connection.execute_batch("VACUUM").map_err(backend)?;
            // The rewritten pages are in the log until it is checkpointed into the file.
            connection
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .map_err(backend)?;
            // Rows are where they were, but nothing is assumed of the file after a rewrite.
            *lock(&known) = None;
            Ok(Vacuumed {
                bytes_before,
                bytes_after: size(connection)?,
            })
        })
        .await
    }

    pub(super) async fn delete_run_rows(
        &self,
        run_ids: &[RunId],
    ) -> Result<Vec<RunId>, CheckpointError> {
        let run_ids = run_ids.to_vec();
        self.with(move |connection| {
            let transaction = write_transaction(connection)?;
            let mut deleted = Vec::new();
            {
                // Checked inside the write transaction: nothing can resume the run or make it
                // a head between the check and the delete.
                let mut deletable = transaction
                    .prepare_cached(
                        "SELECT seq FROM runs r WHERE run_id = ?1
                            AND status IN ('completed', 'failed', 'cancelled')
                            AND NOT EXISTS (SELECT 1 FROM threads t
                                WHERE t.thread_id = r.thread_id AND t.head = r.run_id)",
                    )
                    .map_err(backend)?;
                for run_id in run_ids {
                    let Some(seq) = deletable
                        .query_row([run_id.as_str()], |row| row.get::<_, i64>(0))
                        .optional()
                        .map_err(backend)?
                    else {
                        continue;
                    };
                    super::chain::make_dependents_whole(&transaction, run_id.as_str())?;
                    delete_with_children(&transaction, &run_id, seq)?;
                    deleted.push(run_id);
                }
            }
            transaction.commit().map_err(backend)?;
            Ok(deleted)
        })
        .await
    }

    pub(super) async fn delete_checkpoint_rows_before(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<u64, CheckpointError> {
        let run_id = run_id.clone();
        let id = i64::try_from(id).unwrap_or(i64::MAX);
        self.with(move |connection| {
            let transaction = write_transaction(connection)?;
            // The run row's state may be that of its checkpoint `state_checkpoint`: that one
            // stays whatever `id` says.
            let found: Option<(i64, Option<i64>)> = transaction
                .prepare_cached("SELECT seq, state_checkpoint FROM runs WHERE run_id = ?1")
                .and_then(|mut statement| {
                    statement
                        .query_row([run_id.as_str()], |row| Ok((row.get(0)?, row.get(1)?)))
                        .optional()
                })
                .map_err(backend)?;
            let Some((seq, state_checkpoint)) = found else {
                return Ok(0);
            };
            let below = state_checkpoint
                .map_or(id, |kept| kept.min(id))
                .clamp(0, 1 << 32);
            // The first checkpoint kept may keep the changes since one deleted: whole first.
            super::chain::make_whole_from(&transaction, (seq << 32) + below, run_id.as_str())?;
            let deleted = transaction
                .prepare_cached("DELETE FROM checkpoints WHERE key >= ?1 AND key < ?2")
                .and_then(|mut statement| {
                    statement.execute(params![seq << 32, (seq << 32) + below])
                })
                .map_err(backend)?;
            transaction.commit().map_err(backend)?;
            Ok(deleted as u64)
        })
        .await
    }
}
