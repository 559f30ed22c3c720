//! Diagnostics as plain data: a code, a message, a primary span, secondary labels and a help line.
//!
//! Every phase pushes into one [`Diagnostics`] collector and nothing is reported until the whole
//! input has been looked at (as serde_derive's `Ctxt` does); the CLI, build.rs and the macros only
//! differ in how they render the list.

use std::fmt;

pub(crate) use trellis_graph::{Code, Severity};

/// A byte range into the source text, `start..end`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The range `start..end`.
    pub const fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }

    /// The number of bytes covered.
    pub const fn len(self) -> usize {
        self.end - self.start
    }

    /// Whether the span covers no byte (it then marks a position, e.g. the end of the file).
    pub const fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// A secondary place the diagnostic points at, with what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What is there, e.g. "first declared here".
    pub message: String,
}

/// One problem found in a `.graph` source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The code; it fixes the severity.
    pub code: Code,
    /// One sentence, lower case, no trailing period.
    pub message: String,
    /// Where the problem is.
    pub span: Span,
    /// What is wrong at `span`, shown under the caret.
    pub label: String,
    /// Other places that explain the problem.
    pub labels: Vec<Label>,
    /// What to do about it.
    pub help: Option<String>,
    /// The edit that does what `help` says, when it is a single edit (what an editor offers as
    /// a quick fix).
    pub fix: Option<Box<Fix>>,
}

/// A machine-applicable edit: replace `span` (empty: insert at it) with `replacement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the edit does, e.g. "replace with `draft`".
    pub title: String,
    /// The bytes replaced; empty for an insertion.
    pub span: Span,
    /// The new text.
    pub replacement: String,
    /// Whether the replacement is a statement of its own, inserted before the graph's closing
    /// brace (an editor puts it on a line of its own, indented like its neighbours).
    pub statement: bool,
}

impl Fix {
    /// The text to put at `span` in `source`. A statement goes on a line of its own before the
    /// closing brace, indented one level (four spaces, as `trellis fmt` writes) more than the
    /// brace; when the brace shares its line with other text, just before it on that line.
    ///
    /// ```
    /// let source = "graph G {\n    node a;\n    START -> a;\n}\n";
    /// let checked = trellis_dsl::check(source);
    /// let fix = checked.diagnostics[0].fix.as_deref().unwrap();
    /// let mut fixed = source.to_owned();
    /// fixed.replace_range(fix.span.start..fix.span.end, &fix.text_in(source));
    /// assert_eq!(fixed, "graph G {\n    node a;\n    START -> a;\n    a -> END;\n}\n");
    /// ```
    pub fn text_in(&self, source: &str) -> String {
        if !self.statement {
            return self.replacement.clone();
        }
        let at = self.span.start.min(source.len());
        let line_start = source[..at].rfind('\n').map_or(0, |n| n + 1);
        let before_brace = source.get(line_start..at).unwrap_or_default();
        if before_brace.trim().is_empty() {
            format!("    {}\n{before_brace}", self.replacement)
        } else {
            format!("{} ", self.replacement)
        }
    }
}

impl Diagnostic {
    /// A diagnostic with a message and the label under its caret.
    pub fn new(
        code: Code,
        span: Span,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Self {
        Self {
            code,
            message: message.into(),
            span,
            label: label.into(),
            labels: Vec::new(),
            help: None,
            fix: None,
        }
    }

    /// Suggests `known` for the misspelled name at `span`: the help line and the fix that
    /// replaces it.
    pub fn with_did_you_mean(mut self, span: Span, known: &str) -> Self {
        self.help = Some(format!("did you mean `{known}`?"));
        self.fix = Some(Box::new(Fix {
            title: format!("replace with `{known}`"),
            span,
            replacement: known.to_owned(),
            statement: false,
        }));
        self
    }

    /// Sets the fix.
    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = Some(Box::new(fix));
        self
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Sets the help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Sets the help line when there is one.
    pub fn with_optional_help(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }

    /// The same diagnostic about a text that starts `by` bytes into a larger one (a `graph!`
    /// body inside its Rust file): every span, its labels' and its fix's moved by `by`.
    #[must_use]
    pub fn shifted(mut self, by: usize) -> Self {
        let shift = |span: &mut Span| *span = Span::new(span.start + by, span.end + by);
        shift(&mut self.span);
        for label in &mut self.labels {
            shift(&mut label.span);
        }
        if let Some(fix) = &mut self.fix {
            shift(&mut fix.span);
        }
        self
    }

    /// The severity, fixed by the code.
    pub fn severity(&self) -> Severity {
        self.code.severity()
    }

    /// Whether this is an error (as opposed to a warning).
    pub fn is_error(&self) -> bool {
        self.code.is_error()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

impl miette::Diagnostic for Diagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match Diagnostic::severity(self) {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|help| Box::new(help) as Box<dyn fmt::Display>)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let primary = miette::LabeledSpan::new_primary_with_span(
            Some(self.label.clone()),
            (self.span.start, self.span.len()),
        );
        let secondary = self.labels.iter().map(|label| {
            miette::LabeledSpan::new_with_span(
                Some(label.message.clone()),
                (label.span.start, label.span.len()),
            )
        });
        Some(Box::new(std::iter::once(primary).chain(secondary)))
    }
}

/// The collector every phase reports into.
#[derive(Debug, Default)]
pub(crate) struct Diagnostics {
    list: Vec<Diagnostic>,
}

impl Diagnostics {
    pub(crate) fn push(&mut self, diagnostic: Diagnostic) {
        self.list.push(diagnostic);
    }

    #[cfg(test)]
    pub(crate) fn error_count(&self) -> usize {
        self.list.iter().filter(|d| d.is_error()).count()
    }

    /// Whether an error lies within `extent`.
    pub(crate) fn has_error_within(&self, extent: Span) -> bool {
        self.list
            .iter()
            .any(|d| d.is_error() && extent.start <= d.span.start && d.span.end <= extent.end)
    }

    /// All diagnostics in source order (then by code), so output is stable.
    pub(crate) fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.list
            .sort_by_key(|d| (d.span.start, d.span.end, d.code));
        self.list
    }
}
