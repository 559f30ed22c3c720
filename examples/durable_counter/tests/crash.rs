//! Kill -9 at 20 random moments, continue each time: no step lost, none applied twice.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const STEPS: u64 = 300;

fn database(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trellis-counter-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join("runs.db")
}

fn counter(db: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_durable_counter"));
    command
        .args(args)
        .arg("--db")
        .arg(format!("sqlite:{}", db.display()));
    command
}

/// Starts counting to `steps` (5 ms a step) and returns the process once it has printed the
/// recorded run's id.
fn start(db: &Path, steps: u64) -> (Child, String) {
    let mut child = counter(
        db,
        &["run", "--steps", &steps.to_string(), "--step-delay-ms", "5"],
    )
    .stdout(Stdio::piped())
    .spawn()
    .expect("starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("reads the run id");
    let run_id = line
        .trim()
        .strip_prefix("run ")
        .expect("`run <id>` first")
        .to_owned();
    (child, run_id)
}

/// A small deterministic generator (xorshift) for the kill moments.
struct Moments(u64);

impl Moments {
    fn next_ms(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        20 + self.0 % 70
    }
}

#[test]
fn killed_twenty_times_the_count_still_ends_exactly_at_n() {
    let db = database("kill");
    let mut moments = Moments(0x9e37_79b9_7f4a_7c15);

    // The first process: wait until it has recorded the run, then kill it at a random moment.
    let (mut first, run_id) = start(&db, STEPS);
    std::thread::sleep(Duration::from_millis(moments.next_ms()));
    first.kill().expect("kill -9");
    first.wait().expect("reaped");

    let mut kills = 1;
    let mut progress = Vec::new();
    while kills < 20 {
        let mut next = counter(&db, &["resume", "--run", &run_id])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starts");
        std::thread::sleep(Duration::from_millis(moments.next_ms()));
        next.kill().expect("kill -9");
        next.wait().expect("reaped");
        kills += 1;
        let shown = counter(&db, &["show", "--run", &run_id])
            .output()
            .expect("shows");
        let state: serde_json::Value = serde_json::from_slice(&shown.stdout).expect("JSON");
        assert_eq!(state["status"], "running", "killed before the end: {state}");
        progress.push(state["state"]["count"].as_u64().expect("a count"));
    }
    assert!(
        progress.windows(2).all(|w| w[0] <= w[1]),
        "never goes back: {progress:?}"
    );
    assert!(
        progress.last() < Some(&STEPS),
        "the kills landed mid-run: {progress:?}"
    );

    let finish = counter(&db, &["resume", "--run", &run_id])
        .output()
        .expect("finishes");
    assert!(
        finish.status.success(),
        "{}",
        String::from_utf8_lossy(&finish.stderr)
    );
    let out = String::from_utf8_lossy(&finish.stdout);
    assert!(
        out.starts_with(&format!("continuing run {run_id} from step ")),
        "{out}"
    );
    assert!(
        out.ends_with(&format!("completed run {run_id}: count {STEPS}\n")),
        "{out}"
    );

    let shown = counter(&db, &["show", "--run", &run_id])
        .output()
        .expect("shows");
    let state: serde_json::Value = serde_json::from_slice(&shown.stdout).expect("JSON");
    assert_eq!(state["status"], "completed");
    assert_eq!(state["state"]["count"], STEPS);
    let log: Vec<u64> = serde_json::from_value(state["state"]["log"].clone()).expect("a log");
    assert_eq!(
        log,
        (1..=STEPS).collect::<Vec<_>>(),
        "no step lost, none applied twice"
    );

    let again = counter(&db, &["resume", "--run", &run_id])
        .output()
        .expect("runs");
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&again.stderr).trim(),
        format!("error: run {run_id} is already complete")
    );
}

#[test]
fn a_live_run_is_not_taken_over() {
    let db = database("live");
    let (mut owner, run_id) = start(&db, 400);
    let intruder = counter(&db, &["resume", "--run", &run_id])
        .output()
        .expect("runs");
    assert_eq!(intruder.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&intruder.stderr).contains("is running, not paused"),
        "{}",
        String::from_utf8_lossy(&intruder.stderr)
    );
    owner.kill().expect("kill -9");
    owner.wait().expect("reaped");
}
