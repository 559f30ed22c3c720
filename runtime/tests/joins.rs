//! Waiting joins (`a & b -> c;`, `GraphBuilder::add_join`): the joined node runs once, after all
//! its sources are done, whatever the lengths of their branches; again in each round of a loop;
//! its state is checkpointed; its shape is checked by the same rules as the language's.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Ticket, TicketUpdate, drain, log, shape};
use trellis::checkpoint::{Checkpointer, InMemoryCheckpointer};
use trellis::{Command, END, GraphBuilder, NodeResult, START};

fn notes(names: &[&'static str]) -> GraphBuilder<Ticket> {
    let mut builder = GraphBuilder::<Ticket>::new("Joins");
    for &name in names {
        builder.add_node_fn(name, move |_, _| async move { Ok(log(name)) });
    }
    builder
}

#[tokio::test]
async fn a_join_runs_once_after_branches_of_different_lengths() {
    let mut builder = notes(&["plan", "web", "papers", "deep", "deeper", "summarize"]);
    builder
        .add_edge(START, "plan")
        .add_fork("plan", ["web", "papers"])
        .add_edge("papers", "deep")
        .add_edge("deep", "deeper")
        .add_join(["web", "deeper"], "summarize")
        .add_edge("summarize", END);
    let graph = builder.compile().unwrap();
    assert!(graph.warnings().is_empty(), "{:?}", graph.warnings());
    let mut events = graph.subscribe();
    let done = graph.invoke(Ticket::default()).await.unwrap();
    assert_eq!(
        done.state().log,
        ["plan", "web", "papers", "deep", "deeper", "summarize"]
    );
    let entered: Vec<String> = shape(&drain(&mut events))
        .into_iter()
        .filter(|e| e.contains("entered"))
        .collect();
    assert_eq!(
        entered,
        [
            "1 entered plan",
            "2 entered web",
            "2 entered papers",
            "3 entered deep",
            "4 entered deeper",
            "5 entered summarize",
        ]
    );
}

#[tokio::test]
async fn the_history_shows_a_join_waiting_on_its_other_sources() {
    let mut builder = notes(&["plan", "web", "papers", "deep", "summarize"]);
    builder
        .add_edge(START, "plan")
        .add_fork("plan", ["web", "papers"])
        .add_edge("papers", "deep")
        .add_join(["web", "deep"], "summarize")
        .add_edge("summarize", END);
    let graph = builder
        .compile()
        .unwrap()
        .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let done = graph.invoke(Ticket::default()).await.unwrap();
    let history = graph.history(done.run_id()).await.unwrap();
    // After step 2 `web` is done and `deep` is next: the join waits on it alone.
    let after_web = history.iter().find(|s| s.step == 2).expect("step 2");
    assert_eq!(
        after_web.joins.get("summarize").map(Vec::as_slice),
        Some(&["web".into()][..])
    );
    let waiting = history.iter().filter(|s| !s.joins.is_empty()).count();
    assert_eq!(waiting, 1, "only that checkpoint has a join waiting");
}

#[tokio::test]
async fn a_join_starts_over_in_each_round_of_a_loop() {
    let rounds = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&rounds);
    let mut builder = notes(&["plan", "fast", "slow", "slower"]);
    builder
        .add_node_fn("merge", move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            async {
                Ok(NodeResult::Update(
                    TicketUpdate::default().reviews(1).log("merge"),
                ))
            }
        })
        .add_edge(START, "plan")
        .add_fork("plan", ["fast", "slow"])
        .add_edge("slow", "slower")
        .add_join(["fast", "slower"], "merge")
        .add_conditional_edges(
            "merge",
            |t: &Ticket| if t.reviews < 3 { "plan" } else { END },
            ["plan", END],
        );
    let done = builder
        .compile()
        .unwrap()
        .invoke(Ticket::default())
        .await
        .unwrap();
    assert_eq!(rounds.load(Ordering::SeqCst), 3, "once per round");
    let round = ["plan", "fast", "slow", "slower", "merge"];
    assert_eq!(done.state().log, round.repeat(3));
}

/// a forks to `forked`; `b` steers to `j` with a command; `b & c -> j`.
fn steered(forked: &[&'static str]) -> trellis::CompiledGraph<Ticket> {
    let mut builder = notes(&["a", "j", "c"]);
    builder
        .add_node_fn("b", |_, _| async {
            Ok(NodeResult::UpdateThen(
                TicketUpdate::default().log("b"),
                Command::Goto("j".into()),
            ))
        })
        .add_edge(START, "a")
        .add_fork("a", forked.iter().copied())
        .add_join(["b", "c"], "j")
        .add_edge("j", END);
    builder.compile().expect("valid graph")
}

#[tokio::test]
async fn a_command_to_the_join_is_an_arrival_and_a_missing_source_holds_it() {
    // `c` never runs: `j` must not run, and the run ends.
    let done = steered(&["b"]).invoke(Ticket::default()).await.unwrap();
    assert_eq!(
        done.state().log,
        ["a", "b"],
        "`c` never ran: `j` waits in vain"
    );
    // With `c` running too, the command's arrival and `c`'s complete the join: `j` runs once.
    let done = steered(&["b", "c"])
        .invoke(Ticket::default())
        .await
        .unwrap();
    assert_eq!(
        done.state().log,
        ["a", "c", "b", "j"],
        "declaration order: `b` last"
    );
}

#[tokio::test]
async fn every_join_into_a_node_is_one_join() {
    // `a & b -> j;` and `c & d -> j;` wait for all four, as docs/language.md says.
    let mut builder = notes(&["plan", "a", "b", "c", "d", "slow", "j"]);
    builder
        .add_edge(START, "plan")
        .add_fork("plan", ["a", "b", "c", "slow"])
        .add_edge("slow", "d")
        .add_join(["a", "b"], "j")
        .add_join(["c", "d"], "j")
        .add_edge("j", END);
    let done = builder
        .compile()
        .unwrap()
        .invoke(Ticket::default())
        .await
        .unwrap();
    assert_eq!(
        done.state().log,
        ["plan", "a", "b", "c", "slow", "d", "j"],
        "`j` waited for `d`, a step later, and ran once"
    );
}

#[test]
fn join_shapes_are_checked_by_the_shared_rules() {
    let codes = |configure: &dyn Fn(&mut GraphBuilder<Ticket>)| {
        let mut builder = notes(&["a", "b", "j"]);
        builder.add_edge(START, "a").add_fork("a", ["b"]);
        configure(&mut builder);
        common::codes(builder)
    };
    // One source: nothing to wait for.
    let lone = codes(&|b| {
        b.add_join(["b"], "j").add_edge("j", END);
    });
    assert_eq!(lone, ["E0209"]);
    // Into END.
    let end = codes(&|b| {
        b.add_join(["b", "j"], END);
    });
    assert_eq!(end, ["E0207"]);
    // START joining: E0207 alone (it is no second entry).
    let start = codes(&|b| {
        b.add_join([START, "b"], "j").add_edge("j", END);
    });
    assert_eq!(start, ["E0207"]);
    let fine = codes(&|b| {
        b.add_edge("b", "j").add_edge("j", END);
    });
    assert!(fine.is_empty(), "{fine:?}");
}

#[tokio::test]
async fn a_join_waits_across_a_pause_in_memory() {
    let store: Arc<dyn Checkpointer> = Arc::new(InMemoryCheckpointer::new());
    common::joins::a_join_waits_across_a_pause(Arc::clone(&store), store).await;
}

#[tokio::test]
async fn a_join_waits_across_a_pause_in_sqlite_through_a_second_store() {
    let scratch = common::scratch("joins");
    let (first, second) = common::sqlite_pair(&scratch);
    common::joins::a_join_waits_across_a_pause(first, second).await;
}
