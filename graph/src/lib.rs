//! The graph rules of Trellis in one place, shared by its two front doors: the `.graph` language
//! (`trellis-dsl`, which adds spans, labels and did-you-mean) and the runtime's `GraphBuilder`
//! (`trellis`, which turns the same findings into its `CompileError`).
//!
//! - [`Code`]: the diagnostic codes, one table of code, severity, scope and summary.
//! - [`START`] and [`END`]: how the runtime and the JSON export spell the graph's terminals.
//! - [`Blueprint`]: a graph's topology and settings as plain, serializable data (the JSON of
//!   `trellis export`, `"format": 1`).
//! - [`check`]: every topology rule, over a blueprint, as a list of [`Violation`]s.
//! - [`export`]: a blueprint as JSON, Graphviz DOT or Mermaid.
//! - [`GraphDiff`]: what changed between two versions of a graph.
//! - [`reports`]: the errors and warnings a build script leaves for `include_generated!`.
//!
//! No parser and no proc-macro dependency: a graph declared in Rust never compiles the language.
//!
//! ```
//! use trellis_graph::{Blueprint, Code, Edge, EdgeKind, Endpoint, Node, check};
//!
//! let node = |id: &str| Endpoint::Node(id.to_owned());
//! let mut graph = Blueprint::new("Research");
//! for id in ["plan", "web", "papers", "deep", "summarize"] {
//!     graph.nodes.push(Node::new(id));
//! }
//! graph.edges = vec![
//!     Edge::to(Endpoint::Start, node("plan")),
//!     Edge { from: node("plan"), kind: EdgeKind::Fork, targets: vec![node("web"), node("papers")] },
//!     Edge::to(node("web"), node("summarize")),
//!     Edge::to(node("papers"), node("deep")),
//!     Edge::to(node("deep"), node("summarize")),
//!     Edge::to(node("summarize"), Endpoint::End),
//! ];
//! let violations = check(&graph);
//! assert_eq!(violations.len(), 1);
//! assert_eq!(violations[0].code(), Code::W0304);
//! assert_eq!(
//!     violations[0].message(&graph),
//!     "node `summarize` is reached by fork branches of different lengths: \
//!      `plan -> web -> summarize` (2 steps) and `plan -> papers -> deep -> summarize` (3 steps)"
//! );
//! ```

mod blueprint;
mod check;
mod code;
mod diff;
pub mod export;
mod hash;
mod json;
pub mod reports;
mod suggest;
mod violation;

pub use blueprint::{
    Asks, Blueprint, END, Edge, EdgeKind, Endpoint, InterruptPoint, MetaValue, Node, NodeKind,
    Retry, RetryOn, START,
};
pub use check::{
    SameStepSubgraphs, SameStepWrite, WriteSets, check, runs_on_parents_state, same_step_subgraphs,
    same_step_writes, unknown_field_message,
};
pub use code::{Code, Scope, Severity};
pub use diff::{AttributeChange, Change, DiffError, GraphDiff, NodeChange, Renamed};
pub use hash::Fnv;
pub use json::JSON_FORMAT;
pub use suggest::did_you_mean;
pub use violation::{Limit, Path, Reference, Violation, reserved_name_reason};
