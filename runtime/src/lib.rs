//! The Trellis runtime: state and reducers, nodes, `GraphBuilder`, the executor and checkpoints.
//!
//! Empty until the runtime work lands; it will not depend on the `.graph` front end.
