//! Front-end speed over generated graphs of 100, 1,000 and 10,000 nodes: parse + lower +
//! validate (`check`), formatting, and each export. Run with `cargo bench -p trellis-dsl`.
//!
//! Targets (LANGUAGE issue): 10,000 nodes checked in under 50 ms on a 2-core machine, and 10×
//! the nodes costing at most 12× the time.

use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

const SIZES: &[usize] = &[100, 1_000, 10_000];

/// A valid graph of `nodes` nodes: a chain with a conditional back edge every tenth node (into
/// a node bounded by `max_visits`), a fork and join every seventh, docs and attributes.
fn generated(nodes: usize) -> String {
    let mut text = String::from(
        "//! Generated for the benchmark.\n\n/// A big graph.\ngraph Big {\n    state bench::State<Vec<u8>>;\n    max_steps 100000;\n\n",
    );
    for i in 0..nodes {
        if i % 4 == 0 {
            text.push_str(&format!("    /// Node number {i}.\n"));
        }
        let attributes = match i % 10 {
            4 => " { max_visits 3; }".to_owned(),
            6 => " { retry 2 backoff 100ms; timeout 5s; }".to_owned(),
            8 => " { kind dispatch; meta owner = \"bench\"; }".to_owned(),
            _ => ";".to_owned(),
        };
        text.push_str(&format!("    node n{i}{attributes}\n"));
    }
    text.push_str("\n    START -> n0;\n");
    for i in 0..nodes - 1 {
        if i % 10 == 9 && i >= 5 {
            text.push_str(&format!("    n{i} -> n{} | n{};\n", i + 1, i - 5));
        } else if i % 7 == 3 && i + 2 < nodes && (i + 1) % 10 != 9 {
            text.push_str(&format!("    n{i} -> n{} & n{};\n", i + 1, i + 2));
        } else {
            text.push_str(&format!("    n{i} -> n{};\n", i + 1));
        }
    }
    text.push_str(&format!("    n{} -> END;\n}}\n", nodes - 1));
    text
}

#[divan::bench(args = SIZES)]
fn check(bencher: Bencher<'_, '_>, nodes: usize) {
    let text = generated(nodes);
    let checked = trellis_dsl::check(&text);
    assert!(!checked.has_errors(), "{:?}", checked.diagnostics.first());
    bencher.bench(|| trellis_dsl::check(black_box(&text)));
}

#[divan::bench(args = SIZES)]
fn format(bencher: Bencher<'_, '_>, nodes: usize) {
    let text = generated(nodes);
    bencher.bench(|| trellis_dsl::format(black_box(&text)));
}

fn blueprint(nodes: usize) -> trellis_dsl::Blueprint {
    let mut checked = trellis_dsl::check(&generated(nodes));
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
