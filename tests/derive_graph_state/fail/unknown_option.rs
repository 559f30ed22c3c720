use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, trellis::GraphState)]
#[graph_state(updates = TicketChange)]
struct Ticket {
    title: String,
}

fn main() {}
