//! Resuming a paused run: checking the answers, folding them in, and choosing what runs next.

use std::sync::Arc;

use super::Run;
use super::algo::normalize;
use super::parts::Stops;
use crate::checkpoint::{CheckpointLabel, RunStatus};
use crate::errors::RunError;
use crate::event::Event;
use crate::graph::{Edge, Target};
use crate::id::RunId;
use crate::interrupt::{Breakpoints, Interrupt, InterruptPoint, Reply};
use crate::resume::Answers;
use crate::state::{ApplyResume, GraphState};
use crate::subgraph::SubgraphNode;

/// What a resume does beside answering (LangGraph's `Command(update=…, goto=…)`).
pub(crate) struct Steer<U> {
    /// Folded in by the reducers before the answers, as a run's input is.
    pub(crate) update: Option<U>,
    /// Nodes run in the next step too, beside those the answers lead to.
    pub(crate) goto: Vec<String>,
}

impl<U> Default for Steer<U> {
    fn default() -> Self {
        Steer {
            update: None,
            goto: Vec::new(),
        }
    }
}

/// The run's own breakpoints: set when it starts, told apart from the graph's pauses at a
/// resume.
impl<S: GraphState> Run<S> {
    /// Makes `breakpoints` the run's own, before it begins: its first checkpoint keeps them.
    pub(crate) fn set_breakpoints(&mut self, breakpoints: &Breakpoints) -> Result<(), RunError> {
        self.held.stops = stops_of(&self.graph, breakpoints)?;
        Ok(())
    }

    /// Whether `interrupt` is a pause at one of the run's own breakpoints, which asks
    /// nothing (a node's question, or its graph's `interrupt before|after`, needs an answer).
    pub(crate) fn is_breakpoint(&self, interrupt: &Interrupt) -> bool {
        let Ok(i) = self.graph.topology.find(&interrupt.node) else {
            return false;
        };
        let (stops, point) = match interrupt.point {
            InterruptPoint::Before => (&self.held.stops.before, InterruptPoint::Before),
            InterruptPoint::After => (&self.held.stops.after, InterruptPoint::After),
            _ => return false,
        };
        stops.contains(&i) && self.graph.topology.nodes[i].options.interrupt != Some(point)
    }
}

/// Checks that each of `breakpoints` is a node of `graph` (or `*`).
///
/// # Errors
/// [`RunError::UnknownNode`] for a name that is no node of the graph.
pub(crate) fn check_breakpoints<S: GraphState>(
    graph: &crate::graph::CompiledGraph<S>,
    breakpoints: &Breakpoints,
) -> Result<(), RunError> {
    stops_of(graph, breakpoints).map(drop)
}

/// `breakpoints` as `graph`'s node indices (`*` is every node).
fn stops_of<S: GraphState>(
    graph: &crate::graph::CompiledGraph<S>,
    breakpoints: &Breakpoints,
) -> Result<Stops, RunError> {
    let topology = &graph.topology;
    let indices = |names: &[crate::checkpoint::Name]| -> Result<Vec<usize>, RunError> {
        if names.iter().any(|name| &**name == "*") {
            return Ok((0..topology.nodes.len()).collect());
        }
        let mut found = names
            .iter()
            .map(|name| topology.find(name))
            .collect::<Result<Vec<_>, _>>()?;
        normalize(&mut found);
        Ok(found)
    };
    Ok(Stops {
        before: indices(&breakpoints.before)?,
        after: indices(&breakpoints.after)?,
    })
}

/// A child run's answers: its subgraph node, its id, and each answer by the child's own id.
type ChildAnswers<I> = (usize, RunId, Vec<(String, I)>);

impl<S: ApplyResume> Run<S> {
    /// Answers a paused run's interrupts — one answer for a run that waits for one, or
    /// [`Answers::each`] keyed by interrupt id — folds the answers into the state and makes the
    /// run steppable again.
    ///
    /// With a checkpointer, the run is first claimed (paused → running), so of two resumes of
    /// one run only one proceeds; the state with the answers is checkpointed (`resume`).
    ///
    /// # Errors
    /// [`RunError::AlreadyCompleted`], [`RunError::AlreadyFailed`] or
    /// [`RunError::StillRunning`] for a run that is not paused; [`RunError::Answers`] when the
    /// ids answered are not exactly the pending ones (or one answer is given to a run that waits
    /// for several); a merge conflict between answers.
    pub async fn resume(&mut self, answers: impl Into<Answers<S::Input>>) -> Result<(), RunError> {
        self.resume_steered(answers.into(), Steer::default()).await
    }

    /// [`resume`](Self::resume), also doing what `steer` says (LangGraph's
    /// `Command(update=…, goto=…)`): its update folded in by the reducers before the answers,
    /// its nodes added to those the answers lead to.
    pub(crate) async fn resume_steered(
        &mut self,
        answers: Answers<S::Input>,
        steer: Steer<S::Update>,
    ) -> Result<(), RunError> {
        self.ensure_paused()?;
        let goto = steer
            .goto
            .iter()
            .map(|node| self.graph.topology.find(node))
            .collect::<Result<Vec<_>, _>>()?;
        let run_id = self.scope.run_id.clone();
        let proceeds = matches!(answers, Answers::Proceed);
        let mut answers = answers.keyed(self)?;
        let mut pending: Vec<String> = self
            .held
            .interrupts
            .iter()
            .map(|i| i.id.as_str().to_owned())
            .collect();
        // Going on past breakpoints answers each of them with nothing.
        let mut given: Vec<String> = if proceeds {
            pending.clone()
        } else {
            answers.iter().map(|(id, _)| id.clone()).collect()
        };
        pending.sort();
        given.sort();
        if pending != given {
            return Err(RunError::Answers {
                run_id,
                pending,
                given,
            });
        }
        self.check_answer_types(&answers)?;
        self.claim_paused().await?;
        let interrupts = std::mem::take(&mut self.held.interrupts);
        self.emit(|| Event::ResumeStarted {
            run_id: run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.progress.step,
            interrupts: interrupts
                .iter()
                .map(|i| i.id.as_str().to_owned())
                .collect(),
        });
        // Changed outside a step: the next checkpoint holds the whole state.
        self.ledger.written.forget();
        let result = match steer.update {
            Some(update) => Arc::make_mut(&mut self.state)
                .apply_one(crate::START, update)
                .map_err(|conflict| RunError::MergeConflict {
                    step: self.progress.step,
                    conflict,
                }),
            None => Ok(()),
        };
        let result = match result {
            Ok(()) => self.fold_answers(&interrupts, &mut answers, &goto).await,
            Err(error) => Err(error),
        };
        if let Err(error) = &result {
            Box::pin(self.fail(error)).await;
        }
        result
    }

    /// Refuses an answer that is not of the type its pause site declares, before anything is
    /// written.
    fn check_answer_types(&self, answers: &[(String, S::Input)]) -> Result<(), RunError> {
        for (id, input) in answers {
            let Some(interrupt) = self.held.interrupts.iter().find(|i| i.id == *id) else {
                continue;
            };
            let expected = match self.graph.site(interrupt) {
                Some(site) if !site.accepts(input) => format!("a `{}`", site.type_name),
                None if !S::takes(input) => "an answer of one of the state's types".to_owned(),
                _ => continue,
            };
            let given = match (input as &dyn std::any::Any).downcast_ref::<Reply>() {
                Some(reply) => format!("a `{}`", reply.type_name()),
                None => format!("a `{}`", std::any::type_name::<S::Input>()),
            };
            return Err(RunError::WrongAnswer {
                run_id: self.scope.run_id.clone(),
                interrupt: id.clone(),
                expected,
                given,
            });
        }
        Ok(())
    }

    async fn fold_answers(
        &mut self,
        interrupts: &[Interrupt],
        answers: &mut Vec<(String, S::Input)>,
        goto: &[usize],
    ) -> Result<(), RunError> {
        let topology = Arc::clone(&self.graph.topology);
        let nodes = &topology.nodes;
        let index = |name: &str| topology.find(name);
        let mut updates = Vec::with_capacity(interrupts.len());
        // A subgraph's questions are its child's: answered there, before anything is merged.
        // Boxed: a child's resume is this very function, one graph down (and its future is
        // large: only built when some child was asked).
        let children = self.children_asked(interrupts, answers)?;
        let asked_children = if children.is_empty() {
            Vec::new()
        } else {
            Box::pin(self.answer_children(children)).await?
        };
        // Taken only now: a failed answer leaves the run's frontier as the pause had it.
        let mut next = std::mem::take(&mut self.work.frontier);
        for &(i, _) in &asked_children {
            next.push(i);
            // Going on with its child is not a new run of the node: a pause before it was
            // answered when it started, and is not asked again.
            self.held.approved.push(i);
        }
        for interrupt in interrupts {
            let i = index(&interrupt.node)?;
            if asked_children.iter().any(|&(node, _)| node == i) {
                continue;
            }
            if let Some(at) = answers.iter().position(|(id, _)| *id == interrupt.id) {
                let (_, input) = answers.swap_remove(at);
                updates.push((&*nodes[i].name, self.state.apply_resume(interrupt, input)));
            }
        }
        let streamed = self.copy_updates(|| updates.clone());
        // A child on this state that goes on does not hold the answers: kept for its end.
        let holds = asked_children
            .iter()
            .any(|&(i, _)| nodes[i].runs_same_state());
        let held = if holds {
            let pairs = updates.iter().map(|(node, update)| (*node, update));
            Some(self.pending_of(pairs)?)
        } else {
            None
        };
        // Changed outside a step: the next checkpoint holds the whole state.
        self.ledger.written.forget();
        Arc::make_mut(&mut self.state)
            .apply(updates)
            .map_err(|conflict| RunError::MergeConflict {
                step: self.progress.step,
                conflict,
            })?;
        if let Some(held) = held {
            self.held.pending.extend(held);
        }
        if let Some(updates) = streamed {
            self.send_updates(self.progress.step, updates);
        }
        self.held.children.extend(asked_children.iter().cloned());
        for interrupt in interrupts {
            let i = index(&interrupt.node)?;
            if asked_children.iter().any(|&(node, _)| node == i) {
                continue;
            }
            let spec = &nodes[i];
            let undeclared = |target: &str| RunError::UndeclaredTarget {
                node: spec.name.to_string(),
                target: target.to_owned(),
            };
            match interrupt.point {
                InterruptPoint::Before => self.held.approved.push(i),
                InterruptPoint::After => {}
                InterruptPoint::Node => match interrupt.request.resume_to.as_deref() {
                    // A sent branch was sent anew with its input when it asked.
                    Some(to) if to == &*spec.name => {
                        if !interrupt.is_of_branch() {
                            next.push(i);
                        }
                    }
                    Some(to) => {
                        let target = spec
                            .edge
                            .declared(to, nodes, &topology.joins)
                            .ok_or_else(|| undeclared(to))?;
                        match target {
                            // Resuming to a join is arriving at it.
                            Target::Node(_) if matches!(spec.edge, Edge::Join(_)) => {
                                self.follow_edge(&topology, i, &mut next)?;
                            }
                            Target::Node(j) => next.push(j),
                            Target::End => {}
                        }
                    }
                    None => self.follow_edge(&topology, i, &mut next)?,
                },
            }
        }
        next.extend_from_slice(goto);
        normalize(&mut next);
        self.work.frontier = next;
        self.save(CheckpointLabel::Resume, RunStatus::Running, &[], None)
            .await?;
        self.emit(|| Event::ResumeCompleted {
            run_id: self.scope.run_id.clone(),
            graph: self.scope.graph.to_string(),
            step: self.progress.step,
        });
        Ok(())
    }

    /// Takes out of `answers` those to subgraph nodes' questions (`research@3/approve@2`),
    /// gathered per child run (`<run>/research@3`).
    fn children_asked(
        &self,
        interrupts: &[Interrupt],
        answers: &mut Vec<(String, S::Input)>,
    ) -> Result<Vec<ChildAnswers<S::Input>>, RunError> {
        let topology = &self.graph.topology;
        // Per child run: its node, its id, and the answers for it.
        let mut children: Vec<ChildAnswers<S::Input>> = Vec::new();
        for interrupt in interrupts {
            let i = topology.find(&interrupt.node)?;
            let Some((segment, inner)) = interrupt.id.split_once('/') else {
                continue;
            };
            if topology.nodes[i].subgraph.is_none() {
                continue;
            }
            let Some(at) = answers.iter().position(|(id, _)| *id == interrupt.id) else {
                continue;
            };
            let (_, answer) = answers.swap_remove(at);
            let child = RunId::from(format!("{}/{segment}", self.scope.run_id));
            match children.iter_mut().find(|(_, run, _)| *run == child) {
                Some((_, _, given)) => given.push((inner.to_owned(), answer)),
                None => children.push((i, child, vec![(inner.to_owned(), answer)])),
            }
        }
        Ok(children)
    }

    /// Hands each child run its answers (from [`Run::children_asked`]), which it folds in and
    /// checkpoints; returns each subgraph node with the child it continues when it runs again.
    async fn answer_children(
        &self,
        children: Vec<ChildAnswers<S::Input>>,
    ) -> Result<Vec<(usize, RunId)>, RunError> {
        let topology = Arc::clone(&self.graph.topology);
        let nest = self
            .scope
            .nest
            .clone()
            .ok_or_else(|| RunError::Unresumable {
                run_id: self.scope.run_id.clone(),
                reason: "it waits on a subgraph, and its graph has no subgraph node".to_owned(),
            })?;
        let mut answered = Vec::with_capacity(children.len());
        for (i, child, given) in children {
            let Some(subgraph) = topology.nodes[i].subgraph.clone() else {
                continue;
            };
            match subgraph.as_any().downcast_ref::<SubgraphNode<S, S>>() {
                Some(same) => same.answer_same(&nest, &child, given).await?,
                None => {
                    let boxed = given
                        .into_iter()
                        .map(|(id, answer)| (id, Box::new(answer) as Box<dyn std::any::Any + Send>))
                        .collect();
                    subgraph.answer(&nest, &child, boxed).await?;
                }
            }
            answered.push((i, child));
        }
        Ok(answered)
    }
}
