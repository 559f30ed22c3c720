//! The exports of `trellis_graph::export` on graphs the language declares.

use trellis_graph::export::{mermaid_links, to_mermaid};

/// `mermaid_links` counts what `to_mermaid` draws (a link is a line with an arrow), so the
/// two cannot drift apart: every edge kind, a fork, a join, a send and an `on_error`.
#[test]
fn the_link_count_is_the_diagrams() {
    let sources = [
        include_str!("../../examples/graphs/support.graph"),
        include_str!("../../examples/graphs/research.graph"),
        include_str!("../../examples/graphs/agent_turn.graph"),
        include_str!("../../examples/graphs/desk.graph"),
        // A waiting join and a send, which no example has.
        "graph J { state S; node a; node b; node c; node d { input Doc; }\n\
         START -> a & b; a & b -> c; c -> each d; d -> END; }",
    ];
    for source in sources {
        let checked = trellis_dsl::check(source);
        for graph in &checked.module.graphs {
            let drawn = to_mermaid(graph)
                .lines()
                .filter(|line| line.contains("->") || line.contains("==>"))
                .count();
            assert!(
                checked.diagnostics.iter().all(|d| !d.is_error()),
                "{source}"
            );
            assert_eq!(mermaid_links(graph), drawn, "graph {}", graph.name);
        }
    }
}
