//! Restoring a run from its record and latest checkpoint.

use std::sync::Arc;

use super::parts::{Held, Ledger, Progress, Stops, Work};
use super::{LEASE, Phase, Run};
use crate::checkpoint::{Checkpoint, RunRecord, RunStatus};
use crate::errors::RunError;
use crate::graph::CompiledGraph;
use crate::state::GraphState;

impl<S: GraphState> Run<S> {
    pub(crate) fn from_checkpoint(
        graph: CompiledGraph<S>,
        record: RunRecord,
        checkpoint: Checkpoint,
    ) -> Result<Self, RunError> {
        let topology = Arc::clone(&graph.topology);
        let run_id = record.run_id.clone();
        let state_type = std::any::type_name::<S>();
        if checkpoint.state_type != state_type {
            return Err(RunError::Unresumable {
                run_id,
                reason: format!(
                    "it was saved with state type `{}`, and this graph runs on `{state_type}`",
                    checkpoint.state_type
                ),
            });
        }
        // A changed topology is refused only where it breaks the saved run: a node the run
        // must still visit (or answer, or hand a failure to) that the graph no longer has —
        // every such node named at once. The same fingerprint is the same nodes and edges:
        // nothing to look for (a resume's cost stays what it was).
        let blocked = if checkpoint.graph_fingerprint == topology.fingerprint {
            Vec::new()
        } else {
            crate::versions::blockers(&topology.blueprint, &checkpoint, &record.interrupts)
        };
        if !blocked.is_empty() {
            let renamed = blocked
                .iter()
                .any(|blocker| blocker.lacks == crate::versions::Lack::Node);
            return Err(RunError::Unresumable {
                run_id,
                reason: format!(
                    "it was saved by another version of graph `{}`: {}{}",
                    topology.name,
                    crate::versions::describe(&blocked),
                    if renamed {
                        "; if a node was renamed, move the run onto this graph with `migrate` (`trellis runs migrate RUN --rename OLD=NEW`)"
                    } else {
                        ""
                    }
                ),
            });
        }
        let find = |name: &str| {
            topology.find(name).map_err(|_| RunError::Unresumable {
                run_id: run_id.clone(),
                reason: format!(
                    "it was saved by a version of graph `{}` with node `{name}`, which this one no longer has",
                    topology.name
                ),
            })
        };
        if checkpoint.graph_fingerprint != topology.fingerprint {
            tracing::warn!(target: "trellis", run_id = %run_id, saved = %checkpoint.graph_fingerprint, current = %topology.fingerprint, "resuming a run saved by another version of the graph");
        }
        let frontier = checkpoint
            .frontier
            .iter()
            .map(|n| find(n))
            .collect::<Result<Vec<_>, _>>()?;
        let approved = checkpoint
            .approved
            .iter()
            .map(|n| find(n))
            .collect::<Result<Vec<_>, _>>()?;
        let found = |names: &[crate::checkpoint::Name]| {
            names.iter().map(|n| find(n)).collect::<Result<Vec<_>, _>>()
        };
        let stops = Stops {
            before: found(&checkpoint.breakpoints.before)?,
            after: found(&checkpoint.breakpoints.after)?,
        };
        let mut visits = vec![0; topology.nodes.len()];
        // A node visited before and gone since counts for nothing any more.
        for (name, count) in &checkpoint.visits {
            if let Ok(at) = find(name) {
                visits[at] = *count;
            }
        }
        let mut failures = Vec::new();
        for failure in checkpoint.failures {
            let handler = topology.nodes[find(&failure.node)?]
                .on_error
                .ok_or_else(|| RunError::Unresumable {
                    run_id: run_id.clone(),
                    reason: format!("node `{}` no longer has an on_error handler", failure.node),
                })?;
            failures.push((handler, Arc::new(failure)));
        }
        for interrupt in &record.interrupts {
            find(&interrupt.node)?;
        }
        let sends = checkpoint
            .sends
            .iter()
            .map(|send| Ok((find(&send.node)?, Arc::new(send.input.clone()))))
            .collect::<Result<Vec<_>, RunError>>()?;
        let mut arrived = vec![Vec::new(); topology.joins.len()];
        for (target, sources) in &checkpoint.joins {
            let target = find(target)?;
            let barrier = topology
                .joins
                .iter()
                .position(|join| join.target == target)
                .ok_or_else(|| RunError::Unresumable {
                    run_id: run_id.clone(),
                    reason: format!(
                        "node `{}` is no longer joined into, and the run waits at that join",
                        topology.nodes[target].name
                    ),
                })?;
            for source in sources {
                let source = find(source)?;
                if topology.joins[barrier].sources.contains(&source) {
                    arrived[barrier].push(source);
                }
            }
        }
        let children = checkpoint
            .children
            .iter()
            .map(|(node, child)| Ok((find(node)?, child.clone())))
            .collect::<Result<Vec<_>, RunError>>()?;
        let state: S = S::deserialize(&*checkpoint.state).map_err(|source| RunError::State {
            run_id: run_id.clone(),
            action: "read from",
            source,
        })?;
        let work = Work {
            frontier,
            sends,
            next_override: None,
            arrived,
        };
        let held = Held {
            approved,
            failures,
            children,
            pending: checkpoint.pending,
            interrupts: record.interrupts,
            stops,
        };
        let progress = Progress {
            step: record.steps,
            transitions: record.transitions,
            last_node: record.last_node.as_deref().and_then(|n| find(n).ok()),
            phase: match record.status {
                RunStatus::Paused => Phase::Paused,
                RunStatus::Running => Phase::Running,
                RunStatus::Completed => Phase::Completed,
                RunStatus::Failed | RunStatus::Cancelled => Phase::Failed,
            },
            visits,
        };
        let ledger = Ledger {
            created_at: record.created_at,
            checkpoints: checkpoint.id,
            owner: Arc::clone(crate::owner::shared()),
            lease: LEASE,
            parent: record.parent,
            thread: record.thread,
            metadata: record.metadata,
            written: super::written::Written::read_from(checkpoint.state, &state),
        };
        Ok(Self::assemble(
            graph, run_id, state, work, held, progress, ledger,
        ))
    }
}
