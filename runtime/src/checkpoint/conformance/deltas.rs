//! The suite's checks of delta checkpoints: a checkpoint written as the changes since the one
//! before reads back whole, wherever it is read from (the checkpoint, the run's list, its
//! latest, its record), across whole checkpoints, in a branch made from it, after a retry
//! replaced the run's latest, and once the checkpoints its chain starts from are deleted.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{ConformanceError, at, backend, sample_checkpoint, sample_run};
use crate::checkpoint::{
    Checkpoint, CheckpointLabel, CheckpointRef, Checkpointer, RunRecord, RunStatus, StateChanges,
    StateDelta,
};
use crate::id::RunId;

/// A running run's step `id`: its whole state, and, with `delta`, the changes since `id - 1`
/// as a step hands them over. The record shares the checkpoint's state, as the runtime's does.
fn step(run: &RunRecord, id: u64, state: Value, delta: Option<Value>) -> (RunRecord, Checkpoint) {
    let mut checkpoint = sample_checkpoint(&run.run_id, id);
    checkpoint.label = CheckpointLabel::Step;
    checkpoint.interrupts.clear();
    checkpoint.state = Arc::new(state);
    checkpoint.delta = delta.map(|changes| {
        Arc::new(StateDelta {
            base: id - 1,
            run: None,
            changes: serde_json::from_value::<StateChanges>(changes)
                .unwrap_or_else(|e| panic!("conformance suite constant: {e}")),
        })
    });
    let mut record = run.clone();
    record.steps = id;
    record.state = Arc::clone(&checkpoint.state);
    (record, checkpoint)
}

fn running(second: u32) -> RunRecord {
    let mut run = sample_run(RunId::new(), at(&format!("2026-03-04T05:06:0{second}Z")));
    run.status = RunStatus::Running;
    run.interrupts.clear();
    run.parent = None;
    run.thread = None;
    run
}

/// The states of five steps: whole, two deltas, whole, delta.
fn five_steps() -> Vec<(Value, Option<Value>)> {
    vec![
        (json!({ "log": ["a"], "n": 1, "text": "ü" }), None),
        (
            json!({ "log": ["a", "b"], "n": 2, "text": "ü" }),
            Some(json!({ "set": { "n": 2 }, "append": { "log": ["b"] } })),
        ),
        (
            json!({ "log": ["a", "b", "«c»"], "n": 2, "text": "ü" }),
            Some(json!({ "append": { "log": ["«c»"] } })),
        ),
        (
            json!({ "log": ["a", "b", "«c»", "d"], "n": 3, "text": "ü" }),
            None,
        ),
        (
            json!({ "log": ["a", "b", "«c»", "d", "e"], "n": 3, "text": "x", "new": [] }),
            Some(json!({ "set": { "text": "x", "new": [] }, "append": { "log": ["e"] } })),
        ),
    ]
}

async fn write_steps(
    check: &'static str,
    store: &impl Checkpointer,
    run: &RunRecord,
    steps: &[(Value, Option<Value>)],
) -> Result<(), ConformanceError> {
    for (i, (state, delta)) in steps.iter().enumerate() {
        let (record, checkpoint) = step(run, i as u64 + 1, state.clone(), delta.clone());
        backend(check, store.save_step(record, checkpoint).await)?;
    }
    Ok(())
}

/// Checkpoints written as deltas read back whole, with no delta, from every read.
pub(super) async fn deltas_read_back_whole(
    store: &impl Checkpointer,
) -> Result<(), ConformanceError> {
    const CHECK: &str = "deltas_read_back_whole";
    let run = running(1);
    let steps = five_steps();
    write_steps(CHECK, store, &run, &steps).await?;
    for (i, (state, _)) in steps.iter().enumerate() {
        let id = i as u64 + 1;
        let read = backend(CHECK, store.checkpoint(&run.run_id, id).await)?;
        ensure!(
            CHECK,
            read.as_ref()
                .is_some_and(|c| *c.state == *state && c.delta.is_none()),
            "checkpoint {id} read back as {read:?}, expected the whole state {state}"
        );
    }
    let listed = backend(CHECK, store.list_checkpoints(&run.run_id).await)?;
    let states: Vec<&Value> = listed.iter().map(|c| &*c.state).collect();
    let expected: Vec<&Value> = steps.iter().map(|(state, _)| state).collect();
    ensure!(
        CHECK,
        states == expected && listed.iter().all(|c| c.delta.is_none()),
        "the run's list holds {states:?}, expected {expected:?}"
    );
    let last = &steps[4].0;
    let latest = backend(CHECK, store.latest_checkpoint(&run.run_id).await)?;
    ensure!(
        CHECK,
        latest
            .as_ref()
            .is_some_and(|c| c.id == 5 && *c.state == *last),
        "latest checkpoint {latest:?}, expected checkpoint 5 with {last}"
    );
    let record = backend(CHECK, store.load_run(&run.run_id).await)?;
    ensure!(
        CHECK,
        record.as_ref().is_some_and(|r| *r.state == *last),
        "the run's record holds {:?}, expected {last}",
        record.map(|r| r.state)
    );
    let listed = backend(CHECK, store.list_runs(10, 0).await)?;
    ensure!(
        CHECK,
        listed
            .iter()
            .any(|r| r.run_id == run.run_id && *r.state == *last),
        "the run listed holds another state than {last}"
    );
    Ok(())
}

/// A branch made from a delta checkpoint starts from its whole state; a retry that rewrites
/// the run's latest checkpoint (same id, whole where it was a delta, and back) reads back as
/// written; the run goes on with deltas after it.
pub(super) async fn branches_and_retries_over_deltas(
    store: &impl Checkpointer,
) -> Result<(), ConformanceError> {
    const CHECK: &str = "branches_and_retries_over_deltas";
    let run = running(2);
    let steps = five_steps();
    write_steps(CHECK, store, &run, &steps[..3]).await?;
    // A branch from checkpoint 3, a delta: its first checkpoint whole, then a delta.
    let from = backend(CHECK, store.checkpoint(&run.run_id, 3).await)?;
    let Some(from) = from else {
        return Err(ConformanceError {
            check: CHECK,
            detail: "checkpoint 3 is missing".into(),
        });
    };
    let mut branch = running(3);
    branch.parent = Some(CheckpointRef {
        run_id: run.run_id.clone(),
        checkpoint: 3,
    });
    let mut forked = (*from.state).clone();
    forked["n"] = json!(10);
    let mut grown = forked.clone();
    if let Some(log) = grown["log"].as_array_mut() {
        log.push(json!("branch"));
    }
    write_steps(
        CHECK,
        store,
        &branch,
        &[
            (forked, None),
            (
                grown.clone(),
                Some(json!({ "append": { "log": ["branch"] } })),
            ),
        ],
    )
    .await?;
    let read = backend(CHECK, store.latest_checkpoint(&branch.run_id).await)?;
    ensure!(
        CHECK,
        read.as_ref().is_some_and(|c| *c.state == grown),
        "the branch's latest reads {read:?}, expected {grown}"
    );
    // A retry rewrites checkpoint 3 whole, then 4 as a delta of it, then 4 again whole.
    let retried = json!({ "log": ["a", "b", "r"], "n": 5, "text": "ü" });
    let after = json!({ "log": ["a", "b", "r", "s"], "n": 5, "text": "ü" });
    let again = json!({ "log": ["z"], "n": 0, "text": "ü" });
    for (id, state, delta) in [
        (3, retried.clone(), None),
        (
            4,
            after.clone(),
            Some(json!({ "append": { "log": ["s"] } })),
        ),
    ] {
        let (record, checkpoint) = step(&run, id, state, delta);
        backend(CHECK, store.save_step(record, checkpoint).await)?;
    }
    let read = backend(CHECK, store.checkpoint(&run.run_id, 4).await)?;
    ensure!(
        CHECK,
        read.as_ref().is_some_and(|c| *c.state == after),
        "after the retry checkpoint 4 reads {read:?}, expected {after}"
    );
    let (record, checkpoint) = step(&run, 4, again.clone(), None);
    backend(CHECK, store.save_step(record, checkpoint).await)?;
    let record = backend(CHECK, store.load_run(&run.run_id).await)?;
    ensure!(
        CHECK,
        record.as_ref().is_some_and(|r| *r.state == again),
        "the run's record holds {:?}, expected {again}",
        record.map(|r| r.state)
    );
    let parent = backend(CHECK, store.checkpoint(&run.run_id, 3).await)?;
    ensure!(
        CHECK,
        parent.as_ref().is_some_and(|c| *c.state == retried),
        "checkpoint 3 reads {parent:?}, expected {retried}"
    );
    Ok(())
}

/// Deleting the checkpoints a delta's chain starts from keeps the later checkpoints' states.
pub(super) async fn deleting_before_a_delta_keeps_its_state(
    store: &impl Checkpointer,
) -> Result<(), ConformanceError> {
    const CHECK: &str = "deleting_before_a_delta_keeps_its_state";
    let mut run = running(4);
    let steps = five_steps();
    write_steps(CHECK, store, &run, &steps[..3]).await?;
    run.status = RunStatus::Completed;
    run.lease_until = None;
    let done = json!({ "log": ["a", "b", "«c»", "end"], "n": 2, "text": "ü" });
    let (mut record, mut checkpoint) = step(
        &run,
        4,
        done.clone(),
        Some(json!({ "append": { "log": ["end"] } })),
    );
    record.owner = run.owner.clone();
    checkpoint.label = CheckpointLabel::Complete;
    backend(CHECK, store.save_step(record, checkpoint).await)?;
    let deleted = backend(CHECK, store.delete_checkpoints_before(&run.run_id, 3).await)?;
    ensure!(
        CHECK,
        deleted == 2,
        "deleted {deleted} checkpoints, expected 2"
    );
    let listed = backend(CHECK, store.list_checkpoints(&run.run_id).await)?;
    let states: Vec<(u64, &Value)> = listed.iter().map(|c| (c.id, &*c.state)).collect();
    let expected = vec![(3, &steps[2].0), (4, &done)];
    ensure!(
        CHECK,
        states == expected,
        "left {states:?}, expected {expected:?}"
    );
    let record = backend(CHECK, store.load_run(&run.run_id).await)?;
    ensure!(
        CHECK,
        record.as_ref().is_some_and(|r| *r.state == done),
        "the run's record holds {:?}, expected {done}",
        record.map(|r| r.state)
    );
    Ok(())
}

/// A run that goes on from another's checkpoint (a thread's next run) may write its first
/// checkpoint as the changes since that one: it reads back whole, and stays whole once the run
/// it went on from is deleted.
pub(super) async fn a_run_going_on_from_another_survives_its_deletion(
    store: &impl Checkpointer,
) -> Result<(), ConformanceError> {
    const CHECK: &str = "a_run_going_on_from_another_survives_its_deletion";
    let mut before = running(5);
    let steps = five_steps();
    write_steps(CHECK, store, &before, &steps[..3]).await?;
    before.status = RunStatus::Completed;
    before.lease_until = None;
    let (record, checkpoint) = step(&before, 4, steps[2].0.clone(), Some(json!({})));
    backend(CHECK, store.save_step(record, checkpoint).await)?;
    let next = running(6);
    let first = json!({ "log": ["a", "b", "«c»", "next"], "n": 2, "text": "ü" });
    let second = json!({ "log": ["a", "b", "«c»", "next", "more"], "n": 9, "text": "ü" });
    let (record, mut checkpoint) = step(&next, 1, first.clone(), None);
    checkpoint.delta = Some(Arc::new(StateDelta {
        base: 4,
        run: Some(before.run_id.clone()),
        changes: serde_json::from_value(json!({ "append": { "log": ["next"] } }))
            .unwrap_or_else(|e| panic!("conformance suite constant: {e}")),
    }));
    backend(CHECK, store.save_step(record, checkpoint).await)?;
    let (record, checkpoint) = step(
        &next,
        2,
        second.clone(),
        Some(json!({ "set": { "n": 9 }, "append": { "log": ["more"] } })),
    );
    backend(CHECK, store.save_step(record, checkpoint).await)?;
    let expect = async |when: &str| -> Result<(), ConformanceError> {
        let listed = backend(CHECK, store.list_checkpoints(&next.run_id).await)?;
        let states: Vec<&Value> = listed.iter().map(|c| &*c.state).collect();
        ensure!(
            CHECK,
            states == [&first, &second],
            "{when}: the run's list holds {states:?}"
        );
        let one = backend(CHECK, store.checkpoint(&next.run_id, 1).await)?;
        ensure!(
            CHECK,
            one.as_ref().is_some_and(|c| *c.state == first),
            "{when}: its first checkpoint reads {one:?}"
        );
        let record = backend(CHECK, store.load_run(&next.run_id).await)?;
        ensure!(
            CHECK,
            record.as_ref().is_some_and(|r| *r.state == second),
            "{when}: its record holds {:?}",
            record.map(|r| r.state)
        );
        Ok(())
    };
    expect("before the deletion").await?;
    let deleted = backend(CHECK, store.delete_runs(&[before.run_id.clone()]).await)?;
    ensure!(
        CHECK,
        deleted == [before.run_id.clone()],
        "deleted {deleted:?}, expected the run gone on from"
    );
    expect("once the run it went on from is deleted").await
}
