//! Compiles the shipped blueprints (`blueprints/*.graph`) into `OUT_DIR`: a malformed blueprint
//! fails this crate's build, at the line of the mistake.

fn main() -> Result<(), trellis_codegen::Error> {
    trellis_codegen::compile(&[
        "blueprints/canonical_turn.graph",
        "blueprints/single_shot.graph",
        "blueprints/plan_execute_review.graph",
        "blueprints/delegate.graph",
    ])
}
