//! Every reducer, in a crate that denies every warning the generated code could raise.
#![deny(warnings, missing_docs, unreachable_pub, unused, clippy::all)]

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use trellis::GraphState;

fn keep_longer(current: &mut String, candidate: String) {
    if candidate.len() > current.len() {
        *current = candidate;
    }
}

/// A public state: its update type is public and documented too.
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Public {
    /// Overwritten.
    pub title: String,
    /// Appended.
    #[reducer(append)]
    pub log: Vec<String>,
    /// Extended.
    #[reducer(extend)]
    pub tags: BTreeSet<String>,
    /// Summed.
    #[reducer(sum)]
    pub cost: u64,
    /// Folded by a function.
    #[reducer(with = keep_longer)]
    pub quote: String,
}

/// A private state in the same crate.
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
struct Private {
    #[reducer(sum)]
    count: u32,
}

fn main() {
    let mut state = Public::default();
    state
        .apply(vec![(
            "a",
            PublicUpdate::default()
                .title("t")
                .log("l")
                .tags(["x".to_owned()])
                .cost(2)
                .quote("q".to_owned()),
        )])
        .expect("one update cannot conflict");
    let mut private = Private::default();
    private
        .apply_one("a", PrivateUpdate::default().count(1))
        .expect("one update cannot conflict");
    assert_eq!((state.cost, private.count), (2, 1));
}
