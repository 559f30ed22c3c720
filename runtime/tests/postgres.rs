//! `PostgresCheckpointer` and `Worker` against a real PostgreSQL server: the shared conformance
//! suite, workers racing for one queue, a worker that stops holding a lease, a run paused in one
//! store and resumed from another, corrupt rows and a newer schema reported clearly.
//!
//! The server is named by `TRELLIS_TEST_POSTGRES_URL` (`.ci/run` starts one). Without it these
//! tests fail in CI and, elsewhere, are listed as ignored.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Answer, Ticket, approval_graph, ticket};
use trellis::checkpoint::{PostgresCheckpointer, PostgresOptions, conformance};
use trellis::{
    CompiledGraph, RunId, checkpoint::CheckpointError, checkpoint::Checkpointer,
    checkpoint::RunQueue, checkpoint::RunStatus, worker::Worker,
};

/// The server's URL. The tests that need it are ignored when it was not set at build time
/// (see `build.rs`); in CI they run and fail without it.
fn database_url() -> String {
    match std::env::var("TRELLIS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "TRELLIS_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL for these tests"
        ),
    }
}

static SCHEMAS: AtomicUsize = AtomicUsize::new(0);

/// A schema no other test (or earlier run of this test) uses: an empty store.
fn fresh_schema() -> String {
    format!(
        "test_{}_{}_{}",
        std::process::id(),
        trellis::run::Timestamp::now().unix_micros(),
        SCHEMAS.fetch_add(1, Ordering::Relaxed)
    )
}

async fn store_in(url: &str, schema: &str) -> PostgresCheckpointer {
    let options = PostgresOptions {
        schema: Some(schema.to_owned()),
        ..PostgresOptions::default()
    };
    PostgresCheckpointer::connect_with(url, options)
        .await
        .expect("connects")
}

/// Runs `sql` straight in the database, as another program (or a bug) could.
async fn tamper(url: &str, schema: &str, sql: &str) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    client
        .batch_execute(&format!("SET search_path = \"{schema}\"; {sql}"))
        .await
        .expect("tampers");
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn postgres_checkpointer_passes_the_conformance_suite() {
    let url = database_url();
    conformance::run_all(|| {
        let url = url.clone();
        async move { store_in(&url, &fresh_schema()).await }
    })
    .await
    .unwrap();
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delta_checkpoints_in_postgres() {
    let url = database_url();
    let schema = fresh_schema();
    let open = async || -> Arc<dyn trellis::checkpoint::Checkpointer> {
        let store: Arc<dyn trellis::checkpoint::Checkpointer> =
            Arc::new(store_in(&url, &schema).await);
        store
    };
    common::deltas::a_long_run_reads_back_step_by_step(open().await).await;
    // Another pool on the same schema: another process.
    common::deltas::a_run_ended_between_deltas_goes_on(open().await, open().await).await;
    common::deltas::a_thread_s_runs_go_on_from_each_other(open().await).await;
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn a_paused_run_is_resumed_through_another_connection_pool() {
    let url = database_url();
    let schema = fresh_schema();
    let first = Arc::new(store_in(&url, &schema).await);
    let paused = approval_graph(first).invoke(ticket("t")).await.unwrap();
    assert!(paused.is_paused());

    // Another process (another pool) answers it.
    let second: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    let done = approval_graph(Arc::clone(&second))
        .resume(paused.run_id(), Answer::Approve)
        .await
        .unwrap();
    assert_eq!(done.state().log, ["draft", "answered send@2", "sent"]);
    let record = second.load_run(paused.run_id()).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    assert_eq!(
        common::labels(second.as_ref(), paused.run_id()).await,
        ["start", "pause:before", "resume", "complete"]
    );
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_racing_complete_every_run_exactly_once() {
    let url = database_url();
    let schema = fresh_schema();
    let executed = Arc::new(Mutex::new(HashMap::new()));
    let graph = common::counted_graph(3, Arc::clone(&executed), Duration::from_millis(1));
    let producer: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    let queue = graph.clone().with_checkpointer(Arc::clone(&producer));
    let mut ids = Vec::new();
    for i in 0..30 {
        ids.push(queue.enqueue(ticket(&format!("job {i}"))).await.unwrap());
    }

    // Two workers, each with its own pool, as two processes would have.
    let mut workers = Vec::new();
    for _ in 0..2 {
        let store: Arc<dyn RunQueue> = Arc::new(store_in(&url, &schema).await);
        let worker =
            Worker::new(graph.clone(), store).with_poll_interval(Duration::from_millis(10));
        workers.push((worker.stopper(), tokio::spawn(worker.run())));
    }
    wait_until(Duration::from_secs(60), || async {
        let mut done = 0;
        for id in &ids {
            let record = producer.load_run(id).await.unwrap().unwrap();
            done += usize::from(record.status == RunStatus::Completed);
        }
        done == ids.len()
    })
    .await;
    let mut reports = Vec::new();
    for (stop, handle) in workers {
        stop.cancel();
        reports.push(handle.await.unwrap());
    }

    assert_eq!(
        reports.iter().map(|r| r.completed).sum::<u64>(),
        30,
        "{reports:?}"
    );
    assert!(
        reports.iter().all(|r| r.failed == 0 && r.released == 0),
        "{reports:?}"
    );
    let executed = executed.lock().unwrap().clone();
    for id in &ids {
        assert_eq!(
            executed.get(id.as_str()).map(Vec::as_slice),
            Some(&[1, 2, 3][..]),
            "run {id}: every step once, in order"
        );
        let record = producer.load_run(id).await.unwrap().unwrap();
        let state: Ticket = record.state_as().unwrap();
        assert_eq!(state.log, ["tick 1", "tick 2", "tick 3"]);
    }
}

/// A fresh store holding one queued run of `counted_graph(steps, delay)`.
async fn queued(
    url: &str,
    steps: u32,
    delay: Duration,
) -> (CompiledGraph<Ticket>, Arc<dyn RunQueue>, RunId) {
    let graph = common::counted_graph(steps, common::Executed::default(), delay);
    let store: Arc<dyn RunQueue> = Arc::new(store_in(url, &fresh_schema()).await);
    let run_id = graph
        .clone()
        .with_checkpointer(store.clone())
        .enqueue(ticket("job"))
        .await
        .expect("queued");
    (graph, store, run_id)
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_worker_stopped_holding_its_lease_is_finished_by_another_after_it_expires() {
    let url = database_url();
    let (graph, store, run_id) = queued(&url, 6, Duration::from_millis(150)).await;

    // The first worker dies (its task is dropped: no more heartbeats, no more writes) after
    // two committed steps, holding a 3 s lease.
    let first = Worker::new(graph.clone(), Arc::clone(&store)).with_lease(Duration::from_secs(3));
    let first_id = first.id().to_owned();
    let dying = tokio::spawn(async move { first.run_once().await });
    wait_until(Duration::from_secs(30), || async {
        store.load_run(&run_id).await.unwrap().unwrap().steps >= 2
    })
    .await;
    dying.abort();
    let _ = dying.await;
    let abandoned = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(abandoned.status, RunStatus::Running);
    assert_eq!(abandoned.owner.as_deref(), Some(first_id.as_str()));

    // The second worker finds nothing ready while the lease holds, then takes the run.
    let second = Worker::new(graph.clone(), Arc::clone(&store));
    assert!(
        abandoned.lease_until > Some(trellis::run::Timestamp::now()),
        "the test needs a live lease here"
    );
    assert!(
        second.run_once().await.unwrap().is_none(),
        "lease still held"
    );
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let handled = second.run_once().await.unwrap().expect("the expired run");
    assert_eq!(handled.run_id, run_id);
    let state = handled.result.unwrap().into_state();
    let expected: Vec<String> = (1..=6).map(|n| format!("tick {n}")).collect();
    assert_eq!(
        state.log, expected,
        "no committed step lost or applied twice"
    );
    let record = store.load_run(&run_id).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    assert_eq!(record.owner.as_deref(), Some(second.id()));
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_lost_its_lease_cannot_write_over_the_new_owner() {
    let url = database_url();
    // Each step takes longer than the lease; the heartbeat keeps it.
    let (graph, store, run_id) = queued(&url, 2, Duration::from_millis(700)).await;
    let worker =
        Worker::new(graph.clone(), Arc::clone(&store)).with_lease(Duration::from_millis(300));
    let handled = worker.run_once().await.unwrap().expect("ready");
    assert_eq!(
        handled.result.unwrap().into_state().log,
        ["tick 1", "tick 2"],
        "nodes longer than the lease: the heartbeat kept it"
    );

    // Now a run taken over behind its worker's back: its next step is refused.
    let run_id2 = graph
        .clone()
        .with_checkpointer(Arc::clone(&store))
        .enqueue(ticket("job 2"))
        .await
        .unwrap();
    let slow = Worker::new(graph.clone(), Arc::clone(&store)).with_lease(Duration::from_secs(60));
    let running = tokio::spawn(async move { slow.run_once().await });
    wait_until(Duration::from_secs(10), || async {
        store
            .load_run(&run_id2)
            .await
            .unwrap()
            .unwrap()
            .owner
            .is_some()
    })
    .await;
    let mut stolen = store.load_run(&run_id2).await.unwrap().unwrap();
    let previous = stolen.owner.clone();
    stolen.owner = Some("thief:1:1".into());
    assert!(store.take_over(&stolen, previous.as_deref()).await.unwrap());
    let handled = running.await.unwrap().unwrap().expect("claimed");
    let error = handled.result.unwrap_err();
    assert!(
        error.to_string().contains("is now executed by thief:1:1"),
        "{error}"
    );
    let record = store.load_run(&run_id2).await.unwrap().unwrap();
    assert_eq!(record.owner.as_deref(), Some("thief:1:1"));
    assert_eq!(record.steps, 0, "the late step was not written");
    let _ = run_id;
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn corrupt_rows_and_a_newer_schema_are_clear_errors() {
    let url = database_url();
    let schema = fresh_schema();
    let store = Arc::new(store_in(&url, &schema).await);
    let paused = approval_graph(Arc::clone(&store))
        .invoke(ticket("t"))
        .await
        .unwrap();
    let run_id = paused.run_id().clone();

    tamper(&url, &schema, "UPDATE trellis_runs SET status = 'sleeping'").await;
    let error = store.load_run(&run_id).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "stored column `status` of run {run_id} is unreadable: unknown status \"sleeping\""
        )
    );
    assert!(
        store.list_runs(10, 0).await.is_err(),
        "listing reports it too"
    );
    tamper(&url, &schema, "UPDATE trellis_runs SET status = 'paused'").await;

    let latest = store.list_checkpoints(&run_id).await.unwrap().len();
    tamper(
        &url,
        &schema,
        &format!("UPDATE trellis_checkpoints SET label = 'paused' WHERE id = {latest}"),
    )
    .await;
    let error = store.latest_checkpoint(&run_id).await.unwrap_err();
    assert!(
        error.to_string().starts_with(&format!(
            "stored column `label` of checkpoint {latest} of run {run_id} is unreadable: unknown checkpoint label `paused`"
        )),
        "{error}"
    );
    tamper(
        &url,
        &schema,
        &format!("UPDATE trellis_checkpoints SET label = 'pause:before', detail = '{{\"nodes\": 3}}' WHERE id = {latest}"),
    )
    .await;
    let error = store.latest_checkpoint(&run_id).await.unwrap_err();
    assert!(
        matches!(error, CheckpointError::Corrupt { ref what, .. } if what == &format!("column `detail` of checkpoint {latest} of run {run_id}")),
        "{error:?}"
    );
    // A foreign state (valid JSON, not a `Ticket`): the resume is refused, nothing panics.
    tamper(
        &url,
        &schema,
        "UPDATE trellis_checkpoints SET detail = (SELECT detail FROM trellis_checkpoints WHERE id = 2), state = '[1, 2]' WHERE id = 3",
    )
    .await;
    let error = approval_graph(Arc::clone(&store))
        .resume(&run_id, Answer::Approve)
        .await
        .unwrap_err();
    assert!(error.to_string().contains(&run_id.to_string()), "{error}");

    tamper(&url, &schema, "UPDATE trellis_schema SET version = 99").await;
    let options = PostgresOptions {
        schema: Some(schema.clone()),
        ..PostgresOptions::default()
    };
    let error = PostgresCheckpointer::connect_with(&url, options)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "stored database schema is unreadable: schema version 99 is not one this build knows (it reads versions up to 6); use a newer trellis"
    );
}

#[tokio::test]
async fn an_unreachable_server_is_a_clear_error() {
    // A port nobody listens on (the URL's own server's port + 1 may be taken; 1 never is).
    let error = PostgresCheckpointer::connect("postgres://nobody@127.0.0.1:1/none")
        .await
        .unwrap_err();
    assert!(
        error.to_string().starts_with("checkpoint storage failed: "),
        "{error}"
    );
    let error = PostgresCheckpointer::connect("postgres://[broken")
        .await
        .unwrap_err();
    assert!(
        error.to_string().starts_with("checkpoint storage failed: "),
        "{error}"
    );
}

/// Polls `done` every 20 ms until it holds; panics after `limit` (a hung test, not a timing
/// assertion).
async fn wait_until<F, Fut>(limit: Duration, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    while !done().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not done after {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn time_travel_and_retries_work_on_postgres() {
    use common::travel;
    let url = database_url();
    let fresh = || async {
        let store: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &fresh_schema()).await);
        store
    };
    travel::history_is_newest_first_with_typed_states(fresh().await).await;
    travel::replay_branches_and_leaves_the_original_alone(fresh().await).await;
    travel::replaying_a_pause_asks_again(fresh().await).await;
    travel::update_state_forks_with_an_edit(fresh().await).await;
    travel::retry_goes_on_from_the_last_committed_checkpoint(fresh().await).await;
    travel::two_retries_one_winner(fresh().await).await;
    travel::every_way_a_run_goes_on_streams(fresh().await).await;
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn a_database_of_the_first_schema_is_brought_up_to_date_and_keeps_its_runs() {
    let url = database_url();
    let schema = fresh_schema();
    let store = Arc::new(store_in(&url, &schema).await);
    // Every checkpoint whole, as builds before delta checkpoints wrote them.
    let paused = approval_graph(Arc::clone(&store))
        .with_snapshot_every(1)
        .invoke(ticket("t"))
        .await
        .unwrap();
    drop(store);
    // As a build of schema 1 left it.
    tamper(
        &url,
        &schema,
        "DROP TABLE trellis_threads;
         ALTER TABLE trellis_checkpoints DROP COLUMN base, DROP COLUMN base_run;
         ALTER TABLE trellis_runs DROP COLUMN metadata;
         ALTER TABLE trellis_runs DROP COLUMN thread_id;
         ALTER TABLE trellis_runs DROP COLUMN parent_run, DROP COLUMN parent_checkpoint;
         DROP FUNCTION trellis_announce_run CASCADE;
         DROP FUNCTION trellis_announce_checkpoint CASCADE;
         UPDATE trellis_schema SET version = 1",
    )
    .await;
    let store: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    let record = store.load_run(paused.run_id()).await.unwrap().unwrap();
    assert_eq!((record.status, record.parent), (RunStatus::Paused, None));
    let graph = approval_graph(Arc::clone(&store));
    let done = graph
        .resume(paused.run_id(), Answer::Approve)
        .await
        .unwrap();
    assert_eq!(done.state().log, ["draft", "answered send@2", "sent"]);
    let branch = graph.replay(paused.run_id(), 1).await.unwrap();
    let record = store.load_run(branch.run_id()).await.unwrap().unwrap();
    assert_eq!(record.parent.map(|p| p.checkpoint), Some(1));
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn a_join_waits_across_a_pause_resumed_through_another_pool() {
    let url = database_url();
    let schema = fresh_schema();
    let first: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    let second: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    common::joins::a_join_waits_across_a_pause(first, second).await;
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn sent_branches_wait_across_a_pause_resumed_through_another_pool() {
    let url = database_url();
    let schema = fresh_schema();
    let first: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    let second: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    common::sends::sent_branches_wait_across_a_pause(first, second).await;
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn a_pause_inside_a_subgraph_resumes_through_another_pool() {
    let url = database_url();
    let schema = fresh_schema();
    let first: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    let second: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    common::subgraphs::a_pause_inside_a_subgraph_resumes_in_another_process(first, second).await;
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn replaying_a_pause_inside_a_subgraph_copies_the_child() {
    let store: Arc<dyn Checkpointer> = Arc::new(store_in(&database_url(), &fresh_schema()).await);
    common::subgraphs::replaying_a_pause_inside_a_subgraph_copies_the_child(store).await;
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn a_siblings_write_outlives_a_pause_inside_a_subgraph_through_another_pool() {
    let url = database_url();
    for depth in [1, 2] {
        let schema = fresh_schema();
        let first: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
        let second: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
        common::subgraphs::a_siblings_write_outlives_a_pause_inside_a_subgraph(
            first, second, depth,
        )
        .await;
    }
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn a_sent_branch_resumes_to_itself_with_its_input_through_another_pool() {
    let url = database_url();
    let schema = fresh_schema();
    let first: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    let second: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    common::sends::a_sent_branch_resumes_to_itself_with_its_input(first, second).await;
}

/// The second process of the test below: set by it, this test resumes the paused run.
const SECOND_PROCESS: &str = "TRELLIS_TEST_SUBGRAPH_RESUME_PG";

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn a_pause_inside_a_subgraph_is_resumed_by_another_os_process() {
    const TEST: &str = "a_pause_inside_a_subgraph_is_resumed_by_another_os_process";
    let url = database_url();
    if let Ok(given) = std::env::var(SECOND_PROCESS) {
        let (schema, run_id) = given.split_once('|').expect("schema|run");
        let store: Arc<dyn Checkpointer> = Arc::new(store_in(&url, schema).await);
        common::subgraphs::resume_in_this_process(store, run_id).await;
        return;
    }
    let schema = fresh_schema();
    let store: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &schema).await);
    common::subgraphs::resumed_by_another_os_process(store, |run_id| {
        common::subgraphs::this_test_again(TEST, SECOND_PROCESS, format!("{schema}|{run_id}"))
    })
    .await;
}

/// Two processes on one database (two pools here): a run queued and stepped through one wakes
/// the other's workers and watchers, through `LISTEN`/`NOTIFY`; writes in another schema (another
/// application's tables) wake nobody.
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_s_writes_wake_this_one_s_waiters() {
    let url = database_url();
    let schema = fresh_schema();
    let here = trellis::checkpoint::Announced::wrap(Arc::new(store_in(&url, &schema).await));
    let there: Arc<dyn RunQueue> = Arc::new(store_in(&url, &schema).await);
    let elsewhere: Arc<dyn RunQueue> = Arc::new(store_in(&url, &fresh_schema()).await);
    let changes = here.changes().expect("announces");
    let mut ready = changes.watch_ready("Approval");
    let heard = |ready: &mut trellis::checkpoint::ReadyWatch| {
        futures_util::FutureExt::now_or_never(ready.changed()).is_some()
    };

    // The listener connects in the background: runs are queued over there until one is heard.
    let mut queued = None;
    for _ in 0..60 {
        queued = Some(
            approval_graph(Arc::clone(&there))
                .enqueue(ticket("t"))
                .await
                .unwrap(),
        );
        if tokio::time::timeout(Duration::from_millis(500), ready.changed())
            .await
            .is_ok()
        {
            break;
        }
    }
    assert!(queued.is_some(), "runs were queued");
    tokio::time::sleep(Duration::from_millis(500)).await;
    heard(&mut ready); // what the attempts before the first heard one sent late
    approval_graph(Arc::clone(&elsewhere))
        .enqueue(ticket("x"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !heard(&mut ready),
        "a run queued in another schema is not heard"
    );

    // A run queued and stepped by the other process wakes this one's workers and watchers.
    let run_id = approval_graph(Arc::clone(&there))
        .enqueue(ticket("t"))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), ready.changed())
        .await
        .expect("the other process's queued run was heard");
    let mut watch = changes.watch_run(&run_id);
    let worker = Worker::new(approval_graph(Arc::clone(&there)), Arc::clone(&there));
    while worker.run_once().await.unwrap().is_some() {}
    tokio::time::timeout(Duration::from_secs(30), watch.changed())
        .await
        .expect("the other process's steps were heard");
    assert_eq!(
        here.load_run(&run_id).await.unwrap().unwrap().status,
        RunStatus::Paused
    );
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn threads_carry_state_and_run_one_at_a_time_on_postgres() {
    let url = database_url();
    let store: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &fresh_schema()).await);
    common::threads::all(store).await;
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_on_postgres() {
    let url = database_url();
    let fresh = async || -> Arc<dyn Checkpointer> {
        let store: Arc<dyn Checkpointer> = Arc::new(store_in(&url, &fresh_schema()).await);
        store
    };
    common::retention::keep_last_per_thread(fresh().await).await;
    common::retention::by_age_and_per_graph(fresh().await).await;
    common::retention::a_compacted_thread_goes_on(fresh().await).await;
}
