//! Agent turns on Trellis: shipped blueprints, model and tool seams, the live turn bridge and
//! the safety rules of tool use. The graph engine (`trellis`) knows nothing of models or tools;
//! agents plug into it through nodes, by the `kind` each blueprint node declares.
//!
//! An agent is a prompt (what it says), a blueprint (how it runs) and its tools. A
//! [`Catalogue`] holds them, checks every agent against its blueprint and tools, lists agents
//! for UIs ([`AgentCard`]) and builds an agent's graph ([`AgentGraph`]).
//!
//! ```
//! use std::sync::Arc;
//! use trellis_agent::{Catalogue, ModelResponse, ScriptedModel, ToolCall};
//! use trellis_agent::transcript::InMemoryTranscripts;
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//!
//! // A model that calls the calculator, then answers from its result.
//! let model = ScriptedModel::new()
//!     .call(ToolCall::new("call_1", "calculator", r#"{"expression": "12 * 7"}"#))
//!     .step(|request| {
//!         let product = request.result_of("call_1").unwrap_or("?");
//!         Ok(ModelResponse::text(format!("12 × 7 = {product}")))
//!     });
//!
//! let catalogue = Catalogue::shipped()?;
//! let assistant = catalogue.build("assistant", model, Arc::new(InMemoryTranscripts::new()))?;
//! let outcome = assistant.start("What is 12 × 7?").await?;
//! assert_eq!(outcome.answer.as_deref(), Some("12 × 7 = 84"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! See `docs/agents.md` in the repository for the blueprints, the node kinds and the safety
//! rules.

mod agent;
pub mod blueprints;
mod definition;
mod error;
mod message;
mod model;
mod model_node;
#[cfg(feature = "openai")]
mod openai;
mod schema;
mod scripted;
#[cfg(feature = "test-util")]
pub mod testing;
mod tool;
mod tool_node;
pub mod toolbox;
pub mod transcript;
mod turn;

pub use agent::{AgentCard, Catalogue, Models};
pub use definition::AgentDefinition;
pub use error::AgentError;
pub use message::{Body, Message, ToolCall, Usage};
pub use model::{Model, ModelError, ModelRequest, ModelResponse};
pub use model_node::{ModelNode, chat_graph};
#[cfg(feature = "openai")]
pub use openai::OpenAiCompatible;
pub use schema::SchemaError;
pub use scripted::{ScriptedModel, Seen};
pub use tool::{Tool, ToolEffect, ToolError, ToolSet, ToolSetError, ToolSpec};
pub use tool_node::{StateTool, ToolNode, ToolOutput};
pub use turn::{
    AgentFields, AgentGraph, Next, NoFields, TurnAnswer, TurnOutcome, TurnState, TurnStateUpdate,
};

/// `#[async_trait]`, re-exported so that tools and models need no extra dependency.
pub use trellis::async_trait;
