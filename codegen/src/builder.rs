//! The build.rs API: `.graph` files → `OUT_DIR/<stem>.rs`, with rebuild tracking.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::{CratePathError, Options, expand_source, report};

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
/// `trellis::include_graphs!("<stem>");`. A file whose content did not change is not rewritten
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

    /// Generates `<out_dir>/<stem>.rs` for every path.
    ///
    /// A malformed graph does not fail this call: the output holds one `compile_error!` per
    /// error, each naming `FILE:LINE:COL`, the code and the message with the source line, next
    /// to a skeleton of the module, so that `cargo check` reports the graph's errors where the
    /// code is included — in the terminal and in `--message-format=json`, which editors read —
    /// without a flood of follow-on errors. The errors are also printed as `cargo::warning=`.
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
            let shown = path.display().to_string();
            let expansion = expand_source(&source, &self.options);
            let code = expansion.tokens;
            for diagnostic in expansion.errors.iter().chain(&expansion.warnings) {
                let text = report::plain(&shown, &source, diagnostic);
                // One cargo line per line of the report: cargo reads a line at a time.
                for line in text.lines() {
                    println!("cargo::warning={line}");
                }
            }
            // Each error on lines of its own, as a raw string: rustc's snippet of the generated
            // file then reads like the report instead of one long line of escaped tokens.
            let mut errors = String::new();
            for error in &expansion.errors {
                let text = report::plain(&shown, &source, error);
                let hashes = "#".repeat(longest_hash_run(&text) + 1);
                errors.push_str(&format!(
                    "::core::compile_error!(r{hashes}\"{text}\"{hashes});\n"
                ));
            }
            let stem = path
                .file_stem()
                .map_or_else(|| "graph".into(), |s| s.to_string_lossy().into_owned());
            let out = out_dir.join(format!("{stem}.rs"));
            let text = format!(
                "// Generated by trellis-codegen from {shown}; do not edit.\n{errors}{code}\n"
            );
            write_if_changed(&out, &text)?;
        }
        Ok(())
    }
}

/// The longest run of `#` in `text`, so a raw string around it can use one more.
fn longest_hash_run(text: &str) -> usize {
    text.split(|c| c != '#').map(str::len).max().unwrap_or(0)
}

fn write_if_changed(path: &Path, text: &str) -> Result<(), Error> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(path)?;
        file.write_all(text.as_bytes())?;
        file.flush()
    };
    write().map_err(|source| Error::Write {
        path: path.to_owned(),
        source,
    })
}
