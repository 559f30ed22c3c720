use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, trellis::GraphState)]
struct Ticket {
    #[reducer(sum, append)]
    count: u32,
}

fn main() {}
