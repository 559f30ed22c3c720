//! Threads in SQLite: the `threads` table, and a thread's runs through the `runs_thread` index.

use rusqlite::{Row, params};

use super::prune::delete_with_children;
use super::rows::{SELECT_RUN, decode_run};
use super::{SqliteCheckpointer, backend, cached_row, json, write_transaction};
use crate::checkpoint::{CheckpointError, RunRecord, ThreadRecord, corrupt};
use crate::id::{RunId, ThreadId, Timestamp};

const SELECT_THREAD: &str = "SELECT thread_id, created_at, updated_at, metadata, head FROM threads";

/// After `SELECT_RUN`: a thread's runs, newest first, read in the order of the `runs_thread`
/// index (no sort, and no other run read).
const THREAD_RUNS: &str =
    " WHERE r.thread_id = ?1 ORDER BY r.created_us DESC, r.run_id DESC LIMIT ?2 OFFSET ?3";

fn decode_thread(row: &Row<'_>) -> rusqlite::Result<Result<ThreadRecord, CheckpointError>> {
    let [thread_id, created_at, updated_at, metadata]: [String; 4] =
        [row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?];
    let head: Option<String> = row.get(4)?;
    Ok((|| {
        let what = |column: &str| format!("column `{column}` of thread {thread_id}");
        let time =
            |column: &str, text: &str| Timestamp::parse(text).map_err(|e| corrupt(what(column), e));
        Ok(ThreadRecord {
            thread_id: ThreadId::parse(&thread_id).map_err(|e| corrupt(what("thread_id"), e))?,
            created_at: time("created_at", &created_at)?,
            updated_at: time("updated_at", &updated_at)?,
            metadata: serde_json::from_str(&metadata).map_err(|e| corrupt(what("metadata"), e))?,
            head: head.map(RunId::from),
        })
    })())
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl SqliteCheckpointer {
    pub(super) async fn create_thread_row(
        &self,
        thread: &ThreadRecord,
    ) -> Result<bool, CheckpointError> {
        let metadata = json("thread metadata", &thread.metadata)?;
        let thread = thread.clone();
        self.with(move |connection| {
            let created = connection
                .prepare_cached(
                    "INSERT INTO threads (thread_id, created_at, created_us, updated_at, metadata, \
                     head) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (thread_id) DO NOTHING",
                )
                .and_then(|mut statement| {
                    statement.execute(params![
                        thread.thread_id.as_str(),
                        thread.created_at.to_string(),
                        thread.created_at.unix_micros(),
                        thread.updated_at.to_string(),
                        metadata,
                        thread.head.as_ref().map(RunId::as_str),
                    ])
                })
                .map_err(backend)?;
            Ok(created == 1)
        })
        .await
    }

    pub(super) async fn load_thread_row(
        &self,
        thread_id: &ThreadId,
    ) -> Result<Option<ThreadRecord>, CheckpointError> {
        let thread_id = thread_id.clone();
        self.with(move |connection| {
            cached_row(
                connection,
                &format!("{SELECT_THREAD} WHERE thread_id = ?1"),
                [thread_id.as_str()],
                decode_thread,
            )
            .map_err(backend)?
            .transpose()
        })
        .await
    }

    pub(super) async fn list_thread_rows(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ThreadRecord>, CheckpointError> {
        self.with(move |connection| {
            let mut statement = connection
                .prepare_cached(&format!(
                    "{SELECT_THREAD} ORDER BY created_us DESC, thread_id DESC LIMIT ?1 OFFSET ?2"
                ))
                .map_err(backend)?;
            let rows = statement
                .query_map(params![count(limit), count(offset)], decode_thread)
                .map_err(backend)?;
            rows.map(|row| row.map_err(backend)?).collect()
        })
        .await
    }

    pub(super) async fn set_thread_metadata_row(
        &self,
        thread_id: &ThreadId,
        metadata: &serde_json::Map<String, serde_json::Value>,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        let metadata = json("thread metadata", metadata)?;
        let thread_id = thread_id.clone();
        self.with(move |connection| {
            let changed = connection
                .prepare_cached(
                    "UPDATE threads SET metadata = ?2, updated_at = ?3 WHERE thread_id = ?1",
                )
                .and_then(|mut statement| {
                    statement.execute(params![thread_id.as_str(), metadata, now.to_string()])
                })
                .map_err(backend)?;
            Ok(changed == 1)
        })
        .await
    }

    pub(super) async fn move_thread_head_row(
        &self,
        thread_id: &ThreadId,
        expected: Option<&RunId>,
        head: &RunId,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        let (thread_id, expected, head) = (thread_id.clone(), expected.cloned(), head.clone());
        self.with(move |connection| {
            let changed = connection
                .prepare_cached(
                    "UPDATE threads SET head = ?3, updated_at = ?4
                     WHERE thread_id = ?1 AND head IS ?2",
                )
                .and_then(|mut statement| {
                    statement.execute(params![
                        thread_id.as_str(),
                        expected.as_ref().map(RunId::as_str),
                        head.as_str(),
                        now.to_string(),
                    ])
                })
                .map_err(backend)?;
            Ok(changed == 1)
        })
        .await
    }

    pub(super) async fn thread_run_rows(
        &self,
        thread_id: &ThreadId,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError> {
        let thread_id = thread_id.clone();
        self.with(move |connection| {
            let mut statement = connection
                .prepare_cached(&format!("{SELECT_RUN}{THREAD_RUNS}"))
                .map_err(backend)?;
            let rows = statement
                .query_map(
                    params![thread_id.as_str(), count(limit), count(offset)],
                    decode_run,
                )
                .map_err(backend)?;
            let rows = rows
                .map(|row| row.map_err(backend)?)
                .collect::<Result<Vec<_>, _>>()?;
            rows.into_iter()
                .map(|row| super::chain::fold(connection, row))
                .collect()
        })
        .await
    }

    pub(super) async fn delete_thread_rows(
        &self,
        thread_id: &ThreadId,
    ) -> Result<bool, CheckpointError> {
        let thread_id = thread_id.clone();
        self.with(move |connection| {
            let transaction = write_transaction(connection)?;
            let deleted = transaction
                .prepare_cached("DELETE FROM threads WHERE thread_id = ?1")
                .and_then(|mut statement| statement.execute([thread_id.as_str()]))
                .map_err(backend)?;
            if deleted == 0 {
                return Ok(false);
            }
            // The thread's runs (through `runs_thread`), each with its children.
            let found = transaction
                .prepare_cached("SELECT run_id, seq FROM runs WHERE thread_id = ?1")
                .and_then(|mut runs| {
                    runs.query_map([thread_id.as_str()], |row| {
                        Ok((RunId::from(row.get::<_, String>(0)?), row.get::<_, i64>(1)?))
                    })
                    .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
                })
                .map_err(backend)?;
            for (run_id, seq) in found {
                delete_with_children(&transaction, &run_id, seq)?;
            }
            transaction.commit().map_err(backend)?;
            Ok(true)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;

    #[test]
    fn a_thread_s_newest_run_is_read_from_its_index_not_found_among_all_runs() {
        let mut connection = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut connection).unwrap();
        let mut statement = connection
            .prepare(&format!("EXPLAIN QUERY PLAN {SELECT_RUN}{THREAD_RUNS}"))
            .unwrap();
        let plan = statement
            .query_map(params!["t", 1, 0], |row| row.get::<_, String>(3))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
            .join("\n");
        assert!(
            plan.contains("SEARCH r USING INDEX runs_thread (thread_id=?)"),
            "{plan}"
        );
        assert!(!plan.contains("TEMP B-TREE"), "no sort: {plan}");
        assert!(
            !plan.contains("SCAN r"),
            "no run read but the thread's: {plan}"
        );
    }
}
