//! `#[derive(GraphState)]`: every reducer, the generated update type, and renamed options.
#![allow(clippy::unwrap_used)]

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

/// What a step changed, folded into the JSON of the state before it, is the JSON of the state
/// after it: for every reducer, under the state's renames.
fn check_changes<S: GraphState + Serialize>(
    before: &S,
    updates: Vec<(&str, S::Update)>,
) -> serde_json::Value {
    let mut json = serde_json::to_value(before).unwrap();
    let mut after = before.clone();
    after.apply(updates.clone()).unwrap();
    let changes = after
        .changes(&updates)
        .unwrap()
        .expect("a derived state says what changed");
    changes.apply_to(&mut json).unwrap();
    assert_eq!(json, serde_json::to_value(&after).unwrap());
    serde_json::to_value(&changes).unwrap()
}

#[test]
fn a_step_s_changes_make_the_state_after_it() {
    let before = Research {
        question: "q".into(),
        notes: vec!["a".into()],
        tokens: 3,
        ..Research::default()
    };
    let changes = check_changes(
        &before,
        vec![
            (
                "a",
                ResearchUpdate::default()
                    .notes("b")
                    .tokens(2)
                    .sources(["s".to_owned()])
                    .best_quote("«ü»".to_owned()),
            ),
            (
                "b",
                ResearchUpdate::default()
                    .notes("c")
                    .answer(Some("x".to_owned())),
            ),
        ],
    );
    // The appended items alone; each other field written, whole; the rest left out.
    assert_eq!(
        changes,
        serde_json::json!({
            "set": { "tokens": 5, "sources": ["s"], "best_quote": "«ü»", "answer": "x" },
            "append": { "notes": ["b", "c"] },
        })
    );
    let nothing = check_changes(&before, vec![("a", ResearchUpdate::default())]);
    assert_eq!(nothing, serde_json::json!({}));
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, GraphState)]
#[serde(rename_all = "camelCase")]
struct Talk {
    #[reducer(with = trellis::messages::add_messages)]
    chat_messages: Vec<trellis::messages::Message>,
    #[reducer(with = keep_sorted)]
    sorted_ids: Vec<u32>,
    #[serde(rename = "Turn")]
    turn: u32,
    #[serde(skip)]
    cache: u32,
}

fn keep_sorted(ids: &mut Vec<u32>, more: Vec<u32>) {
    ids.extend(more);
    ids.sort_unstable();
}

#[test]
fn a_conversation_s_new_messages_are_appended_and_a_replacement_is_caught() {
    use trellis::messages::Message;
    let first = Message::user("hi");
    let second = Message::assistant("hello");
    let before = Talk {
        chat_messages: vec![first.clone()],
        sorted_ids: vec![5],
        cache: 9,
        ..Talk::default()
    };
    let changes = check_changes(
        &before,
        vec![(
            "model",
            TalkUpdate::default()
                .chat_messages(vec![second.clone()])
                .sorted_ids(vec![1])
                .turn(1_u32),
        )],
    );
    // The new message appended; a list folded by a function of the user's, whole.
    assert_eq!(
        changes["append"]["chatMessages"][0]["id"],
        second.id.as_str()
    );
    assert_eq!(
        changes["set"],
        serde_json::json!({ "sortedIds": [1, 5], "Turn": 1 })
    );

    // A message replaced by id: the list did not grow by the message given, which the
    // changes' check refuses, so that the run writes the whole state instead.
    let mut after = before.clone();
    let replace = vec![(
        "model",
        TalkUpdate::default().chat_messages(vec![first.edited("edited")]),
    )];
    after.apply(replace.clone()).unwrap();
    let changes = after.changes(&replace).unwrap().unwrap();
    let mut json = serde_json::to_value(&before).unwrap();
    assert!(changes.apply_to(&mut json).is_err());
}
