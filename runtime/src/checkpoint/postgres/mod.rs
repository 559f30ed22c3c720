//! `PostgresCheckpointer`: runs and checkpoints in PostgreSQL, shared by workers on many
//! machines; claims with `FOR UPDATE SKIP LOCKED`, steps fenced by owner.

mod chain;
mod listen;
mod prune;
mod rows;
mod threads;
mod tls;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::{
    Checkpoint, CheckpointError, Checkpointer, RunQueue, RunRecord, RunStatus, ThreadRecord,
    corrupt,
};
use crate::id::{RunId, ThreadId, Timestamp};
use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod};
use rows::{
    CHECKPOINT, CLAIM_NEXT, CLAIM_RUN, CheckpointParams, HELD_RUNS, LATEST_CHECKPOINT,
    LIST_CHECKPOINTS, LIST_RUNS, LOAD_RUN, RENEW_LEASE, RunParams, SAVE_STEP, TAKE_OVER, column,
    decode_checkpoint, decode_run,
};

/// The schema this build writes and reads (`trellis_schema.version`).
const SCHEMA_VERSION: i32 = 6;

/// Each step applied in order to bring a database from version `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 → 1. A run's `state` is NULL when it is that of checkpoint `state_checkpoint` (each
    // step's state is written once).
    "CREATE TABLE trellis_runs (
        run_id text PRIMARY KEY,
        graph text NOT NULL,
        status text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        last_node text,
        steps bigint NOT NULL,
        state jsonb,
        state_checkpoint bigint,
        interrupts jsonb NOT NULL,
        error text,
        transitions bigint NOT NULL,
        owner text,
        lease_until timestamptz
    );
    CREATE INDEX trellis_runs_newest ON trellis_runs (created_at DESC, run_id DESC);
    CREATE INDEX trellis_runs_ready ON trellis_runs (graph, created_at, run_id)
        WHERE status = 'running';
    CREATE TABLE trellis_checkpoints (
        run_id text NOT NULL REFERENCES trellis_runs (run_id) ON DELETE CASCADE,
        id bigint NOT NULL,
        step bigint NOT NULL,
        label text NOT NULL,
        created_at timestamptz NOT NULL,
        state jsonb NOT NULL,
        detail jsonb NOT NULL,
        PRIMARY KEY (run_id, id)
    );",
    // 1 → 2: a branch's parent run and checkpoint (time travel).
    "ALTER TABLE trellis_runs ADD COLUMN parent_run text;
    ALTER TABLE trellis_runs ADD COLUMN parent_checkpoint bigint;",
    // 2 → 3: every commit that writes a run or a checkpoint notifies `trellis:<schema>`, so
    // that other processes' workers and watchers hear of it (see `listen`): `run_id graph
    // ready|held` for a run (ready: running, and nobody holds it), `run_id` for a checkpoint.
    "CREATE FUNCTION trellis_announce_run() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('trellis:' || TG_TABLE_SCHEMA, NEW.run_id || ' ' || NEW.graph || ' '
            || CASE WHEN NEW.status = 'running' AND NEW.owner IS NULL
                    THEN 'ready' ELSE 'held' END);
        RETURN NULL;
    END $$;
    CREATE TRIGGER trellis_runs_announce AFTER INSERT OR UPDATE ON trellis_runs
        FOR EACH ROW EXECUTE FUNCTION trellis_announce_run();
    CREATE FUNCTION trellis_announce_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('trellis:' || TG_TABLE_SCHEMA, NEW.run_id);
        RETURN NULL;
    END $$;
    CREATE TRIGGER trellis_checkpoints_announce AFTER INSERT OR UPDATE ON trellis_checkpoints
        FOR EACH ROW EXECUTE FUNCTION trellis_announce_checkpoint();",
    // 3 → 4: threads, and each run's thread; a thread's runs in an index of their own, so
    // that its newest is found as fast on a thread of thousands of runs as on one of one.
    "ALTER TABLE trellis_runs ADD COLUMN thread_id text;
    CREATE INDEX trellis_runs_thread ON trellis_runs (thread_id, created_at DESC, run_id DESC)
        WHERE thread_id IS NOT NULL;
    CREATE TABLE trellis_threads (
        thread_id text PRIMARY KEY,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        metadata jsonb NOT NULL,
        head text
    );
    CREATE INDEX trellis_threads_newest ON trellis_threads (created_at DESC, thread_id DESC);",
    // 4 → 5: what a run's starter said about it (LangGraph's run `metadata`); NULL for none.
    "ALTER TABLE trellis_runs ADD COLUMN metadata jsonb;",
    // 5 → 6: delta checkpoints. A row with `base` keeps in `state` the changes since its run's
    // checkpoint `base` (or `base_run`'s: a thread's next run goes on from the one before);
    // rows written before keep their whole state, and read as they did.
    "ALTER TABLE trellis_checkpoints ADD COLUMN base bigint;
    ALTER TABLE trellis_checkpoints ADD COLUMN base_run text;
    CREATE INDEX trellis_checkpoints_base_run ON trellis_checkpoints (base_run)
        WHERE base_run IS NOT NULL;",
];

/// How to connect: the pool's size, the schema the tables live in, timeouts.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// Connections at most (default 8).
    pub max_connections: usize,
    /// The schema holding Trellis's tables, created if missing (default: the connection's
    /// `search_path`, usually `public`). One schema per application or test keeps them apart.
    pub schema: Option<String>,
    /// How long connecting may take before it fails (default 10 s).
    pub connect_timeout: Duration,
    /// Whether connecting creates the tables (and schema) or brings them up to date (default);
    /// `false` only inspects: a database without Trellis's tables, or with an older schema, is
    /// refused and nothing is written (what `trellis runs` does).
    pub migrate: bool,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            max_connections: 8,
            schema: None,
            connect_timeout: Duration::from_secs(10),
            migrate: true,
        }
    }
}

/// Runs and checkpoints in PostgreSQL: a pool of connections (tokio-postgres, no libpq),
/// schema versioned and migrated (under an advisory lock, so workers starting together migrate
/// once), a step's checkpoint and run record written in one statement, and a queue of ready
/// runs that workers on many machines claim with `FOR UPDATE SKIP LOCKED`.
///
/// Leases compare the machines' clocks: keep them in sync (NTP) well within the lease.
///
/// ```no_run
/// # async fn demo() -> Result<(), trellis::checkpoint::CheckpointError> {
/// use trellis::checkpoint::PostgresCheckpointer;
///
/// let store = PostgresCheckpointer::connect("postgres://trellis@127.0.0.1:5432/trellis").await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PostgresCheckpointer {
    pool: Pool,
    /// The pool's settings, for the connection that hears other processes' writes.
    listener: listen::Listener,
}

impl std::fmt::Debug for PostgresCheckpointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresCheckpointer")
            .finish_non_exhaustive()
    }
}

/// A driver error with the whole story in its message: the driver's own says only "db error"
/// or "error connecting to server" and keeps the server's words in its source.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
struct PostgresError {
    message: String,
    #[source]
    source: tokio_postgres::Error,
}

/// A connection the pool could not give: PostgreSQL's own error as [`backend`] words it.
fn pool_error(error: PoolError) -> CheckpointError {
    match error {
        PoolError::Backend(error) => backend(error),
        other => CheckpointError::Backend(Box::new(other)),
    }
}

fn backend(error: tokio_postgres::Error) -> CheckpointError {
    let message = match error.as_db_error() {
        Some(db) => {
            let mut message = format!("PostgreSQL: {}: {}", db.severity(), db.message());
            if let Some(detail) = db.detail() {
                message.push_str(&format!(" ({detail})"));
            }
            message
        }
        None => {
            let mut message = error.to_string();
            let mut cause = std::error::Error::source(&error);
            while let Some(inner) = cause {
                message.push_str(&format!(": {inner}"));
                cause = inner.source();
            }
            message
        }
    };
    CheckpointError::Backend(Box::new(PostgresError {
        message,
        source: error,
    }))
}

fn json<T: serde::Serialize>(
    what: &'static str,
    value: &T,
) -> Result<serde_json::Value, CheckpointError> {
    serde_json::to_value(value).map_err(|source| CheckpointError::Serialize { what, source })
}

/// A count as PostgreSQL's `bigint`.
fn big(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A schema name as a quoted identifier.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl PostgresCheckpointer {
    /// Connects to `url` (`postgres://user:password@host:port/database`, or key=value pairs),
    /// with the default [`PostgresOptions`], and brings the schema up to date.
    ///
    /// # Errors
    /// [`CheckpointError::Backend`] when the URL is malformed or the server cannot be reached;
    /// [`CheckpointError::Corrupt`] when the database holds a schema newer than this build.
    pub async fn connect(url: &str) -> Result<Self, CheckpointError> {
        Self::connect_with(url, PostgresOptions::default()).await
    }

    /// Connects to `url` with `options`.
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub async fn connect_with(
        url: &str,
        options: PostgresOptions,
    ) -> Result<Self, CheckpointError> {
        let tls_error = |error: tls::TlsError| CheckpointError::Backend(Box::new(error));
        let (rest, tls) = tls::split(url).map_err(tls_error)?;
        let mut config: tokio_postgres::Config = rest.parse().map_err(backend)?;
        config.ssl_mode(tls.ssl_mode());
        let connector = tls.connector().map_err(tls_error)?;
        config.connect_timeout(options.connect_timeout);
        config.keepalives(true);
        config.application_name("trellis");
        if let Some(schema) = &options.schema {
            // Every connection finds the tables in `schema` (and only there).
            config.options(format!("-c search_path={}", quoted(schema)));
        }
        // `Fast`: a connection goes back into use unless it is closed (a server restart); a
        // round trip to check each one would cost every call one.
        let manager_config = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let listener = listen::Listener {
            config: config.clone(),
            tls: connector.clone(),
        };
        let manager = match connector {
            Some(tls) => Manager::from_config(config, tls, manager_config),
            None => Manager::from_config(config, tokio_postgres::NoTls, manager_config),
        };
        let pool = Pool::builder(manager)
            .max_size(options.max_connections.max(1))
            .build()
            .map_err(|error| CheckpointError::Backend(Box::new(error)))?;
        let store = PostgresCheckpointer { pool, listener };
        if options.migrate {
            store.migrate(options.schema.as_deref()).await?;
        } else {
            store.check_schema().await?;
        }
        Ok(store)
    }

    /// Refuses a database whose tables are missing or not at this build's version.
    async fn check_schema(&self) -> Result<(), CheckpointError> {
        let exists = self
            .query("SELECT to_regclass('trellis_schema') IS NOT NULL", &[])
            .await?
            .first()
            .and_then(|row| row.try_get::<_, bool>(0).ok())
            .unwrap_or(false);
        if !exists {
            return Err(corrupt(
                "database schema",
                "this database has no Trellis tables (and inspecting creates none)",
            ));
        }
        let version: Option<i32> = self
            .query("SELECT max(version) FROM trellis_schema", &[])
            .await?
            .first()
            .map(|row| row.try_get(0))
            .transpose()
            .map_err(|e| corrupt("table `trellis_schema`", e))?
            .flatten();
        match version {
            Some(SCHEMA_VERSION) => Ok(()),
            other => Err(corrupt(
                "database schema",
                format!(
                    "schema version {} is not this build's ({SCHEMA_VERSION}); connect with `migrate` to bring it up to date",
                    other.unwrap_or(0)
                ),
            )),
        }
    }

    async fn migrate(&self, schema: Option<&str>) -> Result<(), CheckpointError> {
        let mut connection = self.pool.get().await.map_err(pool_error)?;
        let transaction = connection.transaction().await.map_err(backend)?;
        // One migrator at a time, database-wide (the key is "trellis" in ASCII).
        transaction
            .execute("SELECT pg_advisory_xact_lock(32776877234743667)", &[])
            .await
            .map_err(backend)?;
        if let Some(schema) = schema {
            transaction
                .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {}", quoted(schema)))
                .await
                .map_err(backend)?;
        }
        transaction
            .batch_execute("CREATE TABLE IF NOT EXISTS trellis_schema (version integer NOT NULL)")
            .await
            .map_err(backend)?;
        let versions = transaction
            .query("SELECT version FROM trellis_schema", &[])
            .await
            .map_err(backend)?;
        let version: i32 = match versions.as_slice() {
            [] => 0,
            [row] => row
                .try_get(0)
                .map_err(|e| corrupt("table `trellis_schema`", e))?,
            _ => {
                return Err(corrupt(
                    "table `trellis_schema`",
                    format!("{} rows, expected one", versions.len()),
                ));
            }
        };
        if !(0..=SCHEMA_VERSION).contains(&version) {
            return Err(corrupt(
                "database schema",
                format!(
                    "schema version {version} is not one this build knows (it reads versions up to {SCHEMA_VERSION}); use a newer trellis"
                ),
            ));
        }
        for migration in MIGRATIONS
            .iter()
            .skip(usize::try_from(version).unwrap_or(0))
        {
            transaction
                .batch_execute(migration)
                .await
                .map_err(backend)?;
        }
        if version < SCHEMA_VERSION {
            transaction
                .batch_execute(&format!(
                    "DELETE FROM trellis_schema; INSERT INTO trellis_schema VALUES ({SCHEMA_VERSION})"
                ))
                .await
                .map_err(backend)?;
        }
        transaction.commit().await.map_err(backend)
    }

    /// Runs one prepared statement on a pooled connection; the number of rows it changed.
    async fn execute(
        &self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, CheckpointError> {
        let connection = self.pool.get().await.map_err(pool_error)?;
        let statement = connection.prepare_cached(sql).await.map_err(backend)?;
        connection
            .execute(&statement, params)
            .await
            .map_err(backend)
    }

    /// Runs one prepared query on a pooled connection.
    async fn query(
        &self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, CheckpointError> {
        let connection = self.pool.get().await.map_err(pool_error)?;
        let statement = connection.prepare_cached(sql).await.map_err(backend)?;
        connection.query(&statement, params).await.map_err(backend)
    }
}

#[async_trait]
impl Checkpointer for PostgresCheckpointer {
    async fn claim_run(
        &self,
        run: &RunRecord,
        expected: RunStatus,
    ) -> Result<bool, CheckpointError> {
        let run = RunParams::of(run, None)?;
        let expected = expected.as_str();
        let params = run.params(&[&expected]);
        Ok(self.execute(CLAIM_RUN, &params).await? == 1)
    }

    async fn take_over(
        &self,
        run: &RunRecord,
        previous_owner: Option<&str>,
    ) -> Result<bool, CheckpointError> {
        let params: [&(dyn ToSql + Sync); 7] = [
            &run.run_id.as_str(),
            &run.status.as_str(),
            &run.updated_at.datetime(),
            &run.error,
            &run.owner.as_deref(),
            &run.lease_until.map(Timestamp::datetime),
            &previous_owner,
        ];
        Ok(self.execute(TAKE_OVER, &params).await? == 1)
    }

    async fn save_step(
        &self,
        run: RunRecord,
        checkpoint: Checkpoint,
    ) -> Result<(), CheckpointError> {
        let (run, checkpoint) = (&run, &checkpoint);
        if run.run_id != checkpoint.run_id {
            return Err(corrupt(
                format!("checkpoint {} of run {}", checkpoint.id, checkpoint.run_id),
                format!("saved with the record of run {}", run.run_id),
            ));
        }
        // The runtime gives both the same state: store it once, in the checkpoint.
        let same_as = run.shares_state_with(checkpoint).then_some(checkpoint.id);
        let record = RunParams::of(run, same_as)?;
        let row = CheckpointParams::of(checkpoint)?;
        let params = record.params(&[
            &row.id,
            &row.step,
            &row.label,
            &row.created_at,
            &row.state,
            &row.detail,
            &row.base,
            &row.base_run,
        ]);
        if self.execute(SAVE_STEP, &params).await? == 1 {
            return Ok(());
        }
        // Nothing written: the stored record belongs to someone else.
        let owner = self
            .query(
                "SELECT owner FROM trellis_runs WHERE run_id = $1",
                &[&record.run_id],
            )
            .await?
            .first()
            .and_then(|row| row.try_get::<_, Option<String>>(0).ok().flatten());
        Err(CheckpointError::Fenced {
            run_id: run.run_id.clone(),
            owner: owner.unwrap_or_else(|| "nobody".to_owned()),
        })
    }

    async fn load_run(&self, run_id: &RunId) -> Result<Option<RunRecord>, CheckpointError> {
        let rows = self.query(LOAD_RUN, &[&run_id.as_str()]).await?;
        match rows.first().map(decode_run).transpose()? {
            Some(run) => Ok(Some(self.fold(run).await?)),
            None => Ok(None),
        }
    }

    async fn list_runs(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        let rows = self.query(LIST_RUNS, &[&limit, &offset]).await?;
        self.fold_all(rows.iter().map(decode_run)).await
    }

    async fn list_checkpoints(&self, run_id: &RunId) -> Result<Vec<Checkpoint>, CheckpointError> {
        let rows = self.query(LIST_CHECKPOINTS, &[&run_id.as_str()]).await?;
        let rows = rows
            .iter()
            .map(decode_checkpoint)
            .collect::<Result<Vec<_>, _>>()?;
        self.fold_in_order(rows).await
    }

    async fn latest_checkpoint(
        &self,
        run_id: &RunId,
    ) -> Result<Option<Checkpoint>, CheckpointError> {
        let rows = self.query(LATEST_CHECKPOINT, &[&run_id.as_str()]).await?;
        match rows.first().map(decode_checkpoint).transpose()? {
            Some(checkpoint) => Ok(Some(self.fold(checkpoint).await?)),
            None => Ok(None),
        }
    }

    async fn checkpoint(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<Option<Checkpoint>, CheckpointError> {
        let Ok(id) = i64::try_from(id) else {
            return Ok(None);
        };
        let rows = self.query(CHECKPOINT, &[&run_id.as_str(), &id]).await?;
        match rows.first().map(decode_checkpoint).transpose()? {
            Some(checkpoint) => Ok(Some(self.fold(checkpoint).await?)),
            None => Ok(None),
        }
    }

    fn hear_others(&self, changes: &Arc<super::Changes>) {
        self.listener.start(changes);
    }

    async fn create_thread(&self, thread: &ThreadRecord) -> Result<bool, CheckpointError> {
        self.create_thread_row(thread).await
    }

    async fn load_thread(
        &self,
        thread_id: &ThreadId,
    ) -> Result<Option<ThreadRecord>, CheckpointError> {
        self.load_thread_row(thread_id).await
    }

    async fn list_threads(
        &self,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ThreadRecord>, CheckpointError> {
        self.list_thread_rows(limit, offset).await
    }

    async fn set_thread_metadata(
        &self,
        thread_id: &ThreadId,
        metadata: &serde_json::Map<String, serde_json::Value>,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        self.set_thread_metadata_row(thread_id, metadata, now).await
    }

    async fn move_thread_head(
        &self,
        thread_id: &ThreadId,
        expected: Option<&RunId>,
        head: &RunId,
        now: Timestamp,
    ) -> Result<bool, CheckpointError> {
        self.move_thread_head_row(thread_id, expected, head, now)
            .await
    }

    async fn thread_runs(
        &self,
        thread_id: &ThreadId,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<RunRecord>, CheckpointError> {
        self.thread_run_rows(thread_id, limit, offset).await
    }

    async fn delete_thread(&self, thread_id: &ThreadId) -> Result<bool, CheckpointError> {
        self.delete_thread_rows(thread_id).await
    }

    async fn delete_runs(&self, run_ids: &[RunId]) -> Result<Vec<RunId>, CheckpointError> {
        self.delete_run_rows(run_ids).await
    }

    async fn delete_checkpoints_before(
        &self,
        run_id: &RunId,
        id: u64,
    ) -> Result<u64, CheckpointError> {
        self.delete_checkpoint_rows_before(run_id, id).await
    }
}

#[async_trait]
impl RunQueue for PostgresCheckpointer {
    async fn claim_next(
        &self,
        graph: &str,
        owner: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> Result<Option<RunRecord>, CheckpointError> {
        let rows = self
            .query(
                CLAIM_NEXT,
                &[&graph, &owner, &now.datetime(), &lease_until.datetime()],
            )
            .await?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let run_id: String = column(row, 0, &|c| format!("column `{c}` of a claimed run"))?;
        self.load_run(&RunId::from(run_id)).await
    }

    async fn held_runs(&self, graph: &str) -> Result<Vec<(RunId, String)>, CheckpointError> {
        let rows = self.query(HELD_RUNS, &[&graph]).await?;
        rows.iter()
            .map(|row| {
                let what = |c: &str| format!("column `{c}` of a held run");
                let run_id: String = column(row, 0, &what)?;
                Ok((RunId::from(run_id), column(row, 1, &what)?))
            })
            .collect()
    }

    async fn renew_lease(
        &self,
        run_id: &RunId,
        owner: &str,
        lease_until: Timestamp,
    ) -> Result<bool, CheckpointError> {
        let changed = self
            .execute(
                RENEW_LEASE,
                &[&run_id.as_str(), &owner, &lease_until.datetime()],
            )
            .await?;
        Ok(changed == 1)
    }
}
