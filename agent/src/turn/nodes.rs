//! What each kind of node does in a turn: the node that dispatches on its kind, and the kinds
//! that need no module of their own. The safety rules of tool use are in `safety`, the review
//! in `review`, delegation in `delegate`.

use std::collections::BTreeMap;
use std::sync::Arc;

use trellis::{Node, NodeContext, NodeError, NodeResult, interrupt::InterruptRequest};

use super::live::{Bridge, LiveTurn};
use super::plan::{Approval, Role};
use super::state::{AgentFields, Next, TurnAnswer, TurnState, TurnStateUpdate};
use super::{AgentGraph, delegate, review, safety};
use crate::message::{Body, Message, ToolCall};
use crate::model::ModelRequest;
use crate::tool::ToolSpec;
use crate::tool_node::StateTool;

pub(super) type Output<F> = Result<NodeResult<TurnStateUpdate<F>>, NodeError>;

/// What every node of one agent graph shares.
pub(crate) struct Shared<F: AgentFields> {
    pub(crate) bridge: Bridge,
    /// The agents `delegate(…)` nodes hand work to, built for this graph.
    pub(crate) helpers: BTreeMap<String, AgentGraph>,
    /// The tools advertised by dispatch nodes that advertise any: the agent's tools (when a
    /// `tools` node runs them), then one per helper.
    pub(crate) advertised: Vec<ToolSpec>,
    /// The tools that read and change the application's fields, by name (declared in the
    /// turn's tool set too, for the checks every call goes through).
    pub(crate) state_tools: BTreeMap<String, Arc<dyn StateTool<F>>>,
}

/// A blueprint node, doing what its kind says.
pub(crate) struct KindNode<F: AgentFields> {
    pub(crate) role: Role,
    pub(crate) shared: Arc<Shared<F>>,
}

#[trellis::async_trait]
impl<F: AgentFields> Node<TurnState<F>> for KindNode<F> {
    async fn run(&self, state: Arc<TurnState<F>>, ctx: &mut NodeContext) -> Output<F> {
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
            Role::Tools => {
                safety::run_tools(&mut live, &state, ctx, &self.shared.state_tools).await
            }
            Role::Compact { keep_chars } => Ok(compact(&mut live, *keep_chars)),
            Role::Finalize { answered_by } => Ok(finalize(&live, &state, answered_by)),
            Role::Review {
                instruction,
                rounds,
            } => review::review(&mut live, &state, ctx, instruction.as_deref(), *rounds).await,
            Role::Delegate { agent } => {
                // The helper runs without the lock: side-by-side helpers share the turn.
                let calls = delegate::delegated_calls(&live, agent);
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
async fn dispatch<F: AgentFields>(
    live: &mut LiveTurn,
    state: &TurnState<F>,
    ctx: &NodeContext,
    instruction: Option<&str>,
    advertised: Vec<ToolSpec>,
) -> Output<F> {
    let (step, node) = (ctx.step(), ctx.node());
    let mut update = TurnStateUpdate::default();
    if !live.said_input() {
        // The prompt and the input are written once, by the turn's first call, as step 0: no
        // later node rewinds them. A turn on a thread goes on from the earlier turns' history,
        // which has the prompt already.
        if live.entries.is_empty() {
            let prompt = live.prompt.to_string();
            live.push(0, "", Message::system(prompt), Vec::new());
        }
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
    let (response, answer) = ask_model(live, ctx, instruction, &advertised).await?;
    let names: Vec<String> = advertised.iter().map(|t| t.name.clone()).collect();
    live.push(step, node, answer, names.clone());
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

/// Asks the model, with `instruction` said for this call only and `tools` advertised: its
/// answer, and the answer as a message (whose id its streamed pieces carried, when the run's
/// messages are streamed).
pub(super) async fn ask_model(
    live: &mut LiveTurn,
    ctx: &NodeContext,
    instruction: Option<&str>,
    tools: &[ToolSpec],
) -> Result<(crate::model::ModelResponse, Message), NodeError> {
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
    let request = ModelRequest {
        messages: &messages,
        tools,
    };
    let (response, message) = crate::model::answer(model.as_ref(), request, ctx)
        .await
        .map_err(NodeError::new)?;
    live.usage += response.usage;
    Ok((response, message))
}

/// Reads the model's last answer: counts identical answers in a row, and trips the breaker.
fn parse<F: AgentFields>(
    live: &LiveTurn,
    state: &TurnState<F>,
    repeat_limit: u32,
) -> NodeResult<TurnStateUpdate<F>> {
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
    // What it says, not its id: each answer is a message of its own.
    let text = serde_json::to_string(&message.body).unwrap_or_default();
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Ends the turn, sends it to a person first, or to the tools.
fn stop_check<F: AgentFields>(
    live: &LiveTurn,
    state: &TurnState<F>,
    cap: Option<u32>,
    approval: Approval,
) -> NodeResult<TurnStateUpdate<F>> {
    let iterations = state.iterations + 1;
    let update = TurnStateUpdate::default().iterations(iterations);
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
    } else if approval != Approval::Never
        && safety::needs_approval(live, state, approval == Approval::Every)
    {
        Next::Approve
    } else {
        Next::Tools
    };
    update.next(Some(next)).into()
}

/// Asks a person whether the pending calls may run; the answer is taken by `tools`.
fn approve<F: AgentFields>(
    live: &LiveTurn,
    state: &TurnState<F>,
) -> NodeResult<TurnStateUpdate<F>> {
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
                .filter(|c| {
                    matches!(
                        safety::check(&live.tools, c, advertised),
                        safety::Checked::Run(_)
                    )
                })
                .map(|c| format!("{}({})", c.name, c.arguments))
                .collect()
        })
        .unwrap_or_default();
    let question = format!("Run {}?", calls.join(", "));
    NodeResult::ask(InterruptRequest::new("approval", question).with_options(["approve", "reject"]))
}

/// Shortens tool results older than the last answer's to `keep_chars` characters.
fn compact<F: AgentFields>(
    live: &mut LiveTurn,
    keep_chars: usize,
) -> NodeResult<TurnStateUpdate<F>> {
    let Some(last) = live.last_answer() else {
        return NodeResult::None;
    };
    for entry in &mut live.entries[..last] {
        if let Body::Tool { content, .. } = &mut entry.message.body {
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
fn finalize<F: AgentFields>(
    live: &LiveTurn,
    state: &TurnState<F>,
    answered_by: &[String],
) -> NodeResult<TurnStateUpdate<F>> {
    if state.stopped.is_some() {
        return NodeResult::None;
    }
    let answer = live
        .entries
        .iter()
        .rev()
        .filter(|e| answered_by.contains(&e.node))
        .find_map(|e| match &e.message.body {
            Body::Assistant { content, .. } => content.clone(),
            _ => None,
        });
    TurnStateUpdate::default().answer(answer).into()
}

/// A tool result message answering `call`.
pub(super) fn tool_result(call: &ToolCall, content: String, is_error: bool) -> Message {
    Message::tool(call, content, is_error)
}
