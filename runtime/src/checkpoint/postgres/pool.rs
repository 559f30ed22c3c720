//! A small connection pool: at most `size` connections, reused while they live, each with its
//! own prepared statements; a connection the server closed (a restart) is dropped and replaced.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_postgres::{Client, Config, NoTls, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

/// One connection and the statements prepared on it.
pub(super) struct Connection {
    pub(super) client: Client,
    statements: HashMap<&'static str, Statement>,
}

impl Connection {
    /// `sql` prepared on this connection, once.
    pub(super) async fn statement(
        &mut self,
        sql: &'static str,
    ) -> Result<Statement, tokio_postgres::Error> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql).await?;
        self.statements.insert(sql, statement.clone());
        Ok(statement)
    }
}

pub(super) struct Pool {
    config: Config,
    /// TLS, unless the URL's `sslmode` is `disable`.
    tls: Option<MakeRustlsConnect>,
    idle: Mutex<Vec<Connection>>,
    permits: Semaphore,
}

/// A connection taken from the pool; it goes back when dropped, unless it was closed.
pub(super) struct Pooled<'a> {
    connection: Option<Connection>,
    pool: &'a Pool,
    _permit: SemaphorePermit<'a>,
}

impl std::ops::Deref for Pooled<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.connection.as_ref().expect("present until dropped")
    }
}

impl std::ops::DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.connection.as_mut().expect("present until dropped")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(connection) = self.connection.take()
            && !connection.client.is_closed()
        {
            self.pool.lock().push(connection);
        }
    }
}

impl Pool {
    pub(super) fn new(config: Config, tls: Option<MakeRustlsConnect>, size: usize) -> Self {
        Pool {
            config,
            tls,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(size.max(1)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        // Only pushes and pops happen under the lock: a panic cannot leave it half-changed.
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A live connection: an idle one, or a new one when none is idle (waiting while `size`
    /// are in use).
    pub(super) async fn get(&self) -> Result<Pooled<'_>, tokio_postgres::Error> {
        let permit = self
            .permits
            .acquire()
            .await
            .expect("the pool's semaphore is never closed");
        loop {
            let Some(connection) = self.lock().pop() else {
                break;
            };
            if !connection.client.is_closed() {
                return Ok(Pooled {
                    connection: Some(connection),
                    pool: self,
                    _permit: permit,
                });
            }
        }
        let client = match &self.tls {
            Some(tls) => {
                let (client, connection) = self.config.connect(tls.clone()).await?;
                tokio::spawn(drive(connection));
                client
            }
            None => {
                let (client, connection) = self.config.connect(NoTls).await?;
                tokio::spawn(drive(connection));
                client
            }
        };
        Ok(Pooled {
            connection: Some(Connection {
                client,
                statements: HashMap::new(),
            }),
            pool: self,
            _permit: permit,
        })
    }
}

/// Runs a connection's I/O until it ends (its client dropped, or the server gone).
async fn drive(connection: impl std::future::Future<Output = Result<(), tokio_postgres::Error>>) {
    if let Err(error) = connection.await {
        tracing::debug!(target: "trellis", %error, "PostgreSQL connection ended");
    }
}
