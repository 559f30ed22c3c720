//! The step algorithm as pure functions: from the committed state and a step's results, the
//! merged state, the visits, the joins' arrivals, the branches sent and the next frontier.
//!
//! No tokio, no checkpointer, no events: `step` runs the nodes, calls these, and does the I/O
//! (activations, persistence, events, streams). As LangGraph keeps `prepare_next_tasks` and
//! `apply_writes` in `pregel/_algo.py` apart from its loop. The tests below read like the
//! language reference: fork, join, send, visits, defer, goto, END.

use std::sync::Arc;

use serde::Deserialize;

use super::parts::{Held, Work};
use crate::checkpoint::PendingUpdate;
use crate::errors::RunError;
use crate::graph::{Edge, Target, Topology, Visits};
use crate::id::RunId;
use crate::interrupt::{Interrupt, InterruptPoint};
use crate::node::{Command, NodeFailure};
use crate::state::GraphState;

/// A step's updates in declaration order, without a `Vec` for the common single update.
pub(super) enum Updates<'a, U> {
    None,
    One(&'a str, U),
    Many(Vec<(&'a str, U)>),
}

impl<'a, U: Clone> Updates<'a, U> {
    pub(super) fn to_vec(&self) -> Vec<(&'a str, U)> {
        match self {
            Updates::None => Vec::new(),
            Updates::One(node, update) => vec![(node, update.clone())],
            Updates::Many(all) => all.clone(),
        }
    }
}

impl<'a, U> Updates<'a, U> {
    /// Each node with its update, borrowed, in order.
    pub(super) fn pairs(&self) -> Vec<(&'a str, &U)> {
        match self {
            Updates::None => Vec::new(),
            Updates::One(node, update) => vec![(*node, update)],
            Updates::Many(all) => all.iter().map(|(node, update)| (*node, update)).collect(),
        }
    }

    // Always: it is on every activation's path, and the first update only sets `One`.
    #[inline(always)]
    pub(super) fn push(&mut self, node: &'a str, update: U) {
        match self {
            Updates::None => *self = Updates::One(node, update),
            Updates::Many(all) => all.push((node, update)),
            Updates::One(..) => self.push_second(node, update),
        }
    }

    #[cold]
    #[inline(never)]
    fn push_second(&mut self, node: &'a str, update: U) {
        if let Updates::One(first, earlier) = std::mem::replace(self, Updates::None) {
            *self = Updates::Many(vec![(first, earlier), (node, update)]);
        }
    }
}

/// What a step's activations produced, gathered in declaration order before the merge.
pub(super) struct Absorbed<'t, U> {
    pub(super) updates: Updates<'t, U>,
    /// The next frontier: commands' targets, error handlers, held deferred nodes.
    pub(super) next: Vec<usize>,
    /// Nodes whose edges decide where they lead, once the updates are merged.
    pub(super) follow: Vec<usize>,
    /// What few steps produce, apart: a step with none of it builds, checks and drops one
    /// `None` rather than four empty lists (each drop a call).
    pub(super) rare: Option<Box<Rare>>,
}

impl<'t, U> Absorbed<'t, U> {
    /// Nothing absorbed yet, in `next` and `follow` (reused buffers, cleared here).
    pub(super) fn new(mut next: Vec<usize>, mut follow: Vec<usize>) -> Self {
        next.clear();
        follow.clear();
        Absorbed {
            updates: Updates::None,
            next,
            follow,
            rare: None,
        }
    }

    pub(super) fn rare(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }
}

#[derive(Default)]
pub(super) struct Rare {
    pub(super) interrupts: Vec<(usize, Interrupt)>,
    pub(super) failures: Vec<(usize, Arc<NodeFailure>)>,
    /// Branches sent by commands: (sending node, node to run, input).
    pub(super) sends: Vec<Sent>,
    /// A subgraph node on the run's own state type that completed: its final state becomes
    /// the run's before the step's updates are merged.
    pub(super) replaced: Option<Replaced>,
    /// A subgraph node on the run's own state paused: the step's updates are held for when its
    /// child completes (`Held::pending`).
    pub(super) holds: bool,
    pub(super) cancelled: bool,
}

/// A branch a command sent: the sending node, the node to run, and its input.
pub(super) type Sent = (usize, usize, Arc<serde_json::Value>);

/// A subgraph's final state replacing the run's: its node, the state, and a second node that
/// tried to replace it in the same step.
pub(super) type Replaced = (usize, Arc<dyn std::any::Any + Send + Sync>, Option<usize>);

/// A sent branch of a step: its place among the node's branches, and its input.
pub(super) type Branch<'a> = Option<(usize, &'a Arc<serde_json::Value>)>;

/// A sent branch's interrupt is told apart from its siblings' ([`Interrupt::of_branch`]).
pub(super) fn of_branch(interrupt: Interrupt, branch: Branch<'_>) -> Interrupt {
    match branch {
        Some((branch, _)) => interrupt.of_branch(branch),
        None => interrupt,
    }
}

/// Sorts a frontier into declaration order and runs each node once (the join).
#[inline]
pub(super) fn normalize(frontier: &mut Vec<usize>) {
    if frontier.len() > 1 {
        frontier.sort_unstable();
        frontier.dedup();
    }
}

/// A deferred node waits while any other branch still has a node to run: when a step from
/// `current` (with sent branches or not) holds some back, the nodes that run and those held.
/// `None` for most steps, which hold nothing back (and allocate nothing to say so).
#[inline]
pub(super) fn split_deferred<S: GraphState>(
    topology: &Topology<S>,
    current: &[usize],
    any_sent: bool,
) -> Option<(Vec<usize>, Vec<usize>)> {
    let nodes = &topology.nodes;
    let eager = any_sent || current.iter().any(|&i| !nodes[i].options.defer);
    (eager && current.iter().any(|&i| nodes[i].options.defer))
        .then(|| current.iter().partition(|&&i| !nodes[i].options.defer))
}

/// The nodes that run in a step, once each: `runnable`'s and those of the `sent` branches
/// (gathered in `buffer` only when there are sent branches).
#[inline]
pub(super) fn with_sent<'a, T>(
    runnable: &'a [usize],
    sent: &[(usize, T)],
    buffer: &'a mut Vec<usize>,
) -> &'a [usize] {
    if sent.is_empty() {
        return runnable;
    }
    buffer.extend_from_slice(runnable);
    buffer.extend(sent.iter().map(|(i, _)| *i));
    normalize(buffer);
    buffer
}

/// The questions of the nodes in `ran` that pause before they run in step `step` — by the
/// graph's `interrupt before`, or the run's breakpoints `before` — those not `approved` yet:
/// empty for the common steps, which ask nothing.
pub(super) fn asked_before<S: GraphState>(
    topology: &Topology<S>,
    approved: &[usize],
    before: &[usize],
    ran: &[usize],
    step: u64,
) -> Vec<Interrupt> {
    let nodes = &topology.nodes;
    let waits = |&i: &usize| {
        (nodes[i].options.interrupt == Some(InterruptPoint::Before) || before.contains(&i))
            && !approved.contains(&i)
    };
    if !ran.iter().any(waits) {
        return Vec::new();
    }
    ran.iter()
        .filter(|i| waits(i))
        .map(|&i| {
            let question = nodes[i].options.question.as_deref();
            Interrupt::fixed(&nodes[i].name, step, InterruptPoint::Before, question)
        })
        .collect()
}

/// The questions step `step` would pause on before running anything: [`asked_before`] on
/// what it would run from `work`.
pub(super) fn asked_next<S: GraphState>(
    topology: &Topology<S>,
    work: &Work,
    approved: &[usize],
    before: &[usize],
    step: u64,
) -> Vec<Interrupt> {
    let deferred = split_deferred(topology, &work.frontier, !work.sends.is_empty());
    let runnable = deferred
        .as_ref()
        .map_or(&work.frontier[..], |(runnable, _)| runnable);
    let mut buffer = Vec::new();
    let ran = with_sent(runnable, &work.sends, &mut buffer);
    asked_before(topology, approved, before, ran, step)
}

/// Whether node `i` may run `now` more times, within its `max_visits`.
pub(super) fn within_visits<S: GraphState>(
    topology: &Topology<S>,
    visits: &[u32],
    i: usize,
    now: usize,
) -> Result<(), RunError> {
    let spec = &topology.nodes[i];
    match spec.options.max_visits {
        Some(max_visits) if u64::from(visits[i]) + now as u64 > u64::from(max_visits) => {
            Err(RunError::VisitLimit {
                node: spec.name.to_string(),
                max_visits,
            })
        }
        _ => Ok(()),
    }
}

/// Counts one visit for each node of `runnable` and each branch `sent`: before the routers run,
/// so that they see this step's activations.
#[inline]
pub(super) fn count_visits<T>(visits: &mut [u32], runnable: &[usize], sent: &[(usize, T)]) {
    for &i in runnable {
        visits[i] += 1;
    }
    for &(i, _) in sent {
        visits[i] += 1;
    }
}

/// Merges a step's `updates` into `state`, in declaration order; on a conflict, `state` is as
/// it was.
#[inline]
pub(super) fn merge<S: GraphState>(
    state: &mut Arc<S>,
    updates: Updates<'_, S::Update>,
    step: u64,
) -> Result<(), RunError> {
    let merged = match updates {
        Updates::None => Ok(()),
        Updates::One(node, update) => Arc::make_mut(state).apply_one(node, update),
        Updates::Many(all) => Arc::make_mut(state).apply(all),
    };
    merged.map_err(|conflict| RunError::MergeConflict { step, conflict })
}

/// The state after a step in which a subgraph node on this state type completed: the child's
/// final state, with the updates the run committed while the child waited for an answer
/// (`pending`, each as its own step merged it) and then the step's other updates merged into
/// it, as if the child's whole run had been this step. Two such nodes in one step conflict, as
/// two whole-state updates would.
#[cold]
#[inline(never)]
pub(super) fn replace<S: GraphState>(
    topology: &Topology<S>,
    run_id: &RunId,
    pending: &[PendingUpdate],
    step: u64,
    (first, child, second): Replaced,
    updates: Updates<'_, S::Update>,
) -> Result<Arc<S>, RunError> {
    if let Some(second) = second {
        return Err(RunError::MergeConflict {
            step,
            conflict: crate::state::MergeConflict {
                field: "state",
                first: topology.nodes[first].name.to_string(),
                second: topology.nodes[second].name.to_string(),
            },
        });
    }
    // `add_subgraph` runs a child on this very state type: the downcast cannot fail.
    let mut state = child
        .downcast::<S>()
        .map_err(|_| RunError::SubgraphAnswer {
            run_id: run_id.clone(),
            expected: std::any::type_name::<S>(),
        })?;
    for held in pending {
        let update = S::Update::deserialize(&held.update).map_err(|source| RunError::State {
            run_id: run_id.clone(),
            action: "read from",
            source,
        })?;
        Arc::make_mut(&mut state)
            .apply_one(&held.node, update)
            .map_err(|conflict| RunError::MergeConflict { step, conflict })?;
    }
    merge(&mut state, updates, step)?;
    Ok(state)
}

/// Follows node `i`'s edge from `state` into `next`. A join edge counts `i` as arrived at its
/// join in `work`, and adds the join's node once all its sources have (the join then starts
/// over); a send edge adds its branches to `work`'s.
#[inline]
pub(super) fn follow_edge<S: GraphState>(
    topology: &Topology<S>,
    state: &S,
    visits: &[u32],
    work: &mut Work,
    i: usize,
    next: &mut Vec<usize>,
) -> Result<(), RunError> {
    let spec = &topology.nodes[i];
    match spec.edge {
        // The most common edge, first: nothing to look up.
        Edge::Static(Target::Node(j)) => {
            next.push(j);
            return Ok(());
        }
        Edge::Static(Target::End) => return Ok(()),
        Edge::Each { .. } => {
            return fan_out(
                topology,
                state,
                visits,
                &mut work.sends,
                &spec.edge,
                &spec.name,
            );
        }
        _ => {}
    }
    if let Edge::Join(barrier) = spec.edge {
        let join = &topology.joins[barrier];
        let arrived = &mut work.arrived[barrier];
        if !arrived.contains(&i) {
            arrived.push(i);
        }
        if arrived.len() == join.sources.len() {
            arrived.clear();
            next.push(join.target);
        }
        return Ok(());
    }
    let visits = Visits::new(&topology.index, visits);
    spec.edge
        .follow(state, &visits, next)
        .map_err(|target| RunError::UndeclaredTarget {
            node: spec.name.to_string(),
            target,
        })
}

/// Takes the branches a send edge's function returns from `state` into `sends` (after those
/// already there); `from` names the edge's source for errors.
pub(super) fn fan_out<S: GraphState>(
    topology: &Topology<S>,
    state: &S,
    visits: &[u32],
    sends: &mut Vec<(usize, Arc<serde_json::Value>)>,
    edge: &Edge<S>,
    from: &str,
) -> Result<(), RunError> {
    let Edge::Each { targets, fan } = edge else {
        return Ok(());
    };
    let source = || {
        if from == crate::START {
            "START".to_owned()
        } else {
            format!("`{from}`")
        }
    };
    let fan = fan
        .as_ref()
        .ok_or_else(|| RunError::NoSendFunction { from: source() })?;
    let visits = Visits::new(&topology.index, visits);
    let branches = fan(state, &visits).map_err(|error| RunError::SendInput {
        from: source(),
        source: error,
    })?;
    for send in branches {
        let node = targets
            .iter()
            .find(|(name, _)| **name == *send.node)
            .map(|&(_, node)| node)
            .ok_or_else(|| RunError::UndeclaredTarget {
                node: from.to_owned(),
                target: send.node.to_string(),
            })?;
        sends.push((node, Arc::new(send.input)));
    }
    Ok(())
}

/// Where a step leads once its updates are merged into `state`: the edges of the nodes in
/// `follow` followed into `next` (sorted, once each), and the branches for the next step in
/// `work.sends`. With sent branches or branches `commanded`, a node's edge is followed once
/// however many of its branches ran (they all see the same merged state), and the branches
/// leave in the order of the nodes that sent them, a node's command's before its edge's.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn lead_on<S: GraphState>(
    topology: &Topology<S>,
    state: &S,
    visits: &[u32],
    work: &mut Work,
    any_sent: bool,
    commanded: Option<Vec<Sent>>,
    follow: &mut Vec<usize>,
    next: &mut Vec<usize>,
) -> Result<(), RunError> {
    match commanded {
        None if !any_sent => {
            for &i in follow.iter() {
                follow_edge(topology, state, visits, work, i, next)?;
            }
        }
        commanded => {
            normalize(follow);
            let mut commanded = commanded.into_iter().flatten().peekable();
            for &i in follow.iter() {
                while let Some((_, node, input)) = commanded.next_if(|&(from, _, _)| from < i) {
                    work.sends.push((node, input));
                }
                follow_edge(topology, state, visits, work, i, next)?;
            }
            work.sends
                .extend(commanded.map(|(_, node, input)| (node, input)));
        }
    }
    normalize(next);
    Ok(())
}

/// What a step that ran the nodes `ran` hands on: an approval, a failure to handle, a child to
/// continue is used up once its node ran (a deferred node held back keeps its own).
// Always: every step calls it, and most find nothing to do.
#[inline(always)]
pub(super) fn used_up(held: &mut Held, ran: &[usize]) {
    // Each guarded: most steps have none, and a call on an empty `Vec` is not free.
    if !held.approved.is_empty() {
        held.approved.retain(|i| !ran.contains(i));
    }
    if !held.failures.is_empty() {
        held.failures.retain(|(handler, _)| !ran.contains(handler));
    }
    // A continued child ran: it completed, failed, or paused again (and is asked anew).
    if !held.children.is_empty() {
        held.children.retain(|(node, _)| !ran.contains(node));
    }
}

/// Takes node `i`'s `command` into the step's results, checked against the targets its edge
/// declares; whether it asked a question (an interrupt).
#[inline(never)]
pub(super) fn commanded<'t, S: GraphState>(
    topology: &'t Topology<S>,
    i: usize,
    step: u64,
    command: Command,
    branch: Branch<'_>,
    absorbed: &mut Absorbed<'t, S::Update>,
) -> Result<bool, RunError> {
    let nodes = &topology.nodes;
    let spec = &nodes[i];
    let undeclared = |target: &str| RunError::UndeclaredTarget {
        node: spec.name.to_string(),
        target: target.to_owned(),
    };
    let declared = |target: &str| {
        spec.edge
            .declared(target, nodes, &topology.joins)
            .ok_or_else(|| undeclared(target))
    };
    // A join source's one target is its join: going there is arriving at it.
    let joins = matches!(spec.edge, Edge::Join(_));
    let interrupted = matches!(command, Command::Interrupt(_));
    match command {
        Command::Continue => absorbed.follow.push(i),
        Command::Goto(target) => match declared(&target)? {
            Target::Node(_) if joins => absorbed.follow.push(i),
            Target::Node(j) => absorbed.next.push(j),
            Target::End => {}
        },
        Command::Fork(targets) => {
            for target in targets {
                match declared(&target)? {
                    Target::Node(_) if joins => absorbed.follow.push(i),
                    Target::Node(j) => absorbed.next.push(j),
                    Target::End => return Err(undeclared(&target)),
                }
            }
        }
        Command::End => {
            declared(crate::END)?;
        }
        Command::Interrupt(request) => {
            if let Some(to) = request.resume_to.as_deref()
                && to != &*spec.name
            {
                declared(to)?;
            }
            let interrupt = Interrupt::new(&spec.name, step, InterruptPoint::Node, request);
            // A branch that resumes to itself runs again with its own input: sent anew, for
            // the step after the answer.
            if let Some((_, input)) = branch
                && interrupt.request.resume_to.as_deref() == Some(&*spec.name)
            {
                absorbed.rare().sends.push((i, i, Arc::clone(input)));
            }
            absorbed
                .rare()
                .interrupts
                .push((i, of_branch(interrupt, branch)));
        }
        Command::Sends(sends) => {
            let Edge::Each { targets, .. } = &spec.edge else {
                let target = sends.first().map_or(String::new(), |s| s.node.to_string());
                return Err(undeclared(&target));
            };
            for send in sends {
                let node = targets
                    .iter()
                    .find(|(name, _)| **name == *send.node)
                    .map(|&(_, node)| node)
                    .ok_or_else(|| undeclared(&send.node))?;
                absorbed.rare().sends.push((i, node, Arc::new(send.input)));
            }
        }
    }
    Ok(interrupted)
}

#[cfg(test)]
#[path = "algo_tests.rs"]
mod tests;
