//! `compile` as the binary runs it: each compile in a process of its own, through this build's
//! `trellis-bench --compile-once`. A test binary of its own: the smoke test measures the bytes
//! its process writes, and these compiles would write some of them.

use trellis_bench::{Options, Scale, run};

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
    // Four shapes, two sizes each.
    assert_eq!(rows.len(), 8);
    for row in &rows {
        let what = format!("{} {}", row.variant, row.size);
        assert!(row.trellis_ns > 0.0, "{what}");
        let in_process = row
            .extra
            .get("in_process_ns")
            .and_then(serde_json::Value::as_u64);
        assert!(
            in_process.is_some_and(|ns| ns > 0),
            "{what}: {:?}",
            row.extra
        );
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

/// What the parent reads is the time of a real compile: the generated file is there, and it is
/// the graph's module.
#[test]
fn a_compile_once_writes_the_graph_and_prints_its_time() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let input = dir.path().join("once.graph");
    std::fs::write(
        &input,
        "graph Once { state S; node a; node b; START -> a; a -> b; b -> END; }",
    )
    .expect("the graph is written");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_trellis-bench"))
        .arg("--compile-once")
        .arg(&input)
        .arg(dir.path())
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let nanos: u64 = stdout.trim().parse().expect("nanoseconds");
    assert!(nanos > 0);
    let generated = std::fs::read_to_string(dir.path().join("once.rs")).expect("once.rs");
    assert!(generated.contains("pub mod once"), "{generated}");
}
