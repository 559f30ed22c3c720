//! Tools that record what they were asked, for the agent tests.
#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use trellis_agent::transcript::InMemoryTranscripts;
use trellis_agent::{
    AgentDefinition, AgentGraph, Catalogue, Models, Tool, ToolEffect, ToolError, ToolSpec,
};

/// A tool that records every call it runs and answers `output`.
#[derive(Clone)]
pub struct Recording {
    pub name: &'static str,
    pub effect: ToolEffect,
    pub output: String,
    pub calls: Arc<Mutex<Vec<Value>>>,
}

impl Recording {
    pub fn new(name: &'static str, effect: ToolEffect, output: &str) -> Self {
        Recording {
            name,
            effect,
            output: output.to_owned(),
            calls: Arc::default(),
        }
    }

    /// The arguments of every call run, in order.
    pub fn record(&self) -> Vec<Value> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[trellis_agent::async_trait]
impl Tool for Recording {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            self.name,
            "records its calls",
            json!({
                "type": "object",
                "properties": { "to": { "type": "string", "minLength": 1 }, "body": { "type": "string" } },
                "required": ["to"],
                "additionalProperties": false
            }),
        )
        .with_effect(self.effect)
    }

    async fn call(&self, arguments: Value) -> Result<String, ToolError> {
        if self.effect == ToolEffect::Pause {
            return Ok(format!(
                "May I write to {}?",
                arguments["to"].as_str().unwrap_or("?")
            ));
        }
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(arguments);
        Ok(self.output.clone())
    }
}

/// A catalogue with the shipped blueprints, `tools`, and one agent `tester` on `blueprint`.
pub fn catalogue(
    blueprint: &str,
    tools: impl IntoIterator<Item = Recording>,
    approve_tools: bool,
) -> Catalogue {
    let mut catalogue = Catalogue::new();
    let mut names = Vec::new();
    for tool in tools {
        names.push(tool.name.to_owned());
        catalogue.add_tool(tool);
    }
    catalogue
        .add_agent(AgentDefinition {
            name: "tester".into(),
            description: "a test agent".into(),
            blueprint: blueprint.into(),
            tools: names,
            approve_tools,
            prompt: "You test things.".into(),
        })
        .expect("the test agent checks");
    catalogue
}

/// The agent `tester` of `catalogue` on `models`, its history in memory.
pub fn build(catalogue: &Catalogue, models: impl Into<Models>) -> AgentGraph {
    catalogue
        .build("tester", models, Arc::new(InMemoryTranscripts::new()))
        .expect("the test agent builds")
}
