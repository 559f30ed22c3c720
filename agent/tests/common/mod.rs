//! A recording tool and a one-agent catalogue, for the agent tests.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use serde_json::json;
use trellis_agent::testing::RecordingTool;
use trellis_agent::transcript::InMemoryTranscripts;
use trellis_agent::{AgentDefinition, AgentGraph, Catalogue, Models, Tool, ToolEffect, ToolSpec};

/// A tool `name` with `effect`, taking `{"to": "…", "body": "…"}` (`to` required), that
/// records its calls and answers `output` (a pausing tool's question).
pub fn recording(name: &str, effect: ToolEffect, output: &str) -> RecordingTool {
    let spec = ToolSpec::new(
        name,
        "records its calls",
        json!({
            "type": "object",
            "properties": { "to": { "type": "string", "minLength": 1 }, "body": { "type": "string" } },
            "required": ["to"],
            "additionalProperties": false
        }),
    )
    .with_effect(effect);
    RecordingTool::new(spec, output)
}

/// A catalogue with the shipped blueprints, `tools`, and one agent `tester` on `blueprint`.
pub fn catalogue(
    blueprint: &str,
    tools: impl IntoIterator<Item = RecordingTool>,
    approve_tools: bool,
) -> Catalogue {
    let mut catalogue = Catalogue::new();
    let mut names = Vec::new();
    for tool in tools {
        names.push(tool.spec().name);
        catalogue.add_tool(tool).expect("the tool registers");
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

/// The tool results in `messages`, as (call id, content, is_error), in their order.
pub fn results(messages: &[trellis_agent::Message]) -> Vec<(String, String, bool)> {
    messages
        .iter()
        .filter_map(|m| match &m.body {
            trellis_agent::Body::Tool {
                call_id,
                content,
                is_error,
                ..
            } => Some((call_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}
