//! Running a step's several activations concurrently on the run's own task.
//!
//! A task per activation paid tokio's task machinery (an aligned allocation, trips through the
//! scheduler, the output copied back) and a wait for other threads to wake, for every branch of
//! a fan-out: most of the cost of a quick branch. Polled here instead, every activation is under
//! way at once as before (one that waits on a model or a tool lets the others run), the way
//! asyncio runs LangGraph's branches; what is given up is running two nodes' CPU-bound work on
//! two cores at once, which a node gets back by putting that work on
//! `tokio::task::spawn_blocking` (as tokio asks of any long computation in a task).

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;

/// An activation still running after its first poll, with its place in the step.
struct Waiting<F: ?Sized> {
    at: usize,
    activation: Pin<Box<F>>,
}

impl<F: Future + ?Sized> Future for Waiting<F> {
    type Output = (usize, F::Output);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let at = self.at;
        self.activation.as_mut().poll(cx).map(|output| (at, output))
    }
}

/// Runs `activations` concurrently; their outputs in the order given.
///
/// Each is polled once in turn, and most of a quick step's are done then; those still running
/// go to a `FuturesUnordered`, so that a wake polls only the activation it is for (polling them
/// all on every wake is quadratic in a fan-out of thousands of model calls), and so that the
/// queue's cost, a waker and an allocation each, is paid only by activations that wait.
pub(super) async fn run_all<F: Future + ?Sized>(activations: Vec<Pin<Box<F>>>) -> Vec<F::Output> {
    let mut outputs: Vec<Option<F::Output>> = activations.iter().map(|_| None).collect();
    let mut waiting = FuturesUnordered::new();
    let mut first = activations.into_iter().enumerate();
    // Moved in as `&mut`: a closure that only pushes would hold `&FuturesUnordered`, which is
    // `Send` only for activations that are `Sync`.
    let (done, queue) = (&mut outputs, &mut waiting);
    poll_fn(move |cx| {
        for (at, mut activation) in first.by_ref() {
            match activation.as_mut().poll(cx) {
                Poll::Ready(output) => done[at] = Some(output),
                // Polled again when pushed, with the queue's own waker.
                Poll::Pending => queue.push(Waiting { at, activation }),
            }
        }
        Poll::Ready(())
    })
    .await;
    while let Some((at, output)) = waiting.next().await {
        outputs[at] = Some(output);
    }
    // Every activation was polled to its end above, so every place is filled.
    outputs.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn activations_run_at_once_and_come_back_in_order() {
        // The longest first: in order of completion the outputs would come back reversed.
        let started = tokio::time::Instant::now();
        let activations: Vec<_> = (0..4u64)
            .map(|i| {
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(40 - 10 * i)).await;
                    i
                })
            })
            .collect();
        assert_eq!(run_all(activations).await, vec![0, 1, 2, 3]);
        // Concurrent: the longest wait, not the sum of them.
        assert_eq!(started.elapsed(), Duration::from_millis(40));
    }

    #[tokio::test]
    async fn quick_and_waiting_activations_mix() {
        let (tell, told) = tokio::sync::oneshot::channel::<u32>();
        let waits: Pin<Box<dyn Future<Output = u32> + Send>> =
            Box::pin(async move { told.await.unwrap_or(0) });
        let tells: Pin<Box<dyn Future<Output = u32> + Send>> = Box::pin(async move {
            let _ = tell.send(7);
            1
        });
        let quick: Pin<Box<dyn Future<Output = u32> + Send>> = Box::pin(async { 2 });
        // The first waits on the second: it can finish only if both are under way at once.
        assert_eq!(run_all(vec![waits, tells, quick]).await, vec![7, 1, 2]);
    }
}
