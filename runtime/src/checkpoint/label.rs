//! `CheckpointLabel`: which moment of a run a checkpoint records, and its text form.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What moment of a run a checkpoint records.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CheckpointLabel {
    /// The input, before the first step.
    Start,
    /// After a super-step, the run going on.
    Step,
    /// At a pause, with the first interrupt's kind: `pause:approval`, `pause:before`.
    Pause(String),
    /// After a resume folded a person's answers into the state, before the run goes on.
    Resume,
    /// At the end of the run.
    Complete,
    /// When the run failed: the last committed state.
    Failed,
    /// A failed run taken up again ([`retry`](crate::CompiledGraph::retry)): its last
    /// committed checkpoint, from which it goes on.
    Retry,
    /// The first checkpoint of a branch replayed from another run's checkpoint
    /// ([`replay`](crate::CompiledGraph::replay)): that checkpoint, copied.
    Fork,
    /// The first checkpoint of a branch whose state was edited as if a node had written it
    /// ([`update_state`](crate::CompiledGraph::update_state)).
    Update,
}

impl CheckpointLabel {
    /// The label as text, borrowed unless it is a pause's (which names its kind): a durable
    /// store writes one per step.
    pub(crate) fn text(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            CheckpointLabel::Start => "start",
            CheckpointLabel::Step => "step",
            CheckpointLabel::Pause(kind) => return Cow::Owned(format!("pause:{kind}")),
            CheckpointLabel::Resume => "resume",
            CheckpointLabel::Complete => "complete",
            CheckpointLabel::Failed => "failed",
            CheckpointLabel::Retry => "retry",
            CheckpointLabel::Fork => "fork",
            CheckpointLabel::Update => "update",
        })
    }
}

impl fmt::Display for CheckpointLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// A label that is none of `start`, `step`, `pause:<kind>`, `resume`, `complete`, `failed`,
/// `retry`, `fork`, `update`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown checkpoint label `{0}`: expected start, step, pause:<kind>, resume, complete, failed, retry, fork or update"
)]
pub struct UnknownLabel(String);

impl std::str::FromStr for CheckpointLabel {
    type Err = UnknownLabel;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text {
            "start" => CheckpointLabel::Start,
            "step" => CheckpointLabel::Step,
            "resume" => CheckpointLabel::Resume,
            "complete" => CheckpointLabel::Complete,
            "failed" => CheckpointLabel::Failed,
            "retry" => CheckpointLabel::Retry,
            "fork" => CheckpointLabel::Fork,
            "update" => CheckpointLabel::Update,
            _ => match text.strip_prefix("pause:") {
                Some(kind) if !kind.is_empty() => CheckpointLabel::Pause(kind.to_owned()),
                _ => return Err(UnknownLabel(text.to_owned())),
            },
        })
    }
}

impl Serialize for CheckpointLabel {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CheckpointLabel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}
