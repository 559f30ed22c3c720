//! The build.rs API: `.graph` files → `OUT_DIR/<stem>.rs`, with rebuild tracking.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use trellis_dsl::LineIndex;

use crate::text::{Code, Paths};
use crate::{CratePathError, Options, report, tokens};

/// Why [`Builder::compile`] could not write the code (a malformed graph is not such a reason: it
/// becomes compile errors in the output, reported where the code is included).
#[derive(Debug, thiserror::Error)]
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
    /// A malformed graph does not fail this call: the output holds one `compile_error!` per
    /// error, whose message names `FILE:LINE:COL`, the code and the message with the source
    /// line (the text sits in `<stem>.error<N>.txt` beside the output, so rustc shows it once),
    /// next to a skeleton of the module, so that `cargo check` reports the graph's errors where
    /// the code is included — in the terminal and in `--message-format=json`, which editors
    /// read — without a flood of follow-on errors. Warnings become `deprecated` warnings of the
    /// same build, with the same text. The line naming the state type carries a comment with the
    /// `.graph` place, for rustc's note when the type is unknown.
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
            let generated = self.generate(&path.display().to_string(), &source, &out_dir, &stem)?;
            write_if_changed(&out_dir.join(format!("{stem}.rs")), &generated.pieces())?;
        }
        Ok(())
    }

    /// The text of `<stem>.rs`; writes the error reports it includes.
    fn generate(
        &self,
        shown: &str,
        source: &str,
        out_dir: &Path,
        stem: &str,
    ) -> Result<Generated, Error> {
        let checked = crate::check(source, &self.options, &mut Paths::Text);
        let mut errors = String::new();
        for (number, error) in checked.errors.iter().enumerate() {
            let report_path = out_dir.join(format!("{stem}.error{number}.txt"));
            write_if_changed(&report_path, &[&report::plain(shown, source, error)])?;
            let included = report_path.display().to_string();
            errors.push_str(&format!(
                "::core::compile_error!(::core::include_str!({included:?}));\n"
            ));
        }
        let mut warnings = Code::with_capacity(0);
        for warning in &checked.warnings {
            let text = report::plain(shown, source, warning);
            tokens::warning_text(&mut warnings, warning.code, &text);
        }
        // A note at the end of each `pub type State = …;` line, pointing back at the source.
        // Indexed only as far as the last state path: the rest of a large file has no note.
        let indexed = checked.state_paths.iter().map(|s| s.end).max().unwrap_or(0);
        let index = LineIndex::new(source.get(..indexed).unwrap_or(source));
        let notes = checked
            .state_paths
            .iter()
            .map(|span| {
                let at = index.line_column(span.start);
                let path = &source[span.start..span.end];
                format!(" // `state {path};` at {shown}:{}:{}", at.line, at.column)
            })
            .collect();
        Ok(Generated {
            header: format!("// Generated by trellis-codegen from {shown}; do not edit.\n{errors}"),
            code: checked.code,
            notes,
            warnings: warnings.into_text(),
        })
    }
}

/// A generated file, in the pieces it is written from: a large graph's code is megabytes, and
/// is neither copied into one string nor read back whole to be compared.
struct Generated {
    /// The first line, then the errors' `compile_error!`s.
    header: String,
    code: Code,
    /// One per state alias of `code`, written at the end of its line.
    notes: Vec<String>,
    warnings: String,
}

impl Generated {
    fn pieces(&self) -> Vec<&str> {
        let text = self.code.text();
        let mut pieces = vec![self.header.as_str()];
        let mut copied = 0;
        for (&end, note) in self.code.state_aliases().iter().zip(&self.notes) {
            pieces.extend([&text[copied..end], note.as_str()]);
            copied = end;
        }
        pieces.extend([&text[copied..], self.warnings.as_str()]);
        pieces
    }
}

/// Writes `pieces` to `path`, unless the file already holds exactly that (cargo would rebuild).
fn write_if_changed(path: &Path, pieces: &[&str]) -> Result<(), Error> {
    let len: usize = pieces.iter().map(|piece| piece.len()).sum();
    let same_size = std::fs::metadata(path).is_ok_and(|m| m.len() == len as u64);
    if same_size && holds(path, pieces).unwrap_or(false) {
        return Ok(());
    }
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(path)?;
        for piece in pieces {
            file.write_all(piece.as_bytes())?;
        }
        file.flush()
    };
    write().map_err(|source| Error::Write {
        path: path.to_owned(),
        source,
    })
}

/// Whether the file at `path` (already known to be as long) begins with `pieces`.
fn holds(path: &Path, pieces: &[&str]) -> std::io::Result<bool> {
    let mut file = std::fs::File::open(path)?;
    let mut buffer = vec![0; 64 * 1024];
    for piece in pieces {
        for chunk in piece.as_bytes().chunks(buffer.len()) {
            let read = &mut buffer[..chunk.len()];
            file.read_exact(read)?;
            if read != chunk {
                return Ok(false);
            }
        }
    }
    Ok(true)
}
