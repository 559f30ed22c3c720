//! Why an agent could not be loaded, built or run.

use trellis::{RunError, RunFailure};

use crate::tool::ToolSetError;
use crate::transcript::TranscriptError;

/// Why an agent could not be loaded, built or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// An agent definition could not be read.
    #[error("agent definition {origin}, line {line}: {message}")]
    Definition {
        /// Where the definition came from (a file name, or `<text>`).
        origin: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong there.
        message: String,
    },
    /// The catalogue has no agent of this name.
    #[error("no agent is named `{name}`{}", suggest(.known))]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The names there are.
        known: Vec<String>,
    },
    /// Two agents have one name.
    #[error("two agents are named `{0}`")]
    DuplicateAgent(String),
    /// An agent names a blueprint the catalogue does not have.
    #[error("agent `{agent}` runs on blueprint `{blueprint}`, which the catalogue does not have{}", suggest(.known))]
    UnknownBlueprint {
        /// The agent.
        agent: String,
        /// The blueprint it names.
        blueprint: String,
        /// The blueprints there are.
        known: Vec<String>,
    },
    /// An agent names a tool the catalogue does not have.
    #[error("agent `{agent}` uses tool `{tool}`, which the catalogue does not have{}", suggest(.known))]
    UnknownTool {
        /// The agent.
        agent: String,
        /// The tool it names.
        tool: String,
        /// The tools there are.
        known: Vec<String>,
    },
    /// A blueprint cannot run as an agent turn.
    #[error("blueprint `{blueprint}`: {message}")]
    Blueprint {
        /// The blueprint's graph name.
        blueprint: String,
        /// What is wrong, naming the node or edge.
        message: String,
    },
    /// Agents delegate to each other in a circle.
    #[error("agents delegate in a circle: {0}")]
    DelegationCycle(String),
    /// A tool could not be registered.
    #[error(transparent)]
    Tool(#[from] ToolSetError),
    /// The transcript store failed.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
    /// The run could not be resumed, or a resumed run failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A turn's run failed: [`RunFailure::run_id`] names it, to retry once the cause is fixed.
    #[error(transparent)]
    Failed(#[from] RunFailure),
}

fn suggest(known: &[String]) -> String {
    if known.is_empty() {
        String::new()
    } else {
        format!(" (there are: {})", known.join(", "))
    }
}
