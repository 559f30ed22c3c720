//! Graph versions: what a stored run still needs of the graph that continues it, what blocks
//! it on another version, and renaming nodes in a stored run (an explicit migration).
//!
//! A run saved by one version of a graph is continued by another wherever nothing it needs
//! changed: the nodes it runs next, answers, waits at or hands a failure to still exist, in
//! the same role. [`blockers`] lists what does not hold, every item at once, so a refusal shows
//! the whole difference that blocks the run; [`rename`] rewrites a stored run's node names for
//! a graph whose nodes were renamed.

use std::collections::BTreeMap;
use std::fmt;

use crate::blueprint::{Blueprint, EdgeKind, Endpoint};
use crate::checkpoint::{Checkpoint, Checkpointer, Name, RunRecord, RunStatus};
use crate::errors::RunError;
use crate::graph::CompiledGraph;
use crate::id::{RunId, Timestamp};
use crate::interrupt::Interrupt;
use crate::state::GraphState;

/// What a stored run needs a node for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Need {
    /// It runs in the next step.
    Next,
    /// Its `interrupt before` was answered: it runs next without asking.
    Approved,
    /// It asked a question that waits for an answer.
    Question,
    /// The run pauses before or after it (a breakpoint the run was started with).
    Breakpoint,
    /// A branch was sent to it for the next step.
    Sent,
    /// The run waits at the join into it.
    Join,
    /// It failed, and its `on_error` handler runs next.
    OnError,
    /// It is a subgraph node whose child run was answered and goes on when it runs.
    Child,
}

impl Need {
    fn text(self) -> &'static str {
        match self {
            Need::Next => "runs next",
            Need::Approved => "runs next, its question answered",
            Need::Question => "asked the pending question",
            Need::Breakpoint => "has a breakpoint",
            Need::Sent => "was sent a branch",
            Need::Join => "is joined into, and the run waits at that join",
            Need::OnError => "failed, and its on_error handler runs next",
            Need::Child => "continues its answered subgraph run",
        }
    }
}

/// One thing a stored run needs that a graph does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Blocker {
    /// The node, as the run names it.
    pub node: String,
    /// What the run needs it for.
    pub need: Need,
    /// What the graph lacks.
    pub lacks: Lack,
}

/// What a graph lacks for a [`Blocker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lack {
    /// The node.
    Node,
    /// A join into the node.
    Join,
    /// The node's `on_error` handler.
    OnError,
}

impl fmt::Display for Blocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.lacks {
            Lack::Node => write!(f, "node `{}` ({}) is gone", self.node, self.need.text()),
            Lack::Join => write!(f, "node `{}` is no longer joined into", self.node),
            Lack::OnError => write!(f, "node `{}` no longer has an on_error handler", self.node),
        }
    }
}

/// Every node `checkpoint` (with the run's pending `interrupts`) names, with what for, in a
/// fixed order: the next step's, then what waits.
fn needs<'a>(
    checkpoint: &'a Checkpoint,
    interrupts: &'a [Interrupt],
) -> impl Iterator<Item = (&'a str, Need)> {
    let names = |names: &'a [Name], need: Need| names.iter().map(move |n| (&**n, need));
    names(&checkpoint.frontier, Need::Next)
        .chain(names(&checkpoint.approved, Need::Approved))
        .chain(interrupts.iter().map(|i| (i.node.as_str(), Need::Question)))
        .chain(names(&checkpoint.breakpoints.before, Need::Breakpoint))
        .chain(names(&checkpoint.breakpoints.after, Need::Breakpoint))
        .chain(checkpoint.sends.iter().map(|s| (&*s.node, Need::Sent)))
        .chain(checkpoint.joins.keys().map(|n| (&**n, Need::Join)))
        .chain(
            checkpoint
                .failures
                .iter()
                .map(|f| (f.node.as_str(), Need::OnError)),
        )
        .chain(checkpoint.children.keys().map(|n| (&**n, Need::Child)))
}

/// What keeps `blueprint` from continuing the run saved at `checkpoint` with `interrupts`
/// pending: empty when it can. Each node once, with the first thing it is needed for.
///
/// ```
/// use trellis::blueprint::{Blueprint, Node};
/// use trellis::versions::{Lack, blockers};
/// # let checkpoint: trellis::checkpoint::Checkpoint = serde_json::from_value(serde_json::json!({
/// #     "id": 3, "run_id": "r", "step": 2, "nodes": ["draft"], "label": "pause:before",
/// #     "state": {}, "frontier": ["send"], "visits": {}, "approved": [], "failures": [],
/// #     "graph_fingerprint": "0", "state_type": "T", "created_at": "2026-01-01T00:00:00Z"
/// # })).unwrap();
/// let mut renamed = Blueprint::new("Desk");
/// renamed.nodes = vec![Node::new("draft"), Node::new("deliver")];
/// let blocked = blockers(&renamed, &checkpoint, &[]);
/// assert_eq!(blocked.len(), 1);
/// assert_eq!(blocked[0].lacks, Lack::Node);
/// assert_eq!(blocked[0].to_string(), "node `send` (runs next) is gone");
/// ```
pub fn blockers(
    blueprint: &Blueprint,
    checkpoint: &Checkpoint,
    interrupts: &[Interrupt],
) -> Vec<Blocker> {
    let joined = |target: &str| {
        blueprint.edges.iter().any(|edge| {
            edge.kind == EdgeKind::Join
                && edge
                    .targets
                    .iter()
                    .any(|t| matches!(t, Endpoint::Node(n) if n == target))
        })
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut blocked = Vec::new();
    for (node, need) in needs(checkpoint, interrupts) {
        let lacks = match blueprint.node(node) {
            None => Lack::Node,
            Some(_) if need == Need::Join && !joined(node) => Lack::Join,
            Some(found) if need == Need::OnError && found.on_error.is_none() => Lack::OnError,
            Some(_) => continue,
        };
        if seen.contains(&node) {
            continue;
        }
        seen.push(node);
        blocked.push(Blocker {
            node: node.to_owned(),
            need,
            lacks,
        });
    }
    blocked
}

/// The blockers as one line: ``node `send` (runs next) is gone; …``.
pub fn describe(blocked: &[Blocker]) -> String {
    blocked
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Old node names → new ones, for a graph whose nodes were renamed.
pub type Renames = BTreeMap<String, String>;

/// Renames, in a stored run's checkpoint and record, every node `renames` names: what it runs
/// next, answers, waits at, was sent, visited, and its questions' nodes. A question's id
/// (`<node>@<step>`) stays as it was: it is the key an answer was or will be given by.
pub fn rename(checkpoint: &mut Checkpoint, record: &mut RunRecord, renames: &Renames) {
    if renames.is_empty() {
        return;
    }
    let name = |name: &mut Name| {
        if let Some(new) = renames.get(&**name) {
            *name = Name::from(new.as_str());
        }
    };
    let text = |text: &mut String| {
        if let Some(new) = renames.get(text.as_str()) {
            new.clone_into(text);
        }
    };
    let names = |names: &mut Vec<Name>| names.iter_mut().for_each(name);
    fn keys<V>(map: &mut BTreeMap<Name, V>, renames: &Renames) {
        *map = std::mem::take(map)
            .into_iter()
            .map(|(key, value)| match renames.get(&*key) {
                Some(new) => (Name::from(new.as_str()), value),
                None => (key, value),
            })
            .collect();
    }
    names(&mut checkpoint.nodes);
    names(&mut checkpoint.frontier);
    names(&mut checkpoint.approved);
    names(&mut checkpoint.breakpoints.before);
    names(&mut checkpoint.breakpoints.after);
    keys(&mut checkpoint.visits, renames);
    keys(&mut checkpoint.children, renames);
    let mut joins = std::mem::take(&mut checkpoint.joins);
    joins.values_mut().for_each(names);
    checkpoint.joins = joins;
    keys(&mut checkpoint.joins, renames);
    for failure in &mut checkpoint.failures {
        text(&mut failure.node);
    }
    for send in &mut checkpoint.sends {
        if let Some(new) = renames.get(&*send.node) {
            send.node = new.clone().into();
        }
    }
    for pending in &mut checkpoint.pending {
        name(&mut pending.node);
    }
    for interrupt in checkpoint
        .interrupts
        .iter_mut()
        .chain(&mut record.interrupts)
    {
        name(&mut interrupt.node);
        if let Some(to) = interrupt.request.resume_to.as_mut() {
            text(to);
        }
    }
    if let Some(last) = record.last_node.as_mut() {
        name(last);
    }
}

/// What [`CompiledGraph::migrate`] wrote (or, on a dry run, would write).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Migrated {
    /// The checkpoint written: the run's latest, its nodes renamed, as this graph's.
    pub checkpoint: u64,
    /// The fingerprint of the graph that saved the run before.
    pub from: Name,
}

impl<S: GraphState> CompiledGraph<S> {
    /// Moves a paused run saved by another version of this graph onto this one, with the
    /// nodes `renames` names renamed (old → new): checks that this graph has every node the
    /// run needs — what it runs next, the question it waits on, the join it waits at — and
    /// that its state reads as `S`, then writes its latest checkpoint again, renamed, as this
    /// graph's (a new checkpoint of the same label). The run is then resumed as any paused run.
    /// Nothing is written when something blocks it: the error names every blocker.
    ///
    /// A run whose graph changed elsewhere needs no migration: resuming it works as it is.
    ///
    /// # Errors
    /// The run is not this graph's or not paused; this graph lacks what the run needs
    /// ([`RunError::Unresumable`], naming each blocker); its state does not read as `S`; the
    /// store failed, or another process resumed the run meanwhile.
    pub async fn migrate(&self, run_id: &RunId, renames: &Renames) -> Result<Migrated, RunError> {
        let store = self.store_for(run_id)?;
        // The run must be this graph's (`WrongGraph` otherwise).
        self.record_of(store.as_ref(), run_id).await?;
        let reads_as_state = |checkpoint: &Checkpoint| {
            S::deserialize(&*checkpoint.state)
                .map(drop)
                .map_err(|source| RunError::State {
                    run_id: checkpoint.run_id.clone(),
                    action: "read from",
                    source,
                })
        };
        migrate_stored(
            store.as_ref(),
            run_id,
            renames,
            Some(self.blueprint()),
            Some(self.fingerprint()),
            &reads_as_state,
            false,
        )
        .await
    }
}

/// [`CompiledGraph::migrate`] on a store, for a tool that has no graph in hand (`trellis runs
/// migrate`): renames the paused run's nodes in its latest checkpoint; with `onto` (the new
/// version's blueprint), refuses it when the blueprint lacks what the run needs; with
/// `fingerprint` (the new version's), writes the checkpoint as that version's (otherwise it
/// keeps the one it had, and a resume says in a warning that the graph changed); `accept` may
/// refuse the renamed checkpoint too. A `dry_run` checks and writes nothing.
///
/// # Errors
/// As [`CompiledGraph::migrate`].
pub async fn migrate_stored(
    store: &dyn Checkpointer,
    run_id: &RunId,
    renames: &Renames,
    onto: Option<&Blueprint>,
    fingerprint: Option<&str>,
    accept: &(dyn Fn(&Checkpoint) -> Result<(), RunError> + Sync),
    dry_run: bool,
) -> Result<Migrated, RunError> {
    let mut record = store
        .load_run(run_id)
        .await?
        .ok_or_else(|| RunError::RunNotFound {
            run_id: run_id.clone(),
        })?;
    crate::graph::expect_status(&record, RunStatus::Paused)?;
    let run_id = record.run_id.clone();
    let mut checkpoint =
        store
            .latest_checkpoint(&run_id)
            .await?
            .ok_or_else(|| RunError::Unresumable {
                run_id: run_id.clone(),
                reason: "it has no checkpoint".to_owned(),
            })?;
    rename(&mut checkpoint, &mut record, renames);
    let from = checkpoint.graph_fingerprint.clone();
    if let Some(blueprint) = onto {
        let blocked = blockers(blueprint, &checkpoint, &record.interrupts);
        if !blocked.is_empty() {
            return Err(RunError::Unresumable {
                run_id,
                reason: describe(&blocked),
            });
        }
    }
    if let Some(fingerprint) = fingerprint {
        checkpoint.graph_fingerprint = Name::from(fingerprint);
    }
    accept(&checkpoint)?;
    checkpoint.id += 1;
    let written = checkpoint.id;
    if !dry_run {
        checkpoint.created_at = Timestamp::now();
        record.updated_at = checkpoint.created_at;
        store.save_step(record, checkpoint).await?;
    }
    Ok(Migrated {
        checkpoint: written,
        from,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::{Edge, Node};
    use crate::checkpoint::conformance::{sample_checkpoint, sample_run};

    /// The sample checkpoint's graph: every node it names, `summarize` joined into from `deep`
    /// and `web`, `lookup` handing failures to `draft`.
    fn graph() -> Blueprint {
        let mut blueprint = Blueprint::new("Support");
        for id in [
            "draft", "lookup", "review", "send", "research", "deep", "web",
        ] {
            let mut node = Node::new(id);
            if id == "lookup" {
                node.on_error = Some("draft".to_owned());
            }
            blueprint.nodes.push(node);
        }
        blueprint.nodes.push(Node::new("summarize"));
        for from in ["deep", "web"] {
            blueprint.edges.push(Edge {
                from: Endpoint::Node(from.to_owned()),
                kind: EdgeKind::Join,
                targets: vec![Endpoint::Node("summarize".to_owned())],
            });
        }
        blueprint
    }

    fn sample() -> (Checkpoint, RunRecord) {
        let run = sample_run(crate::RunId::from("r"), Timestamp::now());
        (sample_checkpoint(&run.run_id, 3), run)
    }

    #[test]
    fn a_graph_with_everything_the_run_needs_blocks_nothing() {
        let (checkpoint, run) = sample();
        assert_eq!(blockers(&graph(), &checkpoint, &run.interrupts), []);
    }

    #[test]
    fn every_blocker_is_named_once_with_its_first_need() {
        let (checkpoint, run) = sample();
        let mut changed = graph();
        // `send` (next, and asked a question) gone; `summarize` no longer joined into;
        // `lookup` without its handler.
        changed.nodes.retain(|n| n.id != "send");
        changed.edges.clear();
        changed.nodes.iter_mut().for_each(|n| n.on_error = None);
        let blocked = blockers(&changed, &checkpoint, &run.interrupts);
        let said: Vec<String> = blocked.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "node `send` (runs next) is gone",
                "node `summarize` is no longer joined into",
                "node `lookup` no longer has an on_error handler",
            ]
        );
        assert_eq!(
            describe(&blocked[..2]),
            "node `send` (runs next) is gone; node `summarize` is no longer joined into"
        );
    }

    #[test]
    fn renaming_renames_every_name_and_keeps_question_ids() {
        let (mut checkpoint, mut run) = sample();
        let renames = Renames::from([
            ("send".to_owned(), "deliver".to_owned()),
            ("summarize".to_owned(), "merge".to_owned()),
            ("web".to_owned(), "browse".to_owned()),
            ("draft".to_owned(), "write".to_owned()),
            ("lookup".to_owned(), "find".to_owned()),
            ("research".to_owned(), "study".to_owned()),
        ]);
        rename(&mut checkpoint, &mut run, &renames);
        assert_eq!(checkpoint.frontier, ["review", "deliver"]);
        assert_eq!(checkpoint.approved, ["deliver"]);
        assert_eq!(checkpoint.nodes, ["write", "find"]);
        assert!(checkpoint.visits.contains_key("write"));
        assert_eq!(checkpoint.joins["merge"], ["deep", "browse"]);
        assert!(checkpoint.children.contains_key("study"));
        assert_eq!(checkpoint.failures[0].node, "find");
        assert_eq!(checkpoint.pending[0].node, "write");
        assert_eq!(checkpoint.breakpoints.before, ["deliver"]);
        assert_eq!(checkpoint.breakpoints.after, ["write", "review"]);
        assert!(checkpoint.sends.iter().all(|s| s.node == "review"));
        assert_eq!(checkpoint.interrupts[0].node, "deliver");
        assert_eq!(
            checkpoint.interrupts[0].id, "send@3",
            "an answer's key stays"
        );
        assert_eq!(run.interrupts[0].node, "deliver");
        assert_eq!(
            run.interrupts[0].request.resume_to.as_deref(),
            Some("deliver")
        );
        assert_eq!(run.last_node.as_deref(), Some("review"));
    }
}
