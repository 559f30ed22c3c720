//! Rows: run records and checkpoints as bind parameters, the statements that write and read
//! them (each one round trip), and rows decoded back (a malformed one is a `Corrupt` error).

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::{big, json};
use crate::checkpoint::{
    Checkpoint, CheckpointColumns, CheckpointError, Detail, RunRecord, RunStatus, Unfolded,
    corrupt, parent_of,
};
use crate::id::{RunId, ThreadId, Timestamp};
use crate::name::Name;

/// A run record as bind parameters ($1–$17 of `UPSERT_RUN` and friends).
pub(super) struct RunParams {
    pub(super) run_id: String,
    pub(super) graph: String,
    pub(super) status: &'static str,
    pub(super) created_at: time::OffsetDateTime,
    pub(super) updated_at: time::OffsetDateTime,
    pub(super) last_node: Option<String>,
    pub(super) steps: i64,
    pub(super) state: Option<serde_json::Value>,
    pub(super) state_checkpoint: Option<i64>,
    pub(super) interrupts: serde_json::Value,
    pub(super) error: Option<String>,
    pub(super) transitions: i64,
    pub(super) owner: Option<String>,
    pub(super) lease_until: Option<time::OffsetDateTime>,
    pub(super) parent_run: Option<String>,
    pub(super) parent_checkpoint: Option<i64>,
    pub(super) thread_id: Option<String>,
    pub(super) metadata: Option<serde_json::Value>,
}

impl RunParams {
    /// With `same_as`, the state is not written again but read from that checkpoint.
    pub(super) fn of(run: &RunRecord, same_as: Option<u64>) -> Result<Self, CheckpointError> {
        Ok(RunParams {
            run_id: run.run_id.to_string(),
            graph: run.graph.as_str().to_owned(),
            status: run.status.as_str(),
            created_at: run.created_at.datetime(),
            updated_at: run.updated_at.datetime(),
            last_node: run.last_node.as_deref().map(str::to_owned),
            steps: big(run.steps),
            state: match same_as {
                Some(_) => None,
                None => Some((*run.state).clone()),
            },
            state_checkpoint: same_as.map(big),
            interrupts: json("run interrupts", &run.interrupts)?,
            error: run.error.clone(),
            transitions: big(run.transitions),
            owner: run.owner.as_deref().map(str::to_owned),
            lease_until: run.lease_until.map(Timestamp::datetime),
            parent_run: run.parent.as_ref().map(|p| p.run_id.to_string()),
            parent_checkpoint: run.parent.as_ref().map(|p| big(p.checkpoint)),
            thread_id: run.thread.as_ref().map(|t| t.as_str().to_owned()),
            metadata: (!run.metadata.is_empty())
                .then(|| serde_json::Value::Object(run.metadata.clone())),
        })
    }

    /// $1–$18, then `more` ($19…).
    pub(super) fn params<'a>(
        &'a self,
        more: &[&'a (dyn ToSql + Sync)],
    ) -> Vec<&'a (dyn ToSql + Sync)> {
        let mut params: Vec<&'a (dyn ToSql + Sync)> = vec![
            &self.run_id,
            &self.graph,
            &self.status,
            &self.created_at,
            &self.updated_at,
            &self.last_node,
            &self.steps,
            &self.state,
            &self.state_checkpoint,
            &self.interrupts,
            &self.error,
            &self.transitions,
            &self.owner,
            &self.lease_until,
            &self.parent_run,
            &self.parent_checkpoint,
            &self.thread_id,
            &self.metadata,
        ];
        params.extend_from_slice(more);
        params
    }
}

/// The columns of `trellis_runs` in `RunParams::params` order, and their new values.
macro_rules! run_columns {
    () => {
        "run_id, graph, status, created_at, updated_at, last_node, steps, state, state_checkpoint,
         interrupts, error, transitions, owner, lease_until, parent_run, parent_checkpoint,
         thread_id, metadata"
    };
}
/// A run's thread and metadata never change once written: the update keeps the stored ones
/// (and so types `$17` and `$18`, which every statement taking these parameters must).
macro_rules! run_updates {
    () => {
        "graph = $2, status = $3, updated_at = $5, last_node = $6, steps = $7, state = $8,
         state_checkpoint = $9, interrupts = $10, error = $11, transitions = $12, owner = $13,
         lease_until = $14, parent_run = $15, parent_checkpoint = $16,
         thread_id = COALESCE(trellis_runs.thread_id, $17),
         metadata = COALESCE(trellis_runs.metadata, $18::jsonb)"
    };
}
macro_rules! upsert_run {
    () => {
        concat!(
            "INSERT INTO trellis_runs (",
            run_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                $16, $17, $18)
             ON CONFLICT (run_id) DO UPDATE SET ",
            run_updates!()
        )
    };
}

// `$4` (created_at) never changes; it is only typed in the update below, so that it takes the
// same parameters as the upsert.
pub(super) const CLAIM_RUN: &str = concat!(
    "UPDATE trellis_runs SET ",
    run_updates!(),
    " WHERE run_id = $1 AND status = $19 AND $4::timestamptz IS NOT NULL"
);

pub(super) const TAKE_OVER: &str = "UPDATE trellis_runs
    SET status = $2, updated_at = $3, error = $4, owner = $5, lease_until = $6
    WHERE run_id = $1 AND status = 'running' AND owner IS NOT DISTINCT FROM $7::text";

/// Record and checkpoint in one statement (so in one transaction, in one round trip); the
/// record only if the stored one (if any) has the same owner — otherwise no row is inserted,
/// and the step was fenced.
pub(super) const SAVE_STEP: &str = concat!(
    "WITH run AS (",
    upsert_run!(),
    " WHERE trellis_runs.owner IS NOT DISTINCT FROM excluded.owner RETURNING run_id)
    INSERT INTO trellis_checkpoints
        (run_id, id, step, label, created_at, state, detail, base, base_run)
    SELECT run_id, $19, $20, $21, $22, $23, $24, $25, $26 FROM run
    ON CONFLICT (run_id, id) DO UPDATE SET step = excluded.step, label = excluded.label,
        created_at = excluded.created_at, state = excluded.state, detail = excluded.detail,
        base = excluded.base, base_run = excluded.base_run"
);

/// The oldest ready run of a graph, claimed; others claiming at the same moment skip it.
pub(super) const CLAIM_NEXT: &str = "UPDATE trellis_runs SET owner = $2, lease_until = $4
    WHERE run_id = (
        SELECT run_id FROM trellis_runs
        WHERE graph = $1 AND status = 'running'
            AND (owner IS NULL OR lease_until IS NULL OR lease_until < $3)
        ORDER BY created_at, run_id
        LIMIT 1
        FOR UPDATE SKIP LOCKED)
    RETURNING run_id";

pub(super) const HELD_RUNS: &str = "SELECT run_id, owner FROM trellis_runs
    WHERE graph = $1 AND status = 'running' AND owner IS NOT NULL
    ORDER BY created_at, run_id";

pub(super) const RENEW_LEASE: &str = "UPDATE trellis_runs SET lease_until = $3
    WHERE run_id = $1 AND owner = $2 AND status = 'running'";

/// A run's state is its own column, or (written once per step) its checkpoint's.
macro_rules! select_run {
    () => {
        "SELECT r.run_id, r.graph, r.status, r.created_at, r.updated_at, r.last_node,
            COALESCE(r.state, c.state), r.interrupts, r.error, r.steps, r.transitions, r.owner,
            r.lease_until, r.parent_run, r.parent_checkpoint, r.thread_id, r.metadata,
            CASE WHEN r.state IS NULL THEN c.id END, CASE WHEN r.state IS NULL THEN c.base END
        FROM trellis_runs r
        LEFT JOIN trellis_checkpoints c ON c.run_id = r.run_id AND c.id = r.state_checkpoint"
    };
}

pub(super) use select_run;

pub(super) const LOAD_RUN: &str = concat!(select_run!(), " WHERE r.run_id = $1");
pub(super) const LIST_RUNS: &str = concat!(
    select_run!(),
    " ORDER BY r.created_at DESC, r.run_id DESC LIMIT $1 OFFSET $2"
);

macro_rules! select_checkpoint {
    () => {
        "SELECT run_id, id, step, label, created_at, state, detail, base FROM trellis_checkpoints"
    };
}
pub(super) const LIST_CHECKPOINTS: &str =
    concat!(select_checkpoint!(), " WHERE run_id = $1 ORDER BY id");
pub(super) const CHECKPOINT: &str = concat!(select_checkpoint!(), " WHERE run_id = $1 AND id = $2");
pub(super) const LATEST_CHECKPOINT: &str = concat!(
    select_checkpoint!(),
    " WHERE run_id = $1 ORDER BY id DESC LIMIT 1"
);

/// A checkpoint as bind parameters.
pub(super) struct CheckpointParams {
    pub(super) id: i64,
    pub(super) step: i64,
    pub(super) label: std::borrow::Cow<'static, str>,
    pub(super) created_at: time::OffsetDateTime,
    /// The whole state, or (with `base`) the changes since checkpoint `base` (a `StateDelta`).
    pub(super) state: serde_json::Value,
    pub(super) base: Option<i64>,
    pub(super) base_run: Option<String>,
    pub(super) detail: serde_json::Value,
}

impl CheckpointParams {
    pub(super) fn of(checkpoint: &Checkpoint) -> Result<Self, CheckpointError> {
        Ok(CheckpointParams {
            id: big(checkpoint.id),
            step: big(checkpoint.step),
            label: checkpoint.label.text(),
            created_at: checkpoint.created_at.datetime(),
            state: match &checkpoint.delta {
                Some(delta) => json("checkpoint delta", &**delta)?,
                None => (*checkpoint.state).clone(),
            },
            base: checkpoint.delta.as_ref().map(|delta| big(delta.base)),
            base_run: checkpoint
                .delta
                .as_ref()
                .and_then(|delta| delta.run.as_ref().map(|run| run.as_str().to_owned())),
            detail: json("checkpoint detail", &Detail::of(checkpoint))?,
        })
    }
}

/// Reads column `index` of a row of `what`, a malformed value being a `Corrupt` error.
pub(super) fn column<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    index: usize,
    what: &dyn Fn(&str) -> String,
) -> Result<T, CheckpointError> {
    row.try_get(index)
        .map_err(|e| corrupt(what(row.columns()[index].name()), e))
}

/// A run row, decoded; a state read from a delta checkpoint is folded by
/// [`fold`](super::PostgresCheckpointer::fold).
pub(super) fn decode_run(row: &Row) -> Result<Unfolded<RunRecord>, CheckpointError> {
    let run_id: String = column(row, 0, &|c| format!("column `{c}` of a run"))?;
    let what = |c: &str| format!("column `{c}` of run {run_id}");
    let status: String = column(row, 2, &what)?;
    let Some(status) = RunStatus::parse(&status) else {
        return Err(corrupt(
            what("status"),
            format!("unknown status {status:?}"),
        ));
    };
    let state: Option<serde_json::Value> = column(row, 6, &what)?;
    let steps: i64 = column(row, 9, &what)?;
    let transitions: i64 = column(row, 10, &what)?;
    let interrupts: serde_json::Value = column(row, 7, &what)?;
    let state_id: Option<i64> = column(row, 17, &what)?;
    let state_base: Option<i64> = column(row, 18, &what)?;
    let state =
        state.ok_or_else(|| corrupt(what("state"), "no state, and no checkpoint holding it"))?;
    let (state, delta) = match (state_id, state_base) {
        (Some(id), Some(_)) => {
            let delta = serde_json::from_value(state).map_err(|e| corrupt(what("state"), e))?;
            (std::sync::Arc::default(), Some((id, delta)))
        }
        _ => (std::sync::Arc::new(state), None),
    };
    let value = RunRecord {
        graph: column::<String>(row, 1, &what)?.into(),
        status,
        created_at: Timestamp::from_datetime(column(row, 3, &what)?),
        updated_at: Timestamp::from_datetime(column(row, 4, &what)?),
        last_node: column::<Option<String>>(row, 5, &what)?.map(Name::from),
        steps: u64::try_from(steps).map_err(|e| corrupt(what("steps"), e))?,
        state,
        interrupts: serde_json::from_value(interrupts)
            .map_err(|e| corrupt(what("interrupts"), e))?,
        error: column(row, 8, &what)?,
        transitions: u64::try_from(transitions).map_err(|e| corrupt(what("transitions"), e))?,
        owner: column::<Option<String>>(row, 11, &what)?.map(Name::from),
        lease_until: column::<Option<time::OffsetDateTime>>(row, 12, &what)?
            .map(Timestamp::from_datetime),
        parent: parent_of(column(row, 13, &what)?, column(row, 14, &what)?, &what)?,
        thread: column::<Option<String>>(row, 15, &what)?
            .map(|t| ThreadId::parse(&t).map_err(|e| corrupt(what("thread_id"), e)))
            .transpose()?,
        metadata: match column::<Option<serde_json::Value>>(row, 16, &what)? {
            Some(serde_json::Value::Object(metadata)) => metadata,
            Some(other) => {
                return Err(corrupt(what("metadata"), format!("not an object: {other}")));
            }
            None => crate::thread::Metadata::new(),
        },
        run_id: RunId::from(run_id.clone()),
    };
    Ok(Unfolded { value, delta })
}

/// A checkpoint row, decoded; a delta's state is folded by
/// [`fold`](super::PostgresCheckpointer::fold).
pub(super) fn decode_checkpoint(row: &Row) -> Result<Unfolded<Checkpoint>, CheckpointError> {
    let run_id: String = column(row, 0, &|c| format!("column `{c}` of a checkpoint"))?;
    let id: i64 = column(row, 1, &|c| {
        format!("column `{c}` of a checkpoint of run {run_id}")
    })?;
    let what = |c: &str| format!("column `{c}` of checkpoint {id} of run {run_id}");
    let step: i64 = column(row, 2, &what)?;
    let label: String = column(row, 3, &what)?;
    let detail: Detail<'static> =
        serde_json::from_value(column(row, 6, &what)?).map_err(|e| corrupt(what("detail"), e))?;
    let state: serde_json::Value = column(row, 5, &what)?;
    let base: Option<i64> = column(row, 7, &what)?;
    let (state, delta) = match base {
        Some(_) => {
            let delta = serde_json::from_value(state).map_err(|e| corrupt(what("state"), e))?;
            (serde_json::Value::Null, Some((id, delta)))
        }
        None => (state, None),
    };
    let value = detail
        .into_checkpoint(CheckpointColumns {
            id: u64::try_from(id).map_err(|e| corrupt(what("id"), e))?,
            run_id: RunId::from(run_id.clone()),
            step: u64::try_from(step).map_err(|e| corrupt(what("step"), e))?,
            label: label.parse().map_err(|e| corrupt(what("label"), e))?,
            state,
            created_at: Timestamp::from_datetime(column(row, 4, &what)?),
            shape: None,
        })
        .map_err(|reason| corrupt(what("detail"), reason))?;
    Ok(Unfolded { value, delta })
}
