//! Every workload runs, at a tiny scale, and computes what it must: a workload whose graph
//! broke or whose result went wrong fails here, not in a release run weeks later.

use std::collections::BTreeSet;

use trellis_bench::{Options, Row, Scale, WORKLOADS, run};

fn smoke(only: &[&str], postgres: Option<String>) -> (Vec<Row>, Vec<String>) {
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
        variants("compile"),
        ["chain", "chain", "mixed", "mixed", "forks", "forks"]
    );
    assert_eq!(
        variants("tooling"),
        [
            "check",
            "fmt",
            "export-json",
            "export-dot",
            "export-mermaid"
        ]
    );
    assert_eq!(variants("editor"), ["change", "hover", "completion"]);
    // The executor's and the stores' workloads stand beside their floors; the rest have none.
    for row in &rows {
        let has_floor = !matches!(
            row.workload,
            "memory" | "interrupt_resume" | "build" | "compile" | "tooling" | "editor"
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
        ["loop_ckpt postgres: skipped, no server given (--postgres URL)"]
    );

    // The state grows by a 1 KB message a step, and each step writes all of it (in whole
    // pages): at least 10 KB at step 10 and 20 KB at step 20, for trellis and the floor alike.
    let growing = rows
        .iter()
        .find(|r| r.workload == "growing_state")
        .expect("growing_state");
    for side in ["", "floor_"] {
        let early = extra(growing, &format!("{side}bytes_at_step_10"));
        let late = extra(growing, &format!("{side}bytes_at_step_20"));
        assert!(early >= 10 * 1024, "{side}: {early} bytes at step 10");
        assert!(
            late >= 20 * 1024 && late > early,
            "{side}: {early} then {late} bytes"
        );
    }

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

/// As the binary runs it: each compile also in a process of its own (this build's
/// `trellis-bench --compile-once`), judged on that, with the in-process figures beside.
#[test]
fn compile_times_each_compile_in_a_process_of_its_own() {
    let options = Options {
        scale: Scale::Smoke,
        postgres: None,
        only: vec!["compile".to_owned()],
        compile_in: Some(env!("CARGO_BIN_EXE_trellis-bench").into()),
    };
    let mut rows = Vec::new();
    run(&options, &mut |row| rows.push(row), &mut |why| {
        panic!("nothing is skipped: {why}")
    })
    .expect("compile runs");
    assert_eq!(rows.len(), 6);
    for row in &rows {
        let what = format!("{} {}", row.variant, row.size);
        assert!(row.trellis_ns > 0.0, "{what}");
        assert!(extra(row, "in_process_ns") > 0, "{what}");
    }
    for row in rows.iter().filter(|row| row.size == 200) {
        let factor = |key: &str| row.extra.get(key).and_then(serde_json::Value::as_f64);
        assert!(factor("time_vs_20").is_some_and(|f| f > 0.0), "{row:?}");
        assert!(
            factor("in_process_vs_20").is_some_and(|f| f > 0.0),
            "{row:?}"
        );
    }
}

#[test]
fn a_compile_once_that_fails_says_why() {
    let missing = std::env::temp_dir().join("trellis-bench-no-such.graph");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_trellis-bench"))
        .arg("--compile-once")
        .arg(&missing)
        .arg(std::env::temp_dir())
        .output()
        .expect("the binary runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("trellis-bench-no-such.graph"), "{stderr}");
}
