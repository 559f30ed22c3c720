//! Cancelling a run from outside: a token checked between super-steps and raced against nodes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Cancels the runs it was given to. Clones share one flag.
///
/// A run checks its token before every super-step and races it against every running node: a
/// node still running when the token is cancelled is dropped at its next `.await`, and the run
/// fails with [`RunError::Cancelled`](crate::RunError::Cancelled).
#[derive(Clone, Default, Debug)]
pub struct CancellationToken(Arc<Shared>);

#[derive(Default, Debug)]
struct Shared {
    cancelled: AtomicBool,
    notify: Notify,
}

impl CancellationToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every run holding this token (or a clone of it).
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Release);
        self.0.notify.notify_waiters();
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Acquire)
    }

    /// Completes once the token is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let mut notified = std::pin::pin!(self.0.notify.notified());
            // Register before checking the flag, so a `cancel` in between is not missed.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}
