//! `--help` says what the example shows: its README, which is also its module doc.

#[test]
fn help_prints_the_readme() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_research"))
        .arg("--help")
        .output()
        .expect("the example runs");
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(include_str!("../README.md")), "{stdout}");
}
