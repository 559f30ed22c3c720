//! A diagnostic as plain text with its place and source line, for messages that cannot carry a
//! rendered report (build scripts, `include_graph!`).

use trellis_dsl::{Diagnostic, LineIndex};

/// `E0202: message`, then `--> path:line:column`, the source line with carets under the span
/// and its label, the secondary labels' places, and the help.
pub fn plain(path: &str, source: &str, diagnostic: &Diagnostic) -> String {
    let index = LineIndex::new(source);
    let start = index.line_column(diagnostic.span.start);
    let end = index.line_column(diagnostic.span.end.max(diagnostic.span.start));
    let mut text = format!(
        "{}: {}\n  --> {path}:{}:{}\n",
        diagnostic.code.as_str(),
        diagnostic.message,
        start.line,
        start.column
    );
    if let Some(line) = source.lines().nth(start.line.saturating_sub(1)) {
        let number = start.line.to_string();
        let pad = " ".repeat(number.len());
        let width = if end.line == start.line {
            end.column.saturating_sub(start.column).max(1)
        } else {
            line.chars().count().saturating_sub(start.column - 1).max(1)
        };
        let label = &diagnostic.label;
        text.push_str(&format!(
            "{pad} |\n{number} | {line}\n{pad} | {}{} {label}\n",
            " ".repeat(start.column.saturating_sub(1)),
            "^".repeat(width)
        ));
    }
    for label in &diagnostic.labels {
        let at = index.line_column(label.span.start);
        text.push_str(&format!(
            "  = note: {} ({path}:{}:{})\n",
            label.message, at.line, at.column
        ));
    }
    if let Some(help) = &diagnostic.help {
        text.push_str(&format!("  = help: {help}\n"));
    }
    text.trim_end().to_owned()
}
