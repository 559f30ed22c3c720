//! `#[graph_state(schema)]`: the JSON Schemas of a state, its update and its answer follow the
//! state's serde shape — what LangGraph's `/assistants/{id}/schemas` answers and forms read.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use trellis::interrupt::{ApplyResume, Decision};
use trellis::{GraphState, WholeState};

/// A ticket.
#[derive(Clone, Default, Serialize, Deserialize, GraphState, schemars::JsonSchema)]
#[graph_state(schema)]
struct Ticket {
    /// What the customer wrote.
    text: String,
    #[serde(rename = "kind")]
    category: Option<String>,
    #[reducer(append)]
    log: Vec<String>,
    #[reducer(sum)]
    drafts: u32,
    #[serde(skip)]
    scratch: u8,
    #[answer]
    decision: Option<Decision>,
}

fn properties(schema: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = schema["properties"]
        .as_object()
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    names.sort_unstable();
    names
}

#[test]
fn a_state_s_schemas_follow_its_serde_shape() {
    let schemas = Ticket::schemas().expect("asked for with `schema`");
    assert_eq!(
        properties(&schemas.state),
        ["decision", "drafts", "kind", "log", "text"],
        "renamed and skipped as serde does"
    );
    assert_eq!(schemas.state["properties"]["text"]["type"], "string");
    assert_eq!(
        schemas.state["properties"]["text"]["description"],
        "What the customer wrote."
    );
    assert_eq!(
        schemas.state["properties"]["log"]["items"]["type"],
        "string"
    );

    // The update: the same fields, each optional — an update names only what it changes.
    assert_eq!(
        properties(&schemas.update),
        ["decision", "drafts", "kind", "log", "text"]
    );
    let required = schemas.update.get("required").cloned().unwrap_or(json!([]));
    assert_eq!(required, json!([]), "no field of an update is required");
    assert_eq!(schemas.update["properties"]["log"]["type"], "array");
    let described = schemas.update["properties"]["text"]["description"].as_str();
    assert!(
        described.is_some_and(|d| d.starts_with("What the customer wrote.\n\nReplaces")),
        "the field's own doc, then what the update does: {described:?}"
    );

    // The answer: a `Decision`, `"approve"` or `{"reject": {"reason": …}}`.
    let answer = Ticket::answer_schema().expect("an `#[answer]` field under `schema`");
    let text = answer.to_string();
    assert!(
        text.contains("\"approve\"") && text.contains("\"reject\""),
        "{answer}"
    );
    assert!(text.contains("\"reason\""), "{answer}");
    let _ = Ticket::default().scratch;
}

/// Without `schema`, and for a whole state, there is none.
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
struct Plain {
    text: String,
}

#[derive(Clone, Default, Serialize, Deserialize)]
struct Whole {
    count: u32,
}

impl WholeState for Whole {
    const COMBINES: bool = false;
    fn merge(&mut self, update: Self) {
        *self = update;
    }
}

#[test]
fn without_schema_there_is_none() {
    assert!(Plain::schemas().is_none());
    assert!(Whole::schemas().is_none());
    let _ = Plain::default().text;
    let _ = Whole::default().count;
}
