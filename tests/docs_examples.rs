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
    for code in trellis_dsl::Code::ALL {
        assert!(
            codes_shown.contains(code.as_str()),
            "the language reference shows no example of {code}"
        );
    }
}
