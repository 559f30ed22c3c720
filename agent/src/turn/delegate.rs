//! The `delegate(agent)` kind: runs a helper agent's own turn on each part of the task the
//! orchestrator handed it, outside the live turn's lock, so helpers side by side run at once.

use serde_json::{Value, json};

use super::live::LiveTurn;
use super::nodes::KindNode;
use super::state::AgentFields;
use crate::message::ToolCall;
use crate::tool::ToolSpec;

/// The calls of the last answer to `agent` that have no result yet.
pub(super) fn delegated_calls(live: &LiveTurn, agent: &str) -> Vec<ToolCall> {
    live.last_calls()
        .map(|(calls, advertised)| {
            calls
                .iter()
                .filter(|c| {
                    c.name == agent && advertised.contains(&c.name) && !live.answered(&c.id)
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

impl<F: AgentFields> KindNode<F> {
    /// Runs the helper `agent` on each call's task; each result is (call, text, is_error, usage).
    pub(super) async fn delegate(
        &self,
        agent: &str,
        calls: Vec<ToolCall>,
    ) -> Vec<(ToolCall, String, bool, crate::message::Usage)> {
        let mut results = Vec::with_capacity(calls.len());
        for call in calls {
            let task = serde_json::from_str::<Value>(&call.arguments)
                .ok()
                .and_then(|arguments| Some(arguments.get("task")?.as_str()?.trim().to_owned()))
                .filter(|task| !task.is_empty());
            let Some(task) = task else {
                let text = "refused, not run: a helper takes `{\"task\": \"…\"}` with a task that is not empty".to_owned();
                results.push((call, text, true, Default::default()));
                continue;
            };
            let Some(helper) = self.shared.helpers.get(agent) else {
                results.push((
                    call,
                    format!("refused, not run: no helper is named `{agent}`"),
                    true,
                    Default::default(),
                ));
                continue;
            };
            let (text, is_error, usage) = match helper.start(&task).await {
                Ok(outcome) => match (outcome.answer, outcome.stopped) {
                    (Some(answer), _) => (answer, false, outcome.usage),
                    (None, Some(stopped)) => (
                        format!("the helper stopped: {stopped}"),
                        true,
                        outcome.usage,
                    ),
                    (None, None) => (
                        "the helper paused to ask a person, which a delegated task cannot do"
                            .to_owned(),
                        true,
                        outcome.usage,
                    ),
                },
                Err(error) => (
                    format!("the helper failed: {error}"),
                    true,
                    Default::default(),
                ),
            };
            results.push((call, text, is_error, usage));
        }
        results
    }
}

/// The tool a helper agent is offered as, to an orchestrator.
pub(crate) fn helper_tool(name: &str, description: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        format!("Hands a part of the task to the `{name}` agent: {description}"),
        json!({
            "type": "object",
            "properties": { "task": { "type": "string", "minLength": 1, "description": "the part of the task it should do" } },
            "required": ["task"],
            "additionalProperties": false
        }),
    )
}
