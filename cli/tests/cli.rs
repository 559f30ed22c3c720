//! The `trellis` binary, run as a user runs it: exit codes, JSON shape, fmt, exports, expand.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SUPPORT: &str = include_str!("../../examples/graphs/support.graph");

/// A scratch folder of this test's own, removed with its files when dropped.
fn scratch(test: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("trellis-cli-{test}-"))
        .tempdir()
        .expect("a scratch folder")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("a scratch file");
    path
}

fn trellis(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trellis"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the trellis binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn check_exits_0_on_a_clean_file_and_1_on_errors() {
    let folder = scratch("check");
    let dir = folder.path();
    let good = write(dir, "good.graph", SUPPORT);
    let out = trellis(&["check", good.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("0 errors, 0 warnings"));

    let typo = SUPPORT.replace("classify -> lookup_invoice", "classify -> lookup_invoce");
    let bad = write(dir, "bad.graph", &typo);
    let out = trellis(&[
        "check",
        good.to_str().unwrap_or_default(),
        bad.to_str().unwrap_or_default(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let report = stderr(&out);
    assert!(report.contains("E0202"), "{report}");
    assert!(report.contains("node `lookup_invoce` is not declared in graph `Support`"));
    assert!(report.contains("help: did you mean `lookup_invoice`?"));
    assert!(report.contains("bad.graph:16:17"), "{report}");
    assert!(
        report.contains("checked 2 files: 1 error, 0 warnings"),
        "{report}"
    );
}

#[test]
fn warnings_fail_only_under_deny_warnings() {
    let folder = scratch("warnings");
    let dir = folder.path();
    let path = write(
        dir,
        "cycle.graph",
        "graph G {\n    node a;\n    node b;\n    START -> a -> b;\n    b -> a | END;\n}\n",
    );
    let path = path.to_str().unwrap_or_default();
    let out = trellis(&["check", path]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("W0303"));
    let out = trellis(&["check", "--deny-warnings", path]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn check_json_prints_one_object_per_line_in_the_contract_shape() {
    let folder = scratch("json");
    let dir = folder.path();
    let path = write(
        dir,
        "two.graph",
        "graph G {\n    node a;\n    node a;\n    START -> a -> b;\n}\n",
    );
    let out = trellis(&[
        "check",
        "--format",
        "json",
        path.to_str().unwrap_or_default(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is a JSON object"))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    let keys = [
        "severity",
        "code",
        "message",
        "file",
        "line",
        "column",
        "end_line",
        "end_column",
        "help",
        "labels",
    ];
    for line in &lines {
        let object = line.as_object().expect("an object");
        let mut found: Vec<&str> = object.keys().map(String::as_str).collect();
        found.sort_unstable();
        let mut wanted = keys.to_vec();
        wanted.sort_unstable();
        assert_eq!(found, wanted);
    }
    let duplicate = &lines[0];
    assert_eq!(duplicate["severity"], "error");
    assert_eq!(duplicate["code"], "E0102");
    assert_eq!(duplicate["file"], path.to_str().unwrap_or_default());
    assert_eq!(
        (duplicate["line"].as_u64(), duplicate["column"].as_u64()),
        (Some(3), Some(10))
    );
    assert_eq!(
        (
            duplicate["end_line"].as_u64(),
            duplicate["end_column"].as_u64()
        ),
        (Some(3), Some(11))
    );
    assert_eq!(duplicate["labels"][0]["message"], "first declared here");
    assert_eq!(duplicate["labels"][0]["line"], 2);
    assert_eq!(duplicate["labels"][0]["column"], 10);
    assert_eq!(lines[1]["code"], "E0202");
    assert_eq!(lines[1]["help"], "declare it with `node b;`");
}

#[test]
fn usage_and_io_errors_exit_2() {
    let out = trellis(&["check", "/nonexistent/nowhere.graph"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read `/nonexistent/nowhere.graph`"));
    assert_eq!(trellis(&["check"]).status.code(), Some(2));
    assert_eq!(trellis(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        trellis(&["export", "--format", "png", "x.graph"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn invalid_utf8_is_an_error_with_a_place() {
    let folder = scratch("utf8");
    let dir = folder.path();
    let path = dir.join("latin1.graph");
    std::fs::write(&path, b"graph G {\n    node caf\xe9;\n}\n").expect("written");
    let out = trellis(&[
        "check",
        "--format",
        "json",
        path.to_str().unwrap_or_default(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let line: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("JSON");
    assert_eq!(line["message"], "the file is not valid UTF-8");
    assert_eq!(
        (line["line"].as_u64(), line["column"].as_u64()),
        (Some(2), Some(13))
    );
}

#[test]
fn fmt_rewrites_and_check_reports() {
    let folder = scratch("fmt");
    let dir = folder.path();
    let messy = "graph G{node a;START->a;a->END;}";
    let path = write(dir, "messy.graph", messy);
    let path_str = path.to_str().unwrap_or_default();

    let out = trellis(&["fmt", "--check", path_str]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("would be reformatted"));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap_or_default(),
        messy,
        "--check writes nothing"
    );

    let out = trellis(&["fmt", path_str]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap_or_default(),
        "graph G {\n    node a;\n    START -> a;\n    a -> END;\n}\n"
    );
    assert_eq!(
        trellis(&["fmt", "--check", path_str]).status.code(),
        Some(0)
    );

    let broken = write(dir, "broken.graph", "graph G { node }");
    let out = trellis(&["fmt", broken.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not formatted: it has syntax errors"));
    assert_eq!(
        std::fs::read_to_string(&broken).unwrap_or_default(),
        "graph G { node }"
    );
}

#[test]
fn export_json_has_the_contract_shape() {
    let folder = scratch("export-json");
    let dir = folder.path();
    let path = write(dir, "support.graph", SUPPORT);
    let out = trellis(&[
        "export",
        "--format",
        "json",
        path.to_str().unwrap_or_default(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(json["format"], 1);
    assert_eq!(json["name"], "Support");
    assert_eq!(json["doc"], "Answers one support ticket.");
    assert_eq!(json["state"], "Ticket");
    assert_eq!(json["max_steps"], 25);
    assert_eq!(json["entry"], "classify");
    // `send -> END | draft`: END is reached through a router, so no finish point (static) edge.
    assert_eq!(json["finish"], serde_json::json!([]));
    let lookup = &json["nodes"][1];
    assert_eq!(lookup["id"], "lookup_invoice");
    assert_eq!(lookup["retry"], 3);
    assert_eq!(lookup["backoff_ms"], 200);
    assert_eq!(lookup["timeout_ms"], 10_000);
    assert_eq!(json["nodes"][4]["interrupt"], "before");
    assert_eq!(
        json["edges"][0],
        serde_json::json!({"kind": "static", "from": "__start__", "to": "classify"})
    );
    assert_eq!(
        json["edges"][1],
        serde_json::json!({"kind": "conditional", "from": "classify", "targets": ["lookup_invoice", "draft"]})
    );
    assert_eq!(json["edges"].as_array().map(Vec::len), Some(6));
}

#[test]
fn export_pictures() {
    let folder = scratch("export-pictures");
    let dir = folder.path();
    let path = write(dir, "support.graph", SUPPORT);
    let path = path.to_str().unwrap_or_default();
    let dot = stdout(&trellis(&["export", "--format", "dot", path]));
    insta::assert_snapshot!("support_dot", dot);
    let mermaid = stdout(&trellis(&["export", "--format", "mermaid", path]));
    insta::assert_snapshot!("support_mermaid", mermaid);
}

/// A waiting join: one `join` edge per source in JSON, a labelled arrow per source in the
/// pictures, all ending at the joined node.
#[test]
fn export_draws_a_waiting_join() {
    let folder = scratch("export-join");
    let dir = folder.path();
    let text = "graph Research {\n    node plan;\n    node web;\n    node papers;\n    node deep;\n    node summarize;\n    START -> plan;\n    plan -> web & papers;\n    papers -> deep;\n    web & deep -> summarize -> END;\n}\n";
    let path = write(dir, "research.graph", text);
    let path = path.to_str().unwrap_or_default();
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&trellis(&["export", "--format", "json", path])))
            .expect("JSON");
    assert_eq!(
        json["edges"][3],
        serde_json::json!({"kind": "join", "from": "web", "to": "summarize"})
    );
    assert_eq!(
        json["edges"][4],
        serde_json::json!({"kind": "join", "from": "deep", "to": "summarize"})
    );
    let dot = stdout(&trellis(&["export", "--format", "dot", path]));
    insta::assert_snapshot!("join_dot", dot);
    let mermaid = stdout(&trellis(&["export", "--format", "mermaid", path]));
    insta::assert_snapshot!("join_mermaid", mermaid);
}

/// A send: one `send` edge listing its targets; the node sent to shows its input type and
/// concurrency in JSON; the pictures draw the send as one labelled arrow.
#[test]
fn export_draws_a_subgraph() {
    let folder = scratch("export-subgraph");
    let dir = folder.path();
    let text = "graph Research {\n    node search;\n    START -> search -> END;\n}\n\ngraph Ticket {\n    node draft;\n    node research { graph Research; }\n    START -> draft -> research -> END;\n}\n";
    let path = write(dir, "ticket.graph", text);
    let path = path.to_str().unwrap_or_default();
    let args = |format: &'static str| ["export", "--format", format, "--graph", "Ticket", path];
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&trellis(&args("json")))).expect("JSON");
    assert_eq!(json["nodes"][1]["graph"], "Research");
    assert!(
        json["nodes"][0].get("graph").is_none(),
        "written only when set"
    );
    insta::assert_snapshot!("subgraph_dot", stdout(&trellis(&args("dot"))));
    insta::assert_snapshot!("subgraph_mermaid", stdout(&trellis(&args("mermaid"))));
}

#[test]
fn export_draws_a_send() {
    let folder = scratch("export-send");
    let dir = folder.path();
    let text = "graph Review {\n    node plan;\n    node summarize { input Document; max_concurrency 8; }\n    node publish;\n    START -> plan;\n    plan -> each summarize;\n    summarize -> publish -> END;\n}\n";
    let path = write(dir, "review.graph", text);
    let path = path.to_str().unwrap_or_default();
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&trellis(&["export", "--format", "json", path])))
            .expect("JSON");
    assert_eq!(
        json["edges"][1],
        serde_json::json!({"kind": "send", "from": "plan", "targets": ["summarize"]})
    );
    assert_eq!(json["nodes"][1]["input"], "Document");
    assert_eq!(json["nodes"][1]["max_concurrency"], 8);
    assert!(
        json["nodes"][0].get("input").is_none(),
        "written only when set"
    );
    let dot = stdout(&trellis(&["export", "--format", "dot", path]));
    insta::assert_snapshot!("send_dot", dot);
    let mermaid = stdout(&trellis(&["export", "--format", "mermaid", path]));
    insta::assert_snapshot!("send_mermaid", mermaid);
}

#[test]
fn export_picks_a_graph_by_name() {
    let folder = scratch("export-pick");
    let dir = folder.path();
    let two = "graph A {\n    node a;\n    START -> a -> END;\n}\n\ngraph B {\n    node b;\n    START -> b -> END;\n}\n";
    let path = write(dir, "two.graph", two);
    let path = path.to_str().unwrap_or_default();
    let out = trellis(&["export", "--format", "json", path]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("several graphs (`A`, `B`); choose one with --graph"));
    let out = trellis(&["export", "--format", "json", "--graph", "B", path]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains(r#""name": "B""#));
    let out = trellis(&["export", "--format", "json", "--graph", "C", path]);
    assert_eq!(out.status.code(), Some(2));

    let broken = write(dir, "broken.graph", "graph A { node a; }");
    let out = trellis(&[
        "export",
        "--format",
        "dot",
        broken.to_str().unwrap_or_default(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty());
    assert!(stderr(&out).contains("E0201"));
}

#[test]
fn expand_prints_the_generated_code_formatted() {
    let folder = scratch("expand");
    let dir = folder.path();
    let path = write(dir, "support.graph", SUPPORT);
    let out = trellis(&["expand", path.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let code = stdout(&out);
    assert!(code.contains("pub mod support {\n"), "{code}");
    assert!(code.contains("    pub trait Handlers: "));
    assert!(code.contains(
        "        fn route_classify(&self, state: &State, visits: &Visits<'_>) -> ClassifyRoute;"
    ));
    assert!(
        code.lines()
            .all(|line| line.len() < 400 || line.contains("BLUEPRINT_JSON"))
    );

    let missing = trellis(&[
        "expand",
        "--graph",
        "Nope",
        path.to_str().unwrap_or_default(),
    ]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("has no graph `Nope`; it has `Support`"));

    let broken = write(
        dir,
        "broken.graph",
        "graph G { node a; START -> a; a -> b; }",
    );
    let out = trellis(&["expand", broken.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not expanded: it has errors"));
}

/// A database with two runs of a small graph: one paused before `send`, one completed.
async fn recorded_runs(
    store: std::sync::Arc<dyn trellis::checkpoint::Checkpointer>,
) -> (trellis::RunId, trellis::RunId, trellis::RunId) {
    #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
    struct Note(String);
    impl trellis::WholeState for Note {}
    impl trellis::interrupt::ApplyResume for Note {
        type Input = ();
        fn apply_resume(&self, _: &trellis::interrupt::Interrupt, _: ()) -> Note {
            Note("approved".into())
        }
    }
    let mut builder = trellis::GraphBuilder::<Note>::new("Notes");
    builder
        .add_node_fn("draft", |_, _| async {
            Ok(trellis::NodeResult::Update(Note("draft".into())))
        })
        .add_node_fn_with(
            "send",
            |_, _| async { Ok(trellis::NodeResult::None) },
            trellis::NodeOptions::new().interrupt_before(),
        )
        .add_edge(trellis::START, "draft")
        .add_edge("draft", "send")
        .add_edge("send", trellis::END)
        .set_checkpointer(store);
    let graph = builder.compile().expect("valid graph");
    let done = graph.invoke(Note::default()).await.expect("runs");
    graph.resume(done.run_id(), ()).await.expect("resumes");
    let paused = graph.invoke(Note::default()).await.expect("runs");
    // A branch of the completed run from its pause, asking again.
    let branch = graph.replay(done.run_id(), 2).await.expect("replays");
    assert!(branch.is_paused());
    (
        done.run_id().clone(),
        paused.run_id().clone(),
        branch.run_id().clone(),
    )
}

#[tokio::test]
async fn runs_lists_shows_and_walks_checkpoints_in_sqlite() {
    let folder = scratch("runs");
    let dir = folder.path();
    let db = dir.join("runs.db");
    let store = trellis::checkpoint::SqliteCheckpointer::open(&db).expect("opens");
    let (done, paused, branch) = recorded_runs(std::sync::Arc::new(store)).await;
    inspect(&format!("sqlite:{}", db.display()), &done, &paused, &branch);

    let no_db = trellis(&[
        "runs",
        "list",
        "--db",
        &format!("sqlite:{}", dir.join("none.db").display()),
    ]);
    assert_eq!(no_db.status.code(), Some(2));
    assert!(
        !dir.join("none.db").exists(),
        "inspecting creates no database"
    );
    let mysql = trellis(&["runs", "list", "--db", "mysql://localhost/trellis"]);
    assert_eq!(mysql.status.code(), Some(2));
    assert_eq!(
        stderr(&mysql).trim(),
        "error: unsupported database URL `mysql://localhost/trellis`: expected `sqlite:PATH` or `postgres://user@host:port/database`"
    );
    let unreachable = trellis(&["runs", "list", "--db", "postgres://nobody@127.0.0.1:1/none"]);
    assert_eq!(unreachable.status.code(), Some(2));
    assert!(
        stderr(&unreachable)
            .starts_with("error: checkpoint storage failed: error connecting to server"),
        "{}",
        stderr(&unreachable)
    );
}

/// Three runs of START → reply → END on one thread, oldest first.
async fn thread_of_three(
    store: std::sync::Arc<dyn trellis::checkpoint::Checkpointer>,
) -> (trellis::ThreadId, Vec<trellis::RunId>) {
    #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
    struct Count(u32);
    impl trellis::WholeState for Count {}
    let mut builder = trellis::GraphBuilder::<Count>::new("Counter");
    builder
        .add_node_fn("reply", |count: std::sync::Arc<Count>, _| async move {
            Ok(trellis::NodeResult::Update(Count(count.0 + 1)))
        })
        .add_edge(trellis::START, "reply")
        .add_edge("reply", trellis::END)
        .set_checkpointer(store);
    let graph = builder.compile().expect("valid graph");
    let thread = graph
        .create_thread(Default::default())
        .await
        .expect("a thread");
    let mut runs = Vec::new();
    for _ in 0..3 {
        let outcome = thread.invoke(Count::default()).await.expect("runs");
        runs.push(outcome.run_id().clone());
    }
    (thread.id().clone(), runs)
}

/// `runs prune`: a dry run lists what would go and deletes nothing; a prune deletes ended runs
/// past the newest of their graph and never a paused one; `runs compact` keeps a thread's
/// newest run and its latest checkpoint.
#[tokio::test]
async fn runs_prune_and_compact_in_sqlite() {
    let folder = scratch("prune");
    let db = folder.path().join("runs.db");
    let store =
        std::sync::Arc::new(trellis::checkpoint::SqliteCheckpointer::open(&db).expect("opens"));
    let (done_1, paused_1, branch_1) = recorded_runs(store.clone()).await;
    let (done_2, paused_2, branch_2) = recorded_runs(store.clone()).await;
    let (thread, counted) = thread_of_three(store.clone()).await;
    let url = format!("sqlite:{}", db.display());
    let listed = |url: &str| {
        let list = trellis(&[
            "runs", "list", "--db", url, "--limit", "100", "--format", "json",
        ]);
        stdout(&list).lines().count()
    };
    assert_eq!(listed(&url), 9);

    let none = trellis(&["runs", "prune", "--db", &url]);
    assert_eq!(none.status.code(), Some(2), "a prune needs a rule");
    assert!(stderr(&none).contains("--keep-last"), "{}", stderr(&none));
    let missing = trellis(&[
        "runs",
        "prune",
        "--db",
        &url,
        "--keep-last",
        "1",
        "--transcripts",
        folder.path().join("typo.db").to_str().unwrap_or_default(),
    ]);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        listed(&url),
        9,
        "a missing transcripts file deletes nothing"
    );

    let plan = trellis(&[
        "runs",
        "prune",
        "--db",
        &url,
        "--keep-last",
        "1",
        "--graph",
        "Notes",
        "--dry-run",
    ]);
    assert_eq!(plan.status.code(), Some(0), "{}", stderr(&plan));
    let text = stdout(&plan);
    assert!(text.starts_with("RUN "), "{text}");
    assert!(text.ends_with("would delete 2 runs\n"), "{text}");
    for run in [&done_1, &done_2] {
        assert!(
            text.contains(run.as_str()),
            "{run} is ended and past the newest: {text}"
        );
    }
    for run in [&paused_1, &paused_2, &branch_1, &branch_2] {
        assert!(!text.contains(run.as_str()), "{run} is paused: {text}");
    }
    assert_eq!(listed(&url), 9, "a dry run deletes nothing");

    // Agent transcripts in the same file: the pruned runs' go with them, a paused run's stays.
    use trellis_agent::transcript::{Entry, SqliteTranscripts, TranscriptStore};
    let transcripts = SqliteTranscripts::open(&db).expect("the transcripts' table opens");
    let said = vec![Entry {
        step: 0,
        node: String::new(),
        message: trellis_agent::Message::user("hi"),
        advertised: Vec::new(),
    }];
    for run in [&done_1, &done_2, &paused_1] {
        transcripts.save(run, &said).await.expect("saved");
    }
    let pruned = trellis(&[
        "runs",
        "prune",
        "--transcripts",
        db.to_str().unwrap_or_default(),
        "--db",
        &url,
        "--keep-last",
        "1",
        "--graph",
        "Notes",
        "--format",
        "json",
    ]);
    assert_eq!(pruned.status.code(), Some(0), "{}", stderr(&pruned));
    let lines: Vec<serde_json::Value> = stdout(&pruned)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON lines"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["status"], "completed");
    assert_eq!(lines[2], serde_json::json!({ "dry_run": false, "runs": 2 }));
    assert_eq!(listed(&url), 7);
    for run in [&done_1, &done_2] {
        assert!(transcripts.load(run).await.expect("loads").is_empty());
    }
    assert_eq!(transcripts.load(&paused_1).await.expect("loads"), said);
    let gone = trellis(&["runs", "show", done_1.as_str(), "--db", &url]);
    assert_eq!(gone.status.code(), Some(1));

    let plan = trellis(&[
        "runs",
        "compact",
        thread.as_str(),
        "--db",
        &url,
        "--dry-run",
    ]);
    assert_eq!(plan.status.code(), Some(0), "{}", stderr(&plan));
    assert!(
        stdout(&plan).ends_with("would delete 2 runs and 1 earlier checkpoint of the newest run\n"),
        "{}",
        stdout(&plan)
    );
    let latest = |run: &trellis::RunId| -> serde_json::Value {
        let all = trellis(&[
            "runs",
            "checkpoints",
            run.as_str(),
            "--db",
            &url,
            "--format",
            "json",
        ]);
        let last = stdout(&all)
            .lines()
            .last()
            .map(str::to_owned)
            .unwrap_or_default();
        serde_json::from_str(&last).expect("a checkpoint as JSON")
    };
    let before = latest(&counted[2]);
    // `--vacuum` is for SQLite files: refused for PostgreSQL before anything is deleted.
    let refused = trellis(&[
        "runs",
        "compact",
        thread.as_str(),
        "--db",
        "postgres://nobody@127.0.0.1:1/none",
        "--vacuum",
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("autovacuum"),
        "{}",
        stderr(&refused)
    );
    let compacted = trellis(&["runs", "compact", thread.as_str(), "--db", &url, "--vacuum"]);
    assert_eq!(compacted.status.code(), Some(0), "{}", stderr(&compacted));
    let said = stdout(&compacted);
    let (deleted, vacuumed) = said
        .trim_end()
        .rsplit_once('\n')
        .expect("a line for the deletion, one for the vacuum");
    assert!(
        deleted.ends_with("deleted 2 runs and 1 earlier checkpoint of the newest run"),
        "{said}"
    );
    let sizes: Vec<u64> = vacuumed
        .strip_prefix("vacuumed: the file went from ")
        .and_then(|rest| rest.strip_suffix(" bytes"))
        .map(|sizes| sizes.split(" to ").filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default();
    assert!(sizes.len() == 2 && sizes[1] <= sizes[0], "{said}");
    assert_eq!(
        std::fs::metadata(&db).map(|m| m.len()).ok(),
        Some(sizes[1]),
        "the file is the size said"
    );
    assert_eq!(listed(&url), 5);
    let checkpoints = trellis(&[
        "runs",
        "checkpoints",
        counted[2].as_str(),
        "--db",
        &url,
        "--format",
        "json",
    ]);
    let kept: Vec<serde_json::Value> = stdout(&checkpoints)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON lines"))
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0]["label"], "complete");
    assert_eq!(kept[0]["id"], before["id"], "the latest checkpoint is kept");
    assert_eq!(kept[0]["state"], before["state"], "and the state with it");
    let unknown = trellis(&["runs", "compact", "no-such-thread", "--db", &url]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        stderr(&unknown).trim(),
        "error: no thread no-such-thread in the store"
    );
}

/// `runs migrate`: a paused run checked against a new version of its graph is refused naming
/// what blocks it (exit 1, nothing written); with the rename stated, a dry run writes nothing
/// and a migration writes the run's latest checkpoint again with the new names.
#[tokio::test]
async fn runs_migrate_renames_a_paused_run_s_nodes() {
    let folder = scratch("migrate");
    let db = folder.path().join("runs.db");
    let store =
        std::sync::Arc::new(trellis::checkpoint::SqliteCheckpointer::open(&db).expect("opens"));
    let (_, paused, _) = recorded_runs(store).await;
    let url = format!("sqlite:{}", db.display());
    let v2 = write(
        folder.path(),
        "notes.graph",
        "graph Notes {\n    node draft;\n    node deliver { interrupt before; }\n    START -> draft;\n    draft -> deliver;\n    deliver -> END;\n}\n",
    );
    let v2 = v2.to_str().unwrap_or_default();
    let checkpoints = || {
        let out = trellis(&[
            "runs",
            "checkpoints",
            paused.as_str(),
            "--db",
            &url,
            "--format",
            "json",
        ]);
        stdout(&out)
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON lines"))
            .collect::<Vec<_>>()
    };
    let before = checkpoints();

    let blocked = trellis(&[
        "runs",
        "migrate",
        paused.as_str(),
        "--db",
        &url,
        "--graph",
        v2,
    ]);
    assert_eq!(blocked.status.code(), Some(1), "{}", stderr(&blocked));
    assert_eq!(
        stderr(&blocked).trim(),
        format!("error: run {paused} cannot be resumed: node `send` (runs next) is gone")
    );
    let dry = trellis(&[
        "runs",
        "migrate",
        paused.as_str(),
        "--db",
        &url,
        "--graph",
        v2,
        "--rename",
        "send=deliver",
        "--dry-run",
    ]);
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    let next = before.len() + 1;
    assert_eq!(
        stdout(&dry),
        format!("run {paused}: would write checkpoint {next} with the new names\n")
    );
    assert_eq!(checkpoints(), before, "a dry run writes nothing");

    let moved = trellis(&[
        "runs",
        "migrate",
        paused.as_str(),
        "--db",
        &url,
        "--graph",
        v2,
        "--rename",
        "send=deliver",
    ]);
    assert_eq!(moved.status.code(), Some(0), "{}", stderr(&moved));
    assert_eq!(
        stdout(&moved),
        format!("run {paused}: wrote checkpoint {next} with the new names\n")
    );
    let after = checkpoints();
    assert_eq!(after.len(), next);
    let latest = &after[next - 1];
    assert_eq!(latest["frontier"], serde_json::json!(["deliver"]));
    assert_eq!(latest["label"], before[before.len() - 1]["label"]);
    assert_eq!(latest["state"], before[before.len() - 1]["state"]);
    let show = trellis(&[
        "runs",
        "show",
        paused.as_str(),
        "--db",
        &url,
        "--format",
        "json",
    ]);
    let record: serde_json::Value = serde_json::from_str(&stdout(&show)).expect("JSON");
    assert_eq!(record["interrupts"][0]["node"], "deliver");
    assert_eq!(
        record["interrupts"][0]["id"], "send@2",
        "an answer's key stays"
    );
}

/// Ignored when `TRELLIS_TEST_POSTGRES_URL` was not set at build time (see `build.rs`); in CI it
/// runs, and fails without it.
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[tokio::test]
async fn runs_lists_shows_and_walks_checkpoints_in_postgres() {
    let server = match std::env::var("TRELLIS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!("TRELLIS_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL"),
    };
    let name = format!("cli_runs_{}", std::process::id());
    for sql in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        let status = std::process::Command::new("psql")
            .args([server.as_str(), "-qc", &sql])
            .env("PGOPTIONS", "-c client_min_messages=warning")
            .status()
            .expect("psql runs");
        assert!(status.success(), "{sql}");
    }
    let (base, _) = server
        .rsplit_once('/')
        .expect("the URL ends with /DATABASE");
    let url = format!("{base}/{name}");

    // Inspecting an empty database refuses, and creates nothing there.
    let empty = trellis(&["runs", "list", "--db", &url]);
    assert_eq!(empty.status.code(), Some(2));
    assert_eq!(
        stderr(&empty).trim(),
        "error: stored database schema is unreadable: this database has no Trellis tables (and inspecting creates none)"
    );
    let tables = std::process::Command::new("psql")
        .args([
            url.as_str(),
            "-tAc",
            "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'trellis%'",
        ])
        .output()
        .expect("psql runs");
    assert_eq!(String::from_utf8_lossy(&tables.stdout).trim(), "0");

    let store = trellis::checkpoint::PostgresCheckpointer::connect(&url)
        .await
        .expect("connects");
    let (done, paused, branch) = recorded_runs(std::sync::Arc::new(store)).await;
    inspect(&url, &done, &paused, &branch);
}

/// `trellis runs` on a database holding `recorded_runs`.
fn inspect(url: &str, done: &trellis::RunId, paused: &trellis::RunId, branch: &trellis::RunId) {
    let url = url.to_owned();

    let list = trellis(&["runs", "list", "--db", &url, "--format", "json"]);
    assert_eq!(list.status.code(), Some(0), "{}", stderr(&list));
    let records: Vec<serde_json::Value> = stdout(&list)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    assert_eq!(records.len(), 3);
    assert_eq!(records[0]["run_id"], branch.as_str(), "newest first");
    assert_eq!(
        records[0]["parent"],
        serde_json::json!({ "run_id": done.as_str(), "checkpoint": 2 })
    );
    assert_eq!(records[1]["run_id"], paused.as_str());
    assert_eq!(records[1]["status"], "paused");
    assert_eq!(records[1].get("parent"), None, "a run that is no branch");
    assert_eq!(records[2]["status"], "completed");
    let table = stdout(&trellis(&["runs", "list", "--db", &url, "--limit", "2"]));
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "a header and two runs: {table}");
    let column = |line: &str, n: usize| line.split_whitespace().nth(n).map(str::to_owned);
    assert_eq!(column(lines[0], 6).as_deref(), Some("FROM"), "{table}");
    assert_eq!(column(lines[1], 5), Some(format!("{done}#2")), "{table}");
    assert_eq!(column(lines[2], 5).as_deref(), Some("-"), "{table}");

    let show = stdout(&trellis(&["runs", "show", branch.as_str(), "--db", &url]));
    assert!(
        show.contains(&format!("branch of    {done} at checkpoint 2\n")),
        "{show}"
    );
    let checkpoints = stdout(&trellis(&[
        "runs",
        "checkpoints",
        branch.as_str(),
        "--db",
        &url,
    ]));
    assert_eq!(
        checkpoints
            .lines()
            .nth(1)
            .and_then(|l| l.split_whitespace().nth(2)),
        Some("fork"),
        "{checkpoints}"
    );

    let show = stdout(&trellis(&["runs", "show", paused.as_str(), "--db", &url]));
    assert!(show.contains("status       paused\n"), "{show}");
    assert!(
        show.contains("waiting      send@2 (before): approve running `send`\n"),
        "{show}"
    );
    assert!(show.ends_with("state\n\"draft\"\n"), "{show}");

    let checkpoints = stdout(&trellis(&[
        "runs",
        "checkpoints",
        done.as_str(),
        "--db",
        &url,
    ]));
    let labels: Vec<&str> = checkpoints
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().nth(2))
        .collect();
    assert_eq!(
        labels,
        ["start", "pause:before", "resume", "complete"],
        "{checkpoints}"
    );

    let missing = trellis(&["runs", "show", "01NOSUCHRUN", "--db", &url]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        stderr(&missing).trim(),
        "error: no run 01NOSUCHRUN in the database"
    );
}

#[tokio::test]
async fn a_cancelled_run_is_listed_and_shown_as_cancelled() {
    #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
    struct Note(String);
    impl trellis::WholeState for Note {}
    let folder = scratch("cancelled");
    let db = folder.path().join("runs.db");
    let store = trellis::checkpoint::SqliteCheckpointer::open(&db).expect("opens");
    let mut builder = trellis::GraphBuilder::<Note>::new("Notes");
    builder
        .add_node_fn("draft", |_, _| async { Ok(trellis::NodeResult::None) })
        .add_edge(trellis::START, "draft")
        .add_edge("draft", trellis::END)
        .set_checkpointer(std::sync::Arc::new(store));
    let graph = builder.compile().expect("valid graph");
    let mut run = graph.start(Note::default());
    run.cancellation().cancel();
    let error = run.run_to_end().await.expect_err("cancelled");
    assert!(
        matches!(error, trellis::RunError::Cancelled { .. }),
        "{error}"
    );
    let url = format!("sqlite:{}", db.display());
    let list = stdout(&trellis(&[
        "runs", "list", "--db", &url, "--format", "json",
    ]));
    let record: serde_json::Value = serde_json::from_str(list.trim()).expect("one JSON line");
    assert_eq!(record["status"], "cancelled", "{record}");
    let table = stdout(&trellis(&["runs", "list", "--db", &url]));
    assert!(
        table
            .lines()
            .nth(1)
            .is_some_and(|line| line.contains(" cancelled ")),
        "{table}"
    );
}

#[test]
fn diff_names_what_changed_and_exits_1_when_something_did() {
    let folder = scratch("diff");
    let dir = folder.path();
    let old = write(dir, "old.graph", SUPPORT);
    let changed = SUPPORT
        .replace(
            r#"node send { interrupt before "Send this reply to the customer?"; }"#,
            r#"node deliver { interrupt before "Send this reply to the customer?"; retry 2; }
    node notify;"#,
        )
        .replace("review -> send | draft;", "review -> deliver | draft;")
        .replace(
            "send -> END | draft;",
            "deliver -> notify | draft;\n    notify -> END;",
        );
    let new = write(dir, "new.graph", &changed);
    let (old, new) = (
        old.to_str().unwrap_or_default(),
        new.to_str().unwrap_or_default(),
    );

    let out = trellis(&["diff", old, new, "--rename", "send=deliver"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "graph Support
  + node notify
  ~ node send renamed to deliver
  ~ node deliver: retry (none) -> 2
  + edge deliver -> notify | draft
  + edge notify -> END
  - edge deliver -> END | draft
"
    );
    let out = trellis(&[
        "diff",
        old,
        new,
        "--rename",
        "send=deliver",
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        json["graphs"][0]["nodes_added"],
        serde_json::json!(["notify"])
    );
    assert_eq!(
        json["graphs"][0]["nodes_changed"][0]["attributes"][0]["new"],
        2
    );
    assert_eq!(json["graphs_added"], serde_json::json!([]));

    // Without the rename, `send` went and `deliver` came.
    let out = trellis(&["diff", old, new]);
    assert!(stdout(&out).contains("  + node deliver\n  + node notify\n  - node send\n"));

    let out = trellis(&["diff", old, old]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "graph Support: unchanged\n");

    let out = trellis(&["diff", old, new, "--rename", "sedn=deliver"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: cannot rename `sedn`: the old graph `Support` has no node `sedn`; did you mean `send`?\n"
    );
    let out = trellis(&["diff", old, new, "--rename", "send"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`send` is not OLD=NEW"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn check_reads_the_graph_macros_of_rust_files_and_the_files_of_folders() {
    let folder = scratch("check-rust");
    let dir = folder.path();
    let rust = "//! A désk: the accent makes byte offsets and characters differ.
use std::sync::Arc;

trellis::graph! {
    graph Desk {
        node draft;
        START -> draft -> sned;
    }
}

fn main() {}
";
    let lib = write(dir, "lib.rs", rust);
    let lib = lib.to_str().unwrap_or_default();
    let out = trellis(&["check", lib]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = stderr(&out);
    assert!(report.contains("E0202"), "{report}");
    assert!(report.contains("lib.rs:7:27"), "{report}");
    assert!(report.contains("START -> draft -> sned;"), "{report}");
    let out = trellis(&["check", "--format", "json", lib]);
    let line: serde_json::Value =
        serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap_or_default())
            .expect("one JSON object a line");
    assert_eq!(line["code"], "E0202");
    assert_eq!(line["line"], 7, "{line}");

    // A folder: its `.graph` files and the Rust files with a `graph!`; others are passed over.
    std::fs::create_dir_all(dir.join("graphs")).expect("a folder");
    write(&dir.join("graphs"), "support.graph", SUPPORT);
    write(dir, "plain.rs", "fn main() {}\n");
    write(dir, "notes.md", "# not a graph\n");
    let out = trellis(&["check", dir.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).ends_with("checked 2 files: 1 error, 0 warnings\n"),
        "{}",
        stderr(&out)
    );

    // Given by name, a file of another kind is refused, and a Rust file without a graph says so.
    let notes = dir.join("notes.md");
    let out = trellis(&["check", notes.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is neither a `.graph` file nor a Rust file"),
        "{}",
        stderr(&out)
    );
    let plain = dir.join("plain.rs");
    let out = trellis(&["check", plain.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("plain.rs: no `graph!` in this file"));
}

#[test]
fn check_looks_another_module_s_graph_up_in_its_file_beside() {
    let folder = scratch("check-modules");
    let dir = folder.path();
    write(
        dir,
        "research.graph",
        "graph Research {\n    node web;\n    START -> web -> END;\n}\n",
    );
    let desk = write(
        dir,
        "desk.graph",
        "graph Desk {\n    node research { graph research::Resarch; }\n    node built { graph rust_side::Built; }\n    START -> research -> built -> END;\n}\n",
    );
    let out = trellis(&["check", desk.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = stderr(&out);
    assert!(report.contains("E0211"), "{report}");
    assert!(
        report.contains("graph `Resarch` is not declared in `research.graph`"),
        "{report}"
    );
    assert!(report.contains("did you mean `Research`?"), "{report}");
    assert!(report.contains("desk.graph:2:37"), "{report}");
    // A module with no file beside (a graph built in Rust) is not looked for.
    assert!(
        report.ends_with("checked 1 file: 1 error, 0 warnings\n"),
        "{report}"
    );
}
