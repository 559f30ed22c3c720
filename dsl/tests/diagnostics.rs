//! One fixture per diagnostic code: each must report exactly its own code, and its rendered
//! report (no colour, fixed width) and JSON line are snapshots, reviewed like code.

use std::path::Path;

use trellis_dsl::render::{self, HumanStyle};
use trellis_dsl::{Code, Scope, check};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/diagnostics");

fn fixtures() -> Vec<(String, String)> {
    let mut fixtures: Vec<(String, String)> = std::fs::read_dir(FIXTURES)
        .expect("the fixtures folder exists")
        .map(|entry| entry.expect("a readable folder entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "graph"))
        .map(|path| {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_owned();
            let text = std::fs::read_to_string(&path).expect("a readable fixture");
            (stem, text)
        })
        .collect();
    fixtures.sort();
    fixtures
}

#[test]
fn every_code_has_a_fixture() {
    let fixtures = fixtures();
    // A code the compiler reports from the state's types has a compile-fail test instead
    // (`tests/graph_macros/fail`).
    for code in Code::ALL.iter().filter(|code| code.scope() != Scope::Types) {
        assert!(
            fixtures
                .iter()
                .any(|(stem, _)| stem.starts_with(code.as_str())),
            "no fixture for {code} in {FIXTURES}"
        );
    }
}

#[test]
fn each_fixture_reports_exactly_its_code() {
    for (stem, text) in fixtures() {
        let expected = &stem[..5];
        let checked = check(&text);
        let codes: Vec<&str> = checked
            .diagnostics
            .iter()
            .map(|d| d.code.as_str())
            .collect();
        assert!(
            !codes.is_empty() && codes.iter().all(|code| code == &expected),
            "{stem}: expected only {expected}, got {codes:?}"
        );
        for diagnostic in &checked.diagnostics {
            assert!(
                diagnostic.span.end <= text.len(),
                "{stem}: span outside the input"
            );
            assert!(
                diagnostic.help.is_some(),
                "{stem}: every diagnostic says what to do"
            );
        }
    }
}

#[test]
fn rendered_reports() {
    for (stem, text) in fixtures() {
        let file = Path::new("fixtures").join(format!("{stem}.graph"));
        let file = file.to_string_lossy();
        let checked = check(&text);
        let style = HumanStyle {
            color: false,
            width: 80,
        };
        let mut snapshot = String::new();
        for diagnostic in &checked.diagnostics {
            snapshot.push_str(&render::human(
                diagnostic,
                &file,
                &trellis_dsl::LineIndex::new(&text),
                style,
            ));
            snapshot.push('\n');
        }
        snapshot.push_str("---- json ----\n");
        for diagnostic in &checked.diagnostics {
            snapshot.push_str(&render::json_line(
                diagnostic,
                &file,
                &trellis_dsl::LineIndex::new(&text),
            ));
            snapshot.push('\n');
        }
        insta::assert_snapshot!(stem.clone(), snapshot);
    }
}

/// A fix does what its help says: applied (as an editor applies it), the fixture's diagnostic
/// is gone. At least the did-you-mean codes and E0204 have one.
#[test]
fn each_fix_removes_its_diagnostic() {
    let mut fixed_codes = Vec::new();
    for (stem, text) in fixtures() {
        let checked = check(&text);
        for diagnostic in &checked.diagnostics {
            let Some(fix) = &diagnostic.fix else { continue };
            let mut after = text.clone();
            after.replace_range(fix.span.start..fix.span.end, &fix.text_in(&text));
            let again = check(&after);
            assert!(
                !again
                    .diagnostics
                    .iter()
                    .any(|d| d.code == diagnostic.code && d.message == diagnostic.message),
                "{stem}: `{}` left {:?} in\n{after}",
                fix.title,
                again.diagnostics
            );
            fixed_codes.push(diagnostic.code);
        }
    }
    for code in [Code::E0202, Code::E0204, Code::E0107] {
        assert!(
            fixed_codes.contains(&code),
            "no fixture exercises the fix for {code}"
        );
    }
}

#[test]
fn every_zero_limit_is_reported_at_its_value() {
    for (written, value) in [
        ("max_steps 0;", "0"),
        ("node a { max_visits 0; }", "0"),
        ("node a { retry 0; }", "0"),
        ("node a { timeout 0s; }", "0s"),
        ("node a { input u8; max_concurrency 0; }", "0"),
    ] {
        let text = format!(
            "graph G {{ {written} node b; START -> b -> END; }}",
            written = written.replace("node a", "node c")
        );
        let checked = check(&text);
        let zero: Vec<&str> = checked
            .diagnostics
            .iter()
            .filter(|d| d.code.as_str() == "E0002")
            .map(|d| &text[d.span.start..d.span.end])
            .collect();
        assert_eq!(zero, [value], "{written}");
    }
}

/// One node `a` declared with `attributes` in a graph that names its state: the check, its
/// text, and each diagnostic's code with the text its span covers.
fn one_node(attributes: &str) -> (trellis_dsl::Checked, String, Vec<(String, String)>) {
    let text = format!("graph G {{ state S; node a {{ {attributes} }} START -> a -> END; }}");
    let checked = check(&text);
    let found = checked
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.code.as_str().to_owned(),
                text[d.span.start..d.span.end].to_owned(),
            )
        })
        .collect();
    (checked, text, found)
}

/// A retry policy reads as written; its mistakes are reported where they are written.
#[test]
fn a_retry_policy_and_its_mistakes() {
    let node = |attributes: &str| {
        let (checked, _, found) = one_node(attributes);
        (checked.module.graphs[0].nodes[0].retry, found)
    };
    let (retry, found) = node("retry 3 backoff 200ms max 5s jitter; retry_on panic, timeout;");
    assert_eq!(found, []);
    let retry = retry.unwrap();
    assert_eq!(
        (
            retry.retries,
            retry.backoff_ms,
            retry.max_backoff_ms,
            retry.jitter
        ),
        (3, Some(200), Some(5000), true)
    );
    assert_eq!(retry.on.names().collect::<Vec<_>>(), ["timeout", "panic"]);
    // `retry_on` before `retry` is the same policy; without it, timeouts and errors.
    let (before, _) = node("retry_on panic, timeout; retry 3 backoff 200ms max 5s jitter;");
    assert_eq!(before, Some(retry));
    let (plain, _) = node("retry 2;");
    assert_eq!(
        plain.unwrap().on.names().collect::<Vec<_>>(),
        ["timeout", "error"]
    );

    let mistake = |attributes: &str| node(attributes).1;
    assert_eq!(
        mistake("retry 2; retry_on timeout, eror;"),
        [("E0107".to_owned(), "eror".to_owned())]
    );
    assert_eq!(
        mistake("retry_on error;"),
        [("E0104".to_owned(), "retry_on error;".to_owned())]
    );
    assert_eq!(
        mistake("retry 2; retry_on error; retry_on panic;"),
        [("E0104".to_owned(), "retry_on panic;".to_owned())]
    );
    assert_eq!(
        mistake("retry 2 backoff 1s max 5;"),
        [("E0002".to_owned(), "5".to_owned())]
    );
    // `max` and `jitter` follow a backoff, as the grammar says.
    assert_eq!(mistake("retry 2 jitter;")[0].0, "E0001");
}

/// A write set reads in order, each field where it is written; a field named twice, or a
/// second `writes`, is E0104 at the repeat.
#[test]
fn a_write_set_and_its_mistakes() {
    let node = |attributes: &str| {
        let (checked, text, found) = one_node(attributes);
        let spans: Vec<String> = checked.module.spans[0].nodes[0]
            .writes
            .iter()
            .map(|span| text[span.start..span.end].to_owned())
            .collect();
        let writes = checked.module.graphs[0].nodes[0].writes.clone();
        (writes, spans, found)
    };
    let (writes, spans, found) = node("writes notes, type, sources;");
    assert_eq!(found, []);
    assert_eq!(writes.unwrap(), ["notes", "type", "sources"]);
    assert_eq!(spans, ["notes", "type", "sources"]);
    let (writes, _, found) = node("writes notes, sources, notes;");
    assert_eq!(writes.unwrap(), ["notes", "sources"]);
    assert_eq!(found, [("E0104".to_owned(), "notes".to_owned())]);
    let (_, _, found) = node("writes notes; writes sources;");
    assert_eq!(found, [("E0104".to_owned(), "writes sources;".to_owned())]);
    // A node without `writes` may write anything: `None`, not an empty set.
    assert_eq!(node("defer;").0, None);
}
