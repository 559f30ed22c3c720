//! Generated code as text, laid out as it is written: the one form every way in starts from.
//! A build script writes it to `OUT_DIR`; the macros parse it into tokens (rustc's lexer, in a
//! macro) and put back the few tokens that stand for a piece of the source (`paths.rs`).
//!
//! Text, not `proc_macro2` tokens: outside a macro every identifier token is its own allocation
//! and every stream a shared buffer, and laying tokens out again as text cost as much as making
//! them; writing the lines directly is several times faster for a large graph (see
//! `docs/bench.md`).

use std::fmt::{self, Write as _};

const INDENT: &str = "    ";
/// Indentation for up to eight levels, without a `String` per line.
const SPACES: &str = "                                ";

/// Lines of Rust, each indented by the brackets the lines before it left open.
///
/// Kept whole for the macros; for a build script, handed on a chunk at a time at item
/// boundaries (a large graph's code is megabytes, and holding it whole cost more in fresh memory
/// pages than writing it did).
pub(crate) struct Lines<'o> {
    text: String,
    depth: usize,
    /// Lines written so far.
    lines: usize,
    /// A build script's notes, one per `pub type State = …;` line, written at its end.
    notes: std::vec::IntoIter<String>,
    /// Where the text goes as it is written; `None` keeps it.
    out: Option<&'o mut dyn FnMut(&str)>,
    /// For the macros: how many groups deep a path's stand-in is written at most (`None` when
    /// not looked for), so that replacing them walks no deeper.
    stand_ins: Option<usize>,
    /// A build script's way to name a place of the source (`graphs/a.graph:3:24`) in messages
    /// rustc prints from the generated file; the macros' errors stand at the place itself.
    locate: Option<&'o dyn Fn(trellis_dsl::Span) -> String>,
}

/// How much text is gathered before it is handed on.
const CHUNK: usize = 64 * 1024;

/// A point in the code written so far.
#[derive(Clone, Copy)]
pub(crate) struct Mark {
    len: usize,
    depth: usize,
    lines: usize,
}

/// Writes one line of code: `put!(code, "pub enum {} {{", name)`. A line that ends with `{`,
/// `(` or `[` opens a level; one that starts with `}`, `)` or `]` closes one.
macro_rules! put {
    ($code:expr, $($arg:tt)*) => {
        $code.line(format_args!($($arg)*))
    };
}
pub(crate) use put;

impl<'o> Lines<'o> {
    /// Lines kept whole, expected to grow to about `capacity` bytes (growing a large graph's by
    /// doubling would copy it again and again).
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Lines {
            text: String::with_capacity(capacity),
            depth: 0,
            lines: 0,
            notes: Vec::new().into_iter(),
            out: None,
            stand_ins: None,
            locate: None,
        }
    }

    /// Lines kept whole for the macros: it notes how deep the paths' stand-ins are.
    pub(crate) fn for_tokens(capacity: usize) -> Self {
        Lines {
            stand_ins: Some(0),
            ..Lines::with_capacity(capacity)
        }
    }

    /// How many groups deep a stand-in was written at most (an over-estimate: every bracket
    /// opened before it on its line counts).
    pub(crate) fn stand_in_depth(&self) -> usize {
        self.stand_ins.unwrap_or(0)
    }

    /// Lines handed to `out` a chunk at a time, with `notes` at the end of the state alias lines.
    pub(crate) fn streamed(out: &'o mut dyn FnMut(&str), notes: Vec<String>) -> Self {
        Lines {
            notes: notes.into_iter(),
            out: Some(out),
            ..Lines::with_capacity(CHUNK + 4096)
        }
    }

    /// Names places of the source with `locate` (see [`Lines::located`]).
    pub(crate) fn locating(mut self, locate: &'o dyn Fn(trellis_dsl::Span) -> String) -> Self {
        self.locate = Some(locate);
        self
    }

    /// ` (at graphs/a.graph:3:24)` for a build script's code; nothing for the macros, whose
    /// errors are reported at the place itself.
    pub(crate) fn located(&self, span: trellis_dsl::Span) -> String {
        self.locate
            .map(|locate| format!(" (at {})", locate(span)))
            .unwrap_or_default()
    }

    /// Marks the line just written as a state alias: its note, if any, goes at its end.
    pub(crate) fn state_alias_written(&mut self) {
        if let Some(note) = self.notes.next() {
            self.text.insert_str(self.text.len() - 1, &note);
        }
    }

    /// Between two items (no [`Mark`] is held across one): a streamed code hands on what it has
    /// gathered once that is a chunk.
    pub(crate) fn boundary(&mut self) {
        if self.text.len() >= CHUNK
            && let Some(out) = self.out.as_mut()
        {
            out(&self.text);
            self.text.clear();
        }
    }

    /// Writes a line (use [`put!`]); a comment opens and closes nothing.
    pub(crate) fn line(&mut self, args: fmt::Arguments<'_>) {
        let start = self.text.len();
        self.indent();
        let _ = self.text.write_fmt(args);
        let line = &self.text[start + self.depth * INDENT.len()..];
        let code = !line.starts_with("//");
        let opens = code && line.ends_with(['{', '(', '[']);
        let closes = code && line.starts_with(['}', ')', ']']) && self.depth > 0;
        if let Some(deepest) = self.stand_ins.as_mut() {
            for (at, _) in line.match_indices(crate::paths::STAND_IN) {
                let opened = line[..at].bytes().filter(|b| b"([{".contains(b)).count();
                *deepest = (*deepest).max(self.depth - usize::from(closes) + opened);
            }
        }
        if closes {
            self.depth -= 1;
            // Rare enough (a closing line) to pay for moving the line back.
            self.text.drain(start..start + INDENT.len());
        }
        self.text.push('\n');
        self.lines += 1;
        if opens {
            self.depth += 1;
        }
    }

    fn indent(&mut self) {
        match SPACES.get(..self.depth * INDENT.len()) {
            Some(indent) => self.text.push_str(indent),
            None => {
                for _ in 0..self.depth {
                    self.text.push_str(INDENT);
                }
            }
        }
    }

    /// `text` as doc comment lines.
    pub(crate) fn doc(&mut self, text: &str) {
        for line in text.lines() {
            self.doc_line(format_args!(" {line}"));
        }
    }

    /// One doc line (its text as rustdoc sees it, leading space included), as a `#[doc]`
    /// attribute: a `///` comment that a macro's tokens carry shows in rust-analyzer's hover
    /// with a stray leading `/`, and cannot hold a carriage return.
    pub(crate) fn doc_line(&mut self, args: fmt::Arguments<'_>) {
        self.indent();
        self.text.push_str("#[doc = \"");
        // Written in place, and escaped afterwards only when it has to be (most lines are
        // plain): a large graph has a doc line per item.
        let start = self.text.len();
        let _ = self.text.write_fmt(args);
        if !is_plain(&self.text[start..]) {
            let line = self.text.split_off(start);
            self.text.truncate(start - 1);
            let _ = write!(self.text, "{}", Lit(&line));
            self.text.push(']');
        } else {
            self.text.push_str("\"]");
        }
        self.text.push('\n');
        self.lines += 1;
    }

    /// Where the code stands now, to [`rewind`](Self::rewind) to.
    pub(crate) fn mark(&self) -> Mark {
        Mark {
            len: self.text.len(),
            depth: self.depth,
            lines: self.lines,
        }
    }

    /// How many lines were written since `mark`.
    pub(crate) fn wrote_since(&self, mark: Mark) -> usize {
        self.lines - mark.lines
    }

    /// Takes back everything written since `mark`.
    pub(crate) fn rewind(&mut self, mark: Mark) {
        self.text.truncate(mark.len);
        self.depth = mark.depth;
        self.lines = mark.lines;
    }

    /// The code kept whole (what is left, once streamed).
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    pub(crate) fn into_text(self) -> String {
        self.text
    }

    /// Hands on the rest of a streamed code.
    pub(crate) fn finish(mut self) {
        if let Some(out) = self.out.as_mut() {
            out(&self.text);
        }
    }
}

/// Whether `text` stands in a string literal as it is: printable ASCII, no quote or backslash.
fn is_plain(text: &str) -> bool {
    // Printable ASCII is 0x20..=0x7e: one subtraction and one comparison a byte.
    text.bytes()
        .all(|b| b.wrapping_sub(b' ') < 0x5f && b != b'"' && b != b'\\')
}

/// A string as a Rust string literal.
pub(crate) struct Lit<'a>(pub(crate) &'a str);

impl fmt::Display for Lit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Most strings here are node names: nothing to escape, and escaping goes character
        // by character.
        if is_plain(self.0) {
            f.write_char('"')?;
            f.write_str(self.0)?;
            f.write_char('"')
        } else {
            write!(f, "{:?}", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_by_the_brackets_lines_leave_open() {
        let mut code = Lines::with_capacity(0);
        put!(code, "pub mod m {{");
        code.doc("A doc {\nover two lines");
        put!(code, "fn f() {{");
        put!(code, "match x {{");
        put!(code, "A => g(");
        put!(code, "1,");
        put!(code, "),");
        put!(code, "}}");
        put!(code, "}} else {{");
        put!(code, "}}");
        put!(code, "// a comment {{");
        put!(code, "}}");
        assert_eq!(
            code.into_text(),
            "pub mod m {\n    #[doc = \" A doc {\"]\n    #[doc = \" over two lines\"]\n    fn f() {\n        match x {\n            A => g(\n                1,\n            ),\n        }\n    } else {\n    }\n    // a comment {\n}\n"
        );
    }

    #[test]
    fn streamed_code_is_handed_on_in_chunks_with_its_notes() {
        let mut written = String::new();
        let mut chunks = 0;
        let mut out = |text: &str| {
            written.push_str(text);
            chunks += 1;
        };
        let mut code = Lines::streamed(&mut out, vec![" // here".to_owned()]);
        put!(code, "pub type State = S;");
        code.state_alias_written();
        for i in 0..10_000 {
            put!(code, "const C{i}: u32 = {i};");
            code.boundary();
        }
        code.finish();
        assert!(written.starts_with("pub type State = S; // here\nconst C0: u32 = 0;\n"));
        assert!(written.ends_with("const C9999: u32 = 9999;\n"));
        assert!(chunks > 2, "{chunks} chunks");
    }

    #[test]
    fn the_deepest_stand_in_is_counted_in_groups() {
        let mut code = Lines::for_tokens(0);
        put!(code, "pub mod m {{");
        put!(code, "pub type State = __TRELLIS_PATH_0;");
        assert_eq!(code.stand_in_depth(), 1);
        put!(code, "pub trait T {{");
        put!(code, "fn f(&self, input: __TRELLIS_PATH_1) -> X;");
        put!(code, "}}");
        put!(code, "}}");
        assert_eq!(code.stand_in_depth(), 3);
    }

    #[test]
    fn a_carriage_return_in_a_doc_becomes_an_attribute() {
        let mut code = Lines::with_capacity(0);
        code.doc("a\rb");
        assert_eq!(code.into_text(), "#[doc = \" a\\rb\"]\n");
    }

    #[test]
    fn literals_escape_what_needs_it() {
        assert_eq!(Lit("n0").to_string(), "\"n0\"");
        assert_eq!(
            Lit("a \"b\" \\ c\n").to_string(),
            "\"a \\\"b\\\" \\\\ c\\n\""
        );
        assert_eq!(Lit("é").to_string(), "\"é\"");
    }
}
