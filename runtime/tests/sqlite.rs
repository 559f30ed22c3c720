//! `SqliteCheckpointer`: the shared conformance suite, runs that outlive their store, and
//! corrupt or foreign files reported clearly.

mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Answer, Ticket, TicketUpdate, approval_graph, ticket};
use trellis::checkpoint::{Durability, SqliteCheckpointer, conformance};
use trellis::{
    END, GraphBuilder, NodeResult, START, checkpoint::CheckpointError, checkpoint::Checkpointer,
    checkpoint::RunStatus,
};

/// A fresh database file's path, and the folder that holds it (removed when dropped).
fn fresh_path() -> (tempfile::TempDir, PathBuf) {
    let scratch = common::scratch("sqlite");
    let path = scratch.path().join("runs.db");
    (scratch, path)
}

#[tokio::test]
async fn sqlite_checkpointer_passes_the_conformance_suite() {
    let scratch = common::scratch("sqlite-conformance");
    let files = AtomicUsize::new(0);
    let fresh = || {
        let file = files.fetch_add(1, Ordering::Relaxed);
        scratch.path().join(format!("runs-{file}.db"))
    };
    conformance::run_all(|| async { SqliteCheckpointer::open(fresh()).expect("opens") })
        .await
        .unwrap();
    conformance::run_all(|| async {
        SqliteCheckpointer::open_with(fresh(), Durability::Normal).expect("opens")
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delta_checkpoints_in_sqlite() {
    let (_scratch, path) = fresh_path();
    let open = || -> Arc<dyn trellis::checkpoint::Checkpointer> {
        Arc::new(SqliteCheckpointer::open(&path).expect("opens"))
    };
    common::deltas::a_long_run_reads_back_step_by_step(open()).await;
    common::deltas::a_run_ended_between_deltas_goes_on(open(), open()).await;
    common::deltas::a_thread_s_runs_go_on_from_each_other(open()).await;
}

/// A thread's next run writes its first checkpoint as the changes since the run before's
/// last: a thread of 21 runs has a whole checkpoint in eight, not one a run.
#[tokio::test]
async fn a_thread_s_next_run_goes_on_from_the_last_without_a_whole_state() {
    let (_scratch, path) = fresh_path();
    let store: Arc<dyn trellis::checkpoint::Checkpointer> =
        Arc::new(SqliteCheckpointer::open(&path).expect("opens"));
    let graph = common::deltas::journal_graph(store, 3, 0, Arc::default());
    let thread = graph.create_thread(Default::default()).await.unwrap();
    for _ in 0..21 {
        thread.invoke(Default::default()).await.unwrap();
    }
    let connection = rusqlite::Connection::open(&path).expect("opens");
    let count = |sql: &str| -> i64 { connection.query_row(sql, [], |row| row.get(0)).unwrap() };
    let (all, across, whole) = (
        count("SELECT count(*) FROM checkpoints"),
        count("SELECT count(*) FROM checkpoints WHERE base_run IS NOT NULL"),
        count("SELECT count(*) FROM checkpoints WHERE base IS NULL"),
    );
    // The first run: a start and three steps; then a start and a step a run.
    assert_eq!(all, 4 + 2 * 20);
    // One whole in eight, across runs: 44 checkpoints, 6 whole; the 15 runs that did not start
    // with a whole one went on from the run before.
    assert_eq!((whole, across), (6, 15));
}

/// A step stores what it changed: a checkpoint's row holds the changes since the one before,
/// a few hundred bytes whatever the state has grown to, but for one whole checkpoint in eight.
#[tokio::test]
async fn a_step_stores_its_change_not_the_whole_state() {
    let (_scratch, path) = fresh_path();
    let store: Arc<dyn trellis::checkpoint::Checkpointer> =
        Arc::new(SqliteCheckpointer::open(&path).expect("opens"));
    let graph = common::deltas::journal_graph(store, 40, 0, Arc::default());
    graph.invoke(Default::default()).await.unwrap();
    let connection = rusqlite::Connection::open(&path).expect("opens");
    let mut statement = connection
        .prepare("SELECT id, base, length(state) FROM checkpoints ORDER BY key")
        .unwrap();
    let rows: Vec<(i64, Option<i64>, i64)> = statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 41);
    let (mut whole_lengths, mut longest_delta) = (Vec::new(), 0);
    for (id, base, length) in rows {
        if (id - 1) % 8 == 0 {
            assert_eq!(base, None, "checkpoint {id} is whole");
            whole_lengths.push(length);
        } else {
            assert_eq!(
                base,
                Some(id - 1),
                "checkpoint {id} holds the changes since {}",
                id - 1
            );
            assert!(length < 200, "checkpoint {id} holds {length} bytes");
            longest_delta = longest_delta.max(length);
        }
    }
    // The whole ones grow with the state; the deltas do not.
    assert!(
        whole_lengths.windows(2).all(|pair| pair[0] < pair[1]),
        "{whole_lengths:?}"
    );
    assert!(
        whole_lengths
            .last()
            .is_some_and(|&last| last > 4 * longest_delta),
        "{whole_lengths:?} against deltas of at most {longest_delta} bytes"
    );
}

/// A state that cannot say what a step changed (a `WholeState`, here not even a JSON object)
/// has every checkpoint whole, and reads back as it was.
#[tokio::test]
async fn a_whole_state_is_written_whole_every_step() {
    #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
    struct Note(String);
    impl trellis::WholeState for Note {}
    let (_scratch, path) = fresh_path();
    let store = Arc::new(SqliteCheckpointer::open(&path).expect("opens"));
    let mut builder = GraphBuilder::<Note>::new("Notes");
    builder
        .add_node_fn("a", |_, _| async {
            Ok(NodeResult::Update(Note("a".into())))
        })
        .add_node_fn("b", |_, _| async {
            Ok(NodeResult::Update(Note("ab".into())))
        })
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", END);
    let graph = builder
        .compile()
        .expect("valid graph")
        .with_checkpointer(Arc::clone(&store));
    let done = graph.invoke(Note::default()).await.unwrap();
    let states: Vec<serde_json::Value> = store
        .list_checkpoints(done.run_id())
        .await
        .unwrap()
        .iter()
        .map(|c| (*c.state).clone())
        .collect();
    assert_eq!(
        states,
        [
            serde_json::json!(""),
            serde_json::json!("a"),
            serde_json::json!("ab")
        ]
    );
    let deltas: i64 = rusqlite::Connection::open(&path)
        .expect("opens")
        .query_row(
            "SELECT count(*) FROM checkpoints WHERE base IS NOT NULL",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(deltas, 0);
}

#[tokio::test]
async fn a_paused_run_is_resumed_from_the_file_by_a_new_store() {
    let (_scratch, path) = fresh_path();
    let run_id = {
        let store = Arc::new(SqliteCheckpointer::open(&path).expect("opens"));
        let paused = approval_graph(store).invoke(ticket("t")).await.unwrap();
        assert!(paused.is_paused());
        paused.run_id().clone()
        // Graph and store are dropped here, as when a process exits.
    };
    let store = Arc::new(SqliteCheckpointer::open(&path).expect("reopens"));
    let record = store.load_run(&run_id).await.unwrap().expect("recorded");
    assert_eq!(record.status, RunStatus::Paused);
    assert_eq!(record.interrupts[0].id, "send@2");
    let done = approval_graph(Arc::clone(&store))
        .resume(&run_id, Answer::Approve)
        .await
        .unwrap();
    assert_eq!(done.state().log, ["draft", "answered send@2", "sent"]);
    let checkpoints = store.list_checkpoints(&run_id).await.unwrap();
    let labels: Vec<String> = checkpoints.iter().map(|c| c.label.to_string()).collect();
    // The step after which the run paused wrote the pause (one checkpoint, not two): the
    // nodes it ran, and the one that asks first still ahead.
    assert_eq!(labels, ["start", "pause:before", "resume", "complete"]);
    let pause = &checkpoints[1];
    assert_eq!((pause.step, &pause.nodes[..]), (1, &["draft".into()][..]));
    assert_eq!(pause.frontier, ["send"]);
}

/// Writes `sql` straight into the file, as another program (or a bug) could.
fn tamper(path: &PathBuf, sql: &str) {
    let connection = rusqlite::Connection::open(path).expect("opens");
    connection.execute_batch(sql).expect("tampers");
}

#[tokio::test]
async fn corrupt_rows_are_clear_errors_naming_the_row_and_column() {
    let (_scratch, path) = fresh_path();
    let store = Arc::new(SqliteCheckpointer::open(&path).expect("opens"));
    let paused = approval_graph(Arc::clone(&store))
        .invoke(ticket("t"))
        .await
        .unwrap();
    let run_id = paused.run_id().clone();

    tamper(&path, "UPDATE runs SET state = '{not json'");
    let error = store.load_run(&run_id).await.unwrap_err();
    assert!(
        matches!(error, CheckpointError::Corrupt { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().starts_with(&format!(
            "stored column `state` of run {run_id} is unreadable: "
        )),
        "{error}"
    );
    assert!(
        store.list_runs(10, 0).await.is_err(),
        "listing reports it too"
    );
    let resume = approval_graph(Arc::clone(&store))
        .resume(&run_id, Answer::Approve)
        .await;
    assert!(resume.is_err(), "a corrupt run is not resumed");

    let latest = store.list_checkpoints(&run_id).await.unwrap().len();
    tamper(
        &path,
        &format!("UPDATE checkpoints SET label = 'paused' WHERE id = {latest}"),
    );
    let error = store.latest_checkpoint(&run_id).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "stored column `label` of checkpoint {latest} of run {run_id} is unreadable: unknown checkpoint label `paused`: expected start, step, pause:<kind>, resume, complete, failed, retry, fork or update"
        )
    );
    // A row whose shape is gone names no graph: refused, not read as some other graph's.
    tamper(&path, "UPDATE checkpoints SET shape = NULL WHERE id = 1");
    let error = store.checkpoint(&run_id, 1).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "stored column `detail` of checkpoint 1 of run {run_id} is unreadable: it names no graph fingerprint and no state type"
        )
    );
}

#[test]
fn a_file_from_a_newer_schema_is_refused() {
    let (_scratch, path) = fresh_path();
    drop(SqliteCheckpointer::open(&path).expect("creates"));
    tamper(&path, "PRAGMA user_version = 99");
    let error = SqliteCheckpointer::open(&path).unwrap_err();
    assert_eq!(
        error.to_string(),
        "stored database schema is unreadable: schema version 99 is not one this build knows (it reads versions up to 10); use a newer trellis"
    );
}

#[test]
fn a_file_that_is_not_a_database_is_a_backend_error() {
    let (_scratch, path) = fresh_path();
    std::fs::write(
        &path,
        "just some text, not SQLite at all ........................",
    )
    .expect("writes");
    let error = SqliteCheckpointer::open(&path).unwrap_err();
    assert!(matches!(error, CheckpointError::Backend(_)), "{error:?}");
}

#[tokio::test]
async fn the_run_record_follows_every_step_though_a_step_writes_one_row() {
    let (_scratch, path) = fresh_path();
    let store = Arc::new(SqliteCheckpointer::open_with(&path, Durability::Normal).expect("opens"));
    let mut builder = GraphBuilder::<Ticket>::new("Loop");
    builder
        .add_node_fn("tick", |s, _| async move {
            let n = s.reviews + 1;
            Ok(NodeResult::Update(
                TicketUpdate::default().reviews(1).log(format!("tick {n}")),
            ))
        })
        .add_edge(START, "tick")
        .add_conditional_edges(
            "tick",
            |s: &Ticket| if s.reviews < 6 { "tick" } else { END },
            ["tick", END],
        )
        .set_checkpointer(Arc::clone(&store));
    let graph = builder.compile().expect("valid graph");
    let mut run = graph.start(ticket("t"));
    for step in 1..=5_u64 {
        run.step().await.unwrap();
        // A fresh store on the same file reads what another process would.
        let reader = SqliteCheckpointer::open(&path).expect("opens");
        let record = reader.load_run(run.run_id()).await.unwrap().unwrap();
        assert_eq!(record.steps, step);
        assert_eq!(record.transitions, step);
        assert_eq!(record.last_node.as_deref(), Some("tick"));
        assert_eq!(record.status, RunStatus::Running);
        let state: Ticket = record.state_as().unwrap();
        assert_eq!(state.reviews, u32::try_from(step).unwrap());
        let latest = reader
            .latest_checkpoint(run.run_id())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(record.updated_at, latest.created_at);
        let listed = reader.list_runs(1, 0).await.unwrap();
        assert_eq!(
            listed,
            [reader.load_run(run.run_id()).await.unwrap().unwrap()]
        );
        // What the record says came from the checkpoint: the run's row itself is as the start
        // wrote it (an ordinary step writes one row, its checkpoint).
        let row_steps: i64 = rusqlite::Connection::open(&path)
            .expect("opens")
            .query_row("SELECT steps FROM runs", [], |row| row.get(0))
            .expect("one run");
        assert_eq!(row_steps, 0, "step {step} rewrote the run's row");
    }
    let done = run.run_to_end().await.unwrap();
    let record = store.load_run(done.run_id()).await.unwrap().unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    assert_eq!(record.steps, 6);
    let state: Ticket = record.state_as().unwrap();
    assert_eq!(state.reviews, 6);
}

/// Turns a file of this build back into one a build of schema 3 left: checkpoints in a
/// `WITHOUT ROWID` table keyed by run id and id, runs without numbers, parents, threads or
/// metadata, each checkpoint's graph fingerprint and state type in its detail.
const BACK_TO_SCHEMA_3: &str = "UPDATE checkpoints SET detail = json_set(detail,
        '$.graph_fingerprint', s.graph_fingerprint, '$.state_type', s.state_type)
        FROM shapes s WHERE s.id = checkpoints.shape;
    DROP TABLE shapes;
    ALTER TABLE runs DROP COLUMN metadata;
    DROP TABLE threads;
    DROP INDEX runs_thread;
    ALTER TABLE runs DROP COLUMN thread_id;
    CREATE TABLE checkpoints_3 (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        step INTEGER NOT NULL,
        label TEXT NOT NULL,
        created_at TEXT NOT NULL,
        state TEXT NOT NULL,
        detail TEXT NOT NULL,
        run_last_node TEXT,
        run_transitions INTEGER,
        PRIMARY KEY (run_id, id)
    ) WITHOUT ROWID;
    INSERT INTO checkpoints_3 SELECT r.run_id, c.id, c.step, c.label, c.created_at, c.state,
        c.detail, c.run_last_node, c.run_transitions
        FROM checkpoints c JOIN runs r ON r.seq = c.key >> 32;
    DROP TABLE checkpoints;
    DROP INDEX runs_ready;
    DROP INDEX runs_seq;
    ALTER TABLE runs DROP COLUMN seq;
    ALTER TABLE checkpoints_3 RENAME TO checkpoints;
    ALTER TABLE runs DROP COLUMN parent_run;
    ALTER TABLE runs DROP COLUMN parent_checkpoint;
    PRAGMA user_version = 3";

#[tokio::test]
async fn a_file_of_an_earlier_schema_is_brought_up_to_date_and_keeps_its_runs() {
    let (_scratch, path) = fresh_path();
    // Two runs, each with checkpoints, so that each must find its own after the migration.
    // Every checkpoint whole, as builds before delta checkpoints wrote them.
    let (paused, looped) = {
        let store = Arc::new(SqliteCheckpointer::open(&path).expect("creates"));
        let paused = approval_graph(Arc::clone(&store))
            .with_snapshot_every(1)
            .invoke(ticket("t"))
            .await
            .unwrap();
        let looped = ticking(store)
            .with_snapshot_every(1)
            .invoke(ticket("l"))
            .await
            .unwrap();
        (paused, looped)
    };
    let before = {
        let store = SqliteCheckpointer::open(&path).expect("reopens");
        let mut before = Vec::new();
        for run in [paused.run_id(), looped.run_id()] {
            let checkpoints = store.list_checkpoints(run).await.unwrap();
            before.push(serde_json::to_value(checkpoints).unwrap());
        }
        before
    };
    tamper(&path, BACK_TO_SCHEMA_3);
    let store = Arc::new(SqliteCheckpointer::open(&path).expect("migrates"));
    for (run, before) in [paused.run_id(), looped.run_id()].into_iter().zip(&before) {
        let checkpoints = store.list_checkpoints(run).await.unwrap();
        assert_eq!(&serde_json::to_value(&checkpoints).unwrap(), before);
        let latest = store.latest_checkpoint(run).await.unwrap().unwrap();
        assert_eq!(Some(&latest.id), checkpoints.last().map(|c| &c.id));
        let first = store.checkpoint(run, 1).await.unwrap().unwrap();
        assert_eq!((&first.run_id, first.id), (run, 1));
    }
    let record = store.load_run(looped.run_id()).await.unwrap().unwrap();
    assert_eq!((record.status, record.steps), (RunStatus::Completed, 100));
    let state: Ticket = record.state_as().unwrap();
    assert_eq!(state.reviews, 100);
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
    // A run started after the migration numbers its checkpoints apart from the others'.
    let fresh = ticking(Arc::clone(&store))
        .invoke(ticket("f"))
        .await
        .unwrap();
    let checkpoints = store.list_checkpoints(fresh.run_id()).await.unwrap();
    assert!(checkpoints.iter().all(|c| &c.run_id == fresh.run_id()));
    assert_eq!(checkpoints.len(), before_len(&before[1]));
}

/// How many checkpoints a listing held.
fn before_len(listing: &serde_json::Value) -> usize {
    listing.as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn a_file_whose_checkpoints_a_migration_would_lose_is_refused_whole() {
    let (_scratch, path) = fresh_path();
    {
        let store = Arc::new(SqliteCheckpointer::open(&path).expect("creates"));
        approval_graph(store).invoke(ticket("t")).await.unwrap();
    }
    tamper(&path, BACK_TO_SCHEMA_3);
    // A checkpoint whose run is gone: written by hand, no build writes one.
    tamper(
        &path,
        "PRAGMA foreign_keys = OFF;
         INSERT INTO checkpoints (run_id, id, step, label, created_at, state, detail)
         SELECT 'gone', id, step, label, created_at, state, detail FROM checkpoints LIMIT 1",
    );
    let error = SqliteCheckpointer::open(&path).unwrap_err();
    assert_eq!(
        error.to_string(),
        "stored database schema is unreadable: 1 checkpoint(s) have no run or an id past 32 bits: the file cannot be brought to schema 5 without losing them; remove them, or open the file with a build of schema 4"
    );
    // Nothing was changed: the file is still of schema 3, its checkpoints all there.
    let connection = rusqlite::Connection::open(&path).expect("opens");
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    let count: i64 = connection
        .query_row("SELECT count(*) FROM checkpoints", [], |row| row.get(0))
        .unwrap();
    assert_eq!(
        version, 4,
        "migrated up to the refused step, and no further"
    );
    assert!(count > 1);
}

/// A loop of `tick`s, checkpointed in `store`: every step after the first is progress only.
fn ticking(store: Arc<SqliteCheckpointer>) -> trellis::CompiledGraph<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Loop");
    builder
        .add_node_fn("tick", |_, _| async move {
            Ok(NodeResult::Update(TicketUpdate::default().reviews(1)))
        })
        .add_edge(START, "tick")
        .add_conditional_edges(
            "tick",
            |s: &Ticket| if s.reviews < 100 { "tick" } else { END },
            ["tick", END],
        )
        .set_checkpointer(store);
    builder.compile().expect("valid graph")
}

/// A checkpoint's row names its graph fingerprint and state type by the number of a `shapes`
/// row, kept once: two graphs' runs make two such rows however many steps they take, a store
/// opened anew finds them rather than adding more, and every checkpoint reads back naming the
/// graph that wrote it.
#[tokio::test]
async fn each_graph_s_fingerprint_is_kept_once_and_every_checkpoint_reads_its_own() {
    let (_scratch, path) = fresh_path();
    let store = Arc::new(SqliteCheckpointer::open(&path).expect("opens"));
    let looping = ticking(Arc::clone(&store));
    let approving = approval_graph(Arc::clone(&store));
    let looped = looping.invoke(ticket("l")).await.unwrap();
    let paused = approving.invoke(ticket("t")).await.unwrap();
    let reopened = Arc::new(SqliteCheckpointer::open(&path).expect("opens again"));
    let again = ticking(Arc::clone(&reopened))
        .invoke(ticket("m"))
        .await
        .unwrap();
    let connection = rusqlite::Connection::open(&path).expect("opens");
    let count = |sql: &str| -> i64 { connection.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT count(*) FROM shapes"), 2);
    assert_eq!(
        count(
            "SELECT count(*) FROM checkpoints
             WHERE shape IS NULL OR detail LIKE '%graph_fingerprint%' OR detail LIKE '%state_type%'"
        ),
        0,
        "every row names its shape by number"
    );
    for (run, graph) in [
        (looped.run_id(), looping.fingerprint()),
        (paused.run_id(), approving.fingerprint()),
        (again.run_id(), looping.fingerprint()),
    ] {
        let checkpoints = reopened.list_checkpoints(run).await.unwrap();
        assert!(checkpoints.len() > 1);
        for checkpoint in checkpoints {
            assert_eq!(checkpoint.graph_fingerprint.as_str(), graph);
            assert!(
                checkpoint.state_type.as_str().ends_with("Ticket"),
                "{}",
                checkpoint.state_type
            );
        }
    }
    assert_ne!(looping.fingerprint(), approving.fingerprint());
}

/// A step that no longer owns its run is refused however the run was taken: the store keeps
/// the row its last step read, so each way the row can change must be seen to.
#[tokio::test]
async fn a_run_taken_over_between_steps_is_fenced_whoever_took_it() {
    for through_another_connection in [false, true] {
        let (_scratch, path) = fresh_path();
        let store =
            Arc::new(SqliteCheckpointer::open_with(&path, Durability::Normal).expect("opens"));
        let graph = ticking(Arc::clone(&store));
        let mut run = graph.start(ticket("t"));
        // Enough steps that the row is known and checked by `data_version` alone.
        for _ in 0..4 {
            run.step().await.unwrap();
        }
        let record = store.load_run(run.run_id()).await.unwrap().unwrap();
        let mut taker = record.clone();
        taker.owner = Some("host-b:7:1".into());
        let taken = if through_another_connection {
            let other = SqliteCheckpointer::open(&path).expect("opens");
            other.take_over(&taker, record.owner.as_deref()).await
        } else {
            store.take_over(&taker, record.owner.as_deref()).await
        };
        assert!(taken.unwrap(), "the take-over failed");
        let before = store.list_checkpoints(run.run_id()).await.unwrap().len();
        match run.step().await {
            Err(trellis::RunError::Checkpoint(CheckpointError::Fenced { owner, .. })) => {
                assert_eq!(owner, "host-b:7:1");
            }
            other => panic!(
                "a step after a take-over (another connection: {through_another_connection}) was not fenced: {other:?}"
            ),
        }
        let after = store.list_checkpoints(run.run_id()).await.unwrap().len();
        assert_eq!(before, after, "a fenced step wrote a checkpoint");
    }
}

/// Runs taking turns on one store each see their own row, and another connection's commit
/// between two steps of a run (here a second run started through another connection) does
/// not make the first one's steps fail.
#[tokio::test]
async fn runs_taking_turns_and_other_writers_leave_each_run_s_steps_going() {
    let (_scratch, path) = fresh_path();
    let store = Arc::new(SqliteCheckpointer::open_with(&path, Durability::Normal).expect("opens"));
    let graph = ticking(Arc::clone(&store));
    let mut first = graph.start(ticket("a"));
    let mut second = graph.start(ticket("b"));
    let other = Arc::new(SqliteCheckpointer::open(&path).expect("opens"));
    let elsewhere = ticking(Arc::clone(&other));
    let mut third = elsewhere.start(ticket("c"));
    for round in 0..6 {
        first.step().await.unwrap();
        first.step().await.unwrap();
        second.step().await.unwrap();
        if round % 2 == 0 {
            third.step().await.unwrap();
        }
    }
    for (run, steps) in [(&first, 12), (&second, 6)] {
        let record = other.load_run(run.run_id()).await.unwrap().unwrap();
        assert_eq!(record.steps, steps);
        assert_eq!(record.status, RunStatus::Running);
    }
}

/// A run paused under one version of a graph, in a file: a newer version whose node was
/// renamed refuses it naming the node, and so does a migration the newer graph cannot take
/// (nothing written); migrated with the rename stated, it resumes and completes from the file.
#[tokio::test]
async fn a_paused_run_is_migrated_onto_a_renamed_graph_and_completes() {
    let scratch = common::scratch("migrate");
    let path = scratch.path().join("runs.db");
    let run_id = {
        let store = Arc::new(SqliteCheckpointer::open(&path).expect("opens"));
        let paused = common::versioned(store, "send", false)
            .invoke(ticket(""))
            .await
            .unwrap();
        assert!(paused.is_paused());
        paused.run_id().clone()
    };
    let store = Arc::new(SqliteCheckpointer::open(&path).expect("opens again"));
    let renamed = common::versioned(Arc::clone(&store), "deliver", false);
    let refused = renamed.resume(&run_id, Answer::Approve).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("node `send` (runs next) is gone"),
        "{refused}"
    );
    let checkpoints = || async {
        use trellis::checkpoint::Checkpointer;
        store.list_checkpoints(&run_id).await.unwrap().len()
    };
    let before = checkpoints().await;
    let wrong = trellis::versions::Renames::from([("send".to_owned(), "post".to_owned())]);
    let blocked = renamed.migrate(&run_id, &wrong).await.unwrap_err();
    assert!(
        blocked
            .to_string()
            .ends_with("node `post` (runs next) is gone"),
        "{blocked}"
    );
    assert_eq!(
        checkpoints().await,
        before,
        "a refused migration writes nothing"
    );

    let renames = trellis::versions::Renames::from([("send".to_owned(), "deliver".to_owned())]);
    renamed.migrate(&run_id, &renames).await.unwrap();
    assert_eq!(checkpoints().await, before + 1);
    let done = renamed.resume(&run_id, Answer::Approve).await.unwrap();
    assert_eq!(done.state().log, ["draft", "answered send@2", "last"]);
}

/// Pruning frees pages but leaves the file as large; `vacuum` gives them back, to the file on
/// disk too, and the runs kept read back as they did.
#[tokio::test]
async fn a_vacuum_after_a_prune_shrinks_the_file_and_keeps_the_runs() {
    use trellis::retention::{Pruner, Retention};
    let (_scratch, path) = fresh_path();
    let store = Arc::new(SqliteCheckpointer::open(&path).expect("opens"));
    let mut builder = GraphBuilder::<Ticket>::new("Long");
    builder
        .add_node_fn("draft", |ticket: Arc<Ticket>, _| async move {
            Ok(TicketUpdate::default()
                .draft(Some(ticket.text.repeat(2)))
                .into())
        })
        .add_edge(START, "draft")
        .add_edge("draft", END);
    let graph = builder
        .compile()
        .expect("compiles")
        .with_checkpointer(store.clone());
    let mut runs = Vec::new();
    for at in 0..40 {
        let text = format!("{at:03} {}", "x".repeat(4_000));
        runs.push(
            graph
                .invoke(ticket(&text))
                .await
                .expect("runs")
                .run_id()
                .clone(),
        );
    }
    let file_size = || std::fs::metadata(&path).expect("the file").len();
    let pruned = Pruner::new(store.clone())
        .prune(&Retention::keep_last(3), trellis::run::Timestamp::now())
        .await
        .expect("prunes");
    assert_eq!(pruned.len(), 37);
    // Checkpointed into the file, so that its size is the database's.
    let vacuumed = store.vacuum().await.expect("vacuums");
    assert!(
        vacuumed.bytes_after * 4 < vacuumed.bytes_before,
        "{vacuumed:?}"
    );
    assert_eq!(file_size(), vacuumed.bytes_after, "the file itself shrank");
    let wal = path.with_extension("db-wal");
    assert!(
        std::fs::metadata(&wal).map_or(0, |m| m.len()) == 0,
        "the log is truncated"
    );
    // The three kept read back whole, and the store writes on.
    for run in &runs[37..] {
        let record = store.load_run(run).await.expect("loads").expect("kept");
        assert_eq!(record.status, RunStatus::Completed);
        let state: Ticket = serde_json::from_value((*record.state).clone()).expect("a ticket");
        assert_eq!(state.draft.map(|d| d.len()), Some(2 * state.text.len()));
    }
    assert!(store.load_run(&runs[0]).await.expect("loads").is_none());
    graph
        .invoke(ticket("after"))
        .await
        .expect("runs after a vacuum");
    let again = store.vacuum().await.expect("vacuums again");
    assert!(
        again.bytes_after <= vacuumed.bytes_after + 16 * 4096,
        "{again:?}"
    );
}
