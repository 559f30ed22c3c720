//! Human in the loop: what a paused run asks ([`Interrupt`]), how each question is identified,
//! and how the run is answered ([`CompiledGraph::resume`](crate::CompiledGraph::resume) with
//! [`Answers`], giving a [`Resume`]).

use serde::{Deserialize, Serialize};

use crate::name::Name;

pub use crate::reply::{AnswerSiteInfo, Reply, TakesAnswer};
pub use crate::resume::{Answers, Resume};
pub use crate::state::ApplyResume;

/// Where a pause happened relative to its node: the one type the language, the blueprint and
/// runs share.
pub use trellis_graph::InterruptPoint;

/// What a node asks a person when it pauses the run (`NodeResult::Interrupt`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterruptRequest {
    /// What kind of answer is wanted (`approval`, `clarification`, …); the pause checkpoint is
    /// labelled `pause:<kind>`.
    pub kind: Name,
    /// The question, for the person.
    pub question: Name,
    /// The answers to choose from; empty for a free answer.
    pub options: Vec<String>,
    /// Where the run continues after the answer: one of the node's declared targets, or the
    /// node itself to run it again. `None` follows the node's edges, with its router seeing the
    /// state after the answer was folded in.
    pub resume_to: Option<String>,
    /// What the question is about, for a UI: the JSON of a node's typed question
    /// (`asks Question -> Answer;`), if it asks one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<serde_json::Value>,
}

impl InterruptRequest {
    /// A request of `kind` asking `question`, with no options, continuing along the node's edges.
    pub fn new(kind: impl Into<String>, question: impl Into<String>) -> Self {
        InterruptRequest {
            kind: kind.into().into(),
            question: question.into().into(),
            options: Vec::new(),
            resume_to: None,
            payload: None,
        }
    }

    /// What the question is about, as JSON: a node's typed question (`asks Question -> Answer;`
    /// gives the node a helper that asks with a `Question`).
    ///
    /// # Errors
    /// When `payload` cannot be written as JSON (a map with non-string keys, say).
    pub fn with_payload<T: Serialize>(mut self, payload: &T) -> Result<Self, serde_json::Error> {
        self.payload = Some(serde_json::to_value(payload)?);
        Ok(self)
    }

    /// The answers to choose from.
    #[must_use]
    pub fn with_options<I: IntoIterator<Item = S>, S: Into<String>>(mut self, options: I) -> Self {
        self.options = options.into_iter().map(Into::into).collect();
        self
    }

    /// Continue at `node` after the answer.
    #[must_use]
    pub fn resume_to(mut self, node: impl Into<String>) -> Self {
        self.resume_to = Some(node.into());
        self
    }
}

/// One pending question of a paused run.
///
/// Its text is [`Name`]s (read as `&str`, compared with `str` and `String`): a pause's
/// questions are copied into its record, its checkpoint, each load of them and the outcome, and
/// as `String`s those copies were a tenth of an interrupt-and-resume cycle in memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interrupt {
    /// Unique within the run: `<node>@<step>`. A resume answers each pending id.
    pub id: Name,
    /// The node that paused.
    pub node: Name,
    /// The super-step it paused in (the step about to run, for `interrupt before`).
    pub step: u64,
    /// Before, after, or from inside the node.
    pub point: InterruptPoint,
    /// What is asked.
    pub request: InterruptRequest,
}

impl Interrupt {
    /// `node` is shared (with the graph's name for it, say), not copied.
    pub(crate) fn new(
        node: impl Into<Name>,
        step: u64,
        point: InterruptPoint,
        request: InterruptRequest,
    ) -> Self {
        let node = node.into();
        Interrupt {
            id: format!("{node}@{step}").into(),
            node,
            step,
            point,
            request,
        }
    }

    /// The request of a static `interrupt before|after` on `node`.
    /// `question` is the node's own (`interrupt before "…"`), if it has one.
    pub(crate) fn fixed(
        node: impl Into<Name>,
        step: u64,
        point: InterruptPoint,
        question: Option<&str>,
    ) -> Self {
        let node = node.into();
        let (kind, default) = match point {
            InterruptPoint::Before => ("before", format_args!("approve running `{node}`")),
            _ => ("after", format_args!("review the result of `{node}`")),
        };
        let question = question.map_or_else(|| Name::from(default.to_string()), Name::from);
        let request = InterruptRequest {
            kind: kind.into(),
            question,
            options: Vec::new(),
            resume_to: None,
            payload: None,
        };
        Interrupt::new(node, step, point, request)
    }

    /// The interrupt of sent branch `branch` of its node: `node@step#branch`, so that sibling
    /// branches' are told apart.
    pub(crate) fn of_branch(mut self, branch: usize) -> Self {
        self.id = format!("{}#{branch}", self.id).into();
        self
    }

    /// Whether a sent branch asked it ([`of_branch`](Self::of_branch)).
    pub(crate) fn is_of_branch(&self) -> bool {
        self.id
            .rsplit_once('#')
            .is_some_and(|(_, branch)| branch.parse::<usize>().is_ok())
    }
}

/// A person's answer to an approval, ready-made for the common case: a state with a field
/// `#[answer] decision: Option<Decision>` under `#[derive(GraphState)]` takes answers with no
/// hand-written [`ApplyResume`] (the answer is stored in the field, where a
/// router reads it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Go ahead.
    Approve,
    /// Do not, for this reason.
    Reject {
        /// Why, for whoever acts on it.
        reason: String,
    },
}

impl Decision {
    /// `Reject { reason }`.
    pub fn reject(reason: impl Into<String>) -> Self {
        Decision::Reject {
            reason: reason.into(),
        }
    }

    /// Whether it is [`Decision::Approve`].
    pub fn is_approved(&self) -> bool {
        matches!(self, Decision::Approve)
    }
}

/// Where one run pauses besides its graph's own interrupts: before or after the nodes named,
/// each time they run — LangGraph's `interrupt_before`/`interrupt_after` given when a run is
/// created. Given with [`StartOptions`](crate::thread::StartOptions), kept in every checkpoint
/// of the run (a resumed or restored run keeps them). Such a pause asks nothing: the run goes
/// past it with [`Answers::Proceed`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breakpoints {
    /// Nodes the run pauses before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<crate::checkpoint::Name>,
    /// Nodes the run pauses after.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<crate::checkpoint::Name>,
}

impl Breakpoints {
    /// No breakpoint.
    pub fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty()
    }
}
