// An unknown state type is reported at its name in the graph, and the fix rustc suggests
// edits that name, not the macro call.
#[derive(Clone, Default, serde::Serialize, serde::Deserialize, trellis::GraphState)]
struct Doc {}

trellis::graph! {
    graph Review {
        state Dok;
        node read;
        START -> read;
        read -> END;
    }
}

fn main() {}
