//! The build.rs API: `.graph` files → `OUT_DIR/<stem>.rs`, with rebuild tracking.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use trellis_dsl::LineIndex;

use crate::paths::Paths;
use crate::text::Lines;
use crate::{CratePathError, Options, report};

/// Why [`Builder::compile`] could not write the code (a malformed graph is not such a reason: it
/// becomes compile errors in the output, reported where the code is included).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Neither [`Builder::out_dir`] nor the `OUT_DIR` variable cargo sets for build scripts.
    #[error("no output directory: call Builder::out_dir, or run from a build script (OUT_DIR)")]
    MissingOutDir,
    /// A `.graph` file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The generated file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The crate path given to [`Builder::crate_path`] is not a path.
    #[error(transparent)]
    CratePath(#[from] CratePathError),
}

/// Generates code for `.graph` files, as prost-build's `Config` does for `.proto` files.
///
/// ```no_run
/// // build.rs
/// fn main() -> Result<(), trellis_codegen::Error> {
///     trellis_codegen::Builder::new()
///         .crate_path("::trellis")?
///         .compile(&["graphs/support.graph", "graphs/research.graph"])
/// }
/// ```
///
/// Each `graphs/<stem>.graph` becomes `OUT_DIR/<stem>.rs`, included with
/// `trellis::include_generated!("<stem>");`. A file whose content did not change is not rewritten
/// (so cargo does not rebuild what includes it).
#[derive(Debug, Clone)]
pub struct Builder {
    out_dir: Option<PathBuf>,
    options: Options,
    rerun_if_changed: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// `Builder::new().compile(paths)`.
///
/// # Errors
/// As [`Builder::compile`].
pub fn compile<P: AsRef<Path>>(paths: &[P]) -> Result<(), Error> {
    Builder::new().compile(paths)
}

impl Builder {
    /// Output in `OUT_DIR`, `::trellis` as the runtime crate, `cargo::rerun-if-changed` printed.
    pub fn new() -> Self {
        Builder {
            out_dir: None,
            options: Options::default(),
            rerun_if_changed: true,
        }
    }

    /// Writes the generated files to `dir` instead of `OUT_DIR`.
    #[must_use]
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Names the runtime crate in the generated code (default `::trellis`).
    ///
    /// # Errors
    /// [`Error::CratePath`] when `path` is not a Rust path.
    pub fn crate_path(mut self, path: &str) -> Result<Self, Error> {
        self.options = self.options.with_crate_path(path)?;
        Ok(self)
    }

    /// Whether to print `cargo::rerun-if-changed=<file>` for every input (default on). Printing
    /// any such line turns off cargo's default of re-running the build script when any file of
    /// the package changes; turn it off if the build script must watch other files.
    #[must_use]
    pub fn emit_rerun_if_changed(mut self, on: bool) -> Self {
        self.rerun_if_changed = on;
        self
    }

    /// Generates `<out_dir>/<stem>.rs` for every path, laid out a statement per line so that
    /// rustc's notes quote short lines.
    ///
    /// A malformed graph does not fail this call: the output is a skeleton of the module (no
    /// flood of follow-on errors), and its errors and warnings go to `<stem>.reports` beside
    /// it, which `include_generated!("<stem>")` reports at its own string literal — one
    /// `compile_error!` per error naming `FILE:LINE:COL`, the code and the message with the
    /// source line and help; warnings as `deprecated` warnings of the same build — so that
    /// `cargo check` shows them in the user's source file, in the terminal and in
    /// `--message-format=json`, which editors read. Each error is also printed once as a
    /// `cargo::warning=FILE:LINE:COL: CODE message` line. The line naming the state type carries
    /// a comment with the `.graph` place, for rustc's note when the type is unknown.
    ///
    /// # Errors
    /// [`Error`] when there is no output directory or a file cannot be read or written.
    pub fn compile<P: AsRef<Path>>(&self, paths: &[P]) -> Result<(), Error> {
        let out_dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(Error::MissingOutDir)?,
        };
        for path in paths {
            let path = path.as_ref();
            if self.rerun_if_changed {
                println!("cargo::rerun-if-changed={}", path.display());
            }
            let source = std::fs::read_to_string(path).map_err(|source| Error::Read {
                path: path.to_owned(),
                source,
            })?;
            let stem = path
                .file_stem()
                .map_or_else(|| "graph".into(), |s| s.to_string_lossy().into_owned());
            self.generate(&path.display().to_string(), &source, &out_dir, &stem)?;
        }
        Ok(())
    }

    /// Writes `<stem>.rs`, and beside it `<stem>.reports`: the graph's errors and warnings,
    /// which `include_generated!` reports at its call site. Each error is printed once as a
    /// `cargo:warning` line too, `FILE:LINE:COL: CODE message`, which the terminal shows first.
    fn generate(&self, shown: &str, source: &str, out_dir: &Path, stem: &str) -> Result<(), Error> {
        let checked = crate::check(source);
        let index = LineIndex::new(source);
        let mut reports = Vec::new();
        for error in &checked.errors {
            let at = index.line_column(error.span.start);
            println!(
                "cargo::warning={shown}:{}:{}: {} {}",
                at.line,
                at.column,
                error.code.as_str(),
                error.message
            );
            reports.push(trellis_graph::reports::Report::error(
                error.code.as_str(),
                report::plain(shown, source, error),
            ));
        }
        for warning in &checked.warnings {
            reports.push(trellis_graph::reports::Report::warning(
                warning.code.as_str(),
                report::plain(shown, source, warning),
            ));
        }
        let mut written = Output::open(&out_dir.join(trellis_graph::reports::file_name(stem)));
        written.write(&trellis_graph::reports::write(&reports));
        written.finish()?;

        // A note at the end of each `pub type State = …;` line, pointing back at the source.
        let notes = checked
            .state_paths
            .iter()
            .map(|span| {
                let at = index.line_column(span.start);
                let path = &source[span.start..span.end];
                format!(" // `state {path};` at {shown}:{}:{}", at.line, at.column)
            })
            .collect();

        let mut output = Output::open(&out_dir.join(format!("{stem}.rs")));
        output.write(&format!(
            "// Generated by trellis-codegen from {shown}; do not edit.\n"
        ));
        let locate = |span: trellis_dsl::Span| {
            let at = index.line_column(span.start);
            format!("{shown}:{}:{}", at.line, at.column)
        };
        let mut write = |text: &str| output.write(text);
        let mut code = Lines::streamed(&mut write, notes).locating(&locate);
        crate::write(&checked, &self.options, &mut Paths::Text, &mut code);
        code.finish();
        output.finish()
    }
}

/// A file written only where it differs from what it holds: compared a chunk at a time as the
/// text comes, and rewritten from the first chunk that differs (an unchanged output keeps its
/// time, or cargo would rebuild the crate).
struct Output {
    path: PathBuf,
    state: Writing,
    /// Bytes of the new text so far.
    at: u64,
    buffer: Vec<u8>,
}

enum Writing {
    /// The old file, read as far as the new text came, the same so far.
    Same(File),
    /// The file from the first difference on.
    Rewriting(File),
    /// The first error; nothing more is written.
    Failed(std::io::Error),
}

impl Output {
    fn open(path: &Path) -> Self {
        let state = match File::open(path) {
            Ok(old) => Writing::Same(old),
            Err(_) => File::create(path).map_or_else(Writing::Failed, Writing::Rewriting),
        };
        Output {
            path: path.to_owned(),
            state,
            at: 0,
            buffer: Vec::new(),
        }
    }

    fn write(&mut self, text: &str) {
        if let Err(error) = self.try_write(text.as_bytes()) {
            self.state = Writing::Failed(error);
        }
        self.at += text.len() as u64;
    }

    fn try_write(&mut self, text: &[u8]) -> std::io::Result<()> {
        if let Writing::Same(old) = &mut self.state {
            self.buffer.resize(text.len(), 0);
            // A shorter old file is a difference too.
            if old.read_exact(&mut self.buffer).is_ok() && self.buffer == text {
                return Ok(());
            }
            let mut file = OpenOptions::new().write(true).open(&self.path)?;
            file.seek(SeekFrom::Start(self.at))?;
            self.state = Writing::Rewriting(file);
        }
        match &mut self.state {
            Writing::Rewriting(file) => file.write_all(text),
            _ => Ok(()),
        }
    }

    fn finish(self) -> Result<(), Error> {
        let result = match self.state {
            // The same text, unless the old file goes on.
            Writing::Same(mut old) => match old.read(&mut [0]) {
                Ok(0) => Ok(()),
                _ => OpenOptions::new()
                    .write(true)
                    .open(&self.path)
                    .and_then(|file| file.set_len(self.at)),
            },
            Writing::Rewriting(mut file) => file.set_len(self.at).and_then(|()| file.flush()),
            Writing::Failed(error) => Err(error),
        };
        result.map_err(|source| Error::Write {
            path: self.path,
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `chunks` through an [`Output`] over a file holding `old` (none when `None`).
    fn rewrite(name: &str, old: Option<&str>, chunks: &[&str]) -> String {
        let path =
            std::env::temp_dir().join(format!("trellis-output-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        if let Some(old) = old {
            std::fs::write(&path, old).expect("old file");
        }
        let mut output = Output::open(&path);
        for chunk in chunks {
            output.write(chunk);
        }
        output.finish().expect("written");
        let text = std::fs::read_to_string(&path).expect("readable");
        let _ = std::fs::remove_file(&path);
        text
    }

    #[test]
    fn the_file_ends_up_holding_exactly_the_new_text() {
        let chunks = ["first ", "second ", "third"];
        let new = chunks.concat();
        assert_eq!(rewrite("none", None, &chunks), new);
        assert_eq!(rewrite("same", Some(&new), &chunks), new);
        assert_eq!(
            rewrite("longer", Some(&format!("{new} and more")), &chunks),
            new
        );
        assert_eq!(rewrite("shorter", Some("first sec"), &chunks), new);
        assert_eq!(rewrite("late", Some("first second THIRD"), &chunks), new);
        assert_eq!(rewrite("early", Some("FIRST second third"), &chunks), new);
        assert_eq!(
            rewrite(
                "early-longer",
                Some("FIRST second third, and more"),
                &chunks
            ),
            new
        );
    }

    #[test]
    fn an_unchanged_file_is_not_written() {
        let path = std::env::temp_dir().join(format!("trellis-output-{}-kept", std::process::id()));
        std::fs::write(&path, "kept").expect("old file");
        let before = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .expect("time");
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut output = Output::open(&path);
        output.write("ke");
        output.write("pt");
        output.finish().expect("compared");
        let after = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .expect("time");
        assert_eq!(before, after);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_file_that_cannot_be_written_is_an_error_naming_it() {
        let path = std::env::temp_dir()
            .join(format!("trellis-output-{}-missing", std::process::id()))
            .join("dir")
            .join("out.rs");
        let mut output = Output::open(&path);
        output.write("text");
        let error = output.finish().expect_err("no such directory");
        assert!(matches!(error, Error::Write { path: ref p, .. } if *p == path));
    }
}
