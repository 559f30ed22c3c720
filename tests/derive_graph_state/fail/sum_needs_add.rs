use serde::{Deserialize, Serialize};

/// A title: text, which has no `+=` of its own kind.
#[derive(Clone, Serialize, Deserialize)]
struct Title(String);

#[derive(Clone, Serialize, Deserialize, trellis::GraphState)]
struct Ticket {
    #[reducer(sum)]
    title: Title,
}

fn main() {}
