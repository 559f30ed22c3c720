//! A state type named `State` (LangGraph's tutorials call it that): the generated module's own
//! `State` alias must name the user's type, not itself.
#![deny(warnings, missing_docs, unreachable_pub, unused, clippy::all)]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{GraphState, NodeContext};

/// The chat's state.
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct State {
    /// What was said.
    #[reducer(append)]
    pub messages: Vec<String>,
}

trellis::graph! {
    /// One node that answers.
    graph Chatbot {
        state State;
        node chatbot;
        START -> chatbot;
        chatbot -> END;
    }
}

struct Bot;

impl chatbot::Handlers for Bot {
    async fn chatbot(&self, state: Arc<State>, _: &mut NodeContext) -> chatbot::NodeOutput {
        let said = format!("heard {}", state.messages.len());
        Ok(StateUpdate::default().messages(said).into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let done = chatbot::build(Bot)
        .invoke(State {
            messages: vec!["hi".to_owned()],
        })
        .await
        .expect("runs");
    assert_eq!(done.state().messages, ["hi", "heard 1"]);
    // The module's alias is the user's type.
    let _: chatbot::State = State::default();
}
