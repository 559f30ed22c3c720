//! LangGraph's `events` stream mode: LangChain's `astream_events` (version 2) events, made
//! from a Trellis run's stream — the graph's `on_chain_start` with its input and
//! `on_chain_end` with its last state, each node's `on_chain_start` (the state it reads) and
//! `on_chain_end` (its update), and `on_chat_model_stream` for each piece a model streams.

use serde_json::{Value, json};

/// What the `events` mode has said of a run.
pub(super) struct Chain {
    /// The graph's name: the outermost chain's.
    graph: String,
    /// The run's id: the outermost chain's, the parent of every other.
    run_id: String,
    /// Whether the graph's `on_chain_start` was said.
    started: bool,
}

impl Chain {
    pub(super) fn new(graph: &str, run_id: &str) -> Self {
        Chain {
            graph: graph.to_owned(),
            run_id: run_id.to_owned(),
            started: false,
        }
    }

    /// The state the run starts from: the graph's `on_chain_start`, the first time.
    pub(super) fn state(&mut self, state: &Value) -> Option<Value> {
        if std::mem::replace(&mut self.started, true) {
            return None;
        }
        Some(self.event(
            "on_chain_start",
            &self.graph,
            &self.run_id,
            &json!({}),
            json!({ "input": state }),
        ))
    }

    /// Node `node` starts task `task`, reading `input`.
    pub(super) fn node_started(
        &self,
        node: &str,
        task: &str,
        input: &Value,
        metadata: &Value,
    ) -> Value {
        self.event(
            "on_chain_start",
            node,
            task,
            metadata,
            json!({ "input": input }),
        )
    }

    /// Node `node`'s task `task` ends with `output`, its update.
    pub(super) fn node_ended(
        &self,
        node: &str,
        task: &str,
        input: &Value,
        output: &Value,
        metadata: &Value,
    ) -> Value {
        self.event(
            "on_chain_end",
            node,
            task,
            metadata,
            json!({ "input": input, "output": output }),
        )
    }

    /// A piece of a message a model of node `node` streamed (a LangChain chunk dict).
    pub(super) fn token(&self, task: &str, chunk: &Value, metadata: &Value) -> Value {
        let mut event = self.event(
            "on_chat_model_stream",
            "model",
            task,
            metadata,
            json!({ "chunk": chunk }),
        );
        event["parent_ids"] = json!([self.run_id, task]);
        event
    }

    /// The run ended with `state`: the graph's `on_chain_end`.
    pub(super) fn ended(&self, state: &Value) -> Value {
        self.event(
            "on_chain_end",
            &self.graph,
            &self.run_id,
            &json!({}),
            json!({ "output": state }),
        )
    }

    fn event(&self, kind: &str, name: &str, run_id: &str, metadata: &Value, data: Value) -> Value {
        let outermost = run_id == self.run_id;
        json!({
            "event": kind,
            "name": name,
            "run_id": run_id,
            "tags": if outermost { json!([]) } else { json!(["graph:step"]) },
            "metadata": metadata,
            "data": data,
            "parent_ids": if outermost { json!([]) } else { json!([self.run_id]) },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_starts_once_and_its_nodes_are_its_children() {
        let mut chain = Chain::new("Jobs", "r1");
        let start = chain.state(&json!({ "n": 0 })).expect("the graph starts");
        assert_eq!(
            (
                &start["event"],
                &start["name"],
                &start["data"]["input"]["n"]
            ),
            (&json!("on_chain_start"), &json!("Jobs"), &json!(0))
        );
        assert!(chain.state(&json!({ "n": 1 })).is_none(), "once");
        let meta = json!({ "langgraph_node": "work" });
        let ended = chain.node_ended("work", "r1:1:work", &json!({}), &json!({ "n": 1 }), &meta);
        assert_eq!(ended["parent_ids"], json!(["r1"]));
        assert_eq!(ended["data"]["output"]["n"], 1);
        assert_eq!(ended["metadata"], meta);
        let token = chain.token("r1:1:work", &json!({ "content": "ü" }), &meta);
        assert_eq!(token["parent_ids"], json!(["r1", "r1:1:work"]));
        assert_eq!(chain.ended(&json!({ "n": 1 }))["event"], "on_chain_end");
    }
}
