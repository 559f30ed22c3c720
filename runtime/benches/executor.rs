//! Executor benchmarks (written with the runtime).
fn main() {}
