//! The catalogue of agents: it holds blueprints, tools and agents, checks every agent against
//! them, lists them for UIs, and builds an agent's graph.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::blueprint::Blueprint;

use crate::blueprints;
use crate::definition::AgentDefinition;
use crate::error::AgentError;
use crate::model::Model;
use crate::tool::{Tool, ToolSet, ToolSpec};
use crate::tool_node::{Declared, StateTool};
use crate::toolbox::{Calculator, ListFiles};
use crate::transcript::TranscriptStore;
use crate::turn::{self, AgentFields, AgentGraph, Plan};

/// An agent as UIs list it: its definition with its blueprint and tools spelled out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentCard {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The blueprint's catalogue name.
    pub blueprint: String,
    /// The blueprint itself (the JSON of `trellis export --format json`).
    pub graph: Blueprint,
    /// Its tools, as models see them.
    pub tools: Vec<ToolSpec>,
    /// The agents its blueprint hands work to.
    pub helpers: Vec<String>,
    /// Whether a person approves every batch of tool calls (once each).
    pub approve_tools: bool,
    /// Its system prompt.
    pub prompt: String,
}

/// Which model each agent talks to: one for all, or one per agent.
#[derive(Clone)]
pub struct Models {
    default: Arc<dyn Model>,
    by_agent: BTreeMap<String, Arc<dyn Model>>,
}

impl Models {
    /// `model` for every agent.
    pub fn new(model: impl Model) -> Self {
        Models::shared(Arc::new(model))
    }

    /// A shared `model` for every agent.
    pub fn shared(model: Arc<dyn Model>) -> Self {
        Models {
            default: model,
            by_agent: BTreeMap::new(),
        }
    }

    /// `model` for `agent` (a helper, say), the default for the others.
    #[must_use]
    pub fn with(mut self, agent: &str, model: impl Model) -> Self {
        self.by_agent.insert(agent.to_owned(), Arc::new(model));
        self
    }

    fn of(&self, agent: &str) -> Arc<dyn Model> {
        Arc::clone(self.by_agent.get(agent).unwrap_or(&self.default))
    }
}

impl<M: Model> From<M> for Models {
    fn from(model: M) -> Self {
        Models::new(model)
    }
}

/// The shipped agents' definitions, as files in `agents/`.
const SHIPPED_AGENTS: [(&str, &str); 6] = [
    (
        "agents/assistant.md",
        include_str!("../agents/assistant.md"),
    ),
    (
        "agents/summarizer.md",
        include_str!("../agents/summarizer.md"),
    ),
    ("agents/planner.md", include_str!("../agents/planner.md")),
    (
        "agents/researcher.md",
        include_str!("../agents/researcher.md"),
    ),
    ("agents/critic.md", include_str!("../agents/critic.md")),
    (
        "agents/orchestrator.md",
        include_str!("../agents/orchestrator.md"),
    ),
];

/// Blueprints, tools and agents, checked against each other.
///
/// ```
/// use trellis_agent::{Catalogue, Models, ScriptedModel, transcript::InMemoryTranscripts};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let catalogue = Catalogue::shipped()?;
/// let names: Vec<_> = catalogue.cards().into_iter().map(|card| card.name).collect();
/// assert!(names.contains(&"assistant".to_owned()));
///
/// let model = ScriptedModel::new().answer("Paris.");
/// let summarizer = catalogue.build("summarizer", model, std::sync::Arc::new(InMemoryTranscripts::new()))?;
/// let outcome = summarizer.start("The capital of France, in one word?").await?;
/// assert_eq!(outcome.answer.as_deref(), Some("Paris."));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Default)]
pub struct Catalogue {
    blueprints: BTreeMap<String, Blueprint>,
    tools: BTreeMap<String, Arc<dyn Tool>>,
    agents: BTreeMap<String, AgentDefinition>,
}

impl std::fmt::Debug for Catalogue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalogue")
            .field("blueprints", &self.blueprints.keys().collect::<Vec<_>>())
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("agents", &self.agents.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Catalogue {
    /// The shipped blueprints, no tools, no agents.
    pub fn new() -> Self {
        let mut catalogue = Catalogue::default();
        for (name, blueprint) in blueprints::shipped() {
            catalogue.blueprints.insert(name.to_owned(), blueprint);
        }
        catalogue
    }

    /// The shipped blueprints, the toolbox's tools ([`Calculator`], and [`ListFiles`] over the
    /// current directory) and the shipped agents, checked.
    ///
    /// # Errors
    /// A shipped agent that does not check (a bug the loader test catches first).
    pub fn shipped() -> Result<Self, AgentError> {
        let mut catalogue = Catalogue::new();
        catalogue.add_tool(Calculator)?;
        catalogue.add_tool(ListFiles::new("."))?;
        for (origin, text) in SHIPPED_AGENTS {
            catalogue.add_agent(AgentDefinition::parse(origin, text)?)?;
        }
        catalogue.validate()?;
        Ok(catalogue)
    }

    /// Adds (or replaces) the blueprint `name`, refusing one an agent turn cannot run.
    ///
    /// # Errors
    /// [`AgentError::Blueprint`] naming the node or edge.
    pub fn add_blueprint(
        &mut self,
        name: &str,
        blueprint: Blueprint,
    ) -> Result<&mut Self, AgentError> {
        Plan::read(&blueprint)?;
        self.blueprints.insert(name.to_owned(), blueprint);
        Ok(self)
    }

    /// Adds (or replaces) a tool, by its name.
    ///
    /// # Errors
    /// [`AgentError::Tool`]: a name providers refuse, or a schema that cannot be checked in
    /// full (refused here, not skipped at run time).
    pub fn add_tool(&mut self, tool: impl Tool) -> Result<&mut Self, AgentError> {
        let tool: Arc<dyn Tool> = Arc::new(tool);
        // Registering it alone checks its name and schema.
        ToolSet::new().add_shared(Arc::clone(&tool))?;
        self.tools.insert(tool.spec().name, tool);
        Ok(self)
    }

    /// Adds an agent whose blueprint and tools are in the catalogue. (Helpers it delegates to
    /// may be added after it; [`validate`](Self::validate) checks them.)
    ///
    /// # Errors
    /// A name taken, an unknown blueprint or tool.
    pub fn add_agent(&mut self, agent: AgentDefinition) -> Result<&mut Self, AgentError> {
        if self.agents.contains_key(&agent.name) {
            return Err(AgentError::DuplicateAgent(agent.name));
        }
        if !self.blueprints.contains_key(&agent.blueprint) {
            return Err(AgentError::UnknownBlueprint {
                agent: agent.name,
                blueprint: agent.blueprint,
                known: self.blueprints.keys().cloned().collect(),
            });
        }
        if let Some(tool) = agent.tools.iter().find(|t| !self.tools.contains_key(*t)) {
            return Err(AgentError::UnknownTool {
                agent: agent.name.clone(),
                tool: tool.clone(),
                known: self.tools.keys().cloned().collect(),
            });
        }
        self.agents.insert(agent.name.clone(), agent);
        Ok(self)
    }

    /// Every agent, by name.
    pub fn agents(&self) -> impl Iterator<Item = &AgentDefinition> {
        self.agents.values()
    }

    /// The blueprints, by catalogue name.
    pub fn blueprints(&self) -> impl Iterator<Item = (&str, &Blueprint)> {
        self.blueprints
            .iter()
            .map(|(name, blueprint)| (name.as_str(), blueprint))
    }

    /// The agent `name`, as UIs list it.
    ///
    /// # Errors
    /// [`AgentError::UnknownAgent`].
    pub fn card(&self, name: &str) -> Result<AgentCard, AgentError> {
        let agent = self.agent(name)?;
        let graph = self.blueprints[&agent.blueprint].clone();
        let helpers = Plan::read(&graph)?.delegates;
        Ok(AgentCard {
            name: agent.name.clone(),
            description: agent.description.clone(),
            blueprint: agent.blueprint.clone(),
            graph,
            tools: agent
                .tools
                .iter()
                .filter_map(|t| self.tools.get(t))
                .map(|t| t.spec())
                .collect(),
            helpers,
            approve_tools: agent.approve_tools,
            prompt: agent.prompt.clone(),
        })
    }

    /// Every agent, as UIs list them, by name.
    pub fn cards(&self) -> Vec<AgentCard> {
        self.agents
            .keys()
            .filter_map(|name| self.card(name).ok())
            .collect()
    }

    /// Checks every agent: its blueprint runs as a turn, its tools register (names, schemas),
    /// its helpers exist, and no agent delegates to itself through others.
    ///
    /// # Errors
    /// The first agent that does not check.
    pub fn validate(&self) -> Result<(), AgentError> {
        for name in self.agents.keys() {
            self.check(name, &mut Vec::new())?;
        }
        Ok(())
    }

    fn check(&self, name: &str, path: &mut Vec<String>) -> Result<(), AgentError> {
        if path.iter().any(|n| n == name) {
            path.push(name.to_owned());
            return Err(AgentError::DelegationCycle(path.join(" → ")));
        }
        let agent = self.agent(name)?;
        let plan = Plan::read(&self.blueprints[&agent.blueprint])?;
        self.tool_set(agent)?;
        path.push(name.to_owned());
        for helper in &plan.delegates {
            self.check(helper, path)?;
        }
        path.pop();
        Ok(())
    }

    /// Builds the agent `name`, its history kept in `transcripts` (its helpers' in memory).
    ///
    /// # Errors
    /// The agent, or one of its helpers, does not check.
    pub fn build(
        &self,
        name: &str,
        models: impl Into<Models>,
        transcripts: Arc<dyn TranscriptStore>,
    ) -> Result<AgentGraph, AgentError> {
        self.build_with_fields(name, models, transcripts, Vec::new())
    }

    /// Builds the agent `name` on a state that carries the application's own fields `F`
    /// beside the turn's ([`TurnState::fields`](crate::TurnState::fields)), with `tools` that
    /// read them and change them by their update, offered beside the agent's own tools and
    /// under the same rules. The fields stay with the thread a turn runs on.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use trellis::GraphState;
    /// use trellis_agent::{
    ///     Catalogue, ModelResponse, ScriptedModel, StateTool, ToolCall, ToolError, ToolOutput,
    ///     ToolSpec, transcript::InMemoryTranscripts,
    /// };
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    ///
    /// /// What the application keeps about the person it talks to.
    /// #[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize, GraphState)]
    /// struct Profile {
    ///     name: Option<String>,
    ///     birthday: Option<String>,
    /// }
    ///
    /// /// Records what the model learnt: a typed update of the profile, and a text result.
    /// struct Remember;
    ///
    /// #[trellis_agent::async_trait]
    /// impl StateTool<Profile> for Remember {
    ///     fn spec(&self) -> ToolSpec {
    ///         ToolSpec::new("remember", "Records a person's name and birthday.", serde_json::json!({
    ///             "type": "object",
    ///             "properties": {"name": {"type": "string"}, "birthday": {"type": "string"}},
    ///             "required": ["name", "birthday"],
    ///             "additionalProperties": false
    ///         }))
    ///     }
    ///
    ///     async fn call(&self, arguments: serde_json::Value, _: &Profile)
    ///         -> Result<ToolOutput<ProfileUpdate>, ToolError> {
    ///         let text = |key: &str| arguments[key].as_str().unwrap_or_default().to_owned();
    ///         let update = ProfileUpdate::default().name(Some(text("name"))).birthday(Some(text("birthday")));
    ///         Ok(ToolOutput::text("recorded").with_update(update))
    ///     }
    /// }
    ///
    /// let model = ScriptedModel::new()
    ///     .call(ToolCall::new("call_1", "remember", r#"{"name": "Ada", "birthday": "10 December"}"#))
    ///     .answer("Noted, Ada.");
    /// let agent = Catalogue::shipped()?.build_with_fields(
    ///     "assistant",
    ///     model,
    ///     Arc::new(InMemoryTranscripts::new()),
    ///     vec![Arc::new(Remember) as Arc<dyn StateTool<Profile>>],
    /// )?;
    /// let outcome = agent.start("I am Ada, born on 10 December.").await?;
    /// assert_eq!(outcome.answer.as_deref(), Some("Noted, Ada."));
    /// assert_eq!(outcome.fields.birthday.as_deref(), Some("10 December"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// The agent, or one of its helpers, does not check; a tool's name is taken or its schema
    /// cannot be checked in full.
    pub fn build_with_fields<F: AgentFields>(
        &self,
        name: &str,
        models: impl Into<Models>,
        transcripts: Arc<dyn TranscriptStore>,
        tools: Vec<Arc<dyn StateTool<F>>>,
    ) -> Result<AgentGraph<F>, AgentError> {
        self.check(name, &mut Vec::new())?;
        self.assemble(name, &models.into(), Some(transcripts), tools)
    }

    fn assemble<F: AgentFields>(
        &self,
        name: &str,
        models: &Models,
        transcripts: Option<Arc<dyn TranscriptStore>>,
        state_tools: Vec<Arc<dyn StateTool<F>>>,
    ) -> Result<AgentGraph<F>, AgentError> {
        let agent = self.agent(name)?;
        let blueprint = self.blueprints[&agent.blueprint].clone();
        let mut tools = self.tool_set(agent)?;
        let mut declared = BTreeMap::new();
        for tool in state_tools {
            let spec = tool.spec();
            tools.add(Declared(spec.clone()))?;
            declared.insert(spec.name, tool);
        }
        let state_tools = declared;
        let mut helpers = Vec::new();
        for helper in Plan::read(&blueprint)?.delegates {
            let graph = self.assemble(&helper, models, None, Vec::new())?;
            let description = self.agent(&helper)?.description.clone();
            helpers.push((helper, graph, description));
        }
        turn::build(turn::Parts {
            name: agent.name.clone(),
            prompt: agent.prompt.clone(),
            blueprint,
            approve_tools: agent.approve_tools,
            model: models.of(name),
            tools,
            transcripts,
            helpers,
            state_tools,
        })
    }

    fn agent(&self, name: &str) -> Result<&AgentDefinition, AgentError> {
        self.agents
            .get(name)
            .ok_or_else(|| AgentError::UnknownAgent {
                name: name.to_owned(),
                known: self.agents.keys().cloned().collect(),
            })
    }

    fn tool_set(&self, agent: &AgentDefinition) -> Result<ToolSet, AgentError> {
        let mut set = ToolSet::new();
        for name in &agent.tools {
            let tool = self
                .tools
                .get(name)
                .ok_or_else(|| AgentError::UnknownTool {
                    agent: agent.name.clone(),
                    tool: name.clone(),
                    known: self.tools.keys().cloned().collect(),
                })?;
            set.add_shared(Arc::clone(tool))?;
        }
        Ok(set)
    }
}
