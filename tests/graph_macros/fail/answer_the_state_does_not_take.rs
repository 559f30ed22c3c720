//! A pause typed with an answer the state has no `#[answer]` field for.
use serde::{Deserialize, Serialize};
use trellis::interrupt::Decision;
use trellis::GraphState;

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Post {
    #[answer]
    pub decision: Option<Decision>,
}

trellis::graph! {
    graph Desk {
        state Post;
        node send { interrupt before "Send it?" answer String; }
        START -> send -> END;
    }
}

fn main() {}
