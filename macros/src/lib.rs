//! Procedural macros of Trellis: `graph!`, `include_graph!` and `#[derive(GraphState)]`.
//!
//! Empty until the code-generation work lands; the macros stay thin and delegate to
//! `trellis-dsl` and `trellis-codegen`.
