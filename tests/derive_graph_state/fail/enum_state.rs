use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, trellis::GraphState)]
enum Phase {
    Draft,
    Review,
}

fn main() {}
