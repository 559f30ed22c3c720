//! The hand-written floor: what a program that knows its graph would do by hand — boxed async
//! node functions, an edge table, the state behind an `Arc`, updates folded in frontier order,
//! several nodes of a step polled together on the run's task (as Trellis runs them), their
//! updates taken in order. No checkpoints, no events, no checks.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

/// A node: the state in, its update out.
pub(crate) type NodeFn<S, U> =
    Box<dyn Fn(Arc<S>) -> Pin<Box<dyn Future<Output = U> + Send>> + Send + Sync>;

/// A router on the new state: a node, or `None` for the end.
pub(crate) type Router<S> = Box<dyn Fn(&S) -> Option<usize> + Send + Sync>;

/// Where a node leads.
pub(crate) enum Next<S> {
    To(usize),
    Route(Router<S>),
    Fork(Vec<usize>),
    End,
}

pub(crate) struct Floor<S, U> {
    pub(crate) nodes: Vec<NodeFn<S, U>>,
    pub(crate) edges: Vec<Next<S>>,
    pub(crate) apply: fn(&mut S, U),
    pub(crate) entry: usize,
}

/// A node function from a plain function of the state.
pub(crate) fn node<S, U>(body: fn(&S) -> U) -> NodeFn<S, U>
where
    S: Send + Sync + 'static,
    U: Send + 'static,
{
    Box::new(move |state| Box::pin(async move { body(&state) }))
}

impl<S, U> Floor<S, U>
where
    S: Clone + Send + Sync + 'static,
    U: Send + 'static,
{
    /// Runs from the entry to the end; the final state.
    pub(crate) async fn run(self: &Arc<Self>, input: S) -> S {
        let mut state = Arc::new(input);
        let mut frontier = vec![self.entry];
        let mut next = Vec::new();
        let mut updates = Vec::new();
        while !frontier.is_empty() {
            if let [only] = frontier[..] {
                updates.push((self.nodes[only])(Arc::clone(&state)).await);
            } else {
                let mut running: Vec<_> = frontier
                    .iter()
                    .map(|&i| Some((self.nodes[i])(Arc::clone(&state))))
                    .collect();
                let mut done: Vec<Option<U>> = running.iter().map(|_| None).collect();
                poll_fn(|cx| {
                    let mut waiting = false;
                    for (slot, output) in running.iter_mut().zip(done.iter_mut()) {
                        if let Some(node) = slot {
                            match node.as_mut().poll(cx) {
                                Poll::Ready(update) => {
                                    *output = Some(update);
                                    *slot = None;
                                }
                                Poll::Pending => waiting = true,
                            }
                        }
                    }
                    if waiting {
                        Poll::Pending
                    } else {
                        Poll::Ready(())
                    }
                })
                .await;
                updates.extend(done.into_iter().flatten());
            }
            let writable = Arc::make_mut(&mut state);
            for update in updates.drain(..) {
                (self.apply)(writable, update);
            }
            for &i in &frontier {
                match &self.edges[i] {
                    Next::To(j) => next.push(*j),
                    Next::Route(route) => next.extend(route(&state)),
                    Next::Fork(all) => next.extend_from_slice(all),
                    Next::End => {}
                }
            }
            next.sort_unstable();
            next.dedup();
            std::mem::swap(&mut frontier, &mut next);
            next.clear();
        }
        Arc::try_unwrap(state).unwrap_or_else(|shared| (*shared).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_runs_a_fork_and_joins_once() {
        // 0 forks to 1 and 2, both lead to 3, which ends.
        let floor = Arc::new(Floor::<Vec<u8>, u8> {
            nodes: vec![node(|_| 0), node(|_| 1), node(|_| 2), node(|_| 3)],
            edges: vec![Next::Fork(vec![1, 2]), Next::To(3), Next::To(3), Next::End],
            apply: |state, update| state.push(update),
            entry: 0,
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(rt.block_on(floor.run(Vec::new())), vec![0, 1, 2, 3]);
    }
}
