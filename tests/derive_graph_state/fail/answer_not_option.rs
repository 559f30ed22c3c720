// The answer to a pause goes into one `Option` field: empty until a person answers.
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
