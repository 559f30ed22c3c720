//! Stored runs carry their graph's fingerprint, and a run is refused by a graph whose
//! fingerprint differs: the text it hashes must never change by accident.

use crate::{END, GraphBuilder, NodeResult, START, WholeState};

#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
struct S(u8);
impl WholeState for S {}

#[test]
fn the_fingerprint_of_a_graph_is_what_it_always_was() {
    let mut b = GraphBuilder::<S>::new("Pin");
    for n in ["a", "b", "c", "d"] {
        b.add_node_fn(n, |_, _| async { Ok(NodeResult::None) });
    }
    b.add_edge(START, "a")
        .add_conditional_edges("a", |_: &S| "b", ["b", "c", END])
        .add_fork("b", ["c", "d"])
        .add_edge("c", "d")
        .add_edge("d", END);
    // Computed by the code before the fingerprint's text was built without `format!`.
    assert_eq!(b.compile().unwrap().fingerprint(), "a485c76c2a19ecf3");
}
