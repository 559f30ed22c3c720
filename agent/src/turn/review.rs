//! The `"review"` kind: the model judges the result through a `submit_review` tool; an
//! unreadable review is no approval, and the rounds are bounded by the node's `max_visits`.

use serde_json::{Value, json};
use trellis::{NodeContext, NodeError};

use super::live::LiveTurn;
use super::nodes::{Output, ask_model, tool_result};
use super::state::{AgentFields, Next, TurnState, TurnStateUpdate};
use crate::tool::ToolSpec;

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
pub(super) async fn review<F: AgentFields>(
    live: &mut LiveTurn,
    state: &TurnState<F>,
    ctx: &NodeContext,
    instruction: Option<&str>,
    rounds: Option<u32>,
) -> Output<F> {
    let (step, node) = (ctx.step(), ctx.node());
    let spec = review_tool();
    let (response, answer) = ask_model(live, ctx, instruction, std::slice::from_ref(&spec)).await?;
    live.push(step, node, answer, vec![spec.name.clone()]);
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
        .reviews(reviews)
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
