//! A turn's graph state: small and serializable (counters, call ids, flags, token totals), so
//! that every step checkpoints cheaply. The messages live in the transcript, not here.

use std::any::TypeId;
use std::fmt::Debug;

use serde::{Deserialize, Serialize};
use trellis::{
    GraphState,
    interrupt::{ApplyResume, Decision, Interrupt},
};

/// The application's own fields, which an agent's state can carry beside the turn's
/// ([`TurnState::fields`]): any state of the application's (`#[derive(GraphState)]`, with its
/// own reducers) that has a default, compares and prints. Tools built for it
/// ([`StateTool<F>`](crate::StateTool)) read it and change it by its update type.
pub trait AgentFields: GraphState + Default + Debug + PartialEq {}

impl<F: GraphState + Default + Debug + PartialEq> AgentFields for F {}

/// The fields of an agent that carries none of its own: what
/// [`Catalogue::build`](crate::Catalogue::build) gives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, GraphState)]
pub struct NoFields {}

/// Whether `F` is [`NoFields`]: such a turn's JSON leaves `fields` out, as before agents had
/// fields of their own.
fn no_fields<F: 'static>(_: &F) -> bool {
    TypeId::of::<F>() == TypeId::of::<NoFields>()
}

/// The state every agent blueprint runs on, with the application's own fields `F` beside the
/// turn's ([`NoFields`] unless built with
/// [`Catalogue::build_with_fields`](crate::Catalogue::build_with_fields)). Every field but the
/// two first has a default, so a turn is started from `{"agent": "…", "input": "…"}` (as
/// servers' clients do).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, GraphState)]
#[serde(default, bound = "")]
pub struct TurnState<F: AgentFields = NoFields> {
    /// The agent running the turn.
    pub agent: String,
    /// What the user asked.
    pub input: String,
    /// Model answers checked by `stop_check` so far in this turn (its `max_visits` caps them).
    /// Written by `stop_check` alone, counted again from 0 by each turn on a thread
    /// ([`AgentGraph::next_turn`](crate::AgentGraph::next_turn)).
    pub iterations: u32,
    /// Reviews made so far in this turn (a `review` node's `max_visits` caps them), counted as
    /// `iterations` are.
    pub reviews: u32,
    /// The ids of the last answer's tool calls that have no result yet.
    pub pending: Vec<String>,
    /// Where the turn goes next: set by `stop_check` and `review`, read by their routers.
    pub next: Option<Next>,
    /// The turn's final answer, once `finalize` ran.
    pub answer: Option<String>,
    /// Why the turn ended without an answer (its iteration cap, the repeat breaker, a review
    /// still failing at its last round).
    pub stopped: Option<String>,
    /// A fingerprint of the model's last answer, for the repeat breaker.
    pub last_output: Option<u64>,
    /// How many answers in a row had that fingerprint.
    pub repeats: u32,
    /// The call of a pausing tool that waits for a person's reply.
    pub awaiting: Option<String>,
    /// A person's answer to the pause, until the node it is for takes it.
    pub reply: Option<TurnAnswer>,
    /// Tokens read by the model over the turn (over all the turns of a thread, on one).
    #[reducer(sum)]
    pub input_tokens: u64,
    /// Tokens written by the model over the turn (over all the turns of a thread, on one).
    #[reducer(sum)]
    pub output_tokens: u64,
    /// The application's own fields: kept across the turns of a thread (a new turn leaves
    /// them as they are), changed by the update a state tool returns with its result (the
    /// calls of one answer in their order, each seeing the fields as the one before left them)
    /// and by any update of the state (an input's, `update_state`'s).
    #[serde(skip_serializing_if = "no_fields")]
    pub fields: F,
}

impl TurnState {
    /// The state a turn of `agent` on `input` starts from.
    pub fn new(agent: impl Into<String>, input: impl Into<String>) -> Self {
        TurnState::with_fields(agent, input, NoFields {})
    }
}

impl<F: AgentFields> TurnState<F> {
    /// The state a turn of `agent` on `input` starts from, with the application's `fields`.
    pub fn with_fields(agent: impl Into<String>, input: impl Into<String>, fields: F) -> Self {
        TurnState {
            agent: agent.into(),
            input: input.into(),
            fields,
            ..TurnState::default()
        }
    }
}

/// Where a turn goes after `stop_check` or `review`; each maps to a target by its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Next {
    /// Run the tool calls (the target of kind `tools`).
    Tools,
    /// Ask a person first (the target of kind `hitl`).
    Approve,
    /// The turn is over (the target of kind `finalize`, else the one onward target).
    Finish,
    /// The review sent the result back (the target that is not `finalize`).
    Rework,
}

/// A person's answer to a paused turn.
///
/// Written `{"answer": "approve"}`, `{"answer": "reject", "reason": "…"}` or
/// `{"answer": "reply", "text": "…"}`; a [`Decision`] as JSON (`"approve"`,
/// `{"reject": {"reason": "…"}}`) is read too, so a client that answers any graph's approvals
/// answers an agent's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum TurnAnswer {
    /// Run the tool calls as asked.
    Approve,
    /// Run none of them; the model is told why.
    Reject {
        /// Why, for the model.
        reason: String,
    },
    /// A pausing tool's answer (`ask_user`): the text becomes the call's result.
    Reply {
        /// The person's reply.
        text: String,
    },
}

impl TurnAnswer {
    /// A rejection.
    pub fn reject(reason: impl Into<String>) -> Self {
        TurnAnswer::Reject {
            reason: reason.into(),
        }
    }

    /// A reply.
    pub fn reply(text: impl Into<String>) -> Self {
        TurnAnswer::Reply { text: text.into() }
    }
}

impl<'de> Deserialize<'de> for TurnAnswer {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(tag = "answer", rename_all = "snake_case", deny_unknown_fields)]
        enum Tagged {
            Approve,
            Reject { reason: String },
            Reply { text: String },
        }
        let value = serde_json::Value::deserialize(deserializer)?;
        if let Ok(tagged) = serde_json::from_value::<Tagged>(value.clone()) {
            return Ok(match tagged {
                Tagged::Approve => TurnAnswer::Approve,
                Tagged::Reject { reason } => TurnAnswer::Reject { reason },
                Tagged::Reply { text } => TurnAnswer::Reply { text },
            });
        }
        serde_json::from_value::<Decision>(value)
            .map(TurnAnswer::from)
            .map_err(|_| {
                serde::de::Error::custom(
                    "an answer is {\"answer\": \"approve\"}, {\"answer\": \"reject\", \"reason\": \"…\"}, \
                     {\"answer\": \"reply\", \"text\": \"…\"}, \"approve\" or {\"reject\": {\"reason\": \"…\"}}",
                )
            })
    }
}

impl From<Decision> for TurnAnswer {
    fn from(decision: Decision) -> Self {
        match decision {
            Decision::Approve => TurnAnswer::Approve,
            Decision::Reject { reason } => TurnAnswer::Reject { reason },
        }
    }
}

impl<F: AgentFields> ApplyResume for TurnState<F> {
    type Input = TurnAnswer;

    fn apply_resume(&self, _: &Interrupt, answer: TurnAnswer) -> TurnStateUpdate<F> {
        TurnStateUpdate::default().reply(Some(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::TurnAnswer;

    #[test]
    fn an_answer_reads_in_its_own_form_and_as_a_decision() {
        let read = |text: &str| serde_json::from_str::<TurnAnswer>(text).map_err(|e| e.to_string());
        assert_eq!(read(r#"{"answer": "approve"}"#), Ok(TurnAnswer::Approve));
        assert_eq!(
            read(r#"{"answer": "reply", "text": "yes"}"#),
            Ok(TurnAnswer::reply("yes"))
        );
        assert_eq!(read(r#""approve""#), Ok(TurnAnswer::Approve));
        assert_eq!(
            read(r#"{"reject": {"reason": "no"}}"#),
            Ok(TurnAnswer::reject("no"))
        );
        let error = read(r#"{"answer": "maybe"}"#).expect_err("refused");
        assert!(
            error.starts_with("an answer is {\"answer\": \"approve\"}"),
            "{error}"
        );
        let written = serde_json::to_string(&TurnAnswer::reject("no")).expect("serializes");
        assert_eq!(written, r#"{"answer":"reject","reason":"no"}"#);
    }
}
