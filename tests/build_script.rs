//! A real crate, built by a real `cargo check`: a `.graph` compiled by build.rs and one pulled in
//! with `include_graph!`. A mistake in either fails `cargo check` naming `FILE:LINE:COL`, the
//! code and the message — once, in the terminal and in `--message-format=json`, which editors
//! read, at the user's include in their source file — a warning of the language is a warning of
//! the build, the build script never panics, and editing a graph file is enough to rebuild.

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
trellis-runtime = {{ path = "{runtime}" }}
serde = {{ version = "1", features = ["derive"] }}

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
        "trellis::include_generated!(\"built\");\ntrellis::include_graph!(\"graphs/included.graph\");\n\nfn main() {\n    println!(\"{} {}\", built::NAME, included::NAME);\n}\n",
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

/// `cargo check` of the fixture: `json` for what editors read, else what a terminal shows.
fn cargo_check(dir: &Path, json: bool) -> Check {
    let mut command = Command::new(env!("CARGO"));
    command.args(["check", "--offline"]);
    if json {
        command.arg("--message-format=json");
    }
    let output = command
        .current_dir(dir)
        // Its own target directory (the outer cargo holds a lock on the workspace's), inside
        // the one this test run builds in, wherever CARGO_TARGET_DIR puts it.
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixture-crate"),
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

/// The rendered compiler messages of one level (`error`, `warning`) of a
/// `--message-format=json` run, as an editor reads them.
fn compiler_messages(json: &str, level: &str) -> Vec<String> {
    json.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|v| v["reason"] == "compiler-message" && v["message"]["level"] == level)
        .filter_map(|v| v["message"]["rendered"].as_str().map(str::to_owned))
        .collect()
}

/// Where the messages of one level are, as editors place them: each primary span's file, line
/// and column.
fn primary_places(json: &str, level: &str) -> Vec<String> {
    json.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|v| v["reason"] == "compiler-message" && v["message"]["level"] == level)
        .flat_map(|v| {
            v["message"]["spans"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|span| span["is_primary"] == true)
                .map(|span| {
                    format!(
                        "{}:{}:{}",
                        span["file_name"].as_str().unwrap_or_default(),
                        span["line_start"],
                        span["column_start"]
                    )
                })
        })
        .collect()
}

fn edit(dir: &Path, file: &str, text: &str) {
    std::fs::write(dir.join(file), text).expect("edit");
}

/// The one message of `level` the check produced, which must contain every piece of `parts`.
fn the_one(check: &Check, level: &str, parts: &[&str]) -> String {
    let messages = compiler_messages(&check.json, level);
    assert_eq!(messages.len(), 1, "one mistake, one {level}: {messages:#?}");
    let message = messages.into_iter().next().unwrap_or_default();
    for part in parts {
        assert!(message.contains(part), "no `{part}` in:\n{message}");
    }
    message
}

#[test]
fn graph_mistakes_reach_cargo_check_where_they_are_and_edits_rebuild() {
    let dir = fixture();
    let clean = cargo_check(&dir, true);
    assert!(
        clean.success,
        "the valid fixture must check: {}",
        clean.stderr
    );
    assert_eq!(
        compiler_messages(&clean.json, "warning"),
        Vec::<String>::new()
    );

    // A typo in the graph compiled by build.rs: one error, where the mistake is.
    edit(
        &dir,
        "graphs/built.graph",
        &BUILT.replace("draft -> review", "draft -> reveiw"),
    );
    let broken = cargo_check(&dir, true);
    assert!(!broken.success, "a malformed graph must fail cargo check");
    assert!(
        !broken.stderr.contains("panicked"),
        "the build script never panics: {}",
        broken.stderr
    );
    the_one(
        &broken,
        "error",
        &[
            "E0202: node `reveiw` is not declared in graph `Built`",
            "--> graphs/built.graph:6:14",
            "draft -> reveiw;",
            "help: did you mean `review`?",
        ],
    );
    // At the user's include, where editors show it, not in the generated file.
    assert_eq!(
        primary_places(&broken.json, "error"),
        ["src/main.rs:1:29"],
        "{}",
        broken.json
    );
    // In a terminal the place comes first, on the build script's line (which cargo repeats
    // when the build fails), then the report once (not again in rustc's quote of a generated
    // line).
    let terminal = cargo_check(&dir, false);
    assert!(
        terminal.stderr.contains(
            "warning: fixture@0.0.0: graphs/built.graph:6:14: E0202 node `reveiw` is not declared in graph `Built`"
        ),
        "{}",
        terminal.stderr
    );
    assert_eq!(
        terminal
            .stderr
            .matches("--> graphs/built.graph:6:14")
            .count(),
        1,
        "{}",
        terminal.stderr
    );
    assert_eq!(
        terminal.stderr.matches("did you mean `review`?").count(),
        1,
        "{}",
        terminal.stderr
    );

    // An unknown state type is reported on the generated line, which names the `.graph` place.
    edit(
        &dir,
        "graphs/built.graph",
        &BUILT.replace("graph Built {", "graph Built {\n    state Tikcet;"),
    );
    the_one(
        &cargo_check(&dir, true),
        "error",
        &[
            "cannot find type `Tikcet`",
            "pub type State = Tikcet; // `state Tikcet;` at graphs/built.graph:3:11",
        ],
    );

    // A warning of the language is a warning of the build, with its place and help.
    let unreachable = "    node archive;\n    START -> draft;\n    archive -> END;";
    edit(
        &dir,
        "graphs/built.graph",
        &BUILT.replace("    START -> draft;", unreachable),
    );
    let warned = cargo_check(&dir, true);
    assert!(
        warned.success,
        "warnings never fail a build: {}",
        warned.stderr
    );
    the_one(
        &warned,
        "warning",
        &[
            "W0301: node `archive` cannot be reached from START",
            "--> graphs/built.graph:5:10",
            "help: lead an edge to it, or remove it",
        ],
    );
    assert_eq!(
        primary_places(&warned.json, "warning"),
        ["src/main.rs:1:29"]
    );

    // Fixing it is enough: rerun-if-changed reruns the build script.
    edit(&dir, "graphs/built.graph", BUILT);
    assert!(cargo_check(&dir, true).success);

    // A typo in the file include_graph! reads: the edit alone triggers the rebuild, and the error
    // points at the path.
    edit(
        &dir,
        "graphs/included.graph",
        &INCLUDED.replace("plan -> END", "plan -> ENDD"),
    );
    let broken = cargo_check(&dir, true);
    assert!(
        !broken.success,
        "a malformed included graph must fail cargo check"
    );
    the_one(
        &broken,
        "error",
        &[
            "--> graphs/included.graph:4:13",
            "plan -> ENDD;",
            "did you mean `END`?",
            "src/main.rs:2:25",
        ],
    );

    // Its warnings and an unknown state type point at the path too.
    let unreachable = "    node spare;\n    START -> plan;\n    spare -> END;";
    edit(
        &dir,
        "graphs/included.graph",
        &INCLUDED.replace("    START -> plan;", unreachable),
    );
    let warned = cargo_check(&dir, true);
    assert!(warned.success, "{}", warned.stderr);
    the_one(
        &warned,
        "warning",
        &[
            "W0301: node `spare` cannot be reached from START",
            "--> graphs/included.graph:3:10",
            "src/main.rs:2:25",
        ],
    );
    edit(
        &dir,
        "graphs/included.graph",
        &INCLUDED.replace("graph Included {", "graph Included {\n    state Tikcet;"),
    );
    the_one(
        &cargo_check(&dir, true),
        "error",
        &["cannot find type `Tikcet`", "src/main.rs:2:25"],
    );

    edit(&dir, "graphs/included.graph", INCLUDED);
    assert!(cargo_check(&dir, true).success);

    // Code that uses the generated modules correctly, through both doors, while a graph
    // misspells a routed target: one error, at the misspelling; none in the correct code.
    edit(&dir, "graphs/built.graph", ROUTED);
    edit(
        &dir,
        "graphs/included.graph",
        &ROUTED.replace("graph Built", "graph Included"),
    );
    edit(&dir, "src/main.rs", ROUTED_MAIN);
    assert!(
        cargo_check(&dir, true).success,
        "the routed fixture checks: {}",
        cargo_check(&dir, false).stderr
    );
    for (file, graph) in [
        ("graphs/built.graph", "Built"),
        ("graphs/included.graph", "Included"),
    ] {
        let misspelt = ROUTED
            .replace("graph Built", &format!("graph {graph}"))
            .replace("assess -> pay | decline;", "assess -> pyy | decline;");
        edit(&dir, file, &misspelt);
        the_one(
            &cargo_check(&dir, true),
            "error",
            &["E0202: node `pyy` is not declared", "did you mean `pay`?"],
        );
        edit(&dir, file, &misspelt.replace("pyy", "pay"));
    }

    // A node's `writes` through build.rs: the handler's own update type compiles; a `writes`
    // entry naming no field is an error whose message names the `.graph` place; setting a
    // field the node does not declare is an error on the user's line.
    edit(&dir, "graphs/built.graph", WRITES);
    edit(&dir, "graphs/included.graph", INCLUDED);
    edit(&dir, "src/main.rs", WRITES_MAIN);
    assert!(
        cargo_check(&dir, true).success,
        "the write-set fixture checks: {}",
        cargo_check(&dir, false).stderr
    );
    edit(
        &dir,
        "graphs/built.graph",
        &WRITES.replace("writes notes, pages;", "writes notes, pages, answr;"),
    );
    the_one(
        &cargo_check(&dir, true),
        "error",
        &[
            "node `web` writes `answr`, but the state `Research` has no field `answr` (at graphs/built.graph:3:37)",
        ],
    );
    // Two writers of one step and an overwriting field: the message names both places.
    edit(
        &dir,
        "graphs/built.graph",
        &WRITES
            .replace(
                "node web { writes notes, pages; }",
                "node web { writes notes, answer; }\n    node more { writes answer; }",
            )
            .replace(
                "START -> web -> END;",
                "START -> web & more;\n    web -> END;\n    more -> END;",
            ),
    );
    // (The handlers have no `more`, which is an error of its own.)
    the_conflict(
        &dir,
        "E0214: nodes `web` (at graphs/built.graph:3:30) and `more` (at graphs/built.graph:4:24) can run in one super-step and both write `answer`, whose reducer in `Research` overwrites",
        "E0214: node `web` (at graphs/built.graph:3:30) writes `answer` here too, in the super-step where `more` does",
    );
    // A subgraph node writes what its child does: beside `web`, `review` writes `answer` too.
    edit(
        &dir,
        "graphs/built.graph",
        &(WRITES
            .replace(
                "node web { writes notes, pages; }",
                "node web { writes notes, answer; }\n    node review { graph Review; }",
            )
            .replace(
                "START -> web -> END;",
                "START -> web & review;\n    web -> END;\n    review -> END;",
            )
            + "graph Review {\n    state Research;\n    node judge { writes answer; }\n    START -> judge -> END;\n}\n"),
    );
    the_conflict(
        &dir,
        "E0214: nodes `web` (at graphs/built.graph:3:30) and `review` (graph `Review`) (at graphs/built.graph:4:25) can run in one super-step and both write `answer`, whose reducer in `Research` overwrites",
        "E0214: node `review` (graph `Review`) (at graphs/built.graph:4:25) writes `answer` here too, in the super-step where `web` does",
    );
    edit(&dir, "graphs/built.graph", WRITES);
    edit(
        &dir,
        "src/main.rs",
        &WRITES_MAIN.replace(".pages(3)", ".pages(3).answer(\"done\")"),
    );
    let undeclared = cargo_check(&dir, true);
    the_one(
        &undeclared,
        "error",
        &["no method named `answer` found for struct `WebWrites`"],
    );
    assert_eq!(
        primary_places(&undeclared.json, "error"),
        ["src/main.rs:17:177"]
    );

    // A typed pause through build.rs: its helper takes its type and checks; a type the state
    // takes no answer of is an error that names the `.graph` place of the type.
    edit(&dir, "graphs/built.graph", ANSWERS);
    edit(&dir, "src/main.rs", ANSWERS_MAIN);
    assert!(
        cargo_check(&dir, true).success,
        "the typed-answer fixture checks: {}",
        cargo_check(&dir, false).stderr
    );
    edit(
        &dir,
        "graphs/built.graph",
        &ANSWERS.replace("answer Decision;", "answer String;"),
    );
    // (`main` still answers with a `Decision`, an error of its own.)
    let untaken: Vec<String> = compiler_messages(&cargo_check(&dir, true).json, "error")
        .into_iter()
        .filter(|message| message.contains("E0277"))
        .collect();
    assert!(!untaken.is_empty(), "a type the state does not take fails");
    for message in &untaken {
        for part in [
            "the state `Post` takes no answer of type `String`",
            "// the answer type (at graphs/built.graph:3:52)",
        ] {
            assert!(message.contains(part), "no `{part}` in:\n{message}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A graph whose pause declares its answer type.
const ANSWERS: &str = "\
graph Built {
    state Post;
    node send { interrupt before \"Send it?\" answer Decision; }
    START -> send -> END;
}
";

/// Its handler, and an answer made by the pause's own function.
const ANSWERS_MAIN: &str = r#"
use trellis::interrupt::Decision;

trellis::include_generated!("built");
trellis::include_graph!("graphs/included.graph");

#[derive(Clone, Default, serde::Serialize, serde::Deserialize, trellis::GraphState)]
struct Post {
    #[answer]
    decision: Option<Decision>,
}

struct Desk;

impl built::Handlers for Desk {
    async fn send(&self, _: std::sync::Arc<Post>, _: &mut trellis::NodeContext) -> built::NodeOutput { Ok(trellis::NodeResult::None) }
}

fn main() {
    let _ = (built::build(Desk), built::answer::send(Decision::Approve), included::NAME);
}
"#;

/// Checks the crate in `dir`: one E0214, which says `expected`, and its mark at the other
/// writer, which says `other` (other errors may come with them, such as a handler the edited
/// graph lacks).
fn the_conflict(dir: &Path, expected: &str, other: &str) {
    let conflicts: Vec<String> = compiler_messages(&cargo_check(dir, true).json, "error")
        .into_iter()
        .filter(|message| message.contains("E0214"))
        .collect();
    assert_eq!(conflicts.len(), 2, "{conflicts:#?}");
    assert!(conflicts[0].contains(expected), "{}", conflicts[0]);
    assert!(conflicts[1].contains(other), "{}", conflicts[1]);
}

/// A graph whose node declares what it writes.
const WRITES: &str = "\
graph Built {
    state Research;
    node web { writes notes, pages; }
    START -> web -> END;
}
";

/// Its handler, returning the node's own update type.
const WRITES_MAIN: &str = r#"
trellis::include_generated!("built");
trellis::include_graph!("graphs/included.graph");

#[derive(Clone, Default, serde::Serialize, serde::Deserialize, trellis::GraphState)]
struct Research {
    #[reducer(append)]
    notes: Vec<String>,
    #[reducer(sum)]
    pages: u32,
    answer: Option<String>,
}

struct Desk;

impl built::Handlers for Desk {
    async fn web(&self, _: std::sync::Arc<Research>, _: &mut trellis::NodeContext) -> built::Written<built::WebWrites> { Ok(built::WebWrites::default().notes("found").pages(3).into()) }
}

fn main() {
    let _ = (built::build(Desk), included::NAME);
}
"#;

/// A graph with a router, for code that implements its handlers.
const ROUTED: &str = "\
graph Built {
    node assess;
    node pay;
    node decline;
    START -> assess;
    assess -> pay | decline;
    pay -> END;
    decline -> END;
}
";

/// Handlers for `ROUTED` through build.rs (`built`) and `include_graph!` (`included`), naming
/// the route variants a router returns.
const ROUTED_MAIN: &str = r#"
trellis::include_generated!("built");
trellis::include_graph!("graphs/included.graph");

#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
struct Claim(u32);
impl trellis::WholeState for Claim {}

struct Desk;

macro_rules! desk {
    ($module:ident) => {
        impl $module::Handlers for Desk {
            type State = Claim;
            async fn assess(&self, _: std::sync::Arc<Claim>, _: &mut trellis::NodeContext) -> $module::NodeOutput<Claim> {
                Ok(trellis::NodeResult::None)
            }
            async fn pay(&self, _: std::sync::Arc<Claim>, _: &mut trellis::NodeContext) -> $module::NodeOutput<Claim> {
                Ok(trellis::NodeResult::None)
            }
            async fn decline(&self, _: std::sync::Arc<Claim>, _: &mut trellis::NodeContext) -> $module::NodeOutput<Claim> {
                Ok(trellis::NodeResult::None)
            }
            fn route_assess(&self, claim: &Claim, _: &trellis::Visits<'_>) -> $module::AssessRoute {
                if claim.0 < 100 { $module::AssessRoute::Pay } else { $module::AssessRoute::Decline }
            }
        }
    };
}
desk!(built);
desk!(included);

fn main() {
    let _ = (built::build(Desk), included::build(Desk));
}
"#;
