//! Copying a thread and deleting one: a copy holds its own copies of every run and checkpoint,
//! so that the two go on apart and either can be deleted without the other losing its history.

use std::collections::HashMap;

use super::{Newest, Thread, newest};
use crate::checkpoint::{CheckpointRef, Checkpointer, RunRecord, ThreadRecord};
use crate::errors::RunError;
use crate::id::{RunId, ThreadId, Timestamp};
use crate::state::GraphState;

/// Runs read from a thread at a time.
const PAGE: usize = 200;

impl<S: GraphState + Default> Thread<S> {
    /// A new thread, `thread_id`, with this one's metadata and a copy of each of its runs and
    /// checkpoints (with their subgraphs' child runs) under new run ids: the copy has the same
    /// state, history and pending work — a question the thread waits on is asked on the copy
    /// too — and goes on apart from it. See [`copy_stored`].
    ///
    /// # Errors
    /// As [`copy_stored`].
    pub async fn copy(&self, thread_id: ThreadId) -> Result<Thread<S>, RunError> {
        copy_stored(self.store.as_ref(), &self.thread_id, &thread_id).await?;
        self.graph.thread(&thread_id).await
    }

    /// Deletes the thread, its runs and their checkpoints. See [`delete_stored`].
    ///
    /// # Errors
    /// As [`delete_stored`].
    pub async fn delete(self) -> Result<(), RunError> {
        delete_stored(self.store.as_ref(), &self.thread_id).await
    }
}

/// Copies thread `from` in `store` as a new thread `to`: its metadata, and each of its runs and
/// checkpoints (with their subgraphs' child runs) under new run ids, each run's parent its
/// copy. What [`Thread::copy`] does, without the graph's state type (a server's).
///
/// # Errors
/// [`RunError::ThreadNotFound`]; [`RunError::ThreadBusy`] while its newest run is running;
/// [`RunError::ThreadExists`] when `to` is taken; the checkpointer's error.
pub async fn copy_stored(
    store: &dyn Checkpointer,
    from: &ThreadId,
    to: &ThreadId,
) -> Result<(), RunError> {
    let record = idle(store, from).await?;
    let mut runs = Vec::new();
    loop {
        let page = store.thread_runs(from, PAGE, runs.len()).await?;
        let last = page.len() < PAGE;
        runs.extend(page);
        if last {
            break;
        }
    }
    let copy = ThreadRecord::new(to.clone(), record.metadata.clone());
    if !store.create_thread(&copy).await? {
        return Err(RunError::ThreadExists {
            thread_id: to.clone(),
        });
    }
    // Every run's new id first: a run's parent is another run of the thread.
    let ids: HashMap<RunId, RunId> = runs
        .iter()
        .map(|run| (run.run_id.clone(), RunId::new()))
        .collect();
    // Oldest first, as they were made.
    for run in runs.into_iter().rev() {
        let renamed = ids[&run.run_id].clone();
        copy_run(store, run, renamed, &ids, Some(to.clone())).await?;
    }
    if let Some(head) = record.head.as_ref().and_then(|head| ids.get(head)) {
        store
            .move_thread_head(to, None, head, Timestamp::now())
            .await?;
    }
    Ok(())
}

/// Deletes thread `thread_id` from `store`, with its runs and their checkpoints. What
/// [`Thread::delete`] does, without the graph's state type (a server's).
///
/// # Errors
/// [`RunError::ThreadNotFound`]; [`RunError::ThreadBusy`] while its newest run is running
/// (cancel it first); the checkpointer's error.
pub async fn delete_stored(store: &dyn Checkpointer, thread_id: &ThreadId) -> Result<(), RunError> {
    idle(store, thread_id).await?;
    if store.delete_thread(thread_id).await? {
        Ok(())
    } else {
        Err(RunError::ThreadNotFound {
            thread_id: thread_id.clone(),
        })
    }
}

/// The thread's record, if its newest run is not running.
async fn idle(store: &dyn Checkpointer, thread_id: &ThreadId) -> Result<ThreadRecord, RunError> {
    let record = store
        .load_thread(thread_id)
        .await?
        .ok_or_else(|| RunError::ThreadNotFound {
            thread_id: thread_id.clone(),
        })?;
    match newest(store, &record).await? {
        Newest::Busy(run_id) => Err(RunError::ThreadBusy {
            thread_id: thread_id.clone(),
            run_id,
        }),
        Newest::Idle(_) => Ok(record),
    }
}

/// Writes run `run` again as `to`, on `thread`, with each of its checkpoints, then its child
/// runs under `to`'s namespace (`<to>/…`); a parent among `ids` is its copy.
async fn copy_run(
    store: &dyn Checkpointer,
    run: RunRecord,
    to: RunId,
    ids: &HashMap<RunId, RunId>,
    thread: Option<ThreadId>,
) -> Result<(), RunError> {
    let from = run.run_id.clone();
    let checkpoints = store.list_checkpoints(&from).await?;
    let rename = |child: &RunId| match child.as_str().strip_prefix(from.as_str()) {
        Some(rest) if rest.starts_with('/') => RunId::from(format!("{to}{rest}")),
        _ => child.clone(),
    };
    let mut copy = run;
    copy.run_id = to.clone();
    copy.thread = thread;
    copy.owner = None;
    copy.lease_until = None;
    copy.parent = copy.parent.map(|parent| CheckpointRef {
        run_id: ids.get(&parent.run_id).cloned().unwrap_or(parent.run_id),
        checkpoint: parent.checkpoint,
    });
    // Its child runs, as a resume finds them: the first segment of a question's id
    // (`review@2/approve@2` → `<run>/review@2`), and the children a checkpoint holds.
    let mut segments: Vec<String> = copy
        .interrupts
        .iter()
        .filter_map(|i| i.id.split_once('/').map(|(segment, _)| segment.to_owned()))
        .collect();
    let prefix = format!("{from}/");
    for mut checkpoint in checkpoints {
        checkpoint.run_id = to.clone();
        segments.extend(
            checkpoint
                .interrupts
                .iter()
                .filter_map(|i| i.id.split_once('/').map(|(segment, _)| segment.to_owned())),
        );
        for child in checkpoint.children.values_mut() {
            if let Some(segment) = child.as_str().strip_prefix(&prefix) {
                segments.push(segment.to_owned());
            }
            *child = rename(child);
        }
        store.save_step(copy.clone(), checkpoint).await?;
    }
    segments.sort();
    segments.dedup();
    for segment in segments {
        let child = RunId::from(format!("{from}/{segment}"));
        if let Some(record) = store.load_run(&child).await? {
            let renamed = RunId::from(format!("{to}/{segment}"));
            Box::pin(copy_run(store, record, renamed, ids, None)).await?;
        }
    }
    Ok(())
}
