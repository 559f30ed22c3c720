//! A real crate, built by a real `cargo check`: a `.graph` compiled by build.rs and one pulled in
//! with `include_graph!`. A mistake in either fails `cargo check` naming `FILE:LINE:COL`, the
//! code and the message — in the terminal and in `--message-format=json`, which editors read —
//! the build script never panics, and editing a graph file is enough to rebuild.

use std::path::{Path, PathBuf};
use std::process::Command;

const BUILT: &str = "\
/// Built by build.rs.
graph Built {
    node draft;
    node review;
    START -> draft;
    draft -> review;
    review -> END;
}
";

const INCLUDED: &str = "\
graph Included {
    node plan;
    START -> plan;
    plan -> END;
}
";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is in the workspace")
        .to_owned()
}

/// Writes the fixture crate into a fresh directory.
fn fixture() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trellis-fixture-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("fixture dir");
    std::fs::create_dir_all(dir.join("graphs")).expect("fixture dir");
    let repo = repo();
    let manifest = format!(
        r#"[package]
name = "fixture"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
trellis = {{ path = "{runtime}" }}

[build-dependencies]
trellis-codegen = {{ path = "{codegen}" }}
"#,
        runtime = repo.join("runtime").display(),
        codegen = repo.join("codegen").display()
    );
    let write =
        |path: &str, text: &str| std::fs::write(dir.join(path), text).expect("fixture file");
    write("Cargo.toml", &manifest);
    // The workspace's lock file pins the same versions, so no registry is needed.
    std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).expect("lock file");
    write(
        "build.rs",
        "fn main() -> Result<(), trellis_codegen::Error> {\n    trellis_codegen::compile(&[\"graphs/built.graph\"])\n}\n",
    );
    write(
        "src/main.rs",
        "trellis::include_graphs!(\"built\");\ntrellis::include_graph!(\"graphs/included.graph\");\n\nfn main() {\n    println!(\"{} {}\", built::NAME, included::NAME);\n}\n",
    );
    write("graphs/built.graph", BUILT);
    write("graphs/included.graph", INCLUDED);
    dir
}

struct Check {
    success: bool,
    /// `--message-format=json` lines on stdout.
    json: String,
    stderr: String,
}

fn cargo_check(dir: &Path) -> Check {
    let output = Command::new(env!("CARGO"))
        .args(["check", "--offline", "--message-format=json"])
        .current_dir(dir)
        // Its own target directory: the outer cargo holds a lock on the workspace's.
        .env(
            "CARGO_TARGET_DIR",
            repo().join("target").join("fixture-crate"),
        )
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    Check {
        success: output.status.success(),
        json: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The rendered compiler errors of a `--message-format=json` run, as an editor reads them.
fn compiler_errors(json: &str) -> Vec<String> {
    json.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|v| v["reason"] == "compiler-message" && v["message"]["level"] == "error")
        .filter_map(|v| v["message"]["rendered"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn malformed_graphs_fail_cargo_check_where_the_mistake_is_and_edits_rebuild() {
    let dir = fixture();

    let clean = cargo_check(&dir);
    assert!(
        clean.success,
        "the valid fixture must check: {}",
        clean.stderr
    );

    // A typo in the graph compiled by build.rs.
    std::fs::write(
        dir.join("graphs/built.graph"),
        BUILT.replace("draft -> review", "draft -> reveiw"),
    )
    .expect("edit");
    let broken = cargo_check(&dir);
    assert!(!broken.success, "a malformed graph must fail cargo check");
    assert!(
        !broken.stderr.contains("panicked"),
        "the build script never panics: {}",
        broken.stderr
    );
    let errors = compiler_errors(&broken.json);
    assert_eq!(errors.len(), 1, "one mistake, one error: {errors:#?}");
    let error = &errors[0];
    assert!(
        error.contains("E0202: node `reveiw` is not declared in graph `Built`"),
        "{error}"
    );
    assert!(error.contains("--> graphs/built.graph:6:14"), "{error}");
    assert!(
        error.contains("draft -> reveiw;"),
        "the source line is quoted: {error}"
    );
    assert!(error.contains("help: did you mean `review`?"), "{error}");
    // The terminal sees it too (cargo prints the build script's warnings and the error).
    assert!(
        broken.stderr.contains("graphs/built.graph:6:14"),
        "{}",
        broken.stderr
    );

    // Fixing it is enough: rerun-if-changed reruns the build script.
    std::fs::write(dir.join("graphs/built.graph"), BUILT).expect("edit");
    assert!(cargo_check(&dir).success);

    // A typo in the file include_graph! reads: the edit alone triggers the rebuild.
    std::fs::write(
        dir.join("graphs/included.graph"),
        INCLUDED.replace("plan -> END", "plan -> ENDD"),
    )
    .expect("edit");
    let broken = cargo_check(&dir);
    assert!(
        !broken.success,
        "a malformed included graph must fail cargo check"
    );
    let errors = compiler_errors(&broken.json);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].contains("--> graphs/included.graph:4:13"),
        "{}",
        errors[0]
    );
    assert!(errors[0].contains("plan -> ENDD;"), "{}", errors[0]);
    assert!(
        errors[0].contains("src/main.rs:2:25"),
        "the error points at the path: {}",
        errors[0]
    );

    std::fs::write(dir.join("graphs/included.graph"), INCLUDED).expect("edit");
    assert!(cargo_check(&dir).success);
    let _ = std::fs::remove_dir_all(&dir);
}
