//! What the server tests share: `support serve` as a child process, and the check that a run
//! recorded each of its steps once.
#![allow(dead_code, unreachable_pub)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// A server process, killed (SIGKILL) when dropped, so a failing test leaves none behind.
pub struct Server(Child);

impl Server {
    pub fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `support serve` on a free port over `db` (a file or a `postgres://` URL), each node taking
/// `pace_ms`; and its base URL.
pub fn serve(db: impl AsRef<OsStr>, pace_ms: u64) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_support"))
        .args([
            "serve",
            "--port",
            "0",
            "--pace",
            &pace_ms.to_string(),
            "--db",
        ])
        .arg(db)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the server starts");
    let stdout = child.stdout.take().expect("its output");
    let mut first = String::new();
    let mut reader = BufReader::new(stdout);
    reader.read_line(&mut first).expect("a line");
    // Whatever it prints next is read too: a closed pipe would fail its next line.
    std::thread::spawn(move || reader.lines().for_each(drop));
    let url = first
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("not a listening line: {first:?}"))
        .to_owned();
    (Server(child), url)
}

/// One `step` checkpoint per step: a step cut short by a kill ran again, and was not recorded
/// twice. (A pause is checkpointed at the step it waits before.)
pub fn assert_each_step_once(checkpoints: &Value) {
    let steps: Vec<u64> = checkpoints
        .as_array()
        .expect("a list")
        .iter()
        .filter(|c| c["label"] == "step")
        .filter_map(|c| c["step"].as_u64())
        .collect();
    assert_eq!(
        steps,
        (1..=steps.len() as u64).collect::<Vec<_>>(),
        "{checkpoints}"
    );
}
