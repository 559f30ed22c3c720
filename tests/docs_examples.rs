//! Every `graph` code block in the README and in `docs/` is checked, so no example can rot:
//! ```` ```graph ```` must have no diagnostic at all, ```` ```graph,E0202 ```` (codes separated
//! by commas) must report exactly those codes.

use std::path::{Path, PathBuf};

struct Example {
    file: PathBuf,
    line: usize,
    expected: Vec<String>,
    text: String,
}

/// The fenced blocks whose info string starts with `graph`.
fn examples(file: &Path) -> Vec<Example> {
    let markdown = std::fs::read_to_string(file).expect("a readable document");
    let mut examples = Vec::new();
    let mut open: Option<Example> = None;
    for (number, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.as_mut() {
            Some(_) if trimmed.starts_with("```") => examples.extend(open.take()),
            Some(example) => {
                example.text.push_str(line);
                example.text.push('\n');
            }
            None => {
                let Some(info) = trimmed.strip_prefix("```") else {
                    continue;
                };
                // ```graph,E0202 (codes after commas); words after a space are attributes
                // (`file=…`, for the guide's own test).
                let info = info.split_whitespace().next().unwrap_or_default();
                let mut parts = info.split(',').map(str::trim);
                if parts.next() == Some("graph") {
                    open = Some(Example {
                        file: file.to_owned(),
                        line: number + 1,
                        expected: parts.map(str::to_owned).collect(),
                        text: String::new(),
                    });
                }
            }
        }
    }
    assert!(open.is_none(), "{}: an unclosed code block", file.display());
    examples
}

fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut documents = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("a docs folder") {
        let path = entry.expect("a folder entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            documents.push(path);
        }
    }
    documents.sort();
    documents
}

#[test]
fn graph_examples_in_the_docs_check_as_they_claim() {
    let mut checked = 0;
    let mut codes_shown = std::collections::BTreeSet::new();
    for document in documents() {
        for example in examples(&document) {
            let result = trellis_dsl::check(&example.text);
            let mut codes: Vec<String> = result
                .diagnostics
                .iter()
                .map(|d| d.code.to_string())
                .collect();
            codes.dedup();
            let mut expected = example.expected.clone();
            expected.sort();
            let mut found = codes.clone();
            found.sort();
            found.dedup();
            assert_eq!(
                found,
                expected,
                "{}:{}: the example should report {:?}; it reports {:?}",
                example.file.display(),
                example.line,
                example.expected,
                result
                    .diagnostics
                    .iter()
                    .map(|d| &d.message)
                    .collect::<Vec<_>>()
            );
            codes_shown.extend(codes);
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} examples found");
    // A code the compiler reports from the state's types is shown by a Rust example that does
    // not compile (a doctest of `tests/src/lib.rs`).
    let graph_codes = trellis_dsl::Code::ALL
        .iter()
        .filter(|code| code.scope() != trellis_dsl::Scope::Types);
    for code in graph_codes {
        assert!(
            codes_shown.contains(code.as_str()),
            "the language reference shows no example of {code}"
        );
    }
}

/// The language reference's account of joins, run: the W0304 example's `summarize` runs in step
/// 3 and again in step 4; with `defer;` it runs once; after branches of equal length, once.
#[test]
fn joins_run_as_the_language_reference_says() {
    use std::sync::{Arc, Mutex};

    use serde::{Deserialize, Serialize};
    use trellis::{GraphBuilder, NodeResult, WholeState};

    #[derive(Clone, Default, Serialize, Deserialize)]
    struct Blank;
    impl WholeState for Blank {}

    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/language.md");
    let examples = examples(&reference);
    let uneven = examples
        .iter()
        .find(|example| example.expected == ["W0304"])
        .expect("the reference shows W0304");
    let even = examples
        .iter()
        .find(|example| {
            example.expected.is_empty()
                && example.text.contains("papers -> summarize;")
                && example.text.contains("plan -> web & papers;")
        })
        .expect("the reference shows branches of equal length");

    // The steps at which `summarize` runs, for a source.
    let summarize_steps = |source: &str| -> Vec<u64> {
        let checked = trellis_dsl::check(source);
        assert!(!checked.has_errors(), "{:?}", checked.diagnostics);
        let steps = Arc::new(Mutex::new(Vec::new()));
        let graph = GraphBuilder::<Blank>::from_blueprint(
            checked.module.graphs[0].clone(),
            |_, node| {
                let (steps, summarize) = (Arc::clone(&steps), node.id == "summarize");
                trellis::node_fn(move |_, ctx| {
                    if summarize {
                        steps.lock().expect("not poisoned").push(ctx.step());
                    }
                    async { Ok(NodeResult::None) }
                })
            },
            |_, _| |_: &Blank, _: &trellis::Visits<'_>| "",
        )
        .compile()
        .expect("a checked graph builds");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime
            .block_on(graph.invoke(Blank))
            .expect("the run completes");
        steps.lock().expect("not poisoned").clone()
    };

    assert_eq!(
        summarize_steps(&uneven.text),
        [3, 4],
        "once per arriving branch"
    );
    let deferred = uneven
        .text
        .replace("node summarize;", "node summarize { defer; }");
    assert_eq!(
        summarize_steps(&deferred),
        [4],
        "once, after the other branches"
    );
    assert!(
        trellis_dsl::check(&deferred).diagnostics.is_empty(),
        "and no warning"
    );
    assert_eq!(
        summarize_steps(&even.text),
        [3],
        "once, when the branches arrive together"
    );
}

/// The README and every page of `docs/` (but the getting-started guide, which its own test
/// follows) have their Rust examples run as doctests (`src/lib.rs` includes them), and none is
/// left out with `ignore`.
#[test]
fn every_rust_example_in_the_docs_is_compiled() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("the doctest crate");
    for document in documents() {
        let name = document
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let in_docs = document.parent().and_then(Path::file_name) == Some("docs".as_ref());
        if !(in_docs || name == "README.md") || name == "getting-started.md" {
            continue;
        }
        let included = if in_docs {
            format!("include_str!(\"../../docs/{name}\")")
        } else {
            format!("include_str!(\"../../{name}\")")
        };
        assert!(
            lib.contains(&included),
            "{name} is not among the doctests of tests/src/lib.rs"
        );
        let text = std::fs::read_to_string(&document).expect("a readable document");
        for (number, line) in text.lines().enumerate() {
            let info = line.trim_start().strip_prefix("```").unwrap_or_default();
            assert!(
                !(info.starts_with("rust") && info.contains("ignore")),
                "docs/{name}:{}: a Rust example that is not compiled",
                number + 1
            );
        }
    }
}
