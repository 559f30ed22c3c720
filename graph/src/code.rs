//! The diagnostic codes: one table of code, severity, which front doors check it, and summary.
//!
//! The spelling of the codes is a contract (LANGUAGE.md §5): the CLI's JSON output, editors and
//! tests outside the project read them.

use std::fmt;

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

/// Which front doors a code's rule applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// How a `.graph` source is written (syntax, literals, name case, Rust identifiers): only
    /// the language reports it.
    Language,
    /// The graph's shape: [`check`](crate::check) reports it for every graph, written in the
    /// language or declared with the runtime's `GraphBuilder`. (E0002 and E0103 also have a
    /// language-only part: bad literals, and names the language or Rust reserves.)
    Topology,
    /// What the state's types decide (a field's reducer, which only `#[derive(GraphState)]`
    /// knows): the compiler reports it, through the code generated for the graph.
    Types,
}

macro_rules! codes {
    ($($code:ident => $severity:ident, $scope:ident, $summary:literal;)*) => {
        /// The diagnostic codes of LANGUAGE.md §5 (their spelling is a contract).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
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

            /// Which front doors check the code's rule.
            pub const fn scope(self) -> Scope {
                match self { $(Code::$code => Scope::$scope,)* }
            }

            /// One line saying when the code is reported.
            pub const fn summary(self) -> &'static str {
                match self { $(Code::$code => $summary,)* }
            }
        }
    };
}

codes! {
    E0001 => Error, Language, "syntax error: an unexpected token";
    E0002 => Error, Topology, "invalid literal: overflow, zero where at least 1 is required, bad unit or escape";
    E0101 => Error, Language, "two graphs with the same name";
    E0102 => Error, Topology, "a node declared twice in a graph";
    E0103 => Error, Topology, "a name that cannot be used";
    E0104 => Error, Language, "an attribute or setting given twice, `interrupt before` and `after` both, or `retry_on` without `retry`";
    E0105 => Error, Language, "a name in the wrong case";
    E0106 => Error, Language, "two names that become the same Rust identifier";
    E0107 => Error, Language, "an unknown attribute, setting or node kind";
    E0201 => Error, Topology, "no entry: the graph has no `START -> …` edge";
    E0202 => Error, Topology, "a reference to an undeclared node";
    E0203 => Error, Topology, "more than one `START -> …` edge";
    E0204 => Error, Topology, "a node with no outgoing edge";
    E0205 => Error, Topology, "a node with two outgoing edge statements";
    E0206 => Error, Topology, "a conditional or fork edge naming the same target twice";
    E0207 => Error, Topology, "an edge into START, out of END, END inside a fork or a send, or START or END in a join";
    E0208 => Error, Topology, "a graph with no nodes";
    E0209 => Error, Topology, "a join with one source, or not into exactly one node";
    E0210 => Error, Language, "a node sent to (`each`) that declares no `input` type";
    E0211 => Error, Language, "a subgraph node naming a graph the file does not declare";
    E0212 => Error, Language, "a graph that runs itself through its subgraph nodes";
    E0213 => Error, Topology, "a subgraph node sent to (`each`): a child graph takes no branch input";
    E0214 => Error, Types, "two nodes that can run in one super-step both write a field whose reducer overwrites";
    E0215 => Error, Language, "a `writes` generated code cannot type: on a subgraph node, or in a graph that names no `state`";
    E0216 => Error, Types, "a `writes` entry naming no field of the state";
    E0217 => Error, Language, "an answer type that cannot apply: `asks` on a subgraph node, an answer type in a graph that names no `state`, or on a node that does not pause";
    E0218 => Error, Topology, "two subgraph nodes whose children run on the parent's own state that can run in one super-step";
    W0301 => Warning, Topology, "a node that START cannot reach";
    W0302 => Warning, Topology, "a node from which END cannot be reached";
    W0303 => Warning, Topology, "a cycle in which no node has `max_visits`";
    W0304 => Warning, Topology, "a node reached by branches of one fork in different super-steps, without `defer`";
}

impl Code {
    /// The code spelled `text` (`"E0202"`), if there is one.
    pub fn parse(text: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|code| code.as_str() == text)
    }

    /// Whether the code is an error (as opposed to a warning).
    pub const fn is_error(self) -> bool {
        matches!(self.severity(), Severity::Error)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_spelled_by_their_severity_and_sorted() {
        for code in Code::ALL {
            let prefix = if code.is_error() { 'E' } else { 'W' };
            assert!(code.as_str().starts_with(prefix), "{code}");
            assert_eq!(Code::parse(code.as_str()), Some(*code));
        }
        assert!(Code::ALL.windows(2).all(|pair| pair[0] < pair[1]));
        assert_eq!(Code::parse("E9999"), None);
    }
}
