//! Runs the example as a person would — one process to start a ticket, later ones to answer
//! it — and checks what each prints.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh database file for one test, and the folder that holds it (removed when dropped).
fn database(test: &str) -> (tempfile::TempDir, PathBuf) {
    let folder = tempfile::Builder::new()
        .prefix(&format!("trellis-support-{test}-"))
        .tempdir()
        .expect("a scratch folder");
    let db = folder.path().join("runs.db");
    (folder, db)
}

fn support(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_support"))
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("the example runs")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

/// The run id from the first line, `run <id> paused before ...`.
fn run_id(out: &str) -> String {
    let first = out.lines().next().expect("output");
    assert!(
        first.ends_with(" paused before `send`; draft awaiting approval:"),
        "{out}"
    );
    first.split(' ').nth(1).expect("an id").to_owned()
}

#[test]
fn a_ticket_pauses_exits_and_is_approved_from_another_process() {
    let (_folder, db) = database("approve");
    // With no command, as `cargo run -p support` runs it: start, pause, exit.
    let started = stdout(&support(&db, &[]));
    let id = run_id(&started);
    assert!(
        started.contains("We found INV-2291"),
        "billing tickets get the invoice: {started}"
    );
    assert!(started.contains(&format!("cargo run -p support -- resume {id} --approve")));
    assert!(
        started.contains("\nSend this reply to the customer?\n"),
        "the pause asks the question support.graph gives: {started}"
    );

    let done = stdout(&support(&db, &["resume", &id, "--approve"]));
    let lines: Vec<&str> = done.lines().collect();
    assert_eq!(lines[0], "approved");
    assert_eq!(lines[1], format!("run {id} completed after 1 draft(s)"));
    assert!(lines[2].starts_with("sent: Hello, thank you"));

    // The run is over: answering it again is refused, plainly.
    let again = support(&db, &["resume", &id, "--approve"]);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&again.stderr).trim(),
        format!("error: run {id} already completed; there is nothing to resume")
    );
}

#[test]
fn a_rejected_draft_is_redrafted_and_waits_again() {
    let (_folder, db) = database("reject");
    let id = run_id(&stdout(&support(&db, &["start"])));
    let rejected = stdout(&support(
        &db,
        &["resume", &id, "--reject", "mention the refund date"],
    ));
    assert!(
        rejected.starts_with("rejected: mention the refund date\n"),
        "{rejected}"
    );
    let lines: Vec<&str> = rejected.lines().collect();
    assert_eq!(
        run_id(&lines[1..].join("\n")),
        id,
        "the same run pauses again"
    );
    assert!(
        lines[2].ends_with("(mention the refund date)"),
        "{rejected}"
    );

    let done = stdout(&support(&db, &["resume", &id, "--approve"]));
    assert!(done.contains("completed after 2 draft(s)"));
    let sent: Vec<&str> = done.lines().filter(|l| l.starts_with("sent: ")).collect();
    assert_eq!(sent.len(), 1, "only the approved draft is sent");
    assert!(sent[0].ends_with("(mention the refund date)"));
}

#[test]
fn the_one_process_demo_pauses_then_approves() {
    let (_folder, db) = database("demo");
    let out = stdout(&support(&db, &["demo"]));
    let lines: Vec<&str> = out.lines().collect();
    let id = run_id(&out);
    assert!(lines[1].contains("We found INV-2291"), "{out}");
    assert_eq!(lines[2], "approved");
    assert_eq!(lines[3], format!("run {id} completed after 1 draft(s)"));
    assert!(lines[4].starts_with("sent: Hello, thank you"));
    assert_eq!(lines.len(), 5);
}

#[test]
fn the_one_process_demo_can_reject_the_first_draft() {
    let (_folder, db) = database("demo-reject");
    let out = stdout(&support(
        &db,
        &["demo", "--reject", "mention the refund date"],
    ));
    assert_eq!(out.matches("paused before `send`").count(), 2, "{out}");
    assert!(out.contains("rejected: mention the refund date"));
    assert!(out.contains("completed after 2 draft(s)"));
    let sent: Vec<&str> = out.lines().filter(|l| l.starts_with("sent: ")).collect();
    assert_eq!(sent.len(), 1, "only the approved draft is sent");
    assert!(sent[0].ends_with("(mention the refund date)"));
}

#[test]
fn a_general_ticket_skips_the_invoice_lookup() {
    let (_folder, db) = database("general");
    let out = stdout(&support(
        &db,
        &["demo", "--text", "how do I reset my password"],
    ));
    assert!(!out.contains("INV-"), "{out}");
    assert!(out.contains("completed after 1 draft(s)"));
}

#[test]
fn unknown_runs_and_bad_arguments_are_refused() {
    let (_folder, db) = database("refused");
    let missing = support(&db, &["resume", "01NOSUCHRUN", "--approve"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no run 01NOSUCHRUN"));
    let undecided = support(&db, &["resume", "01NOSUCHRUN"]);
    assert_eq!(undecided.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&undecided.stderr).starts_with("say --approve or --reject REASON")
    );
    for start in [&["start", "--approve"][..], &["--approve"]] {
        let start_with_answer = support(&db, start);
        assert_eq!(
            start_with_answer.status.code(),
            Some(2),
            "start only starts"
        );
    }
    let bogus = support(&db, &["--bogus"]);
    assert_eq!(bogus.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bogus.stderr).contains("usage: support"));
}
