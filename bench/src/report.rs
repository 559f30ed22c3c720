//! One measured figure (a row of the table, a line of `--json`) and the target it is judged by.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Value};

/// One workload at one variant and size. Serialized as one line of `--json`: `workload`,
/// `variant`, `size`, `unit`, `trellis_ns` (per unit), `baseline_ns` (the hand-written floor's,
/// or null), `ratio` (or null), then `target` and `met` where the issue sets a target, then
/// what the workload measures besides (bytes, memory).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// `chain`, `loop`, `fanout`, …
    pub workload: &'static str,
    /// Where or how: `memory`, `sqlite-full`, `mixed`, …
    pub variant: String,
    /// Nodes, iterations, branches, steps or cycles, as the workload counts them.
    pub size: u64,
    /// What one unit is: `activation`, `branch`, `step`, `cycle` or `node`.
    pub unit: &'static str,
    /// Trellis's median nanoseconds per unit.
    pub trellis_ns: f64,
    /// The hand-written floor's, measured in the same process, alternating.
    pub baseline_ns: Option<f64>,
    /// `trellis_ns / baseline_ns`.
    pub ratio: Option<f64>,
    /// The target, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Whether the figure meets it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
    /// Further figures (`bytes_per_step_at_10`, `rss_kib_growth`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Row {
    pub(crate) fn new(
        workload: &'static str,
        variant: impl Into<String>,
        size: u64,
        unit: &'static str,
        trellis_ns: f64,
        baseline_ns: Option<f64>,
    ) -> Self {
        Row {
            workload,
            variant: variant.into(),
            size,
            unit,
            trellis_ns,
            baseline_ns,
            ratio: baseline_ns.map(|floor| trellis_ns / floor),
            target: None,
            met: None,
            extra: Map::new(),
        }
    }

    /// Judges the row by `target`.
    pub(crate) fn judged(mut self, target: Target) -> Self {
        self.met = Some(target.met(&self));
        self.target = Some(target.to_string());
        self
    }

    pub(crate) fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(key.to_owned(), value.into());
        self
    }

    /// The table's header.
    pub fn header() -> String {
        format!(
            "{:<17} {:<14} {:>7} {:<10} {:>12} {:>12} {:>7}  target",
            "workload", "variant", "size", "unit", "trellis", "floor", "ratio"
        )
    }

    /// The row in the table.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{:<17} {:<14} {:>7} {:<10} {:>12} {:>12} {:>7}",
            self.workload,
            self.variant,
            self.size,
            self.unit,
            duration(self.trellis_ns),
            self.baseline_ns.map_or_else(|| "-".to_owned(), duration),
            self.ratio
                .map_or_else(|| "-".to_owned(), |ratio| format!("{ratio:.2}x")),
        );
        if let (Some(target), Some(met)) = (&self.target, self.met) {
            let verdict = if met { "met" } else { "MISSED" };
            let _ = write!(line, "  {verdict}: {target}");
        }
        for (key, value) in &self.extra {
            let _ = write!(line, "  {key}={value}");
        }
        line
    }
}

/// A duration in nanoseconds, in the unit that keeps it readable.
pub(crate) fn duration(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

/// What a row must show (the issue's targets, release build, on the 2-core machine).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    /// At most this many nanoseconds per unit.
    Ns(f64),
    /// At most this many nanoseconds per unit and at most this ratio to the floor.
    NsAndRatio(f64, f64),
    /// At most this ratio to the floor.
    Ratio(f64),
    /// A whole run within this many nanoseconds, and the time per unit at most this many times
    /// that of the size ten times smaller (`time(10n) ≤ 10 × factor × time(n)`): linear, give or
    /// take.
    TotalAndScaling {
        total_ns: f64,
        smaller_ns_per_unit: f64,
        factor: f64,
    },
    /// The resident memory grew by at most this many KiB over the run.
    FlatMemory(u64),
}

impl Target {
    fn met(self, row: &Row) -> bool {
        match self {
            Target::Ns(ns) => row.trellis_ns <= ns,
            Target::NsAndRatio(ns, ratio) => {
                row.trellis_ns <= ns && row.ratio.is_some_and(|r| r <= ratio)
            }
            Target::Ratio(ratio) => row.ratio.is_some_and(|r| r <= ratio),
            Target::TotalAndScaling {
                total_ns,
                smaller_ns_per_unit,
                factor,
            } => {
                row.trellis_ns * row.size as f64 <= total_ns
                    && row.trellis_ns <= smaller_ns_per_unit * factor
            }
            Target::FlatMemory(kib) => row
                .extra
                .get("rss_kib_growth")
                .and_then(Value::as_i64)
                .is_some_and(|growth| growth <= i64::try_from(kib).unwrap_or(i64::MAX)),
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Ns(ns) => write!(f, "≤ {}", duration(*ns)),
            Target::NsAndRatio(ns, ratio) => write!(f, "≤ {} and ≤ {ratio}x", duration(*ns)),
            Target::Ratio(ratio) => write!(f, "≤ {ratio}x"),
            Target::TotalAndScaling {
                total_ns, factor, ..
            } => write!(
                f,
                "≤ {} in all, 10x the nodes ≤ {}x the time",
                duration(*total_ns),
                10.0 * factor
            ),
            Target::FlatMemory(kib) => write!(f, "resident memory grows ≤ {kib} KiB"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_judge_the_figures_they_name() {
        let row = Row::new("loop", "memory", 1000, "activation", 140.0, Some(40.0));
        assert!(
            !row.clone()
                .judged(Target::NsAndRatio(150.0, 3.0))
                .met
                .unwrap(),
            "3.5x"
        );
        assert!(
            row.clone()
                .judged(Target::NsAndRatio(150.0, 4.0))
                .met
                .unwrap()
        );
        assert!(
            row.clone()
                .judged(Target::NsAndRatio(150.0, 3.0))
                .target
                .is_some()
        );
        assert!(row.clone().judged(Target::Ns(150.0)).met.unwrap());
        assert!(!row.clone().judged(Target::Ns(100.0)).met.unwrap());
        assert!(row.judged(Target::Ratio(4.0)).met == Some(true));
        let scaled = Row::new("compile", "chain", 10_000, "node", 4_000.0, None);
        let scaling = |smaller| Target::TotalAndScaling {
            total_ns: 50e6,
            smaller_ns_per_unit: smaller,
            factor: 1.2,
        };
        assert!(scaled.clone().judged(scaling(3_500.0)).met.unwrap());
        assert!(
            !scaled.clone().judged(scaling(3_000.0)).met.unwrap(),
            "more than 12x"
        );
        let slow = Row::new("compile", "chain", 10_000, "node", 6_000.0, None);
        assert!(!slow.judged(scaling(6_000.0)).met.unwrap(), "60 ms in all");
        let grew = Row::new("memory", "loop", 100_000, "activation", 1.0, None);
        assert!(
            grew.clone()
                .with("rss_kib_growth", 10)
                .judged(Target::FlatMemory(512))
                .met
                .unwrap()
        );
        assert!(
            !grew
                .clone()
                .with("rss_kib_growth", 4096)
                .judged(Target::FlatMemory(512))
                .met
                .unwrap()
        );
        assert!(
            !grew.judged(Target::FlatMemory(512)).met.unwrap(),
            "no figure, not met"
        );
    }

    #[test]
    fn a_json_line_has_the_fields_the_issue_names() {
        let row = Row::new("chain", "memory", 100, "activation", 120.5, None);
        let json = serde_json::to_value(&row).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"workload": "chain", "variant": "memory", "size": 100,
                "unit": "activation", "trellis_ns": 120.5, "baseline_ns": null, "ratio": null})
        );
    }
}
