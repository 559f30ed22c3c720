//! Diagnostics for people and tools: rustc-style reports with the source snippet, and the JSON
//! lines of `trellis check --format json` (LANGUAGE.md §6).

use serde::Serialize;

use crate::diagnostic::Diagnostic;
use crate::position::LineIndex;

#[derive(Serialize)]
struct JsonLine<'a> {
    severity: &'a str,
    code: &'a str,
    message: &'a str,
    file: &'a str,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    help: Option<&'a str>,
    labels: Vec<JsonLabel<'a>>,
}

#[derive(Serialize)]
struct JsonLabel<'a> {
    message: &'a str,
    line: usize,
    column: usize,
}

/// One diagnostic as one line of JSON (no trailing newline). Lines and columns are 1-based,
/// columns count characters, and `end_column` is one past the last character.
///
/// ```
/// let text = "graph G { node a; START -> b; a -> END; }";
/// let checked = trellis_dsl::check(text);
/// let line = trellis_dsl::render::json_line(&checked.diagnostics[0], "g.graph", text);
/// assert!(line.starts_with(r#"{"severity":"error","code":"E0202","#));
/// assert!(line.contains(r#""line":1,"column":28,"end_line":1,"end_column":29"#));
/// ```
pub fn json_line(diagnostic: &Diagnostic, file: &str, text: &str) -> String {
    let index = LineIndex::new(text);
    let start = index.line_column(diagnostic.span.start);
    let end = index.line_column(diagnostic.span.end);
    let line = JsonLine {
        severity: diagnostic.severity().as_str(),
        code: diagnostic.code.as_str(),
        message: &diagnostic.message,
        file,
        line: start.line,
        column: start.column,
        end_line: end.line,
        end_column: end.column,
        help: diagnostic.help.as_deref(),
        labels: diagnostic
            .labels
            .iter()
            .map(|label| {
                let at = index.line_column(label.span.start);
                JsonLabel {
                    message: &label.message,
                    line: at.line,
                    column: at.column,
                }
            })
            .collect(),
    };
    // Serializing plain strings and numbers cannot fail; an empty object is a safe fallback.
    serde_json::to_string(&line).unwrap_or_else(|_| String::from("{}"))
}

/// How a human-readable report is drawn.
#[cfg(feature = "render")]
#[derive(Clone, Copy, Debug)]
pub struct HumanStyle {
    /// ANSI colours.
    pub color: bool,
    /// Wrap width in columns.
    pub width: usize,
}

#[cfg(feature = "render")]
impl Default for HumanStyle {
    fn default() -> Self {
        Self {
            color: false,
            width: 100,
        }
    }
}

/// One diagnostic as a rustc-style report: code, message, the source snippet with the caret under
/// the place, labels and help.
#[cfg(feature = "render")]
pub fn human(diagnostic: &Diagnostic, file: &str, text: &str, style: HumanStyle) -> String {
    use miette::{GraphicalReportHandler, GraphicalTheme, NamedSource};

    let theme = if style.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(style.width)
        .with_links(false);
    let report = WithSource {
        diagnostic,
        source: NamedSource::new(file, text.to_owned()),
    };
    let mut out = String::new();
    if handler.render_report(&mut out, &report).is_err() {
        // Rendering into a String cannot fail; keep the essentials if it ever does.
        out = format!(
            "{}[{}]: {}\n",
            diagnostic.severity().as_str(),
            diagnostic.code,
            diagnostic.message
        );
    }
    out
}

/// A diagnostic paired with its source, as miette wants it for rendering.
#[cfg(feature = "render")]
struct WithSource<'a> {
    diagnostic: &'a Diagnostic,
    source: miette::NamedSource<String>,
}

#[cfg(feature = "render")]
impl std::fmt::Debug for WithSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.diagnostic, f)
    }
}

#[cfg(feature = "render")]
impl std::fmt::Display for WithSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.diagnostic, f)
    }
}

#[cfg(feature = "render")]
impl std::error::Error for WithSource<'_> {}

#[cfg(feature = "render")]
impl miette::Diagnostic for WithSource<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        miette::Diagnostic::code(self.diagnostic)
    }

    fn severity(&self) -> Option<miette::Severity> {
        miette::Diagnostic::severity(self.diagnostic)
    }

    fn help<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        miette::Diagnostic::help(self.diagnostic)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        miette::Diagnostic::labels(self.diagnostic)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }
}
