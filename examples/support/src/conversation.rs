//! The support chat (`examples/graphs/chat.graph`), served beside the ticket flow: a
//! conversation on a thread, answered message by message — the reply streamed as it is
//! written — with a billing question's invoice looked up by a subgraph.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::GraphState;
use trellis::messages::{Body, Message, MessageChunk, add_messages};

trellis::include_generated!("chat");

/// A support conversation. A run's input is a message or two (`{"messages": [{"role":
/// "user", "content": "…"}]}`, or LangChain's `{"type": "human", …}`); on a thread, each run
/// adds to the conversation the last one left.
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState, schemars::JsonSchema)]
#[graph_state(schema)]
#[serde(default)]
pub struct Conversation {
    /// The conversation, oldest first.
    #[reducer(with = add_messages)]
    pub messages: Vec<Message>,
    /// The invoice the last lookup found.
    pub invoice: Option<String>,
    /// Whether that invoice's duplicate charge was refunded.
    pub refunded: bool,
}

/// Nothing in the chat asks a person: an answer (there is no question to answer) changes
/// nothing.
impl trellis::interrupt::ApplyResume for Conversation {
    type Input = ();
    fn apply_resume(&self, _: &trellis::interrupt::Interrupt, (): ()) -> ConversationUpdate {
        ConversationUpdate::default()
    }
}

impl Conversation {
    /// What the customer said last.
    fn last_question(&self) -> &str {
        self.messages
            .iter()
            .rev()
            .find(|m| matches!(m.body, Body::User { .. }))
            .and_then(Message::text)
            .unwrap_or("")
    }
}

/// What the chat's nodes do.
#[derive(Default)]
pub struct ChatDesk {
    /// How long each node takes (a reply takes it once per word), as `serve --pace MS` says.
    pub pace: std::time::Duration,
}

impl ChatDesk {
    async fn pace(&self, parts: u32) {
        if !self.pace.is_zero() {
            tokio::time::sleep(self.pace / parts).await;
        }
    }
}

impl chat::Handlers for ChatDesk {
    async fn triage(&self, _: Arc<Conversation>, _: &mut trellis::NodeContext) -> chat::NodeOutput {
        self.pace(1).await;
        Ok(ConversationUpdate::default().into())
    }

    async fn reply(
        &self,
        conversation: Arc<Conversation>,
        ctx: &mut trellis::NodeContext,
    ) -> chat::NodeOutput {
        let asked = conversation.last_question();
        let earlier = conversation
            .messages
            .iter()
            .filter(|m| matches!(m.body, Body::User { .. }))
            .count()
            .saturating_sub(1);
        let mut text = format!("Thank you for writing: \"{asked}\".");
        match (&conversation.invoice, conversation.refunded) {
            (Some(invoice), true) => {
                text.push_str(&format!(" {invoice} was refunded; it shows in 3 days."));
            }
            (Some(invoice), false) => text.push_str(&format!(" I have sent {invoice} to billing.")),
            (None, _) => text.push_str(" A colleague will answer within the day."),
        }
        if earlier > 0 {
            text.push_str(&format!(" (Message {} of this conversation.)", earlier + 1));
        }
        // Written a word at a time, as a model would, and streamed to whoever listens; the
        // pieces carry the id of the message returned whole at the end.
        let id = Message::new_id();
        let words: Vec<&str> = text.split_inclusive(' ').collect();
        for word in &words {
            self.pace(words.len() as u32).await;
            ctx.stream_chunk(MessageChunk {
                id: id.clone(),
                content: (*word).to_owned(),
            });
        }
        let answer = Message {
            id,
            ..Message::assistant(text)
        };
        Ok(ConversationUpdate::default().messages(vec![answer]).into())
    }

    fn route_triage(
        &self,
        conversation: &Conversation,
        _: &trellis::Visits<'_>,
    ) -> chat::TriageRoute {
        let asked = conversation.last_question().to_lowercase();
        if ["invoice", "charge", "refund"]
            .iter()
            .any(|w| asked.contains(w))
        {
            chat::TriageRoute::Lookup
        } else {
            chat::TriageRoute::Reply
        }
    }

    fn lookup(&self) -> trellis::CompiledGraph<Conversation> {
        lookup::build(ChatDesk { pace: self.pace })
    }
}

impl lookup::Handlers for ChatDesk {
    async fn find_invoice(
        &self,
        _: Arc<Conversation>,
        _: &mut trellis::NodeContext,
    ) -> lookup::NodeOutput {
        self.pace(1).await;
        let invoice = "INV-2291 (€120, charged twice on 3 March)".to_owned();
        Ok(ConversationUpdate::default().invoice(Some(invoice)).into())
    }

    async fn check_refund(
        &self,
        conversation: Arc<Conversation>,
        _: &mut trellis::NodeContext,
    ) -> lookup::NodeOutput {
        self.pace(1).await;
        let asked = conversation.last_question().to_lowercase();
        Ok(ConversationUpdate::default()
            .refunded(asked.contains("twice") || asked.contains("refund"))
            .into())
    }
}

/// The chat, built.
pub fn build(pace: std::time::Duration) -> trellis::CompiledGraph<Conversation> {
    chat::build(ChatDesk { pace })
}
