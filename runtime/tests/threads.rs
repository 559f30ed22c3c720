//! Threads on the in-memory store and on SQLite (PostgreSQL runs the same scenarios in
//! `postgres.rs`): state that outlives a run, one run at a time, history across runs; and a
//! thread that outlives its process.

mod common;

use std::sync::Arc;

use trellis::checkpoint::{Checkpointer, InMemoryCheckpointer, SqliteCheckpointer};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn threads_on_the_in_memory_store() {
    common::threads::all(Arc::new(InMemoryCheckpointer::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn threads_on_sqlite() {
    let scratch = common::scratch("threads");
    let store = SqliteCheckpointer::open(scratch.path().join("runs.db")).expect("opens");
    common::threads::all(Arc::new(store)).await;
}

#[tokio::test]
async fn a_thread_outlives_its_process() {
    let scratch = common::scratch("threads-reopen");
    let path = scratch.path().join("runs.db");
    let thread_id = {
        let store: Arc<dyn Checkpointer> = Arc::new(SqliteCheckpointer::open(&path).unwrap());
        let thread = common::threads::chat_graph(store)
            .create_thread(Default::default())
            .await
            .unwrap();
        thread
            .invoke(common::TicketUpdate::default().log("before"))
            .await
            .unwrap();
        thread.id().clone()
    };
    let store: Arc<dyn Checkpointer> = Arc::new(SqliteCheckpointer::open(&path).unwrap());
    let thread = common::threads::chat_graph(store)
        .thread(&thread_id)
        .await
        .unwrap();
    let after = thread
        .invoke(common::TicketUpdate::default().log("after"))
        .await
        .unwrap();
    assert_eq!(
        after.state().log,
        ["before", "re: before", "after", "re: after"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_on_the_in_memory_store() {
    let fresh = || -> Arc<dyn Checkpointer> { Arc::new(InMemoryCheckpointer::new()) };
    common::retention::keep_last_per_thread(fresh()).await;
    common::retention::by_age_and_per_graph(fresh()).await;
    common::retention::a_compacted_thread_goes_on(fresh()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_on_sqlite() {
    let scratch = common::scratch("retention");
    let fresh = |name: &str| -> Arc<dyn Checkpointer> {
        Arc::new(SqliteCheckpointer::open(scratch.path().join(name)).expect("opens"))
    };
    common::retention::keep_last_per_thread(fresh("count.db")).await;
    common::retention::by_age_and_per_graph(fresh("age.db")).await;
    common::retention::a_compacted_thread_goes_on(fresh("compact.db")).await;
}
