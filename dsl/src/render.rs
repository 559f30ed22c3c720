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
/// let index = trellis_dsl::LineIndex::new(text);
/// let line = trellis_dsl::render::json_line(&checked.diagnostics[0], "g.graph", &index);
/// assert!(line.starts_with(r#"{"severity":"error","code":"E0202","#));
/// assert!(line.contains(r#""line":1,"column":28,"end_line":1,"end_column":29"#));
/// ```
///
/// The text's [`LineIndex`] is made once for all of its diagnostics: made per diagnostic, it
/// made a file's report quadratic in its size.
pub fn json_line(diagnostic: &Diagnostic, file: &str, index: &LineIndex<'_>) -> String {
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
///
/// The text's [`LineIndex`] is made once for all of its diagnostics: each report reads only
/// the lines it shows (miette alone reads the text from its start for each one, and a file of
/// thousands of warnings took seconds).
#[cfg(feature = "render")]
pub fn human(
    diagnostic: &Diagnostic,
    file: &str,
    index: &LineIndex<'_>,
    style: HumanStyle,
) -> String {
    use miette::{GraphicalReportHandler, GraphicalTheme};

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
        source: Indexed { file, index },
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
    source: Indexed<'a>,
}

/// A named source whose spans are read through its line index: only the lines around a span
/// are handed to miette, which then counts from their start, not the file's.
#[cfg(feature = "render")]
struct Indexed<'a> {
    file: &'a str,
    index: &'a LineIndex<'a>,
}

#[cfg(feature = "render")]
impl miette::SourceCode for Indexed<'_> {
    fn read_span<'b>(
        &'b self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'b> + 'b>, miette::MietteError> {
        let text = self.index.text();
        let first = self.index.line_column(span.offset()).line - 1;
        let last = self.index.line_column(span.offset() + span.len()).line - 1;
        // A line more than the context on each side: miette reads its context from the window
        // as it would from the whole text (a test holds the two to the same report).
        let from_line = first.saturating_sub(context_lines_before + 1);
        let start = self.index.line_start(from_line).unwrap_or(0);
        let end = self
            .index
            .line_start(last + context_lines_after + 2)
            .unwrap_or(text.len());
        let window = &text[start..end];
        let inner = miette::SourceSpan::new(
            span.offset().saturating_sub(start).into(),
            span.len().min(window.len()),
        );
        let read = window.read_span(&inner, context_lines_before, context_lines_after)?;
        let shown =
            miette::SourceSpan::new((read.span().offset() + start).into(), read.span().len());
        // miette's lines before the window: the language's, and the lone `\r` it also breaks
        // at. Its `line_count` counts from the text's start (it decides which snippets merge).
        let lines_before = from_line + self.index.lone_returns_before(start);
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.file.to_owned(),
            read.data(),
            shown,
            read.line() + lines_before,
            read.column(),
            read.line_count() + lines_before,
        )))
    }
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

#[cfg(all(test, feature = "render"))]
mod tests {
    use miette::{GraphicalReportHandler, GraphicalTheme, NamedSource};
    use proptest::prelude::*;

    use super::*;

    /// What miette draws from the whole text, as `human` drew before it read through the
    /// index: the reference `human` must match, byte for byte.
    fn whole_text(diagnostic: &Diagnostic, file: &str, text: &str) -> String {
        struct Whole<'a>(&'a Diagnostic, NamedSource<String>);
        impl std::fmt::Debug for Whole<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(self.0, f)
            }
        }
        impl std::fmt::Display for Whole<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(self.0, f)
            }
        }
        impl std::error::Error for Whole<'_> {}
        impl miette::Diagnostic for Whole<'_> {
            fn code<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
                miette::Diagnostic::code(self.0)
            }
            fn severity(&self) -> Option<miette::Severity> {
                miette::Diagnostic::severity(self.0)
            }
            fn help<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
                miette::Diagnostic::help(self.0)
            }
            fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
                miette::Diagnostic::labels(self.0)
            }
            fn source_code(&self) -> Option<&dyn miette::SourceCode> {
                Some(&self.1)
            }
        }
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .with_width(HumanStyle::default().width)
            .with_links(false);
        let mut out = String::new();
        let report = Whole(diagnostic, NamedSource::new(file, text.to_owned()));
        handler.render_report(&mut out, &report).expect("renders");
        out
    }

    fn pieces() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("graph G {\n".to_owned()),
            Just("}\n".to_owned()),
            Just("    node a;\n".to_owned()),
            Just("    node ü { interrupt before \"Prêt — ok?\"; }\n".to_owned()),
            Just("    START -> a;\n".to_owned()),
            Just("    a -> b | a | a;\n".to_owned()),
            Just("    a & b -> c;\n".to_owned()),
            Just("    /// Größe 😀\n".to_owned()),
            Just("    node c { max_visits 0; }\n".to_owned()),
            Just("\r\n".to_owned()),
            Just("\r".to_owned()),
            Just("\n\n".to_owned()),
            "[a-z ü—😀;>-]{1,6}".prop_map(|s| s),
        ];
        prop::collection::vec(piece, 0..16).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn a_report_read_through_the_index_is_the_one_from_the_whole_text(text in pieces()) {
            let checked = crate::check(&text);
            let index = LineIndex::new(&text);
            for diagnostic in &checked.diagnostics {
                let ours = human(diagnostic, "g.graph", &index, HumanStyle::default());
                prop_assert_eq!(ours, whole_text(diagnostic, "g.graph", &text));
            }
        }
    }
}
