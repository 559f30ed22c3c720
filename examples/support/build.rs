//! Compiles the support graph into `OUT_DIR/support.rs` (included by `src/main.rs`).

fn main() -> Result<(), trellis_codegen::Error> {
    trellis_codegen::compile(&["../graphs/support.graph"])
}
