//! The example as its doc comment says to run it: a turn in memory; and a turn paused before
//! its tools in one process, approved or rejected from a second.

use std::path::PathBuf;
use std::process::Command;

fn agent_turn(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_agent_turn"))
        .args(args)
        .output()
        .expect("the example runs");
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("utf-8 output");
    (
        output.status.success(),
        text(output.stdout),
        text(output.stderr),
    )
}

fn db(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("agent-turn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// The run id in `run RUN_ID is waiting: …`.
fn waiting_run(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|line| {
            line.strip_prefix("run ")?
                .split_once(" is waiting")?
                .0
                .to_owned()
                .into()
        })
        .unwrap_or_else(|| panic!("no waiting run in:\n{stdout}"))
}

const TRANSCRIPT: &str = "\
user: How many notes do I have, and what is 12 × 7?
assistant calls list_files {\"path\": \"notes\"} [call_1]
assistant calls calculator {\"expression\": \"12 * 7\"} [call_2]
tool list_files [call_1]: groceries.md, ideas.md, meeting.md
tool calculator [call_2]: 84
assistant: You have 3 notes (groceries, ideas, meeting), and 12 × 7 = 84.
";

#[test]
fn a_turn_prints_its_transcript() {
    let (ok, stdout, stderr) = agent_turn(&[]);
    assert!(ok, "{stderr}");
    assert_eq!(stdout, TRANSCRIPT);
}

#[test]
fn a_turn_paused_before_its_tools_is_approved_from_a_second_process() {
    let db = db("approve.db");
    let db = db.to_str().expect("a utf-8 path");
    let (ok, paused, stderr) = agent_turn(&["--approve-tools", "--db", db]);
    assert!(ok, "{stderr}");
    assert!(
        !paused.contains("\ntool "),
        "no tool ran before the answer:\n{paused}"
    );
    let run_id = waiting_run(&paused);
    // Asked once, naming the calls the answer lets run.
    assert!(
        paused.contains(&format!(
            "run {run_id} is waiting: Run list_files({{\"path\": \"notes\"}}), calculator({{\"expression\": \"12 * 7\"}})?"
        )),
        "{paused}"
    );

    let (ok, done, stderr) = agent_turn(&["approve", &run_id, "--db", db]);
    assert!(ok, "{stderr}");
    assert_eq!(done, TRANSCRIPT);

    let (ok, _, stderr) = agent_turn(&["approve", &run_id, "--db", db]);
    assert!(!ok, "a second answer is refused");
    assert_eq!(
        stderr,
        format!("error: run {run_id} already completed; there is nothing to resume\n")
    );
}

#[test]
fn a_turn_paused_before_its_tools_is_rejected_from_a_second_process() {
    let db = db("reject.db");
    let db = db.to_str().expect("a utf-8 path");
    let (ok, paused, stderr) = agent_turn(&["--approve-tools", "--db", db]);
    assert!(ok, "{stderr}");
    let run_id = waiting_run(&paused);
    let (ok, done, stderr) = agent_turn(&["reject", &run_id, "not now", "--db", db]);
    assert!(ok, "{stderr}");
    assert!(
        done.ends_with(
            "tool list_files [call_1] (error): rejected by a person, not run: not now\n\
         tool calculator [call_2] (error): rejected by a person, not run: not now\n\
         assistant: I did not look: rejected by a person, not run: not now\n"
        ),
        "{done}"
    );
}
