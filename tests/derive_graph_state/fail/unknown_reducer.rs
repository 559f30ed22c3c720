use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, trellis::GraphState)]
struct Ticket {
    #[reducer(apend)]
    log: Vec<String>,
    #[reducer(sum)]
    count: u32,
    #[reducer(maximum)]
    best: u32,
}

fn main() {}
