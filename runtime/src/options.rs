//! `NodeOptions`: how one node runs (retries, timeout, visit bound, pauses, deferral, error
//! handler) and how its blueprint describes it.

use std::time::Duration;

use trellis_graph::{MetaValue, NodeKind, Retry, RetryOn};

use crate::node::FailureKind;

/// How one node runs: retries, timeout, visit bound, pauses, deferral, error handler; and how
/// its [blueprint](crate::blueprint) describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeOptions {
    pub(crate) retry: RetryPolicy,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_visits: Option<u32>,
    pub(crate) interrupt: Option<InterruptPoint>,
    pub(crate) defer: bool,
    pub(crate) on_error: Option<String>,
    pub(crate) question: Option<String>,
    pub(crate) max_concurrency: Option<u32>,
    doc: Option<String>,
    kind: Option<NodeKind>,
    meta: Vec<(String, MetaValue)>,
    /// The fields the node declares it writes ([`NodeOptions::writes`]).
    writes: Option<Vec<String>>,
}

/// How a node retries: how often, how long it waits, and which failures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RetryPolicy {
    pub(crate) retries: u32,
    /// The first wait; each next one is twice as long.
    pub(crate) backoff: Duration,
    /// The longest wait.
    pub(crate) max_backoff: Option<Duration>,
    /// Whether each wait is spread at random by up to ±50 %.
    pub(crate) jitter: bool,
    /// The failures retried; `None` for the default (timeouts and errors).
    pub(crate) on: Option<RetryOn>,
}

impl RetryPolicy {
    /// Whether a failure of this kind is retried.
    pub(crate) fn retries_on(&self, kind: FailureKind) -> bool {
        let on = self.on.unwrap_or_default();
        match kind {
            FailureKind::Failed => on.error,
            FailureKind::Timeout => on.timeout,
            FailureKind::Panicked => on.panic,
        }
    }

    /// The wait before retry number `retry` (1 for the first): `backoff` doubled `retry - 1`
    /// times, at most `max_backoff`; with jitter, scaled by `0.5 + spread` where `spread` in
    /// `[0, 1)` is what the caller draws (see [`spread`]).
    pub(crate) fn wait(&self, retry: u32, spread: f64) -> Duration {
        let doubled = self
            .backoff
            .saturating_mul(2u32.saturating_pow(retry.saturating_sub(1)));
        let wait = self.max_backoff.map_or(doubled, |max| doubled.min(max));
        if self.jitter {
            wait.mul_f64(0.5 + spread)
        } else {
            wait
        }
    }
}

/// A number in `[0, 1)` drawn from `seed`: the jitter of one wait. A hash, not a generator: the
/// seed (the run, the node, its step and attempt) makes every wait of a run its own, and the
/// same again when a test replays it; runs differ because their ids are random.
pub(crate) fn spread(seed: impl std::hash::Hash) -> f64 {
    use std::hash::{BuildHasher as _, BuildHasherDefault};
    let hash = BuildHasherDefault::<trellis_graph::Fnv>::default().hash_one(seed);
    // The top 53 bits, as the fraction of a double.
    (hash >> 11) as f64 / (1u64 << 53) as f64
}

/// The part of [`NodeOptions`] an activation needs, cheap to copy into each one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttemptPolicy {
    pub(crate) retry: RetryPolicy,
    pub(crate) timeout: Option<Duration>,
}

impl AttemptPolicy {
    /// One attempt, no timeout, and nobody to tell about it: the activation needs no retry
    /// loop, no timer and no clock.
    #[inline]
    pub(crate) fn is_plain(&self, observed: bool) -> bool {
        self.retry.retries == 0 && self.timeout.is_none() && !observed
    }
}

pub(crate) use trellis_graph::InterruptPoint;

impl NodeOptions {
    pub(crate) fn policy(&self) -> AttemptPolicy {
        AttemptPolicy {
            retry: self.retry,
            timeout: self.timeout,
        }
    }

    /// Default options: one attempt, no timeout, no bound, no pause.
    pub fn new() -> Self {
        Self::default()
    }

    /// Run a failed attempt again up to `retries` times, waiting `backoff` before the first
    /// retry and twice as long before each next one (`retry 3 backoff 200ms` waits 200, 400,
    /// 800 ms). Timeouts and errors are retried, panics not, unless [`retry_on`] says otherwise.
    ///
    /// ```
    /// use std::time::Duration;
    /// use trellis::{NodeOptions, error::FailureKind};
    ///
    /// // `retry 3 backoff 200ms max 1s jitter; retry_on timeout;`
    /// let options = NodeOptions::new()
    ///     .retry(3, Duration::from_millis(200))
    ///     .max_backoff(Duration::from_secs(1))
    ///     .jitter()
    ///     .retry_on([FailureKind::Timeout]);
    /// # let _ = options;
    /// ```
    ///
    /// [`retry_on`]: Self::retry_on
    #[must_use]
    pub fn retry(mut self, retries: u32, backoff: Duration) -> Self {
        self.retry.retries = retries;
        self.retry.backoff = backoff;
        self
    }

    /// Wait at most `max` between two attempts: the doubling of [`retry`](Self::retry)'s
    /// backoff stops there (`retry 5 backoff 1s max 5s` waits 1, 2, 4, 5, 5 s).
    #[must_use]
    pub fn max_backoff(mut self, max: Duration) -> Self {
        self.retry.max_backoff = Some(max);
        self
    }

    /// Spread each wait between attempts at random by up to ±50 %, so that runs failing
    /// together do not retry together.
    #[must_use]
    pub fn jitter(mut self) -> Self {
        self.retry.jitter = true;
        self
    }

    /// Retry only these failures (`retry_on timeout, error;`): [`FailureKind::Failed`] is the
    /// language's `error`, [`FailureKind::Panicked`] its `panic`. Without it, timeouts and
    /// errors are retried and panics are not.
    #[must_use]
    pub fn retry_on(mut self, failures: impl IntoIterator<Item = FailureKind>) -> Self {
        let mut on = RetryOn::NONE;
        for failure in failures {
            match failure {
                FailureKind::Failed => on.error = true,
                FailureKind::Timeout => on.timeout = true,
                FailureKind::Panicked => on.panic = true,
            }
        }
        self.retry.on = Some(on);
        self
    }

    /// Fail an attempt that runs longer than `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Fail the run rather than activate the node more than `max_visits` times.
    #[must_use]
    pub fn max_visits(mut self, max_visits: u32) -> Self {
        self.max_visits = Some(max_visits);
        self
    }

    /// Run at most `max` of the node's sent branches ([`SendTo`](crate::send::SendTo)) at once; the
    /// others of the step wait for a free place. (All at once by default.)
    #[must_use]
    pub fn max_concurrency(mut self, max: u32) -> Self {
        self.max_concurrency = Some(max);
        self
    }

    /// Pause the run before the node runs, until a person resumes it.
    #[must_use]
    pub fn interrupt_before(mut self) -> Self {
        self.interrupt = Some(InterruptPoint::Before);
        self
    }

    /// Pause the run after the node ran, until a person resumes it.
    #[must_use]
    pub fn interrupt_after(mut self) -> Self {
        self.interrupt = Some(InterruptPoint::After);
        self
    }

    /// Hold the node back while any other branch still has a node to run.
    #[must_use]
    pub fn defer(mut self) -> Self {
        self.defer = true;
        self
    }

    /// Route the node's failure (after its retries) to `handler`, which runs in the next step
    /// and finds the failure in [`NodeContext::failure`](crate::NodeContext::failure).
    #[must_use]
    pub fn on_error(mut self, handler: impl Into<String>) -> Self {
        self.on_error = Some(handler.into());
        self
    }

    /// What the node's `interrupt_before`/`interrupt_after` pause asks the person (by default
    /// "approve running `node`" / "review the result of `node`").
    #[must_use]
    pub fn question(mut self, question: impl Into<String>) -> Self {
        self.question = Some(question.into());
        self
    }

    /// Documents the node in the graph's [blueprint](crate::CompiledGraph::blueprint).
    #[must_use]
    pub fn doc(mut self, doc: impl Into<String>) -> Self {
        self.doc = Some(doc.into());
        self
    }

    /// Says what the node does, for UIs and agents (the runtime does not interpret it).
    #[must_use]
    pub fn kind(mut self, kind: NodeKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// Declares the state fields the node writes (a `.graph` node's `writes notes, sources;`):
    /// [`compile`](crate::GraphBuilder::compile) refuses a field the state does not have
    /// (E0216), and two nodes that can run in one super-step writing a field whose reducer
    /// overwrites (E0214), for a state that lists its fields (`#[derive(GraphState)]` does). A
    /// closure node still returns the state's whole update: generated code is what restricts a
    /// node's update to its fields.
    #[must_use]
    pub fn writes<I>(mut self, fields: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.writes = Some(fields.into_iter().map(Into::into).collect());
        self
    }

    /// Adds a free-form `key = value` to the node's blueprint.
    #[must_use]
    pub fn meta(mut self, key: impl Into<String>, value: MetaValue) -> Self {
        self.meta.push((key.into(), value));
        self
    }

    /// How the blueprint describes a node with these options. Durations are whole milliseconds,
    /// rounded up so that a short timeout is not mistaken for none.
    pub(crate) fn describe(&self, id: String) -> trellis_graph::Node {
        let millis = |duration: Duration| {
            u64::try_from(duration.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX)
        };
        trellis_graph::Node {
            id,
            doc: self.doc.clone(),
            kind: self.kind.clone(),
            retry: (self.retry.retries > 0).then(|| Retry {
                backoff_ms: Some(millis(self.retry.backoff)).filter(|&ms| ms > 0),
                max_backoff_ms: self.retry.max_backoff.map(millis),
                jitter: self.retry.jitter,
                on: self.retry.on.unwrap_or_default(),
                ..Retry::new(self.retry.retries)
            }),
            timeout_ms: self.timeout.map(millis),
            max_visits: self.max_visits,
            interrupt: self.interrupt,
            question: self.question.clone(),
            defer: self.defer,
            on_error: self.on_error.clone(),
            meta: self.meta.clone(),
            max_concurrency: self.max_concurrency,
            // A type name is the language's to give (the builder's inputs are JSON).
            input: None,
            graph: None,
            writes: self.writes.clone(),
            // Typed by the builder's `set_answer` and `set_asks`, which write them.
            answer: None,
            asks: None,
        }
    }

    /// The options a blueprint's node describes.
    pub(crate) fn described(node: &trellis_graph::Node) -> Self {
        NodeOptions {
            retry: node
                .retry
                .map_or_else(RetryPolicy::default, |retry| RetryPolicy {
                    retries: retry.retries,
                    backoff: Duration::from_millis(retry.backoff_ms.unwrap_or(0)),
                    max_backoff: retry.max_backoff_ms.map(Duration::from_millis),
                    jitter: retry.jitter,
                    on: (retry.on != RetryOn::default()).then_some(retry.on),
                }),
            timeout: node.timeout_ms.map(Duration::from_millis),
            max_visits: node.max_visits,
            interrupt: node.interrupt,
            question: node.question.clone(),
            defer: node.defer,
            on_error: node.on_error.clone(),
            max_concurrency: node.max_concurrency,
            doc: node.doc.clone(),
            kind: node.kind.clone(),
            meta: node.meta.clone(),
            writes: node.writes.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(backoff_ms: u64, max_ms: Option<u64>, jitter: bool) -> RetryPolicy {
        RetryPolicy {
            retries: 5,
            backoff: Duration::from_millis(backoff_ms),
            max_backoff: max_ms.map(Duration::from_millis),
            jitter,
            on: None,
        }
    }

    #[test]
    fn waits_double_up_to_the_max_and_jitter_scales_them_by_half_to_one_and_a_half() {
        let waits = |policy: RetryPolicy, spread: f64| {
            (1..=5)
                .map(|retry| policy.wait(retry, spread).as_millis())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            waits(policy(200, None, false), 0.9),
            [200, 400, 800, 1600, 3200]
        );
        assert_eq!(
            waits(policy(1000, Some(5000), false), 0.0),
            [1000, 2000, 4000, 5000, 5000]
        );
        assert_eq!(
            waits(policy(200, Some(500), true), 0.0),
            [100, 200, 250, 250, 250]
        );
        assert_eq!(
            waits(policy(200, Some(500), true), 0.5),
            [200, 400, 500, 500, 500]
        );
        assert_eq!(
            waits(policy(200, None, true), 0.75),
            [250, 500, 1000, 2000, 4000]
        );
    }

    /// The same seed draws the same spread; seeds spread over `[0, 1)` evenly enough.
    #[test]
    fn a_spread_is_the_seeds_and_seeds_cover_the_range() {
        assert_eq!(
            spread(("run", 3usize, 7u64, 2u32)),
            spread(("run", 3usize, 7u64, 2u32))
        );
        assert_ne!(
            spread(("run", 3usize, 7u64, 2u32)),
            spread(("run", 3usize, 7u64, 3u32))
        );
        let draws: Vec<f64> = (0..10_000u32).map(|seed| spread(("run", seed))).collect();
        assert!(draws.iter().all(|d| (0.0..1.0).contains(d)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((0.48..0.52).contains(&mean), "{mean}");
        let tenths = (0..10).map(|t| draws.iter().filter(|d| (**d * 10.0) as usize == t).count());
        assert!(tenths.into_iter().all(|n| (900..1100).contains(&n)));
    }

    #[test]
    fn retry_on_defaults_to_timeouts_and_errors() {
        let plain = policy(0, None, false);
        assert!(plain.retries_on(FailureKind::Timeout));
        assert!(plain.retries_on(FailureKind::Failed));
        assert!(!plain.retries_on(FailureKind::Panicked));
        let named = NodeOptions::new().retry_on([FailureKind::Panicked]).retry;
        assert!(named.retries_on(FailureKind::Panicked));
        assert!(!named.retries_on(FailureKind::Failed));
    }

    /// A policy survives the blueprint: `describe` then `described`.
    #[test]
    fn a_policy_reads_back_from_its_blueprint() {
        let options = NodeOptions::new()
            .retry(3, Duration::from_millis(200))
            .max_backoff(Duration::from_secs(5))
            .jitter()
            .retry_on([FailureKind::Timeout]);
        let node = options.describe("call".to_owned());
        let retry = node.retry.unwrap();
        assert_eq!(
            (
                retry.retries,
                retry.backoff_ms,
                retry.max_backoff_ms,
                retry.jitter
            ),
            (3, Some(200), Some(5000), true)
        );
        assert_eq!(retry.on.names().collect::<Vec<_>>(), ["timeout"]);
        assert_eq!(NodeOptions::described(&node), options);
    }
}
