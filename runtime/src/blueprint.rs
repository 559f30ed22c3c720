//! A graph's topology as plain, serializable data, and the rules' codes: the types of
//! `trellis-graph`, shared with the `.graph` language. [`CompiledGraph::blueprint`] hands out a
//! graph's blueprint; its JSON is the JSON of `trellis export --format json`, and [`export`]
//! draws it (DOT, Mermaid).
//!
//! [`CompiledGraph::blueprint`]: crate::CompiledGraph::blueprint

pub use trellis_graph::export;
pub use trellis_graph::{
    Asks, Blueprint, Code, Edge, EdgeKind, Endpoint, InterruptPoint, JSON_FORMAT, MetaValue, Node,
    NodeKind, Retry, RetryOn, Scope, Severity,
};
