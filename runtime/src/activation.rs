//! One activation of one node: attempts with retry and backoff, a timeout per attempt, panics
//! caught, and the run's cancellation raced against the node.

use std::any::Any;
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use crate::builder::AttemptPolicy;
use crate::cancel::CancellationToken;
use crate::node::{Node, NodeContext, NodeError, NodeFailure, NodeResult};
use crate::state::GraphState;

/// What an activation produced, with what observers should hear about it.
pub(crate) struct Activation<U> {
    pub(crate) result: Result<NodeResult<U>, Stop>,
    /// Failed attempts: (attempt, error text, whether another attempt followed).
    pub(crate) failed_attempts: Vec<(u32, String, bool)>,
    /// Wall time of the whole activation, measured only when someone observes events.
    pub(crate) elapsed: Option<Duration>,
}

/// Why an activation produced no result.
pub(crate) enum Stop {
    Failed(NodeFailure),
    Cancelled,
}

/// Runs `node` until an attempt succeeds, its retries are used up, or the run is cancelled.
pub(crate) async fn activate<S: GraphState>(
    node: Arc<dyn Node<S>>,
    options: AttemptPolicy,
    state: Arc<S>,
    mut ctx: NodeContext,
    observed: bool,
) -> Activation<S::Update> {
    let started = observed.then(Instant::now);
    let mut failed_attempts = Vec::new();
    let cancel = ctx.run.cancel.clone();
    let mut attempt = 0;
    let result = loop {
        attempt += 1;
        ctx.attempt = attempt;
        let error = match attempt_once(
            &*node,
            Arc::clone(&state),
            &mut ctx,
            options.timeout,
            &cancel,
        )
        .await
        {
            Ok(result) => break Ok(result),
            Err(None) => break Err(Stop::Cancelled),
            Err(Some(error)) => error,
        };
        let retrying = error.is_retryable() && attempt <= options.retries;
        if observed {
            failed_attempts.push((attempt, error.to_string(), retrying));
        }
        if !retrying {
            break Err(Stop::Failed(NodeFailure {
                node: ctx.node.to_string(),
                step: ctx.step,
                attempts: attempt,
                kind: error.kind(),
                message: error.to_string(),
            }));
        }
        let delay = options
            .backoff
            .saturating_mul(2u32.saturating_pow(attempt - 1));
        if !delay.is_zero() && race(tokio::time::sleep(delay), &cancel).await.is_none() {
            break Err(Stop::Cancelled);
        }
    };
    Activation {
        result,
        failed_attempts,
        elapsed: started.map(|t| t.elapsed()),
    }
}

/// One attempt: `Err(None)` when cancelled, `Err(Some(_))` when it failed, timed out or panicked.
async fn attempt_once<S: GraphState>(
    node: &dyn Node<S>,
    state: Arc<S>,
    ctx: &mut NodeContext,
    timeout: Option<Duration>,
    cancel: &CancellationToken,
) -> Result<NodeResult<S::Update>, Option<NodeError>> {
    if cancel.is_cancelled() {
        return Err(None);
    }
    let work = node.run(state, ctx);
    // The timeout is made inside the guarded future: without a timer in the runtime, tokio
    // panics, and that panic becomes this node's error instead of unwinding through the run.
    let guarded = async move {
        match timeout {
            Some(limit) => tokio::time::timeout(limit, work)
                .await
                .unwrap_or(Err(NodeError::Timeout(limit))),
            None => work.await,
        }
    };
    match race_catching(guarded, cancel).await {
        None => Err(None),
        Some(Ok(Ok(result))) => Ok(result),
        Some(Ok(Err(error))) => Err(Some(error)),
        Some(Err(panic)) => Err(Some(NodeError::Panicked(panic_message(&*panic)))),
    }
}

/// Polls `work` until it is ready or `cancel` fires (`None`); a panic while polling is caught
/// and returned.
async fn race_catching<F: Future>(
    work: F,
    cancel: &CancellationToken,
) -> Option<Result<F::Output, Box<dyn Any + Send>>> {
    let mut work = std::pin::pin!(work);
    let mut cancelled = std::pin::pin!(cancel.cancelled());
    poll_fn(|cx| {
        match catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx))) {
            Ok(Poll::Ready(output)) => return Poll::Ready(Some(Ok(output))),
            Err(panic) => return Poll::Ready(Some(Err(panic))),
            Ok(Poll::Pending) => {}
        }
        // Only a node that had to wait registers with the token: trivial nodes never get here.
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

/// `work`'s output, or `None` when `cancel` fires first.
pub(crate) async fn race<F: Future>(work: F, cancel: &CancellationToken) -> Option<F::Output> {
    let mut work = std::pin::pin!(work);
    let mut cancelled = std::pin::pin!(cancel.cancelled());
    poll_fn(|cx| {
        if let Poll::Ready(output) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-text payload".to_owned())
}
