//! The crash test bed, on SQLite and on PostgreSQL: kill -9 at 20 random moments and continue
//! each time; worker processes racing for one queue; a worker killed holding its lease and
//! replaced by another; the database going away mid-run. At the end of each: no step lost, none applied twice.
//!
//! PostgreSQL comes from `TRELLIS_TEST_POSTGRES_URL` and `TRELLIS_TEST_POSTGRES_CONTROL` (set by
//! `.ci/run`); without them, these tests fail in CI and skip loudly elsewhere.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const STEPS: u64 = 300;

/// A scratch folder of this test's own, removed with its files when dropped. Others may read
/// it: a PostgreSQL server started in it runs as another user.
fn scratch(test: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt as _;
    tempfile::Builder::new()
        .prefix(&format!("trellis-counter-{test}-"))
        .permissions(std::fs::Permissions::from_mode(0o755))
        .tempdir()
        .expect("a scratch folder")
}

/// A fresh SQLite database's URL, and the folder that holds it.
fn sqlite(test: &str) -> (tempfile::TempDir, String) {
    let folder = scratch(test);
    let url = format!("sqlite:{}", folder.path().join("runs.db").display());
    (folder, url)
}

/// A variable the PostgreSQL tests need. They are ignored when it was not set at build time
/// (see `build.rs`); in CI they run and fail without it.
fn postgres_env(name: &str) -> String {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!("{name} is not set: .ci/run starts PostgreSQL for these tests"),
    }
}

/// A fresh database on the test server, its URL.
fn postgres(test: &str) -> String {
    let server = postgres_env("TRELLIS_TEST_POSTGRES_URL");
    let name = format!("counter_{test}_{}", std::process::id());
    psql(&server, &format!("DROP DATABASE IF EXISTS {name}"));
    psql(&server, &format!("CREATE DATABASE {name}"));
    let (base, _) = server
        .rsplit_once('/')
        .expect("the URL ends with /DATABASE");
    format!("{base}/{name}")
}

fn psql(url: &str, sql: &str) {
    let status = Command::new("psql")
        .args([url, "-qc", sql])
        .env("PGOPTIONS", "-c client_min_messages=warning")
        .status()
        .expect("psql runs");
    assert!(status.success(), "psql {sql}");
}

fn counter(db: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_durable_counter"));
    command.args(args).arg("--db").arg(db);
    command
}

/// Runs `args` to their end; stdout, or a panic with stderr.
fn finished(db: &str, args: &[&str]) -> String {
    let output = counter(db, args).output().expect("runs");
    assert!(
        output.status.success(),
        "durable_counter {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

/// `show --run ID`, parsed.
fn show(db: &str, run_id: &str) -> serde_json::Value {
    serde_json::from_str(&finished(db, &["show", "--run", run_id])).expect("JSON")
}

/// A started process, and the rest of its output, read on a thread (so that it never blocks
/// on a full pipe).
struct Running {
    child: Child,
    rest: std::thread::JoinHandle<String>,
}

impl Running {
    /// Waits for the process to end: its exit status and the rest of its output.
    fn wait(mut self) -> (std::process::ExitStatus, String) {
        let status = self.child.wait().expect("ends");
        (status, self.rest.join().expect("the reader thread"))
    }
}

/// Starts `args` and returns the process once it has printed its first line (`run <id>`,
/// `worker <id>`), with the rest of that line.
fn start(db: &str, args: &[&str], prefix: &str) -> (Running, String) {
    let mut command = counter(db, args);
    command.stdout(Stdio::piped());
    start_with(command, prefix)
}

fn start_with(mut command: Command, prefix: &str) -> (Running, String) {
    let mut child = command.spawn().expect("starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("reads the first line");
    let id = line
        .trim()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("`{prefix}<id>` first, not {line:?}"))
        .to_owned();
    let rest = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = stdout.read_to_string(&mut rest);
        rest
    });
    (Running { child, rest }, id)
}

/// Starts counting to `steps` (5 ms a step) and returns the process once the run is recorded.
fn start_run(db: &str, steps: u64) -> (Running, String) {
    start(
        db,
        &["run", "--steps", &steps.to_string(), "--step-delay-ms", "5"],
        "run ",
    )
}

/// Kills the process (SIGKILL) and returns what it printed after its first line.
fn kill(mut running: Running) -> String {
    running.child.kill().expect("kill -9");
    running.wait().1
}

/// Waits (polling every 20 ms) until `done`; panics after `limit` (a hung test, not a timing
/// assertion).
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "not done after {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The run is complete with `count == steps` and `log == [1..steps]`.
fn assert_counted(db: &str, run_id: &str, steps: u64) {
    let state = show(db, run_id);
    assert_eq!(state["status"], "completed", "{state}");
    assert_eq!(state["state"]["count"], steps);
    let log: Vec<u64> = serde_json::from_value(state["state"]["log"].clone()).expect("a log");
    assert_eq!(
        log,
        (1..=steps).collect::<Vec<_>>(),
        "no step lost, none applied twice"
    );
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

/// `cargo run -p durable_counter` alone shows what the example does: a small count, in
/// `trellis.db` where it runs, and how to go on.
#[test]
fn with_no_arguments_it_counts_to_five_in_sqlite() {
    let folder = scratch("default");
    let dir = folder.path();
    let output = Command::new(env!("CARGO_BIN_EXE_durable_counter"))
        .current_dir(dir)
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("run "), "{stdout}");
    assert!(lines[1].ends_with(": count 5"), "{stdout}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("durable_counter help"));
    assert!(dir.join("trellis.db").exists());
    let help = Command::new(env!("CARGO_BIN_EXE_durable_counter"))
        .arg("help")
        .output()
        .expect("runs");
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).starts_with("usage: durable_counter run"));
}

#[test]
fn killed_twenty_times_on_sqlite_the_count_still_ends_exactly_at_n() {
    let (_folder, db) = sqlite("kill");
    killed_twenty_times(&db);
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[test]
fn killed_twenty_times_on_postgres_the_count_still_ends_exactly_at_n() {
    killed_twenty_times(&postgres("kill"));
}

fn killed_twenty_times(db: &str) {
    let mut moments = Moments(0x9e37_79b9_7f4a_7c15);

    // The first process: wait until it has recorded the run, then kill it at a random moment.
    let (first, run_id) = start_run(db, STEPS);
    std::thread::sleep(Duration::from_millis(moments.next_ms()));
    kill(first);

    let mut kills = 1;
    let mut progress = Vec::new();
    while kills < 20 {
        let mut next = counter(db, &["resume", "--run", &run_id])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starts");
        std::thread::sleep(Duration::from_millis(moments.next_ms()));
        next.kill().expect("kill -9");
        next.wait().expect("reaped");
        kills += 1;
        let state = show(db, &run_id);
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

    let out = finished(db, &["resume", "--run", &run_id]);
    assert!(
        out.starts_with(&format!("continuing run {run_id} from step ")),
        "{out}"
    );
    assert!(
        out.ends_with(&format!("completed run {run_id}: count {STEPS}\n")),
        "{out}"
    );
    assert_counted(db, &run_id, STEPS);

    let again = counter(db, &["resume", "--run", &run_id])
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
    let (_folder, db) = sqlite("live");
    let (owner, run_id) = start_run(&db, 400);
    let intruder = counter(&db, &["resume", "--run", &run_id])
        .output()
        .expect("runs");
    assert_eq!(intruder.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&intruder.stderr).contains("is running, not paused"),
        "{}",
        String::from_utf8_lossy(&intruder.stderr)
    );
    kill(owner);
}

#[test]
fn two_worker_processes_on_sqlite_complete_every_run_exactly_once() {
    let (_folder, db) = sqlite("race");
    two_workers_race(&db);
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[test]
fn two_worker_processes_on_postgres_complete_every_run_exactly_once() {
    two_workers_race(&postgres("race"));
}

fn two_workers_race(db: &str) {
    const RUNS: usize = 12;
    const STEPS: u64 = 20;
    let ids: Vec<String> = (0..RUNS)
        .map(|_| {
            let out = finished(db, &["enqueue", "--steps", "20", "--step-delay-ms", "2"]);
            out.trim()
                .strip_prefix("run ")
                .expect("`run <id>`")
                .to_owned()
        })
        .collect();
    let workers: Vec<(Running, String)> =
        (0..2).map(|_| start(db, &["worker"], "worker ")).collect();
    wait_until(Duration::from_secs(120), || {
        ids.iter().all(|id| show(db, id)["status"] == "completed")
    });
    let mut completions = Vec::new();
    let mut owners = Vec::new();
    for (child, worker) in workers {
        let out = kill(child);
        completions.extend(out.lines().map(str::to_owned));
        owners.push(worker);
    }
    for id in &ids {
        assert_counted(db, id, STEPS);
        let line = format!("completed run {id}: count {STEPS}");
        assert_eq!(
            completions.iter().filter(|l| **l == line).count(),
            1,
            "run {id} completed exactly once: {completions:?}"
        );
        let owner = show(db, id)["owner"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(owners.contains(&owner), "finished by a worker: {owner}");
    }
}

#[test]
fn on_sqlite_a_killed_worker_is_replaced_at_once_on_its_machine() {
    let (_folder, db) = sqlite("lease");
    killed_worker_replaced_at_once(&db);
}

#[cfg_attr(
    not(postgres_tests),
    ignore = "needs PostgreSQL: set TRELLIS_TEST_POSTGRES_URL (`.ci/postgres start DIR` gives one)"
)]
#[test]
fn on_postgres_a_killed_worker_is_replaced_at_once_on_its_machine() {
    killed_worker_replaced_at_once(&postgres("lease"));
}

/// A worker killed holding a one-minute lease: another worker of the same machine sees that its
/// process is gone and finishes the run without waiting for the lease. (Across machines the
/// lease must run out: `runtime/tests/postgres.rs` and `workers.rs` test that path with a worker
/// whose task dies inside a live process, which cannot be told from a remote one.)
fn killed_worker_replaced_at_once(db: &str) {
    const STEPS: u64 = 40;
    let out = finished(db, &["enqueue", "--steps", "40", "--step-delay-ms", "20"]);
    let run_id = out
        .trim()
        .strip_prefix("run ")
        .expect("`run <id>`")
        .to_owned();
    let (first, first_id) = start(db, &["worker", "--lease-ms", "60000"], "worker ");
    wait_until(Duration::from_secs(30), || {
        show(db, &run_id)["steps"].as_u64() >= Some(3)
    });
    kill(first);
    let abandoned = show(db, &run_id);
    assert_eq!(abandoned["status"], "running");
    assert_eq!(abandoned["owner"], first_id.as_str());

    let (second, second_id) = start(db, &["worker", "--runs", "1"], "worker ");
    // Far less than the lease: the second worker did not wait for it.
    wait_until(Duration::from_secs(30), || {
        show(db, &run_id)["status"] == "completed"
    });
    let (status, out) = second.wait();
    assert!(status.success());
    assert_eq!(out, format!("completed run {run_id}: count {STEPS}\n"));
    assert_counted(db, &run_id, STEPS);
    assert_eq!(show(db, &run_id)["owner"], second_id.as_str());
}

#[cfg_attr(
    not(postgres_control),
    ignore = "needs TRELLIS_TEST_POSTGRES_CONTROL (`.ci/postgres`), to start and stop a server of its own"
)]
#[test]
fn when_postgres_goes_away_mid_run_the_run_fails_clearly_and_resumes_after_a_restart() {
    let control = postgres_env("TRELLIS_TEST_POSTGRES_CONTROL");
    // A server of its own: stopping the shared one would fail the other tests.
    let folder = scratch("outage");
    let dir = folder.path().join("pg");
    let cluster = |verb: &str| {
        let output = Command::new(&control)
            .args([verb, &dir.display().to_string()])
            .output()
            .expect("the control script runs");
        assert!(
            output.status.success(),
            "{control} {verb}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout)
            .expect("UTF-8")
            .trim()
            .to_owned()
    };
    let db = cluster("start");
    struct Stop<F: FnMut()>(F);
    impl<F: FnMut()> Drop for Stop<F> {
        fn drop(&mut self) {
            (self.0)();
        }
    }
    let _stop = Stop(|| {
        let _ = Command::new(&control)
            .args(["stop", &dir.display().to_string()])
            .output();
        let _ = std::fs::remove_dir_all(&dir);
    });

    // Its stderr goes to a file, read once it has ended.
    let stderr_folder = scratch("outage-stderr");
    let stderr_file = stderr_folder.path().join("stderr");
    let mut command = counter(&db, &["run", "--steps", "60", "--step-delay-ms", "20"]);
    command
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr_file).expect("a file"));
    let (counting, run_id) = start_with(command, "run ");
    wait_until(Duration::from_secs(30), || {
        show(&db, &run_id)["steps"].as_u64() >= Some(5)
    });
    cluster("stop");
    let (status, _) = counting.wait();
    assert_eq!(status.code(), Some(1));
    let stderr = std::fs::read_to_string(&stderr_file).expect("its stderr");
    assert!(
        stderr.starts_with("error: checkpoint storage failed: "),
        "a clear error: {stderr}"
    );

    assert_eq!(cluster("start"), db, "the same server again");
    let stopped = show(&db, &run_id);
    assert_eq!(stopped["status"], "running", "{stopped}");
    let out = finished(&db, &["resume", "--run", &run_id]);
    assert!(
        out.starts_with(&format!(
            "continuing run {run_id} from step {}",
            stopped["steps"]
        )),
        "{out}"
    );
    assert_counted(&db, &run_id, 60);
}
