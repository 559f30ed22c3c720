//! Any input gets diagnostics or success: never a panic, a hang or a stack overflow; every span
//! lies inside the input; formatting is idempotent and never changes what a file means.

use proptest::prelude::*;
use trellis_dsl::{Checked, Diagnostic, check, decode, format};

/// Tokens, fragments and trivia of the language, some broken on purpose.
const VOCABULARY: &[&str] = &[
    "graph",
    "Support",
    "G",
    "{",
    "}",
    "node",
    "a",
    "b",
    "draft",
    "review",
    "state",
    "Ticket",
    "::",
    "<",
    ">",
    ",",
    "max_steps",
    "25",
    "0",
    "99999999999",
    "200ms",
    "10us",
    "5",
    "START",
    "END",
    "->",
    "|",
    "&",
    ";",
    "retry",
    "backoff",
    "max",
    "jitter",
    "retry_on",
    "error",
    "panic",
    "5s",
    "timeout",
    "max_visits",
    "interrupt",
    "before",
    "after",
    "defer",
    "on_error",
    "kind",
    "dispatch",
    "delegate",
    "(",
    ")",
    "meta",
    "=",
    "\"text\"",
    "\"open",
    "\"bad \\q\"",
    "true",
    "false",
    "/* c */",
    "/*",
    "*/",
    "// line\n",
    "/// doc\n",
    "//! inner\n",
    " ",
    "\n",
    "\t",
    "é",
    "@",
    "#",
    "_",
    "use",
    "\u{FEFF}",
    "\r\n",
    "-",
    ">>",
    "Self",
    "r#x",
    "//// c\n",
    "STARTED",
    "node_a",
    "0a",
];

const VALID: &[&str] = &[
    include_str!("../../examples/graphs/support.graph"),
    include_str!("../../examples/graphs/research.graph"),
    include_str!("../../examples/graphs/agent_turn.graph"),
    "graph Policy {\n    node call { retry 3 backoff 200ms max 5s jitter; retry_on timeout, error; }\n    START -> call -> END;\n}\n",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec((prop::sample::select(VOCABULARY), prop::bool::ANY), 0..120).prop_map(
        |tokens| {
            let mut text = String::new();
            for (token, glued) in tokens {
                if !glued {
                    text.push(' ');
                }
                text.push_str(token);
            }
            text
        },
    )
}

/// A valid file with one random edit: a deletion, an insertion or a duplicated range.
fn mutation() -> impl Strategy<Value = String> {
    (
        prop::sample::select(VALID),
        0..3u8,
        0.0..1.0f64,
        0.0..1.0f64,
        prop::sample::select(VOCABULARY),
    )
        .prop_map(|(text, kind, a, b, token)| {
            let boundary = |fraction: f64| {
                let mut at = (fraction * text.len() as f64) as usize;
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                at
            };
            let (start, end) = {
                let (x, y) = (boundary(a), boundary(b));
                (x.min(y), x.max(y))
            };
            match kind {
                0 => format!("{}{}", &text[..start], &text[end..]),
                1 => format!("{}{token}{}", &text[..start], &text[start..]),
                _ => format!("{}{}", &text[..end], &text[start..]),
            }
        })
}

fn assert_spans_inside(text: &str, diagnostics: &[Diagnostic]) {
    for diagnostic in diagnostics {
        let spans =
            std::iter::once(diagnostic.span).chain(diagnostic.labels.iter().map(|l| l.span));
        for span in spans {
            assert!(
                span.start <= span.end && span.end <= text.len(),
                "{span:?} outside {text:?}"
            );
            assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
        }
        assert!(!diagnostic.message.is_empty());
    }
}

/// What a file means: its graphs as exported, and the codes of its diagnostics.
fn meaning(checked: &Checked) -> (Vec<String>, Vec<&'static str>) {
    let graphs = checked
        .module
        .graphs
        .iter()
        .map(|graph| trellis_graph::export::to_json(graph).expect("blueprints serialize"))
        .collect();
    let mut codes: Vec<&str> = checked
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    codes.sort_unstable();
    (graphs, codes)
}

/// The text with comments (line, doc and nested block comments) and strings blanked out.
fn without_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < chars.len() {
        let next = chars.get(at + 1).copied();
        if chars[at] == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if chars[at] == '/' && next == Some('*') {
            let mut depth = 0;
            while at < chars.len() {
                if chars[at] == '/' && chars.get(at + 1) == Some(&'*') {
                    depth += 1;
                    at += 2;
                } else if chars[at] == '*' && chars.get(at + 1) == Some(&'/') {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    at += 1;
                }
            }
        } else if chars[at] == '"' {
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
        } else {
            out.push(chars[at]);
            at += 1;
            continue;
        }
        out.push(' ');
    }
    out
}

/// After a syntax error, no name the source declares (writes after `node`) is called undeclared.
fn assert_no_follow_on_name_errors(text: &str, checked: &Checked) {
    if !checked
        .diagnostics
        .iter()
        .any(|d| d.code == trellis_dsl::Code::E0001)
    {
        return;
    }
    // `node` and the next word of the same statement declare it, stray marks between them or
    // not (`node <draft {` still means `draft`).
    let code = without_comments_and_strings(text);
    let declarations: Vec<(&str, &str)> = code
        .split([';', '{', '}'])
        .flat_map(|statement| {
            let words: Vec<&str> = statement
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|word| !word.is_empty())
                .collect();
            words
                .windows(2)
                .map(|pair| (pair[0], pair[1]))
                .collect::<Vec<_>>()
        })
        .collect();
    for diagnostic in &checked.diagnostics {
        if diagnostic.code != trellis_dsl::Code::E0202 {
            continue;
        }
        let name = &text[diagnostic.span.start..diagnostic.span.end];
        let declared = declarations.contains(&("node", name));
        assert!(
            !declared,
            "`{name}` is declared, yet reported undeclared after a syntax error in {text:?}"
        );
    }
}

fn check_everything(text: &str) {
    let checked = check(text);
    assert_spans_inside(text, &checked.diagnostics);
    assert_no_follow_on_name_errors(text, &checked);
    match format(text) {
        Ok(formatted) => {
            let again = format(&formatted).expect("formatted output formats again");
            assert_eq!(again, formatted, "fmt is not idempotent for {text:?}");
            assert_eq!(
                meaning(&check(&formatted)),
                meaning(&checked),
                "fmt changed the meaning of {text:?}"
            );
        }
        Err(trellis_dsl::FormatError::Syntax(errors)) => {
            assert!(!errors.is_empty());
            assert!(
                checked.has_errors(),
                "fmt refused a file check accepts: {text:?}"
            );
            assert_spans_inside(text, &errors);
        }
        Err(error) => panic!("{error} for {text:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn token_soups(text in soup()) {
        check_everything(&text);
    }

    #[test]
    fn mutations_of_valid_files(text in mutation()) {
        check_everything(&text);
    }

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        match decode(&bytes) {
            Ok(text) => check_everything(text),
            Err(error) => {
                let lossy = String::from_utf8_lossy(&bytes);
                assert_spans_inside(&lossy, std::slice::from_ref(&error));
            }
        }
    }
}

/// Many items to a pest call (the fast path's rules) or one at a time (`graph_item`, which
/// judges): the same AST and the same diagnostics.
fn batches_agree(text: &str) {
    use trellis_dsl::test_util::{batched, one_at_a_time};
    assert_eq!(
        batched(text),
        one_at_a_time(text),
        "batched and item-by-item parsing disagree on {text:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn batches_parse_soups_as_items_do(text in prop_oneof![soup(), mutation()]) {
        batches_agree(&text);
    }

    /// Statements in any order, well formed more often than a soup, with those that only the
    /// fast path's wider rules accept (a hop that branches, `node` as an endpoint).
    #[test]
    fn batches_parse_statements_as_items_do(statements in prop::collection::vec(
        prop::sample::select(&[
            "node a;", "node b { retry 2 backoff 10ms; timeout 5s; }", "START -> a;",
            "a -> b | END;", "b -> a & b;", "state x::Y<Z>;", "max_steps 9;", "/// d\n",
            "node c { kind tools; meta owner = \"me\"; }", "a -> b -> c;", "c -> END;",
            "a & b -> c;", "b & c -> a -> END;", "a -> each b | c;",
            "node b { input x::Y; max_concurrency 2; }",
            "node d { defer; on_error c; interrupt before; max_visits 2; }", "// c\n",
            "a -> b | c -> d;", "a -> b & c -> END;", "a -> each b -> c;", "node -> a;",
            "a -> node;", "a & node -> b;", "a -> each;", "each -> a;", "START -> END;",
            "a -> each -> b;", "node e { }", "node f { bogus 3; }", "nodes -> a;",
        ][..]),
        0..12,
    )) {
        let text = format!("graph G {{ {} }}", statements.join(" "));
        batches_agree(&text);
    }
}

#[test]
fn the_examples_are_clean_and_formatted() {
    for text in VALID {
        let checked = check(text);
        assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
        assert_eq!(
            format(text).expect("formats"),
            *text,
            "examples are in canonical layout"
        );
    }
}

#[test]
fn an_empty_file_has_no_graphs_and_no_problems() {
    for text in ["", " \n\t", "// only a comment\n", "//! only file docs\n"] {
        let checked = check(text);
        assert!(checked.diagnostics.is_empty(), "{text:?}");
        assert!(checked.module.graphs.is_empty());
    }
}

#[test]
fn invalid_utf8_is_reported_at_the_first_bad_byte() {
    let error = decode(b"graph G {\n node \xc3\x28;\n}").expect_err("not UTF-8");
    assert_eq!(error.code, trellis_dsl::Code::E0001);
    assert_eq!(error.span.start, 16);
}

#[test]
fn ten_thousand_nested_comments() {
    let open = "/* ".repeat(10_000);
    let close = "*/ ".repeat(10_000);
    let closed = format!("graph G {{ {open}{close} node a; START -> a -> END; }}");
    assert!(check(&closed).diagnostics.is_empty());
    check_everything(&closed);
    let unclosed = format!("graph G {{ node a; {open} }}");
    let checked = check(&unclosed);
    assert_eq!(checked.diagnostics[0].message, "unterminated block comment");
    check_everything(&unclosed);
}

#[test]
fn ten_thousand_nested_generic_arguments() {
    let text = format!(
        "graph G {{ state A{}B{}; node a; START -> a -> END; }}",
        "<A".repeat(10_000),
        ">".repeat(10_000)
    );
    assert!(check(&text).diagnostics.is_empty());
    let unbalanced = format!("graph G {{ state A{}B; node a; }}", "<A".repeat(10_000));
    assert!(check(&unbalanced).has_errors());
}

#[test]
fn ten_thousand_open_braces() {
    let text = "{".repeat(10_000);
    let checked = check(&text);
    assert!(checked.has_errors());
    assert_spans_inside(&text, &checked.diagnostics);
}

#[test]
fn a_node_name_of_100_kb() {
    let name = "n".repeat(100_000);
    let text = format!("graph G {{ node {name}; START -> {name} -> END; }}");
    let checked = check(&text);
    assert!(checked.diagnostics.is_empty());
    assert_eq!(checked.module.graphs[0].nodes[0].id.len(), 100_000);
    let typo = format!("graph G {{ node {name}; START -> {name}x -> END; }}");
    let checked = check(&typo);
    let codes: Vec<_> = checked.diagnostics.iter().map(|d| d.code).collect();
    // The long node has no outgoing edge; the misspelled one is used twice (target, then source).
    use trellis_dsl::Code::{E0202, E0204};
    assert_eq!(codes, [E0204, E0202, E0202]);
}

#[test]
fn a_50_mb_file() {
    // A valid graph whose body is 50 MB of nodes and comments.
    let mut text = String::from("graph Big {\n    node n0;\n    START -> n0 -> END;\n");
    let line = "    // filler comment that is exactly this long, padded out with words  \n";
    while text.len() < 50_000_000 {
        text.push_str(line);
    }
    text.push_str("}\n");
    let checked = check(&text);
    assert!(checked.diagnostics.is_empty());
    assert_eq!(checked.module.graphs[0].nodes.len(), 1);
}

#[test]
fn a_50_mb_file_of_garbage() {
    let text = "@ -> ; } { \" ".repeat(4_000_000);
    let checked = check(&text);
    assert!(checked.has_errors());
    assert_spans_inside(&text, &checked.diagnostics);
    assert!(checked.diagnostics.len() <= 101, "syntax errors are capped");
}

/// Found by `mutations_of_valid_files`: `node-> tool_failed;` (a `node` statement gone wrong)
/// was read as an edge from a node named `node`, so the names it declared were reported
/// undeclared with no syntax error to blame. `node` is no node name.
#[test]
fn a_node_statement_gone_wrong_is_a_syntax_error_not_an_edge_from_node() {
    let text = "graph G {\n    node tools { on_error tool_failed; }\n    node-> tool_failed;\n    START -> tools;\n    tools -> tool_failed;\n    tool_failed -> END;\n}\n";
    let checked = check(text);
    let codes: Vec<&str> = checked
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    assert_eq!(codes, ["E0001"], "{:#?}", checked.diagnostics);
    check_everything(text);
    batches_agree(text);
    let edge = "graph G { node a; START -> a; a -> node; }";
    let codes: Vec<&str> = check(edge)
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    assert_eq!(codes, ["E0001"], "{edge}");
    batches_agree(edge);
}
