use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, trellis::GraphState)]
struct Ticket {
    #[reducer(sum)]
    title: String,
}

fn main() {}
