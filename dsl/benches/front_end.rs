//! Front-end speed over generated graphs: parse + lower + validate (`check`), formatting, and
//! each export. Run with `cargo bench -p trellis-dsl`.
//!
//! Three shapes: a plain chain; a mixed graph — a conditional edge every ten nodes (one of its
//! targets a back edge), a fork every ten nodes whose two branches join again, docs and
//! attributes — where every rule has work to do; and forks whose branches never join, the worst
//! case of the join warning's search. Targets (issue 10): 10,000 nodes of the mixed shape checked
//! within 50 ms, and 10× the nodes costing at most 12× the time.

use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

const SIZES: &[usize] = &[1_000, 10_000, 40_000];

fn header() -> String {
    String::from(
        "//! Generated for the benchmark.\n\n/// A big graph.\ngraph Big {\n    state bench::State<Vec<u8>>;\n    max_steps 100000;\n\n",
    )
}

/// A node declaration with the attributes and docs both shapes share.
fn node(text: &mut String, i: usize) {
    if i.is_multiple_of(4) {
        text.push_str(&format!("    /// Node number {i}.\n"));
    }
    let attributes = match i % 10 {
        2 => " { max_visits 3; }".to_owned(),
        6 => " { retry 2 backoff 100ms; timeout 5s; }".to_owned(),
        8 => " { kind dispatch; meta owner = \"bench\"; }".to_owned(),
        _ => ";".to_owned(),
    };
    text.push_str(&format!("    node n{i}{attributes}\n"));
}

/// `n0 -> n1 -> … -> END`.
fn chain(nodes: usize) -> String {
    let mut text = header();
    for i in 0..nodes {
        node(&mut text, i);
    }
    text.push_str("\n    START -> n0;\n");
    for i in 0..nodes - 1 {
        text.push_str(&format!("    n{i} -> n{};\n", i + 1));
    }
    text.push_str(&format!("    n{} -> END;\n}}\n", nodes - 1));
    text
}

/// The chain with, in every ten nodes, a fork (`n3 -> n4 & n5`, both joining at `n6`) and a
/// conditional edge whose second target is a back edge into a node with `max_visits`
/// (`n8 -> n9 | n2`).
fn mixed(nodes: usize) -> String {
    let mut text = header();
    for i in 0..nodes {
        node(&mut text, i);
    }
    text.push_str("\n    START -> n0;\n");
    for i in 0..nodes - 1 {
        let edge = match i % 10 {
            3 if i + 3 < nodes => format!("    n{i} -> n{} & n{};\n", i + 1, i + 2),
            4 if i + 2 < nodes => format!("    n{i} -> n{};\n", i + 2),
            8 => format!("    n{i} -> n{} | n{};\n", i + 1, i - 6),
            _ => format!("    n{i} -> n{};\n", i + 1),
        };
        text.push_str(&edge);
    }
    text.push_str(&format!("    n{} -> END;\n}}\n", nodes - 1));
    text
}

/// The chain with a fork every ten nodes whose second branch ends at once (`n3 -> n4 & s3;
/// s3 -> END;`): the branches never join, the shape that makes a per-fork search of the join
/// warning (W0304) walk the rest of the graph, were it not bounded.
fn forks(nodes: usize) -> String {
    let mut text = header();
    for i in 0..nodes {
        node(&mut text, i);
        if i % 10 == 3 {
            text.push_str(&format!("    node s{i};\n"));
        }
    }
    text.push_str("\n    START -> n0;\n");
    for i in 0..nodes - 1 {
        if i % 10 == 3 {
            text.push_str(&format!(
                "    n{i} -> n{} & s{i};\n    s{i} -> END;\n",
                i + 1
            ));
        } else {
            text.push_str(&format!("    n{i} -> n{};\n", i + 1));
        }
    }
    text.push_str(&format!("    n{} -> END;\n}}\n", nodes - 1));
    text
}

fn bench_check(bencher: Bencher<'_, '_>, text: String) {
    let checked = trellis_dsl::check(&text);
    assert!(
        checked.diagnostics.is_empty(),
        "{:?}",
        checked.diagnostics.first()
    );
    bencher.bench(|| trellis_dsl::check(black_box(&text)));
}

#[divan::bench(args = SIZES)]
fn check_chain(bencher: Bencher<'_, '_>, nodes: usize) {
    bench_check(bencher, chain(nodes));
}

#[divan::bench(args = SIZES)]
fn check_mixed(bencher: Bencher<'_, '_>, nodes: usize) {
    bench_check(bencher, mixed(nodes));
}

#[divan::bench(args = SIZES)]
fn check_forks(bencher: Bencher<'_, '_>, nodes: usize) {
    bench_check(bencher, forks(nodes));
}

#[divan::bench(args = SIZES)]
fn format(bencher: Bencher<'_, '_>, nodes: usize) {
    let text = mixed(nodes);
    bencher.bench(|| trellis_dsl::format(black_box(&text)));
}

fn blueprint(nodes: usize) -> trellis_dsl::Blueprint {
    let mut checked = trellis_dsl::check(&mixed(nodes));
    checked.module.graphs.remove(0)
}

#[divan::bench(args = SIZES)]
fn export_json(bencher: Bencher<'_, '_>, nodes: usize) {
    let blueprint = blueprint(nodes);
    bencher.bench(|| trellis_dsl::export::to_json(black_box(&blueprint)));
}

#[divan::bench(args = SIZES)]
fn export_dot(bencher: Bencher<'_, '_>, nodes: usize) {
    let blueprint = blueprint(nodes);
    bencher.bench(|| trellis_dsl::export::to_dot(black_box(&blueprint)));
}

#[divan::bench(args = SIZES)]
fn export_mermaid(bencher: Bencher<'_, '_>, nodes: usize) {
    let blueprint = blueprint(nodes);
    bencher.bench(|| trellis_dsl::export::to_mermaid(black_box(&blueprint)));
}
