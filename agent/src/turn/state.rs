//! A turn's graph state: small and serializable (counters, call ids, flags, token totals), so
//! that every step checkpoints cheaply. The messages live in the transcript, not here.

use serde::{Deserialize, Serialize};
use trellis::{
    GraphState,
    interrupt::{ApplyResume, Decision, Interrupt},
};

/// The state every agent blueprint runs on. Every field but the two first has a default, so a
/// turn is started from `{"agent": "…", "input": "…"}` (as servers' clients do).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, GraphState)]
#[serde(default)]
pub struct TurnState {
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
}

impl TurnState {
    /// The state a turn of `agent` on `input` starts from.
    pub fn new(agent: impl Into<String>, input: impl Into<String>) -> Self {
        TurnState {
            agent: agent.into(),
            input: input.into(),
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

impl ApplyResume for TurnState {
    type Input = TurnAnswer;

    fn apply_resume(&self, _: &Interrupt, answer: TurnAnswer) -> TurnStateUpdate {
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
