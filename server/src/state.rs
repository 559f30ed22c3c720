//! What every request handler shares: the graphs, the agents and the store, and the queries
//! over the store that REST and JSON-RPC both answer.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use trellis::RunId;
use trellis::checkpoint::{Checkpoint, RunQueue, RunRecord, RunStatus};
use trellis_agent::AgentCard;

use crate::error::ApiError;
use crate::registry::Served;

/// The server's shared state.
pub(crate) struct App {
    pub(crate) graphs: BTreeMap<String, Arc<dyn Served>>,
    pub(crate) agents: BTreeMap<String, AgentCard>,
    pub(crate) store: Arc<dyn RunQueue>,
    /// When the server was built: its assistants' creation time.
    pub(crate) started: trellis::run::Timestamp,
    /// Cancelled when the server stops: its event streams end then, rather than hold its
    /// shutdown open for as long as a page stays open.
    pub(crate) stopping: trellis::run::CancellationToken,
}

/// A graph definition, as listed.
#[derive(Debug, Serialize)]
pub(crate) struct Definition {
    pub(crate) name: String,
    pub(crate) doc: Option<String>,
    /// The agent this graph runs, if it is an agent's.
    pub(crate) agent: Option<String>,
    pub(crate) blueprint: trellis::blueprint::Blueprint,
    pub(crate) mermaid: String,
    /// The topology's version (its fingerprint), as each checkpoint records it.
    pub(crate) version: String,
}

/// Which runs to list.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct RunFilter {
    pub(crate) graph: Option<String>,
    pub(crate) status: Option<String>,
    /// Only the runs started on this thread (read through the thread's own index).
    pub(crate) thread: Option<String>,
    /// Only the subgraph runs under this run (`<parent>/…`, at any depth).
    pub(crate) parent: Option<String>,
    /// Subgraph runs listed under their top-level run (`subgraphs`, oldest first) rather than
    /// beside it.
    #[serde(default)]
    pub(crate) subgraphs: bool,
    pub(crate) limit: Option<usize>,
    pub(crate) offset: Option<usize>,
    /// Whether each run comes with its state (`false` by default: a page of runs is a list to
    /// choose from, and states can be large — a page of fifty once weighed 2 MB).
    #[serde(default)]
    pub(crate) state: bool,
}

impl RunFilter {
    /// Whether `run` is one this filter lists (paging aside). With `subgraphs`, a subgraph
    /// run is not: it is listed under its parent.
    fn keeps(&self, run: &RunRecord, status: Option<RunStatus>) -> bool {
        let id = run.run_id.as_str();
        self.graph.as_ref().is_none_or(|g| &run.graph == g)
            && status.is_none_or(|s| run.status == s)
            && self.parent.as_ref().is_none_or(|parent| {
                id.strip_prefix(parent.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
            })
            && !(self.subgraphs && self.parent.is_none() && id.contains('/'))
    }
}

/// The top-level run a subgraph run belongs to (its id's first segment).
fn root_of(run_id: &str) -> Option<&str> {
    run_id.split_once('/').map(|(root, _)| root)
}

/// The most runs one page lists.
const MAX_PAGE: usize = 500;

impl App {
    pub(crate) fn definitions(&self) -> Vec<Definition> {
        self.graphs
            .values()
            .map(|g| self.definition(g.as_ref()))
            .collect()
    }

    pub(crate) fn definition(&self, graph: &dyn Served) -> Definition {
        let blueprint = graph.blueprint();
        Definition {
            name: graph.name().to_owned(),
            doc: blueprint.doc.clone(),
            agent: self
                .agents
                .contains_key(graph.name())
                .then(|| graph.name().to_owned()),
            mermaid: trellis::blueprint::export::to_mermaid(&blueprint),
            blueprint,
            version: graph.version(),
        }
    }

    pub(crate) fn graph(&self, name: &str) -> Result<&Arc<dyn Served>, ApiError> {
        self.graphs.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.graphs.keys().map(String::as_str).collect();
            ApiError::not_found(format!(
                "no graph is named `{name}` (there are: {})",
                known.join(", ")
            ))
        })
    }

    pub(crate) fn agent(&self, name: &str) -> Result<&AgentCard, ApiError> {
        self.agents.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.agents.keys().map(String::as_str).collect();
            ApiError::not_found(format!(
                "no agent is named `{name}` (there are: {})",
                known.join(", ")
            ))
        })
    }

    pub(crate) async fn run(&self, run_id: &str) -> Result<RunRecord, ApiError> {
        self.store
            .load_run(&RunId::from(run_id))
            .await?
            .ok_or_else(|| ApiError::not_found(format!("no run is named `{run_id}`")))
    }

    /// Runs newest first, filtered, paged after filtering: each a summary (the record without
    /// its `state`) unless the filter asks for states; with `subgraphs`, each with its
    /// subgraph runs under `subgraphs`.
    pub(crate) async fn runs(&self, filter: &RunFilter) -> Result<Vec<Value>, ApiError> {
        let (runs, mut children) = self.records(filter).await?;
        let shown = |run: RunRecord| {
            let mut run = serde_json::to_value(run)
                .map_err(|e| ApiError::internal(format!("a run record as JSON: {e}")))?;
            if !filter.state
                && let Some(fields) = run.as_object_mut()
            {
                fields.remove("state");
            }
            Ok::<_, ApiError>(run)
        };
        runs.into_iter()
            .map(|run| {
                let under = children.remove(run.run_id.as_str());
                let mut shown_run = shown(run)?;
                if filter.subgraphs
                    && let Some(fields) = shown_run.as_object_mut()
                {
                    // Seen newest first; listed in the order they ran.
                    let under = under.unwrap_or_default().into_iter().rev();
                    let under = under.map(shown).collect::<Result<Vec<_>, _>>()?;
                    fields.insert("subgraphs".to_owned(), Value::Array(under));
                }
                Ok(shown_run)
            })
            .collect()
    }

    /// The page of runs `filter` lists, and (with `subgraphs`) the subgraph runs seen on the
    /// way by their top-level run: a subgraph run is made after its parent, so listed newest
    /// first it comes before it, and every child of a run on the page has been seen by then.
    async fn records(
        &self,
        filter: &RunFilter,
    ) -> Result<(Vec<RunRecord>, BTreeMap<String, Vec<RunRecord>>), ApiError> {
        let status = match filter.status.as_deref() {
            None => None,
            Some(text) => Some(parse_status(text)?),
        };
        if let Some(graph) = &filter.graph {
            self.graph(graph)?;
        }
        let limit = filter.limit.unwrap_or(50).min(MAX_PAGE);
        let mut skip = filter.offset.unwrap_or(0);
        let mut out = Vec::new();
        let mut children: BTreeMap<String, Vec<RunRecord>> = BTreeMap::new();
        if filter.subgraphs && filter.thread.is_some() {
            // A thread's index holds its own runs, not their subgraphs'.
            return Err(ApiError::bad_request(
                "`subgraphs` nests subgraph runs in the list of all runs; for a thread's run, ask for `parent=RUN`",
            ));
        }
        let thread = match &filter.thread {
            None => None,
            Some(text) => Some(
                trellis::ThreadId::parse(text)
                    .map_err(|error| ApiError::bad_request(format!("`thread`: {error}")))?,
            ),
        };
        let mut from = 0;
        // All runs, or a thread's through its index, newest first; filters are applied here,
        // a page at a time.
        loop {
            let page = match &thread {
                Some(thread) => self.store.thread_runs(thread, MAX_PAGE, from).await?,
                None => self.store.list_runs(MAX_PAGE, from).await?,
            };
            let done = page.len() < MAX_PAGE;
            from += page.len();
            for run in page {
                if !filter.keeps(&run, status) {
                    if filter.subgraphs
                        && let Some(root) = root_of(run.run_id.as_str())
                    {
                        children.entry(root.to_owned()).or_default().push(run);
                    }
                    continue;
                }
                if skip > 0 {
                    skip -= 1;
                } else if out.len() < limit {
                    out.push(run);
                }
            }
            if done || out.len() >= limit {
                return Ok((out, children));
            }
        }
    }

    pub(crate) async fn checkpoints(&self, run_id: &str) -> Result<Vec<Checkpoint>, ApiError> {
        let run = self.run(run_id).await?;
        Ok(self.store.list_checkpoints(&run.run_id).await?)
    }

    /// Queues a run of `graph` on `input`; a worker executes it.
    pub(crate) async fn create(&self, graph: &str, input: Value) -> Result<RunRecord, ApiError> {
        let served = self.graph(graph)?;
        let run_id = served.enqueue(input).await?;
        tracing::info!(target: "trellis_server", %run_id, graph, "run created");
        self.run(run_id.as_str()).await
    }

    /// Answers a paused run's interrupts: `answers` by interrupt id, or one `answer` with the
    /// `interrupt_id` it answers. Always by id: an answer meant for one question must never
    /// land on the next (an approve and a reject sent together would otherwise answer two).
    /// A question no longer asked is a 409 that names the ones asked now. Nothing is written
    /// when anything is wrong (the runtime checks the run is paused and the answers match its
    /// interrupts: one rule, in one place).
    pub(crate) async fn resume(&self, run_id: &str, body: &Value) -> Result<RunRecord, ApiError> {
        let run = self.run(run_id).await?;
        let served = self.graph(&run.graph)?;
        let answers: Vec<(String, Value)> = match (
            body.get("answers"),
            body.get("answer"),
            body.get("interrupt_id"),
        ) {
            (Some(Value::Object(by_id)), None, None) => by_id
                .iter()
                .map(|(id, a)| (id.clone(), a.clone()))
                .collect(),
            (None, Some(answer), Some(Value::String(id))) => vec![(id.clone(), answer.clone())],
            (None, Some(_), None) => {
                return Err(ApiError::bad_request(format!(
                    "say which question `answer` answers: `interrupt_id`, one of the run's `interrupts` ({})",
                    asked(&run)
                )));
            }
            _ => {
                return Err(ApiError::bad_request(
                    "give `answer` with the `interrupt_id` it answers, or `answers` (an object by interrupt id)",
                ));
            }
        };
        if run.status == RunStatus::Paused {
            self.still_asked(&run, &answers)?;
        }
        if let Err(error) = served.answer(&run.run_id, answers.clone()).await {
            // Between the read and the write the run may have moved on to another question.
            if let Ok(now) = self.run(run_id).await
                && now.status == RunStatus::Paused
                && let Err(moved_on) = self.still_asked(&now, &answers)
            {
                return Err(moved_on);
            }
            return Err(self.lost_race(&run, "answered", error).await);
        }
        tracing::info!(target: "trellis_server", run_id, "run answered");
        self.run(run_id).await
    }

    /// A 409 when an answer is to a question `run` does not ask (any more).
    fn still_asked(&self, run: &RunRecord, answers: &[(String, Value)]) -> Result<(), ApiError> {
        match answers
            .iter()
            .find(|(id, _)| !run.interrupts.iter().any(|asked| asked.id == *id))
        {
            Some((id, _)) => Err(ApiError::conflict(format!(
                "run {} does not ask `{id}` (now it asks {}): nothing was answered",
                run.run_id,
                asked(run)
            ))),
            None => Ok(()),
        }
    }

    /// A refusal of `action` on `before` (the run as read first) that another request changed
    /// meanwhile (a cancel beside a resume, two resumes): a 409 that says where the run stands
    /// now. Any other error passes as it is.
    async fn lost_race(&self, before: &RunRecord, action: &str, error: ApiError) -> ApiError {
        if error.status != 409 {
            return error;
        }
        let run_id = before.run_id.as_str();
        match self.run(run_id).await {
            Ok(now) if now.status != before.status => ApiError::conflict(format!(
                "run {run_id} is {} now, and was not {action}: {error}",
                now.status
            )),
            _ => error,
        }
    }

    /// Retries a failed or cancelled run from its last committed checkpoint: queued for the
    /// workers, or paused again when it ended while paused.
    pub(crate) async fn retry(&self, run_id: &str) -> Result<RunRecord, ApiError> {
        let run = self.run(run_id).await?;
        let served = self.graph(&run.graph)?;
        if let Err(error) = served.retry(&run.run_id).await {
            return Err(self.lost_race(&run, "retried", error).await);
        }
        tracing::info!(target: "trellis_server", run_id, "run retried");
        self.run(run_id).await
    }

    /// Cancels a run that has not ended: queued, paused, or executing (its worker is fenced
    /// out at its next checkpoint). The record says why.
    pub(crate) async fn cancel(&self, run_id: &str) -> Result<RunRecord, ApiError> {
        let run_id = RunId::from(run_id);
        let reason = "cancelled by a request to the server";
        let cancelled = trellis::run::cancel_stored(self.store.as_ref(), &run_id, reason).await?;
        tracing::info!(target: "trellis_server", %run_id, "run cancelled");
        Ok(cancelled)
    }

    /// Waits until the run is no longer running (paused, completed, failed), at most `timeout`.
    pub(crate) async fn wait(
        &self,
        run_id: &str,
        timeout: Duration,
    ) -> Result<RunRecord, ApiError> {
        let until = tokio::time::Instant::now() + timeout;
        // Watched before the first read: a write between the read and the wait still wakes it.
        let mut watch = self
            .store
            .changes()
            .map(|changes| changes.watch_run(&RunId::from(run_id)));
        loop {
            let run = self.run(run_id).await?;
            let now = tokio::time::Instant::now();
            if run.status != RunStatus::Running || now >= until {
                return Ok(run);
            }
            match &mut watch {
                // Woken by the writes the store announces; anything else is read a while later.
                Some(watch) => {
                    let wait = (until - now).min(crate::events::LOOK_AGAIN);
                    let _ = tokio::time::timeout(wait, watch.changed()).await;
                }
                None => tokio::time::sleep(Duration::from_millis(25)).await,
            }
        }
    }
}

/// The ids of the questions `run` asks, for a message.
fn asked(run: &RunRecord) -> String {
    if run.interrupts.is_empty() {
        return "nothing".to_owned();
    }
    run.interrupts
        .iter()
        .map(|interrupt| format!("`{}`", interrupt.id))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn parse_status(text: &str) -> Result<RunStatus, ApiError> {
    RunStatus::parse(text).ok_or_else(|| {
        ApiError::bad_request(format!(
            "`{text}` is not a status: running, paused, completed, failed or cancelled"
        ))
    })
}
