//! Diagnostics as plain data: a code, a message, a primary span, secondary labels and a help line.
//!
//! Every phase pushes into one [`Diagnostics`] collector and nothing is reported until the whole
//! input has been looked at (as serde_derive's `Ctxt` does); the CLI, build.rs and the macros only
//! differ in how they render the list.

use std::fmt;

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

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The graph cannot be compiled.
    Error,
    /// The graph compiles but is probably not what was meant.
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`, as in the JSON output.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

macro_rules! codes {
    ($($code:ident => $severity:ident, $summary:literal;)*) => {
        /// The diagnostic codes of LANGUAGE.md §5 (their spelling is a contract).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $(#[doc = $summary] $code,)*
        }

        impl Code {
            /// Every code, in numeric order.
            pub const ALL: &'static [Code] = &[$(Code::$code,)*];

            /// The code as written in reports, e.g. `"E0202"`.
            pub const fn as_str(self) -> &'static str {
                match self { $(Code::$code => stringify!($code),)* }
            }

            /// Whether diagnostics with this code are errors or warnings.
            pub const fn severity(self) -> Severity {
                match self { $(Code::$code => Severity::$severity,)* }
            }

            /// One line saying when the code is reported.
            pub const fn summary(self) -> &'static str {
                match self { $(Code::$code => $summary,)* }
            }
        }
    };
}

codes! {
    E0001 => Error, "syntax error: an unexpected token";
    E0002 => Error, "invalid literal: overflow, zero where at least 1 is required, bad unit or escape";
    E0101 => Error, "two graphs with the same name";
    E0102 => Error, "a node declared twice in a graph";
    E0103 => Error, "a name that cannot be used";
    E0104 => Error, "an attribute or setting given twice, or `interrupt before` and `after` both";
    E0105 => Error, "a name in the wrong case";
    E0106 => Error, "two names that become the same Rust identifier";
    E0107 => Error, "an unknown attribute, setting or node kind";
    E0201 => Error, "no entry: the graph has no `START -> …` edge";
    E0202 => Error, "a reference to an undeclared node";
    E0203 => Error, "more than one `START -> …` edge";
    E0204 => Error, "a node with no outgoing edge";
    E0205 => Error, "a node with two outgoing edge statements";
    E0206 => Error, "a conditional or fork edge naming the same target twice";
    E0207 => Error, "an edge into START, out of END, or END inside a fork";
    E0208 => Error, "a graph with no nodes";
    W0301 => Warning, "a node that START cannot reach";
    W0302 => Warning, "a node from which END cannot be reached";
    W0303 => Warning, "a cycle in which no node has `max_visits`";
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
        }
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

    /// The severity, fixed by the code.
    pub fn severity(&self) -> Severity {
        self.code.severity()
    }

    /// Whether this is an error (as opposed to a warning).
    pub fn is_error(&self) -> bool {
        self.severity() == Severity::Error
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
