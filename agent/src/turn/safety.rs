//! The safety rules of tool use, in one place: a call runs only if its tool was advertised for
//! that answer, its arguments parse and fit the schema (never defaulted), and — for side effects
//! — a person approved it when the blueprint asks one. Results keep the provider's call ids, in
//! the calls' order; a pausing tool pauses the run rather than faking an answer.

use serde_json::{Value, json};
use trellis::{NodeContext, NodeError, NodeResult, interrupt::InterruptRequest};

use super::live::LiveTurn;
use super::nodes::{Output, tool_result};
use super::state::{AgentFields, TurnAnswer, TurnState, TurnStateUpdate};
use crate::message::ToolCall;
use crate::tool::{ToolEffect, ToolSet};
use crate::tool_node::{StateTools, call_checked};

/// Whether a pending call that passes the checks is to a tool with side effects, or with
/// `every`, whether any is (a call that will be refused needs nobody's approval).
pub(super) fn needs_approval<F: AgentFields>(
    live: &LiveTurn,
    state: &TurnState<F>,
    every: bool,
) -> bool {
    live.last_calls().is_some_and(|(calls, advertised)| {
        calls.iter().any(|call| {
            state.pending.contains(&call.id)
                && matches!(check(&live.tools, call, advertised), Checked::Run(_))
                && (every
                    || live
                        .tools
                        .get(&call.name)
                        .is_some_and(|t| t.spec.effect == ToolEffect::SideEffects))
        })
    })
}

/// What a call is, once checked.
pub(crate) enum Checked {
    Run(Value),
    Pause(Value),
    Refused(String),
}

/// Checks the pending calls of the last answer and runs those that pass, in the model's order,
/// each result carrying its call's id. A state tool reads the application's fields as the
/// calls before it left them; their updates end up in one update of the fields.
pub(super) async fn run_tools<F: AgentFields>(
    live: &mut LiveTurn,
    state: &TurnState<F>,
    ctx: &NodeContext,
    state_tools: &StateTools<F>,
) -> Output<F> {
    let (step, node) = (ctx.step(), ctx.node());
    let mut update = TurnStateUpdate::default().pending(Vec::new()).reply(None);
    let Some((calls, advertised)) = live.last_calls() else {
        return Ok(update.into());
    };
    let calls: Vec<ToolCall> = calls
        .iter()
        .filter(|c| state.pending.contains(&c.id))
        .cloned()
        .collect();
    let advertised = advertised.to_vec();
    // Only `Approve` approves: a reply to an approval question is no approval (fail closed).
    let refusal = match &state.reply {
        Some(TurnAnswer::Reject { reason }) => Some(reason.clone()),
        Some(TurnAnswer::Reply { text }) => {
            Some(format!("the answer was not an approval ({text})"))
        }
        Some(TurnAnswer::Approve) | None => None,
    };
    if let Some(reason) = refusal {
        for call in &calls {
            let text = format!("rejected by a person, not run: {reason}");
            live.push(step, node, tool_result(call, text, true), Vec::new());
        }
        return Ok(update.into());
    }
    let mut pause = None;
    let mut fields: Option<F> = None;
    for call in &calls {
        let (text, is_error) = match check(&live.tools, call, &advertised) {
            Checked::Refused(why) => (format!("refused, not run: {why}"), true),
            Checked::Pause(arguments) if pause.is_none() => {
                pause = Some((call.clone(), arguments));
                continue;
            }
            Checked::Pause(_) => (
                "refused, not run: the turn already pauses for another question".to_owned(),
                true,
            ),
            Checked::Run(arguments) => {
                let seen = fields.as_ref().unwrap_or(&state.fields);
                let mut updates = Vec::new();
                let called = call_checked(
                    state_tools,
                    &live.tools,
                    call,
                    arguments,
                    seen,
                    &mut updates,
                )
                .await;
                if !updates.is_empty() {
                    let mut changed = seen.clone();
                    for change in updates {
                        changed.apply_one(node, change).map_err(NodeError::new)?;
                    }
                    fields = Some(changed);
                }
                match called {
                    Ok(output) => (output, false),
                    Err(error) => (format!("failed: {error}"), true),
                }
            }
        };
        live.push(step, node, tool_result(call, text, is_error), Vec::new());
    }
    if let Some(fields) = fields {
        update = update.fields(fields);
    }
    let Some((call, arguments)) = pause else {
        return Ok(update.into());
    };
    // A pausing tool renders its question (it changes nothing: a state tool's update here is
    // dropped); the person's reply becomes the call's result when the turn goes on.
    let seen = update.fields.as_ref().unwrap_or(&state.fields);
    let question = call_checked(
        state_tools,
        &live.tools,
        &call,
        arguments,
        seen,
        &mut Vec::new(),
    )
    .await;
    match question {
        Ok(question) => Ok(NodeResult::UpdateThen(
            update.awaiting(Some(call.id.clone())),
            trellis::Command::Interrupt(InterruptRequest::new(
                format!("tool:{}", call.name),
                question,
            )),
        )),
        Err(error) => {
            live.push(
                step,
                node,
                tool_result(&call, format!("failed: {error}"), true),
                Vec::new(),
            );
            Ok(update.into())
        }
    }
}

/// The safety rules for one call to one of `tools`, offered with `advertised`: the agent's
/// turns and any graph's tool node ([`ToolNode`](crate::ToolNode)) check calls with them.
pub(crate) fn check(tools: &ToolSet, call: &ToolCall, advertised: &[String]) -> Checked {
    if !advertised.contains(&call.name) {
        return Checked::Refused(format!(
            "`{}` is not a tool offered in this turn (offered: {})",
            call.name,
            if advertised.is_empty() {
                "none".to_owned()
            } else {
                advertised.join(", ")
            }
        ));
    }
    let Some(tool) = tools.get(&call.name) else {
        return Checked::Refused(format!("`{}` is not one of this agent's tools", call.name));
    };
    let side_effects = tool.spec.effect == ToolEffect::SideEffects;
    let text = call.arguments.trim();
    let arguments = if text.is_empty() {
        if side_effects || tool.schema.takes_arguments() {
            return Checked::Refused("the arguments are empty".to_owned());
        }
        json!({})
    } else {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => value,
            Err(error) => {
                return Checked::Refused(format!("the arguments are not valid JSON ({error})"));
            }
        }
    };
    if let Err(mismatch) = tool.schema.check(&arguments) {
        return Checked::Refused(format!(
            "the arguments do not fit the tool's schema: {mismatch}"
        ));
    }
    let empty = arguments.as_object().is_some_and(serde_json::Map::is_empty);
    if side_effects && empty && tool.schema.takes_arguments() {
        return Checked::Refused(
            "a tool with side effects is never run with empty arguments".to_owned(),
        );
    }
    match tool.spec.effect {
        ToolEffect::Pause => Checked::Pause(arguments),
        ToolEffect::ReadOnly | ToolEffect::SideEffects => Checked::Run(arguments),
    }
}
