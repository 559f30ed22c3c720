use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, trellis::GraphState)]
struct Pair(u32, u32);

fn main() {}
