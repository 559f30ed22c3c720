//! SQLite's write lock taken at once, and what a connection knows of a run between its steps.

use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;

use super::backend;
use super::rows::Stored;
use crate::checkpoint::CheckpointError;
use crate::id::RunId;

/// A run row as this connection last saw it, and the file's data version just after: while
/// the version is the same, nothing has written the file since, by this connection or any
/// other (SQLite's `SQLITE_FCNTL_DATA_VERSION`, which a new transaction brings up to date
/// with other connections' commits).
///
/// A run's steps come one after another, each reading the row its fence compares: with this,
/// a step whose row cannot have changed skips that read and the lease's parsing (~7,400
/// instructions; reading the version costs ~100): a step of the `loop_ckpt` bench under
/// `Durability::Normal` went from ~49,400 instructions to ~42,200. A step after anything
/// else — another run's step, a claim, a take-over, another process's commit — reads the row
/// as before.
#[derive(Debug)]
pub(super) struct KnownRow {
    pub(super) run_id: RunId,
    pub(super) stored: Stored,
    pub(super) data_version: u32,
}

/// The `Mutex`'s value, even if a thread panicked holding it (nothing it guards is left
/// half-written: a connection rolls back, a cache entry is replaced whole).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A transaction that takes SQLite's write lock at once: a read-then-write (a claim, a fenced
/// step) must not read a row another process is about to change. Waits up to `busy_timeout`;
/// rolled back when dropped uncommitted.
///
/// `BEGIN IMMEDIATE` and `COMMIT` are cached statements: rusqlite's `Transaction` parses both
/// anew every time (`execute_batch`), which cost a step ~15,000 instructions.
pub(super) struct WriteTransaction<'c> {
    connection: &'c Connection,
    committed: bool,
}

pub(super) fn write_transaction(
    connection: &mut Connection,
) -> Result<WriteTransaction<'_>, CheckpointError> {
    connection
        .prepare_cached("BEGIN IMMEDIATE")
        .and_then(|mut begin| begin.execute([]))
        .map_err(backend)?;
    Ok(WriteTransaction {
        connection,
        committed: false,
    })
}

/// The main database's data version: it changes with every commit to the file, by this
/// connection or another (seen by the next transaction). `None` when SQLite cannot say, which
/// callers take as "changed".
pub(super) fn data_version(connection: &Connection) -> Option<u32> {
    let mut version = 0;
    connection
        .file_control(
            rusqlite::DEFAULT_NAME,
            rusqlite::FileControl::DataVersion(&mut version),
        )
        .ok()
        .map(|()| version)
}

impl WriteTransaction<'_> {
    pub(super) fn commit(mut self) -> Result<(), rusqlite::Error> {
        self.connection.prepare_cached("COMMIT")?.execute([])?;
        self.committed = true;
        Ok(())
    }
}

impl std::ops::Deref for WriteTransaction<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.connection
    }
}

impl Drop for WriteTransaction<'_> {
    fn drop(&mut self) {
        if !self.committed && !self.connection.is_autocommit() {
            // Nothing to report it to: the caller already has the error that stopped the write.
            let _ = self.connection.execute_batch("ROLLBACK");
        }
    }
}
