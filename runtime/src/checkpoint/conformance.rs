//! The conformance suite every backend must pass ([`Checkpointer`] and [`RunQueue`]), generic
//! over the backend. Behind the `test-util` feature.
//!
//! Longer than our other files on purpose: the contract reads as one list of checks, each a
//! function named for what it checks, and splitting it would scatter that list.
//!
//! A backend's test calls [`run_all`] with a function that makes a fresh, empty store:
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use trellis::checkpoint::InMemoryCheckpointer;
//! use trellis::checkpoint::conformance;
//!
//! conformance::run_all(|| async { InMemoryCheckpointer::new() }).await.unwrap();
//! # });
//! ```

use std::collections::BTreeMap;
use std::future::Future;

use serde_json::json;

use super::{
    Checkpoint, CheckpointLabel, CheckpointRef, Checkpointer, RunQueue, RunRecord, RunStatus,
};
use crate::id::{RunId, ThreadId, Timestamp};
use crate::interrupt::{Interrupt, InterruptPoint, InterruptRequest};
use crate::name::Name;
use crate::node::{FailureKind, NodeFailure};

/// A backend broke the contract: which check, and what it saw.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("conformance check `{check}` failed: {detail}")]
pub struct ConformanceError {
    /// The check's name (the function of this module that failed).
    pub check: &'static str,
    /// What was expected and what the backend did.
    pub detail: String,
}

macro_rules! ensure {
    ($check:expr, $cond:expr, $($detail:tt)+) => {
        if !$cond {
            return Err(ConformanceError { check: $check, detail: format!($($detail)+) });
        }
    };
}

mod deleting;
mod deltas;
mod threads;

/// Runs every check, each on a fresh store from `fresh`; stops at the first failure.
///
/// # Errors
/// The first [`ConformanceError`]; a backend error is reported as the failure of its check.
pub async fn run_all<C, F, Fut>(mut fresh: F) -> Result<(), ConformanceError>
where
    C: RunQueue,
    F: FnMut() -> Fut,
    Fut: Future<Output = C>,
{
    empty_store(&fresh().await).await?;
    run_round_trip(&fresh().await).await?;
    run_upsert(&fresh().await).await?;
    list_runs_newest_first(&fresh().await).await?;
    list_runs_pages(&fresh().await).await?;
    checkpoint_order_and_latest(&fresh().await).await?;
    save_step_writes_both(&fresh().await).await?;
    claim_run_once(&fresh().await).await?;
    take_over_once(&fresh().await).await?;
    save_step_is_fenced(&fresh().await).await?;
    claim_next_hands_out_each_ready_run_once(&fresh().await).await?;
    renew_lease_only_for_the_owner(&fresh().await).await?;
    held_runs_are_the_owned_running_ones(&fresh().await).await?;
    threads::threads_round_trip(&fresh().await).await?;
    threads::thread_head_moves_once(&fresh().await).await?;
    threads::thread_runs_newest_first(&fresh().await).await?;
    threads::deleting_a_thread_deletes_its_runs_only(&fresh().await).await?;
    deleting::deleting_runs_takes_ended_ones_only(&fresh().await).await?;
    deleting::deleting_checkpoints_before_keeps_the_later_ones(&fresh().await).await?;
    deltas::deltas_read_back_whole(&fresh().await).await?;
    deltas::branches_and_retries_over_deltas(&fresh().await).await?;
    deltas::deleting_before_a_delta_keeps_its_state(&fresh().await).await?;
    deltas::a_run_going_on_from_another_survives_its_deletion(&fresh().await).await
}

fn thread_id(text: &str) -> ThreadId {
    // As `at`: the suite's own constants.
    ThreadId::parse(text).unwrap_or_else(|e| panic!("conformance suite constant: {e}"))
}

fn at(text: &str) -> Timestamp {
    // The suite's own constants; a typo here is a bug in the suite, caught by its own test.
    Timestamp::parse(text).unwrap_or_else(|e| panic!("conformance suite constant: {e}"))
}

/// Stores `run` as the runtime does, with a checkpoint (`save_step` is the only write of a
/// record the contract has).
async fn seed(
    check: &'static str,
    store: &impl Checkpointer,
    run: &RunRecord,
) -> Result<(), ConformanceError> {
    backend(
        check,
        store
            .save_step(run.clone(), sample_checkpoint(&run.run_id, 1))
            .await,
    )
}

fn backend<T>(
    check: &'static str,
    result: Result<T, super::CheckpointError>,
) -> Result<T, ConformanceError> {
    result.map_err(|e| ConformanceError {
        check,
        detail: format!("backend error: {e}"),
    })
}

/// A run record with every field set to something a backend could get wrong.
pub fn sample_run(run_id: RunId, created_at: Timestamp) -> RunRecord {
    RunRecord {
        run_id,
        graph: "Support".into(),
        status: RunStatus::Paused,
        created_at,
        updated_at: created_at,
        last_node: Some("review".into()),
        steps: 4,
        state: json!({
            "draft": "Grüße — «quoted» \"text\"\n\ttabbed",
            "count": 18_446_744_073_709_551_615_u64,
            "ratio": 0.1,
            "log": [1, 2, 3],
            "nested": { "empty": {}, "none": null, "flag": true },
        })
        .into(),
        interrupts: vec![Interrupt {
            id: "send@5".into(),
            node: "send".into(),
            step: 5,
            point: InterruptPoint::Before,
            request: InterruptRequest::new("approval", "send this reply?")
                .with_options(["approve", "reject"])
                .resume_to("send"),
        }],
        error: None,
        transitions: 7,
        owner: Some("host-a:4242:987654".into()),
        lease_until: Some(at("2026-03-04T05:06:37.5Z")),
        parent: Some(CheckpointRef {
            run_id: RunId::from("01JPARENT0000000000000000X"),
            checkpoint: 9_007_199_254_740_993,
        }),
        thread: Some(thread_id("2f9c1c4e-4b1a-4f53-9d4e-0c6f1e2a7b10")),
        metadata: json!({ "user": "Jürgen", "tags": ["a", "b"], "n": 1 })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    }
}

/// A checkpoint with every field set.
pub fn sample_checkpoint(run_id: &RunId, id: u64) -> Checkpoint {
    Checkpoint {
        id,
        run_id: run_id.clone(),
        step: id,
        nodes: vec!["draft".into(), "lookup".into()],
        label: CheckpointLabel::Pause("approval".to_owned()),
        state: json!({ "step": id, "text": "ü\u{1F600}" }).into(),
        frontier: vec!["review".into(), "send".into()],
        visits: BTreeMap::from([("draft".into(), 2), ("review".into(), 1)]),
        approved: vec!["send".into()],
        failures: vec![NodeFailure {
            node: "lookup".to_owned(),
            step: id,
            attempts: 3,
            kind: FailureKind::Timeout,
            message: "timed out after 10s".to_owned(),
        }],
        interrupts: vec![Interrupt {
            id: format!("send@{id}").into(),
            node: "send".into(),
            step: id,
            point: InterruptPoint::Node,
            request: InterruptRequest::new("approval", "send «this»?").with_options(["yes"]),
        }],
        joins: BTreeMap::from([("summarize".into(), vec!["deep".into(), "web".into()])]),
        sends: vec![
            crate::node::SendTo::json("review", json!({ "doc": "ü", "pages": [1, 2] })),
            crate::node::SendTo::json("review", json!(null)),
        ],
        children: BTreeMap::from([(
            "research".into(),
            RunId::from(format!("{run_id}/research@3")),
        )]),
        pending: vec![super::PendingUpdate {
            node: "draft".into(),
            update: json!({ "log": ["ü"], "draft": "«x»" }),
        }],
        breakpoints: crate::interrupt::Breakpoints {
            before: vec!["send".into()],
            after: vec!["draft".into(), "review".into()],
        },
        graph_fingerprint: "9f2c4e1a7b3d5c60".into(),
        state_type: "support::Ticket".into(),
        created_at: at("2026-03-04T05:06:07.123456Z"),
        delta: None,
        chain: 0,
    }
}

async fn empty_store(store: &impl Checkpointer) -> Result<(), ConformanceError> {
    const CHECK: &str = "empty_store";
    let id = RunId::new();
    ensure!(
        CHECK,
        backend(CHECK, store.load_run(&id).await)?.is_none(),
        "load_run found a run in an empty store"
    );
    ensure!(
        CHECK,
        backend(CHECK, store.list_runs(10, 0).await)?.is_empty(),
        "list_runs listed runs of an empty store"
    );
    ensure!(
        CHECK,
        backend(CHECK, store.list_checkpoints(&id).await)?.is_empty(),
        "list_checkpoints listed checkpoints of a missing run"
    );
    ensure!(
        CHECK,
        backend(CHECK, store.latest_checkpoint(&id).await)?.is_none(),
        "latest_checkpoint found a checkpoint of a missing run"
    );
    Ok(())
}

async fn run_round_trip(store: &impl Checkpointer) -> Result<(), ConformanceError> {
    const CHECK: &str = "run_round_trip";
    let run = sample_run(RunId::new(), at("2026-03-04T05:06:07.654321+02:00"));
    seed(CHECK, store, &run).await?;
    let loaded = backend(CHECK, store.load_run(&run.run_id).await)?;
    ensure!(
        CHECK,
        loaded.as_ref() == Some(&run),
        "saved {run:?}, loaded {loaded:?}"
    );
    // A run that is no branch, and a checkpoint that asks nothing.
    let mut root = sample_run(RunId::new(), at("2026-03-04T05:06:08Z"));
    root.parent = None;
    let mut quiet = sample_checkpoint(&root.run_id, 1);
    quiet.interrupts.clear();
    backend(CHECK, store.save_step(root.clone(), quiet.clone()).await)?;
    let loaded = backend(CHECK, store.load_run(&root.run_id).await)?;
    ensure!(
        CHECK,
        loaded.as_ref() == Some(&root),
        "saved {root:?}, loaded {loaded:?}"
    );
    let listed = backend(CHECK, store.list_checkpoints(&root.run_id).await)?;
    ensure!(
        CHECK,
        listed == [quiet.clone()],
        "saved {quiet:?}, listed {listed:?}"
    );
    Ok(())
}

async fn run_upsert(store: &impl Checkpointer) -> Result<(), ConformanceError> {
    const CHECK: &str = "run_upsert";
    let mut run = sample_run(RunId::new(), at("2026-03-04T05:06:07Z"));
    seed(CHECK, store, &run).await?;
    run.status = RunStatus::Failed;
    run.error = Some("node `send` failed".to_owned());
    run.steps = 9;
    run.interrupts.clear();
    run.state = json!({ "replaced": true }).into();
    run.updated_at = at("2026-03-04T06:00:00Z");
    seed(CHECK, store, &run).await?;
    let loaded = backend(CHECK, store.load_run(&run.run_id).await)?;
    ensure!(
        CHECK,
        loaded.as_ref() == Some(&run),
        "after the second save, loaded {loaded:?}"
    );
    let listed = backend(CHECK, store.list_runs(10, 0).await)?;
    ensure!(
        CHECK,
        listed.len() == 1,
        "one run saved twice is listed {} times",
        listed.len()
    );
    Ok(())
}

/// Five runs whose creation times, written with different offsets, order differently from both
/// their text and their ids.
fn scrambled_runs() -> Vec<RunRecord> {
    [
        "2026-05-01T12:00:00+05:00", // 07:00Z  (2nd oldest)
        "2026-05-01T09:30:00Z",      // 09:30Z  (newest)
        "2026-05-01T06:00:00Z",      // 06:00Z  (oldest)
        "2026-05-01T10:00:00+01:00", // 09:00Z  (2nd newest)
        "2026-05-01T03:00:00-05:00", // 08:00Z  (middle)
    ]
    .into_iter()
    .map(|text| sample_run(RunId::new(), at(text)))
    .collect()
}

async fn list_runs_newest_first(store: &impl Checkpointer) -> Result<(), ConformanceError> {
    const CHECK: &str = "list_runs_newest_first";
    let runs = scrambled_runs();
    for run in &runs {
        seed(CHECK, store, run).await?;
    }
    let listed = backend(CHECK, store.list_runs(10, 0).await)?;
    let order: Vec<&RunId> = listed.iter().map(|r| &r.run_id).collect();
    let expected: Vec<&RunId> = [1, 3, 4, 0, 2].iter().map(|&i| &runs[i].run_id).collect();
    ensure!(
        CHECK,
        order == expected,
        "expected newest first by UTC instant {expected:?}, got {order:?}"
    );
    Ok(())
}

async fn list_runs_pages(store: &impl Checkpointer) -> Result<(), ConformanceError> {
    const CHECK: &str = "list_runs_pages";
    let runs = scrambled_runs();
    for run in &runs {
        seed(CHECK, store, run).await?;
    }
    let all = backend(CHECK, store.list_runs(usize::MAX, 0).await)?;
    ensure!(
        CHECK,
        all.len() == 5,
        "limit usize::MAX listed {} of 5 runs",
        all.len()
    );
    let mut paged = Vec::new();
    for offset in [0, 2, 4] {
        let page = backend(CHECK, store.list_runs(2, offset).await)?;
        let expected = if offset == 4 { 1 } else { 2 };
        ensure!(
            CHECK,
            page.len() == expected,
            "page at offset {offset} has {} runs, expected {expected}",
            page.len()
        );
        paged.extend(page);
    }
    ensure!(
        CHECK,
        paged == all,
        "pages of 2 do not concatenate to the full listing"
    );
    ensure!(
        CHECK,
        backend(CHECK, store.list_runs(2, 5).await)?.is_empty(),
        "a page past the end is not empty"
    );
    ensure!(
        CHECK,
        backend(CHECK, store.list_runs(0, 0).await)?.is_empty(),
        "limit 0 listed runs"
    );
    Ok(())
}

async fn checkpoint_order_and_latest(store: &impl Checkpointer) -> Result<(), ConformanceError> {
    const CHECK: &str = "checkpoint_order_and_latest";
    let run = sample_run(RunId::new(), at("2026-03-04T05:06:07Z"));
    let other = sample_run(RunId::new(), at("2026-03-04T05:06:08Z"));
    seed(CHECK, store, &run).await?;
    seed(CHECK, store, &other).await?;
    for id in [3, 1, 10, 2] {
        backend(
            CHECK,
            store
                .save_step(run.clone(), sample_checkpoint(&run.run_id, id))
                .await,
        )?;
    }
    backend(
        CHECK,
        store
            .save_step(other.clone(), sample_checkpoint(&other.run_id, 99))
            .await,
    )?;
    let mut replaced = sample_checkpoint(&run.run_id, 2);
    replaced.label = CheckpointLabel::Step;
    replaced.state = json!({ "replaced": true }).into();
    backend(CHECK, store.save_step(run.clone(), replaced.clone()).await)?;

    let listed = backend(CHECK, store.list_checkpoints(&run.run_id).await)?;
    let ids: Vec<u64> = listed.iter().map(|c| c.id).collect();
    ensure!(
        CHECK,
        ids == [1, 2, 3, 10],
        "expected checkpoints 1, 2, 3, 10 in order, got {ids:?}"
    );
    ensure!(
        CHECK,
        listed[1] == replaced,
        "a checkpoint saved again with the same id was not replaced: {:?}",
        listed[1]
    );
    ensure!(
        CHECK,
        listed[0] == sample_checkpoint(&run.run_id, 1),
        "checkpoint did not round-trip: {:?}",
        listed[0]
    );
    let latest = backend(CHECK, store.latest_checkpoint(&run.run_id).await)?;
    ensure!(
        CHECK,
        latest.as_ref().map(|c| c.id) == Some(10),
        "latest is {:?}, expected id 10 (not the last written, 2)",
        latest.map(|c| c.id)
    );
    for (id, expected) in [
        (2, Some(&replaced)),
        (10, listed.get(3)),
        (4, None),
        (99, None),
    ] {
        let found = backend(CHECK, store.checkpoint(&run.run_id, id).await)?;
        ensure!(
            CHECK,
            found.as_ref() == expected,
            "checkpoint({id}) found {found:?}, expected {expected:?}"
        );
    }
    let others = backend(CHECK, store.list_checkpoints(&other.run_id).await)?;
    ensure!(
        CHECK,
        others.iter().map(|c| c.id).eq([1, 99]),
        "another run's checkpoints leaked: {others:?}"
    );
    Ok(())
}

async fn save_step_writes_both(store: &impl Checkpointer) -> Result<(), ConformanceError> {
    const CHECK: &str = "save_step_writes_both";
    let mut run = sample_run(RunId::new(), at("2026-03-04T05:06:07Z"));
    run.status = RunStatus::Running;
    let checkpoint = sample_checkpoint(&run.run_id, 1);
    backend(
        CHECK,
        store.save_step(run.clone(), checkpoint.clone()).await,
    )?;
    run.steps = 5;
    let second = sample_checkpoint(&run.run_id, 2);
    backend(CHECK, store.save_step(run.clone(), second.clone()).await)?;
    let loaded = backend(CHECK, store.load_run(&run.run_id).await)?;
    ensure!(
        CHECK,
        loaded.as_ref() == Some(&run),
        "run record after save_step: {loaded:?}"
    );
    let listed = backend(CHECK, store.list_checkpoints(&run.run_id).await)?;
    ensure!(
        CHECK,
        listed == [checkpoint, second],
        "checkpoints after save_step: {listed:?}"
    );
    let foreign = sample_checkpoint(&RunId::new(), 3);
    ensure!(
        CHECK,
        store.save_step(run.clone(), foreign.clone()).await.is_err(),
        "save_step accepted a checkpoint of another run"
    );
    let listed = backend(CHECK, store.list_checkpoints(&run.run_id).await)?;
    ensure!(
        CHECK,
        listed.len() == 2,
        "a refused save_step still wrote: {listed:?}"
    );
    Ok(())
}

async fn claim_run_once(store: &impl Checkpointer) -> Result<(), ConformanceError> {
    const CHECK: &str = "claim_run_once";
    let paused = sample_run(RunId::new(), at("2026-03-04T05:06:07Z"));
    seed(CHECK, store, &paused).await?;
    let mut claimed = paused.clone();
    claimed.status = RunStatus::Running;
    claimed.interrupts.clear();
    ensure!(
        CHECK,
        backend(CHECK, store.claim_run(&claimed, RunStatus::Paused).await)?,
        "claiming a paused run failed"
    );
    let loaded = backend(CHECK, store.load_run(&paused.run_id).await)?;
    ensure!(
        CHECK,
        loaded.as_ref() == Some(&claimed),
        "after the claim, loaded {loaded:?}"
    );
    ensure!(
        CHECK,
        !backend(CHECK, store.claim_run(&claimed, RunStatus::Paused).await)?,
        "a second claim of the same paused run succeeded"
    );
    let missing = sample_run(RunId::new(), at("2026-03-04T05:06:07Z"));
    ensure!(
        CHECK,
        !backend(CHECK, store.claim_run(&missing, RunStatus::Paused).await)?,
        "claiming a missing run succeeded"
    );
    ensure!(
        CHECK,
        backend(CHECK, store.load_run(&missing.run_id).await)?.is_none(),
        "claiming a missing run created it"
    );
    Ok(())
}

async fn take_over_once(store: &impl Checkpointer) -> Result<(), ConformanceError> {
    const CHECK: &str = "take_over_once";
    let mut running = sample_run(RunId::new(), at("2026-03-04T05:06:07Z"));
    running.status = RunStatus::Running;
    running.interrupts.clear();
    seed(CHECK, store, &running).await?;
    // The taker read the run a step behind: its stale state and progress must not be written.
    let mut mine = running.clone();
    mine.owner = Some("host-b:7:1".into());
    mine.lease_until = Some(at("2026-03-04T05:07:07Z"));
    mine.updated_at = at("2026-03-04T05:06:37Z");
    mine.steps = running.steps.saturating_sub(1);
    mine.transitions = running.transitions.saturating_sub(1);
    mine.state = serde_json::json!({"behind": true}).into();
    mine.last_node = None;
    ensure!(
        CHECK,
        !backend(
            CHECK,
            store.take_over(&mine, Some("someone-else:1:1")).await
        )?,
        "took over a run owned by someone else"
    );
    ensure!(
        CHECK,
        backend(
            CHECK,
            store.take_over(&mine, running.owner.as_deref()).await
        )?,
        "taking over from the recorded owner failed"
    );
    let loaded = backend(CHECK, store.load_run(&running.run_id).await)?;
    let mut held = running.clone();
    held.owner.clone_from(&mine.owner);
    held.lease_until = mine.lease_until;
    held.updated_at = mine.updated_at;
    ensure!(
        CHECK,
        loaded.as_ref() == Some(&held),
        "after the take-over (which changes the owner, not the state or the progress), loaded {loaded:?}"
    );
    ensure!(
        CHECK,
        !backend(
            CHECK,
            store.take_over(&mine, running.owner.as_deref()).await
        )?,
        "a second take-over from the old owner succeeded"
    );
    // The holder gives the run up as failed: status and error change, the state stays.
    let mut given_up = mine.clone();
    given_up.status = RunStatus::Failed;
    given_up.error = Some("cannot be continued".to_owned());
    given_up.owner = None;
    given_up.lease_until = None;
    ensure!(
        CHECK,
        backend(
            CHECK,
            store.take_over(&given_up, mine.owner.as_deref()).await
        )?,
        "the holder could not give the run up"
    );
    let loaded = backend(CHECK, store.load_run(&running.run_id).await)?;
    held.status = RunStatus::Failed;
    held.error.clone_from(&given_up.error);
    held.owner = None;
    held.lease_until = None;
    ensure!(
        CHECK,
        loaded.as_ref() == Some(&held),
        "after giving the run up as failed, loaded {loaded:?}"
    );
    let mut unowned = sample_run(RunId::new(), at("2026-03-04T05:06:07Z"));
    unowned.status = RunStatus::Running;
    unowned.owner = None;
    seed(CHECK, store, &unowned).await?;
    let mut taker = unowned.clone();
    taker.owner = Some("host-b:7:1".into());
    ensure!(
        CHECK,
        backend(CHECK, store.take_over(&taker, None).await)?,
        "taking over an unowned running run failed"
    );
    let paused = sample_run(RunId::new(), at("2026-03-04T05:06:07Z"));
    seed(CHECK, store, &paused).await?;
    ensure!(
        CHECK,
        !backend(
            CHECK,
            store.take_over(&paused, paused.owner.as_deref()).await
        )?,
        "took over a paused run (that is a resume's job)"
    );
    Ok(())
}

async fn save_step_is_fenced(store: &impl Checkpointer) -> Result<(), ConformanceError> {
    const CHECK: &str = "save_step_is_fenced";
    let mut run = sample_run(RunId::new(), at("2026-03-04T05:06:07Z"));
    run.status = RunStatus::Running;
    run.interrupts.clear();
    backend(
        CHECK,
        store
            .save_step(run.clone(), sample_checkpoint(&run.run_id, 1))
            .await,
    )?;
    // Another process takes the run over; the first one's next step must be refused.
    let mut taker = run.clone();
    taker.owner = Some("host-b:7:1".into());
    ensure!(
        CHECK,
        backend(CHECK, store.take_over(&taker, run.owner.as_deref()).await)?,
        "taking over from the recorded owner failed"
    );
    let mut late = run.clone();
    late.steps = 99;
    match store
        .save_step(late.clone(), sample_checkpoint(&run.run_id, 2))
        .await
    {
        Err(super::CheckpointError::Fenced { owner, .. }) => ensure!(
            CHECK,
            owner == "host-b:7:1",
            "the refusal names {owner:?}, not the new owner"
        ),
        other => ensure!(
            CHECK,
            false,
            "a step by the previous owner was not refused as fenced: {other:?}"
        ),
    }
    let loaded = backend(CHECK, store.load_run(&run.run_id).await)?;
    ensure!(
        CHECK,
        loaded.as_ref() == Some(&taker),
        "a fenced step changed the record: {loaded:?}"
    );
    let listed = backend(CHECK, store.list_checkpoints(&run.run_id).await)?;
    ensure!(
        CHECK,
        listed.len() == 1,
        "a fenced step still wrote a checkpoint: {listed:?}"
    );
    let mut next = taker.clone();
    next.steps = 5;
    backend(
        CHECK,
        store
            .save_step(next.clone(), sample_checkpoint(&run.run_id, 2))
            .await,
    )?;
    Ok(())
}

async fn claim_next_hands_out_each_ready_run_once(
    store: &impl RunQueue,
) -> Result<(), ConformanceError> {
    const CHECK: &str = "claim_next_hands_out_each_ready_run_once";
    let now = at("2026-03-04T06:00:00Z");
    let lease = at("2026-03-04T06:00:30Z");
    let running = |created: &str, owner: Option<&str>, until: Option<&str>| {
        let mut run = sample_run(RunId::new(), at(created));
        run.status = RunStatus::Running;
        run.interrupts.clear();
        run.owner = owner.map(Name::from);
        run.lease_until = until.map(at);
        run
    };
    // Ready: queued (no owner), and a lease that ran out. Not ready: a live lease, a paused
    // run, another graph's run.
    let queued = running("2026-03-04T05:00:02Z", None, None);
    let expired = running(
        "2026-03-04T05:00:01Z",
        Some("host-a:1:1"),
        Some("2026-03-04T05:59:59Z"),
    );
    let live = running(
        "2026-03-04T05:00:00Z",
        Some("host-a:2:2"),
        Some("2026-03-04T06:00:01Z"),
    );
    let paused = sample_run(RunId::new(), at("2026-03-04T04:00:00Z"));
    let mut other_graph = running("2026-03-04T04:00:00Z", None, None);
    other_graph.graph = "Other".into();
    for run in [&queued, &expired, &live, &paused, &other_graph] {
        seed(CHECK, store, run).await?;
    }
    let first = backend(CHECK, store.claim_next("Support", "w1", now, lease).await)?;
    let mut expected = expired.clone();
    expected.owner = Some("w1".into());
    expected.lease_until = Some(lease);
    ensure!(
        CHECK,
        first.as_ref() == Some(&expected),
        "the oldest ready run (lease expired) should come first, claimed by w1: {first:?}"
    );
    let second = backend(CHECK, store.claim_next("Support", "w2", now, lease).await)?;
    ensure!(
        CHECK,
        second.as_ref().map(|r| (&r.run_id, r.owner.as_deref()))
            == Some((&queued.run_id, Some("w2"))),
        "the queued run should come second, claimed by w2: {second:?}"
    );
    let third = backend(CHECK, store.claim_next("Support", "w3", now, lease).await)?;
    ensure!(
        CHECK,
        third.is_none(),
        "a live, paused or foreign run was handed out: {third:?}"
    );
    let stored = backend(CHECK, store.load_run(&queued.run_id).await)?;
    ensure!(
        CHECK,
        stored.as_ref().and_then(|r| r.owner.as_deref()) == Some("w2")
            && stored.as_ref().and_then(|r| r.lease_until) == Some(lease),
        "the claim was not stored: {stored:?}"
    );
    // Once its lease is over, a claimed run is ready again.
    let later = at("2026-03-04T06:00:31Z");
    let again = backend(CHECK, store.claim_next("Support", "w4", later, later).await)?;
    ensure!(
        CHECK,
        again.as_ref().map(|r| &r.run_id) == Some(&live.run_id),
        "after every lease ran out, the oldest run should be handed out: {again:?}"
    );
    Ok(())
}

async fn renew_lease_only_for_the_owner(store: &impl RunQueue) -> Result<(), ConformanceError> {
    const CHECK: &str = "renew_lease_only_for_the_owner";
    let mut run = sample_run(RunId::new(), at("2026-03-04T05:06:07Z"));
    run.status = RunStatus::Running;
    seed(CHECK, store, &run).await?;
    let owner = run.owner.clone().unwrap_or_default();
    let until = at("2026-03-04T07:00:00Z");
    ensure!(
        CHECK,
        backend(CHECK, store.renew_lease(&run.run_id, &owner, until).await)?,
        "the owner could not renew its lease"
    );
    let loaded = backend(CHECK, store.load_run(&run.run_id).await)?;
    ensure!(
        CHECK,
        loaded.as_ref().and_then(|r| r.lease_until) == Some(until),
        "the renewed lease was not stored: {loaded:?}"
    );
    ensure!(
        CHECK,
        !backend(
            CHECK,
            store.renew_lease(&run.run_id, "host-z:9:9", until).await
        )?,
        "someone else renewed the owner's lease"
    );
    ensure!(
        CHECK,
        !backend(CHECK, store.renew_lease(&RunId::new(), &owner, until).await)?,
        "renewed the lease of a missing run"
    );
    let paused = sample_run(RunId::new(), at("2026-03-04T05:06:07Z"));
    seed(CHECK, store, &paused).await?;
    ensure!(
        CHECK,
        !backend(
            CHECK,
            store
                .renew_lease(
                    &paused.run_id,
                    paused.owner.as_deref().unwrap_or_default(),
                    until
                )
                .await
        )?,
        "renewed the lease of a paused run"
    );
    Ok(())
}

async fn held_runs_are_the_owned_running_ones(
    store: &impl RunQueue,
) -> Result<(), ConformanceError> {
    const CHECK: &str = "held_runs_are_the_owned_running_ones";
    let running = |created: &str, owner: Option<&str>| {
        let mut run = sample_run(RunId::new(), at(created));
        run.status = RunStatus::Running;
        run.interrupts.clear();
        run.owner = owner.map(Name::from);
        run
    };
    let newer = running("2026-03-04T05:00:02Z", Some("host-a:2:2"));
    let older = running("2026-03-04T05:00:01Z", Some("host-a:1:1/worker-3"));
    let queued = running("2026-03-04T05:00:00Z", None);
    let paused = sample_run(RunId::new(), at("2026-03-04T04:00:00Z"));
    let mut foreign = running("2026-03-04T04:00:00Z", Some("host-a:3:3"));
    foreign.graph = "Other".into();
    for run in [&newer, &older, &queued, &paused, &foreign] {
        seed(CHECK, store, run).await?;
    }
    let held = backend(CHECK, store.held_runs("Support").await)?;
    let expected = vec![
        (older.run_id.clone(), "host-a:1:1/worker-3".to_owned()),
        (newer.run_id.clone(), "host-a:2:2".to_owned()),
    ];
    ensure!(
        CHECK,
        held == expected,
        "expected the two owned running runs, oldest first: {held:?}"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::InMemoryCheckpointer;

    #[tokio::test]
    async fn in_memory_checkpointer_conforms() {
        run_all(|| async { InMemoryCheckpointer::new() })
            .await
            .unwrap();
    }
}
