//! The generated-code contract: the expansion of every example graph, formatted, as a
//! snapshot. A change to the generated code shows up here as a diff to review.

use std::path::Path;

fn expanded(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/graphs")
        .join(name);
    let source = std::fs::read_to_string(&path).expect("example graph");
    let expansion = trellis_codegen::expand_source(&source, &trellis_codegen::Options::default());
    assert!(
        expansion.errors.is_empty(),
        "{name}: {:?}",
        expansion.errors
    );
    let file: syn::File = syn::parse2(expansion.tokens).expect("generated code parses");
    prettyplease::unparse(&file)
}

#[test]
fn support() {
    insta::assert_snapshot!(expanded("support.graph"));
}

#[test]
fn research() {
    insta::assert_snapshot!(expanded("research.graph"));
}

/// Subgraph nodes: one on the parent's state (a method that builds it), one on another state
/// (and its mapping methods).
#[test]
fn desk() {
    insta::assert_snapshot!(expanded("desk.graph"));
}

#[test]
fn agent_turn() {
    insta::assert_snapshot!(expanded("agent_turn.graph"));
}

#[test]
fn a_crate_path_is_used_everywhere() {
    let options = trellis_codegen::Options::default()
        .with_crate_path("::my_app::trellis")
        .expect("a path");
    let source = "graph G { node a; START -> a; a -> END | a; }";
    let code = trellis_codegen::expand_source(source, &options)
        .tokens
        .to_string();
    assert!(code.contains(":: my_app :: trellis :: GraphBuilder"));
    let elsewhere = code.replace(":: my_app :: trellis ::", "");
    assert!(
        !elsewhere.contains(":: trellis ::"),
        "every path goes through the crate path"
    );
    assert!(
        trellis_codegen::Options::default()
            .with_crate_path("not a path")
            .is_err()
    );
    assert!(
        trellis_codegen::Options::default()
            .with_crate_path("")
            .is_err()
    );
}

#[test]
fn a_graph_with_errors_expands_to_a_skeleton_and_its_errors() {
    let source = "graph G { node a; node b; START -> a; a -> c | b; b -> END; }";
    let expansion = trellis_codegen::expand_source(source, &trellis_codegen::Options::default());
    assert_eq!(expansion.errors.len(), 1);
    let code = expansion.tokens.to_string();
    assert!(
        code.contains("pub enum Node"),
        "the skeleton keeps the node enum"
    );
    assert!(code.contains("fn route_a"), "and the router of `a`");
    assert!(code.contains("unreachable"), "but no working build");
    assert!(!code.contains("struct Adapter"));
}

/// A graph of more links than Mermaid draws gets a line saying where its diagram is instead of
/// a diagram that would render as an error; one at the limit keeps its diagram.
#[test]
fn the_diagram_is_left_out_beyond_what_mermaid_draws() {
    let chain = |links: usize| {
        let mut source = String::from("graph G {\n");
        for i in 0..links - 1 {
            source.push_str(&format!("    node n{i};\n"));
        }
        source.push_str("    START -> n0;\n");
        for i in 0..links - 2 {
            source.push_str(&format!("    n{i} -> n{};\n", i + 1));
        }
        source.push_str(&format!("    n{} -> END;\n}}\n", links - 2));
        let expansion =
            trellis_codegen::expand_source(&source, &trellis_codegen::Options::default());
        assert!(expansion.errors.is_empty(), "{:?}", expansion.errors);
        expansion.tokens.to_string()
    };
    let limit = trellis_dsl::export::MERMAID_MAX_EDGES;
    let at_limit = chain(limit);
    assert!(at_limit.contains("```mermaid"));
    assert!(!at_limit.contains("diagram is left out"));
    let beyond = chain(limit + 1);
    assert!(!beyond.contains("```mermaid"));
    assert!(beyond.contains(&format!(
        "The graph's diagram is left out: {} links, more than Mermaid draws ({limit})",
        limit + 1
    )));
}
