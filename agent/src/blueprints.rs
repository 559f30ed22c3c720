//! The shipped blueprints, each compiled from `blueprints/<name>.graph` by this crate's build
//! script: a typed module per blueprint (its node enum, handler trait, `build()` and
//! `blueprint()`), and [`shipped`] to look them up by name.

trellis::include_generated!("canonical_turn");
trellis::include_generated!("single_shot");
trellis::include_generated!("plan_execute_review");
trellis::include_generated!("delegate");

use trellis::blueprint::Blueprint;

/// Every shipped blueprint, by catalogue name: `canonical_turn`, `single_shot`,
/// `plan_execute_review`, `delegate`.
pub fn shipped() -> [(&'static str, Blueprint); 4] {
    [
        ("canonical_turn", canonical_turn::blueprint()),
        ("single_shot", single_shot::blueprint()),
        ("plan_execute_review", plan_execute_review::blueprint()),
        ("delegate", delegate::blueprint()),
    ]
}
