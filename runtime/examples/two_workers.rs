//! Two workers sharing one queue: a producer enqueues runs, two `Worker`s (each with its own
//! connection to the store, as two processes or two machines would have) execute them, and every
//! run is completed exactly once.
//!
//! ```text
//! cargo run -p trellis-runtime --example two_workers                        # a temporary SQLite file
//! cargo run -p trellis-runtime --features postgres --example two_workers -- postgres://user@host/db
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use trellis::checkpoint::StoreUrl;
use trellis::{END, GraphBuilder, GraphState, Outcome, START, worker::Worker};

/// An order to pack: each step packs one item.
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState)]
struct Order {
    items: u32,
    #[reducer(sum)]
    packed: u32,
}

fn packing() -> trellis::CompiledGraph<Order> {
    let mut graph = GraphBuilder::<Order>::new("Packing");
    graph
        .add_node_fn("pack", |_, _| async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Ok(OrderUpdate::default().packed(1).into())
        })
        .add_edge(START, "pack")
        .add_conditional_edges(
            "pack",
            |order: &Order| {
                if order.packed < order.items {
                    "pack"
                } else {
                    END
                }
            },
            ["pack", END],
        );
    graph.compile().expect("a valid graph")
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // Errors read as sentences (`Display`), not as `Debug` output.
    match two_workers().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn two_workers() -> Result<(), Box<dyn std::error::Error>> {
    let scratch =
        std::env::temp_dir().join(format!("trellis-two-workers-{}.db", std::process::id()));
    let url: StoreUrl = match std::env::args().nth(1) {
        Some(url) => url.parse()?,
        None => StoreUrl::Sqlite(scratch.clone()),
    };

    // The producer only records runs; it never executes one.
    let producer = packing().with_checkpointer(url.open().await?);
    let mut orders = Vec::new();
    for items in 1..=8 {
        orders.push(producer.enqueue(Order { items, packed: 0 }).await?);
    }
    println!("enqueued {} orders", orders.len());

    let mut workers = Vec::new();
    for _ in 0..2 {
        let worker = Worker::new(packing(), url.open().await?);
        let name = worker
            .id()
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        workers.push(tokio::spawn(async move {
            let mut done = Vec::new();
            // Until the queue is empty (a real worker would `run()` until stopped).
            while let Some(handled) = worker.run_once().await? {
                if let Outcome::Completed { state, .. } = handled.result? {
                    done.push((handled.run_id, state.packed));
                }
            }
            Ok::<_, trellis::RunError>((name, done))
        }));
    }
    let mut by_run = BTreeMap::new();
    for worker in workers {
        let (name, done) = worker.await??;
        println!("{name} completed {} orders", done.len());
        for (run_id, packed) in done {
            by_run.insert(run_id, (name.clone(), packed));
        }
    }
    assert_eq!(
        by_run.len(),
        orders.len(),
        "every order completed exactly once"
    );
    for (run_id, (name, packed)) in &by_run {
        println!("  {run_id}: {packed} items packed by {name}");
    }
    // Closed first: SQLite removes its `-wal` and `-shm` files with the last connection.
    drop(producer);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", scratch.display()));
    }
    Ok(())
}
