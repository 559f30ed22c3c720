//! Delta checkpoints in PostgreSQL: a checkpoint row whose `base` is set keeps in `state` the
//! changes since checkpoint `base` of its run, or of `base_run` (a [`StateDelta`]), and is
//! folded into the whole state as it is read, from the nearest whole row before it (`base`
//! empty).

use std::sync::Arc;

use deadpool_postgres::GenericClient;

use super::rows::column;
use super::{PostgresCheckpointer, backend, big, pool_error};
use crate::checkpoint::{
    Checkpoint, CheckpointError, HasState, Link, StateDelta, Unfolded, corrupt, fold_chain,
    fold_onto, goes_on_from,
};

/// The rows of run `$1` before checkpoint `$2`, from the last whole one (that one first), or
/// from the run's first when it has none (a run on a thread whose first row goes on from the
/// run before).
const CHAIN: &str = "SELECT id, base, state FROM trellis_checkpoints
    WHERE run_id = $1 AND id < $2
        AND id >= COALESCE((SELECT max(id) FROM trellis_checkpoints
            WHERE run_id = $1 AND id < $2 AND base IS NULL), 0)
    ORDER BY id";

/// A whole state being read, with how many deltas were folded to read it.
type Folding<'a> = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = Result<(serde_json::Value, u32), CheckpointError>>
            + Send
            + 'a,
    >,
>;

/// The whole state of checkpoint `id` of `run_id`, which keeps `delta`, with how many deltas
/// were folded to read it; `what` names it in errors. Boxed: a run on a thread reads the
/// state of the run before it the same way.
fn whole_state<'a, C: GenericClient + Sync>(
    client: &'a C,
    run_id: &'a str,
    id: i64,
    delta: StateDelta,
    what: &'a str,
) -> Folding<'a> {
    Box::pin(async move {
        let what = what.to_owned();
        let named = |c: &str| format!("column `{c}` of a checkpoint before {what}");
        let statement = client.prepare_cached(CHAIN).await.map_err(backend)?;
        let rows = client
            .query(&statement, &[&run_id, &id])
            .await
            .map_err(backend)?;
        let mut links = Vec::with_capacity(rows.len() + 1);
        for row in &rows {
            let at: i64 = column(row, 0, &named)?;
            let at = u64::try_from(at).map_err(|e| corrupt(what.clone(), e))?;
            let base: Option<i64> = column(row, 1, &named)?;
            let state: serde_json::Value = column(row, 2, &named)?;
            links.push(match base {
                None => Link::Whole(at, state),
                Some(_) => Link::Delta(
                    at,
                    serde_json::from_value(state).map_err(|e| corrupt(what.clone(), e))?,
                ),
            });
        }
        // The run went on from another's state: that state first, read as any other.
        let mut before = 0;
        if let Some((run, base)) = goes_on_from(&links, &delta) {
            let (state, chain) = state_of(client, run.as_str(), base, &what).await?;
            links.insert(0, Link::Whole(base, state));
            before = chain;
        }
        let (whole, folded) =
            fold_chain(&what, links, u64::try_from(id).unwrap_or_default(), delta)?;
        Ok((whole, before + folded))
    })
}

/// The whole state of checkpoint `id` of `run_id`, with how many deltas were folded to read it.
async fn state_of<C: GenericClient + Sync>(
    client: &C,
    run_id: &str,
    id: u64,
    what: &str,
) -> Result<(serde_json::Value, u32), CheckpointError> {
    let named = |c: &str| format!("column `{c}` of checkpoint {id} of run {run_id}");
    let row = client
        .query_opt(
            "SELECT base, state FROM trellis_checkpoints WHERE run_id = $1 AND id = $2",
            &[&run_id, &big(id)],
        )
        .await
        .map_err(backend)?;
    let Some(row) = row else {
        return Err(corrupt(
            what.to_owned(),
            format!("it goes on from checkpoint {id} of run {run_id}, which is gone"),
        ));
    };
    let base: Option<i64> = column(&row, 0, &named)?;
    let state: serde_json::Value = column(&row, 1, &named)?;
    match base {
        None => Ok((state, 0)),
        Some(_) => {
            let delta = serde_json::from_value(state).map_err(|e| corrupt(what.to_owned(), e))?;
            whole_state(client, run_id, big(id), delta, what).await
        }
    }
}

/// Makes whole every checkpoint of another run that goes on from one of `run_ids`' (a
/// thread's next run keeps its first checkpoint as the changes since the one before's last):
/// what deleting them must do first, in the same transaction.
pub(super) async fn make_dependents_whole<C: GenericClient + Sync>(
    client: &C,
    run_ids: &[&str],
) -> Result<(), CheckpointError> {
    let rows = client
        .query(
            "SELECT run_id, id, state FROM trellis_checkpoints
             WHERE base_run = ANY($1) AND NOT run_id = ANY($1)",
            &[&run_ids],
        )
        .await
        .map_err(backend)?;
    for row in &rows {
        let named = |c: &str| format!("column `{c}` of a checkpoint going on from a deleted run");
        let run_id: String = column(row, 0, &named)?;
        let id: i64 = column(row, 1, &named)?;
        let what = format!("state of checkpoint {id} of run {run_id}");
        let delta = serde_json::from_value(column(row, 2, &named)?)
            .map_err(|e| corrupt(what.clone(), e))?;
        let (whole, _) = whole_state(client, &run_id, id, delta, &what).await?;
        rewrite_whole(client, &run_id, id, &whole).await?;
    }
    Ok(())
}

/// Checkpoint `id` of `run_id`, which kept a delta, now keeps `whole`.
async fn rewrite_whole<C: GenericClient + Sync>(
    client: &C,
    run_id: &str,
    id: i64,
    whole: &serde_json::Value,
) -> Result<(), CheckpointError> {
    client
        .execute(
            "UPDATE trellis_checkpoints SET state = $3, base = NULL, base_run = NULL
             WHERE run_id = $1 AND id = $2",
            &[&run_id, &id, whole],
        )
        .await
        .map_err(backend)?;
    Ok(())
}

impl PostgresCheckpointer {
    /// `unfolded` with its whole state.
    pub(super) async fn fold<T: HasState + RunOf>(
        &self,
        unfolded: Unfolded<T>,
    ) -> Result<T, CheckpointError> {
        let Unfolded { mut value, delta } = unfolded;
        let Some((id, delta)) = delta else {
            return Ok(value);
        };
        let connection = self.pool.get().await.map_err(pool_error)?;
        let run_id = value.run_of().to_owned();
        let what = value.describe();
        let (whole, chain) = whole_state(&connection, &run_id, id, delta, &what).await?;
        *value.state_mut() = Arc::new(whole);
        value.set_chain(chain);
        Ok(value)
    }

    /// Each of `rows`, folded.
    pub(super) async fn fold_all<T: HasState + RunOf>(
        &self,
        rows: impl Iterator<Item = Result<Unfolded<T>, CheckpointError>>,
    ) -> Result<Vec<T>, CheckpointError> {
        let rows = rows.collect::<Result<Vec<_>, _>>()?;
        let mut folded = Vec::with_capacity(rows.len());
        for row in rows {
            folded.push(self.fold(row).await?);
        }
        Ok(folded)
    }

    /// A run's checkpoints, read in order, each folded: a delta onto the state just before
    /// it, without reading its chain again.
    pub(super) async fn fold_in_order(
        &self,
        rows: Vec<Unfolded<Checkpoint>>,
    ) -> Result<Vec<Checkpoint>, CheckpointError> {
        let mut folded: Vec<Checkpoint> = Vec::with_capacity(rows.len());
        for row in rows {
            let checkpoint = match fold_onto(folded.last(), row)? {
                Ok(checkpoint) => checkpoint,
                Err(row) => self.fold(row).await?,
            };
            folded.push(checkpoint);
        }
        Ok(folded)
    }

    /// Deletes the run's checkpoints below `id`, keeping the one its row's state is read from,
    /// and making the first one kept whole first when it keeps the changes since one deleted.
    pub(super) async fn delete_chain_before(
        &self,
        run_id: &str,
        id: u64,
    ) -> Result<u64, CheckpointError> {
        let mut connection = self.pool.get().await.map_err(pool_error)?;
        let transaction = connection.transaction().await.map_err(backend)?;
        let first = transaction
            .query_opt(
                "SELECT c.id, c.base, c.state FROM trellis_checkpoints c
                 JOIN trellis_runs r ON r.run_id = c.run_id
                 WHERE c.run_id = $1 AND c.id >= LEAST($2, COALESCE(r.state_checkpoint, $2))
                 ORDER BY c.id LIMIT 1 FOR UPDATE OF c",
                &[&run_id, &big(id)],
            )
            .await
            .map_err(backend)?;
        if let Some(row) = first {
            let named = |c: &str| format!("column `{c}` of a checkpoint of run {run_id}");
            let kept: i64 = column(&row, 0, &named)?;
            let base: Option<i64> = column(&row, 1, &named)?;
            if base.is_some() {
                let what = format!("state of checkpoint {kept} of run {run_id}");
                let delta = serde_json::from_value(column(&row, 2, &named)?)
                    .map_err(|e| corrupt(what.clone(), e))?;
                let (whole, _) = whole_state(&transaction, run_id, kept, delta, &what).await?;
                rewrite_whole(&transaction, run_id, kept, &whole).await?;
            }
        }
        let deleted = transaction
            .execute(
                "DELETE FROM trellis_checkpoints c USING trellis_runs r
                 WHERE c.run_id = $1 AND r.run_id = $1
                     AND c.id < LEAST($2, COALESCE(r.state_checkpoint, $2))",
                &[&run_id, &big(id)],
            )
            .await
            .map_err(backend)?;
        transaction.commit().await.map_err(backend)?;
        Ok(deleted)
    }
}

/// The run a row read belongs to.
pub(super) trait RunOf {
    fn run_of(&self) -> &str;
}

impl RunOf for Checkpoint {
    fn run_of(&self) -> &str {
        self.run_id.as_str()
    }
}

impl RunOf for crate::checkpoint::RunRecord {
    fn run_of(&self) -> &str {
        self.run_id.as_str()
    }
}
