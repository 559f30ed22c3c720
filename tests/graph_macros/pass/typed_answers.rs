//! Pauses typed by their answers: `send`'s `interrupt` is answered with a `Decision`, and
//! `assign` asks with a `Candidates` and is answered with a `Reviewer`. Each answer goes into the
//! state's `#[answer]` field of its type; an answer of the wrong type for a pause is refused.
#![deny(warnings, missing_docs, unreachable_pub, unused, clippy::all)]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::checkpoint::InMemoryCheckpointer;
use trellis::interrupt::{Decision, TakesAnswer};
use trellis::{GraphState, NodeContext, NodeResult, RunError};

/// The reviewers to choose from.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Candidates {
    /// Their names.
    pub names: Vec<String>,
}

/// Who reviews the post.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reviewer {
    /// Their name.
    pub name: String,
}

/// A post on its way out.
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState)]
pub struct Post {
    /// Who reviews it.
    #[answer]
    pub reviewer: Option<Reviewer>,
    /// Whether to send it.
    #[answer]
    pub decision: Option<Decision>,
    /// Whether it went out.
    pub sent: bool,
}

trellis::graph! {
    graph Desk {
        state Post;
        node assign { asks Candidates -> Reviewer; }
        node send { interrupt before "Send it?" answer Decision; }
        START -> assign -> send -> END;
    }
}

struct Desk;

impl desk::Handlers for Desk {
    async fn assign(&self, state: Arc<Post>, _: &mut NodeContext) -> desk::NodeOutput {
        if state.reviewer.is_some() {
            return Ok(NodeResult::None);
        }
        let candidates = Candidates {
            names: vec!["ada".into(), "grace".into()],
        };
        let question = desk::asks::assign::ask("Who reviews it?", &candidates)?;
        Ok(NodeResult::ask(question.resume_to("assign")))
    }

    async fn send(&self, state: Arc<Post>, _: &mut NodeContext) -> desk::NodeOutput {
        let approved = state.decision.as_ref().is_some_and(Decision::is_approved);
        Ok(PostUpdate::default().sent(approved).into())
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let graph = desk::build(Desk).with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
        let paused = graph.invoke(Post::default()).await.expect("the run pauses");
        let run_id = paused.run_id().clone();
        let asked = &paused.interrupts()[0];
        assert_eq!(asked.request.payload, Some(serde_json::json!({"names": ["ada", "grace"]})));
        assert_eq!(graph.answer_type(asked), Some(std::any::type_name::<Reviewer>()));

        // A `Decision` where `assign` takes a `Reviewer`: refused, and the run still waits.
        let wrong = <Post as TakesAnswer<Decision>>::input_of(Decision::Approve);
        match graph.resume(&run_id, wrong).await {
            Err(RunError::WrongAnswer { interrupt, .. }) => assert!(interrupt.starts_with("assign@")),
            other => panic!("expected a wrong answer, got {other:?}"),
        }

        let reviewer = Reviewer { name: "ada".into() };
        let paused = graph
            .resume(&run_id, desk::asks::assign::answer(reviewer.clone()))
            .await
            .expect("the run pauses again");
        assert_eq!(paused.interrupts()[0].node, "send");
        assert_eq!(paused.state().reviewer.as_ref(), Some(&reviewer));

        // Read from JSON by the site's type, as a server does.
        let read = graph
            .read_answer(&paused.interrupts()[0], serde_json::json!("approve"))
            .expect("a typed site")
            .expect("a decision");
        assert!(<Post as TakesAnswer<Decision>>::is_answer(&read));
        assert!(graph
            .read_answer(&paused.interrupts()[0], serde_json::json!({"name": "ada"}))
            .expect("a typed site")
            .is_err());

        let done = graph
            .resume(&run_id, desk::answer::send(Decision::Approve))
            .await
            .expect("the run ends");
        assert!(done.state().sent);
        let blueprint = desk::blueprint();
        assert_eq!(blueprint.node("send").and_then(|n| n.answer.as_deref()), Some("Decision"));
    });
}
