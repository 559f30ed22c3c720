//! Publishing a post (`examples/graphs/publish.graph`), served beside the ticket flow: three
//! questions with answers of their own types — who reviews it (a `Reviewer`, among the
//! candidates the question carries), when it goes out (a `Slot`, one of a few, asked by the
//! `Scheduling` subgraph) and whether to publish it (a `Decision`) — each answered in the
//! studio with a form made from its type.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use trellis::interrupt::Decision;
use trellis::{GraphState, NodeResult};

trellis::include_generated!("publish");

/// Who may review a post: the question `assign` asks with.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Candidates {
    /// Their names.
    pub names: Vec<String>,
}

/// Who reviews the post: the answer to `assign`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Reviewer {
    /// Their name.
    pub name: String,
    /// What they should look at first.
    #[serde(default)]
    pub note: Option<String>,
}

/// The times a post may go out: the question `schedule` asks with.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Slots {
    /// The slots still free.
    pub free: Vec<Slot>,
}

/// When the post goes out: the answer to `schedule`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Slot {
    /// At once.
    Now,
    /// This evening.
    Tonight,
    /// Tomorrow morning.
    Tomorrow,
}

/// A post on its way out. Each answer has a field of its type.
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState, JsonSchema)]
#[graph_state(schema)]
#[serde(default)]
pub struct Post {
    /// The post.
    pub text: String,
    /// Who reviews it: the answer to `assign`.
    #[answer]
    pub reviewer: Option<Reviewer>,
    /// The review.
    pub review: Option<String>,
    /// When it goes out: the answer to `schedule`.
    #[answer]
    pub slot: Option<Slot>,
    /// Whether to publish it: the answer to `publish`.
    #[answer]
    pub decision: Option<Decision>,
    /// Whether it went out.
    pub published: bool,
}

/// What the publishing graph's nodes do, at the support desk's pace.
struct Desk(crate::Desk);

impl Desk {
    async fn pace(&self) {
        self.0.pace().await;
    }
}

impl publish::Handlers for Desk {
    async fn assign(&self, post: Arc<Post>, _: &mut trellis::NodeContext) -> publish::NodeOutput {
        self.pace().await;
        if post.reviewer.is_some() {
            return Ok(NodeResult::None);
        }
        let candidates = Candidates {
            names: vec!["ada".to_owned(), "grace".to_owned()],
        };
        let question = publish::asks::assign::ask("Who reviews this post?", &candidates)?;
        // Asked again after the answer: the node goes on once it has its reviewer.
        Ok(NodeResult::ask(question.resume_to("assign")))
    }

    async fn review(&self, post: Arc<Post>, _: &mut trellis::NodeContext) -> publish::NodeOutput {
        self.pace().await;
        let reviewer = post.reviewer.as_ref().map_or("nobody", |r| r.name.as_str());
        Ok(PostUpdate::default()
            .review(Some(format!("{reviewer} read it")))
            .into())
    }

    fn schedule(&self) -> trellis::CompiledGraph<Post> {
        scheduling::build(Desk(crate::Desk { pace: self.0.pace }))
    }

    async fn publish(&self, post: Arc<Post>, _: &mut trellis::NodeContext) -> publish::NodeOutput {
        self.pace().await;
        let approved = post.decision.as_ref().is_some_and(Decision::is_approved);
        Ok(PostUpdate::default().published(approved).into())
    }
}

impl scheduling::Handlers for Desk {
    async fn pick(&self, post: Arc<Post>, _: &mut trellis::NodeContext) -> scheduling::NodeOutput {
        self.pace().await;
        if post.slot.is_some() {
            return Ok(NodeResult::None);
        }
        let slots = Slots {
            free: vec![Slot::Now, Slot::Tonight, Slot::Tomorrow],
        };
        let question = scheduling::asks::pick::ask("When does it go out?", &slots)?;
        // Asked again after the answer: the node goes on once the post has its slot.
        Ok(NodeResult::ask(question.resume_to("pick")))
    }
}

/// The publishing graph, built.
pub fn build(pace: std::time::Duration) -> trellis::CompiledGraph<Post> {
    publish::build(Desk(crate::Desk { pace }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use trellis::checkpoint::InMemoryCheckpointer;

    #[tokio::test]
    async fn each_question_is_answered_with_its_own_type() {
        let graph = build(std::time::Duration::ZERO)
            .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
        let post = Post {
            text: "hello".into(),
            ..Post::default()
        };
        let paused = graph.invoke(post).await.unwrap();
        let run_id = paused.run_id().clone();
        let asked = &paused.interrupts()[0];
        assert_eq!(asked.node, "assign");
        assert_eq!(
            asked.request.payload,
            Some(serde_json::json!({"names": ["ada", "grace"]}))
        );
        let reviewer = Reviewer {
            name: "grace".into(),
            note: None,
        };
        let paused = graph
            .resume(&run_id, publish::asks::assign::answer(reviewer))
            .await
            .unwrap();
        // The subgraph's question, asked through the parent's run.
        assert_eq!(paused.interrupts()[0].node, "schedule");
        assert_eq!(
            graph.answer_type(&paused.interrupts()[0]),
            Some(std::any::type_name::<Slot>())
        );
        let paused = graph
            .resume(&run_id, scheduling::asks::pick::answer(Slot::Tonight))
            .await
            .unwrap();
        assert_eq!(paused.interrupts()[0].node, "publish");
        let done = graph
            .resume(&run_id, publish::answer::publish(Decision::Approve))
            .await
            .unwrap();
        assert!(done.state().published);
        assert_eq!(done.state().review.as_deref(), Some("grace read it"));
        assert_eq!(done.state().slot, Some(Slot::Tonight));
        // Each site publishes its answer's schema, for a form; the subgraph's by its path.
        let sites = graph.answer_sites();
        let nodes: Vec<&str> = sites.iter().map(|site| site.node.as_str()).collect();
        assert_eq!(nodes, ["assign", "schedule/pick", "publish"]);
        assert!(sites.iter().all(|site| site.schema.is_some()));
    }
}
