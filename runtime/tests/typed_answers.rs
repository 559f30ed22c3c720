//! Pauses typed by their answers, through the builder: `set_asks` and `set_answer` record the
//! types in the blueprint, a resume with an answer of another type is refused before anything
//! is written (the run still waits), and `compile` refuses a type set where nothing pauses.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::blueprint::{Asks, Code};
use trellis::checkpoint::InMemoryCheckpointer;
use trellis::interrupt::{Answers, Decision, InterruptRequest, Reply, TakesAnswer};
use trellis::{END, GraphBuilder, GraphState, NodeOptions, NodeResult, RunError, START};

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Candidates {
    names: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Reviewer {
    name: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState)]
struct Post {
    #[answer]
    reviewer: Option<Reviewer>,
    #[answer]
    decision: Option<Decision>,
    published: bool,
}

fn publishing() -> GraphBuilder<Post> {
    let mut builder = GraphBuilder::<Post>::new("Publish");
    builder
        .add_node_fn("assign", |post: Arc<Post>, _| async move {
            if post.reviewer.is_some() {
                return Ok(NodeResult::None);
            }
            let candidates = Candidates {
                names: vec!["ada".into(), "grace".into()],
            };
            let question =
                InterruptRequest::new("asks", "Who reviews it?").with_payload(&candidates)?;
            Ok(NodeResult::ask(question.resume_to("assign")))
        })
        .add_node_fn_with(
            "publish",
            |post: Arc<Post>, _| async move {
                let approved = post.decision.as_ref().is_some_and(Decision::is_approved);
                Ok(PostUpdate::default().published(approved).into())
            },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "assign")
        .add_edge("assign", "publish")
        .add_edge("publish", END)
        .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    builder
}

#[tokio::test]
async fn each_pause_takes_its_own_type() {
    let mut builder = publishing();
    builder
        .set_asks::<Candidates, Reviewer>("assign")
        .set_answer::<Decision>("publish");
    let graph = builder.compile().expect("builds");
    let blueprint = graph.blueprint();
    assert_eq!(
        blueprint.node("assign").and_then(|n| n.asks.clone()),
        Some(Asks {
            question: "Candidates".into(),
            answer: "Reviewer".into(),
        })
    );
    assert_eq!(
        blueprint.node("publish").and_then(|n| n.answer.as_deref()),
        Some("Decision")
    );
    assert_eq!(graph.answer_sites().len(), 2);

    let paused = graph.invoke(Post::default()).await.expect("pauses");
    let run_id = paused.run_id().clone();
    assert_eq!(paused.interrupts()[0].node, "assign");

    // A decision where a reviewer is asked for: refused, nothing written, the run still waits.
    let wrong = <Post as TakesAnswer<Decision>>::input_of(Decision::Approve);
    match graph.resume(&run_id, wrong).await {
        Err(RunError::WrongAnswer {
            interrupt,
            expected,
            given,
            ..
        }) => {
            assert_eq!(interrupt, "assign@1");
            assert!(expected.contains("Reviewer"), "{expected}");
            assert!(given.contains("Decision"), "{given}");
        }
        other => panic!("expected a wrong answer, got {other:?}"),
    }
    let still = graph.load(&run_id).await.expect("the run");
    assert_eq!(still.interrupts().len(), 1, "the run still waits");

    let reviewer = Reviewer { name: "ada".into() };
    let paused = graph
        .resume(
            &run_id,
            <Post as TakesAnswer<Reviewer>>::input_of(reviewer.clone()),
        )
        .await
        .expect("pauses before publishing");
    assert_eq!(paused.interrupts()[0].node, "publish");
    assert_eq!(paused.state().reviewer.as_ref(), Some(&reviewer));
    let id = paused.interrupts()[0].id.clone();
    let done = graph
        .resume(
            &run_id,
            Answers::each([(
                id,
                <Post as TakesAnswer<Decision>>::input_of(Decision::Approve),
            )]),
        )
        .await
        .expect("publishes");
    assert!(done.state().published);
}

#[tokio::test]
async fn an_untyped_pause_refuses_a_reply_of_no_type_the_state_takes() {
    let graph = publishing().compile().expect("builds");
    let paused = graph.invoke(Post::default()).await.expect("pauses");
    let run_id = paused.run_id().clone();
    match graph.resume(&run_id, Reply::new(3_u8)).await {
        Err(RunError::WrongAnswer { given, .. }) => assert!(given.contains("u8"), "{given}"),
        other => panic!("expected a wrong answer, got {other:?}"),
    }
    // Any of the state's types goes into its field.
    let reviewer = Reviewer {
        name: "grace".into(),
    };
    let paused = graph
        .resume(&run_id, Reply::new(reviewer.clone()))
        .await
        .expect("answered");
    assert_eq!(paused.state().reviewer.as_ref(), Some(&reviewer));
}

/// A subgraph node's own pause and its child's questions have sites of their own: the child's
/// question is checked by the child's site, not the node's.
#[tokio::test]
async fn a_child_s_question_is_checked_by_the_child_s_site() {
    let mut child = GraphBuilder::<Post>::new("Approval");
    child
        .add_node_fn_with(
            "approve",
            |post: Arc<Post>, _| async move {
                let approved = post.decision.as_ref().is_some_and(Decision::is_approved);
                Ok(PostUpdate::default().published(approved).into())
            },
            NodeOptions::new().interrupt_before(),
        )
        .add_edge(START, "approve")
        .add_edge("approve", END)
        .set_answer::<Decision>("approve");
    let child = child.compile().expect("the child builds");
    let mut parent = GraphBuilder::<Post>::new("Desk");
    parent
        .add_subgraph_with("review", child, NodeOptions::new().interrupt_before())
        .add_edge(START, "review")
        .add_edge("review", END)
        .set_answer::<Reviewer>("review")
        .set_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    let graph = parent.compile().expect("the parent builds");

    // The child's site is published under the path of nodes down to it.
    let sites: Vec<(String, &str)> = graph
        .answer_sites()
        .into_iter()
        .map(|site| (site.node, site.type_name))
        .collect();
    assert_eq!(
        sites,
        [
            ("review".to_owned(), std::any::type_name::<Reviewer>()),
            (
                "review/approve".to_owned(),
                std::any::type_name::<Decision>()
            ),
        ]
    );

    let paused = graph.invoke(Post::default()).await.expect("pauses");
    let run_id = paused.run_id().clone();
    let reviewer = Reviewer { name: "ada".into() };
    let paused = graph
        .resume(&run_id, <Post as TakesAnswer<Reviewer>>::input_of(reviewer))
        .await
        .expect("the child pauses");
    let asked = &paused.interrupts()[0];
    assert!(
        asked.id.starts_with("review@") && asked.id.contains("/approve@"),
        "{}",
        asked.id
    );
    // A wrong answer to the child's question is refused before the parent is claimed: the
    // parent still waits, and nothing of its run is lost.
    let asked_id = asked.id.clone();
    let wrong = <Post as TakesAnswer<Reviewer>>::input_of(Reviewer { name: "bob".into() });
    match graph.resume(&run_id, wrong).await {
        Err(RunError::WrongAnswer {
            interrupt,
            expected,
            ..
        }) => {
            assert_eq!(interrupt, asked_id);
            assert!(expected.ends_with("Decision`"), "{expected}");
        }
        other => panic!("a `Reviewer` for the child's `Decision`: {other:?}"),
    }
    let waiting = graph.load(&run_id).await.expect("the run is kept");
    assert_eq!(waiting.interrupts().len(), 1, "the parent still waits");
    assert_eq!(
        graph.answer_type(&waiting.interrupts()[0]),
        Some(std::any::type_name::<Decision>())
    );
    let done = graph
        .resume(
            &run_id,
            <Post as TakesAnswer<Decision>>::input_of(Decision::Approve),
        )
        .await
        .expect("the child's decision is the child's to check");
    assert!(
        done.state().published,
        "{:?} {:?}",
        done.state(),
        done.interrupts()
    );
}

#[test]
fn an_answer_type_where_nothing_pauses_is_refused() {
    let mut builder = publishing();
    builder.set_answer::<Decision>("assign");
    let error = builder.compile().expect_err("`assign` does not pause");
    assert_eq!(error.codes(), [Code::E0217]);
    assert_eq!(
        error.diagnostics[0].message,
        "node `assign` is given an answer type, but it does not pause"
    );

    let mut builder = publishing();
    builder.set_answer::<Decision>("approve");
    let error = builder.compile().expect_err("no node `approve`");
    assert_eq!(error.codes(), [Code::E0217]);
    assert_eq!(
        error.diagnostics[0].message,
        "an answer type is set for `approve`, which is no node of the graph"
    );
}
