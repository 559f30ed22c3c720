//! What to do about each broken rule, in the builder's terms (the `.graph` language words its
//! own help for the same codes).

use trellis_graph::{Blueprint, Limit, Violation, did_you_mean};

/// The most declared nodes an E0202 help lists.
const LISTED: usize = 8;

/// The graph's nodes as a help lists them: `` `a`, `b`, `c` `` (the first few, then how many
/// more), in declaration order.
fn declared_list(blueprint: &Blueprint) -> String {
    let nodes = &blueprint.nodes;
    if nodes.is_empty() {
        return "none is declared yet".to_owned();
    }
    let mut listed: Vec<String> = nodes
        .iter()
        .take(LISTED)
        .map(|node| format!("`{}`", node.id.as_str()))
        .collect();
    if nodes.len() > LISTED {
        listed.push(format!("and {} more", nodes.len() - LISTED));
    }
    listed.join(", ")
}

/// What to do about a violation, in the builder's terms.
pub(super) fn help(violation: &Violation, blueprint: &Blueprint) -> String {
    let node = |at: usize| blueprint.nodes[at].id.as_str();
    match violation {
        Violation::NoNodes => "add a node with `add_node`".to_owned(),
        Violation::SentToSubgraph { .. } => {
            "send to a node that reads the branch's input; add the subgraph after it".to_owned()
        }
        Violation::ReservedName { .. } => {
            "START and END are built in; give the node a name of its own".to_owned()
        }
        Violation::DuplicateNode { .. } => "remove one declaration or rename it".to_owned(),
        Violation::ZeroLimit { limit } => match limit {
            Limit::MaxSteps => "set max_steps to 1 or more".to_owned(),
            Limit::MaxVisits(_) => "give max_visits 1 or more, or none".to_owned(),
            Limit::Timeout(_) => "give a timeout above zero, or none".to_owned(),
            Limit::Retry(_) => "retry once or more, or not at all".to_owned(),
            Limit::MaxConcurrency(_) => {
                "let 1 or more branches run at once, or leave it unset for all".to_owned()
            }
            _ => "give it 1 or more, or leave it unset".to_owned(),
        },
        Violation::Undeclared { reference } => {
            let name = reference.name(blueprint);
            match name {
                "START" => "the entry is `trellis::START` (spelled `__start__`)".to_owned(),
                "END" => "the end of a branch is `trellis::END` (spelled `__end__`)".to_owned(),
                _ => match did_you_mean(name, blueprint.nodes.iter().map(|n| n.id.as_str())) {
                    Some(known) => format!("did you mean `{known}`?"),
                    None => format!(
                        "declare it with `add_node(\"{name}\", …)`, or use a declared node: {}",
                        declared_list(blueprint)
                    ),
                },
            }
        }
        Violation::EdgeOutOfEnd { .. } => "END ends a branch; nothing follows it".to_owned(),
        Violation::EdgeIntoStart { .. } => {
            "START only begins a run; lead the edge to a node or END".to_owned()
        }
        Violation::EndInFork { .. } => "a fork runs nodes; end the branches after them".to_owned(),
        Violation::OnErrorNotANode { .. } => "name a handler node".to_owned(),
        Violation::JoinOutOfStart { .. } => "join nodes only".to_owned(),
        Violation::EndInSend { .. } => {
            "send to nodes only; each leads to END by its own edge".to_owned()
        }
        Violation::EndInJoin { .. } => {
            "join into a node, and lead that node to END".to_owned()
        }
        Violation::JoinTargets { .. } => {
            "join into one node, and route or fork from it".to_owned()
        }
        Violation::LoneJoin { .. } => {
            "join two sources or more with `add_join`, or use `add_edge` for one".to_owned()
        }
        Violation::RepeatedTarget { .. } => "name each target once".to_owned(),
        Violation::NoTargets { .. } => "give the edge at least one target".to_owned(),
        Violation::TwoEntries { .. } => "keep one START edge; use `add_conditional_edges` or `add_fork` from START to reach several nodes".to_owned(),
        Violation::TwoOutgoing { .. } => "declare one edge per node: `add_conditional_edges` to choose one target, `add_fork` to run all".to_owned(),
        Violation::NoEntry => "add an edge from START, e.g. `set_entry_point(\"first\")`".to_owned(),
        Violation::NoOutgoing { node: at } => {
            let name = node(*at);
            format!("lead `{name}` somewhere, or end it: `add_edge(\"{name}\", END)`")
        }
        Violation::Unreachable { .. } => "lead an edge to it, or remove it".to_owned(),
        Violation::CannotEnd { .. } => {
            "only `max_steps` or `max_visits` stop a run there; add a path to END".to_owned()
        }
        Violation::UnboundedCycle { .. } => {
            "only `max_steps` bounds it; give one of its nodes `NodeOptions::max_visits`".to_owned()
        }
        Violation::UnevenJoin { node: at, .. } => format!(
            "join the branches into `{0}` with `add_join`, or give `{0}` `NodeOptions::defer()`, so that it runs once, after the other branches",
            node(*at)
        ),
        // A rule the builder has no words of its own for yet: what its code stands for.
        other => other.code().summary().to_owned(),
    }
}
