//! Threads in PostgreSQL: `trellis_threads`, and a thread's runs through the
//! `trellis_runs_thread` index.

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::rows::{column, decode_run, select_run};
use super::{PostgresCheckpointer, big, json};
use crate::checkpoint::{CheckpointError, RunRecord, ThreadRecord, corrupt};
use crate::id::{RunId, ThreadId, Timestamp};

macro_rules! select_thread {
    () => {
        "SELECT thread_id, created_at, updated_at, metadata, head FROM trellis_threads"
    };
}

const CREATE_THREAD: &str = "INSERT INTO trellis_threads
    (thread_id, created_at, updated_at, metadata, head) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (thread_id) DO NOTHING";
const LOAD_THREAD: &str = concat!(select_thread!(), " WHERE thread_id = $1");
const LIST_THREADS: &str = concat!(
    select_thread!(),
    " ORDER BY created_at DESC, thread_id DESC LIMIT $1 OFFSET $2"
);
const SET_METADATA: &str =
    "UPDATE trellis_threads SET metadata = $2, updated_at = $3 WHERE thread_id = $1";
const MOVE_HEAD: &str = "UPDATE trellis_threads SET head = $3, updated_at = $4
    WHERE thread_id = $1 AND head IS NOT DISTINCT FROM $2::text";
const THREAD_RUNS: &str = concat!(
    select_run!(),
    " WHERE r.thread_id = $1 ORDER BY r.created_at DESC, r.run_id DESC LIMIT $2 OFFSET $3"
);

/// The thread, its runs and their children (`<run>/…`) in one statement; the checkpoints go
/// with their runs (`ON DELETE CASCADE`). `starts_with`, not a range: the column's collation
/// need not order bytes.
const DELETE_THREAD: &str = "WITH thread AS (
        DELETE FROM trellis_threads WHERE thread_id = $1 RETURNING thread_id
    ), runs AS (
        DELETE FROM trellis_runs r USING trellis_runs t
        WHERE t.thread_id = $1
            AND (r.run_id = t.run_id OR starts_with(r.run_id, t.run_id || '/'))
        RETURNING r.run_id
    )
    SELECT (SELECT count(*) FROM thread), (SELECT count(*) FROM runs)";

fn decode_thread(row: &Row) -> Result<ThreadRecord, CheckpointError> {
    let thread_id: String = column(row, 0, &|c| format!("column `{c}` of a thread"))?;
    let what = |c: &str| format!("column `{c}` of thread {thread_id}");
    Ok(ThreadRecord {
        thread_id: ThreadId::parse(&thread_id).map_err(|e| corrupt(what("thread_id"), e))?,
        created_at: Timestamp::from_datetime(column(row, 1, &what)?),
        updated_at: Timestamp::from_datetime(column(row, 2, &what)?),
        metadata: serde_json::from_value(column(row, 3, &what)?)
            .map_err(|e| corrupt(what("metadata"), e))?,
        head: column::<Option<String>>(row, 4, &what)?.map(RunId::from),
    })
}

impl PostgresCheckpointer {
    pub(super) async fn create_thread_row(
        &self,
        thread: &ThreadRecord,
    ) -> Result<bool, CheckpointError> {
        let metadata = json("thread metadata", &thread.metadata)?;
        let params: [&(dyn ToSql + Sync); 5] = [
            &thread.thread_id.as_str(),
            &thread.created_at.datetime(),
            &thread.updated_at.datetime(),
            &metadata,
            &thread.head.as_ref().map(RunId::as_str),
        ];
        Ok(self.execute(CREATE_THREAD, &params).await? == 1)
    }

    pub(super) async fn load_thread_row(
        &self,
        thread_id: &ThreadId,
    ) -> Result<Option<ThreadRecord>, CheckpointError> {
        let rows = self.query(LOAD_THREAD, &[&thread_id.as_str()]).await?;
        rows.first().map(decode_thread).transpose()
    }

    pub(super) async fn list_thread_rows(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ThreadRecord>, CheckpointError> {
        let (limit, offset) = (big(limit as u64), big(offset as u64));
        let rows = self.query(LIST_THREADS, &[&limit, &offset]).await?;
        rows.iter().map(decode_thread).collect()
    }

    pub(super) async fn set_thread_metadata_row(
        &self,
        thread_id: &ThreadId,
        metadata: &serde_json::Map<String, serde_json::Value>,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        let metadata = json("thread metadata", metadata)?;
        let params: [&(dyn ToSql + Sync); 3] = [&thread_id.as_str(), &metadata, &now.datetime()];
        Ok(self.execute(SET_METADATA, &params).await? == 1)
    }

    pub(super) async fn move_thread_head_row(
        &self,
        thread_id: &ThreadId,
        expected: Option<&RunId>,
        head: &RunId,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        let params: [&(dyn ToSql + Sync); 4] = [
            &thread_id.as_str(),
            &expected.map(RunId::as_str),
            &head.as_str(),
            &now.datetime(),
        ];
        Ok(self.execute(MOVE_HEAD, &params).await? == 1)
    }

    pub(super) async fn thread_run_rows(
        &self,
        thread_id: &ThreadId,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError> {
        let (limit, offset) = (big(limit as u64), big(offset as u64));
        let rows = self
            .query(THREAD_RUNS, &[&thread_id.as_str(), &limit, &offset])
            .await?;
        self.fold_all(rows.iter().map(decode_run)).await
    }

    pub(super) async fn delete_thread_rows(
        &self,
        thread_id: &ThreadId,
    ) -> Result<bool, CheckpointError> {
        let rows = self.query(DELETE_THREAD, &[&thread_id.as_str()]).await?;
        let deleted: i64 = match rows.first() {
            Some(row) => column(row, 0, &|c| format!("column `{c}` of a deleted thread"))?,
            None => 0,
        };
        Ok(deleted == 1)
    }
}
