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
    assert_eq!(rows.len(), 6);
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
