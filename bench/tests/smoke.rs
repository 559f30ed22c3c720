//! Every workload runs, at a tiny scale, and computes what it must: a workload whose graph
//! broke or whose result went wrong fails here, not in a release run weeks later.

use std::collections::BTreeSet;

use trellis_bench::{Options, Row, Scale, WORKLOADS, run};

fn smoke(only: &[&str], postgres: Option<String>) -> (Vec<Row>, Vec<String>) {
    // One run at a time: `growing_state` counts the bytes this process writes, and another
    // test's SQLite files would be counted with them.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let options = Options {
        scale: Scale::Smoke,
        postgres,
        only: only.iter().map(|s| (*s).to_owned()).collect(),
        compile_in: None,
    };
    let (mut rows, mut skipped) = (Vec::new(), Vec::new());
    run(&options, &mut |row| rows.push(row), &mut |why| {
        skipped.push(why.to_owned())
    })
    .expect("every workload runs");
    (rows, skipped)
}

fn extra(row: &Row, key: &str) -> u64 {
    row.extra
        .get(key)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or_else(|| {
            panic!(
                "{} {}: no {key} in {:?}",
                row.workload, row.variant, row.extra
            )
        })
}

#[test]
fn every_workload_measures_something_sensible() {
    let (rows, skipped) = smoke(&[], None);
    let ran: BTreeSet<&str> = rows.iter().map(|row| row.workload).collect();
    assert_eq!(
        ran,
        WORKLOADS.iter().copied().collect(),
        "each workload gives rows"
    );
    for row in &rows {
        let what = format!("{} {} {}", row.workload, row.variant, row.size);
        assert!(
            row.trellis_ns.is_finite() && row.trellis_ns > 0.0,
            "{what}: {}",
            row.trellis_ns
        );
        assert!(row.size > 0, "{what}");
        match (row.baseline_ns, row.ratio) {
            (Some(floor), Some(ratio)) => {
                assert!(floor > 0.0, "{what}");
                assert!((ratio - row.trellis_ns / floor).abs() < 1e-9, "{what}");
            }
            (None, None) => {}
            other => panic!("{what}: a ratio without a floor or the reverse: {other:?}"),
        }
        assert_eq!(row.target.is_some(), row.met.is_some(), "{what}");
    }
    let variants = |workload| -> Vec<&str> {
        rows.iter()
            .filter(|r| r.workload == workload)
            .map(|r| r.variant.as_str())
            .collect()
    };
    assert_eq!(variants("loop_ckpt"), ["sqlite-full", "sqlite-normal"]);
    assert_eq!(variants("interrupt_resume"), ["memory", "sqlite-full"]);
    assert_eq!(
        variants("server"),
        [
            "sqlite-1-client",
            "sqlite-50-clients",
            "sqlite-50-p99",
            "sqlite-idle",
            "sqlite-memory"
        ]
    );
    assert_eq!(
        variants("compile"),
        [
            "chain", "chain", "mixed", "mixed", "forks", "forks", "written", "written"
        ]
    );
    assert_eq!(
        variants("tooling"),
        [
            "check",
            "fmt",
            "export-json",
            "export-dot",
            "export-mermaid",
            // Two sizes each in a smoke run (three in a full one).
            "report-human",
            "report-human",
            "report-json",
            "report-json"
        ]
    );
    assert_eq!(
        variants("editor"),
        [
            "change",
            "hover",
            "completion",
            "semantic_tokens",
            "folding_ranges",
            "long-line",
            "burst"
        ]
    );
    // The executor's and the stores' workloads stand beside their floors; the rest have none.
    for row in &rows {
        let has_floor = !matches!(
            row.workload,
            "memory" | "interrupt_resume" | "server" | "build" | "compile" | "tooling" | "editor"
        );
        assert_eq!(
            row.baseline_ns.is_some(),
            has_floor,
            "{} {}",
            row.workload,
            row.variant
        );
    }
    assert_eq!(
        skipped,
        [
            "loop_ckpt postgres: skipped, no server given (--postgres URL)",
            "server postgres: skipped, no server given (--postgres URL)"
        ]
    );

    // The state grows by a 1 KB message a step. The floor writes all of it every step (in
    // whole pages): at least 10 KB at step 10 and 20 KB at step 20. Trellis writes the message
    // (delta checkpoints): as much at step 20 as at step 10, and less than the floor.
    let growing = rows
        .iter()
        .find(|r| r.workload == "growing_state")
        .expect("growing_state");
    let early = extra(growing, "floor_bytes_at_step_10");
    let late = extra(growing, "floor_bytes_at_step_20");
    assert!(early >= 10 * 1024, "floor: {early} bytes at step 10");
    assert!(
        late >= 20 * 1024 && late > early,
        "floor: {early} then {late} bytes"
    );
    let ours_early = extra(growing, "bytes_at_step_10");
    let ours_late = extra(growing, "bytes_at_step_20");
    assert!(ours_early > 0, "trellis writes at step 10");
    assert!(
        ours_late <= 2 * ours_early && ours_late < late,
        "trellis: {ours_early} then {ours_late} bytes, the floor {late}"
    );
    assert!(extra(growing, "load_latest_ns_at_step_20") > 0);
    assert!(extra(growing, "mean_bytes_per_step") > 0);

    let memory = rows
        .iter()
        .find(|r| r.workload == "memory")
        .expect("memory");
    assert!(extra(memory, "rss_kib_at_tenth") > 0);
    assert!(extra(memory, "rss_kib_at_end") > 0);
    assert!(memory.extra.contains_key("rss_kib_growth"));
}

/// With a server (`TRELLIS_TEST_POSTGRES_URL`, as CI sets it), `loop_ckpt` measures PostgreSQL
/// too.
#[test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
fn loop_ckpt_measures_postgres_when_given_a_server() {
    let url = std::env::var("TRELLIS_TEST_POSTGRES_URL")
        .ok()
        .filter(|url| !url.is_empty())
        .expect("TRELLIS_TEST_POSTGRES_URL names a PostgreSQL server (CI must set it)");
    let (rows, skipped) = smoke(&["loop_ckpt"], Some(url));
    assert!(skipped.is_empty(), "{skipped:?}");
    let postgres = rows
        .iter()
        .find(|r| r.variant == "postgres")
        .expect("a postgres row");
    assert!(postgres.baseline_ns.is_some_and(|ns| ns > 0.0));
    assert_eq!(postgres.extra.get("steps"), Some(&serde_json::json!(21)));
}

/// With a server, `server` measures its cycle on PostgreSQL too (not judged: the issue's
/// targets are SQLite's).
#[test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
fn server_measures_postgres_when_given_a_server() {
    let url = std::env::var("TRELLIS_TEST_POSTGRES_URL")
        .ok()
        .filter(|url| !url.is_empty())
        .expect("TRELLIS_TEST_POSTGRES_URL names a PostgreSQL server (CI must set it)");
    let (rows, skipped) = smoke(&["server"], Some(url));
    assert!(skipped.is_empty(), "{skipped:?}");
    let postgres: Vec<&str> = rows
        .iter()
        .filter(|r| r.variant.starts_with("postgres"))
        .map(|r| r.variant.as_str())
        .collect();
    assert_eq!(
        postgres,
        [
            "postgres-1-client",
            "postgres-50-clients",
            "postgres-50-p99"
        ]
    );
    assert!(rows.iter().all(|r| r.trellis_ns > 0.0), "{rows:?}");
}
