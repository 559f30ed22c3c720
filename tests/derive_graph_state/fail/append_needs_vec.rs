use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, trellis::GraphState)]
struct Ticket {
    #[reducer(append)]
    tags: BTreeSet<String>,
}

fn main() {}
