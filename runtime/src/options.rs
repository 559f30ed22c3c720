//! `NodeOptions`: how one node runs (retries, timeout, visit bound, pauses, deferral, error
//! handler) and how its blueprint describes it.

use std::time::Duration;

use trellis_graph::{MetaValue, NodeKind, Retry};

/// How one node runs: retries, timeout, visit bound, pauses, deferral, error handler; and how
/// its [blueprint](crate::blueprint) describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeOptions {
    pub(crate) retries: u32,
    pub(crate) backoff: Duration,
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
}

/// The part of [`NodeOptions`] an activation needs, cheap to copy into each one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttemptPolicy {
    pub(crate) retries: u32,
    pub(crate) backoff: Duration,
    pub(crate) timeout: Option<Duration>,
}

impl AttemptPolicy {
    /// One attempt, no timeout, and nobody to tell about it: the activation needs no retry
    /// loop, no timer and no clock.
    #[inline]
    pub(crate) fn is_plain(&self, observed: bool) -> bool {
        self.retries == 0 && self.timeout.is_none() && !observed
    }
}

pub(crate) use trellis_graph::InterruptPoint;

impl NodeOptions {
    pub(crate) fn policy(&self) -> AttemptPolicy {
        AttemptPolicy {
            retries: self.retries,
            backoff: self.backoff,
            timeout: self.timeout,
        }
    }

    /// Default options: one attempt, no timeout, no bound, no pause.
    pub fn new() -> Self {
        Self::default()
    }

    /// Run a failed attempt again up to `retries` times, waiting `backoff` before the first
    /// retry and twice as long before each next one (`retry 3 backoff 200ms` waits 200, 400,
    /// 800 ms). Timeouts are retried; panics are not.
    #[must_use]
    pub fn retry(mut self, retries: u32, backoff: Duration) -> Self {
        self.retries = retries;
        self.backoff = backoff;
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

    /// Run at most `max` of the node's sent branches ([`SendTo`](crate::SendTo)) at once; the
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
            retry: (self.retries > 0).then(|| Retry {
                retries: self.retries,
                backoff_ms: Some(millis(self.backoff)).filter(|&ms| ms > 0),
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
        }
    }

    /// The options a blueprint's node describes.
    pub(crate) fn described(node: &trellis_graph::Node) -> Self {
        NodeOptions {
            retries: node.retry.map_or(0, |retry| retry.retries),
            backoff: Duration::from_millis(node.retry.and_then(|r| r.backoff_ms).unwrap_or(0)),
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
        }
    }
}
