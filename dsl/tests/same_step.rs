//! Which writers can run in one super-step (`trellis_graph::same_step_writes`), by the
//! language's semantics: each case a graph as users write it, and for each field written twice
//! in one step, the first pair of nodes found doing it.

use trellis_dsl::check;
use trellis_graph::WriteSets;

/// The pairs `source`'s first graph makes, as `first+second:field` (nodes by name).
fn pairs(source: &str) -> Vec<String> {
    let checked = check(source);
    assert!(
        !checked.has_errors(),
        "{source}\n{:#?}",
        checked.diagnostics
    );
    let graphs = &checked.module.graphs;
    let graph = &graphs[0];
    trellis_graph::same_step_writes(graph, &WriteSets::in_file(graph, graphs))
        .into_iter()
        .map(|pair| {
            format!(
                "{}+{}:{}",
                graph.nodes[pair.first].id, graph.nodes[pair.second].id, pair.field
            )
        })
        .collect()
}

#[test]
fn fork_siblings_run_together() {
    let source = "graph G { state S;
        node plan;
        node web { writes notes, pages; }
        node papers { writes notes; }
        node code { writes pages; }
        START -> plan -> web & papers & code;
        web -> END; papers -> END; code -> END;
    }";
    assert_eq!(pairs(source), ["web+papers:notes", "web+code:pages"]);
}

#[test]
fn a_fork_from_start_is_an_origin_too() {
    let source = "graph G { state S;
        node a { writes x; } node b { writes x; }
        START -> a & b; a -> END; b -> END;
    }";
    assert_eq!(pairs(source), ["a+b:x"]);
}

#[test]
fn a_router_picks_one_target() {
    let source = "graph G { state S;
        node triage;
        node refund { writes answer; }
        node explain { writes answer; }
        START -> triage -> refund | explain;
        refund -> END; explain -> END;
    }";
    assert_eq!(pairs(source), [] as [String; 0]);
}

#[test]
fn branches_meet_only_at_the_same_distance() {
    // `d` is reached by both branches at step 2 and runs once; `e` runs at step 2 beside it.
    let even = "graph G { state S;
        node a; node b { writes x; } node c { writes y; } node d { writes x, y; }
        START -> a -> b & c; b -> d; c -> d; d -> END;
    }";
    assert_eq!(pairs(even), [] as [String; 0]);
    let uneven = "graph G { state S;
        node a; node b; node c; node e { writes x; } node d { writes x; }
        START -> a -> b & c; b -> d; c -> e -> d; d -> END;
    }";
    assert_eq!(pairs(uneven), ["e+d:x"]);
    // Different lengths to END: never side by side.
    let apart = "graph G { state S;
        node a; node b { writes x; } node c; node d { writes x; }
        START -> a -> b & c; b -> END; c -> d -> END;
    }";
    assert_eq!(pairs(apart), [] as [String; 0]);
}

#[test]
fn a_waiting_join_runs_after_its_sources() {
    let source = "graph G { state S;
        node a; node b { writes x; } node c; node long { writes x; } node j { writes x; }
        START -> a -> b & c; c -> long; b & long -> j; j -> END;
    }";
    // `b` (step 1) and `long` (step 2) never meet; `j` runs after both.
    assert_eq!(pairs(source), [] as [String; 0]);
    // A join of two branches runs beside a third.
    let third = "graph G { state S;
        node a; node b; node c; node d; node d2; node j { writes x; } node d3 { writes x; }
        START -> a -> b & c & d; b & c -> j; d -> d2 -> d3; j -> END; d3 -> END;
    }";
    assert_eq!(
        pairs(third),
        [] as [String; 0],
        "j runs at step 2, d3 at step 3"
    );
    let beside = third.replace("d -> d2 -> d3", "d -> d3; d2 -> END");
    assert_eq!(pairs(&beside), ["j+d3:x"]);
}

#[test]
fn a_join_within_one_branch_is_followed_there() {
    let source = "graph G { state S;
        node a; node b; node x; node y; node z { writes n; } node c; node c2; node c3 { writes n; }
        START -> a -> b & c; b -> x & y; x & y -> z; z -> END; c -> c2 -> c3 -> END;
    }";
    assert_eq!(pairs(source), ["z+c3:n"], "z runs at step 3, after x and y");
}

#[test]
fn a_send_runs_its_branches_side_by_side() {
    let source = "graph G { state S;
        node plan; node worker { input Doc; writes summary; } node merge { writes summary; }
        START -> plan -> each worker; worker -> merge; merge -> END;
    }";
    // Every branch writes `summary` in one step; `merge` runs once, after them.
    assert_eq!(pairs(source), ["worker+worker:summary"]);
    let diverging = "graph G { state S;
        node plan; node worker { input Doc; } node keep { writes kept; } node drop { writes kept; }
        START -> plan -> each worker; worker -> keep | drop; keep -> END; drop -> END;
    }";
    assert_eq!(
        pairs(diverging),
        ["keep+drop:kept"],
        "two copies, two routes"
    );
}

#[test]
fn deferred_nodes_run_beside_deferred_nodes_only() {
    let source = "graph G { state S;
        node a; node b; node c; node c2;
        node late { defer; writes x; } node other { writes x; }
        node late2 { defer; writes y; } node late3 { defer; writes y; }
        START -> a -> b & c; b -> late; c -> c2 -> other;
        late -> late2; other -> END; late2 -> END; late3 -> END;
    }";
    assert_eq!(pairs(source), [] as [String; 0]);
    let two = "graph G { state S;
        node a; node b; node c; node c2;
        node left { defer; writes y; } node right { defer; writes y; }
        START -> a -> b & c; b -> left; c -> c2 -> right; left -> END; right -> END;
    }";
    assert_eq!(
        pairs(two),
        ["left+right:y"],
        "both wait, then run in one step"
    );
}

#[test]
fn loops_repeat_their_distances() {
    // `b` runs at steps 1, 3, 5…: beside `c3` (3), never beside `c2` (2).
    let source = "graph G { state S; max_steps 40;
        node a; node b { writes x; } node b2 { max_visits 5; }
        node c; node c2 { writes x; } node c3 { writes y; }
        START -> a -> b & c; b -> b2; b2 -> b | END; c -> c2 -> c3 -> END;
    }";
    assert_eq!(pairs(source), [] as [String; 0]);
    let meeting = source.replace("node c3 { writes y; }", "node c3 { writes x; }");
    assert_eq!(pairs(&meeting), ["b+c3:x"]);
}

#[test]
fn an_error_handler_runs_a_step_after_its_node() {
    let source = "graph G { state S;
        node a; node b { on_error failed; } node failed { writes log; }
        node c; node d { writes log; }
        START -> a -> b & c; b -> END; c -> d -> END; failed -> END;
    }";
    assert_eq!(pairs(source), ["failed+d:log"]);
}

#[test]
fn nested_forks_and_their_outer_branches() {
    let source = "graph G { state S;
        node a; node b; node x { writes n, m; } node y { writes n; } node c; node c2 { writes m; }
        START -> a -> b & c; b -> x & y; c -> c2; x -> END; y -> END; c2 -> END;
    }";
    assert_eq!(pairs(source), ["x+y:n", "x+c2:m"]);
    // One pair a field is enough: the field's reducer combines or not.
    let wide = "graph G { state S;
        node a; node b { writes n; } node c { writes n; } node d { writes n; }
        START -> a -> b & c & d; b -> END; c -> END; d -> END;
    }";
    assert_eq!(pairs(wide), ["b+c:n"]);
}

#[test]
fn graphs_without_write_sets_cost_nothing_and_say_nothing() {
    let source = "graph G { node a; node b; node c; START -> a -> b & c; b -> END; c -> END; }";
    assert_eq!(pairs(source), [] as [String; 0]);
}

#[test]
fn branches_that_meet_run_their_next_node_once() {
    // `b` and `c` meet at `r` (step 2), which runs once and picks one of `x` and `y`, while
    // `e`'s branch still runs: `x` and `y` never run together.
    let merged = "graph G { state S;
        node a; node b; node c; node e; node e2; node e3; node e4;
        node r; node x { writes f; } node y { writes f; }
        START -> a -> b & c & e; b -> r; c -> r; r -> x | y; x -> END; y -> END;
        e -> e2 -> e3 -> e4 -> END;
    }";
    assert_eq!(pairs(merged), [] as [String; 0]);
    // A send's copies meet likewise.
    let sent = "graph G { state S;
        node plan; node worker { input Doc; } node r; node x { writes f; } node y { writes f; }
        START -> plan -> each worker; worker -> r; r -> x | y; x -> END; y -> END;
    }";
    assert_eq!(pairs(sent), [] as [String; 0]);
    // But a branch whose router may go elsewhere runs beside the one that reaches `r`.
    let apart = "graph G { state S;
        node a; node b; node c; node r { writes f; } node s { writes f; }
        START -> a -> b & c; b -> r | s; c -> r; r -> END; s -> END;
    }";
    assert_eq!(pairs(apart), ["r+s:f"]);
}

#[test]
fn a_subgraph_node_writes_what_its_child_writes() {
    // `review` runs `Review` on the same state: beside `web`, it writes `notes` and `verdict`.
    let source = "graph Desk { state S;
        node plan; node web { writes notes; } node review { graph Review; }
        START -> plan -> web & review; web -> END; review -> END;
    }
    graph Review { state S;
        node read { writes notes; } node judge { writes verdict; }
        START -> read -> judge -> END;
    }";
    assert_eq!(pairs(source), ["web+review:notes"]);
    // Through the child's own subgraph node too.
    let nested = source.replace("node read { writes notes; }", "node read { graph Read; }")
        + "graph Read { state S; node skim { writes notes; } START -> skim -> END; }";
    assert_eq!(pairs(&nested), ["web+review:notes"]);
}

#[test]
fn a_subgraph_that_may_write_anything_is_not_checked() {
    // One node of the child without `writes`: the child may write anything, as such a node may.
    let undeclared = "graph Desk { state S;
        node plan; node web { writes notes; } node review { graph Review; }
        START -> plan -> web & review; web -> END; review -> END;
    }
    graph Review { state S;
        node read { writes notes; } node judge;
        START -> read -> judge -> END;
    }";
    assert_eq!(pairs(undeclared), [] as [String; 0]);
    // A child on another state type: its mapping makes the parent's update.
    let mapped = undeclared
        .replace("node judge;", "node judge { writes notes; }")
        .replace("graph Review { state S;", "graph Review { state T;");
    assert_eq!(pairs(&mapped), [] as [String; 0]);
    // Another module's graph is not known here.
    let elsewhere = "graph Desk { state S;
        node plan; node web { writes notes; } node review { graph review::Review; }
        START -> plan -> web & review; web -> END; review -> END;
    }";
    assert_eq!(pairs(elsewhere), [] as [String; 0]);
}
