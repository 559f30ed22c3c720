//! What each kind of node does in a turn. The safety rules live in `run_tools`: a call runs
//! only if its tool was advertised for that answer, its arguments parse and fit the schema, and
//! (for side effects) a person approved it when the blueprint asks one.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};
use trellis::{InterruptRequest, Node, NodeContext, NodeError, NodeResult};

use super::AgentGraph;
use super::live::{Bridge, LiveTurn};
use super::plan::Role;
use super::state::{Next, TurnAnswer, TurnState, TurnStateUpdate};
use crate::message::{Message, ToolCall};
use crate::model::ModelRequest;
use crate::tool::{ToolEffect, ToolSpec};

type Output = Result<NodeResult<TurnStateUpdate>, NodeError>;

/// What every node of one agent graph shares.
pub(crate) struct Shared {
    pub(crate) bridge: Bridge,
    /// The agents `delegate(…)` nodes hand work to, built for this graph.
    pub(crate) helpers: BTreeMap<String, AgentGraph>,
    /// The tools advertised by dispatch nodes that advertise any: the agent's tools (when a
    /// `tools` node runs them), then one per helper.
    pub(crate) advertised: Vec<ToolSpec>,
}

/// A blueprint node, doing what its kind says.
pub(crate) struct KindNode {
    pub(crate) role: Role,
    pub(crate) shared: Arc<Shared>,
}

#[trellis::async_trait]
impl Node<TurnState> for KindNode {
    async fn run(&self, state: Arc<TurnState>, ctx: &mut NodeContext) -> Output {
        let turn = self
            .shared
            .bridge
            .turn(ctx.run_id())
            .await
            .map_err(NodeError::new)?;
        let mut live = turn.lock().await;
        live.rewind(ctx.step(), ctx.node());
        let result = match &self.role {
            Role::Dispatch { instruction, tools } => {
                let advertised = if *tools {
                    self.shared.advertised.clone()
                } else {
                    Vec::new()
                };
                dispatch(&mut live, &state, ctx, instruction.as_deref(), advertised).await
            }
            Role::Parse { repeat_limit } => Ok(parse(&live, &state, *repeat_limit)),
            Role::StopCheck { cap, approval } => Ok(stop_check(&live, &state, *cap, *approval)),
            Role::Approve => Ok(approve(&live, &state)),
            Role::Tools => run_tools(&mut live, &state, ctx).await,
            Role::Compact { keep_chars } => Ok(compact(&mut live, *keep_chars)),
            Role::Finalize { answered_by } => Ok(finalize(&live, &state, answered_by)),
            Role::Review {
                instruction,
                rounds,
            } => review(&mut live, &state, ctx, instruction.as_deref(), *rounds).await,
            Role::Delegate { agent } => {
                // The helper runs without the lock: side-by-side helpers share the turn.
                let calls = delegated_calls(&live, agent);
                drop(live);
                let results = self.delegate(agent, calls).await;
                live = turn.lock().await;
                let mut update = TurnStateUpdate::default();
                for (call, text, is_error, usage) in results {
                    live.push(
                        ctx.step(),
                        ctx.node(),
                        tool_result(&call, text, is_error),
                        Vec::new(),
                    );
                    update = update
                        .input_tokens(usage.input_tokens)
                        .output_tokens(usage.output_tokens);
                }
                Ok(update.into())
            }
        };
        live.save().await.map_err(NodeError::new)?;
        if matches!(self.role, Role::Finalize { .. }) {
            drop(live);
            self.shared.bridge.release(ctx.run_id());
        }
        result
    }
}

/// Calls the model with the history and `advertised`, and records its answer.
async fn dispatch(
    live: &mut LiveTurn,
    state: &TurnState,
    ctx: &NodeContext,
    instruction: Option<&str>,
    advertised: Vec<ToolSpec>,
) -> Output {
    let (step, node) = (ctx.step(), ctx.node());
    let mut update = TurnStateUpdate::default();
    if live.entries.is_empty() {
        // The prompt and the input are written once, by the turn's first call, as step 0: no
        // later node rewinds them.
        let prompt = live.prompt.to_string();
        live.push(0, "", Message::system(prompt), Vec::new());
        live.push(0, "", Message::user(state.input.clone()), Vec::new());
    }
    // A person's reply to a pausing tool is that call's result.
    if let (Some(call_id), Some(reply)) = (&state.awaiting, &state.reply) {
        let name = live
            .entries
            .iter()
            .flat_map(|e| e.message.tool_calls())
            .find(|c| &c.id == call_id)
            .map_or_else(String::new, |c| c.name.clone());
        let (content, is_error) = match reply {
            TurnAnswer::Reply { text } => (text.clone(), false),
            TurnAnswer::Approve => ("approved".to_owned(), false),
            TurnAnswer::Reject { reason } => (format!("declined: {reason}"), true),
        };
        let call = ToolCall::new(call_id.clone(), name, "");
        live.push(
            step,
            node,
            tool_result(&call, content, is_error),
            Vec::new(),
        );
        update = update.awaiting(None).reply(None);
    }
    let response = ask_model(live, ctx, instruction, &advertised).await?;
    let names: Vec<String> = advertised.iter().map(|t| t.name.clone()).collect();
    live.push(step, node, response.to_message(), names.clone());
    let pending: Vec<String> = response.tool_calls.iter().map(|c| c.id.clone()).collect();
    if names.is_empty() {
        // Nothing was offered: any call is answered at once, and nothing is pending.
        for call in &response.tool_calls {
            let text = format!(
                "refused: no tool is offered at this step, and `{}` was not run",
                call.name
            );
            live.push(step, node, tool_result(call, text, true), Vec::new());
        }
    }
    Ok(update
        .pending(if names.is_empty() {
            Vec::new()
        } else {
            pending
        })
        .input_tokens(response.usage.input_tokens)
        .output_tokens(response.usage.output_tokens)
        .into())
}

/// Asks the model, with `instruction` said for this call only and `tools` advertised.
async fn ask_model(
    live: &mut LiveTurn,
    ctx: &NodeContext,
    instruction: Option<&str>,
    tools: &[ToolSpec],
) -> Result<crate::model::ModelResponse, NodeError> {
    // Every call must have a result before the model is asked again (providers refuse a
    // history with an unanswered call); one the turn moved past is answered as not run.
    for (id, name) in live.open_calls() {
        let call = ToolCall::new(id, name, "");
        let text = "not run: the turn moved on before this call was run".to_owned();
        live.push(
            ctx.step(),
            ctx.node(),
            tool_result(&call, text, true),
            Vec::new(),
        );
    }
    let mut messages = live.messages();
    if let Some(instruction) = instruction {
        messages.push(Message::system(instruction));
    }
    let model = Arc::clone(&live.model);
    let response = model
        .complete(ModelRequest {
            messages: &messages,
            tools,
        })
        .await
        .map_err(NodeError::new)?;
    live.usage += response.usage;
    Ok(response)
}

/// Reads the model's last answer: counts identical answers in a row, and trips the breaker.
fn parse(live: &LiveTurn, state: &TurnState, repeat_limit: u32) -> NodeResult<TurnStateUpdate> {
    let Some(at) = live.last_answer() else {
        return NodeResult::None;
    };
    let fingerprint = fingerprint(&live.entries[at].message);
    let repeats = if state.last_output == Some(fingerprint) {
        state.repeats + 1
    } else {
        1
    };
    let mut update = TurnStateUpdate::default()
        .last_output(Some(fingerprint))
        .repeats(repeats);
    if repeats >= repeat_limit && state.stopped.is_none() {
        update = update.stopped(Some(format!(
            "the repeat breaker tripped: the model gave the same answer {repeats} times in a row"
        )));
    }
    update.into()
}

/// FNV-1a over the answer's JSON: stable across processes and builds, unlike std's hasher.
fn fingerprint(message: &Message) -> u64 {
    let text = serde_json::to_string(message).unwrap_or_default();
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Ends the turn, sends it to a person first, or to the tools.
fn stop_check(
    live: &LiveTurn,
    state: &TurnState,
    cap: Option<u32>,
    approval: bool,
) -> NodeResult<TurnStateUpdate> {
    let iterations = state.iterations + 1;
    let update = TurnStateUpdate::default().iterations(1);
    let next = if state.stopped.is_some() || state.pending.is_empty() {
        return update.next(Some(Next::Finish)).into();
    } else if cap.is_some_and(|cap| iterations >= cap) {
        let cap = cap.unwrap_or_default();
        return update
            .next(Some(Next::Finish))
            .stopped(Some(format!(
                "the turn reached its cap of {cap} model answers and the model was still calling tools"
            )))
            .into();
    } else if approval && needs_approval(live, state) {
        Next::Approve
    } else {
        Next::Tools
    };
    update.next(Some(next)).into()
}

/// Whether a pending call that passes the checks is to a tool with side effects (a call
/// that will be refused needs nobody's approval).
fn needs_approval(live: &LiveTurn, state: &TurnState) -> bool {
    live.last_calls().is_some_and(|(calls, advertised)| {
        calls.iter().any(|call| {
            state.pending.contains(&call.id)
                && matches!(check(live, call, advertised), Checked::Run(_))
                && live
                    .tools
                    .get(&call.name)
                    .is_some_and(|t| t.spec.effect == ToolEffect::SideEffects)
        })
    })
}

/// Asks a person whether the pending calls may run; the answer is taken by `tools`.
fn approve(live: &LiveTurn, state: &TurnState) -> NodeResult<TurnStateUpdate> {
    if state.reply.is_some() {
        // Answered already (the blueprint pauses before this node).
        return NodeResult::None;
    }
    // The calls that would run: those the checks refuse are refused whatever the answer.
    let calls: Vec<String> = live
        .last_calls()
        .map(|(calls, advertised)| {
            calls
                .iter()
                .filter(|c| state.pending.contains(&c.id))
                .filter(|c| matches!(check(live, c, advertised), Checked::Run(_)))
                .map(|c| format!("{}({})", c.name, c.arguments))
                .collect()
        })
        .unwrap_or_default();
    let question = format!("Run {}?", calls.join(", "));
    NodeResult::ask(InterruptRequest::new("approval", question).with_options(["approve", "reject"]))
}

/// What a call is, once checked.
enum Checked {
    Run(Value),
    Pause(Value),
    Refused(String),
}

/// Checks the pending calls of the last answer and runs those that pass, in the model's order,
/// each result carrying its call's id.
async fn run_tools(live: &mut LiveTurn, state: &TurnState, ctx: &NodeContext) -> Output {
    let (step, node) = (ctx.step(), ctx.node());
    let update = TurnStateUpdate::default().pending(Vec::new()).reply(None);
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
    for call in &calls {
        let (text, is_error) = match check(live, call, &advertised) {
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
                let tool = live.tools.get(&call.name).map(|t| Arc::clone(&t.tool));
                match tool {
                    Some(tool) => match tool.call(arguments).await {
                        Ok(output) => (output, false),
                        Err(error) => (format!("failed: {error}"), true),
                    },
                    None => ("refused, not run: no such tool".to_owned(), true),
                }
            }
        };
        live.push(step, node, tool_result(call, text, is_error), Vec::new());
    }
    let Some((call, arguments)) = pause else {
        return Ok(update.into());
    };
    // A pausing tool renders its question (it changes nothing); the person's reply becomes the
    // call's result when the turn goes on.
    let tool = live.tools.get(&call.name).map(|t| Arc::clone(&t.tool));
    let question = match tool {
        Some(tool) => tool.call(arguments).await,
        None => Err(crate::tool::ToolError::new("no such tool")),
    };
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

/// The safety rules for one call.
fn check(live: &LiveTurn, call: &ToolCall, advertised: &[String]) -> Checked {
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
    let Some(tool) = live.tools.get(&call.name) else {
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

/// Shortens tool results older than the last answer's to `keep_chars` characters.
fn compact(live: &mut LiveTurn, keep_chars: usize) -> NodeResult<TurnStateUpdate> {
    let Some(last) = live.last_answer() else {
        return NodeResult::None;
    };
    for entry in &mut live.entries[..last] {
        if let Message::Tool { content, .. } = &mut entry.message {
            let length = content.chars().count();
            if length > keep_chars && !content.ends_with("characters compacted]") {
                let kept: String = content.chars().take(keep_chars).collect();
                *content = format!("{kept} […{} characters compacted]", length - keep_chars);
            }
        }
    }
    NodeResult::None
}

/// Records the final answer: the last text a `dispatch` node had from the model, unless the
/// turn was stopped.
fn finalize(
    live: &LiveTurn,
    state: &TurnState,
    answered_by: &[String],
) -> NodeResult<TurnStateUpdate> {
    if state.stopped.is_some() {
        return NodeResult::None;
    }
    let answer = live
        .entries
        .iter()
        .rev()
        .filter(|e| answered_by.contains(&e.node))
        .find_map(|e| match &e.message {
            Message::Assistant { content, .. } => content.clone(),
            _ => None,
        });
    TurnStateUpdate::default().answer(answer).into()
}

/// The tool a review answers through.
fn review_tool() -> ToolSpec {
    ToolSpec::new(
        "submit_review",
        "Approve the result, or say what must be reworked.",
        json!({
            "type": "object",
            "properties": {
                "approved": { "type": "boolean" },
                "feedback": { "type": "string" }
            },
            "required": ["approved", "feedback"],
            "additionalProperties": false
        }),
    )
}

/// Has the model judge the result through `submit_review`; an unreadable review fails closed
/// (the result is not approved).
async fn review(
    live: &mut LiveTurn,
    state: &TurnState,
    ctx: &NodeContext,
    instruction: Option<&str>,
    rounds: Option<u32>,
) -> Output {
    let (step, node) = (ctx.step(), ctx.node());
    let spec = review_tool();
    let response = ask_model(live, ctx, instruction, std::slice::from_ref(&spec)).await?;
    live.push(step, node, response.to_message(), vec![spec.name.clone()]);
    let schema = crate::schema::Schema::compile(&spec.parameters).map_err(NodeError::new)?;
    let mut verdict: Option<(bool, String)> = None;
    for call in &response.tool_calls {
        let read = (call.name == spec.name && verdict.is_none())
            .then(|| serde_json::from_str::<Value>(&call.arguments).ok())
            .flatten()
            .filter(|arguments| schema.check(arguments).is_ok());
        let (text, is_error) = match read {
            Some(arguments) => {
                let approved = arguments["approved"].as_bool().unwrap_or(false);
                let feedback = arguments["feedback"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                verdict = Some((approved, feedback.clone()));
                let said = if approved {
                    "approved".to_owned()
                } else {
                    format!("rework: {feedback}")
                };
                (format!("review recorded: {said}"), false)
            }
            None => (
                "refused, not run: the review is read from one well-formed `submit_review` call"
                    .to_owned(),
                true,
            ),
        };
        live.push(step, node, tool_result(call, text, is_error), Vec::new());
    }
    let reviews = state.reviews + 1;
    let update = TurnStateUpdate::default()
        .reviews(1)
        .input_tokens(response.usage.input_tokens)
        .output_tokens(response.usage.output_tokens);
    Ok(match verdict {
        Some((true, _)) => update.next(Some(Next::Finish)),
        _ if rounds.is_some_and(|rounds| reviews >= rounds) => {
            let feedback =
                verdict.map_or_else(|| "the review could not be read".to_owned(), |(_, f)| f);
            update.next(Some(Next::Finish)).stopped(Some(format!(
                "the result was still not approved after {reviews} reviews: {feedback}"
            )))
        }
        _ => update.next(Some(Next::Rework)),
    }
    .into())
}

/// The calls of the last answer to `agent` that have no result yet.
fn delegated_calls(live: &LiveTurn, agent: &str) -> Vec<ToolCall> {
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

impl KindNode {
    /// Runs the helper `agent` on each call's task; each result is (call, text, is_error, usage).
    async fn delegate(
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

/// A tool result message answering `call`.
fn tool_result(call: &ToolCall, content: String, is_error: bool) -> Message {
    Message::Tool {
        call_id: call.id.clone(),
        name: call.name.clone(),
        content,
        is_error,
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
