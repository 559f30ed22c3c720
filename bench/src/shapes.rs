//! `.graph` sources of any size, in the shapes the front end must stay linear on: a plain
//! chain; a mixed graph where every rule has work to do; forks whose branches never join (the
//! worst case of the join warning's search); the mixed graph with every node declaring what it
//! writes (every fork's branches checked for writers of one step); and, with diagnostics to
//! report, forks that rejoin unevenly (a warning every ten nodes) and one line of thousands of
//! targets.

use std::fmt::Write as _;

/// A shape: the source of a graph of so many nodes.
pub(crate) type Shape = fn(usize) -> String;

/// The shapes, by name.
pub(crate) const SHAPES: &[(&str, Shape)] = &[
    ("chain", chain),
    ("mixed", mixed),
    ("forks", forks),
    ("written", written),
];

fn header() -> String {
    String::from(
        "//! Generated for the benchmark.\n\n/// A big graph.\ngraph Big {\n    state bench::State<Vec<u8>>;\n    max_steps 100000;\n\n",
    )
}

/// A node declaration with the docs and attributes every shape shares.
fn node(text: &mut String, i: usize) {
    if i.is_multiple_of(4) {
        let _ = writeln!(text, "    /// Node number {i}.");
    }
    let attributes = match i % 10 {
        2 => " { max_visits 3; }",
        6 => " { retry 2 backoff 100ms; timeout 5s; }",
        8 => " { kind dispatch; meta owner = \"bench\"; }",
        _ => ";",
    };
    let _ = writeln!(text, "    node n{i}{attributes}");
}

/// `n0 -> n1 -> … -> END`.
pub(crate) fn chain(nodes: usize) -> String {
    let mut text = header();
    for i in 0..nodes {
        node(&mut text, i);
    }
    text.push_str("\n    START -> n0;\n");
    for i in 0..nodes - 1 {
        let _ = writeln!(text, "    n{i} -> n{};", i + 1);
    }
    let _ = writeln!(text, "    n{} -> END;\n}}", nodes - 1);
    text
}

/// The chain with, in every ten nodes, a fork (`n3 -> n4 & n5`, both joining at `n6`) and a
/// conditional edge whose second target is a back edge into a node with `max_visits`
/// (`n8 -> n9 | n2`).
pub(crate) fn mixed(nodes: usize) -> String {
    let mut text = header();
    for i in 0..nodes {
        node(&mut text, i);
    }
    text.push_str("\n    START -> n0;\n");
    for i in 0..nodes - 1 {
        let _ = match i % 10 {
            3 if i + 3 < nodes => writeln!(text, "    n{i} -> n{} & n{};", i + 1, i + 2),
            4 if i + 2 < nodes => writeln!(text, "    n{i} -> n{};", i + 2),
            8 => writeln!(text, "    n{i} -> n{} | n{};", i + 1, i - 6),
            _ => writeln!(text, "    n{i} -> n{};", i + 1),
        };
    }
    let _ = writeln!(text, "    n{} -> END;\n}}", nodes - 1);
    text
}

/// The mixed shape with `writes log;` on every node: every fork's two branches write `log` in
/// the same steps, from the fork to the graph's end (the write-set check's work; the code
/// generated checks `log`'s reducer once).
pub(crate) fn written(nodes: usize) -> String {
    let mut text = String::new();
    for line in mixed(nodes).lines() {
        match line.strip_prefix("    node ") {
            Some(rest) => match rest.strip_suffix(" }") {
                Some(open) => {
                    let _ = writeln!(text, "    node {open} writes log; }}");
                }
                None => {
                    let name = rest.trim_end_matches(';');
                    let _ = writeln!(text, "    node {name} {{ writes log; }}");
                }
            },
            None => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    text
}

/// The chain with a fork every ten nodes whose second branch ends at once (`n3 -> n4 & s3;
/// s3 -> END;`).
pub(crate) fn forks(nodes: usize) -> String {
    let mut text = header();
    for i in 0..nodes {
        node(&mut text, i);
        if i % 10 == 3 {
            let _ = writeln!(text, "    node s{i};");
        }
    }
    text.push_str("\n    START -> n0;\n");
    for i in 0..nodes - 1 {
        if i % 10 == 3 {
            let _ = writeln!(text, "    n{i} -> n{} & s{i};\n    s{i} -> END;", i + 1);
        } else {
            let _ = writeln!(text, "    n{i} -> n{};", i + 1);
        }
    }
    let _ = writeln!(text, "    n{} -> END;\n}}", nodes - 1);
    text
}

/// The chain with, in every ten nodes, a conditional back edge into a node with `max_visits`
/// (`n9 -> n10 | n0`) and a fork whose branches rejoin at different lengths (`n7 -> n8 & n9;
/// n8 -> n9;`): a W0304 for every fork, as users' graphs have them while they are written.
pub(crate) fn uneven(nodes: usize) -> String {
    let mut text = header();
    for i in 0..nodes {
        let limit = if i % 10 == 0 {
            " { max_visits 3; }"
        } else {
            ";"
        };
        let _ = writeln!(text, "    node n{i}{limit}");
    }
    text.push_str("\n    START -> n0;\n");
    let mut i = 0;
    while i + 1 < nodes {
        if i % 10 == 7 && i + 2 < nodes {
            let _ = writeln!(text, "    n{i} -> n{} & n{};", i + 1, i + 2);
            let _ = writeln!(text, "    n{} -> n{};", i + 1, i + 2);
            i += 2;
            continue;
        }
        let _ = if i % 10 == 9 && i >= 10 {
            writeln!(text, "    n{i} -> n{} | n{};", i + 1, i - 9)
        } else {
            writeln!(text, "    n{i} -> n{};", i + 1)
        };
        i += 1;
    }
    let _ = writeln!(text, "    n{} -> END;\n}}", nodes - 1);
    text
}

/// One node whose one conditional edge names it `targets` times on one line
/// (`a -> a | a | …;`): an E0206 for every target but the first, all on that line.
pub(crate) fn one_long_line(targets: usize) -> String {
    let mut text = String::from("graph Long {\n    node a;\n    START -> a;\n    a -> a");
    for _ in 1..targets {
        text.push_str(" | a");
    }
    text.push_str(";\n}\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_is_a_clean_graph_at_every_size() {
        for (name, shape) in SHAPES {
            for nodes in [12, 100, 1_000] {
                let checked = trellis_codegen::expand_source(&shape(nodes), &Default::default());
                assert!(
                    checked.errors.is_empty(),
                    "{name} {nodes}: {:?}",
                    checked.errors.first()
                );
                assert!(
                    checked.warnings.is_empty(),
                    "{name} {nodes}: {:?}",
                    checked.warnings.first()
                );
            }
        }
    }

    #[test]
    fn the_shapes_with_diagnostics_have_the_ones_they_are_for() {
        let codes = |text: &str| -> Vec<String> {
            let checked = trellis_dsl::check(text);
            checked
                .diagnostics
                .iter()
                .map(|d| d.code.to_string())
                .collect()
        };
        let uneven = codes(&uneven(1_000));
        assert_eq!(uneven.len(), 100, "a W0304 per fork: {uneven:?}");
        assert!(uneven.iter().all(|code| code == "W0304"), "{uneven:?}");
        let long = codes(&one_long_line(500));
        assert_eq!(long.len(), 499, "an E0206 per repeated target");
        assert!(long.iter().all(|code| code == "E0206"), "{long:?}");
    }
}
