//! Code generation for Trellis: blueprint → typed Rust, and the build.rs API.
//!
//! Empty until the code-generation work lands (it builds on `trellis-dsl`'s `Blueprint`).
