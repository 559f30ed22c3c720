//! LangGraph's six-part "basics" tutorial (chatbot, tools, memory, human in the loop, custom
//! state, time travel) in Trellis, from the prebuilt chat pieces: `ModelNode`, `ToolNode`,
//! `calls_tools`, threads. Each part is a function returning what it printed; the model is any
//! [`Model`] — [`StandIn`] (answers from the conversation, offline) or an OpenAI-compatible
//! server (`--base-url`).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use trellis::checkpoint::InMemoryCheckpointer;
use trellis::interrupt::{ApplyResume, Interrupt};
use trellis::messages::{Body, Conversation, Message, add_messages, pending_calls};
use trellis::{CompiledGraph, END, GraphBuilder, GraphState, RunError, START};
use trellis_agent::{
    Model, ModelError, ModelNode, ModelRequest, ModelResponse, Tool, ToolCall, ToolEffect,
    ToolError, ToolNode, ToolSet, ToolSpec, chat_graph,
};

/// Parts 1–4 and 6: a conversation. A person's reply to a pausing tool is that call's result.
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState)]
#[serde(default)]
pub struct Chat {
    /// The conversation, oldest first.
    #[reducer(with = add_messages)]
    pub messages: Vec<Message>,
}

impl Conversation for Chat {
    fn messages(&self) -> &[Message] {
        &self.messages
    }
    fn add(messages: Vec<Message>) -> ChatUpdate {
        ChatUpdate::default().messages(messages)
    }
}

impl ApplyResume for Chat {
    type Input = String;
    fn apply_resume(&self, interrupt: &Interrupt, reply: String) -> ChatUpdate {
        Chat::add(ToolNode::reply(self, interrupt, reply))
    }
}

/// Part 5: the conversation, and what was learnt about its subject, in fields of their own.
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState)]
#[serde(default)]
pub struct Profile {
    /// The conversation, oldest first.
    #[reducer(with = add_messages)]
    pub messages: Vec<Message>,
    /// The name a person verified.
    pub name: Option<String>,
    /// The birthday a person verified.
    pub birthday: Option<String>,
}

impl Conversation for Profile {
    fn messages(&self) -> &[Message] {
        &self.messages
    }
    fn add(messages: Vec<Message>) -> ProfileUpdate {
        ProfileUpdate::default().messages(messages)
    }
}

/// A person's review of what the model found: typed, where LangGraph's tutorial reads a dict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Review {
    /// What the model found is right.
    Correct,
    /// It is not: these are right.
    Corrected {
        /// The right name.
        name: String,
        /// The right birthday.
        birthday: String,
    },
}

impl ApplyResume for Profile {
    type Input = Review;
    /// The review becomes the call's result, and the verified details the state's fields.
    fn apply_resume(&self, interrupt: &Interrupt, review: Review) -> ProfileUpdate {
        let asked = pending_calls(&self.messages)
            .into_iter()
            .find(|call| interrupt.request.kind == format!("tool:{}", call.name))
            .and_then(|call| serde_json::from_str::<Value>(&call.arguments).ok())
            .unwrap_or_default();
        let (name, birthday, said) = match review {
            Review::Correct => (
                asked["name"].as_str().unwrap_or_default().to_owned(),
                asked["birthday"].as_str().unwrap_or_default().to_owned(),
                "Correct".to_owned(),
            ),
            Review::Corrected { name, birthday } => {
                let said = format!("Made a correction: {name}, {birthday}");
                (name, birthday, said)
            }
        };
        Profile::add(ToolNode::reply(self, interrupt, said))
            .name(Some(name))
            .birthday(Some(birthday))
    }
}

/// The chatbot of parts 2–6: the model, then its tools while it calls any, on a store that
/// keeps threads.
pub fn chatbot<S: Conversation + ApplyResume>(
    model: Arc<dyn Model>,
    tools: ToolNode<S>,
) -> CompiledGraph<S> {
    let mut graph = chat_graph("Chatbot", ModelNode::shared(model), tools);
    graph.set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    graph.compile().expect("the chatbot's graph is well formed")
}

/// A stand-in for the tutorial's web search (Tavily): a few pages, built in.
pub struct Search;

#[trellis::async_trait]
impl Tool for Search {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "search",
            "Searches the web.",
            json!({
                "type": "object",
                "properties": { "query": { "type": "string", "minLength": 1 } },
                "required": ["query"],
                "additionalProperties": false
            }),
        )
    }

    async fn call(&self, arguments: Value) -> Result<String, ToolError> {
        let query = arguments["query"]
            .as_str()
            .unwrap_or_default()
            .to_lowercase();
        let pages = [
            ("release", "LangGraph was released on January 17, 2024."),
            (
                "agent",
                "LangGraph builds autonomous agents as graphs of nodes and edges.",
            ),
            (
                "langgraph",
                "LangGraph is a library for stateful, multi-actor applications with LLMs.",
            ),
        ];
        Ok(pages
            .iter()
            .find(|(word, _)| query.contains(word))
            .map_or("No results.", |(_, page)| page)
            .to_owned())
    }
}

/// The tutorial's `human_assistance`: asks a person, and the run waits for the answer.
pub struct HumanAssistance {
    /// Part 5's version asks to review a name and a birthday rather than a query.
    reviews: bool,
}

#[trellis::async_trait]
impl Tool for HumanAssistance {
    fn spec(&self) -> ToolSpec {
        let properties = if self.reviews {
            json!({ "name": { "type": "string" }, "birthday": { "type": "string" } })
        } else {
            json!({ "query": { "type": "string", "minLength": 1 } })
        };
        let required: Vec<&String> = properties
            .as_object()
            .map_or(Vec::new(), |p| p.keys().collect());
        ToolSpec::new(
            "human_assistance",
            "Requests assistance from a human.",
            json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false }),
        )
        .with_effect(ToolEffect::Pause)
    }

    async fn call(&self, arguments: Value) -> Result<String, ToolError> {
        Ok(if self.reviews {
            format!(
                "Is this correct? name: {}, birthday: {}",
                arguments["name"].as_str().unwrap_or_default(),
                arguments["birthday"].as_str().unwrap_or_default()
            )
        } else {
            arguments["query"].as_str().unwrap_or_default().to_owned()
        })
    }
}

/// A model that answers from the conversation, so that the tutorial runs offline: it searches
/// when asked to research, asks a person when asked for assistance or a review, remembers a
/// name it was told, and otherwise sums up the last result it read.
pub struct StandIn;

#[trellis::async_trait]
impl Model for StandIn {
    async fn complete(&self, request: ModelRequest<'_>) -> Result<ModelResponse, ModelError> {
        let messages = request.messages;
        let offers = |tool: &str| request.tools.iter().any(|t| t.name == tool);
        let call = |name: &str, arguments: Value| {
            let id = format!("call_{}", messages.len());
            ModelResponse::calls([ToolCall::new(id, name, arguments.to_string())])
        };
        let last_user = messages
            .iter()
            .rev()
            .find(|m| matches!(m.body, Body::User { .. }))
            .and_then(Message::text)
            .unwrap_or_default();
        let asked = last_user.to_lowercase();
        let since_user = messages
            .iter()
            .rev()
            .take_while(|m| !matches!(m.body, Body::User { .. }));
        let results: Vec<&str> = since_user
            .filter(|m| matches!(m.body, Body::Tool { .. }))
            .filter_map(Message::text)
            .collect();
        let searched = !results.is_empty();
        Ok(match results.first() {
            // A person's answer, or a search with nothing left to ask: say what was learnt.
            Some(result) if !(asked.contains("review") && results.len() == 1) => {
                ModelResponse::text(format!("Here is what I found: {result}"))
            }
            Some(_) if offers("human_assistance") => call(
                "human_assistance",
                json!({ "name": "LangGraph", "birthday": "Jan 2024" }),
            ),
            _ if !searched
                && (asked.contains("research")
                    || asked.contains("look up")
                    || asked.contains("autonomous"))
                && offers("search") =>
            {
                call("search", json!({ "query": last_user }))
            }
            _ if !searched && asked.contains("assistance") && offers("human_assistance") => {
                call("human_assistance", json!({ "query": last_user }))
            }
            _ if asked.contains("remember my name") => {
                let told = messages.iter().filter_map(Message::text).find_map(|text| {
                    text.split("My name is ")
                        .nth(1)
                        .map(|rest| rest.trim_end_matches('.').to_owned())
                });
                ModelResponse::text(match told {
                    Some(name) => format!("Of course, {name}."),
                    None => "I do not know your name: you have not told me.".to_owned(),
                })
            }
            _ if asked.contains("langgraph") => ModelResponse::text(
                "LangGraph is a library for building stateful agents as graphs; ask me to research it for more.",
            ),
            _ => ModelResponse::text(format!("Hello! You said: {last_user}")),
        })
    }
}

/// What a part printed: its lines, in order.
pub type Printed = Vec<String>;

fn say(printed: &mut Printed, messages: &[Message]) {
    for message in messages {
        let line = match &message.body {
            Body::User { content } => format!("user: {content}"),
            Body::Assistant {
                content,
                tool_calls,
            } if !tool_calls.is_empty() => {
                let calls: Vec<String> = tool_calls
                    .iter()
                    .map(|c| format!("{}({})", c.name, c.arguments))
                    .collect();
                format!(
                    "assistant: {}{}",
                    content
                        .as_deref()
                        .map_or(String::new(), |c| format!("{c} ")),
                    calls.join(", ")
                )
            }
            Body::Assistant { content, .. } => {
                format!("assistant: {}", content.as_deref().unwrap_or(""))
            }
            Body::Tool { name, content, .. } => format!("tool {name}: {content}"),
            _ => continue,
        };
        printed.push(line);
    }
}

fn tools<S: Conversation>(list: impl IntoIterator<Item = Arc<dyn Tool>>) -> ToolNode<S> {
    let mut set = ToolSet::new();
    for tool in list {
        set.add_shared(tool).expect("the tutorial's tools register");
    }
    ToolNode::new(set)
}

fn user(text: &str) -> ChatUpdate {
    Chat::add(vec![Message::user(text)])
}

/// Part 1: a chatbot — one model node.
pub async fn part1(model: Arc<dyn Model>) -> Result<Printed, RunError> {
    let mut graph = GraphBuilder::<Chat>::new("Chatbot");
    graph
        .add_node("chatbot", ModelNode::shared(model))
        .add_edge(START, "chatbot")
        .add_edge("chatbot", END);
    let graph = graph.compile().expect("well formed");
    let asked = Chat {
        messages: vec![Message::user("What do you know about LangGraph?")],
    };
    let done = graph.invoke(asked).await?;
    let mut printed = Vec::new();
    say(&mut printed, &done.state().messages);
    Ok(printed)
}

/// Part 2: tools — the model calls a search, reads it, answers.
pub async fn part2(model: Arc<dyn Model>) -> Result<Printed, RunError> {
    let graph = chatbot::<Chat>(model, tools([Arc::new(Search) as Arc<dyn Tool>]));
    let done = graph
        .invoke(Chat {
            messages: vec![Message::user("Could you research LangGraph for me?")],
        })
        .await?;
    let mut printed = Vec::new();
    say(&mut printed, &done.state().messages);
    Ok(printed)
}

/// Part 3: memory — a thread remembers; another thread does not.
pub async fn part3(model: Arc<dyn Model>) -> Result<Printed, RunError> {
    let graph = chatbot::<Chat>(model, tools([Arc::new(Search) as Arc<dyn Tool>]));
    let mut printed = Vec::new();
    let thread = graph.create_thread(Default::default()).await?;
    thread.invoke(user("Hi there! My name is Will.")).await?;
    let done = thread.invoke(user("Remember my name?")).await?;
    say(&mut printed, &done.state().messages);
    printed.push("-- another thread".to_owned());
    let other = graph.create_thread(Default::default()).await?;
    let done = other.invoke(user("Remember my name?")).await?;
    say(&mut printed, &done.state().messages);
    Ok(printed)
}

/// Part 4: human in the loop — a tool asks a person; the run waits, the answer goes on.
pub async fn part4(model: Arc<dyn Model>) -> Result<Printed, RunError> {
    let assistance = Arc::new(HumanAssistance { reviews: false }) as Arc<dyn Tool>;
    let graph = chatbot::<Chat>(
        model,
        tools([Arc::new(Search) as Arc<dyn Tool>, assistance]),
    );
    let thread = graph.create_thread(Default::default()).await?;
    let paused = thread
        .invoke(user("I need some expert guidance for building an AI agent. Could you request assistance for me?"))
        .await?;
    let mut printed = Vec::new();
    say(&mut printed, &paused.state().messages);
    for question in paused.interrupts() {
        printed.push(format!("paused, asking: {}", question.request.question));
    }
    let reply = "We, the experts, are here to help! We'd recommend you check out LangGraph to build your agent.";
    let done = graph.resume(paused.run_id(), reply.to_owned()).await?;
    say(
        &mut printed,
        &done.state().messages[paused.state().messages.len()..],
    );
    Ok(printed)
}

/// Part 5: custom state — a person reviews what the model found; the verified details are kept
/// in fields of their own, and edited by hand afterwards.
pub async fn part5(model: Arc<dyn Model>) -> Result<Printed, RunError> {
    let review = Arc::new(HumanAssistance { reviews: true }) as Arc<dyn Tool>;
    let graph = chatbot::<Profile>(model, tools([Arc::new(Search) as Arc<dyn Tool>, review]));
    let thread = graph.create_thread(Default::default()).await?;
    let asked = "Can you look up when LangGraph was released? When you have the answer, use the human_assistance tool for review.";
    let paused = thread
        .invoke(Profile::add(vec![Message::user(asked)]))
        .await?;
    let mut printed = Vec::new();
    say(&mut printed, &paused.state().messages);
    let correction = Review::Corrected {
        name: "LangGraph".into(),
        birthday: "Jan 17, 2024".into(),
    };
    let done = graph.resume(paused.run_id(), correction).await?;
    say(
        &mut printed,
        &done.state().messages[paused.state().messages.len()..],
    );
    let state = done.state();
    printed.push(format!(
        "name: {:?}, birthday: {:?}",
        state.name, state.birthday
    ));
    // Edited by hand, as if `chatbot` had written it.
    thread
        .update_state(
            ProfileUpdate::default().name(Some("LangGraph (library)".to_owned())),
            "chatbot",
        )
        .await?;
    let edited = thread
        .state()
        .await?
        .map(|snapshot| snapshot.state.name)
        .unwrap_or_default();
    printed.push(format!("name after the edit: {edited:?}"));
    Ok(printed)
}

/// Part 6: time travel — two turns on a thread, then a replay from the checkpoint where the
/// second turn's search was about to run.
pub async fn part6(model: Arc<dyn Model>) -> Result<Printed, RunError> {
    let graph = chatbot::<Chat>(model, tools([Arc::new(Search) as Arc<dyn Tool>]));
    let thread = graph.create_thread(Default::default()).await?;
    thread
        .invoke(user(
            "I'm learning LangGraph. Could you do some research on it for me?",
        ))
        .await?;
    let done = thread
        .invoke(user(
            "Ya that's helpful. Maybe I'll build an autonomous agent with it!",
        ))
        .await?;
    let mut printed = Vec::new();
    say(&mut printed, &done.state().messages);
    let history = thread.history(100).await?;
    printed.push(format!("-- {} checkpoints", history.len()));
    let Some(before) = history.iter().find(|snapshot| {
        snapshot.state.messages.len() == 6 && snapshot.next.iter().any(|n| n.as_str() == "tools")
    }) else {
        printed.push("no checkpoint before the second search".to_owned());
        return Ok(printed);
    };
    printed.push(format!(
        "-- replaying from checkpoint {} (next: tools)",
        before.checkpoint
    ));
    let mut replay = thread.fork(&before.at()).await?;
    let replayed = replay.run_to_end().await?;
    say(&mut printed, &replayed.state().messages[6..]);
    Ok(printed)
}
