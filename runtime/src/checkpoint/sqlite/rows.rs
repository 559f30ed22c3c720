//! Rows: run records and checkpoints as the columns SQLite stores, the statements that write
//! and read them, and rows decoded back (a malformed one is a `Corrupt` error, not a panic).

use std::borrow::Cow;
use std::sync::Arc;

use rusqlite::{Connection, Row, params};

use super::{backend, json};
use crate::checkpoint::{
    Checkpoint, CheckpointColumns, CheckpointError, Detail, RunRecord, RunStatus, Shape, Unfolded,
    corrupt, parent_of,
};
use crate::id::{RunId, ThreadId, Timestamp};
use crate::name::Name;

/// The columns of a run record, ready to bind.
pub(super) struct RunRow {
    pub(super) run_id: String,
    pub(super) graph: String,
    pub(super) status: &'static str,
    pub(super) created_at: String,
    pub(super) created_us: i64,
    pub(super) updated_at: String,
    pub(super) last_node: Option<String>,
    pub(super) steps: i64,
    /// `None` when the state is that of checkpoint `state_checkpoint` (written once per step).
    pub(super) state: Option<String>,
    pub(super) state_checkpoint: Option<i64>,
    pub(super) interrupts: String,
    pub(super) error: Option<String>,
    pub(super) transitions: i64,
    pub(super) owner: Option<String>,
    pub(super) lease_until: Option<String>,
    pub(super) parent_run: Option<String>,
    pub(super) parent_checkpoint: Option<i64>,
    pub(super) thread_id: Option<String>,
    /// `None` for no metadata.
    pub(super) metadata: Option<String>,
}

/// The run's columns; with `same_as`, the state is not written again but read from that
/// checkpoint, which holds the same state.
pub(super) fn run_row(run: &RunRecord, same_as: Option<i64>) -> Result<RunRow, CheckpointError> {
    let state = match same_as {
        Some(_) => None,
        None => Some(json("run state", &run.state)?),
    };
    Ok(RunRow {
        run_id: run.run_id.to_string(),
        graph: run.graph.as_str().to_owned(),
        status: run.status.as_str(),
        created_at: run.created_at.to_string(),
        created_us: run.created_at.unix_micros(),
        updated_at: run.updated_at.to_string(),
        last_node: run.last_node.as_deref().map(str::to_owned),
        steps: i64::try_from(run.steps).unwrap_or(i64::MAX),
        state,
        state_checkpoint: same_as,
        interrupts: json("run interrupts", &run.interrupts)?,
        error: run.error.clone(),
        transitions: i64::try_from(run.transitions).unwrap_or(i64::MAX),
        owner: run.owner.as_deref().map(str::to_owned),
        lease_until: run.lease_until.map(|t| t.to_string()),
        parent_run: run.parent.as_ref().map(|p| p.run_id.to_string()),
        parent_checkpoint: run
            .parent
            .as_ref()
            .map(|p| i64::try_from(p.checkpoint).unwrap_or(i64::MAX)),
        thread_id: run.thread.as_ref().map(|t| t.as_str().to_owned()),
        metadata: if run.metadata.is_empty() {
            None
        } else {
            Some(json("run metadata", &run.metadata)?)
        },
    })
}

/// A new row takes the next run number (`seq`, which keys its checkpoints); a write to an
/// existing row keeps the row's own (the update leaves `seq` out), and its thread, which never
/// changes.
pub(super) const UPSERT_RUN: &str =
    "INSERT INTO runs (run_id, graph, status, created_at, created_us,
        updated_at, last_node, steps, state, state_checkpoint, interrupts, error, transitions,
        owner, lease_until, parent_run, parent_checkpoint, thread_id, metadata, seq)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
        ?19, (SELECT COALESCE(max(seq), 0) + 1 FROM runs))
    ON CONFLICT (run_id) DO UPDATE SET graph = excluded.graph, status = excluded.status,
        updated_at = excluded.updated_at, last_node = excluded.last_node, steps = excluded.steps,
        state = excluded.state, state_checkpoint = excluded.state_checkpoint,
        interrupts = excluded.interrupts, error = excluded.error,
        transitions = excluded.transitions, owner = excluded.owner,
        lease_until = excluded.lease_until, parent_run = excluded.parent_run,
        parent_checkpoint = excluded.parent_checkpoint, metadata = excluded.metadata";

pub(super) fn upsert_run(connection: &Connection, row: &RunRow) -> Result<(), CheckpointError> {
    connection
        .prepare_cached(UPSERT_RUN)
        .and_then(|mut statement| {
            statement.execute(params![
                row.run_id,
                row.graph,
                row.status,
                row.created_at,
                row.created_us,
                row.updated_at,
                row.last_node,
                row.steps,
                row.state,
                row.state_checkpoint,
                row.interrupts,
                row.error,
                row.transitions,
                row.owner,
                row.lease_until,
                row.parent_run,
                row.parent_checkpoint,
                row.thread_id,
                row.metadata
            ])
        })
        .map_err(backend)?;
    Ok(())
}

/// The columns of a checkpoint, ready to bind (built before the blocking call, so the state is
/// serialized on the caller's thread and only once per step).
pub(super) struct CheckpointRow {
    pub(super) run_id: RunId,
    pub(super) id: i64,
    pub(super) step: i64,
    pub(super) label: Cow<'static, str>,
    pub(super) created_at: TimeText,
    /// The whole state, or (with `base`) the changes since checkpoint `base` (a `StateDelta`).
    pub(super) state: String,
    pub(super) base: Option<i64>,
    pub(super) base_run: Option<String>,
    /// The detail without the graph fingerprint and state type, which `shape` names.
    pub(super) detail: String,
    /// The checkpoint's graph fingerprint and state type, which the row names by the number
    /// of their `shapes` row (see [`ShapeIds`]).
    pub(super) shape: (Name, Name),
    /// With `save_step`: the run's last node and transitions as of this checkpoint.
    pub(super) progress: Option<(Option<String>, i64)>,
}

/// A time as its RFC 3339 text, kept inline: a checkpoint row binds one every step.
pub(super) struct TimeText([u8; 27]);

impl TimeText {
    fn of(at: Timestamp) -> Self {
        TimeText(at.rfc3339())
    }

    pub(super) fn as_str(&self) -> &str {
        // ASCII digits and separators: always UTF-8.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// The checkpoint's columns; `state` is its state as stored: whole, or its delta when it has
/// one (see [`stored_state`]).
pub(super) fn checkpoint_row(
    checkpoint: &Checkpoint,
    state: String,
) -> Result<CheckpointRow, CheckpointError> {
    Ok(CheckpointRow {
        base: checkpoint
            .delta
            .as_ref()
            .map(|delta| i64::try_from(delta.base).unwrap_or(i64::MAX)),
        base_run: checkpoint
            .delta
            .as_ref()
            .and_then(|delta| delta.run.as_ref().map(|run| run.as_str().to_owned())),
        run_id: checkpoint.run_id.clone(),
        id: i64::try_from(checkpoint.id).unwrap_or(i64::MAX),
        step: i64::try_from(checkpoint.step).unwrap_or(i64::MAX),
        label: checkpoint.label.text(),
        created_at: TimeText::of(checkpoint.created_at),
        state,
        shape: (
            checkpoint.graph_fingerprint.clone(),
            checkpoint.state_type.clone(),
        ),
        detail: serde_json::to_string(&Detail::without_shape(checkpoint)).map_err(|source| {
            CheckpointError::Serialize {
                what: "checkpoint detail",
                source,
            }
        })?,
        progress: None,
    })
}

/// What a checkpoint's `state` column holds: the changes since its base when a step gave them,
/// else the whole state.
pub(super) fn stored_state(checkpoint: &Checkpoint) -> Result<String, CheckpointError> {
    match &checkpoint.delta {
        Some(delta) => json("checkpoint delta", &**delta),
        None => json("checkpoint state", &checkpoint.state),
    }
}

/// The key of checkpoint `id` of the run numbered `seq`: the run's number in the high 32 bits,
/// so that a run's checkpoints are one range of keys, in order, and a step's appends to it.
pub(super) fn checkpoint_key(
    run_id: &str,
    seq: Option<i64>,
    id: i64,
) -> Result<i64, CheckpointError> {
    let what = || format!("checkpoint {id} of run {run_id}");
    let seq = seq.ok_or_else(|| corrupt(format!("column `seq` of run {run_id}"), "empty"))?;
    if !(1..=i64::from(i32::MAX)).contains(&seq) {
        return Err(corrupt(
            format!("column `seq` of run {run_id}"),
            format!("{seq} is not a run number (1 to 2^31 - 1)"),
        ));
    }
    if !(0..=i64::from(u32::MAX)).contains(&id) {
        return Err(corrupt(what(), "its id does not fit in 32 bits"));
    }
    Ok((seq << 32) | id)
}

/// The columns a checkpoint's row is written with, in `insert_checkpoint`'s order.
macro_rules! checkpoint_columns {
    () => {
        " INTO checkpoints (key, id, step, label, created_at, state, detail, run_last_node,
             run_transitions, base, base_run, shape)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
    };
}
const INSERT_CHECKPOINT: &str = concat!("INSERT", checkpoint_columns!());
const REPLACE_CHECKPOINT: &str = concat!("INSERT OR REPLACE", checkpoint_columns!());

pub(super) fn insert_checkpoint(
    connection: &Connection,
    row: &CheckpointRow,
    seq: Option<i64>,
    shape: i64,
) -> Result<(), CheckpointError> {
    let key = checkpoint_key(row.run_id.as_str(), seq, row.id)?;
    let write = |sql: &str| {
        connection.prepare_cached(sql).and_then(|mut statement| {
            statement.execute(params![
                key,
                row.id,
                row.step,
                row.label,
                row.created_at.as_str(),
                row.state,
                row.detail,
                row.progress.as_ref().and_then(|(node, _)| node.as_deref()),
                row.progress.as_ref().map(|&(_, transitions)| transitions),
                row.base,
                row.base_run,
                shape,
            ])
        })
    };
    // A plain INSERT first, the REPLACE only when the checkpoint is there already (a retry
    // rewrites its run's latest): with a secondary index on the table, SQLite opens a statement
    // journal for every `INSERT OR REPLACE`, copying each page it touches, which cost an
    // ordinary step a fifth of its time under `Durability::Normal`. A refused INSERT has
    // changed nothing (SQLite checks the key before it writes).
    match write(INSERT_CHECKPOINT) {
        Err(rusqlite::Error::SqliteFailure(error, _))
            if error.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
        {
            write(REPLACE_CHECKPOINT)
        }
        written => written,
    }
    .map_err(backend)?;
    Ok(())
}

pub(super) fn read_run(row: &Row<'_>) -> rusqlite::Result<[Option<String>; 9]> {
    Ok([
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
        row.get(8)?,
    ])
}

/// A run's state is its own column, or (written once per step) its checkpoint's; and when
/// steps were saved after the row was last written (`p`, the newest checkpoint carrying the
/// run's progress, newer than the row's), their progress is the run's.
pub(super) const SELECT_RUN: &str = "SELECT r.run_id, r.graph, r.status, r.created_at,
    COALESCE(p.created_at, r.updated_at),
    CASE WHEN p.id IS NULL THEN r.last_node ELSE p.run_last_node END,
    COALESCE(p.state, r.state, c.state), r.interrupts, r.error,
    COALESCE(p.step, r.steps), COALESCE(p.run_transitions, r.transitions),
    r.owner, r.lease_until, r.parent_run, r.parent_checkpoint, r.thread_id, r.metadata,
    CASE WHEN p.key IS NOT NULL THEN p.key WHEN r.state IS NOT NULL THEN NULL ELSE c.key END,
    CASE WHEN p.key IS NOT NULL THEN p.base WHEN r.state IS NOT NULL THEN NULL ELSE c.base END
    FROM runs r
    LEFT JOIN checkpoints c ON c.key = (r.seq << 32) + r.state_checkpoint
    LEFT JOIN checkpoints p ON p.key = (SELECT key FROM checkpoints
        WHERE key > (r.seq << 32) + r.state_checkpoint AND key < (r.seq + 1) << 32
            AND run_transitions IS NOT NULL
        ORDER BY key DESC LIMIT 1)";

/// A run row, decoded; a malformed column is a `Corrupt` error naming the run and the column.
/// A state read from a delta checkpoint is folded by [`fold`](super::chain::fold).
pub(super) fn decode_run(
    row: &Row<'_>,
) -> rusqlite::Result<Result<Unfolded<RunRecord>, CheckpointError>> {
    let text = read_run(row)?;
    let steps: i64 = row.get(9)?;
    let transitions: i64 = row.get(10)?;
    let owner: Option<String> = row.get(11)?;
    let lease_until: Option<String> = row.get(12)?;
    let parent_run: Option<String> = row.get(13)?;
    let parent_checkpoint: Option<i64> = row.get(14)?;
    let thread: Option<String> = row.get(15)?;
    let metadata: Option<String> = row.get(16)?;
    let state_key: Option<i64> = row.get(17)?;
    let state_base: Option<i64> = row.get(18)?;
    Ok((|| {
        let [
            run_id,
            graph,
            status,
            created_at,
            updated_at,
            last_node,
            state,
            interrupts,
            error,
        ] = text;
        let run_id = run_id.unwrap_or_default();
        let what = |column: &str| format!("column `{column}` of run {run_id}");
        let status = match status.as_deref().and_then(RunStatus::parse) {
            Some(status) => status,
            None => {
                let unknown = format!("unknown status {status:?}");
                return Err(corrupt(what("status"), unknown));
            }
        };
        let time = |column: &str, value: Option<String>| {
            Timestamp::parse(value.as_deref().unwrap_or_default())
                .map_err(|e| corrupt(what(column), e))
        };
        let state = state.as_deref().unwrap_or_default();
        let (state, delta) = match (state_key, state_base) {
            (Some(key), Some(_)) => {
                let delta = serde_json::from_str(state).map_err(|e| corrupt(what("state"), e))?;
                (Arc::default(), Some((key, delta)))
            }
            _ => (
                serde_json::from_str(state).map_err(|e| corrupt(what("state"), e))?,
                None,
            ),
        };
        let value = RunRecord {
            graph: graph.unwrap_or_default().into(),
            status,
            created_at: time("created_at", created_at)?,
            updated_at: time("updated_at", updated_at)?,
            last_node: last_node.map(Name::from),
            steps: u64::try_from(steps).map_err(|e| corrupt(what("steps"), e))?,
            state,
            interrupts: serde_json::from_str(interrupts.as_deref().unwrap_or_default())
                .map_err(|e| corrupt(what("interrupts"), e))?,
            error,
            transitions: u64::try_from(transitions).map_err(|e| corrupt(what("transitions"), e))?,
            owner: owner.map(Name::from),
            lease_until: lease_until
                .map(|t| Timestamp::parse(&t).map_err(|e| corrupt(what("lease_until"), e)))
                .transpose()?,
            parent: parent_of(parent_run, parent_checkpoint, &what)?,
            thread: thread
                .map(|t| ThreadId::parse(&t).map_err(|e| corrupt(what("thread_id"), e)))
                .transpose()?,
            metadata: metadata
                .map(|m| serde_json::from_str(&m).map_err(|e| corrupt(what("metadata"), e)))
                .transpose()?
                .unwrap_or_default(),
            run_id: RunId::from(run_id.clone()),
        };
        Ok(Unfolded { value, delta })
    })())
}

/// The checkpoints of run `?1`, their keys one range (see [`checkpoint_key`]); more
/// conditions follow with `AND`.
pub(super) const SELECT_CHECKPOINT: &str =
    "SELECT r.run_id, c.id, c.step, c.label, c.created_at, c.state, c.detail, c.base, c.key,
        s.graph_fingerprint, s.state_type
    FROM runs r JOIN checkpoints c ON c.key >= r.seq << 32 AND c.key < (r.seq + 1) << 32
    LEFT JOIN shapes s ON s.id = c.shape
    WHERE r.run_id = ?1";

/// A checkpoint row, decoded; a delta's state is folded by [`fold`](super::chain::fold).
pub(super) fn decode_checkpoint(
    row: &Row<'_>,
) -> rusqlite::Result<Result<Unfolded<Checkpoint>, CheckpointError>> {
    let run_id: String = row.get(0)?;
    let id: i64 = row.get(1)?;
    let step: i64 = row.get(2)?;
    let label: String = row.get(3)?;
    let created_at: String = row.get(4)?;
    let state: String = row.get(5)?;
    let detail: String = row.get(6)?;
    let base: Option<i64> = row.get(7)?;
    let key: i64 = row.get(8)?;
    let shape = match (
        row.get::<_, Option<String>>(9)?,
        row.get::<_, Option<String>>(10)?,
    ) {
        (Some(fingerprint), Some(state_type)) => Some(Shape {
            graph_fingerprint: fingerprint.into(),
            state_type: state_type.into(),
        }),
        _ => None,
    };
    Ok((|| {
        let what = |column: &str| format!("column `{column}` of checkpoint {id} of run {run_id}");
        let detail: Detail<'static> =
            serde_json::from_str(&detail).map_err(|e| corrupt(what("detail"), e))?;
        let (state, delta) = match base {
            Some(_) => {
                let delta = serde_json::from_str(&state).map_err(|e| corrupt(what("state"), e))?;
                (serde_json::Value::Null, Some((key, delta)))
            }
            None => (
                serde_json::from_str(&state).map_err(|e| corrupt(what("state"), e))?,
                None,
            ),
        };
        let value = detail
            .into_checkpoint(CheckpointColumns {
                id: u64::try_from(id).map_err(|e| corrupt(what("id"), e))?,
                run_id: RunId::from(run_id.clone()),
                step: u64::try_from(step).map_err(|e| corrupt(what("step"), e))?,
                label: label.parse().map_err(|e| corrupt(what("label"), e))?,
                state,
                created_at: Timestamp::parse(&created_at)
                    .map_err(|e| corrupt(what("created_at"), e))?,
                shape,
            })
            .map_err(|reason| corrupt(what("detail"), reason))?;
        Ok(Unfolded { value, delta })
    })())
}

/// The `shapes` rows this connection has written or read, so that a step names its graph
/// fingerprint and state type by number without asking SQLite: a store serves one graph, or
/// a few. Only rows of committed transactions are kept (see [`ShapeIds::remember`]): a
/// number whose insert was rolled back would name nothing.
#[derive(Debug, Default)]
pub(super) struct ShapeIds(Vec<(Name, Name, i64)>);

impl ShapeIds {
    pub(super) fn get(&self, fingerprint: &Name, state_type: &Name) -> Option<i64> {
        self.0
            .iter()
            .find(|(f, s, _)| f == fingerprint && s == state_type)
            .map(|&(_, _, id)| id)
    }

    /// Keeps `id`, once the transaction that wrote or read it has committed.
    pub(super) fn remember(&mut self, fingerprint: Name, state_type: Name, id: i64) {
        if self.get(&fingerprint, &state_type).is_none() {
            self.0.push((fingerprint, state_type, id));
        }
    }
}

/// The number of the `shapes` row of a graph fingerprint and state type, the row written
/// first when there is none.
pub(super) fn shape_id(
    connection: &Connection,
    fingerprint: &str,
    state_type: &str,
) -> Result<i64, CheckpointError> {
    connection
        .prepare_cached(
            "INSERT INTO shapes (graph_fingerprint, state_type) VALUES (?1, ?2)
             ON CONFLICT DO NOTHING",
        )
        .and_then(|mut statement| statement.execute([fingerprint, state_type]))
        .map_err(backend)?;
    connection
        .prepare_cached("SELECT id FROM shapes WHERE graph_fingerprint = ?1 AND state_type = ?2")
        .and_then(|mut statement| statement.query_row([fingerprint, state_type], |r| r.get(0)))
        .map_err(backend)
}

/// What `save_step` reads of the stored run row before writing.
#[derive(Debug)]
pub(super) struct Stored {
    pub(super) owner: Option<String>,
    pub(super) running: bool,
    /// The row's state is that of one of its checkpoints (written by a step).
    pub(super) state_in_checkpoint: bool,
    pub(super) graph: String,
    pub(super) created_us: i64,
    pub(super) lease: StoredLease,
    /// The run's number, which keys its checkpoints.
    pub(super) seq: Option<i64>,
}

/// A stored row's lease, read once: a step compares it with the time at every write.
#[derive(Debug, Clone, Copy)]
pub(super) enum StoredLease {
    None,
    Until(Timestamp),
    /// Not a timestamp: the row is rewritten at the next step, as if its lease were gone.
    Unreadable,
}

/// Only what the fence and `Stored::fits` compare (the creation time as a number).
pub(super) const SELECT_STORED: &str = "SELECT owner, status = 'running', \
    state_checkpoint IS NOT NULL, graph, created_us, lease_until, seq FROM runs WHERE run_id = ?1";

/// A row of [`SELECT_STORED`].
pub(super) fn decode_stored(row: &Row<'_>) -> rusqlite::Result<Stored> {
    let lease: Option<String> = row.get(5)?;
    Ok(Stored {
        owner: row.get(0)?,
        running: row.get(1)?,
        state_in_checkpoint: row.get(2)?,
        graph: row.get(3)?,
        created_us: row.get(4)?,
        lease: match lease {
            None => StoredLease::None,
            Some(text) => {
                Timestamp::parse(&text).map_or(StoredLease::Unreadable, StoredLease::Until)
            }
        },
        seq: row.get(6)?,
    })
}

impl Stored {
    /// Whether the stored row already says all that `run`'s would, but for the progress a
    /// step's checkpoint carries: same run, still running, written by a step (so readers know
    /// which checkpoints are newer), and a lease with at least half of `run`'s time left.
    pub(super) fn fits(&self, run: &RunRecord) -> bool {
        let now = run.updated_at.unix_micros();
        let lease_holds = match (self.lease, run.lease_until) {
            (StoredLease::None, None) => true,
            (StoredLease::Until(stored), Some(wanted)) => {
                let left = stored.unix_micros() - now;
                let wanted_left = wanted.unix_micros() - now;
                stored == wanted || left * 2 >= wanted_left
            }
            _ => false,
        };
        self.running
            && self.state_in_checkpoint
            && self.graph == run.graph
            && self.created_us == run.created_at.unix_micros()
            && lease_holds
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::checkpoint::RunStatus;

    fn running(now: Timestamp, lease: Duration) -> RunRecord {
        RunRecord {
            run_id: RunId::new(),
            graph: "Loop".into(),
            status: RunStatus::Running,
            created_at: now,
            updated_at: now,
            last_node: None,
            steps: 1,
            state: serde_json::Value::Null.into(),
            interrupts: Vec::new(),
            error: None,
            transitions: 1,
            owner: Some("me".into()),
            lease_until: Some(now.plus(lease)),
            parent: None,
            thread: None,
            metadata: Default::default(),
        }
    }

    /// The row as `run` wrote it, its lease running until `lease_until`.
    fn stored(run: &RunRecord, lease_until: Timestamp) -> Stored {
        Stored {
            owner: run.owner.as_deref().map(str::to_owned),
            running: true,
            state_in_checkpoint: true,
            graph: run.graph.as_str().to_owned(),
            created_us: run.created_at.unix_micros(),
            lease: StoredLease::Until(lease_until),
            seq: Some(1),
        }
    }

    #[test]
    fn a_step_leaves_the_row_while_it_says_all_but_the_progress() {
        let start = Timestamp::now();
        let lease = Duration::from_secs(30);
        let first = running(start, lease);
        let row = stored(&first, start.plus(lease));
        // Ten seconds on: two thirds of the lease left, more than half.
        let mut later = first.clone();
        later.updated_at = start.plus(Duration::from_secs(10));
        later.lease_until = Some(later.updated_at.plus(lease));
        assert!(row.fits(&first));
        assert!(row.fits(&later));
    }

    #[test]
    fn a_half_gone_lease_or_any_other_change_writes_the_row() {
        let start = Timestamp::now();
        let lease = Duration::from_secs(30);
        let run = running(start, lease);
        let fresh = || stored(&run, start.plus(lease));
        // Twenty seconds on: a third of the lease left, so the row is renewed.
        let mut late = run.clone();
        late.updated_at = start.plus(Duration::from_secs(20));
        late.lease_until = Some(late.updated_at.plus(lease));
        assert!(!fresh().fits(&late));
        let mut unleased = run.clone();
        unleased.lease_until = None;
        assert!(!fresh().fits(&unleased));
        let changed: [fn(&mut Stored); 6] = [
            |row| row.running = false,
            |row| row.state_in_checkpoint = false,
            |row| row.graph = "Other".to_owned(),
            |row| row.created_us -= 1,
            |row| row.lease = StoredLease::None,
            |row| row.lease = StoredLease::Unreadable,
        ];
        for change in changed {
            let mut row = fresh();
            change(&mut row);
            assert!(!row.fits(&run));
        }
    }
}
