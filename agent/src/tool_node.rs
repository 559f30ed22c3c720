//! A tool node for any graph whose state holds a conversation
//! ([`Conversation`](trellis::messages::Conversation)): the calls of the last answer run under
//! the agent's safety rules, and their results join the conversation in the calls' order.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use trellis::interrupt::{Decision, Interrupt, InterruptRequest};
use trellis::messages::{Conversation, pending_calls};
use trellis::{Command, GraphState, Node, NodeContext, NodeOutput, NodeResult};

use crate::message::{Message, ToolCall};
use crate::tool::{Tool, ToolEffect, ToolError, ToolSet, ToolSetError, ToolSpec};
use crate::turn::safety::{Checked, check};

/// A tool that reads the graph's state and can change it beside its result (LangGraph's tool
/// returning `Command(update=…)`): a [`ToolNode`] runs it under the same rules as any tool, and
/// merges its update with the results by the state's reducers.
#[async_trait]
pub trait StateTool<S: GraphState>: Send + Sync + 'static {
    /// What the tool is: its name, description, argument schema and effects.
    fn spec(&self) -> ToolSpec;

    /// Runs the tool on checked arguments and the state the node read.
    ///
    /// # Errors
    /// A [`ToolError`]: the model reads it as the call's result, and nothing is updated.
    async fn call(&self, arguments: Value, state: &S) -> Result<ToolOutput<S::Update>, ToolError>;
}

/// What a [`StateTool`] did: its result, for the model, and perhaps an update of the state.
#[derive(Debug, Clone)]
pub struct ToolOutput<U> {
    /// The call's result, as the model reads it.
    pub text: String,
    /// The change to the state, merged by its reducers with the node's other updates.
    pub update: Option<U>,
}

impl<U> ToolOutput<U> {
    /// A result and no update.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            update: None,
        }
    }

    /// The same result, changing the state by `update`.
    #[must_use]
    pub fn with_update(mut self, update: U) -> Self {
        self.update = Some(update);
        self
    }
}

/// State tools by name.
pub(crate) type StateTools<S> = BTreeMap<String, Arc<dyn StateTool<S>>>;

/// A state tool's declaration in a [`ToolSet`] (a tool node's, an agent's), for the checks
/// every call goes through; the call itself goes to the state tool.
pub(crate) struct Declared(pub(crate) ToolSpec);

#[async_trait]
impl Tool for Declared {
    fn spec(&self) -> ToolSpec {
        self.0.clone()
    }

    async fn call(&self, _: Value) -> Result<String, ToolError> {
        Err(ToolError::new(
            "a state tool runs with the state, through its tool node",
        ))
    }
}

/// Runs the tool calls of a conversation's last answer (LangGraph's `ToolNode`), as an agent's
/// `tools` node does:
/// - only calls to its own tools run; a call to any other is refused;
/// - arguments must parse and fit the tool's schema, never defaulted;
/// - a tool with [side effects](ToolEffect::SideEffects) runs only in an activation a person
///   approved: the node declared with `interrupt before` (in `.graph`, or
///   [`NodeOptions::interrupt_before`](trellis::NodeOptions::interrupt_before)), answered —
///   with a [`Decision`] the state keeps ([`Conversation::decision`]), a rejection refuses
///   them;
/// - a [pausing](ToolEffect::Pause) tool pauses the run with the question it renders, and the
///   person's reply becomes its result ([`ToolNode::reply`], in the state's `ApplyResume`);
/// - each result carries its call's id, in the calls' order; a refusal or a failure is a result
///   the model reads (`is_error`), and the graph goes on.
///
/// ```
/// use std::sync::Arc;
/// use trellis::messages::{Conversation, Message, ToolCall, add_messages, calls_tools};
/// use trellis::{END, GraphBuilder, GraphState, NodeResult, START};
/// use trellis_agent::{ToolNode, ToolSet, toolbox::Calculator};
///
/// #[derive(Clone, Default, serde::Serialize, serde::Deserialize, GraphState)]
/// struct Chat {
///     #[reducer(with = add_messages)]
///     messages: Vec<Message>,
/// }
/// impl Conversation for Chat {
///     fn messages(&self) -> &[Message] { &self.messages }
///     fn add(messages: Vec<Message>) -> ChatUpdate { ChatUpdate::default().messages(messages) }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let mut tools = ToolSet::new();
/// tools.add(Calculator)?;
/// let mut graph = GraphBuilder::<Chat>::new("Chatbot");
/// graph
///     // A model would answer here; this one calls the calculator once, then reads its result.
///     .add_node_fn("chatbot", |chat: Arc<Chat>, _| async move {
///         let answer = match chat.messages.last().and_then(Message::text) {
///             Some(result) if chat.messages.len() > 2 => Message::assistant(format!("6 × 7 = {result}")),
///             _ => Message::calls(None, vec![ToolCall::new("c1", "calculator", r#"{"expression": "6 * 7"}"#)]),
///         };
///         Ok(NodeResult::Update(Chat::add(vec![answer])))
///     })
///     .add_node("tools", ToolNode::new(tools))
///     .add_edge(START, "chatbot")
///     // LangGraph's `tools_condition`: to the tools while the last answer calls any.
///     .add_conditional_edges("chatbot", |chat: &Chat| if calls_tools(&chat.messages) { "tools" } else { END }, ["tools", END])
///     .add_edge("tools", "chatbot");
/// let done = graph.compile()?.invoke(Chat { messages: vec![Message::user("6 × 7?")] }).await?;
/// assert_eq!(done.state().messages.last().and_then(Message::text), Some("6 × 7 = 42"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct ToolNode<S: GraphState> {
    tools: ToolSet,
    /// The tools that read and change the state, by name (declared in `tools` too).
    stateful: StateTools<S>,
    /// The tools' names: the calls this node runs.
    offered: Vec<String>,
}

impl<S: GraphState> Clone for ToolNode<S> {
    fn clone(&self) -> Self {
        ToolNode {
            tools: self.tools.clone(),
            stateful: self.stateful.clone(),
            offered: self.offered.clone(),
        }
    }
}

impl<S: GraphState> std::fmt::Debug for ToolNode<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolNode")
            .field("tools", &self.offered)
            .finish_non_exhaustive()
    }
}

impl<S: Conversation> ToolNode<S> {
    /// A node running calls to `tools`.
    pub fn new(tools: ToolSet) -> Self {
        let offered = tools.specs().into_iter().map(|spec| spec.name).collect();
        ToolNode {
            tools,
            stateful: BTreeMap::new(),
            offered,
        }
    }

    /// Adds `tool`, which reads the state and may change it beside its result.
    ///
    /// # Errors
    /// As [`ToolSet::add`]: a duplicate name, a name providers refuse, a schema that cannot be
    /// checked in full.
    pub fn with_state_tool(mut self, tool: impl StateTool<S>) -> Result<Self, ToolSetError> {
        let spec = tool.spec();
        self.tools.add(Declared(spec.clone()))?;
        self.offered.push(spec.name.clone());
        self.stateful.insert(spec.name, Arc::new(tool));
        Ok(self)
    }

    /// Its tools as models see them: what to offer the model whose calls it runs.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.specs()
    }

    /// Runs the calls of the conversation's last answer that have no result yet (see
    /// [`ToolNode`]): its update adds their results; a pausing tool's question pauses the run
    /// after it, and the node runs again once answered. For a `.graph` node of kind `tools`,
    /// the generated handler calls it.
    ///
    /// # Errors
    /// None of its own: a tool's failure is a result the model reads.
    pub async fn run_calls(&self, state: &S, ctx: &NodeContext) -> NodeOutput<S> {
        let pending: Vec<ToolCall> = pending_calls(state.messages())
            .into_iter()
            .cloned()
            .collect();
        if pending.is_empty() {
            return Ok(NodeResult::None);
        }
        // Side effects need this activation to follow a person's answer that is no rejection.
        let consent = match (ctx.approved(), state.decision()) {
            (false, _) => Err(
                "a tool with side effects runs only once a person approves it: declare this node with `interrupt before`"
                    .to_owned(),
            ),
            (true, Some(Decision::Reject { reason })) => {
                Err(format!("rejected by a person: {reason}"))
            }
            (true, _) => Ok(()),
        };
        let mut results = Vec::with_capacity(pending.len());
        let mut updates = Vec::new();
        let mut pause = None;
        for call in &pending {
            let (text, is_error) = match check(&self.tools, call, &self.offered) {
                Checked::Refused(why) => (format!("refused, not run: {why}"), true),
                Checked::Pause(arguments) if pause.is_none() => {
                    pause = Some((call.clone(), arguments));
                    continue;
                }
                Checked::Pause(_) => (
                    "refused, not run: the node already pauses for another question".to_owned(),
                    true,
                ),
                Checked::Run(arguments) => match self.tools.get(&call.name) {
                    Some(tool) if tool.spec.effect == ToolEffect::SideEffects => {
                        if let Err(why) = &consent {
                            (format!("not run: {why}"), true)
                        } else {
                            self.run_one(call, arguments, state, &mut updates).await
                        }
                    }
                    Some(_) => self.run_one(call, arguments, state, &mut updates).await,
                    None => ("refused, not run: no such tool".to_owned(), true),
                },
            };
            results.push(Message::tool(call, text, is_error));
        }
        let mut command = Command::Continue;
        if let Some((call, arguments)) = pause {
            // The question changes nothing: a state tool's update here is dropped.
            let question = self
                .call_tool(&call, arguments, state, &mut Vec::new())
                .await;
            match question {
                // A pausing tool renders its question and changes nothing; the node runs again
                // once answered, the reply in the state as the call's result.
                Ok(question) => {
                    let asked = InterruptRequest::new(format!("tool:{}", call.name), question)
                        .resume_to(ctx.node());
                    command = Command::Interrupt(asked);
                }
                Err(error) => results.push(Message::tool(&call, format!("failed: {error}"), true)),
            }
        }
        let results = S::add(results);
        Ok(match (updates.is_empty(), command) {
            (true, Command::Continue) => NodeResult::Update(results),
            (true, command) => NodeResult::UpdateThen(results, command),
            // The results first, then each tool's update, merged by the reducers.
            (false, command) => {
                updates.insert(0, results);
                NodeResult::Updates(updates, command)
            }
        })
    }

    /// [`call_checked`] with this node's tools.
    async fn call_tool(
        &self,
        call: &ToolCall,
        arguments: Value,
        state: &S,
        updates: &mut Vec<S::Update>,
    ) -> Result<String, ToolError> {
        call_checked(&self.stateful, &self.tools, call, arguments, state, updates).await
    }

    /// [`call_tool`](Self::call_tool), as a result the model reads, and whether it is an error.
    async fn run_one(
        &self,
        call: &ToolCall,
        arguments: Value,
        state: &S,
        updates: &mut Vec<S::Update>,
    ) -> (String, bool) {
        match self.call_tool(call, arguments, state, updates).await {
            Ok(text) => (text, false),
            Err(error) => (format!("failed: {error}"), true),
        }
    }

    /// The result a person's `reply` gives the pausing call that `interrupt` asked about: the
    /// first call of the conversation's last answer to that tool with no result yet. For the
    /// state's [`ApplyResume`](trellis::interrupt::ApplyResume): an update adding it lets the
    /// tool node go on. Empty when the question was no tool's, or its call is answered.
    pub fn reply(state: &S, interrupt: &Interrupt, reply: impl Into<String>) -> Vec<Message> {
        let Some(tool) = interrupt.request.kind.strip_prefix("tool:") else {
            return Vec::new();
        };
        pending_calls(state.messages())
            .into_iter()
            .find(|call| call.name == tool)
            .map(|call| vec![Message::tool(call, reply, false)])
            .unwrap_or_default()
    }
}

#[trellis::async_trait]
impl<S: Conversation> Node<S> for ToolNode<S> {
    async fn run(&self, state: Arc<S>, ctx: &mut NodeContext) -> NodeOutput<S> {
        self.run_calls(state.as_ref(), ctx).await
    }
}

/// Calls the tool of one checked call: a state tool with `state` (its update kept in
/// `updates`), any other tool on its arguments alone. A tool node and an agent's `tools` node
/// both call tools through it.
pub(crate) async fn call_checked<S: GraphState>(
    stateful: &StateTools<S>,
    tools: &ToolSet,
    call: &ToolCall,
    arguments: Value,
    state: &S,
    updates: &mut Vec<S::Update>,
) -> Result<String, ToolError> {
    match (stateful.get(&call.name), tools.get(&call.name)) {
        (Some(tool), _) => tool.call(arguments, state).await.map(|output| {
            updates.extend(output.update);
            output.text
        }),
        (None, Some(tool)) => Arc::clone(&tool.tool).call(arguments).await,
        (None, None) => Err(ToolError::new("no such tool")),
    }
}
