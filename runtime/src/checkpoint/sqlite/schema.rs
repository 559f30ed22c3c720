//! The SQLite schema by version (`PRAGMA user_version`), and bringing a file up to this
//! build's.

use rusqlite::Connection;

use super::backend;
use crate::checkpoint::{CheckpointError, corrupt};

/// The schema this build writes and reads (`PRAGMA user_version`).
const SCHEMA_VERSION: i64 = 10;

/// Each step applied in order to bring a file from version `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 → 1
    "CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        graph TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        created_us INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        last_node TEXT,
        steps INTEGER NOT NULL,
        state TEXT,
        state_checkpoint INTEGER,
        interrupts TEXT NOT NULL,
        error TEXT,
        transitions INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX runs_newest ON runs (created_us DESC, run_id DESC);
    CREATE TABLE checkpoints (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        step INTEGER NOT NULL,
        label TEXT NOT NULL,
        created_at TEXT NOT NULL,
        state TEXT NOT NULL,
        detail TEXT NOT NULL,
        PRIMARY KEY (run_id, id)
    ) WITHOUT ROWID;",
    // 1 → 2: who is executing a running run, and until when its claim holds.
    "ALTER TABLE runs ADD COLUMN owner TEXT;
    ALTER TABLE runs ADD COLUMN lease_until TEXT;",
    // 2 → 3: a step's checkpoint carries the run's progress, so that an ordinary step writes
    // one row, not two (see `save_step`).
    "ALTER TABLE checkpoints ADD COLUMN run_last_node TEXT;
    ALTER TABLE checkpoints ADD COLUMN run_transitions INTEGER;",
    // 3 → 4: a branch's parent run and checkpoint (time travel).
    "ALTER TABLE runs ADD COLUMN parent_run TEXT;
    ALTER TABLE runs ADD COLUMN parent_checkpoint INTEGER;",
    // 4 → 5: each run numbered (`seq`, in creation order), and checkpoints in a rowid table
    // keyed by `seq << 32 | id` (see `checkpoint_key`), the run's id no longer repeated in
    // each: a run's steps append at the end of its range, where SQLite's b-tree fills a page
    // before it starts the next, where the `WITHOUT ROWID` table rebalanced three pages each
    // time its last one filled. `check_before_5` has made sure that every checkpoint has its
    // run and an id that fits.
    "ALTER TABLE runs ADD COLUMN seq INTEGER;
    UPDATE runs SET seq = numbered.n
        FROM (SELECT run_id, row_number() OVER (ORDER BY created_us, run_id) AS n FROM runs)
            AS numbered
        WHERE runs.run_id = numbered.run_id;
    CREATE UNIQUE INDEX runs_seq ON runs (seq);
    CREATE TABLE checkpoints_keyed (
        key INTEGER PRIMARY KEY,
        id INTEGER NOT NULL,
        step INTEGER NOT NULL,
        label TEXT NOT NULL,
        created_at TEXT NOT NULL,
        state TEXT NOT NULL,
        detail TEXT NOT NULL,
        run_last_node TEXT,
        run_transitions INTEGER
    );
    INSERT INTO checkpoints_keyed
        SELECT (r.seq << 32) + c.id, c.id, c.step, c.label, c.created_at, c.state, c.detail,
            c.run_last_node, c.run_transitions
        FROM checkpoints c JOIN runs r ON r.run_id = c.run_id
        ORDER BY r.seq, c.id;
    DROP TABLE checkpoints;
    ALTER TABLE checkpoints_keyed RENAME TO checkpoints;",
    // 5 → 6: the queue's runs in an index of their own, so that a worker's claim reads the
    // running runs of its graph, oldest first, instead of every run ever stored (a claim at
    // 8,500 stored runs scanned them all; PostgreSQL has had this index from its first schema).
    "CREATE INDEX runs_ready ON runs (graph, created_us, run_id) WHERE status = 'running';",
    // 6 → 7: threads, and each run's thread; a thread's runs in an index of their own, so
    // that its newest is found as fast on a thread of thousands of runs as on one of one.
    "ALTER TABLE runs ADD COLUMN thread_id TEXT;
    CREATE INDEX runs_thread ON runs (thread_id, created_us DESC, run_id DESC)
        WHERE thread_id IS NOT NULL;
    CREATE TABLE threads (
        thread_id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        created_us INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        metadata TEXT NOT NULL,
        head TEXT
    ) WITHOUT ROWID;
    CREATE INDEX threads_newest ON threads (created_us DESC, thread_id DESC);",
    // 7 → 8: what a run's starter said about it (LangGraph's run `metadata`), JSON; NULL for
    // none.
    "ALTER TABLE runs ADD COLUMN metadata TEXT;",
    // 8 → 9: delta checkpoints. A row with `base` keeps in `state` the changes since its run's
    // checkpoint `base` (or `base_run`'s: a thread's next run goes on from the one before);
    // rows written before keep their whole state, and read as they did.
    "ALTER TABLE checkpoints ADD COLUMN base INTEGER;
    ALTER TABLE checkpoints ADD COLUMN base_run TEXT;
    CREATE INDEX checkpoints_base_run ON checkpoints (base_run) WHERE base_run IS NOT NULL;",
    // 9 → 10: each graph fingerprint and state type once, which a checkpoint names by `shape`
    // instead of in its `detail` (a third of an ordinary step's row); rows written before keep
    // both in their `detail`, and read as they did.
    "CREATE TABLE shapes (
        id INTEGER PRIMARY KEY,
        graph_fingerprint TEXT NOT NULL,
        state_type TEXT NOT NULL,
        UNIQUE (graph_fingerprint, state_type)
    );
    ALTER TABLE checkpoints ADD COLUMN shape INTEGER;",
];

/// Before the migration to schema 5, which keys each checkpoint by its run's number and its
/// id: a checkpoint without its run, or with an id past 32 bits, would be lost by it. Neither
/// can be written by any build (a step writes its run's row first; ids count steps, which a
/// run's `u32` step limit bounds), so a file holding one was changed by hand: it is refused,
/// whole, rather than migrated short.
fn check_before_5(connection: &Connection) -> Result<(), CheckpointError> {
    let stray: i64 = connection
        .query_row(
            "SELECT count(*) FROM checkpoints c
             WHERE c.id < 0 OR c.id > 4294967295
                OR NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = c.run_id)",
            [],
            |row| row.get(0),
        )
        .map_err(backend)?;
    if stray > 0 {
        return Err(corrupt(
            "database schema",
            format!(
                "{stray} checkpoint(s) have no run or an id past 32 bits: the file cannot be brought to schema 5 without losing them; remove them, or open the file with a build of schema 4"
            ),
        ));
    }
    Ok(())
}

/// Brings the file open on `connection` to [`SCHEMA_VERSION`], one migration at a time.
///
/// # Errors
/// A version newer than this build's, a file a migration would lose rows of, or SQLite's error.
pub(super) fn migrate(connection: &mut Connection) -> Result<(), CheckpointError> {
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(backend)?;
    if !(0..=SCHEMA_VERSION).contains(&version) {
        return Err(corrupt(
            "database schema",
            format!(
                "schema version {version} is not one this build knows (it reads versions up to {SCHEMA_VERSION}); use a newer trellis"
            ),
        ));
    }
    for (from, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        // Immediate, and the version read again inside: another process opening the same
        // file may have migrated it meanwhile.
        let transaction = connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        let now: i64 = transaction
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(backend)?;
        if now > from as i64 {
            continue;
        }
        if from == 4 {
            check_before_5(&transaction)?;
        }
        transaction.execute_batch(migration).map_err(backend)?;
        transaction
            .execute_batch(&format!("PRAGMA user_version = {}", from + 1))
            .map_err(backend)?;
        transaction.commit().map_err(backend)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How SQLite would run `sql`: its query plan, one line per step.
    fn plan(connection: &Connection, sql: &str) -> String {
        let mut statement = connection
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
        let rows = statement
            .query_map(["Support"], |row| row.get::<_, String>(3))
            .unwrap();
        rows.collect::<Result<Vec<_>, _>>().unwrap().join("\n")
    }

    #[test]
    fn a_claim_reads_the_queue_s_index_not_every_run() {
        let mut connection = Connection::open_in_memory().unwrap();
        migrate(&mut connection).unwrap();
        for sql in [super::super::QUEUED, super::super::HELD] {
            let plan = plan(&connection, sql);
            assert!(plan.contains("USING INDEX runs_ready"), "{sql}: {plan}");
            assert!(!plan.contains("TEMP B-TREE"), "no sort: {plan}");
        }
    }

    #[test]
    fn a_file_of_schema_5_gains_the_queue_s_index() {
        let mut connection = Connection::open_in_memory().unwrap();
        for migration in &MIGRATIONS[..5] {
            connection.execute_batch(migration).unwrap();
        }
        connection.execute_batch("PRAGMA user_version = 5").unwrap();
        migrate(&mut connection).unwrap();
        let version: i64 = connection
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let index: i64 = connection
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'runs_ready'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(index, 1);
    }
}
