//! What each node of a blueprint does in an agent turn, read from its `kind`, and how each
//! conditional edge is routed: checked once, when the agent is built, so that a blueprint that
//! cannot run is refused with the node named, never half-run.

use trellis::blueprint::{Blueprint, EdgeKind, Endpoint, MetaValue, Node, NodeKind};

use super::state::Next;
use crate::error::AgentError;

/// What a node does, from its kind and settings.
#[derive(Debug, Clone)]
pub(crate) enum Role {
    /// Calls the model.
    Dispatch {
        /// `meta instruction`: said to the model for this call only.
        instruction: Option<String>,
        /// `meta tools = false`: advertise none.
        tools: bool,
    },
    /// Reads the answer, trips the repeat breaker.
    Parse { repeat_limit: u32 },
    /// Ends the turn, asks first, or runs the tools.
    StopCheck {
        cap: Option<u32>,
        approval: Approval,
    },
    /// Asks a person before side effects.
    Approve,
    /// Checks and runs tool calls.
    Tools,
    /// Shortens old tool results.
    Compact { keep_chars: usize },
    /// Records the final answer: the last text of a `dispatch` node (these), not a review's.
    Finalize { answered_by: Vec<String> },
    /// Has the model judge the result.
    Review {
        instruction: Option<String>,
        rounds: Option<u32>,
    },
    /// Hands the orchestrator's part of the task to another agent.
    Delegate { agent: String },
}

/// Which batches of tool calls a `stop_check` sends to its `hitl` target before they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Approval {
    /// None: it has no `hitl` target, or the `tools` nodes pause before every batch.
    Never,
    /// Those with a call to a tool with side effects.
    SideEffects,
    /// Every batch with a call that would run (`approve_tools`).
    Every,
}

/// A blueprint read for an agent turn.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) roles: Vec<Role>,
    /// For each edge, in blueprint order: for a conditional one, where each `Next` leads.
    pub(crate) routes: Vec<Vec<(Next, String)>>,
    /// The agents the blueprint's `delegate(…)` nodes hand work to.
    pub(crate) delegates: Vec<String>,
    /// Whether a `tools` node runs the agent's tools (else none is advertised).
    pub(crate) runs_tools: bool,
}

impl Plan {
    /// For `approve_tools`: a person approves every batch of calls once. When every
    /// `stop_check` can ask through a `hitl` node and every way into a `tools` node is through
    /// one of them, they ask for every batch, naming its calls (`true`). Otherwise none asks,
    /// and the caller pauses the run before each `tools` node instead (`false`): asking in
    /// both places would ask twice for one batch.
    pub(crate) fn approve_every_batch(&mut self, blueprint: &Blueprint) -> bool {
        let role_of = |endpoint: &Endpoint| match endpoint {
            Endpoint::Node(name) => blueprint
                .nodes
                .iter()
                .position(|n| &n.id == name)
                .map(|at| &self.roles[at]),
            Endpoint::Start | Endpoint::End => None,
        };
        let stop_checks = self
            .roles
            .iter()
            .filter_map(|role| match role {
                Role::StopCheck { approval, .. } => Some(*approval),
                _ => None,
            })
            .collect::<Vec<_>>();
        let all_ask = !stop_checks.is_empty()
            && stop_checks.iter().all(|a| *a != Approval::Never)
            && blueprint.edges.iter().all(|edge| {
                !edge
                    .targets
                    .iter()
                    .any(|to| matches!(role_of(to), Some(Role::Tools)))
                    || matches!(
                        role_of(&edge.from),
                        Some(Role::StopCheck { .. } | Role::Approve)
                    )
            });
        let approval = if all_ask {
            Approval::Every
        } else {
            Approval::Never
        };
        for role in &mut self.roles {
            if let Role::StopCheck { approval: a, .. } = role {
                *a = approval;
            }
        }
        all_ask
    }
}

/// The kind a review node is written with: `kind "review";`.
pub(crate) const REVIEW: &str = "review";

impl Plan {
    pub(crate) fn read(blueprint: &Blueprint) -> Result<Plan, AgentError> {
        let fail = |message: String| AgentError::Blueprint {
            blueprint: blueprint.name.clone(),
            message,
        };
        let roles = blueprint
            .nodes
            .iter()
            .map(|node| role(node).map_err(&fail))
            .collect::<Result<Vec<_>, _>>()?;
        let kind_of = |endpoint: &Endpoint| -> Option<(String, Option<&Role>)> {
            match endpoint {
                Endpoint::Node(name) => {
                    let at = blueprint.nodes.iter().position(|n| &n.id == name)?;
                    Some((name.clone(), Some(&roles[at])))
                }
                Endpoint::End => Some((trellis::END.to_owned(), None)),
                Endpoint::Start => None,
            }
        };
        let mut routes = Vec::with_capacity(blueprint.edges.len());
        for edge in &blueprint.edges {
            if edge.kind != EdgeKind::Conditional {
                routes.push(Vec::new());
                continue;
            }
            let Endpoint::Node(from) = &edge.from else {
                return Err(fail("a conditional entry (`START -> a | b`) has nothing to route it by in an agent turn".into()));
            };
            let targets: Vec<_> = edge.targets.iter().filter_map(kind_of).collect();
            let source = blueprint
                .nodes
                .iter()
                .position(|n| &n.id == from)
                .map(|at| &roles[at]);
            let wanted: &[Next] = match source {
                Some(Role::StopCheck { .. }) => &[Next::Tools, Next::Approve, Next::Finish],
                Some(Role::Review { .. }) => &[Next::Finish, Next::Rework],
                _ => {
                    return Err(fail(format!(
                        "the conditional edge from `{from}` cannot be routed: only `stop_check` and `review` nodes choose among targets"
                    )));
                }
            };
            let mut table = Vec::new();
            for next in wanted {
                match route(*next, &targets) {
                    Some(target) => table.push((*next, target)),
                    None if *next == Next::Approve => {}
                    None => {
                        return Err(fail(format!(
                            "`{from}` needs {} among its targets",
                            match next {
                                Next::Tools => "a node of kind `tools`",
                                Next::Finish =>
                                    "a node of kind `finalize` (or one other target to finish by)",
                                Next::Rework | Next::Approve =>
                                    "one target that is not `finalize`, to rework the result",
                            }
                        )));
                    }
                }
            }
            routes.push(table);
        }
        // A stop_check asks a person only when it has a `hitl` target to send the turn to.
        let mut roles = roles;
        for (edge, table) in blueprint.edges.iter().zip(&routes) {
            if let Endpoint::Node(from) = &edge.from
                && let Some(at) = blueprint.nodes.iter().position(|n| &n.id == from)
                && let Role::StopCheck { approval, .. } = &mut roles[at]
                && table.iter().any(|(next, _)| *next == Next::Approve)
            {
                *approval = Approval::SideEffects;
            }
        }
        let dispatchers: Vec<String> = blueprint
            .nodes
            .iter()
            .zip(&roles)
            .filter(|(_, role)| matches!(role, Role::Dispatch { .. }))
            .map(|(node, _)| node.id.clone())
            .collect();
        for role in &mut roles {
            if let Role::Finalize { answered_by } = role {
                answered_by.clone_from(&dispatchers);
            }
        }
        let mut delegates: Vec<String> = Vec::new();
        for role in &roles {
            if let Role::Delegate { agent } = role
                && !delegates.contains(agent)
            {
                delegates.push(agent.clone());
            }
        }
        let runs_tools = roles.iter().any(|role| matches!(role, Role::Tools));
        Ok(Plan {
            roles,
            routes,
            delegates,
            runs_tools,
        })
    }
}

/// The target `next` leads to among `targets` (name, role; END has none).
fn route(next: Next, targets: &[(String, Option<&Role>)]) -> Option<String> {
    let of = |wanted: fn(&Role) -> bool| {
        targets
            .iter()
            .find(|(_, role)| role.is_some_and(wanted))
            .map(|(name, _)| name.clone())
    };
    let only = |excluded: fn(&Role) -> bool| {
        let mut rest = targets
            .iter()
            .filter(|(_, role)| !role.is_some_and(excluded));
        match (rest.next(), rest.next()) {
            (Some((name, _)), None) => Some(name.clone()),
            _ => None,
        }
    };
    match next {
        Next::Tools => of(|r| matches!(r, Role::Tools)),
        Next::Approve => of(|r| matches!(r, Role::Approve)),
        Next::Finish => of(|r| matches!(r, Role::Finalize { .. }))
            .or_else(|| only(|r| matches!(r, Role::Tools | Role::Approve))),
        Next::Rework => only(|r| matches!(r, Role::Finalize { .. })),
    }
}

fn role(node: &Node) -> Result<Role, String> {
    let text = |key: &str| {
        node.meta.iter().find_map(|(k, v)| match v {
            MetaValue::Text(text) if k == key => Some(text.clone()),
            _ => None,
        })
    };
    let number = |key: &str, default: u32| -> Result<u32, String> {
        match node.meta.iter().find(|(k, _)| k == key) {
            None => Ok(default),
            Some((_, MetaValue::Integer(n))) => Ok(*n),
            Some(_) => Err(format!("node `{}`: `meta {key}` must be a number", node.id)),
        }
    };
    let flag = |key: &str| -> Result<bool, String> {
        match node.meta.iter().find(|(k, _)| k == key) {
            None => Ok(true),
            Some((_, MetaValue::Bool(on))) => Ok(*on),
            Some(_) => Err(format!(
                "node `{}`: `meta {key}` must be true or false",
                node.id
            )),
        }
    };
    Ok(match &node.kind {
        Some(NodeKind::Dispatch) => Role::Dispatch {
            instruction: text("instruction"),
            tools: flag("tools")?,
        },
        Some(NodeKind::Parse) => Role::Parse {
            repeat_limit: number("repeat_limit", 3)?.max(2),
        },
        Some(NodeKind::StopCheck) => Role::StopCheck {
            cap: node.max_visits,
            approval: Approval::Never,
        },
        Some(NodeKind::Hitl) => Role::Approve,
        Some(NodeKind::Tools) => Role::Tools,
        Some(NodeKind::Compact) => Role::Compact {
            keep_chars: number("keep_chars", 4000)? as usize,
        },
        Some(NodeKind::Finalize) => Role::Finalize {
            answered_by: Vec::new(),
        },
        Some(NodeKind::Delegate(agent)) => Role::Delegate {
            agent: agent.clone(),
        },
        Some(NodeKind::Custom(kind)) if kind == REVIEW => Role::Review {
            instruction: text("instruction"),
            rounds: node.max_visits,
        },
        Some(NodeKind::Custom(kind)) => {
            return Err(format!(
                "node `{}` has kind \"{kind}\", which agent turns do not know (they know the built-in kinds, `delegate(agent)` and \"{REVIEW}\")",
                node.id
            ));
        }
        None => {
            return Err(format!(
                "node `{}` has no `kind`: in an agent blueprint every node says what it does (`kind dispatch;`, `kind tools;`, …)",
                node.id
            ));
        }
    })
}
