//! Typed agent state graphs: state and reducers, nodes, `GraphBuilder`, a deterministic
//! super-step executor with fork and join, human-in-the-loop interrupts, events and checkpoints.
//!
//! A graph is declared with [`GraphBuilder`] (or generated from a `.graph` file), checked by
//! [`GraphBuilder::compile`] with the same rules and codes as the `.graph` language, and run
//! with [`CompiledGraph::invoke`], or step by step with [`CompiledGraph::start`].
//!
//! A run is a sequence of super-steps. Every node of a step reads the same committed state
//! (shared through an `Arc`, never copied per branch) and returns an update; the updates are
//! merged by the state's reducer in declaration order, so a run is deterministic whatever the
//! timing of its branches. See `docs/runtime.md` in the repository for the whole model.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use serde::{Deserialize, Serialize};
//! use trellis::{END, GraphBuilder, GraphState, NodeResult, START};
//!
//! #[derive(Clone, Default, Serialize, Deserialize, GraphState)]
//! struct Research {
//!     topic: String,
//!     #[reducer(append)]
//!     findings: Vec<String>,
//!     summary: Option<String>,
//! }
//!
//! let mut graph = GraphBuilder::<Research>::new("Research");
//! for source in ["web", "papers"] {
//!     graph
//!         .add_node_fn(source, move |state, _ctx| async move {
//!             let finding = format!("{source} on {}", state.topic);
//!             Ok(ResearchUpdate::default().findings(finding).into())
//!         })
//!         .add_edge(source, "summarize");
//! }
//! graph
//!     .add_node_fn("plan", |_, _| async { Ok(NodeResult::None) })
//!     .add_node_fn("summarize", |state, _| async move {
//!         let summary = state.findings.join("; ");
//!         Ok(ResearchUpdate::default().summary(Some(summary)).into())
//!     })
//!     .add_edge(START, "plan")
//!     .add_fork("plan", ["web", "papers"]) // both run in the next step
//!     .add_edge("summarize", END); // reached from both branches, runs once
//! let graph = graph.compile()?;
//!
//! let outcome = graph.invoke(Research { topic: "tides".into(), ..Default::default() }).await?;
//! assert_eq!(outcome.state().summary.as_deref(), Some("web on tides; papers on tides"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! The same shape written in the `.graph` language becomes a typed module (here inline with
//! `graph!`; a build script or `include_graph!` reads `.graph` files):
//!
//! ```
//! use std::sync::Arc;
//! use serde::{Deserialize, Serialize};
//! use trellis::{GraphState, NodeContext, Visits};
//!
//! #[derive(Clone, Default, Serialize, Deserialize, GraphState)]
//! struct Count {
//!     #[reducer(sum)]
//!     n: u32,
//! }
//!
//! // At module level: the generated module finds `Count` through `use super::*`.
//! trellis::graph! {
//!     graph Counter {
//!         state Count;
//!         node add;
//!         START -> add;
//!         add -> add | END;
//!     }
//! }
//!
//! struct Adder;
//!
//! impl counter::Handlers for Adder {
//!     async fn add(&self, _: Arc<Count>, _: &mut NodeContext) -> counter::NodeOutput {
//!         Ok(CountUpdate::default().n(1).into())
//!     }
//!     // The router can only name declared targets: `AddRoute` has `Add` and `End`. It also
//!     // sees how often each node has run.
//!     fn route_add(&self, count: &Count, visits: &Visits<'_>) -> counter::AddRoute {
//!         if count.n < 3 && visits.of("add") < 10 { counter::AddRoute::Add } else { counter::AddRoute::End }
//!     }
//! }
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//!     let outcome = runtime.block_on(counter::build(Adder).invoke(Count::default()))?;
//!     assert_eq!(outcome.state().n, 3);
//!     Ok(())
//! }
//! ```

mod activation;
pub mod blueprint;
mod branching;
mod builder;
mod cancel;
pub mod checkpoint;
mod continuation;
mod errors;
pub mod event;
mod graph;
mod id;
pub mod interrupt;
pub mod messages;
mod name;
mod node;
mod options;
mod owner;
mod reply;
mod resume;
pub mod retention;
mod runner;
mod state;
pub mod subgraph;
pub mod thread;
mod travel;
pub mod versions;
pub mod worker;
pub mod writes;

// What a first program needs, at the root; everything else in one module, by one path: a
// pause and its answers in `interrupt`, sends in `send`, subgraph mappings in `subgraph`.
pub use builder::{END, GraphBuilder, START};
pub use errors::{CompileError, RunError, RunFailure};
pub use graph::{CompiledGraph, Visits};
pub use id::{InvalidThreadId, RunId, ThreadId};
pub use node::{Command, Node, NodeContext, NodeError, NodeOutput, NodeResult, node_fn};
pub use options::NodeOptions;
pub use runner::Outcome;
pub use state::{GraphState, WholeState};

/// `#[async_trait]`, re-exported so that node implementations need no extra dependency.
pub use async_trait::async_trait;

#[cfg(feature = "derive")]
pub use trellis_derive::GraphState;
#[cfg(feature = "macros")]
pub use trellis_macros::{graph, include_graph};

/// Driving a run step by step: the run, what one step did, cancelling it, its clock, and its
/// history ([`CompiledGraph::history`]).
pub mod run {
    pub use crate::branching::Branching;
    pub use crate::cancel::{CancellationToken, cancel_stored};
    pub use crate::continuation::Continuation;
    pub use crate::id::{Timestamp, TimestampError};
    pub use crate::runner::{Run, StepOutcome};
    pub use crate::travel::{Snapshot, lineage};
}

/// Dynamic fan-out: a branch to run ([`SendTo`](send::SendTo)), returned by a send edge's
/// function or in [`Command::Sends`], and a node that only a typed input can be sent to
/// ([`SentNode`](send::SentNode)).
pub mod send {
    pub use crate::builder::SentNode;
    pub use crate::node::SendTo;
}

/// Reading one run as it goes: [`CompiledGraph::stream`] and
/// [`Resume::stream`](interrupt::Resume::stream) give a [`RunStream`](stream::RunStream).
pub mod stream {
    pub use crate::runner::stream::{RunStream, StreamItem, StreamMode, StreamModes};
}

/// JSON Schemas of a state, its update and its answer, for clients that build forms:
/// [`GraphState::schemas`] and [`ApplyResume::answer_schema`](interrupt::ApplyResume::answer_schema),
/// which `#[graph_state(schema)]` implements (feature `schema`, with the state deriving
/// `schemars::JsonSchema`, schemars 1).
pub mod schema {
    pub use crate::state::StateSchemas;
}

/// Why a build or a run did not go as asked, beyond [`CompileError`] and
/// [`RunError`]: their parts.
pub mod error {
    pub use crate::errors::BuildDiagnostic;
    pub use crate::node::{FailureKind, NodeFailure};
    pub use crate::state::MergeConflict;
}

/// What `#[derive(GraphState)]` expands to calls; not an API.
#[doc(hidden)]
pub mod __private {
    pub use crate::state::delta;
    pub use crate::state::reducers;
    #[cfg(feature = "schema")]
    pub use crate::state::schema_of;
    pub use crate::writes::{field_of, must_combine};
    #[cfg(feature = "schema")]
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use trellis_derive::__include_reports as include_reports;
}

/// Includes the code `trellis_codegen` generated in a build script for `graphs/<stem>.graph`:
/// `trellis::include_generated!("support");` brings in `mod support`. The graph's errors and
/// warnings are reported here, at the string literal — in this file, where editors show them —
/// each naming the `.graph` file, line and column. (`include_graph!` reads a `.graph` file
/// itself, with no build script.)
#[macro_export]
macro_rules! include_generated {
    ($stem:literal) => {
        $crate::__private::include_reports!($stem);
        ::core::include!(::core::concat!(::core::env!("OUT_DIR"), "/", $stem, ".rs"));
    };
}
