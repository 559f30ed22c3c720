//! Runs the example and checks the fan-out, the join and the error route.

use std::process::Command;

fn run(args: &[&str]) -> Vec<String> {
    let output = Command::new(env!("CARGO_BIN_EXE_research"))
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
fn three_searches_run_in_one_step_and_one_summary_joins_them() {
    let lines = run(&["tides"]);
    assert_eq!(
        lines[0],
        "steps: 1:plan 2:search_web 2:search_papers 2:search_code 3:summarize"
    );
    assert_eq!(
        lines[1],
        "3 finding(s): web: 2 result(s) for \"tides\" | papers: 2 result(s) for \"tides\" | code: 2 result(s) for \"tides\""
    );
}

#[test]
fn without_a_question_it_researches_a_sample_one() {
    let lines = run(&[]);
    assert_eq!(
        lines[0],
        "steps: 1:plan 2:search_web 2:search_papers 2:search_code 3:summarize"
    );
    assert!(
        lines[1].contains("for \"how do tides work\""),
        "{}",
        lines[1]
    );
}

#[test]
fn a_failed_search_goes_to_its_handler_and_the_summary_waits_for_it() {
    let lines = run(&["--fail", "code", "tides"]);
    assert_eq!(
        lines[0],
        "steps: 1:plan 2:search_web 2:search_papers 3:search_failed 4:summarize"
    );
    assert!(lines[1].starts_with("2 finding(s): web"), "{}", lines[1]);
    assert!(lines[1].ends_with("; missing: search_code (code search is unavailable)"));
}
