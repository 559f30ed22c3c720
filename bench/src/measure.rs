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

/// How many samples a measurement takes, over how long, and how long it first warms up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Samples {
    /// At least this many samples.
    pub(crate) count: usize,
    /// And more, until the samples span this long. This machine has slow stretches of a few
    /// hundred milliseconds, in the middle of a process too (`interrupt_resume` at ~10.5 µs a
    /// cycle for 200 ms, 7.3 before and after): 101 samples of a quick workload take ~75 ms,
    /// and one stretch could cover them all. Over a second, it is a minority of the samples
    /// and the median does not move.
    span: Duration,
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
        span: Duration::ZERO,
        warm_up: Duration::ZERO,
    };

    /// The same count with one warm-up run only (each run is a fresh process: nothing to warm).
    pub(crate) fn without_warm_up(self) -> Samples {
        Samples {
            warm_up: Duration::ZERO,
            ..self
        }
    }

    /// `count` samples or more, until they span `span`.
    fn take<T, E>(self, mut sample: impl FnMut() -> Result<T, E>) -> Result<Vec<T>, E> {
        let mut taken = Vec::with_capacity(self.count);
        let started = Instant::now();
        while taken.len() < self.count || started.elapsed() < self.span {
            taken.push(sample()?);
        }
        Ok(taken)
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
                span: Duration::from_secs(1),
                warm_up: Duration::from_millis(200),
            },
            // A smoke run in CI: its figures are a check that the workloads run at speed, not
            // the ones the targets are judged by.
            Scale::Quick => Samples {
                count: full.div_ceil(8).max(3),
                span: Duration::ZERO,
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
    let pairs = samples.take(|| Ok((ours()?, floor()?)))?;
    let (a, b) = pairs.into_iter().unzip();
    Ok((median(a), median(b)))
}

/// The median of `samples.count` runs of `ours` after warming it up, for workloads with no
/// floor.
pub(crate) fn alone<E>(
    samples: Samples,
    mut ours: impl FnMut() -> Result<Duration, E>,
) -> Result<Duration, E> {
    samples.warm_up(|| ours().map(drop))?;
    Ok(median(samples.take(&mut ours)?))
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
            ..Samples::ONE
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

    /// When each run of a 2 ms workload measured with `samples` began and ended, and when the
    /// measurement was called. Timing tests judge by these, not by how many runs fit: a loaded
    /// machine sleeps longer than asked, and a count of runs failed under CI's load.
    fn sleeping_runs(samples: Samples) -> (Instant, Vec<(Instant, Instant)>) {
        let mut runs = Vec::new();
        let called = Instant::now();
        alone::<()>(samples, || {
            let start = Instant::now();
            std::thread::sleep(Duration::from_millis(2));
            runs.push((start, Instant::now()));
            Ok(Duration::from_millis(2))
        })
        .unwrap();
        (called, runs)
    }

    /// How many of `runs`, all but the last, ended after `deadline`: a run that began after the
    /// time it was run for had passed.
    fn needless(runs: &[(Instant, Instant)], deadline: Instant) -> usize {
        let all_but_last = &runs[..runs.len().saturating_sub(1)];
        all_but_last
            .iter()
            .filter(|(_, end)| *end >= deadline)
            .count()
    }

    #[test]
    fn samples_go_on_until_they_span_their_time_and_no_longer() {
        let span = Duration::from_millis(20);
        let samples = Samples {
            count: 3,
            span,
            ..Samples::ONE
        };
        let (called, runs) = sleeping_runs(samples);
        let returned = Instant::now();
        // `Samples::ONE` warms up with one run; the samples follow it.
        let taken = &runs[1..];
        assert!(taken.len() >= 3, "at least the count: {}", taken.len());
        assert!(returned - called >= span, "the samples spanned their time");
        assert_eq!(
            needless(taken, taken[0].0 + span),
            0,
            "a sample began after the span had passed"
        );
        // Many samples of a quick workload: the count, not the span, says when to stop.
        let mut count = 0;
        let many = Samples {
            count: 5,
            ..Samples::ONE
        };
        alone::<()>(many, || {
            count += 1;
            Ok(Duration::ZERO)
        })
        .unwrap();
        assert_eq!(count, 1 + 5, "one warm-up run and the count");
    }

    #[test]
    fn the_warm_up_lasts_its_time_and_runs_at_least_once() {
        let warm_up = Duration::from_millis(20);
        let samples = Samples {
            count: 3,
            warm_up,
            ..Samples::ONE
        };
        let (called, runs) = sleeping_runs(samples);
        let warm_ups = runs.len() - 3;
        assert!(warm_ups >= 1, "at least one warm-up run");
        let (first_sample, _) = runs[warm_ups];
        assert!(
            first_sample - called >= warm_up,
            "the samples began {:?} after the call, before the warm-up's {warm_up:?} passed",
            first_sample - called
        );
        assert_eq!(
            needless(&runs[..warm_ups], runs[0].0 + warm_up),
            0,
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
