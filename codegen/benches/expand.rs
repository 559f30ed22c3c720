//! Expansion speed: `.graph` source → checked blueprint → generated tokens, as the `graph!` and
//! `include_graph!` macros do it (`cargo bench -p trellis-codegen`).

use std::fmt::Write as _;

fn main() {
    divan::main();
}

/// A chain of `nodes` nodes with a conditional edge every tenth node and a fork every 100th.
fn graph(nodes: usize) -> String {
    let mut source = String::from("/// A large graph.\ngraph Large {\n    state Big;\n");
    for i in 0..nodes {
        let _ = writeln!(
            source,
            "    /// Node {i}.\n    node n{i} {{ retry 2 backoff 10ms; }}"
        );
    }
    source.push_str("    START -> n0;\n");
    for i in 0..nodes {
        let next = if i + 1 < nodes {
            format!("n{}", i + 1)
        } else {
            "END".to_owned()
        };
        let edge = if i % 10 == 5 && i + 2 < nodes {
            format!("    n{i} -> {next} | n{};\n", i + 2)
        } else {
            format!("    n{i} -> {next};\n")
        };
        source.push_str(&edge);
    }
    source.push_str("}\n");
    source
}

#[divan::bench(args = [100, 1000])]
fn expand_source(bencher: divan::Bencher<'_, '_>, nodes: usize) {
    let source = graph(nodes);
    let options = trellis_codegen::Options::default();
    assert!(
        trellis_codegen::expand_source(&source, &options)
            .errors
            .is_empty()
    );
    // Tokens are not `Send`: count them inside the measured call instead of returning them.
    bencher.bench(|| {
        let expansion = trellis_codegen::expand_source(divan::black_box(&source), &options);
        expansion.tokens.into_iter().count()
    });
}

#[divan::bench(args = [1000])]
fn expand_source_to_text(bencher: divan::Bencher<'_, '_>, nodes: usize) {
    let source = graph(nodes);
    let options = trellis_codegen::Options::default();
    bencher.bench(|| {
        trellis_codegen::expand_source(divan::black_box(&source), &options)
            .tokens
            .to_string()
    });
}
