//! A model node for any graph whose state holds a conversation
//! ([`Conversation`](trellis::messages::Conversation)): the chatbot of LangGraph's tutorial,
//! its answer added to the conversation, streamed when the run's messages are.

use std::sync::Arc;

use trellis::messages::{Conversation, pending_calls};
use trellis::{Node, NodeContext, NodeError, NodeOutput, NodeResult};

use crate::message::Message;
use crate::model::{Model, ModelRequest};
use crate::tool::ToolSpec;

/// Asks a model for the next message of the conversation and adds it (LangGraph's
/// `llm.invoke(state["messages"])` in a node): with the tools it offers the model
/// ([`with_tools`](Self::with_tools), a [`ToolNode`](crate::ToolNode)'s
/// [`specs`](crate::ToolNode::specs)), after a prompt of its own
/// ([`with_prompt`](Self::with_prompt), not kept in the conversation). The model's pieces are
/// streamed as they come when the run is streamed in `Messages` mode, with the id of the
/// message then added. A call of an earlier answer left without a result is answered `not run`
/// first (providers refuse a history with an unanswered call). A model error fails the node
/// (and is retried as its options say).
///
/// ```
/// use std::sync::Arc;
/// use trellis::messages::{Conversation, Message, add_messages};
/// use trellis::{END, GraphBuilder, GraphState, START};
/// use trellis_agent::{ModelNode, ScriptedModel};
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
/// let model = ScriptedModel::new().answer("Hello! How can I help?");
/// let mut graph = GraphBuilder::<Chat>::new("Chatbot");
/// graph
///     .add_node("chatbot", ModelNode::new(model).with_prompt("You are a helpful assistant."))
///     .add_edge(START, "chatbot")
///     .add_edge("chatbot", END);
/// let done = graph.compile()?.invoke(Chat { messages: vec![Message::user("Hi!")] }).await?;
/// assert_eq!(done.state().messages[1].text(), Some("Hello! How can I help?"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct ModelNode {
    model: Arc<dyn Model>,
    tools: Vec<ToolSpec>,
    prompt: Option<String>,
}

impl std::fmt::Debug for ModelNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelNode")
            .field(
                "tools",
                &self.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
            )
            .field("prompt", &self.prompt)
            .finish_non_exhaustive()
    }
}

impl ModelNode {
    /// A node asking `model`, offering no tools.
    pub fn new(model: impl Model) -> Self {
        ModelNode::shared(Arc::new(model))
    }

    /// A node asking a shared `model`.
    pub fn shared(model: Arc<dyn Model>) -> Self {
        ModelNode {
            model,
            tools: Vec::new(),
            prompt: None,
        }
    }

    /// Offers the model `tools` (LangGraph's `bind_tools`).
    #[must_use]
    pub fn with_tools(mut self, tools: Vec<ToolSpec>) -> Self {
        self.tools = tools;
        self
    }

    /// Puts `prompt` first, as a system message, in every request (not in the conversation).
    #[must_use]
    pub fn with_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = Some(prompt.into());
        self
    }

    /// Asks the model for the conversation's next message and returns the update adding it
    /// (see [`ModelNode`]). For a `.graph` node, the generated handler calls it.
    ///
    /// # Errors
    /// The model's error, as a [`NodeError`].
    pub async fn answer<S: Conversation>(&self, state: &S, ctx: &NodeContext) -> NodeOutput<S> {
        let unanswered: Vec<Message> = pending_calls(state.messages())
            .into_iter()
            .map(|call| {
                let text = "not run: the conversation moved on before this call was run";
                Message::tool(call, text, true)
            })
            .collect();
        let mut messages = Vec::with_capacity(state.messages().len() + unanswered.len() + 1);
        if let Some(prompt) = &self.prompt {
            messages.push(Message::system(prompt.clone()));
        }
        messages.extend(state.messages().iter().cloned());
        messages.extend(unanswered.iter().cloned());
        let request = ModelRequest {
            messages: &messages,
            tools: &self.tools,
        };
        let (_, answer) = crate::model::answer(self.model.as_ref(), request, ctx)
            .await
            .map_err(NodeError::new)?;
        let mut added = unanswered;
        added.push(answer);
        Ok(NodeResult::Update(S::add(added)))
    }
}

#[trellis::async_trait]
impl<S: Conversation> Node<S> for ModelNode {
    async fn run(&self, state: Arc<S>, ctx: &mut NodeContext) -> NodeOutput<S> {
        self.answer(state.as_ref(), ctx).await
    }
}

/// The chat graph of LangGraph's tutorial (its `create_react_agent`): `chatbot`, the model
/// node, then `tools`, the tool node offering its tools to the model, while the model's last
/// answer calls any (`calls_tools`), then END. A builder, to add a checkpointer, options or
/// nodes before compiling.
///
/// ```
/// use trellis::messages::{Conversation, Message, ToolCall, add_messages};
/// use trellis::GraphState;
/// use trellis_agent::{ModelNode, ModelResponse, ScriptedModel, ToolNode, ToolSet, chat_graph, toolbox::Calculator};
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
/// let model = ScriptedModel::new()
///     .call(ToolCall::new("c1", "calculator", r#"{"expression": "6 * 7"}"#))
///     .step(|request| Ok(ModelResponse::text(format!("{}", request.result_of("c1").unwrap_or("?")))));
/// let mut tools = ToolSet::new();
/// tools.add(Calculator)?;
/// let graph = chat_graph("Calc", ModelNode::new(model), ToolNode::new(tools)).compile()?;
/// let done = graph.invoke(Chat { messages: vec![Message::user("6 × 7?")] }).await?;
/// assert_eq!(done.state().messages.last().and_then(Message::text), Some("42"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub fn chat_graph<S: Conversation>(
    name: impl Into<String>,
    model: ModelNode,
    tools: crate::ToolNode<S>,
) -> trellis::GraphBuilder<S> {
    let mut graph = trellis::GraphBuilder::<S>::new(name);
    graph
        .add_node("chatbot", model.with_tools(tools.specs()))
        .add_node("tools", tools)
        .add_edge(trellis::START, "chatbot")
        .add_conditional_edges(
            "chatbot",
            |chat: &S| {
                if trellis::messages::calls_tools(chat.messages()) {
                    "tools"
                } else {
                    trellis::END
                }
            },
            ["tools", trellis::END],
        )
        .add_edge("tools", "chatbot");
    graph
}
