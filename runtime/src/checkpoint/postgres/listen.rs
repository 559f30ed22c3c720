//! Hearing the writes of other processes on the same database: PostgreSQL's `LISTEN`/`NOTIFY`.
//!
//! Triggers on the runs and checkpoints tables (schema 3) notify channel `trellis:<schema>` at
//! every commit that writes a row: `run_id graph ready|held` for a run's row, `run_id` for a
//! checkpoint. A listener — one connection of its own per announcing store, outside the pool,
//! since the pool's connections drop notifications — hands each to [`Changes`], which wakes
//! this process's workers and watchers as for a write of its own. While the listener is down
//! (the server restarting) nothing is heard; it reconnects every second, and waiters still
//! look again on their own now and then.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{AsyncMessage, Config, NoTls, Socket};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::quoted;
use crate::checkpoint::Changes;
use crate::id::RunId;

/// How to open the listener's connection: the pool's settings.
#[derive(Clone)]
pub(super) struct Listener {
    pub(super) config: Config,
    pub(super) tls: Option<MakeRustlsConnect>,
}

impl Listener {
    /// Starts hearing for `changes`, until they are dropped. Needs a tokio runtime; without
    /// one, says so and hears nothing.
    pub(super) fn start(&self, changes: &Arc<Changes>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(target: "trellis", "no tokio runtime: other processes' writes to the PostgreSQL store are not heard");
            return;
        };
        let (listener, changes) = (self.clone(), Arc::downgrade(changes));
        runtime.spawn(async move {
            while changes.strong_count() > 0 {
                let heard = match &listener.tls {
                    Some(tls) => hear(&listener.config, tls.clone(), &changes).await,
                    None => hear(&listener.config, NoTls, &changes).await,
                };
                if let Err(error) = heard {
                    tracing::warn!(target: "trellis", %error, "listening for other processes' writes failed; again in a second");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }
}

/// One connection's worth of listening: until it closes, or `changes` are dropped.
async fn hear<T>(
    config: &Config,
    tls: T,
    changes: &Weak<Changes>,
) -> Result<(), tokio_postgres::Error>
where
    T: MakeTlsConnect<Socket>,
    T::Stream: Send + 'static,
{
    let (client, mut connection) = config.connect(tls).await?;
    let to = changes.clone();
    let mut driving = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(notice))) => match to.upgrade() {
                    Some(changes) => announce(&changes, notice.payload()),
                    None => return Ok(()),
                },
                Some(Ok(_)) => {}
                Some(Err(error)) => return Err(error),
                None => return Ok(()),
            }
        }
    });
    let channel: String = client
        .query_one("SELECT 'trellis:' || current_schema()", &[])
        .await?
        .get(0);
    client
        .batch_execute(&format!("LISTEN {}", quoted(&channel)))
        .await?;
    // Kept until the connection ends, or nobody needs to hear any more (then dropping the
    // client closes it).
    loop {
        match tokio::time::timeout(Duration::from_secs(5), &mut driving).await {
            Ok(Ok(ended)) => return ended,
            Ok(Err(_)) => return Ok(()),
            Err(_) if changes.strong_count() == 0 => return Ok(()),
            Err(_) => {}
        }
    }
}

/// A notification's payload to `changes`: `run_id graph ready|held`, or `run_id`.
fn announce(changes: &Changes, payload: &str) {
    match payload.split_once(' ') {
        Some((run_id, rest)) => {
            let (graph, state) = rest.rsplit_once(' ').unwrap_or((rest, "held"));
            changes.wrote(&RunId::from(run_id), graph, state == "ready");
        }
        None => changes.wrote(&RunId::from(payload), "", false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_wakes_the_run_and_when_ready_its_graph() {
        let changes = Arc::new(Changes::default());
        let mut run = changes.watch_run(&RunId::from("01RUN"));
        let mut ready = changes.watch_ready("Support Desk");
        announce(&changes, "01RUN Support Desk held");
        assert!(futures_util::FutureExt::now_or_never(run.changed()).is_some());
        assert!(futures_util::FutureExt::now_or_never(ready.changed()).is_none());
        announce(&changes, "01RUN Support Desk ready");
        assert!(futures_util::FutureExt::now_or_never(ready.changed()).is_some());
        announce(&changes, "01RUN");
        assert!(futures_util::FutureExt::now_or_never(run.changed()).is_some());
    }
}
