//! The reports a build script leaves beside the code it generates (`OUT_DIR/<stem>.reports`):
//! each error and warning of a `.graph` file as text, for `include_generated!` to report at
//! its own call site. Written by `trellis-codegen`'s `Builder`, read by the macro; this module
//! is the format both agree on.
//!
//! ```
//! use trellis_graph::reports::{Report, read, write};
//!
//! let reports = vec![Report::error("E0202", "E0202: node `reveiw` is not declared\n  --> g.graph:6:14")];
//! assert_eq!(read(&write(&reports)), reports);
//! ```

/// Ends each report (ASCII's record separator, which no report's text holds).
const SEPARATOR: char = '\u{1e}';

/// One error or warning, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// An error (else a warning).
    pub error: bool,
    /// Its code (`E0202`, `W0301`).
    pub code: String,
    /// The report: code, message, place, source line, help.
    pub text: String,
}

impl Report {
    /// An error.
    pub fn error(code: impl Into<String>, text: impl Into<String>) -> Self {
        Report {
            error: true,
            code: code.into(),
            text: text.into(),
        }
    }

    /// A warning.
    pub fn warning(code: impl Into<String>, text: impl Into<String>) -> Self {
        Report {
            error: false,
            code: code.into(),
            text: text.into(),
        }
    }
}

/// The name of the reports' file beside `<stem>.rs`.
pub fn file_name(stem: &str) -> String {
    format!("{stem}.reports")
}

/// The file's text: per report, `error CODE` or `warning CODE` on a line, its text, the
/// separator.
pub fn write(reports: &[Report]) -> String {
    let mut text = String::new();
    for report in reports {
        let level = if report.error { "error" } else { "warning" };
        text.push_str(&format!(
            "{level} {}\n{}{SEPARATOR}\n",
            report.code,
            report.text.replace(SEPARATOR, " ")
        ));
    }
    text
}

/// The reports in a file's `text`; what does not read as one is left out.
pub fn read(text: &str) -> Vec<Report> {
    text.split(SEPARATOR)
        .filter_map(|record| {
            let record = record.strip_prefix('\n').unwrap_or(record);
            let (head, body) = record.split_once('\n')?;
            let (level, code) = head.split_once(' ')?;
            let error = match level {
                "error" => true,
                "warning" => false,
                _ => return None,
            };
            Some(Report {
                error,
                code: code.to_owned(),
                text: body.to_owned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_read_back_as_written_in_order() {
        let reports = vec![
            Report::error("E0202", "E0202: one\n  --> a.graph:1:1\n  = help: é"),
            Report::warning("W0301", "W0301: two"),
            Report::error("E0201", ""),
        ];
        assert_eq!(read(&write(&reports)), reports);
        assert_eq!(read(""), []);
    }
}
