//! Compiles the support graph into `OUT_DIR/support.rs` (included by `src/main.rs`) and the
//! chat and the publishing graph it serves beside it into `OUT_DIR/chat.rs` and
//! `OUT_DIR/publish.rs` (by `src/conversation.rs` and `src/posts.rs`), and says
//! whether the PostgreSQL soak test runs (the one gate every package shares).

#[path = "../../.ci/postgres_gate.rs"]
mod postgres_gate;

fn main() -> Result<(), trellis_codegen::Error> {
    postgres_gate::gate();
    trellis_codegen::compile(&[
        "../graphs/support.graph",
        "../graphs/chat.graph",
        "../graphs/publish.graph",
    ])
}
