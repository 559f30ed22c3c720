//! An agent turn as a graph: a blueprint whose nodes do what their kinds say, over a small
//! state, with the history in a live turn owned by the run.

use std::collections::BTreeMap;
use std::sync::Arc;

use trellis::blueprint::{Blueprint, InterruptPoint, NodeKind};
use trellis::checkpoint::SharedCheckpointer;
use trellis::{CompiledGraph, GraphBuilder, Outcome, RunId, Visits, interrupt::Interrupt};

use crate::error::AgentError;
use crate::message::{Message, Usage};
use crate::model::Model;
use crate::tool::ToolSet;
use crate::tool_node::StateTools;
use crate::transcript::{InMemoryTranscripts, TranscriptStore};

mod delegate;
mod live;
mod nodes;
mod plan;
mod review;
pub(crate) mod safety;
mod state;

pub use state::{AgentFields, Next, NoFields, TurnAnswer, TurnState, TurnStateUpdate};

pub(crate) use delegate::helper_tool;
use live::Bridge;
pub(crate) use live::EARLIER_TURN;
use nodes::{KindNode, Shared};
pub(crate) use plan::Plan;

/// An agent, built: its graph, and the live turns of its runs; `F` is the application's own
/// fields its state carries ([`NoFields`] unless built with
/// [`Catalogue::build_with_fields`](crate::Catalogue::build_with_fields)).
///
/// [`start`](Self::start) and [`resume`](Self::resume) cover the usual path;
/// [`graph`](Self::graph) is the compiled graph itself, for streaming, workers and servers
/// (a run started there with [`TurnState::new`] is the same turn).
pub struct AgentGraph<F: AgentFields = NoFields> {
    name: String,
    graph: CompiledGraph<TurnState<F>>,
    shared: Arc<Shared<F>>,
}

impl<F: AgentFields> Clone for AgentGraph<F> {
    fn clone(&self) -> Self {
        AgentGraph {
            name: self.name.clone(),
            graph: self.graph.clone(),
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<F: AgentFields> std::fmt::Debug for AgentGraph<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentGraph")
            .field("agent", &self.name)
            .finish_non_exhaustive()
    }
}

/// How a turn ended, or where it paused.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome<F: AgentFields = NoFields> {
    /// The run.
    pub run_id: RunId,
    /// The final answer, when the turn finished with one.
    pub answer: Option<String>,
    /// Why the turn finished without an answer.
    pub stopped: Option<String>,
    /// What the paused turn asks; empty when it finished.
    pub interrupts: Vec<Interrupt>,
    /// Tokens used over the turn.
    pub usage: Usage,
    /// Model answers checked.
    pub iterations: u32,
    /// The application's fields, as the turn left them.
    pub fields: F,
}

impl<F: AgentFields> TurnOutcome<F> {
    /// Whether the turn waits for a person.
    pub fn is_paused(&self) -> bool {
        !self.interrupts.is_empty()
    }

    fn of(outcome: Outcome<TurnState<F>>) -> Self {
        let state = outcome.state();
        TurnOutcome {
            run_id: outcome.run_id().clone(),
            answer: state.answer.clone(),
            stopped: state.stopped.clone(),
            interrupts: outcome.interrupts().to_vec(),
            usage: Usage {
                input_tokens: state.input_tokens,
                output_tokens: state.output_tokens,
            },
            iterations: state.iterations,
            fields: state.fields.clone(),
        }
    }
}

impl<F: AgentFields> AgentGraph<F> {
    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The compiled graph the turns run on.
    pub fn graph(&self) -> &CompiledGraph<TurnState<F>> {
        &self.graph
    }

    /// Records the graph's runs in `checkpointer` (the transcripts go to the store given at
    /// build time): a paused turn can then be resumed by another process.
    #[must_use]
    pub fn with_checkpointer<C: SharedCheckpointer + ?Sized>(
        mut self,
        checkpointer: Arc<C>,
    ) -> Self {
        self.graph = self.graph.with_checkpointer(checkpointer);
        self
    }

    /// The state a turn on `input` starts from, with the fields' defaults.
    pub fn input(&self, input: &str) -> TurnState<F> {
        TurnState::with_fields(self.name.clone(), input, F::default())
    }

    /// A turn on `input` on a thread of this agent's graph: the update a new run on the thread
    /// starts with (`graph().thread(…).invoke(agent.next_turn("…"))`). The turn's own counts,
    /// answer and questions start afresh; its history goes on from the thread's earlier turns,
    /// so the model reads the whole conversation.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use trellis::checkpoint::InMemoryCheckpointer;
    /// use trellis_agent::{Catalogue, ModelResponse, ScriptedModel};
    /// use trellis_agent::transcript::InMemoryTranscripts;
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    ///
    /// // The second answer says whether the model was told the first message.
    /// let model = ScriptedModel::new().answer("Hello, Ada.").step(|request| {
    ///     let told = request.messages.iter().any(|m| m.text() == Some("I am Ada."));
    ///     Ok(ModelResponse::text(if told { "You are Ada." } else { "I do not know." }))
    /// });
    /// let agent = Catalogue::shipped()?
    ///     .build("assistant", model, Arc::new(InMemoryTranscripts::new()))?
    ///     .with_checkpointer(Arc::new(InMemoryCheckpointer::new()));
    /// let thread = agent.graph().create_thread(Default::default()).await?;
    /// thread.invoke(agent.next_turn("I am Ada.")).await?;
    /// let second = thread.invoke(agent.next_turn("Who am I?")).await?;
    /// assert_eq!(second.state().answer.as_deref(), Some("You are Ada."));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn next_turn(&self, input: &str) -> TurnStateUpdate<F> {
        TurnStateUpdate::default()
            .agent(self.name.clone())
            .input(input.to_owned())
            .iterations(0_u32)
            .reviews(0_u32)
            .pending(Vec::new())
            .next(None)
            .answer(None)
            .stopped(None)
            .last_output(None)
            .repeats(0_u32)
            .awaiting(None)
            .reply(None)
    }

    /// Runs a turn on `input` to its answer, its stop, or its first pause.
    ///
    /// # Errors
    /// [`AgentError::Failed`] when the run fails (a model error after the dispatch node's
    /// retries, a transcript store error, a step limit), with the run's id.
    pub async fn start(&self, input: &str) -> Result<TurnOutcome<F>, AgentError> {
        self.start_from(self.input(input)).await
    }

    /// Runs a turn from `state` ([`TurnState::with_fields`]: the input with the application's
    /// fields as they stand) to its answer, its stop, or its first pause.
    ///
    /// # Errors
    /// As [`start`](Self::start).
    pub async fn start_from(&self, state: TurnState<F>) -> Result<TurnOutcome<F>, AgentError> {
        Ok(TurnOutcome::of(self.graph.invoke(state).await?))
    }

    /// Resumes a paused turn with a person's answer.
    ///
    /// # Errors
    /// As [`CompiledGraph::resume`]: no such run, a run not paused, a run of another graph.
    pub async fn resume(
        &self,
        run_id: &RunId,
        answer: impl Into<TurnAnswer>,
    ) -> Result<TurnOutcome<F>, AgentError> {
        Ok(TurnOutcome::of(
            self.graph.resume(run_id, answer.into()).await?,
        ))
    }

    /// The run's history as the model reads it (each call's result right after it).
    ///
    /// # Errors
    /// The transcript store's error.
    pub async fn transcript(&self, run_id: &RunId) -> Result<Vec<Message>, AgentError> {
        let entries = self.shared.bridge.store.load(run_id).await?;
        Ok(live::assemble(&entries))
    }
}

/// What building an agent graph needs.
pub(crate) struct Parts<F: AgentFields> {
    pub(crate) name: String,
    pub(crate) prompt: String,
    pub(crate) blueprint: Blueprint,
    pub(crate) approve_tools: bool,
    pub(crate) model: Arc<dyn Model>,
    pub(crate) tools: ToolSet,
    pub(crate) transcripts: Option<Arc<dyn TranscriptStore>>,
    pub(crate) helpers: Vec<(String, AgentGraph, String)>,
    /// Tools on the application's fields, advertised with `tools` (declared there too).
    pub(crate) state_tools: StateTools<F>,
}

/// Builds the graph of an agent from its blueprint.
pub(crate) fn build<F: AgentFields>(parts: Parts<F>) -> Result<AgentGraph<F>, AgentError> {
    let mut blueprint = parts.blueprint;
    let mut plan = Plan::read(&blueprint)?;
    if parts.approve_tools && !plan.approve_every_batch(&blueprint) {
        // No `hitl` node asks for every batch: `interrupt before` on every tools node.
        for node in &mut blueprint.nodes {
            if node.kind == Some(NodeKind::Tools) {
                node.interrupt = Some(InterruptPoint::Before);
                node.question
                    .get_or_insert_with(|| "Run the model's tool calls?".to_owned());
            }
        }
    }
    let name = blueprint.name.clone();
    // Runs are recorded under the agent's name, not the blueprint's: agents sharing a blueprint
    // are different graphs to a store, a worker's queue and a UI.
    blueprint.name.clone_from(&parts.name);
    let mut advertised = if plan.runs_tools {
        parts.tools.specs()
    } else {
        Vec::new()
    };
    let mut helpers = BTreeMap::new();
    for (name, graph, description) in parts.helpers {
        advertised.push(helper_tool(&name, &description));
        helpers.insert(name, graph);
    }
    let store = parts
        .transcripts
        .unwrap_or_else(|| Arc::new(InMemoryTranscripts::new()));
    let branching = Arc::new(crate::transcript::BranchTranscripts(Arc::clone(&store)));
    let shared = Arc::new(Shared {
        bridge: Bridge::new(parts.prompt.into(), parts.model, parts.tools, store),
        helpers,
        advertised,
        state_tools: parts.state_tools,
    });
    let roles = plan.roles.clone();
    let routes = plan.routes;
    let graph = GraphBuilder::<TurnState<F>>::from_blueprint(
        blueprint,
        |at, _| KindNode {
            role: roles[at].clone(),
            shared: Arc::clone(&shared),
        },
        |edge, _| {
            let table = routes[edge].clone();
            move |state: &TurnState<F>, _: &Visits<'_>| -> String {
                table
                    .iter()
                    .find(|(next, _)| Some(*next) == state.next)
                    .map(|(_, target)| target.clone())
                    .unwrap_or_default()
            }
        },
    )
    .compile()
    .map_err(|error| AgentError::Blueprint {
        blueprint: name,
        message: error.to_string(),
    })?
    .with_branching(branching);
    Ok(AgentGraph {
        name: parts.name,
        graph,
        shared,
    })
}
