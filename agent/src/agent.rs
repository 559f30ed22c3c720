//! Agents and their catalogue: an agent is a prompt (what it says), a blueprint (how it runs)
//! and its tools. The catalogue holds blueprints, tools and agents, checks every agent against
//! them, lists them for UIs, and builds an agent's graph.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::blueprint::Blueprint;

use crate::blueprints;
use crate::error::AgentError;
use crate::model::Model;
use crate::tool::{Tool, ToolSet, ToolSpec};
use crate::toolbox::{Calculator, ListFiles};
use crate::transcript::TranscriptStore;
use crate::turn::{self, AgentGraph, Plan};

/// An agent, as written: a prompt, the blueprint it runs on, and the tools it may call.
///
/// Agents are usually written as text with a header (see [`AgentDefinition::parse`]):
///
/// ```text
/// ---
/// name: assistant
/// description: Answers questions, computing and reading file lists as needed.
/// blueprint: canonical_turn
/// tools: calculator, list_files
/// ---
/// You are a careful assistant. Use the tools for anything you would otherwise guess.
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentDefinition {
    /// Its name (`[a-z0-9_-]`): how runs, UIs and orchestrators name it.
    pub name: String,
    /// What it is for, one line (an orchestrator reads it too).
    pub description: String,
    /// The blueprint it runs on, by catalogue name (`canonical_turn`).
    pub blueprint: String,
    /// Its tools, by name.
    pub tools: Vec<String>,
    /// Whether a person approves every batch of tool calls (`interrupt before` each `tools`
    /// node), not only those with side effects.
    pub approve_tools: bool,
    /// The system prompt.
    pub prompt: String,
}

impl AgentDefinition {
    /// Reads a definition: a header between `---` lines (`name`, `blueprint`, and optionally
    /// `description`, `tools` as a comma-separated list, `approve_tools: true`), then the prompt.
    ///
    /// # Errors
    /// [`AgentError::Definition`] naming `origin` and the line.
    pub fn parse(origin: &str, text: &str) -> Result<Self, AgentError> {
        let fail = |line: usize, message: String| AgentError::Definition {
            origin: origin.to_owned(),
            line,
            message,
        };
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, first)) if first.trim() == "---" => {}
            _ => {
                return Err(fail(
                    1,
                    "a definition starts with a `---` line, then its header".into(),
                ));
            }
        }
        let mut fields: BTreeMap<&str, (usize, String)> = BTreeMap::new();
        let mut body_from = None;
        for (at, line) in lines.by_ref() {
            if line.trim() == "---" {
                body_from = Some(at + 1);
                break;
            }
            if line.trim().is_empty() {
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                return Err(fail(
                    at + 1,
                    format!("expected `key: value`, found `{}`", line.trim()),
                ));
            };
            let key = key.trim();
            const KEYS: [&str; 5] = ["name", "description", "blueprint", "tools", "approve_tools"];
            let Some(key) = KEYS.iter().find(|k| **k == key) else {
                return Err(fail(
                    at + 1,
                    format!("unknown key `{key}` (the keys are: {})", KEYS.join(", ")),
                ));
            };
            if fields
                .insert(key, (at + 1, value.trim().to_owned()))
                .is_some()
            {
                return Err(fail(at + 1, format!("`{key}` is given twice")));
            }
        }
        let Some(body_from) = body_from else {
            return Err(fail(
                text.lines().count(),
                "the header is not closed by a `---` line".into(),
            ));
        };
        let header_end = body_from;
        let take = |key: &str| fields.get(key).map(|(_, v)| v.clone());
        let name =
            take("name").ok_or_else(|| fail(header_end, "the header has no `name`".into()))?;
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
        {
            let line = fields.get("name").map_or(header_end, |(l, _)| *l);
            return Err(fail(line, format!("`{name}` is not a name of [a-z0-9_-]")));
        }
        let blueprint = take("blueprint")
            .ok_or_else(|| fail(header_end, "the header has no `blueprint`".into()))?;
        let tools = take("tools")
            .map(|list| {
                list.split(',')
                    .map(|t| t.trim().to_owned())
                    .filter(|t| !t.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let approve_tools = match fields.get("approve_tools") {
            None => false,
            Some((_, v)) if v == "true" => true,
            Some((_, v)) if v == "false" => false,
            Some((line, v)) => {
                return Err(fail(
                    *line,
                    format!("`approve_tools` is true or false, not `{v}`"),
                ));
            }
        };
        let prompt: String = text
            .lines()
            .skip(body_from)
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_owned();
        if prompt.is_empty() {
            return Err(fail(
                header_end,
                "the prompt after the header is empty".into(),
            ));
        }
        Ok(AgentDefinition {
            name,
            description: take("description").unwrap_or_default(),
            blueprint,
            tools,
            approve_tools,
            prompt,
        })
    }
}

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
    /// Whether a person approves every batch of tool calls.
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
        self.check(name, &mut Vec::new())?;
        self.assemble(name, &models.into(), Some(transcripts))
    }

    fn assemble(
        &self,
        name: &str,
        models: &Models,
        transcripts: Option<Arc<dyn TranscriptStore>>,
    ) -> Result<AgentGraph, AgentError> {
        let agent = self.agent(name)?;
        let blueprint = self.blueprints[&agent.blueprint].clone();
        let mut helpers = Vec::new();
        for helper in Plan::read(&blueprint)?.delegates {
            let graph = self.assemble(&helper, models, None)?;
            let description = self.agent(&helper)?.description.clone();
            helpers.push((helper, graph, description));
        }
        turn::build(turn::Parts {
            name: agent.name.clone(),
            prompt: agent.prompt.clone(),
            blueprint,
            approve_tools: agent.approve_tools,
            model: models.of(name),
            tools: self.tool_set(agent)?,
            transcripts,
            helpers,
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

#[cfg(test)]
mod tests {
    use super::AgentDefinition;

    #[test]
    fn a_definition_reads_its_header_and_prompt() {
        let text = "---\nname: clerk\nblueprint: canonical_turn\ntools: calculator , list_files\n---\nBe brief.\n";
        let agent = AgentDefinition::parse("clerk.md", text).expect("parses");
        assert_eq!(agent.tools, ["calculator", "list_files"]);
        assert_eq!(agent.prompt, "Be brief.");
        assert!(!agent.approve_tools);
    }

    #[test]
    fn a_bad_definition_names_its_line() {
        let error = |text: &str| {
            AgentDefinition::parse("x.md", text)
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(
            error("---\nname: x\nblueprnt: canonical_turn\n---\nHi"),
            "agent definition x.md, line 3: unknown key `blueprnt` (the keys are: name, description, blueprint, tools, approve_tools)"
        );
        assert_eq!(
            error("---\nname: x\n---\nHi"),
            "agent definition x.md, line 3: the header has no `blueprint`"
        );
        assert_eq!(
            error("name: x"),
            "agent definition x.md, line 1: a definition starts with a `---` line, then its header"
        );
        assert_eq!(
            error("---\nname: x\nblueprint: b\napprove_tools: yes\n---\nHi"),
            "agent definition x.md, line 4: `approve_tools` is true or false, not `yes`"
        );
    }
}
