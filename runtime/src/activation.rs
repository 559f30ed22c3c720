//! One activation of one node: attempts with retry and backoff, a timeout per attempt, panics
//! caught, and the run's cancellation raced against the node.

use std::any::Any;
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::cancel::CancellationToken;
use crate::node::{Node, NodeContext, NodeError, NodeFailure, NodeResult};
use crate::options::AttemptPolicy;
use crate::state::GraphState;

/// What an activation produced, with what observers should hear about it.
pub(crate) struct Activation<U> {
    pub(crate) result: Result<NodeResult<U>, Stop>,
    pub(crate) report: Report,
}

/// What an activation tells besides its result. Apart from it, so that each is handed on by
/// itself: together they are large enough to be copied with a call.
pub(crate) struct Report {
    /// Failed attempts: (attempt, error text, whether another attempt followed).
    pub(crate) failed_attempts: Vec<(u32, String, bool)>,
    /// Wall time of the whole activation, measured only when someone observes events.
    pub(crate) elapsed: Option<Duration>,
    /// What a subgraph node's child did (its final state, or its pause).
    pub(crate) nested: Option<Arc<crate::subgraph::Nested>>,
}

/// Why an activation produced no result.
pub(crate) enum Stop {
    /// Boxed: failures are rare and this keeps every activation's result small.
    Failed(Box<NodeFailure>),
    Cancelled,
}

/// Runs `node` until an attempt succeeds, its retries are used up, or the run is cancelled
/// (`cancel`, borrowed from the run: a clone would cost two atomic operations per activation).
///
/// A [plain](AttemptPolicy::is_plain) activation takes [`once`]: the same outcome without the
/// retry loop's state, which every activation's future would carry (and copy) otherwise.
pub(crate) async fn activate<S: GraphState>(
    node: &dyn Node<S>,
    options: AttemptPolicy,
    state: Arc<S>,
    mut ctx: NodeContext,
    cancel: &CancellationToken,
    observed: bool,
) -> Activation<S::Update> {
    if options.is_plain(observed) {
        let result = match start(node, state, &mut ctx, None, cancel) {
            Ok(attempt) => attempt.await,
            Err(stop) => Err(stop),
        };
        once(result, &mut ctx)
    } else {
        Box::pin(attempts(node, options, state, ctx, cancel, observed)).await
    }
}

/// The activation of a plain node from its one attempt's `result` (what [`attempts`] makes
/// of a node it does not retry, time nor observe). Apart from the attempt, so that the
/// executor can await a single node's attempt in its own frame, the smallest future there is.
pub(crate) fn once<U>(
    result: Result<NodeResult<U>, Option<NodeError>>,
    ctx: &mut NodeContext,
) -> Activation<U> {
    let result = match result {
        Ok(result) => Ok(result),
        Err(None) => Err(Stop::Cancelled),
        Err(Some(error)) => Err(failure(&error, ctx, 1)),
    };
    Activation {
        result,
        report: Report {
            failed_attempts: Vec::new(),
            elapsed: None,
            nested: ctx.nested.take(),
        },
    }
}

/// Why an activation failed, after `attempts` attempts.
#[cold]
fn failure(error: &NodeError, ctx: &NodeContext, attempts: u32) -> Stop {
    Stop::Failed(Box::new(NodeFailure {
        node: ctx.node().to_owned(),
        step: ctx.step,
        attempts,
        kind: error.kind(),
        message: error.to_string(),
    }))
}

/// Attempts with retry, backoff and timeouts, timed and reported when observed. Boxed by
/// [`activate`]: its future is large, and rare next to [`once`]'s.
async fn attempts<S: GraphState>(
    node: &dyn Node<S>,
    options: AttemptPolicy,
    state: Arc<S>,
    mut ctx: NodeContext,
    cancel: &CancellationToken,
    observed: bool,
) -> Activation<S::Update> {
    let started = observed.then(Instant::now);
    let mut failed_attempts = Vec::new();
    let mut attempt = 0;
    let result = loop {
        attempt += 1;
        ctx.attempt = attempt;
        let error =
            match attempt_once(node, Arc::clone(&state), &mut ctx, options.timeout, cancel).await {
                Ok(result) => break Ok(result),
                Err(None) => break Err(Stop::Cancelled),
                Err(Some(error)) => error,
            };
        let retrying = options.retry.retries_on(error.kind()) && attempt <= options.retry.retries;
        if observed {
            failed_attempts.push((attempt, error.to_string(), retrying));
        }
        if !retrying {
            break Err(failure(&error, &ctx, attempt));
        }
        let spread = if options.retry.jitter {
            crate::options::spread((ctx.run_id().as_str(), ctx.node, ctx.step, attempt))
        } else {
            0.0
        };
        let delay = options.retry.wait(attempt, spread);
        if delay.is_zero() {
            continue;
        }
        let sleep = match timer(delay, "before retrying") {
            Ok(sleep) => sleep,
            Err(error) => break Err(failure(&error, &ctx, attempt)),
        };
        if Box::pin(race(sleep, cancel)).await.is_none() {
            break Err(Stop::Cancelled);
        }
    };
    Activation {
        result,
        report: Report {
            failed_attempts,
            elapsed: started.map(|t| t.elapsed()),
            nested: ctx.nested.take(),
        },
    }
}

/// A sleep of `limit`, for a node's timeout or backoff (`purpose`). Boxed: a timer is large,
/// and inline it would grow every activation's future (copied whole on the hot path).
///
/// One rule for both: a runtime without tokio's timer panics making the sleep, and that panic
/// is the node's failure (`panicked: cannot wait 10ms before retrying: …`; a panic, so not
/// retried), not its caller's.
fn timer(limit: Duration, purpose: &str) -> Result<Pin<Box<tokio::time::Sleep>>, NodeError> {
    catch_unwind(|| Box::pin(tokio::time::sleep(limit))).map_err(|panic| {
        NodeError::Panicked(format!(
            "cannot wait {limit:?} {purpose}: {}",
            panic_message(&*panic)
        ))
    })
}

/// One attempt: `Err(None)` when cancelled, `Err(Some(_))` when it failed, timed out or panicked.
async fn attempt_once<S: GraphState>(
    node: &dyn Node<S>,
    state: Arc<S>,
    ctx: &mut NodeContext,
    timeout: Option<Duration>,
    cancel: &CancellationToken,
) -> Result<NodeResult<S::Update>, Option<NodeError>> {
    start(node, state, ctx, timeout, cancel)?.await
}

/// An attempt, started and ready to be awaited; `Err` as [`attempt_once`]'s when it cannot
/// start (the run is cancelled, or its timer cannot be made).
// Always: out of line, the attempt would be built in this frame and copied out.
#[inline(always)]
pub(crate) fn start<'a, S: GraphState>(
    node: &'a dyn Node<S>,
    state: Arc<S>,
    ctx: &'a mut NodeContext,
    timeout: Option<Duration>,
    cancel: &'a CancellationToken,
) -> Result<Attempt<'a, S::Update>, Option<NodeError>> {
    if cancel.is_cancelled() {
        return Err(None);
    }
    // Made before the node starts, so the limit counts from here.
    let deadline = match timeout {
        None => None,
        Some(limit) => Some((timer(limit, "for its timeout")?, limit)),
    };
    let work = begin(node, state, ctx)?;
    Ok(Attempt {
        work,
        deadline,
        cancel,
        cancelled: None,
    })
}

/// The node's future. A node may panic before it returns it (a closure node calls its closure
/// here, and any `Node` may do work in `run` itself): that panic is this node's error too.
#[inline(always)]
fn begin<'a, S: GraphState>(
    node: &'a dyn Node<S>,
    state: Arc<S>,
    ctx: &'a mut NodeContext,
) -> Result<Work<'a, S::Update>, Option<NodeError>> {
    catch_unwind(AssertUnwindSafe(|| node.run(state, ctx)))
        .map_err(|panic| Some(NodeError::Panicked(panic_message(&*panic))))
}

type Work<'a, U> = Pin<Box<dyn Future<Output = Result<NodeResult<U>, NodeError>> + Send + 'a>>;

/// A node's future raced against its deadline and the run's cancellation, with panics caught.
///
/// Written by hand rather than as nested `async` blocks: every field is a pointer, so the
/// future stays small, and the futures that hold it are copied on every step.
pub(crate) struct Attempt<'a, U> {
    work: Work<'a, U>,
    deadline: Option<(Pin<Box<tokio::time::Sleep>>, Duration)>,
    cancel: &'a CancellationToken,
    /// Made on the first `Pending` only: a node that finishes at once never registers with
    /// the token and never allocates for it.
    cancelled: Option<Pin<Box<dyn Future<Output = ()> + Send + 'a>>>,
}

impl<U> Future for Attempt<'_, U> {
    type Output = Result<NodeResult<U>, Option<NodeError>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        poll_attempt(
            &mut this.work,
            this.deadline.as_mut(),
            this.cancel,
            &mut this.cancelled,
            cx,
        )
    }
}

/// One poll of an attempt's parts: the node (its panic caught), then its deadline, then the
/// run's cancellation (registered with on the first `Pending` only).
fn poll_attempt<'a, U>(
    work: &mut Work<'a, U>,
    deadline: Option<&mut (Pin<Box<tokio::time::Sleep>>, Duration)>,
    cancel: &'a CancellationToken,
    cancelled: &mut Option<Pin<Box<dyn Future<Output = ()> + Send + 'a>>>,
    cx: &mut Context<'_>,
) -> Poll<Result<NodeResult<U>, Option<NodeError>>> {
    match catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx))) {
        Ok(Poll::Ready(output)) => return Poll::Ready(output.map_err(Some)),
        Err(panic) => {
            return Poll::Ready(Err(Some(NodeError::Panicked(panic_message(&*panic)))));
        }
        Ok(Poll::Pending) => {}
    }
    if let Some((sleep, limit)) = deadline
        && sleep.as_mut().poll(cx).is_ready()
    {
        return Poll::Ready(Err(Some(NodeError::Timeout(*limit))));
    }
    let cancelled = cancelled.get_or_insert_with(|| Box::pin(cancel.cancelled()));
    if cancelled.as_mut().poll(cx).is_ready() {
        return Poll::Ready(Err(None));
    }
    Poll::Pending
}

/// A node with no timeout, run where it stands: what [`start`] and awaiting its [`Attempt`]
/// do, for a step of one plain node, except that the run's cancellation is not checked first (the step
/// checked it just before). An `Attempt` built field by field and then moved into its `await`
/// was read back whole before the writes had landed, and that read stalled on every step.
#[inline(always)]
pub(crate) async fn attempt_in_place<S: GraphState>(
    node: &dyn Node<S>,
    state: Arc<S>,
    ctx: &mut NodeContext,
    cancel: &CancellationToken,
) -> Result<NodeResult<S::Update>, Option<NodeError>> {
    let mut work = begin(node, state, ctx)?;
    let mut cancelled = None;
    poll_fn(|cx| poll_attempt(&mut work, None, cancel, &mut cancelled, cx)).await
}

/// `work`'s output, or `None` when `cancel` fires first.
async fn race<F: Future>(work: F, cancel: &CancellationToken) -> Option<F::Output> {
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
