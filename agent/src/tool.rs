//! The tool seam: what a tool declares (name, argument schema, effects) and how it runs.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::schema::{Schema, SchemaError};

/// A tool a model can call.
///
/// The `tools` node only calls [`Tool::call`] with arguments that parsed and passed the
/// tool's schema, for a call to a tool advertised in that turn.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// What the tool is: its name, description, argument schema and effects.
    fn spec(&self) -> ToolSpec;

    /// Runs the tool on checked arguments. For a [`ToolEffect::Pause`] tool, returns the
    /// question to put to a person (it must change nothing).
    ///
    /// # Errors
    /// A [`ToolError`]: the model reads it as the call's result, and the turn goes on.
    async fn call(&self, arguments: Value) -> Result<String, ToolError>;
}

/// A tool as models see it, and the effects the turn needs to know of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by (`[a-zA-Z0-9_-]`, as providers require).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments (an object schema).
    pub parameters: Value,
    /// What running it does beyond returning a result.
    pub effect: ToolEffect,
}

impl ToolSpec {
    /// A read-only tool.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
            effect: ToolEffect::ReadOnly,
        }
    }

    /// The same tool, with `effect`.
    #[must_use]
    pub fn with_effect(mut self, effect: ToolEffect) -> Self {
        self.effect = effect;
        self
    }
}

/// What a tool does beyond returning a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolEffect {
    /// Reads only: runs without asking.
    ReadOnly,
    /// Changes something outside the turn (sends, writes, pays): a blueprint with an approval
    /// node asks a person first, and it never runs with empty or malformed arguments.
    SideEffects,
    /// Ends the turn early to ask a person (`ask_user`, `escalate`): the run pauses with the
    /// question the tool renders, and the person's reply becomes the call's result.
    Pause,
}

/// Why a tool failed; the model reads the message as the call's result.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError(message.into())
    }
}

/// Why a tool cannot be registered.
#[derive(Debug, thiserror::Error)]
pub enum ToolSetError {
    /// Two tools have one name.
    #[error("two tools are named `{0}`")]
    Duplicate(String),
    /// The name is not one providers accept.
    #[error("tool name `{0}` is not 1 to 64 of [a-zA-Z0-9_-]")]
    BadName(String),
    /// The schema is not one this crate can check: it would be checked partly, so it is refused.
    #[error("tool `{tool}` has a schema that cannot be checked: {error}")]
    Schema {
        /// The tool.
        tool: String,
        /// What is wrong with its schema.
        error: SchemaError,
    },
}

/// An agent's tools, by name, each with its checked schema.
#[derive(Clone, Default)]
pub struct ToolSet {
    tools: BTreeMap<String, Registered>,
}

#[derive(Clone)]
pub(crate) struct Registered {
    pub(crate) spec: ToolSpec,
    pub(crate) schema: Arc<Schema>,
    pub(crate) tool: Arc<dyn Tool>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

impl ToolSet {
    /// No tools.
    pub fn new() -> Self {
        ToolSet::default()
    }

    /// Adds `tool`.
    ///
    /// # Errors
    /// A duplicate name, a name providers refuse, or a schema that cannot be checked in full.
    pub fn add(&mut self, tool: impl Tool) -> Result<&mut Self, ToolSetError> {
        self.add_shared(Arc::new(tool))
    }

    /// Adds a shared `tool`.
    ///
    /// # Errors
    /// As [`add`](Self::add).
    pub fn add_shared(&mut self, tool: Arc<dyn Tool>) -> Result<&mut Self, ToolSetError> {
        let spec = tool.spec();
        let valid_name = (1..=64).contains(&spec.name.len())
            && spec
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid_name {
            return Err(ToolSetError::BadName(spec.name));
        }
        if self.tools.contains_key(&spec.name) {
            return Err(ToolSetError::Duplicate(spec.name));
        }
        let schema = Schema::compile(&spec.parameters).map_err(|error| ToolSetError::Schema {
            tool: spec.name.clone(),
            error,
        })?;
        let name = spec.name.clone();
        let schema = Arc::new(schema);
        self.tools.insert(name, Registered { spec, schema, tool });
        Ok(self)
    }

    /// The tools' specs, by name.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.values().map(|t| t.spec.clone()).collect()
    }

    /// Whether a tool is named `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Registered> {
        self.tools.get(name)
    }
}
