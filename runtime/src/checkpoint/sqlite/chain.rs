//! Delta checkpoints in SQLite: a checkpoint row whose `base` is set keeps in `state` the
//! changes since checkpoint `base` of its run, or of `base_run` (a [`StateDelta`]), and is
//! folded into the whole state as it is read, from the nearest whole row before it (`base`
//! empty).

use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, params};

use super::backend;
use crate::checkpoint::{
    Checkpoint, CheckpointError, HasState, Link, StateDelta, Unfolded, corrupt, fold_chain,
    fold_onto, goes_on_from,
};

/// The rows before key `?1` of its run, from the last whole one (that one first), or from
/// the run's first when it has none (a run on a thread whose first row goes on from the run
/// before).
const CHAIN: &str = "SELECT id, base, state FROM checkpoints
    WHERE key >= COALESCE((SELECT max(key) FROM checkpoints
            WHERE key >= (?1 >> 32) << 32 AND key < ?1 AND base IS NULL), (?1 >> 32) << 32)
        AND key < ?1
    ORDER BY key";

/// `unfolded` with its whole state: its delta folded into the state of the checkpoints before
/// it, from the nearest whole one.
pub(super) fn fold<T: HasState>(
    connection: &Connection,
    unfolded: Unfolded<T>,
) -> Result<T, CheckpointError> {
    let Unfolded { mut value, delta } = unfolded;
    let Some((key, delta)) = delta else {
        return Ok(value);
    };
    let (whole, chain) = whole_state(connection, key, delta, &value.describe())?;
    *value.state_mut() = Arc::new(whole);
    value.set_chain(chain);
    Ok(value)
}

/// The whole state of the checkpoint at `key`, which keeps `delta`, with how many deltas were
/// folded to read it; `what` names it in errors.
fn whole_state(
    connection: &Connection,
    key: i64,
    delta: StateDelta,
    what: &str,
) -> Result<(serde_json::Value, u32), CheckpointError> {
    let what = what.to_owned();
    let mut statement = connection.prepare_cached(CHAIN).map_err(backend)?;
    // Each state parsed where SQLite holds it: the whole one is the state's size.
    let rows = statement
        .query_map(params![key], |row| {
            let at = row.get::<_, i64>(0)?;
            let base = row.get::<_, Option<i64>>(1)?;
            let state = row.get_ref(2)?.as_str()?;
            Ok((|| {
                let at = u64::try_from(at).map_err(|e| corrupt(what.clone(), e))?;
                Ok(match base {
                    None => Link::Whole(at, parse(&what, state)?),
                    Some(_) => Link::Delta(at, parse(&what, state)?),
                })
            })())
        })
        .map_err(backend)?;
    let mut links = Vec::new();
    for row in rows {
        links.push(row.map_err(backend)??);
    }
    // The run went on from another's state: that state first, read as any other.
    let mut before = 0;
    if let Some((run, base)) = goes_on_from(&links, &delta) {
        let (state, chain) = state_of(connection, run.as_str(), base, &what)?;
        links.insert(0, Link::Whole(base, state));
        before = chain;
    }
    let id = u64::try_from(key & i64::from(u32::MAX)).unwrap_or_default();
    let (whole, folded) = fold_chain(&what, links, id, delta)?;
    Ok((whole, before + folded))
}

/// The whole state of checkpoint `id` of `run_id`, with how many deltas were folded to read it.
fn state_of(
    connection: &Connection,
    run_id: &str,
    id: u64,
    what: &str,
) -> Result<(serde_json::Value, u32), CheckpointError> {
    let row: Option<(i64, Option<i64>, String)> = connection
        .prepare_cached(
            "SELECT c.key, c.base, c.state FROM runs r JOIN checkpoints c
             ON c.key = (r.seq << 32) + ?2 WHERE r.run_id = ?1",
        )
        .and_then(|mut statement| {
            statement
                .query_row(
                    params![run_id, i64::try_from(id).unwrap_or(i64::MAX)],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )
                .optional()
        })
        .map_err(backend)?;
    match row {
        None => Err(corrupt(
            what.to_owned(),
            format!("it goes on from checkpoint {id} of run {run_id}, which is gone"),
        )),
        Some((_, None, state)) => Ok((parse(what, &state)?, 0)),
        Some((key, Some(_), state)) => whole_state(connection, key, parse(what, &state)?, what),
    }
}

/// Makes whole every checkpoint of another run that goes on from one of `run_id`'s: what
/// deleting `run_id` must do first, in the same transaction (a thread's next run keeps its
/// first checkpoint as the changes since this one's last).
pub(super) fn make_dependents_whole(
    connection: &Connection,
    run_id: &str,
) -> Result<(), CheckpointError> {
    let dependents: Vec<(i64, String)> = connection
        .prepare_cached("SELECT key, state FROM checkpoints WHERE base_run = ?1")
        .and_then(|mut statement| {
            statement
                .query_map([run_id], |row| Ok((row.get(0)?, row.get(1)?)))
                .and_then(Iterator::collect)
        })
        .map_err(backend)?;
    for (key, state) in dependents {
        let what = format!("a checkpoint going on from run {run_id}");
        let (whole, _) = whole_state(connection, key, parse(&what, &state)?, &what)?;
        rewrite_whole(connection, key, &whole)?;
    }
    Ok(())
}

/// The checkpoint at `key`, which kept a delta, now keeps `whole`.
fn rewrite_whole(
    connection: &Connection,
    key: i64,
    whole: &serde_json::Value,
) -> Result<(), CheckpointError> {
    let text = serde_json::to_string(whole).map_err(|source| CheckpointError::Serialize {
        what: "checkpoint state",
        source,
    })?;
    connection
        .prepare_cached(
            "UPDATE checkpoints SET state = ?2, base = NULL, base_run = NULL WHERE key = ?1",
        )
        .and_then(|mut statement| statement.execute(params![key, text]))
        .map_err(backend)?;
    Ok(())
}

/// Makes the run's first checkpoint from `from_key` on whole, if it keeps a delta: what
/// deleting the checkpoints before it (its chain) must do first, in the same transaction.
pub(super) fn make_whole_from(
    connection: &Connection,
    from_key: i64,
    run_id: &str,
) -> Result<(), CheckpointError> {
    let first: Option<(i64, Option<i64>, String)> = connection
        .prepare_cached(
            "SELECT key, base, state FROM checkpoints
             WHERE key >= ?1 AND key < ((?1 >> 32) + 1) << 32 ORDER BY key LIMIT 1",
        )
        .and_then(|mut statement| {
            statement
                .query_row(params![from_key], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })
                .optional()
        })
        .map_err(backend)?;
    let Some((key, Some(_), state)) = first else {
        return Ok(());
    };
    let what = format!(
        "state of checkpoint {} of run {run_id}",
        key & i64::from(u32::MAX)
    );
    let (whole, _) = whole_state(connection, key, parse(&what, &state)?, &what)?;
    rewrite_whole(connection, key, &whole)
}

/// A run's checkpoints, read in order, each folded: a delta onto the state just before it,
/// without reading its chain again.
pub(super) fn fold_in_order(
    connection: &Connection,
    rows: Vec<Unfolded<Checkpoint>>,
) -> Result<Vec<Checkpoint>, CheckpointError> {
    let mut folded: Vec<Checkpoint> = Vec::with_capacity(rows.len());
    for row in rows {
        let checkpoint = match fold_onto(folded.last(), row)? {
            Ok(checkpoint) => checkpoint,
            Err(row) => fold(connection, row)?,
        };
        folded.push(checkpoint);
    }
    Ok(folded)
}

fn parse<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, CheckpointError> {
    serde_json::from_str(text).map_err(|e| corrupt(what.to_owned(), e))
}
