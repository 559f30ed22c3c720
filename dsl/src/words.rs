//! The words of the language, each declared once: node attributes and graph items, with their
//! forms, meaning and help; and the reserved and contextual keywords.
//!
//! The grammar (`grammar.pest`) spells what each one takes. Everything else that lists or
//! describes them reads these tables: the parser's keyword lists, expected tokens and syntax
//! hints (`parse/`), E0107's list and did-you-mean (`lower/`), the editor's completion
//! (`trellis-lsp`), and the attribute table of docs/language.md (a test below compares them).
//! docs/front-end.md says how to add an attribute, file by file.

use std::collections::HashSet;
use std::sync::OnceLock;

use rustc_hash::FxBuildHasher;

use crate::syntax::Rule;

/// A word that starts a statement or an attribute: its keyword and how to write and read it.
#[derive(Debug)]
pub struct Word {
    /// The keyword, as written (`retry`).
    pub name: &'static str,
    /// Its grammar rule, for expected-token lists.
    pub(crate) rule: Rule,
    /// Whether the word is reserved (no node may be called so) or means something only where it
    /// stands (`input`: a node may be called `input`).
    pub reserved: bool,
    /// Its forms as docs/language.md's table writes them (`` `retry N;` / `retry N backoff D;` ``).
    pub forms: &'static str,
    /// What it means, one sentence: the table's second column, and the editor's detail.
    pub meaning: &'static str,
    /// The help of a syntax error in it: how to write it.
    pub hint: &'static str,
}

/// What may stand inside `node name { … }`, in the order the docs and E0107 list them.
pub const ATTRIBUTES: &[Word] = &[
    Word {
        name: "retry",
        rule: Rule::kw_retry,
        reserved: true,
        forms: "`retry N;` / `retry N backoff D;` / `retry N backoff D max M jitter;`",
        meaning: "retry a failed run up to N times (N ≥ 1), waiting D before the first retry and twice as long before each next one, at most M; `jitter` spreads each wait at random by up to ±50 %",
        hint: "write `retry N;` or `retry N backoff 200ms;`",
    },
    Word {
        name: "retry_on",
        rule: Rule::kw_retry_on,
        reserved: false,
        forms: "`retry_on F, …;`",
        meaning: "which failures `retry` retries: `timeout`, `error`, `panic` (without it timeouts and errors; panics only when named)",
        hint: "write `retry_on timeout, error;` (the failures are `timeout`, `error` and `panic`)",
    },
    Word {
        name: "timeout",
        rule: Rule::kw_timeout,
        reserved: true,
        forms: "`timeout D;`",
        meaning: "fail a run that takes longer than D (D > 0)",
        hint: "write `timeout 10s;` (units `ms`, `s`, `m`, `h`)",
    },
    Word {
        name: "max_visits",
        rule: Rule::kw_max_visits,
        reserved: true,
        forms: "`max_visits N;`",
        meaning: "the node may run at most N times in one graph run (N ≥ 1)",
        hint: "write `max_visits N;`",
    },
    Word {
        name: "interrupt",
        rule: Rule::kw_interrupt,
        reserved: true,
        forms: "`interrupt before;` / `interrupt after;`",
        meaning: "pause the run for a person before (or after) the node runs; `interrupt before \"Send this reply?\";` gives the pause its question, `… answer Decision;` the type it is answered with (see [Typed answers](#typed-answers))",
        hint: "write `interrupt before;` or `interrupt after;`",
    },
    Word {
        name: "defer",
        rule: Rule::kw_defer,
        reserved: true,
        forms: "`defer;`",
        meaning: "run only after every other branch of the run has finished",
        hint: "write `defer;`",
    },
    Word {
        name: "on_error",
        rule: Rule::kw_on_error,
        reserved: true,
        forms: "`on_error handler;`",
        meaning: "route this node's errors to the node `handler`, which receives the error",
        hint: "write `on_error handler_node;`",
    },
    Word {
        name: "kind",
        rule: Rule::kw_kind,
        reserved: true,
        forms: "`kind K;`",
        meaning: "what the node does: `dispatch`, `parse`, `stop_check`, `tools`, `compact`, `finalize`, `hitl`, `delegate(GraphName)`, or a string for a kind of your own",
        hint: "write `kind dispatch;`, `kind delegate(GraphName);` or `kind \"my_kind\";`",
    },
    Word {
        name: "meta",
        rule: Rule::kw_meta,
        reserved: true,
        forms: "`meta key = value;`",
        meaning: "free-form metadata: a string, an integer, `true` or `false`",
        hint: "write `meta key = \"text\";`, `meta key = 3;` or `meta key = true;`",
    },
    Word {
        name: "input",
        rule: Rule::kw_input,
        reserved: false,
        forms: "`input Type;`",
        meaning: "for a node sent to (`each`): the Rust type each branch's input is; the generated handler receives it",
        hint: "write `input TypeName;` (the type each sent branch carries)",
    },
    Word {
        name: "max_concurrency",
        rule: Rule::kw_max_concurrency,
        reserved: false,
        forms: "`max_concurrency N;`",
        meaning: "at most N of the node's sent branches run at once (N ≥ 1; all at once without it)",
        hint: "write `max_concurrency N;`",
    },
    Word {
        name: "writes",
        rule: Rule::kw_writes,
        reserved: false,
        forms: "`writes field, …;`",
        meaning: "the state fields the node may write: its generated handler returns an update that sets only these (see [Write sets](#write-sets))",
        hint: "write `writes field_a, field_b;` (fields of the graph's state)",
    },
    Word {
        name: "asks",
        rule: Rule::kw_asks,
        reserved: false,
        forms: "`asks Question -> Answer;`",
        meaning: "the node pauses from inside with a `Question`, and is answered with an `Answer`: its generated code asks and is answered with these types only (see [Typed answers](#typed-answers))",
        hint: "write `asks QuestionType -> AnswerType;`",
    },
    Word {
        name: "graph",
        rule: Rule::kw_graph,
        reserved: true,
        forms: "`graph Name;` / `graph path::Name;`",
        meaning: "the node runs another graph, a subgraph (see [Subgraphs](#subgraphs))",
        hint: "write `graph Name;` (a graph of this file) or `graph module::Name;`",
    },
];

/// What starts a graph's settings and declarations (a node name or START starts an edge).
pub const GRAPH_ITEMS: &[Word] = &[
    Word {
        name: "state",
        rule: Rule::kw_state,
        reserved: true,
        forms: "`state Type;`",
        meaning: "the Rust type the graph's state is",
        hint: "`state` takes a Rust type path: `state my_crate::Ticket;`",
    },
    Word {
        name: "max_steps",
        rule: Rule::kw_max_steps,
        reserved: true,
        forms: "`max_steps N;`",
        meaning: "the most super-steps one run may take",
        hint: "write `max_steps N;`",
    },
    Word {
        name: "node",
        rule: Rule::kw_node,
        reserved: true,
        forms: "`node name;` / `node name { attribute; … }`",
        meaning: "declares a node",
        hint: "a node is declared `node name;` or `node name { attribute; … }`",
    },
];

/// The other keywords: reserved (LANGUAGE.md §2) unless said otherwise, with the rule of each.
const OTHER_KEYWORDS: &[(Rule, &str, bool)] = &[
    (Rule::kw_graph, "graph", true),
    (Rule::kw_start, "START", true),
    (Rule::kw_end, "END", true),
    (Rule::kw_backoff, "backoff", true),
    (Rule::kw_before, "before", true),
    (Rule::kw_after, "after", true),
    (Rule::kw_use, "use", true),
    (Rule::kw_true, "true", true),
    (Rule::kw_false, "false", true),
    // Words with a meaning only where they stand (a send's `each`, a retry's `max` and
    // `jitter`, an interrupt's `answer`): a node may be called so.
    (Rule::kw_each, "each", false),
    (Rule::kw_max, "max", false),
    (Rule::kw_jitter, "jitter", false),
    (Rule::kw_answer, "answer", false),
];

/// Every keyword with its rule and whether it is reserved.
fn keywords() -> impl Iterator<Item = (Rule, &'static str, bool)> {
    ATTRIBUTES
        .iter()
        .chain(GRAPH_ITEMS)
        .map(|word| (word.rule, word.name, word.reserved))
        .chain(OTHER_KEYWORDS.iter().copied())
}

/// Whether no node may be called `word`. Asked for every node: the reserved words are gathered
/// once into a set (a scan of the tables cost a compile of 10,000 nodes 1 %).
pub(crate) fn is_reserved(word: &str) -> bool {
    static RESERVED: OnceLock<HashSet<&'static str, FxBuildHasher>> = OnceLock::new();
    RESERVED
        .get_or_init(|| {
            keywords()
                .filter(|(_, _, reserved)| *reserved)
                .map(|(_, name, _)| name)
                .collect()
        })
        .contains(word)
}

/// Whether `word` is one of the language's keywords, reserved or not (what an editor colours
/// as one where the word is not a node's name).
pub fn is_keyword(word: &str) -> bool {
    keywords().any(|(_, name, _)| name == word)
}

/// The keyword a grammar rule matches, if it is one.
pub(crate) fn keyword_of(rule: Rule) -> Option<&'static str> {
    keywords()
        .find(|(keyword_rule, _, _)| *keyword_rule == rule)
        .map(|(_, name, _)| name)
}

/// The attributes' names, in order.
pub(crate) fn attribute_names() -> impl Iterator<Item = &'static str> + Clone {
    ATTRIBUTES.iter().map(|word| word.name)
}

/// `` `a`, `b`, … and `z` ``, or with `or` as the last joint.
pub(crate) fn quoted(names: impl Iterator<Item = &'static str>, last_joint: &str) -> String {
    let names: Vec<String> = names.map(|name| format!("`{name}`")).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} {last_joint} {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/language.md's attribute table is this table, row for row.
    #[test]
    fn the_docs_list_every_attribute_as_declared() {
        let docs = include_str!("../../docs/language.md");
        let table: Vec<&str> = docs
            .lines()
            .skip_while(|line| *line != "| attribute | meaning |")
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .collect();
        let rows: Vec<String> = ATTRIBUTES
            .iter()
            .map(|word| format!("| {} | {} |", word.forms, word.meaning))
            .collect();
        assert_eq!(table, rows);
    }

    /// The editors' grammars highlight every word of the tables: the VS Code grammar's keyword
    /// pattern and tree-sitter's keyword list (their grammars proper are tested beside them).
    #[test]
    fn the_editors_highlight_every_word() {
        let vscode = include_str!("../../editors/vscode/syntaxes/graph.tmLanguage.json");
        let pattern = vscode
            .lines()
            .find(|line| line.contains("\\b(state|"))
            .expect("the keyword pattern");
        let tree_sitter = include_str!("../../editors/tree-sitter-graph/queries/highlights.scm");
        for word in ATTRIBUTES.iter().chain(GRAPH_ITEMS) {
            // `graph` and `node` have patterns of their own there (a header, a declaration).
            if word.name != "graph" && word.name != "node" {
                let alternatives = pattern.split(['(', '|', ')']);
                assert!(
                    alternatives
                        .into_iter()
                        .any(|a| a.trim_end_matches("\\b") == word.name),
                    "VS Code does not highlight `{}`",
                    word.name
                );
            }
            assert!(
                tree_sitter.contains(&format!("\"{}\"", word.name)),
                "tree-sitter does not highlight `{}`",
                word.name
            );
        }
    }

    /// Every row's form starts with its keyword, and its help shows it.
    #[test]
    fn each_row_speaks_of_its_own_word() {
        for word in ATTRIBUTES.iter().chain(GRAPH_ITEMS) {
            assert!(
                word.forms.starts_with(&format!("`{} ", word.name))
                    || word.forms.starts_with(&format!("`{};", word.name)),
                "{word:?}"
            );
            assert!(word.hint.contains(&format!("`{}", word.name)), "{word:?}");
            assert_eq!(keyword_of(word.rule), Some(word.name), "{word:?}");
        }
    }
}
