//! The step algorithm, rule by rule, on small graphs and no runtime: what the language
//! reference says each edge, limit and command does.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::*;
use crate::graph::CompiledGraph;
use crate::interrupt::InterruptRequest;
use crate::{END, GraphBuilder, NodeOptions, NodeResult, START, WholeState, send::SendTo};

/// A state whose updates append, so that the order they merge in shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Log(Vec<String>);

impl WholeState for Log {
    const COMBINES: bool = true;
    fn merge(&mut self, update: Self) {
        self.0.extend(update.0);
    }
}

/// A state whose updates overwrite it: two in one step conflict.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Count(u32);

impl WholeState for Count {}

fn graph<S: GraphState + Default>(
    nodes: &[&str],
    declare: impl FnOnce(&mut GraphBuilder<S>),
) -> CompiledGraph<S> {
    graph_with(nodes, |_| NodeOptions::new(), declare)
}

fn graph_with<S: GraphState + Default>(
    nodes: &[&str],
    options: impl Fn(&str) -> NodeOptions,
    declare: impl FnOnce(&mut GraphBuilder<S>),
) -> CompiledGraph<S> {
    let mut builder = GraphBuilder::<S>::new("Rules");
    for &node in nodes {
        builder.add_node_fn_with(node, |_, _| async { Ok(NodeResult::None) }, options(node));
    }
    declare(&mut builder);
    match builder.compile() {
        Ok(graph) => graph,
        Err(error) => panic!("the test's graph does not compile: {error}"),
    }
}

fn at<S: GraphState>(graph: &CompiledGraph<S>, name: &str) -> usize {
    graph.topology.index[name]
}

/// Where the step leads when the nodes `followed` ran on `state`: the next frontier, by name.
fn leads<S: GraphState>(
    graph: &CompiledGraph<S>,
    state: &S,
    work: &mut Work,
    followed: &[&str],
) -> Result<Vec<String>, RunError> {
    let topology = &graph.topology;
    let visits = vec![1; topology.nodes.len()];
    let mut follow: Vec<usize> = followed.iter().map(|name| at(graph, name)).collect();
    let mut next = Vec::new();
    lead_on(
        topology,
        state,
        &visits,
        work,
        false,
        None,
        &mut follow,
        &mut next,
    )?;
    Ok(names(graph, &next))
}

fn names<S: GraphState>(graph: &CompiledGraph<S>, nodes: &[usize]) -> Vec<String> {
    let topology = &graph.topology;
    nodes
        .iter()
        .map(|&i| topology.nodes[i].name.to_string())
        .collect()
}

fn work_for<S: GraphState>(graph: &CompiledGraph<S>) -> Work {
    Work::new(graph.topology.joins.len())
}

#[test]
fn a_static_edge_leads_to_its_node_and_an_edge_to_end_to_none() {
    let g = graph::<Log>(&["a", "b"], |b| {
        b.add_edge(START, "a").add_edge("a", "b").add_edge("b", END);
    });
    let mut work = work_for(&g);
    assert_eq!(
        leads(&g, &Log::default(), &mut work, &["a"]).unwrap(),
        ["b"]
    );
    assert!(
        leads(&g, &Log::default(), &mut work, &["b"])
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_fork_runs_every_target_and_a_node_two_branches_reach_runs_once() {
    let g = graph::<Log>(&["a", "c", "b", "d"], |b| {
        b.add_edge(START, "a")
            .add_fork("a", ["b", "c"])
            .add_edge("b", "d")
            .add_edge("c", "d")
            .add_edge("d", END);
    });
    let mut work = work_for(&g);
    // In declaration order (`c` before `b`), whatever order the fork names them in.
    assert_eq!(
        leads(&g, &Log::default(), &mut work, &["a"]).unwrap(),
        ["c", "b"]
    );
    assert_eq!(
        leads(&g, &Log::default(), &mut work, &["c", "b"]).unwrap(),
        ["d"]
    );
}

#[test]
fn a_join_runs_its_node_once_every_source_is_done_and_then_starts_over() {
    let g = graph::<Log>(&["a", "b", "c", "d"], |b| {
        b.add_edge(START, "a")
            .add_fork("a", ["b", "c"])
            .add_join(["b", "c"], "d")
            .add_edge("d", END);
    });
    let mut work = work_for(&g);
    let state = Log::default();
    assert!(leads(&g, &state, &mut work, &["c"]).unwrap().is_empty());
    // A source done twice before the others counts once.
    assert!(leads(&g, &state, &mut work, &["c"]).unwrap().is_empty());
    assert_eq!(work.arrived, [vec![at(&g, "c")]]);
    assert_eq!(leads(&g, &state, &mut work, &["b"]).unwrap(), ["d"]);
    assert!(work.arrived[0].is_empty(), "the join starts over");
}

#[test]
fn a_conditional_edge_routes_on_the_merged_state_and_only_to_what_it_declares() {
    let g = graph::<Log>(&["a", "long", "short"], |b| {
        b.add_edge(START, "a")
            .add_conditional_edges(
                "a",
                |log: &Log| match log.0.len() {
                    0 => "short",
                    1 => "long",
                    _ => "nowhere",
                },
                ["long", "short"],
            )
            .add_edge("long", END)
            .add_edge("short", END);
    });
    let mut work = work_for(&g);
    let mut state = Arc::new(Log::default());
    assert_eq!(leads(&g, &state, &mut work, &["a"]).unwrap(), ["short"]);
    let mut updates = Updates::None;
    updates.push("a", Log(vec!["one".into()]));
    merge(&mut state, updates, 1).unwrap();
    assert_eq!(leads(&g, &state, &mut work, &["a"]).unwrap(), ["long"]);
    Arc::make_mut(&mut state).0.push("two".into());
    let error = leads(&g, &state, &mut work, &["a"]).unwrap_err();
    assert!(
        matches!(&error, RunError::UndeclaredTarget { node, target } if node == "a" && target == "nowhere"),
        "{error:?}"
    );
}

#[test]
fn a_send_edge_sends_one_branch_per_input_in_order() {
    let g = graph::<Log>(&["a", "w"], |b| {
        b.add_edge(START, "a")
            .add_send(
                "a",
                |log: &Log, _| {
                    log.0
                        .iter()
                        .map(|item| SendTo::json("w", item.as_str().into()))
                        .collect()
                },
                ["w"],
            )
            .add_edge("w", END);
    });
    let mut work = work_for(&g);
    let state = Log(vec!["x".into(), "y".into()]);
    assert!(
        leads(&g, &state, &mut work, &["a"]).unwrap().is_empty(),
        "sent, not led to"
    );
    let sent: Vec<_> = work
        .sends
        .iter()
        .map(|(i, input)| (*i, (**input).clone()))
        .collect();
    assert_eq!(sent, [(at(&g, "w"), "x".into()), (at(&g, "w"), "y".into())]);
}

#[test]
fn branches_leave_in_the_order_of_the_nodes_that_sent_them_commands_among_edges() {
    let g = graph::<Log>(&["s", "a", "b", "c", "w"], |b| {
        let to_w = |from: &'static str| {
            move |_: &Log, _: &Visits<'_>| vec![SendTo::json("w", from.into())]
        };
        b.add_edge(START, "s")
            .add_fork("s", ["a", "b", "c"])
            .add_send("a", to_w("a"), ["w"])
            .add_send("b", to_w("b edge"), ["w"])
            .add_send("c", to_w("c"), ["w"])
            .add_edge("w", END);
    });
    let topology = &g.topology;
    let (a, b, c, w) = (at(&g, "a"), at(&g, "b"), at(&g, "c"), at(&g, "w"));
    let mut work = work_for(&g);
    let visits = vec![0; topology.nodes.len()];
    // `b` sent by command (its edge is not followed); `a` and `c` by their edges.
    let commanded = vec![(b, w, Arc::new("b command".into()))];
    let (mut follow, mut next) = (vec![c, a], Vec::new());
    let state = Log::default();
    lead_on(
        topology,
        &state,
        &visits,
        &mut work,
        false,
        Some(commanded),
        &mut follow,
        &mut next,
    )
    .unwrap();
    let inputs: Vec<_> = work
        .sends
        .iter()
        .map(|(_, input)| (**input).clone())
        .collect();
    assert_eq!(inputs, ["a", "b command", "c"]);
}

#[test]
fn a_node_runs_up_to_its_max_visits_and_the_routers_see_this_steps_visits() {
    let g = graph_with::<Log>(
        &["a"],
        |_| NodeOptions::new().max_visits(2),
        |b| {
            b.add_edge(START, "a").add_conditional_edges_with_visits(
                "a",
                |_, visits| if visits.of("a") < 2 { "a" } else { END },
                ["a", END],
            );
        },
    );
    let topology = &g.topology;
    let a = at(&g, "a");
    let mut visits = vec![0; topology.nodes.len()];
    let mut work = work_for(&g);
    let route = |visits: &[u32], work: &mut Work| {
        let (mut follow, mut next) = (vec![a], Vec::new());
        let state = Log::default();
        lead_on(
            topology,
            &state,
            visits,
            work,
            false,
            None,
            &mut follow,
            &mut next,
        )
        .unwrap();
        names(&g, &next)
    };
    within_visits(topology, &visits, a, 1).unwrap();
    count_visits::<()>(&mut visits, &[a], &[]);
    assert_eq!(route(&visits, &mut work), ["a"]);
    within_visits(topology, &visits, a, 1).unwrap();
    count_visits::<()>(&mut visits, &[a], &[]);
    assert!(route(&visits, &mut work).is_empty());
    // Two branches sent to it at once would make three.
    let error = within_visits(topology, &[1], a, 2).unwrap_err();
    assert!(
        matches!(error, RunError::VisitLimit { max_visits: 2, .. }),
        "{error:?}"
    );
}

#[test]
fn a_deferred_node_waits_while_another_branch_has_a_node_to_run() {
    let g = graph_with::<Log>(
        &["a", "b", "c", "last"],
        |node| {
            if node == "last" {
                NodeOptions::new().defer()
            } else {
                NodeOptions::new()
            }
        },
        |b| {
            b.add_edge(START, "a")
                .add_fork("a", ["b", "last"])
                .add_edge("b", "c")
                .add_edge("c", "last")
                .add_edge("last", END);
        },
    );
    let topology = &g.topology;
    let (b, last) = (at(&g, "b"), at(&g, "last"));
    assert_eq!(
        split_deferred(topology, &[b, last], false),
        Some((vec![b], vec![last]))
    );
    // Alone, it runs; beside a sent branch, it waits.
    assert_eq!(split_deferred(topology, &[last], false), None);
    assert_eq!(
        split_deferred(topology, &[last], true),
        Some((vec![], vec![last]))
    );
}

#[test]
fn goto_goes_only_to_a_declared_target_and_end_only_where_end_is_declared() {
    let g = graph::<Log>(&["a", "b", "c"], |b| {
        b.add_edge(START, "a")
            .add_conditional_edges("a", |_: &Log| "b", ["b", END])
            .add_edge("b", "c")
            .add_edge("c", END);
    });
    let topology = &g.topology;
    let (a, b) = (at(&g, "a"), at(&g, "b"));
    let absorb = |node: usize, command: Command| {
        let mut absorbed = Absorbed::<Log>::new(Vec::new(), Vec::new());
        commanded(topology, node, 1, command, None, &mut absorbed).map(|_| absorbed)
    };
    let went = absorb(a, Command::Goto("b".into())).unwrap();
    assert_eq!((went.next, went.follow), (vec![b], vec![]));
    let ended = absorb(a, Command::Goto(END.into())).unwrap();
    assert!(ended.next.is_empty() && ended.follow.is_empty());
    assert!(absorb(a, Command::End).is_ok());
    let continued = absorb(a, Command::Continue).unwrap();
    assert_eq!(continued.follow, [a], "its edges decide");
    for (node, command) in [
        (a, Command::Goto("c".into())),
        (b, Command::End),
        (a, Command::Fork(vec!["b".into(), END.into()])),
        (
            a,
            Command::Sends(vec![SendTo::json("b", serde_json::Value::Null)]),
        ),
    ] {
        let error = absorb(node, command).err();
        assert!(
            matches!(error, Some(RunError::UndeclaredTarget { .. })),
            "{error:?}"
        );
    }
}

#[test]
fn a_join_sources_goto_to_its_join_is_an_arrival() {
    let g = graph::<Log>(&["a", "b", "c", "d"], |b| {
        b.add_edge(START, "a")
            .add_fork("a", ["b", "c"])
            .add_join(["b", "c"], "d")
            .add_edge("d", END);
    });
    let mut absorbed = Absorbed::<Log>::new(Vec::new(), Vec::new());
    let b = at(&g, "b");
    commanded(
        &g.topology,
        b,
        2,
        Command::Goto("d".into()),
        None,
        &mut absorbed,
    )
    .unwrap();
    assert_eq!((absorbed.next, absorbed.follow), (vec![], vec![b]));
}

#[test]
fn an_interrupt_asks_under_its_node_and_a_branch_is_told_apart() {
    let g = graph::<Log>(&["a", "w"], |b| {
        b.add_edge(START, "a")
            .add_send("a", |_: &Log, _| Vec::new(), ["w"])
            .add_edge("w", END);
    });
    let w = at(&g, "w");
    let mut absorbed = Absorbed::<Log>::new(Vec::new(), Vec::new());
    let input = Arc::new(serde_json::Value::from("x"));
    let ask = Command::Interrupt(InterruptRequest::new("approve", "ship it?").resume_to("w"));
    let asked = commanded(&g.topology, w, 3, ask, Some((1, &input)), &mut absorbed).unwrap();
    assert!(asked);
    let rare = absorbed.rare();
    assert_eq!(rare.interrupts.len(), 1);
    assert_eq!(rare.interrupts[0].1.node, "w");
    assert!(rare.interrupts[0].1.is_of_branch());
    // Resuming to itself, the branch runs again with its own input after the answer.
    assert_eq!(rare.sends.len(), 1);
    assert_eq!(
        (rare.sends[0].0, rare.sends[0].1, &*rare.sends[0].2),
        (w, w, &*input)
    );
}

#[test]
fn updates_merge_in_declaration_order_and_a_conflict_keeps_the_state() {
    let mut log = Arc::new(Log(vec!["start".into()]));
    let mut updates = Updates::None;
    updates.push("a", Log(vec!["a".into()]));
    updates.push("b", Log(vec!["b".into()]));
    merge(&mut log, updates, 1).unwrap();
    assert_eq!(log.0, ["start", "a", "b"]);

    let mut count = Arc::new(Count(1));
    let mut updates = Updates::None;
    updates.push("a", Count(2));
    updates.push("b", Count(3));
    let error = merge(&mut count, updates, 4).unwrap_err();
    assert!(
        matches!(&error, RunError::MergeConflict { step: 4, conflict } if conflict.first == "a" && conflict.second == "b"),
        "{error:?}"
    );
    assert_eq!(*count, Count(1));
}

#[test]
fn a_node_that_asks_before_it_runs_asks_until_approved() {
    let g = graph_with::<Log>(
        &["a", "send"],
        |node| {
            if node == "send" {
                NodeOptions::new().interrupt_before()
            } else {
                NodeOptions::new()
            }
        },
        |b| {
            b.add_edge(START, "a")
                .add_edge("a", "send")
                .add_edge("send", END);
        },
    );
    let topology = &g.topology;
    let (a, send) = (at(&g, "a"), at(&g, "send"));
    assert!(asked_before(topology, &[], &[], &[a], 1).is_empty());
    let asked = asked_before(topology, &[], &[], &[a, send], 2);
    assert_eq!(asked.len(), 1);
    assert_eq!((asked[0].node.as_str(), asked[0].step), ("send", 2));
    assert!(
        asked_before(topology, &[send], &[], &[send], 2).is_empty(),
        "approved"
    );
    let work = Work {
        frontier: vec![send],
        ..work_for(&g)
    };
    assert_eq!(asked_next(topology, &work, &[], &[], 3).len(), 1);

    // A run's own breakpoint asks as the graph's `interrupt before` does, until approved.
    let asked = asked_before(topology, &[], &[a], &[a], 1);
    assert_eq!((asked[0].node.as_str(), asked[0].step), ("a", 1));
    assert_eq!(asked[0].point, InterruptPoint::Before);
    assert!(asked_before(topology, &[a], &[a], &[a], 1).is_empty());
}

#[test]
fn approvals_failures_and_children_are_used_up_by_their_nodes_run() {
    let failure = |node: &str| {
        Arc::new(NodeFailure {
            node: node.to_owned(),
            step: 1,
            attempts: 1,
            kind: crate::node::FailureKind::Failed,
            message: "boom".to_owned(),
        })
    };
    let mut held = Held {
        approved: vec![1, 2],
        failures: vec![(3, failure("x")), (4, failure("y"))],
        children: vec![(5, RunId::new())],
        ..Held::default()
    };
    used_up(&mut held, &[2, 3, 5]);
    assert_eq!(
        held.approved,
        [1],
        "a deferred node held back keeps its approval"
    );
    assert_eq!(
        held.failures.iter().map(|(h, _)| *h).collect::<Vec<_>>(),
        [4]
    );
    assert!(held.children.is_empty());
}

#[test]
fn a_frontier_is_in_declaration_order_once_each() {
    let mut frontier = vec![4, 1, 4, 0, 1];
    normalize(&mut frontier);
    assert_eq!(frontier, [0, 1, 4]);
    let mut buffer = Vec::new();
    let sent = [(2, ()), (1, ())];
    assert_eq!(with_sent(&[0, 1], &sent, &mut buffer), [0, 1, 2]);
}
