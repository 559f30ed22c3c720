// The answer to a pause goes into an `Option` field, empty until a person answers; answers are
// told apart by type, so two answer fields cannot share one.
#[derive(Clone, Default, serde::Serialize, serde::Deserialize, trellis::GraphState)]
struct Reply {
    #[answer]
    decision: String,
}

#[derive(Clone, Default, serde::Serialize, serde::Deserialize, trellis::GraphState)]
struct Review {
    #[answer]
    decision: Option<String>,
    #[answer]
    note: Option<String>,
}

fn main() {}
