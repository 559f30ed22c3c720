//! Deleting from PostgreSQL: ended runs with their checkpoints and child runs, and a run's
//! older checkpoints (retention and thread compaction).

use tokio_postgres::types::ToSql;

use super::PostgresCheckpointer;
use super::rows::column;
use crate::checkpoint::CheckpointError;
use crate::id::RunId;

/// The ended runs among `$1` that are not their thread's head, then their children
/// (`<run>/…`, matched on the id's first segment so that one hash join finds them all); the
/// checkpoints go with their runs (`ON DELETE CASCADE`). The status is checked on the row the
/// delete locks: a run resumed meanwhile is kept. (A data-modifying `WITH` runs to completion
/// whether or not the query reads it.)
const DELETE_RUNS: &str = "WITH gone AS (
        DELETE FROM trellis_runs r
        WHERE r.run_id = ANY($1)
            AND r.status IN ('completed', 'failed', 'cancelled')
            AND NOT EXISTS (SELECT 1 FROM trellis_threads t
                WHERE t.thread_id = r.thread_id AND t.head = r.run_id)
        RETURNING r.run_id
    ), children AS (
        DELETE FROM trellis_runs c USING gone g
        WHERE position('/' in c.run_id) > 0 AND split_part(c.run_id, '/', 1) = g.run_id
        RETURNING c.run_id
    )
    SELECT run_id FROM gone";

impl PostgresCheckpointer {
    pub(super) async fn delete_run_rows(
        &self,
        run_ids: &[RunId],
    ) -> Result<Vec<RunId>, CheckpointError> {
        let ids: Vec<&str> = run_ids.iter().map(RunId::as_str).collect();
        let mut connection = self.pool.get().await.map_err(super::pool_error)?;
        let transaction = connection.transaction().await.map_err(super::backend)?;
        // What goes on from a run about to go is made whole first (harmless for one kept).
        super::chain::make_dependents_whole(&transaction, &ids).await?;
        let rows = transaction
            .query(DELETE_RUNS, &[&ids as &(dyn ToSql + Sync)])
            .await
            .map_err(super::backend)?;
        transaction.commit().await.map_err(super::backend)?;
        let mut gone = std::collections::HashSet::with_capacity(rows.len());
        for row in &rows {
            let run_id: String = column(row, 0, &|c| format!("column `{c}` of a deleted run"))?;
            gone.insert(RunId::from(run_id));
        }
        // In the order given, as the other stores answer.
        Ok(run_ids
            .iter()
            .filter(|id| gone.contains(id))
            .cloned()
            .collect())
    }

    pub(super) async fn delete_checkpoint_rows_before(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<u64, CheckpointError> {
        self.delete_chain_before(run_id.as_str(), id).await
    }
}
