//! A pause answered with a type its site does not declare: `send` is answered with a
//! `Decision`, not a `Reviewer`.
use serde::{Deserialize, Serialize};
use trellis::interrupt::Decision;
use trellis::GraphState;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reviewer {
    pub name: String,
}

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Post {
    #[answer]
    pub reviewer: Option<Reviewer>,
    #[answer]
    pub decision: Option<Decision>,
}

trellis::graph! {
    graph Desk {
        state Post;
        node send { interrupt before "Send it?" answer Decision; }
        START -> send -> END;
    }
}

fn main() {
    let _ = desk::answer::send(Reviewer { name: "ada".into() });
}
