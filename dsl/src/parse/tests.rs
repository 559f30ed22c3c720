//! The parser's own tests: recovery, messages, windows.

use super::*;
use crate::ast::{AttrKind, Endpoint, ItemKind, Target};
use crate::diagnostic::Span;
use crate::diagnostic::{Code, Diagnostic};

fn errors(text: &str) -> Vec<Diagnostic> {
    let mut diagnostics = Diagnostics::default();
    parse(text, &mut diagnostics);
    diagnostics.into_sorted()
}

#[test]
fn a_valid_file_parses_into_graphs_items_and_attributes() {
    let text = "//! file\n/// doc\ngraph G {\n  state a::B<C, D<E>>;\n  node x { retry 3 backoff 200ms; meta owner = \"me\"; }\n  START -> x -> y | END;\n}\n";
    let mut diagnostics = Diagnostics::default();
    let file = parse(text, &mut diagnostics);
    assert!(diagnostics.into_sorted().is_empty());
    assert_eq!(file.docs.len(), 1);
    let graph = &file.graphs[0];
    assert_eq!(graph.name.map(|n| n.text), Some("G"));
    assert_eq!(graph.items.len(), 3);
    match &graph.items[0].kind {
        ItemKind::State(path) => {
            let texts: Vec<&str> = path.tokens.iter().map(|t| t.text).collect();
            assert_eq!(
                texts,
                ["a", "::", "B", "<", "C", ",", "D", "<", "E", ">", ">"]
            );
        }
        other => panic!("expected state, got {other:?}"),
    }
    match &graph.items[1].kind {
        ItemKind::Node(node) => {
            assert_eq!(node.name.text, "x");
            assert_eq!(node.attrs.len(), 2);
            assert!(matches!(
                node.attrs[0].kind,
                AttrKind::Retry {
                    backoff: Some(_),
                    ..
                }
            ));
        }
        other => panic!("expected node, got {other:?}"),
    }
    match &graph.items[2].kind {
        ItemKind::Edge(edge) => {
            assert!(matches!(edge.source, Endpoint::Start(_)));
            assert_eq!(edge.hops.len(), 1);
            assert!(matches!(&edge.target, Target::Conditional(t) if t.len() == 2));
        }
        other => panic!("expected edge, got {other:?}"),
    }
}

#[test]
fn recovers_at_the_next_semicolon_and_reports_each_error() {
    let found = errors("graph G {\n node a b;\n node c;\n c -> -> d;\n}\n");
    let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "expected one of `;` or `{`, found `b`",
            "expected one of `END`, `START`, or a name, found `->`"
        ]
    );
}

#[test]
fn recovers_inside_a_node_block_attribute_by_attribute() {
    let found = errors("graph G {\n node a { retry; timeout 1s; max_visits ; }\n}\n");
    assert_eq!(found.len(), 2);
    assert!(
        found
            .iter()
            .all(|d| d.message == "expected a number, found `;`")
    );
}

#[test]
fn a_node_block_without_its_brace_is_closed_at_the_next_graph_item() {
    let found = errors("graph G {\n node a { retry 2;\n a -> END;\n}\n");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].message, "expected `}`, found `a`");
    assert_eq!(
        found[0].labels[0].message,
        "this node block is never closed"
    );
}

#[test]
fn a_misspelled_keyword_gets_a_suggestion() {
    let found = errors("grahp G {}\n");
    assert_eq!(found[0].message, "expected `graph`, found `grahp`");
    assert_eq!(found[0].help.as_deref(), Some("did you mean `graph`?"));
    // A misspelled item keyword is no syntax error: lowering reports it as unknown (E0107).
    let checked = crate::check("graph G { nodee a; }");
    assert_eq!(checked.diagnostics[0].code, Code::E0107);
    assert_eq!(
        checked.diagnostics[0].help.as_deref(),
        Some("did you mean `node`?")
    );
    let found = errors("graph G { node a { retry 3 backof 1s; } }");
    assert_eq!(found[0].help.as_deref(), Some("did you mean `backoff`?"));
}

#[test]
fn unterminated_comments_and_strings_say_so() {
    let found = errors("graph G { node a; /* open\n");
    assert_eq!(found[0].message, "unterminated block comment");
    let found = errors("graph G { node a { kind \"open; } }");
    assert_eq!(found[0].message, "unterminated string");
}

#[test]
fn an_unclosed_graph_points_at_its_brace() {
    let text = "graph G {\n node a;\n";
    let found = errors(text);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].message, "expected `}`, found end of file");
    assert_eq!(found[0].span, Span::new(text.len(), text.len()));
    assert_eq!(found[0].labels[0].span, Span::new(8, 9));
}

#[test]
fn every_whitespace_character_separates_pieces_during_recovery() {
    // A vertical tab, a form feed and a BOM before attributes of a broken node block, and one
    // real error: only the error is reported (recovery skips trivia itself between pieces).
    let found =
        errors("graph G {\n node a {\u{b}retry 2;\u{c}timeout 1s;\u{FEFF}max_visits; }\n}\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].message, "expected a number, found `;`");
}

#[test]
fn cut_points_skip_strings_and_comments() {
    let text = "a; \"x;}\" // c;\n /* ; /* } */ ; */ b } \"open;";
    let cuts = cut_points(text);
    let cut_chars: Vec<char> = cuts
        .iter()
        .map(|&at| text.as_bytes()[at - 1] as char)
        .collect();
    assert_eq!(cut_chars, [';', '}']);
    assert_eq!(
        cuts,
        [2, text.find(" b }").map(|at| at + 4).unwrap_or_default()]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
    /// Windows, and batches of items, change what parsing costs, never what it finds.
    #[test]
    fn windows_do_not_change_results(text in window_soup(), batch in 1..40usize) {
        let mut tiny = Diagnostics::default();
        let with_tiny = format!("{:?}", parse_with(&text, &mut tiny, None, 1));
        let mut whole = Diagnostics::default();
        let with_whole = format!("{:?}", parse_with(&text, &mut whole, None, usize::MAX));
        proptest::prop_assert_eq!(&with_tiny, &with_whole);
        let mut batched = Diagnostics::default();
        let with_batches = format!("{:?}", parse_with(&text, &mut batched, Some(batch), FIRST_WINDOW));
        proptest::prop_assert_eq!(&with_tiny, &with_batches);
        let mut one_batch = Diagnostics::default();
        let with_one_batch =
            format!("{:?}", parse_with(&text, &mut one_batch, Some(usize::MAX), FIRST_WINDOW));
        proptest::prop_assert_eq!(&with_tiny, &with_one_batch);
        let tiny = tiny.into_sorted();
        proptest::prop_assert_eq!(&tiny, &whole.into_sorted());
        proptest::prop_assert_eq!(&tiny, &batched.into_sorted());
        proptest::prop_assert_eq!(&tiny, &one_batch.into_sorted());
    }

    /// The piecewise parser accepts exactly what the grammar's `file` rule accepts (the
    /// grammar lets a comment left open run to the end; the front end reports it).
    #[test]
    fn pieces_accept_what_the_file_rule_accepts(text in window_soup()) {
        let whole = GraphParser::parse(Rule::file, &text).is_ok()
            && unterminated_comment(&text).is_none();
        proptest::prop_assert_eq!(is_syntactically_valid(&text), whole, "{:?}", text);
    }
}

fn window_soup() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    const WORDS: &[&str] = &[
        "graph",
        "G",
        "{",
        "}",
        "node",
        "a",
        "b",
        ";",
        "->",
        "|",
        "&",
        "START",
        "END",
        "retry",
        "3",
        "backoff",
        "1s",
        "state",
        "T",
        "<",
        ">",
        ",",
        "kind",
        "\"s;}\"",
        "\"open",
        "meta",
        "=",
        "/* ; } */",
        "/*",
        "*/",
        "// ; }\n",
        "/// d\n",
        "//! f\n",
        "\n",
        "x",
        "defer",
        "max_visits",
        "@",
        "\u{b}",
        "\u{c}",
        "\u{FEFF}",
        "\r\n",
    ];
    prop::collection::vec(prop::sample::select(WORDS), 0..60).prop_map(|w| w.join(" "))
}

#[test]
fn syntax_errors_stop_after_the_limit() {
    let text = format!("graph G {{ {} }}", "@;".repeat(500));
    let found = errors(&text);
    assert_eq!(found.len(), MAX_SYNTAX_ERRORS);
    assert!(
        found[MAX_SYNTAX_ERRORS - 1]
            .message
            .starts_with("too many syntax errors")
    );
}

/// What only the fast path's wider rules accept is still judged by `graph_item`: the same
/// error, batched or not, and the items around it kept.
#[test]
fn a_branching_hop_is_an_error_batched_or_not() {
    for (statement, message) in [
        ("a -> b | c -> d;", "expected one of `;` or `|`, found `->`"),
        ("a -> b & c -> d;", "expected one of `&` or `;`, found `->`"),
        (
            "a -> each b -> d;",
            "expected one of `;` or `|`, found `->`",
        ),
    ] {
        let text = format!("graph G {{ node a; {statement} a -> END; }}");
        for batch in [None, Some(BATCH_WINDOW)] {
            let mut diagnostics = Diagnostics::default();
            let file = parse_with(&text, &mut diagnostics, batch, FIRST_WINDOW);
            let found = diagnostics.into_sorted();
            assert_eq!(found.len(), 1, "{text}: {found:?}");
            assert_eq!(found[0].message, message, "{text}");
            assert_eq!(&text[found[0].span.start..found[0].span.end], "->");
            assert_eq!(file.graphs[0].items.len(), 2, "{text}");
        }
    }
}

#[test]
fn batches_read_start_end_and_refuse_node_as_an_endpoint() {
    let text = "graph G { START -> a -> END; node -> a; }";
    for batch in [None, Some(BATCH_WINDOW)] {
        let mut diagnostics = Diagnostics::default();
        let file = parse_with(text, &mut diagnostics, batch, FIRST_WINDOW);
        match &file.graphs[0].items[0].kind {
            ItemKind::Edge(edge) => {
                assert!(matches!(edge.source, Endpoint::Start(_)));
                assert!(matches!(edge.target, Target::Single(Endpoint::End(_))));
            }
            other => panic!("expected an edge, got {other:?}"),
        }
        let found = diagnostics.into_sorted();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, Code::E0001);
    }
}

/// A file many windows long, every item cut by some window: the same as item by item.
#[test]
fn batch_windows_cut_anywhere() {
    let mut text = String::from("graph G {\n");
    for i in 0..400 {
        text.push_str(&format!(
            "    /// n{i}\n    node n{i} {{ retry 2 backoff 1s; kind \"k;}}\"; }}\n    n{i} -> n{} | END;\n",
            i + 1
        ));
    }
    text.push_str("}\n");
    let mut one = Diagnostics::default();
    let expected = format!("{:?}", parse_with(&text, &mut one, None, FIRST_WINDOW));
    for window in [1, 7, 50, 333, BATCH_WINDOW] {
        let mut batched = Diagnostics::default();
        let found = format!(
            "{:?}",
            parse_with(&text, &mut batched, Some(window), FIRST_WINDOW)
        );
        assert_eq!(found, expected, "window {window}");
        assert!(batched.into_sorted().is_empty());
    }
}
