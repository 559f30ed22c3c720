//! The tool node in graphs of their own (not an agent's turn): a conversation in the state, the
//! agent's safety rules on every call, approvals through `interrupt before`, a pausing tool's
//! question answered through the state's `ApplyResume`.

mod common;

use std::sync::Arc;

use common::{recording, results};
use trellis::checkpoint::InMemoryCheckpointer;
use trellis::interrupt::{ApplyResume, Decision, Interrupt};
use trellis::messages::{Body, Conversation, Message, ToolCall, add_messages, calls_tools};
use trellis::{CompiledGraph, END, GraphBuilder, GraphState, NodeOptions, NodeResult, START};
use trellis_agent::testing::RecordingTool;
use trellis_agent::{ToolEffect, ToolNode, ToolSet};

/// A chat whose person answers approvals with a decision.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, GraphState)]
struct Chat {
    #[reducer(with = add_messages)]
    messages: Vec<Message>,
    #[answer]
    decision: Option<Decision>,
}

impl Conversation for Chat {
    fn messages(&self) -> &[Message] {
        &self.messages
    }
    fn add(messages: Vec<Message>) -> ChatUpdate {
        ChatUpdate::default().messages(messages)
    }
    fn decision(&self) -> Option<&Decision> {
        self.decision.as_ref()
    }
}

/// A chat whose person replies in words to a pausing tool.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, GraphState)]
struct Talk {
    #[reducer(with = add_messages)]
    messages: Vec<Message>,
}

impl Conversation for Talk {
    fn messages(&self) -> &[Message] {
        &self.messages
    }
    fn add(messages: Vec<Message>) -> TalkUpdate {
        TalkUpdate::default().messages(messages)
    }
}

impl ApplyResume for Talk {
    type Input = String;
    fn apply_resume(&self, interrupt: &Interrupt, reply: String) -> TalkUpdate {
        Talk::add(ToolNode::reply(self, interrupt, reply))
    }
}

/// START → model → (tools → model, while it calls any) → END. `model` answers once with
/// `calls`, then with what the results said.
fn chat_graph<S: Conversation + ApplyResume>(
    calls: Vec<ToolCall>,
    tools: Vec<RecordingTool>,
    ask_before_tools: bool,
) -> CompiledGraph<S> {
    let mut set = ToolSet::new();
    for tool in tools {
        set.add(tool).expect("the tool registers");
    }
    let mut graph = GraphBuilder::<S>::new("Chat");
    let options = if ask_before_tools {
        NodeOptions::new().interrupt_before()
    } else {
        NodeOptions::new()
    };
    graph
        .add_node_fn("model", move |chat: Arc<S>, _| {
            let calls = calls.clone();
            async move {
                let answered = chat.messages().iter().any(|m| !m.tool_calls().is_empty());
                let answer = if answered {
                    let said: Vec<&str> = chat
                        .messages()
                        .iter()
                        .filter(|m| matches!(m.body, Body::Tool { .. }))
                        .filter_map(Message::text)
                        .collect();
                    Message::assistant(said.join(" | "))
                } else {
                    Message::calls(None, calls)
                };
                Ok(NodeResult::Update(S::add(vec![answer])))
            }
        })
        .add_node_with("tools", ToolNode::new(set), options)
        .add_edge(START, "model")
        .add_conditional_edges(
            "model",
            |chat: &S| {
                if calls_tools(chat.messages()) {
                    "tools"
                } else {
                    END
                }
            },
            ["tools", END],
        )
        .add_edge("tools", "model")
        .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    graph.compile().expect("the chat graph compiles")
}

fn user(text: &str) -> Vec<Message> {
    vec![Message::user(text)]
}

#[tokio::test]
async fn calls_run_under_the_safety_rules_and_answer_in_the_calls_order() {
    let lookup = recording("lookup", ToolEffect::ReadOnly, "order 17 shipped");
    let calls = vec![
        ToolCall::new("c1", "lookup", r#"{"to": "order 17"}"#),
        ToolCall::new("c2", "delete_all", "{}"),
        ToolCall::new("c3", "lookup", r#"{"to": 17}"#),
        ToolCall::new("c4", "lookup", "{not json"),
        ToolCall::new("c5", "lookup", r#"{"to": "order 18"}"#),
    ];
    let graph = chat_graph::<Chat>(calls, vec![lookup.clone()], false);
    let done = graph
        .invoke(Chat {
            messages: user("where are my orders?"),
            ..Chat::default()
        })
        .await
        .expect("the chat runs");
    let shown = results(&done.state().messages);
    let ids: Vec<&str> = shown.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4", "c5"], "in the calls' order");
    assert_eq!(shown[0], ("c1".into(), "order 17 shipped".into(), false));
    assert!(
        shown[1].2 && shown[1].1.contains("`delete_all` is not a tool"),
        "{shown:?}"
    );
    assert!(shown[2].2 && shown[2].1.contains("schema"), "{shown:?}");
    assert!(
        shown[3].2 && shown[3].1.contains("not valid JSON"),
        "{shown:?}"
    );
    assert!(!shown[4].2);
    assert_eq!(
        lookup.calls(),
        [
            serde_json::json!({"to": "order 17"}),
            serde_json::json!({"to": "order 18"})
        ],
        "only the well-formed calls ran"
    );
    let last = done.state().messages.last().and_then(Message::text);
    assert!(
        last.is_some_and(|text| text.starts_with("order 17 shipped | refused")),
        "{last:?}"
    );
}

#[tokio::test]
async fn side_effects_run_only_once_a_person_approves_them() {
    let call = || {
        vec![ToolCall::new(
            "c1",
            "send",
            r#"{"to": "ada", "body": "hi"}"#,
        )]
    };
    let start = || Chat {
        messages: user("tell ada hi"),
        ..Chat::default()
    };

    // Nobody asked: the call is not run, and the model is told why.
    let send = recording("send", ToolEffect::SideEffects, "sent");
    let unasked = chat_graph::<Chat>(call(), vec![send.clone()], false);
    let done = unasked.invoke(start()).await.expect("runs");
    let shown = results(&done.state().messages);
    assert!(
        shown[0].2 && shown[0].1.contains("interrupt before"),
        "{shown:?}"
    );
    assert!(send.calls().is_empty());

    // Asked before the tools run: an approval runs it, once.
    let send = recording("send", ToolEffect::SideEffects, "sent");
    let asked = chat_graph::<Chat>(call(), vec![send.clone()], true);
    let paused = asked.invoke(start()).await.expect("runs");
    assert!(paused.is_paused(), "the tools wait for a person");
    assert!(send.calls().is_empty());
    let done = asked
        .resume(paused.run_id(), Decision::Approve)
        .await
        .expect("resumes");
    assert_eq!(
        results(&done.state().messages)[0],
        ("c1".into(), "sent".into(), false)
    );
    assert_eq!(send.calls().len(), 1);

    // A rejection: not run, and the model reads the reason.
    let send = recording("send", ToolEffect::SideEffects, "sent");
    let asked = chat_graph::<Chat>(call(), vec![send.clone()], true);
    let paused = asked.invoke(start()).await.expect("runs");
    let done = asked
        .resume(paused.run_id(), Decision::reject("not to ada"))
        .await
        .expect("resumes");
    let shown = results(&done.state().messages);
    assert!(
        shown[0].2 && shown[0].1.contains("rejected by a person: not to ada"),
        "{shown:?}"
    );
    assert!(send.calls().is_empty());
}

#[tokio::test]
async fn a_pausing_tool_asks_and_the_reply_becomes_its_result() {
    let ask = recording("ask_user", ToolEffect::Pause, "Which order do you mean?");
    let lookup = recording("lookup", ToolEffect::ReadOnly, "found");
    let calls = vec![
        ToolCall::new("c1", "lookup", r#"{"to": "orders"}"#),
        ToolCall::new("c2", "ask_user", r#"{"to": "customer"}"#),
    ];
    let graph = chat_graph::<Talk>(calls, vec![ask, lookup.clone()], false);
    let paused = graph
        .invoke(Talk {
            messages: user("where is my order?"),
        })
        .await
        .expect("runs");
    assert!(paused.is_paused());
    let question = &paused.interrupts()[0];
    assert_eq!(question.request.question, "Which order do you mean?");
    assert_eq!(question.request.kind, "tool:ask_user");
    // The other call ran before the pause, and is not run again after it.
    assert_eq!(
        results(&paused.state().messages),
        [("c1".into(), "found".into(), false)]
    );

    let done = graph
        .resume(paused.run_id(), "order 17".to_owned())
        .await
        .expect("resumes");
    assert_eq!(
        results(&done.state().messages),
        [
            ("c1".into(), "found".into(), false),
            ("c2".into(), "order 17".into(), false)
        ]
    );
    assert_eq!(lookup.calls().len(), 1);
    assert_eq!(
        done.state().messages.last().and_then(Message::text),
        Some("found | order 17")
    );
}

/// The tutorial's chatbot with tools, in prebuilt nodes: the model node offers the tool node's
/// tools, the tool node runs the calls, the model answers from the results; streamed, the
/// answer comes in pieces under the id of the message kept.
#[tokio::test]
async fn a_model_node_and_a_tool_node_make_a_chatbot_with_tools() {
    use trellis::stream::{StreamItem, StreamMode};
    use trellis_agent::{ModelNode, ModelResponse, ScriptedModel};

    let mut tools = ToolSet::new();
    tools
        .add(trellis_agent::toolbox::Calculator)
        .expect("registers");
    let tool_node = ToolNode::new(tools);
    let model = ScriptedModel::new()
        .call(ToolCall::new(
            "c1",
            "calculator",
            r#"{"expression": "6 * 7"}"#,
        ))
        .step(|request| {
            let product = request.result_of("c1").unwrap_or("?");
            Ok(ModelResponse::text(format!("6 × 7 = {product}")))
        });
    let mut graph = GraphBuilder::<Talk>::new("Chatbot");
    graph
        .add_node(
            "chatbot",
            ModelNode::new(model.clone())
                .with_tools(tool_node.specs())
                .with_prompt("You calculate."),
        )
        .add_node("tools", tool_node)
        .add_edge(START, "chatbot")
        .add_conditional_edges(
            "chatbot",
            |talk: &Talk| {
                if calls_tools(&talk.messages) {
                    "tools"
                } else {
                    END
                }
            },
            ["tools", END],
        )
        .add_edge("tools", "chatbot");
    let graph = graph.compile().expect("compiles");
    let mut stream = graph.stream(
        Talk {
            messages: user("6 × 7?"),
        },
        StreamMode::Messages,
    );
    let mut pieces = Vec::new();
    while let Some(item) = stream.next().await {
        if let StreamItem::Messages { chunk, node, .. } = item {
            assert_eq!(node, "chatbot");
            pieces.push(chunk);
        }
    }
    let done = stream.finish().await.expect("the chat runs");
    let messages = &done.state().messages;
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert_eq!(messages[2].text(), Some("42"));
    assert_eq!(messages[3].text(), Some("6 × 7 = 42"));
    // The prompt went to the model, not into the conversation; the tools were offered.
    let seen = model.seen();
    assert_eq!(seen[0].messages[0].text(), Some("You calculate."));
    assert_eq!(seen[1].tools, ["calculator"]);
    assert!(
        messages
            .iter()
            .all(|m| !matches!(m.body, Body::System { .. }))
    );
    let answer: Vec<_> = pieces.iter().filter(|p| p.id == messages[3].id).collect();
    assert_eq!(
        answer
            .iter()
            .map(|p| p.content.as_str())
            .collect::<String>(),
        "6 × 7 = 42"
    );
}

#[tokio::test]
async fn a_model_node_answers_calls_left_without_a_result_before_asking() {
    use trellis_agent::{ModelNode, ScriptedModel};

    // A scripted model answers by how many answers the history holds: one already.
    let model = ScriptedModel::new()
        .answer("(the earlier answer)")
        .answer("moving on");
    let mut graph = GraphBuilder::<Talk>::new("Chatbot");
    graph
        .add_node("chatbot", ModelNode::new(model.clone()))
        .add_edge(START, "chatbot")
        .add_edge("chatbot", END);
    let left = Message::calls(None, vec![ToolCall::new("c9", "lookup", "{}")]);
    let done = graph
        .compile()
        .expect("compiles")
        .invoke(Talk {
            messages: vec![Message::user("hi"), left, Message::user("never mind")],
        })
        .await
        .expect("runs");
    let shown = results(&done.state().messages);
    assert_eq!(shown.len(), 1);
    assert!(shown[0].2 && shown[0].1.starts_with("not run"), "{shown:?}");
    assert_eq!(
        results(&model.seen()[0].messages),
        shown,
        "the model was shown it"
    );
}

/// The tutorial's custom state: a person's details in fields of their own.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, GraphState)]
struct Profile {
    #[reducer(with = add_messages)]
    messages: Vec<Message>,
    name: Option<String>,
    birthday: Option<String>,
    #[reducer(append)]
    notes: Vec<String>,
}

impl Conversation for Profile {
    fn messages(&self) -> &[Message] {
        &self.messages
    }
    fn add(messages: Vec<Message>) -> ProfileUpdate {
        ProfileUpdate::default().messages(messages)
    }
}

impl ApplyResume for Profile {
    type Input = String;
    fn apply_resume(&self, interrupt: &Interrupt, reply: String) -> ProfileUpdate {
        Profile::add(ToolNode::reply(self, interrupt, reply))
    }
}

/// Remembers a name and a birthday in the state's own fields (LangGraph's tool returning
/// `Command(update={"name": …, "birthday": …})`).
struct Remember;

#[trellis::async_trait]
impl trellis_agent::StateTool<Profile> for Remember {
    fn spec(&self) -> trellis_agent::ToolSpec {
        trellis_agent::ToolSpec::new(
            "remember",
            "Remembers who the user is.",
            serde_json::json!({
                "type": "object",
                "properties": { "name": { "type": "string" }, "birthday": { "type": "string" } },
                "required": ["name", "birthday"],
                "additionalProperties": false
            }),
        )
    }

    async fn call(
        &self,
        arguments: serde_json::Value,
        state: &Profile,
    ) -> Result<trellis_agent::ToolOutput<ProfileUpdate>, trellis_agent::ToolError> {
        let (name, birthday) = (&arguments["name"], &arguments["birthday"]);
        let text = format!("Remembered (after {} messages).", state.messages.len());
        Ok(trellis_agent::ToolOutput::text(text).with_update(
            ProfileUpdate::default()
                .name(name.as_str().map(str::to_owned))
                .birthday(birthday.as_str().map(str::to_owned))
                .notes(format!("name: {name}")),
        ))
    }
}

#[tokio::test]
async fn a_state_tool_changes_the_state_beside_its_result() {
    let lookup = recording("lookup", ToolEffect::ReadOnly, "found");
    let mut tools = ToolSet::new();
    tools.add(lookup).expect("registers");
    let node = ToolNode::new(tools)
        .with_state_tool(Remember)
        .expect("registers");
    assert_eq!(
        node.specs()
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["lookup", "remember"],
        "offered with the others"
    );
    let calls = vec![
        ToolCall::new(
            "c1",
            "remember",
            r#"{"name": "LangGraph", "birthday": "Jan 17, 2024"}"#,
        ),
        ToolCall::new("c2", "lookup", r#"{"to": "x"}"#),
        ToolCall::new("c3", "remember", r#"{"name": "LangGraph"}"#),
    ];
    let mut graph = GraphBuilder::<Profile>::new("Profile");
    graph
        .add_node_fn("model", move |profile: Arc<Profile>, _| {
            let calls = calls.clone();
            async move {
                let answer = if calls_tools(&profile.messages) || profile.messages.len() > 1 {
                    Message::assistant("done")
                } else {
                    Message::calls(None, calls)
                };
                Ok(NodeResult::Update(Profile::add(vec![answer])))
            }
        })
        .add_node("tools", node)
        .add_edge(START, "model")
        .add_conditional_edges(
            "model",
            |p: &Profile| {
                if calls_tools(&p.messages) {
                    "tools"
                } else {
                    END
                }
            },
            ["tools", END],
        )
        .add_edge("tools", "model");
    let done = graph
        .compile()
        .expect("compiles")
        .invoke(Profile {
            messages: user("I am LangGraph, born Jan 17, 2024"),
            ..Profile::default()
        })
        .await
        .expect("runs");
    let state = done.state();
    assert_eq!(state.name.as_deref(), Some("LangGraph"));
    assert_eq!(state.birthday.as_deref(), Some("Jan 17, 2024"));
    assert_eq!(
        state.notes,
        ["name: \"LangGraph\""],
        "one update: the refused call made none"
    );
    let shown = results(&state.messages);
    assert_eq!(
        shown[0],
        ("c1".into(), "Remembered (after 2 messages).".into(), false)
    );
    assert_eq!(shown[1], ("c2".into(), "found".into(), false));
    assert!(shown[2].2 && shown[2].1.contains("birthday"), "{shown:?}");
}

trellis::graph! {
    /// The chatbot with tools declared in the language: the node of kind `tools` asks a person
    /// before it runs, and the generated handlers hand both nodes to the prebuilt ones.
    graph Desk {
        state Chat;
        node chatbot { max_visits 5; }
        node tools { kind tools; interrupt before "Run these tools?"; }
        START -> chatbot;
        chatbot -> tools | END;
        tools -> chatbot;
    }
}

/// The generated handlers, each node given to its prebuilt counterpart.
struct DeskNodes {
    model: trellis_agent::ModelNode,
    tools: ToolNode<Chat>,
}

impl desk::Handlers for DeskNodes {
    async fn chatbot(&self, chat: Arc<Chat>, ctx: &mut trellis::NodeContext) -> desk::NodeOutput {
        self.model.answer(chat.as_ref(), ctx).await
    }

    async fn tools(&self, chat: Arc<Chat>, ctx: &mut trellis::NodeContext) -> desk::NodeOutput {
        self.tools.run_calls(chat.as_ref(), ctx).await
    }

    fn route_chatbot(&self, chat: &Chat, _: &trellis::Visits<'_>) -> desk::ChatbotRoute {
        if calls_tools(&chat.messages) {
            desk::ChatbotRoute::Tools
        } else {
            desk::ChatbotRoute::End
        }
    }
}

#[tokio::test]
async fn a_graph_file_s_tools_node_runs_the_tool_node_after_its_question() {
    use trellis_agent::{ModelNode, ModelResponse, ScriptedModel};

    let send = recording("send", ToolEffect::SideEffects, "sent");
    let mut tools = ToolSet::new();
    tools.add(send.clone()).expect("registers");
    let tools = ToolNode::new(tools);
    let model = ScriptedModel::new()
        .call(ToolCall::new("c1", "send", r#"{"to": "ops"}"#))
        .step(|request| {
            Ok(ModelResponse::text(format!(
                "ops: {}",
                request.result_of("c1").unwrap_or("?")
            )))
        });
    let graph = desk::build(DeskNodes {
        model: ModelNode::new(model).with_tools(tools.specs()),
        tools,
    })
    .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let asked = graph
        .invoke(Chat {
            messages: user("Tell ops."),
            ..Chat::default()
        })
        .await
        .expect("runs");
    assert_eq!(asked.interrupts()[0].request.question, "Run these tools?");
    assert!(send.calls().is_empty(), "nothing ran before the answer");
    let done = graph
        .resume(asked.run_id(), Decision::Approve)
        .await
        .expect("resumes");
    assert_eq!(send.calls().len(), 1);
    let said = results(&done.state().messages);
    assert_eq!(said, [("c1".to_owned(), "sent".to_owned(), false)]);
    assert_eq!(
        done.state().messages.last().and_then(Message::text),
        Some("ops: sent")
    );
}
