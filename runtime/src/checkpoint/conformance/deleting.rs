//! The suite's checks of deletion for retention: ended runs only, never a thread's head, with
//! their children and checkpoints; and a run's older checkpoints.

use std::sync::Arc;

use serde_json::json;

use super::{ConformanceError, at, backend, sample_checkpoint, sample_run};
use crate::checkpoint::{CheckpointLabel, Checkpointer, RunRecord, RunStatus, ThreadRecord};
use crate::id::RunId;

/// `delete_runs` takes the ended runs given (with their children and checkpoints, and off
/// their thread's list), in the order given, and leaves a running or paused run, a thread's
/// head, an unknown id, and a run whose id only starts like a deleted one's.
pub(super) async fn deleting_runs_takes_ended_ones_only(
    store: &impl Checkpointer,
) -> Result<(), ConformanceError> {
    const CHECK: &str = "deleting_runs_takes_ended_ones_only";
    let thread = ThreadRecord::new(crate::id::ThreadId::new(), Default::default());
    backend(CHECK, store.create_thread(&thread).await)?;
    let run = |second: u32, status: RunStatus, on_thread: bool| {
        let mut run = sample_run(RunId::new(), at(&format!("2026-03-04T05:06:0{second}Z")));
        run.status = status;
        run.thread = on_thread.then(|| thread.thread_id.clone());
        run.parent = None;
        run
    };
    let completed = run(1, RunStatus::Completed, true);
    let failed = run(2, RunStatus::Failed, false);
    let cancelled = run(3, RunStatus::Cancelled, false);
    let paused = run(4, RunStatus::Paused, false);
    let running = run(5, RunStatus::Running, false);
    let head = run(6, RunStatus::Completed, true);
    let mut child = run(7, RunStatus::Completed, false);
    child.run_id = RunId::from(format!("{}/research@2", completed.run_id));
    let mut grandchild = run(8, RunStatus::Completed, false);
    grandchild.run_id = RunId::from(format!("{}/search@1", child.run_id));
    let mut lookalike = run(9, RunStatus::Completed, false);
    lookalike.run_id = RunId::from(format!("{}0", completed.run_id));
    let all = [
        &completed,
        &failed,
        &cancelled,
        &paused,
        &running,
        &head,
        &child,
        &grandchild,
        &lookalike,
    ];
    for run in all {
        for id in [1, 2] {
            backend(
                CHECK,
                store
                    .save_step((*run).clone(), sample_checkpoint(&run.run_id, id))
                    .await,
            )?;
        }
    }
    let now = at("2026-03-04T05:07:00Z");
    backend(
        CHECK,
        store
            .move_thread_head(&thread.thread_id, None, &head.run_id, now)
            .await,
    )?;
    let unknown = RunId::new();
    let asked = [
        cancelled.run_id.clone(),
        paused.run_id.clone(),
        completed.run_id.clone(),
        running.run_id.clone(),
        head.run_id.clone(),
        unknown,
        failed.run_id.clone(),
    ];
    let deleted = backend(CHECK, store.delete_runs(&asked).await)?;
    let want = [
        cancelled.run_id.clone(),
        completed.run_id.clone(),
        failed.run_id.clone(),
    ];
    ensure!(
        CHECK,
        deleted == want,
        "deleted {deleted:?}, want the ended runs that are not a head, in the order given: {want:?}"
    );
    for gone in [&completed, &failed, &cancelled, &child, &grandchild] {
        ensure!(
            CHECK,
            backend(CHECK, store.load_run(&gone.run_id).await)?.is_none(),
            "run {} was deleted and still loads",
            gone.run_id
        );
        ensure!(
            CHECK,
            backend(CHECK, store.list_checkpoints(&gone.run_id).await)?.is_empty(),
            "run {} was deleted and kept checkpoints",
            gone.run_id
        );
    }
    for kept in [&paused, &running, &head, &lookalike] {
        let loaded = backend(CHECK, store.load_run(&kept.run_id).await)?;
        ensure!(
            CHECK,
            loaded.as_ref().map(|r| r.status) == Some(kept.status),
            "run {} ({}) should be kept, and loads as {loaded:?}",
            kept.run_id,
            kept.status
        );
        let checkpoints = backend(CHECK, store.list_checkpoints(&kept.run_id).await)?;
        ensure!(
            CHECK,
            checkpoints.len() == 2,
            "run {} should be kept whole, and has {} checkpoints of 2",
            kept.run_id,
            checkpoints.len()
        );
    }
    let on_thread = backend(CHECK, store.thread_runs(&thread.thread_id, 10, 0).await)?;
    let ids: Vec<&RunId> = on_thread.iter().map(|r| &r.run_id).collect();
    ensure!(
        CHECK,
        ids == [&head.run_id],
        "the thread lists {ids:?} after its older run was deleted, want only its head"
    );
    let again = backend(CHECK, store.delete_runs(&want).await)?;
    ensure!(
        CHECK,
        again.is_empty(),
        "deleting the same runs twice deleted {again:?}"
    );
    Ok(())
}

/// `delete_checkpoints_before` drops a run's checkpoints below the id given and keeps the
/// rest, the run reading back as before; another run's checkpoints stay.
pub(super) async fn deleting_checkpoints_before_keeps_the_later_ones(
    store: &impl Checkpointer,
) -> Result<(), ConformanceError> {
    const CHECK: &str = "deleting_checkpoints_before_keeps_the_later_ones";
    let mut run = sample_run(RunId::new(), at("2026-03-04T05:06:01Z"));
    let mut other = sample_run(RunId::new(), at("2026-03-04T05:06:02Z"));
    for id in 1..=5 {
        for record in [&mut run, &mut other] {
            let mut checkpoint = sample_checkpoint(&record.run_id, id);
            checkpoint.label = if id == 5 {
                CheckpointLabel::Pause("approval".to_owned())
            } else {
                CheckpointLabel::Step
            };
            checkpoint.state = Arc::new(json!({ "step": id, "text": "ü" }));
            // Saved as the runtime saves a step: the record holds the checkpoint's state.
            record.state = Arc::clone(&checkpoint.state);
            record.steps = id;
            record.status = if id == 5 {
                RunStatus::Paused
            } else {
                RunStatus::Running
            };
            backend(CHECK, store.save_step(record.clone(), checkpoint).await)?;
        }
    }
    let before: Option<RunRecord> = backend(CHECK, store.load_run(&run.run_id).await)?;
    let deleted = backend(CHECK, store.delete_checkpoints_before(&run.run_id, 4).await)?;
    let left: Vec<u64> = backend(CHECK, store.list_checkpoints(&run.run_id).await)?
        .iter()
        .map(|c| c.id)
        .collect();
    ensure!(
        CHECK,
        deleted == 3 && left == [4, 5],
        "deleting before 4 of checkpoints 1–5 deleted {deleted} and left {left:?}"
    );
    let after = backend(CHECK, store.load_run(&run.run_id).await)?;
    ensure!(
        CHECK,
        after == before,
        "the run reads back as {after:?} after its older checkpoints went, before {before:?}"
    );
    let latest = backend(CHECK, store.latest_checkpoint(&run.run_id).await)?;
    ensure!(
        CHECK,
        latest.is_some_and(|c| c.id == 5 && *c.state == json!({ "step": 5, "text": "ü" })),
        "the latest checkpoint changed"
    );
    let others = backend(CHECK, store.list_checkpoints(&other.run_id).await)?;
    ensure!(
        CHECK,
        others.len() == 5,
        "another run's checkpoints went too: {} of 5 left",
        others.len()
    );
    let none = backend(
        CHECK,
        store.delete_checkpoints_before(&RunId::new(), 4).await,
    )?;
    ensure!(
        CHECK,
        none == 0,
        "an unknown run had {none} checkpoints deleted"
    );
    Ok(())
}
