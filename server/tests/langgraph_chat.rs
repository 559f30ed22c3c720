//! A chat graph's messages over LangGraph's `messages` and `messages-tuple` stream modes: a
//! model's pieces as they come, a message a node writes whole, none said twice, each with
//! LangGraph's metadata and as LangChain's dicts.

mod common;

use common::{Client, serve_graph, streamed};
use serde_json::{Value, json};
use trellis::messages::{Message, MessageChunk, add_messages};
use trellis::{END, GraphBuilder, GraphState, START};

#[derive(Clone, Default, serde::Serialize, serde::Deserialize, GraphState)]
struct Chat {
    #[reducer(with = add_messages)]
    messages: Vec<Message>,
}

/// Nothing here asks a person: an answer is taken as an empty update.
impl trellis::interrupt::ApplyResume for Chat {
    type Input = ();
    fn apply_resume(&self, _: &trellis::interrupt::Interrupt, (): ()) -> ChatUpdate {
        ChatUpdate::default()
    }
}

/// `reply` streams its answer in pieces, then returns it whole (the same id); `note` writes a
/// message of its own, unstreamed, and hands the user's message on again.
async fn chat_server() -> trellis_server::Running {
    let mut builder = GraphBuilder::<Chat>::new("chat");
    builder
        .add_node_fn("reply", |state, ctx| async move {
            let asked = state
                .messages
                .last()
                .and_then(Message::text)
                .unwrap_or_default();
            let answer = Message::assistant(format!("you said: {asked}"));
            for piece in ["you ", "said: ", asked] {
                ctx.stream_chunk(MessageChunk {
                    id: answer.id.clone(),
                    content: piece.to_owned(),
                });
            }
            Ok(ChatUpdate::default().messages(vec![answer]).into())
        })
        .add_node_fn("note", |state, _| async move {
            let again = state.messages[0].clone();
            let note = Message::system("noted");
            Ok(ChatUpdate::default().messages(vec![again, note]).into())
        })
        .add_edge(START, "reply")
        .add_edge("reply", "note")
        .add_edge("note", END);
    serve_graph(builder.compile().expect("a valid graph")).await
}

/// A new thread's first run, streamed in `mode`: the server, a client, the thread and the
/// events.
async fn stream_chat(
    mode: Value,
) -> (
    trellis_server::Running,
    Client,
    String,
    Vec<(String, Value)>,
) {
    let running = chat_server().await;
    let client = Client::new(&running);
    let (_, thread) = client.post("/threads", &json!({})).await;
    let id = thread["thread_id"]
        .as_str()
        .expect("a thread id")
        .to_owned();
    let request = json!({ "assistant_id": "chat", "input": input(), "stream_mode": mode });
    let events = streamed(&client, &id, request).await;
    (running, client, id, events)
}

fn input() -> Value {
    json!({ "messages": [{ "type": "human", "content": "hü", "id": "u1" }] })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_tuples_are_the_pieces_as_they_come_then_whole_messages_not_said_before() {
    let (running, client, id, events) = stream_chat(json!("messages-tuple")).await;
    let id = id.as_str();
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "metadata", "messages", "messages", "messages", "messages", "end"
        ]
    );
    let said: Vec<&Value> = events[1..5].iter().map(|(_, data)| &data[0]).collect();
    // Three pieces of the answer, as LangChain's chunks, all with the answer's id.
    let pieces: Vec<&str> = said[..3]
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(pieces, ["you ", "said: ", "hü"]);
    assert!(said[..3].iter().all(|m| m["type"] == "AIMessageChunk"));
    let answer_id = &said[0]["id"];
    assert!(said[..3].iter().all(|m| &m["id"] == answer_id));
    // The answer, written whole by `reply`, is not said again, nor the user's message `note`
    // hands on: only `note`'s own message, whole.
    assert_eq!(said[3]["type"], "system");
    assert_eq!(said[3]["content"], "noted");
    let metadata: Vec<(&Value, &Value)> = events[1..5]
        .iter()
        .map(|(_, data)| (&data[1]["langgraph_node"], &data[1]["langgraph_step"]))
        .collect();
    assert_eq!(
        metadata,
        [
            (&json!("reply"), &json!(1)),
            (&json!("reply"), &json!(1)),
            (&json!("reply"), &json!(1)),
            (&json!("note"), &json!(2)),
        ]
    );
    assert_eq!(events[1].1[1]["thread_id"], id);

    // The thread's state has the answer whole, with the id its pieces carried.
    let (_, state) = client.get(&format!("/threads/{id}/state")).await;
    let messages = state["values"]["messages"].as_array().unwrap();
    assert_eq!(messages[1]["id"], *answer_id);
    assert_eq!(messages[1]["content"], "you said: hü");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_mode_says_each_message_s_metadata_once_then_the_text_so_far() {
    let (running, _, _, events) = stream_chat(json!(["messages", "updates"])).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "metadata",
            "messages/metadata",
            "messages/partial",
            "messages/partial",
            "messages/partial",
            "updates",
            "messages/metadata",
            "messages/complete",
            "updates",
            "end"
        ]
    );
    let so_far: Vec<&str> = events[2..5]
        .iter()
        .map(|(_, data)| data[0]["content"].as_str().unwrap())
        .collect();
    assert_eq!(so_far, ["you ", "you said: ", "you said: hü"]);
    let answer_id = events[2].1[0]["id"].as_str().unwrap();
    assert_eq!(
        events[1].1[answer_id]["metadata"]["langgraph_node"],
        "reply"
    );
    assert_eq!(events[7].1[0]["content"], "noted");
    assert_eq!(events[7].1[0]["type"], "system");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_mode_says_the_graph_its_nodes_and_the_model_s_tokens_as_langchain_does() {
    let (running, _, _, events) = stream_chat(json!("events")).await;
    let said: Vec<(&str, &str)> = events
        .iter()
        .filter(|(name, _)| name == "events")
        .map(|(_, data)| {
            (
                data["event"].as_str().unwrap(),
                data["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        said,
        [
            ("on_chain_start", "chat"),
            ("on_chain_start", "reply"),
            ("on_chat_model_stream", "model"),
            ("on_chat_model_stream", "model"),
            ("on_chat_model_stream", "model"),
            ("on_chain_end", "reply"),
            ("on_chain_start", "note"),
            ("on_chain_end", "note"),
            ("on_chain_end", "chat"),
        ]
    );
    let data: Vec<&Value> = events
        .iter()
        .filter(|(name, _)| name == "events")
        .map(|(_, data)| &data["data"])
        .collect();
    assert_eq!(data[0]["input"]["messages"][0]["content"], "hü");
    assert_eq!(data[4]["chunk"]["content"], "hü");
    assert_eq!(
        data[5]["output"]["messages"][0]["content"], "you said: hü",
        "a node ends with its update"
    );
    assert_eq!(data[8]["output"]["messages"].as_array().unwrap().len(), 3);
    let reply_start = &events
        .iter()
        .filter(|(n, _)| n == "events")
        .nth(1)
        .unwrap()
        .1;
    assert_eq!(reply_start["metadata"]["langgraph_node"], "reply");
    assert_eq!(reply_start["parent_ids"].as_array().unwrap().len(), 1);
    running.shutdown().await;
}
