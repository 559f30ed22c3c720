//! Every example graph, included with `include_graph!` into a crate that denies all warnings
//! (and is linted by `cargo clippy --all-targets -- -D warnings` in CI): the generated code must
//! compile clean, and its handlers must be implementable.
#![deny(warnings)]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{GraphState, NodeContext, NodeResult};

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
struct Ticket {
    #[reducer(append)]
    log: Vec<String>,
}

/// The fields `research.graph`'s nodes write (`writes`).
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
struct ResearchState {
    queries: Vec<String>,
    #[reducer(append)]
    findings: Vec<String>,
    #[reducer(append)]
    missing: Vec<String>,
    summary: Option<String>,
}

trellis::include_graph!("../examples/graphs/support.graph");
trellis::include_graph!("../examples/graphs/research.graph");
trellis::include_graph!("../examples/graphs/agent_turn.graph");

#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
struct Turn {
    #[reducer(sum)]
    rounds: u32,
}

/// The canonical turn has no `state`: its handlers choose one.
struct Model;

impl canonical_turn::Handlers for Model {
    type State = Turn;
    async fn dispatch(
        &self,
        _: Arc<Turn>,
        _: &mut NodeContext,
    ) -> canonical_turn::NodeOutput<Turn> {
        Ok(TurnUpdate::default().rounds(1).into())
    }
    async fn parse(&self, _: Arc<Turn>, _: &mut NodeContext) -> canonical_turn::NodeOutput<Turn> {
        Ok(NodeResult::None)
    }
    async fn stop_check(
        &self,
        _: Arc<Turn>,
        _: &mut NodeContext,
    ) -> canonical_turn::NodeOutput<Turn> {
        Ok(NodeResult::None)
    }
    async fn tools(&self, _: Arc<Turn>, _: &mut NodeContext) -> canonical_turn::NodeOutput<Turn> {
        Ok(NodeResult::None)
    }
    async fn tool_failed(
        &self,
        _: Arc<Turn>,
        _: &mut NodeContext,
    ) -> canonical_turn::NodeOutput<Turn> {
        Ok(NodeResult::None)
    }
    async fn compact(&self, _: Arc<Turn>, _: &mut NodeContext) -> canonical_turn::NodeOutput<Turn> {
        Ok(NodeResult::None)
    }
    async fn approve(&self, _: Arc<Turn>, _: &mut NodeContext) -> canonical_turn::NodeOutput<Turn> {
        Ok(NodeResult::None)
    }
    async fn finalize(
        &self,
        _: Arc<Turn>,
        _: &mut NodeContext,
    ) -> canonical_turn::NodeOutput<Turn> {
        Ok(NodeResult::None)
    }
    fn route_stop_check(
        &self,
        turn: &Turn,
        _: &trellis::Visits<'_>,
    ) -> canonical_turn::StopCheckRoute {
        if turn.rounds < 3 {
            canonical_turn::StopCheckRoute::Tools
        } else {
            canonical_turn::StopCheckRoute::Finalize
        }
    }
    fn route_approve(&self, _: &Turn, _: &trellis::Visits<'_>) -> canonical_turn::ApproveRoute {
        canonical_turn::ApproveRoute::Finalize
    }
}

#[tokio::test]
async fn the_agent_turn_loops_through_tools_until_the_stop_check_ends_it() {
    let outcome = canonical_turn::build(Model)
        .invoke(Turn::default())
        .await
        .expect("the turn runs");
    assert_eq!(outcome.state().rounds, 3);
    assert!(!outcome.is_paused());
}

#[test]
fn the_generated_modules_describe_their_graphs() {
    assert_eq!(support::NAME, "Support");
    assert_eq!(
        support::Node::ALL.map(support::Node::as_str),
        ["classify", "lookup_invoice", "draft", "review", "send"]
    );
    assert_eq!(support::SendRoute::End.as_str(), trellis::END);
    assert_eq!(research::Node::ALL.len(), 6);
    // The generated blueprint is the one the source lowers to, and what the built graph hands
    // out; its JSON is the export's.
    let source = include_str!("../examples/graphs/agent_turn.graph");
    let checked = trellis_dsl::check(source);
    let blueprint = canonical_turn::blueprint();
    assert_eq!(blueprint, checked.module.graphs[0]);
    assert_eq!(canonical_turn::build(Model).blueprint(), &blueprint);
    assert_eq!(
        serde_json::to_string_pretty(&blueprint).expect("JSON") + "\n",
        trellis_graph::export::to_json(&checked.module.graphs[0]).expect("JSON")
    );
    let json = serde_json::to_value(&blueprint).expect("JSON");
    assert_eq!(json["name"], "CanonicalTurn");
    assert_eq!(json["nodes"][6]["meta"]["reason"], "side effects");
}
