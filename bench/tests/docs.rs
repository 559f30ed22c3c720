//! The README's performance table and `docs/bench.md` say what the suite measures: every row of
//! the table is a workload and variant that `trellis-bench` prints, every one it prints is in the
//! table, and the commands they give exist.

use std::collections::BTreeSet;
use std::path::Path;

use trellis_bench::{Options, Scale, WORKLOADS, run};

fn read(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The section of `text` under `heading`, to the next heading of its level or higher.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?}"));
    let body = &text[start + heading.len()..];
    let end = body.find("\n## ").unwrap_or(body.len());
    &body[..end]
}

/// `(workload, variant)` of every row of the first table in `text`.
fn table_rows(text: &str) -> BTreeSet<(String, String)> {
    text.lines()
        .skip_while(|line| !line.starts_with("| workload"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            (
                cells[1].trim_matches('`').to_owned(),
                cells[2].trim_matches('`').to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_readme_table_shows_every_workload_and_variant_and_no_other() {
    let options = Options {
        scale: Scale::Smoke,
        postgres: None,
        only: Vec::new(),
        compile_in: None,
    };
    let mut printed = BTreeSet::new();
    run(
        &options,
        &mut |row| {
            printed.insert((row.workload.to_owned(), row.variant));
        },
        &mut |_| {},
    )
    .expect("every workload runs");
    // Measured when a server is given, as it was for the table.
    printed.insert(("loop_ckpt".to_owned(), "postgres".to_owned()));
    for variant in [
        "postgres-1-client",
        "postgres-50-clients",
        "postgres-50-p99",
    ] {
        printed.insert(("server".to_owned(), variant.to_owned()));
    }
    let readme = read("README.md");
    let table = table_rows(section(&readme, "\n## Performance\n"));
    assert_eq!(
        table, printed,
        "README's table against trellis-bench's rows"
    );
}

#[test]
fn the_commands_they_give_exist() {
    let readme = read("README.md");
    let performance = section(&readme, "\n## Performance\n");
    for command in [
        "cargo run --release -p trellis-bench",
        "bench/langgraph/compare",
    ] {
        assert!(performance.contains(command), "README gives `{command}`");
    }
    let compare = Path::new(env!("CARGO_MANIFEST_DIR")).join("langgraph/compare");
    assert!(compare.is_file(), "{}", compare.display());
    let guide = read("docs/bench.md");
    for workload in WORKLOADS {
        assert!(
            guide.contains(&format!("`{workload}`")),
            "docs/bench.md describes `{workload}`"
        );
    }
    // The LangGraph side runs the same workloads, by the same names (not `compile`, `tooling`
    // and `editor`, which need a graph language).
    let langgraph = read("bench/langgraph/bench.py");
    for workload in WORKLOADS
        .iter()
        .filter(|w| !matches!(**w, "compile" | "tooling" | "editor"))
    {
        assert!(
            langgraph.contains(&format!("(\"{workload}\", ")),
            "bench.py runs {workload}"
        );
    }
}
