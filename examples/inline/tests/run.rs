//! Runs the example and checks both refunds' paths.

use std::process::Command;

fn run(args: &[&str]) -> Vec<String> {
    let output = Command::new(env!("CARGO_BIN_EXE_inline"))
        .args(args)
        .output()
        .expect("the example runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("UTF-8 output")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_small_refund_is_paid_and_a_large_one_waits_for_approval() {
    assert_eq!(
        run(&[]),
        [
            "Ada: assessed €40 for Ada; paid €40; told Ada",
            "Grace: paused, approve asks: refund €250 to Grace?",
            "Grace: assessed €250 for Grace; a person approved (approve@2); paid €250; told Grace",
        ]
    );
}

#[test]
fn a_declined_large_refund_is_not_paid() {
    let lines = run(&["--decline"]);
    assert_eq!(
        lines[2],
        "Grace: assessed €250 for Grace; a person declined (approve@2); declined; told Grace"
    );
}
