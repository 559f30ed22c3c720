//! `#[derive(GraphState)]`: every reducer, the generated update type, and renamed options.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use trellis::{GraphState, error::MergeConflict};

fn longest(current: &mut String, candidate: String) {
    if candidate.len() > current.len() {
        *current = candidate;
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, GraphState)]
struct Research {
    /// Overwritten (the default reducer).
    question: String,
    #[reducer(overwrite)]
    answer: Option<String>,
    #[reducer(append)]
    notes: Vec<String>,
    #[reducer(extend)]
    sources: BTreeSet<String>,
    #[reducer(extend)]
    scores: BTreeMap<String, u32>,
    #[reducer(sum)]
    tokens: u64,
    #[reducer(with = longest)]
    best_quote: String,
}

#[test]
fn every_reducer_folds_in_declaration_order() {
    let mut state = Research::default();
    state
        .apply(vec![
            (
                "web",
                ResearchUpdate::default()
                    .notes("web said a")
                    .sources(["a.com".to_owned(), "b.com".to_owned()])
                    .scores([("a.com".to_owned(), 3)])
                    .tokens(100)
                    .best_quote("short".to_owned()),
            ),
            (
                "papers",
                ResearchUpdate::default()
                    .notes("papers said b")
                    .notes("and c")
                    .sources(["b.com".to_owned(), "c.org".to_owned()])
                    .scores([("a.com".to_owned(), 5), ("c.org".to_owned(), 1)])
                    .tokens(50)
                    .tokens(7)
                    .best_quote("the longest quote".to_owned())
                    .question("what is it?"),
            ),
        ])
        .unwrap();
    assert_eq!(state.notes, ["web said a", "papers said b", "and c"]);
    assert_eq!(
        state.sources.iter().map(String::as_str).collect::<Vec<_>>(),
        ["a.com", "b.com", "c.org"]
    );
    assert_eq!(
        state.scores["a.com"], 5,
        "extend on a map: the later node's entry wins"
    );
    assert_eq!(state.tokens, 157);
    assert_eq!(state.best_quote, "the longest quote");
    assert_eq!(state.question, "what is it?");
    assert_eq!(state.answer, None);
}

#[test]
fn combining_reducers_never_conflict_and_overwrites_do() {
    let mut state = Research::default();
    let combining = |node: &'static str| {
        let update = ResearchUpdate::default()
            .notes(node)
            .tokens(1)
            .sources([node.to_owned()])
            .best_quote(node.to_owned());
        (node, update)
    };
    state
        .apply(vec![combining("a"), combining("b"), combining("c")])
        .unwrap();
    assert_eq!(state.tokens, 3);
    let conflict = state
        .apply(vec![
            (
                "a",
                ResearchUpdate::default().answer(Some("yes".to_owned())),
            ),
            ("b", ResearchUpdate::default().tokens(1)),
            ("c", ResearchUpdate::default().answer(None)),
        ])
        .unwrap_err();
    assert_eq!(
        conflict,
        MergeConflict {
            field: "answer",
            first: "a".to_owned(),
            second: "c".to_owned()
        }
    );
    assert_eq!(state.tokens, 3, "nothing of a conflicting step is applied");
}

#[test]
fn a_single_update_skips_the_conflict_check_and_folds_the_same() {
    let mut by_one = Research::default();
    let mut by_many = Research::default();
    let update = || {
        ResearchUpdate::default()
            .notes("n")
            .tokens(2)
            .answer(Some("a".to_owned()))
    };
    by_one.apply_one("x", update()).unwrap();
    by_many.apply(vec![("x", update())]).unwrap();
    assert_eq!(by_one, by_many);
}

/// A chat whose input is folded like an update: the messages by `add_messages`, the quote by
/// `longest` (from the empty string), the rest as given.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, GraphState)]
struct Chat {
    #[reducer(with = trellis::messages::add_messages)]
    messages: Vec<trellis::messages::Message>,
    #[reducer(with = longest)]
    quote: String,
    #[reducer(append)]
    log: Vec<String>,
    topic: Option<String>,
}

#[test]
fn an_input_is_folded_by_each_field_s_reducer() {
    use trellis::messages::Message;
    let (first, second, third) = (
        Message::user("hi"),
        Message::assistant("hello"),
        Message::user("bye"),
    );
    let input = Chat {
        messages: vec![
            first.clone(),
            second.clone(),
            first.edited("hi there"),
            third.clone(),
            Message::remove(&second.id),
        ],
        quote: "a quote".to_owned(),
        log: vec!["given".to_owned()],
        topic: Some("greeting".to_owned()),
    };
    let folded = input.fold_input();
    let said: Vec<(&str, Option<&str>)> = folded
        .messages
        .iter()
        .map(|m| (m.id.as_str(), m.text()))
        .collect();
    assert_eq!(
        said,
        [
            (first.id.as_str(), Some("hi there")),
            (third.id.as_str(), Some("bye"))
        ]
    );
    assert_eq!(folded.quote, "a quote");
    assert_eq!(folded.log, ["given"]);
    assert_eq!(folded.topic.as_deref(), Some("greeting"));
}

mod renamed {
    use serde::de::DeserializeOwned;
    use serde::{Deserialize, Serialize};

    /// The runtime crate named explicitly, the update type renamed, and a type parameter (whose
    /// bounds the state needs are the user's to declare, as with serde).
    #[derive(Clone, Default, Serialize, Deserialize, trellis::GraphState)]
    #[graph_state(crate = "::trellis", update = Change)]
    #[serde(bound = "T: Serialize + DeserializeOwned")]
    pub(crate) struct Generic<T: Clone + Send + Sync + Serialize + DeserializeOwned + 'static> {
        #[reducer(append)]
        pub(crate) items: Vec<T>,
    }

    #[test]
    fn generic_states_and_renamed_updates_work() {
        use trellis::GraphState;
        let mut state = Generic::<u8>::default();
        state
            .apply(vec![
                ("a", Change::default().items(1u8)),
                ("b", Change::default().items(2u8)),
            ])
            .unwrap();
        assert_eq!(state.items, [1, 2]);
    }
}
