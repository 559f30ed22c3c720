//! Runs the example as a person would and checks what it prints.

use std::process::Command;

fn run(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_support"))
        .args(args)
        .output()
        .expect("the example runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

#[test]
fn approving_the_first_draft_sends_it() {
    let out = run(&[]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("run ")
            && lines[0].ends_with(" paused before `send`; draft awaiting approval:")
    );
    assert!(
        lines[1].contains("We found INV-2291"),
        "billing tickets get the invoice: {out}"
    );
    assert_eq!(lines[2], "approved");
    assert!(lines[3].ends_with("completed after 1 draft(s)"));
    assert!(lines[4].starts_with("sent: Hello, thank you"));
    assert_eq!(lines.len(), 5);
}

#[test]
fn a_rejected_draft_is_redrafted_with_the_reason_then_sent() {
    let out = run(&["--reject", "mention the refund date"]);
    assert_eq!(out.matches("paused before `send`").count(), 2, "{out}");
    assert!(out.contains("rejected: mention the refund date"));
    assert!(out.contains("completed after 2 draft(s)"));
    let sent: Vec<&str> = out.lines().filter(|l| l.starts_with("sent: ")).collect();
    assert_eq!(sent.len(), 1, "only the approved draft is sent");
    assert!(sent[0].ends_with("(mention the refund date)"));
}

#[test]
fn a_general_ticket_skips_the_invoice_lookup() {
    let out = run(&["--text", "how do I reset my password"]);
    assert!(!out.contains("INV-"), "{out}");
    assert!(out.contains("completed after 1 draft(s)"));
}

#[test]
fn bad_arguments_are_refused_with_the_usage() {
    let output = Command::new(env!("CARGO_BIN_EXE_support"))
        .arg("--bogus")
        .output()
        .expect("the example runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("usage: support"));
}
