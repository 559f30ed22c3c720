//! The suite's checks of threads: records, the head's compare-and-set, a thread's runs, and
//! deleting a thread.

use serde_json::json;

use super::{ConformanceError, at, backend, sample_checkpoint, sample_run, seed, thread_id};
use crate::checkpoint::{Checkpointer, ThreadRecord};
use crate::id::{RunId, ThreadId, Timestamp};

fn thread(id: &str, created_at: Timestamp) -> ThreadRecord {
    let mut record = ThreadRecord::new(
        thread_id(id),
        json!({ "user": "Grüße «x»", "tags": ["a", 1], "nested": { "none": null } })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    record.created_at = created_at;
    record.updated_at = created_at;
    record
}

pub(super) async fn threads_round_trip(store: &impl Checkpointer) -> Result<(), ConformanceError> {
    const CHECK: &str = "threads_round_trip";
    let first = thread(
        "2f9c1c4e-4b1a-4f53-9d4e-0c6f1e2a7b10",
        at("2026-03-04T05:06:07Z"),
    );
    ensure!(
        CHECK,
        backend(CHECK, store.create_thread(&first).await)?,
        "creating a new thread returned false"
    );
    let mut again = first.clone();
    again.metadata.clear();
    ensure!(
        CHECK,
        !backend(CHECK, store.create_thread(&again).await)?,
        "creating a thread whose id exists returned true"
    );
    let loaded = backend(CHECK, store.load_thread(&first.thread_id).await)?;
    ensure!(
        CHECK,
        loaded.as_ref() == Some(&first),
        "loaded {loaded:?}, stored {first:?}"
    );
    let unknown = ThreadId::new();
    ensure!(
        CHECK,
        backend(CHECK, store.load_thread(&unknown).await)?.is_none(),
        "load_thread found a thread never created"
    );
    // Created out of order, listed newest first, with ties broken by id.
    let older = thread("a", at("2026-03-04T05:06:06Z"));
    let tied = thread("b", at("2026-03-04T05:06:07Z"));
    for record in [&older, &tied] {
        backend(CHECK, store.create_thread(record).await)?;
    }
    let ids = |list: Vec<ThreadRecord>| -> Vec<String> {
        list.into_iter().map(|t| t.thread_id.to_string()).collect()
    };
    let all = ids(backend(CHECK, store.list_threads(10, 0).await)?);
    // `b` sorts after `2f9c…`: of two created at one instant, `b` is listed first.
    let want = ["b", first.thread_id.as_str(), "a"];
    ensure!(CHECK, all == want, "listed {all:?}, want {want:?}");
    let page = ids(backend(CHECK, store.list_threads(1, 1).await)?);
    ensure!(
        CHECK,
        page == [first.thread_id.as_str()],
        "limit 1 offset 1 listed {page:?}"
    );
    let metadata = json!({ "title": "ü" })
        .as_object()
        .cloned()
        .unwrap_or_default();
    let later = at("2026-03-04T05:07:00Z");
    ensure!(
        CHECK,
        backend(
            CHECK,
            store
                .set_thread_metadata(&older.thread_id, &metadata, later)
                .await
        )?,
        "set_thread_metadata of a stored thread returned false"
    );
    let loaded = backend(CHECK, store.load_thread(&older.thread_id).await)?;
    ensure!(
        CHECK,
        loaded.as_ref().is_some_and(|t| t.metadata == metadata
            && t.updated_at == later
            && t.created_at == older.created_at),
        "after set_thread_metadata, loaded {loaded:?}"
    );
    ensure!(
        CHECK,
        !backend(
            CHECK,
            store.set_thread_metadata(&unknown, &metadata, later).await
        )?,
        "set_thread_metadata of an unknown thread returned true"
    );
    Ok(())
}

pub(super) async fn thread_head_moves_once(
    store: &impl Checkpointer,
) -> Result<(), ConformanceError> {
    const CHECK: &str = "thread_head_moves_once";
    let record = thread("t", at("2026-03-04T05:06:07Z"));
    backend(CHECK, store.create_thread(&record).await)?;
    let (a, b) = (RunId::new(), RunId::new());
    let now = at("2026-03-04T05:06:08Z");
    let id = &record.thread_id;
    ensure!(
        CHECK,
        backend(CHECK, store.move_thread_head(id, None, &a, now).await)?,
        "moving a new thread's head from none failed"
    );
    ensure!(
        CHECK,
        !backend(CHECK, store.move_thread_head(id, None, &b, now).await)?,
        "a second move from none (a run started at the same moment) also won"
    );
    ensure!(
        CHECK,
        !backend(CHECK, store.move_thread_head(id, Some(&b), &a, now).await)?,
        "a move from a head the thread does not have won"
    );
    let later = at("2026-03-04T05:06:09Z");
    ensure!(
        CHECK,
        backend(CHECK, store.move_thread_head(id, Some(&a), &b, later).await)?,
        "moving the head on from the head it has failed"
    );
    let loaded = backend(CHECK, store.load_thread(id).await)?;
    ensure!(
        CHECK,
        loaded
            .as_ref()
            .is_some_and(|t| t.head.as_ref() == Some(&b) && t.updated_at == later),
        "after the moves, loaded {loaded:?}"
    );
    ensure!(
        CHECK,
        !backend(
            CHECK,
            store
                .move_thread_head(&ThreadId::new(), None, &a, now)
                .await
        )?,
        "moved the head of a thread never created"
    );
    Ok(())
}

pub(super) async fn thread_runs_newest_first(
    store: &impl Checkpointer,
) -> Result<(), ConformanceError> {
    const CHECK: &str = "thread_runs_newest_first";
    let mine = thread("mine", at("2026-03-04T05:06:00Z"));
    let other = thread("other", at("2026-03-04T05:06:00Z"));
    for record in [&mine, &other] {
        backend(CHECK, store.create_thread(record).await)?;
    }
    let mut runs = Vec::new();
    for (second, on) in [
        (3, Some(&mine)),
        (1, Some(&mine)),
        (2, Some(&other)),
        (4, None),
        (2, Some(&mine)),
    ] {
        let mut run = sample_run(RunId::new(), at(&format!("2026-03-04T05:06:0{second}Z")));
        run.thread = on.map(|t| t.thread_id.clone());
        seed(CHECK, store, &run).await?;
        runs.push(run);
    }
    let listed = backend(CHECK, store.thread_runs(&mine.thread_id, 10, 0).await)?;
    let want = [&runs[0], &runs[4], &runs[1]];
    ensure!(
        CHECK,
        listed
            .iter()
            .map(|r| &r.run_id)
            .eq(want.iter().map(|r| &r.run_id)),
        "listed {:?}, want {:?} (newest first, this thread's only)",
        listed.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(),
        want.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>()
    );
    ensure!(
        CHECK,
        listed.first() == Some(&runs[0]),
        "the newest read back as {:?}, stored {:?}",
        listed.first(),
        runs[0]
    );
    let page = backend(CHECK, store.thread_runs(&mine.thread_id, 1, 1).await)?;
    ensure!(
        CHECK,
        page.len() == 1 && page[0].run_id == runs[4].run_id,
        "limit 1 offset 1 listed {:?}",
        page.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>()
    );
    let loaded = backend(CHECK, store.load_run(&runs[2].run_id).await)?;
    ensure!(
        CHECK,
        loaded.is_some_and(|r| r.thread.as_ref() == Some(&other.thread_id)),
        "a run's thread did not read back"
    );
    ensure!(
        CHECK,
        backend(CHECK, store.thread_runs(&ThreadId::new(), 10, 0).await)?.is_empty(),
        "an unknown thread has runs"
    );
    Ok(())
}

/// A thread's deletion takes its runs, their children (`<run>/…`) and all their checkpoints,
/// and nothing of another thread's or of a run on none — not even a run whose id starts like
/// one of its runs'.
pub(super) async fn deleting_a_thread_deletes_its_runs_only(
    store: &impl Checkpointer,
) -> Result<(), ConformanceError> {
    const CHECK: &str = "deleting_a_thread_deletes_its_runs_only";
    let doomed = thread("doomed", at("2026-03-04T05:06:00Z"));
    let kept = thread("kept", at("2026-03-04T05:06:00Z"));
    for record in [&doomed, &kept] {
        backend(CHECK, store.create_thread(record).await)?;
    }
    let on = |id: RunId, second: u32, thread: Option<&ThreadRecord>| {
        let mut run = sample_run(id, at(&format!("2026-03-04T05:06:0{second}Z")));
        run.thread = thread.map(|t| t.thread_id.clone());
        run
    };
    let mine = on(RunId::new(), 1, Some(&doomed));
    let child = on(RunId::from(format!("{}/research@2", mine.run_id)), 2, None);
    let grandchild = on(RunId::from(format!("{}/search@1", child.run_id)), 3, None);
    let theirs = on(RunId::new(), 4, Some(&kept));
    let alone = on(RunId::new(), 5, None);
    // An id that starts as `mine`'s does, without the `/`: not one of its children.
    let lookalike = on(RunId::from(format!("{}0", mine.run_id)), 6, None);
    let all = [&mine, &child, &grandchild, &theirs, &alone, &lookalike];
    for run in all {
        seed(CHECK, store, run).await?;
        backend(
            CHECK,
            store
                .save_step((*run).clone(), sample_checkpoint(&run.run_id, 2))
                .await,
        )?;
    }
    ensure!(
        CHECK,
        backend(CHECK, store.delete_thread(&doomed.thread_id).await)?,
        "deleting a stored thread returned false"
    );
    ensure!(
        CHECK,
        backend(CHECK, store.load_thread(&doomed.thread_id).await)?.is_none(),
        "the deleted thread still loads"
    );
    for run in [&mine, &child, &grandchild] {
        ensure!(
            CHECK,
            backend(CHECK, store.load_run(&run.run_id).await)?.is_none(),
            "run {} of the deleted thread still loads",
            run.run_id
        );
        ensure!(
            CHECK,
            backend(CHECK, store.list_checkpoints(&run.run_id).await)?.is_empty(),
            "run {} of the deleted thread kept checkpoints",
            run.run_id
        );
    }
    for run in [&theirs, &alone, &lookalike] {
        let loaded = backend(CHECK, store.load_run(&run.run_id).await)?;
        ensure!(
            CHECK,
            loaded.is_some(),
            "run {} was not the deleted thread's, and is gone",
            run.run_id
        );
        let checkpoints = backend(CHECK, store.list_checkpoints(&run.run_id).await)?;
        ensure!(
            CHECK,
            checkpoints.len() == 2,
            "run {} was not the deleted thread's, and has {} checkpoints of 2",
            run.run_id,
            checkpoints.len()
        );
    }
    ensure!(
        CHECK,
        backend(CHECK, store.load_thread(&kept.thread_id).await)?.is_some(),
        "another thread went with the deleted one"
    );
    ensure!(
        CHECK,
        !backend(CHECK, store.delete_thread(&doomed.thread_id).await)?,
        "deleting a thread twice returned true"
    );
    Ok(())
}
