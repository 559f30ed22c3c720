//! How long things take: alternating samples of trellis and its floor, medians, and the scale
//! that decides how many samples and which sizes.

use std::time::Duration;

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

impl Scale {
    /// The number of samples for a workload that takes `full` samples at full scale.
    pub(crate) fn samples(self, full: usize) -> usize {
        match self {
            Scale::Full => full,
            Scale::Quick => full.div_ceil(8).max(3),
            Scale::Smoke => 1,
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

/// Runs `ours` and `floor` alternately, `samples` times each after one warm-up of each, and
/// returns their medians: alternating spreads the machine's slow moments over both sides.
pub(crate) fn alternate<E>(
    samples: usize,
    mut ours: impl FnMut() -> Result<Duration, E>,
    mut floor: impl FnMut() -> Result<Duration, E>,
) -> Result<(Duration, Duration), E> {
    ours()?;
    floor()?;
    let (mut a, mut b) = (Vec::with_capacity(samples), Vec::with_capacity(samples));
    for _ in 0..samples {
        a.push(ours()?);
        b.push(floor()?);
    }
    Ok((median(a), median(b)))
}

/// The median of `samples` runs of `ours` after one warm-up, for workloads with no floor.
pub(crate) fn alone<E>(
    samples: usize,
    mut ours: impl FnMut() -> Result<Duration, E>,
) -> Result<Duration, E> {
    ours()?;
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
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
        alternate::<()>(
            4,
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

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_writes_and_resides() {
        let before = bytes_written().expect("/proc/self/io");
        std::fs::write(std::env::temp_dir().join("trellis-bench-io"), [0u8; 4096]).unwrap();
        assert!(bytes_written().unwrap() >= before + 4096);
        assert!(resident_kib().expect("/proc/self/status") > 0);
    }
}
