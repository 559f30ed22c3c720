//! How long things take: alternating samples of trellis and its floor, medians, and the scale
//! that decides how many samples and which sizes.

use std::time::{Duration, Instant};

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Every size the issue names, enough samples for stable medians.
    Full,
    /// The same sizes, few samples: a smoke run that stays under a minute (CI).
    Quick,
    /// Tiny sizes and one sample: checks that every workload runs and computes what it should
    /// (the test suite, in a debug build). Its figures mean nothing.
    Smoke,
}

/// How many samples a measurement takes, and how long it first warms up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Samples {
    pub(crate) count: usize,
    /// Runs before the samples, at least one: until this much time has passed. A process's
    /// first tens of milliseconds can run a workload at half speed (seen in one process in
    /// five on this machine: ~16 µs a cycle for `interrupt_resume`'s first 30–40 samples, ~9
    /// after), and one warm-up run of a quick workload is over long before that.
    warm_up: Duration,
}

impl Samples {
    /// One sample after one warm-up run.
    pub(crate) const ONE: Samples = Samples {
        count: 1,
        warm_up: Duration::ZERO,
    };

    /// The same count with one warm-up run only (each run is a fresh process: nothing to warm).
    pub(crate) fn without_warm_up(self) -> Samples {
        Samples {
            warm_up: Duration::ZERO,
            ..self
        }
    }

    fn warm_up<E>(self, mut run: impl FnMut() -> Result<(), E>) -> Result<(), E> {
        let started = Instant::now();
        loop {
            run()?;
            if started.elapsed() >= self.warm_up {
                return Ok(());
            }
        }
    }
}

impl Scale {
    /// The samples of a workload that takes `full` samples at full scale.
    pub(crate) fn samples(self, full: usize) -> Samples {
        match self {
            Scale::Full => Samples {
                count: full,
                warm_up: Duration::from_millis(200),
            },
            Scale::Quick => Samples {
                count: full.div_ceil(8).max(3),
                warm_up: Duration::from_millis(50),
            },
            Scale::Smoke => Samples::ONE,
        }
    }

    /// `full` unless this is a smoke run, then `smoke`.
    pub(crate) fn size<T>(self, full: T, smoke: T) -> T {
        match self {
            Scale::Smoke => smoke,
            Scale::Full | Scale::Quick => full,
        }
    }
}

/// The median of some durations (the upper one of an even count).
pub(crate) fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// Runs `ours` and `floor` alternately, `samples.count` times each after warming both up, and
/// returns their medians: alternating spreads the machine's slow moments over both sides.
pub(crate) fn alternate<E>(
    samples: Samples,
    mut ours: impl FnMut() -> Result<Duration, E>,
    mut floor: impl FnMut() -> Result<Duration, E>,
) -> Result<(Duration, Duration), E> {
    samples.warm_up(|| {
        ours()?;
        floor().map(drop)
    })?;
    let count = samples.count;
    let (mut a, mut b) = (Vec::with_capacity(count), Vec::with_capacity(count));
    for _ in 0..count {
        a.push(ours()?);
        b.push(floor()?);
    }
    Ok((median(a), median(b)))
}

/// The median of `samples.count` runs of `ours` after warming it up, for workloads with no
/// floor.
pub(crate) fn alone<E>(
    samples: Samples,
    mut ours: impl FnMut() -> Result<Duration, E>,
) -> Result<Duration, E> {
    samples.warm_up(|| ours().map(drop))?;
    let mut times = Vec::with_capacity(samples.count);
    for _ in 0..samples.count {
        times.push(ours()?);
    }
    Ok(median(times))
}

/// Nanoseconds per unit.
pub(crate) fn per(total: Duration, units: u64) -> f64 {
    total.as_nanos() as f64 / units.max(1) as f64
}

/// Bytes this process has passed to `write` and its kind so far (`wchar` of `/proc/self/io`):
/// what a checkpoint costs the disk, whichever thread wrote it. `None` off Linux.
pub(crate) fn bytes_written() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|line| line.strip_prefix("wchar:"))
        .and_then(|value| value.trim().parse().ok())
}

/// This process's resident memory in KiB (`VmRSS` of `/proc/self/status`). `None` off Linux.
pub(crate) fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_sample() {
        let ms = Duration::from_millis;
        assert_eq!(median(vec![ms(9), ms(1), ms(5)]), ms(5));
        assert_eq!(median(vec![ms(4), ms(1), ms(3), ms(2)]), ms(3));
        assert_eq!(median(Vec::new()), Duration::ZERO);
    }

    #[test]
    fn alternating_runs_both_sides_as_often() {
        let (mut a, mut b) = (0, 0);
        let four = Samples {
            count: 4,
            warm_up: Duration::ZERO,
        };
        alternate::<()>(
            four,
            || {
                a += 1;
                Ok(Duration::from_nanos(a))
            },
            || {
                b += 1;
                Ok(Duration::from_nanos(10 * b))
            },
        )
        .unwrap();
        assert_eq!((a, b), (5, 5), "one warm-up and four samples each");
    }

    #[test]
    fn the_warm_up_lasts_its_time_and_runs_at_least_once() {
        // Judged by when each run started and ended, not by how many fit: a loaded machine
        // sleeps longer than asked, and a count of runs made this test fail under CI's load.
        let warm_up = Duration::from_millis(20);
        let mut spans: Vec<(Instant, Instant)> = Vec::new();
        let started = Instant::now();
        let samples = Samples { count: 3, warm_up };
        alone::<()>(samples, || {
            let start = Instant::now();
            std::thread::sleep(Duration::from_millis(2));
            spans.push((start, Instant::now()));
            Ok(Duration::from_millis(2))
        })
        .unwrap();
        let warm_ups = spans.len() - 3;
        assert!(warm_ups >= 1, "at least one warm-up run");
        let (first_sample, _) = spans[warm_ups];
        assert!(
            first_sample - started >= warm_up,
            "the samples began {:?} after the call, before the warm-up's {warm_up:?} passed",
            first_sample - started
        );
        let deadline = spans[0].0 + warm_up;
        let needless = spans[..warm_ups - 1]
            .iter()
            .filter(|(_, end)| *end >= deadline)
            .count();
        assert_eq!(
            needless, 0,
            "a warm-up run began after the warm-up's time had passed"
        );
        let mut runs = 0;
        alone::<()>(Samples::ONE, || {
            runs += 1;
            Ok(Duration::ZERO)
        })
        .unwrap();
        assert_eq!(runs, 2, "one warm-up run, one sample");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_writes_and_resides() {
        let before = bytes_written().expect("/proc/self/io");
        std::fs::write(std::env::temp_dir().join("trellis-bench-io"), [0u8; 4096]).unwrap();
        assert!(bytes_written().unwrap() >= before + 4096);
        assert!(resident_kib().expect("/proc/self/status") > 0);
    }
}
