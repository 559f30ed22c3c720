//! The generated-code contract: the expansion of every example graph, formatted, as a
//! snapshot. A change to the generated code shows up here as a diff to review.

use std::path::Path;

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/graphs")
        .join(name);
    std::fs::read_to_string(&path).expect("example graph")
}

fn expanded(name: &str) -> String {
    let source = example(name);
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

/// Names that become one Rust identifier (E0106): the skeleton keeps the first, so that it has
/// no error of its own.
#[test]
fn a_skeleton_keeps_one_of_two_clashing_names() {
    let source = "graph G { node a_b; node a__b; START -> a_b; a_b -> a__b; a__b -> END; }";
    let expansion = trellis_codegen::expand_source(source, &trellis_codegen::Options::default());
    assert_eq!(expansion.errors.len(), 1);
    let file: syn::File = syn::parse2(expansion.tokens).expect("the skeleton parses");
    let code = prettyplease::unparse(&file);
    assert_eq!(code.matches("    AB,").count(), 1, "{code}");
    assert!(code.contains("fn a_b("), "{code}");
    assert!(!code.contains("fn a__b("), "{code}");
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
    let limit = trellis_graph::export::MERMAID_MAX_EDGES;
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

/// `line` without the places of the source a build script's messages name (` (at
/// g1.graph:9:39)`): the macros' errors stand at the place itself instead.
fn without_places(line: &str, source: &str) -> String {
    let marker = format!(" (at {source}:");
    let mut rest = line;
    let mut kept = String::with_capacity(line.len());
    while let Some(at) = rest.find(&marker) {
        kept.push_str(&rest[..at]);
        let after = &rest[at + marker.len()..];
        let end = after.find(')').expect("a place ends with `)`");
        rest = &after[end + 1..];
    }
    kept.push_str(rest);
    kept
}

/// Both forms of one code: what a build script writes is, token for token (but for the source
/// places its messages name), what the macros expand to (they parse that same text), and its lines are short enough for rustc to quote.
#[test]
fn the_build_script_writes_the_code_the_macros_expand_to() {
    let out = std::env::temp_dir().join(format!("trellis-expanded-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("scratch dir");
    let sources = [
        "support.graph",
        "research.graph",
        "desk.graph",
        "agent_turn.graph",
    ]
    .map(example)
    .into_iter()
    // A skeleton, and names to escape.
    .chain([
        "graph Broken { state Vec<Vec<u8>>; node a; START -> a; a -> b | END; }".to_owned(),
        // A skeleton whose deepest path is a handler's input (no adapter below it).
        "graph Sent { state s::S; node plan; node work { input s::Item; } START -> plan; \
         plan -> each work; work -> nowhere; }"
            .to_owned(),
        "graph Odd { node r#type; node b { meta note = \"a \\\" {\"; } START -> r#type; r#type -> b; b -> END; }"
            .to_owned(),
    ]);
    for (at, source) in sources.enumerate() {
        let input = out.join(format!("g{at}.graph"));
        std::fs::write(&input, &source).expect("graph");
        trellis_codegen::Builder::new()
            .out_dir(&out)
            .emit_rerun_if_changed(false)
            .compile(&[&input])
            .expect("written");
        let written = std::fs::read_to_string(out.join(format!("g{at}.rs"))).expect("output");
        // The errors' reports are included from beside the file; the rest must parse as is.
        let written: String = written
            .lines()
            .filter(|line| !line.starts_with("::core::compile_error!"))
            .map(|line| format!("{}\n", without_places(line, &input.display().to_string())))
            .collect();
        let from_file = syn::parse_file(&written).expect("the written code parses");
        let tokens = trellis_codegen::expand_source(&source, &Default::default()).tokens;
        let from_tokens: syn::File = syn::parse2(tokens).expect("the tokens parse");
        assert_eq!(
            prettyplease::unparse(&from_file),
            prettyplease::unparse(&from_tokens),
            "graph {at}"
        );
        let longest = written.lines().map(str::len).max().unwrap_or(0);
        assert!(
            longest < 200,
            "a line of {longest} characters in:\n{written}"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}
