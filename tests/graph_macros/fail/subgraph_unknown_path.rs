#[derive(Clone, Default, serde::Serialize, serde::Deserialize, trellis::GraphState)]
struct Work {
    done: bool,
}

trellis::graph! {
    graph Desk {
        state Work;
        node lookup { graph nowhere::Lookup; }
        START -> lookup -> END;
    }
}

fn main() {}
