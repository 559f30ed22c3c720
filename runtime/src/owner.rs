//! Who is executing a run: this process's identity, and whether another one on this machine is
//! still alive (so a crashed process's runs can be continued at once, without waiting for a
//! lease to expire).

use std::sync::{Arc, OnceLock};

/// `host:pid:start` — the start time (clock ticks since boot, from `/proc`) tells a live process
/// from a later one that was given the same pid.
pub(crate) fn current() -> &'static str {
    shared()
}

/// [`current`], shared: every run holds it, and a run that copied it would allocate for it.
pub(crate) fn shared() -> &'static Arc<str> {
    static OWNER: OnceLock<Arc<str>> = OnceLock::new();
    OWNER.get_or_init(|| {
        let pid = std::process::id();
        Arc::from(format!(
            "{}:{pid}:{}",
            host(),
            start_ticks(pid).unwrap_or(0)
        ))
    })
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty() && !h.contains(':'))
        .unwrap_or_else(|| "localhost".to_owned())
}

/// Field 22 of `/proc/<pid>/stat` (after the parenthesised command name, which may hold spaces).
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// Whether `owner` is a process of this machine that is known to be gone. `false` when it may be
/// alive, or when that cannot be told (another machine, or no `/proc`): then only its lease
/// expiring frees the run.
pub(crate) fn is_gone(owner: &str) -> bool {
    // A worker's identity is its process's, then `/` and the worker's own name.
    let process = owner.split_once('/').map_or(owner, |(process, _)| process);
    let mut parts = process.rsplitn(3, ':');
    let (Some(start), Some(pid), Some(owner_host)) = (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    if owner_host != host() || !std::path::Path::new("/proc/self/stat").exists() {
        return false;
    }
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return false;
    };
    start_ticks(pid) != Some(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_finished_one_is_gone() {
        assert!(!is_gone(current()));
        if std::path::Path::new("/proc/self/stat").exists() {
            // Our own pid with another start time: a later process reusing the pid.
            assert!(is_gone(&format!("{}:{}:1", host(), std::process::id())));
            // A process that has exited and been reaped.
            let mut child = std::process::Command::new("true").spawn().expect("spawns");
            let pid = child.id();
            child.wait().expect("exits");
            assert!(is_gone(&format!("{}:{pid}:{}", host(), 12_345)));
        }
        assert!(
            !is_gone("another-machine:1:1"),
            "another machine cannot be told"
        );
        assert!(!is_gone("garbage"));
        assert!(
            !is_gone(&format!("{}/worker-1", current())),
            "a worker of this process"
        );
        if std::path::Path::new("/proc/self/stat").exists() {
            assert!(is_gone(&format!(
                "{}:{}:1/worker-1",
                host(),
                std::process::id()
            )));
        }
    }
}
