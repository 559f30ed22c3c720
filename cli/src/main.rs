//! `trellis`: check, format, export, expand and compare `.graph` files (the CLI contract of LANGUAGE.md
//! §6), serve them to editors (`trellis lsp`), and inspect recorded runs.
//!
//! Exit codes: 0 when all is well, 1 when a file has errors (or warnings under
//! `--deny-warnings`, or would be reformatted under `fmt --check`, or differ under `diff`), 2 on
//! usage or I/O errors.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod diff;
mod runs;
mod sources;

use clap::{Parser, Subcommand, ValueEnum};
use trellis_dsl::render::{self, HumanStyle};
use trellis_dsl::{Checked, Diagnostic};
use trellis_graph::export;

#[derive(Parser)]
#[command(
    name = "trellis",
    version,
    about = "Check, format and export Trellis `.graph` files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Report every error and warning in the given `.graph` files, in the `graph! { … }` of
    /// the given Rust files, and in those files in the given folders.
    Check {
        /// How to print diagnostics.
        #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
        format: CheckFormat,
        /// Fail (exit 1) on warnings too.
        #[arg(long)]
        deny_warnings: bool,
        /// The `.graph` files, Rust files and folders.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Rewrite files in the canonical layout, keeping every comment.
    Fmt {
        /// Change nothing; exit 1 if a file is not formatted.
        #[arg(long)]
        check: bool,
        /// The `.graph` files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print a graph's blueprint as JSON, Graphviz DOT or Mermaid.
    Export {
        /// The output format.
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// The graph to export, when the file holds more than one.
        #[arg(long)]
        graph: Option<String>,
        /// The `.graph` file.
        file: PathBuf,
    },
    /// Inspect recorded runs: list them, show one, list its checkpoints.
    Runs {
        /// Where runs are recorded: `sqlite:PATH` or `postgres://user@host:port/database`.
        #[arg(long, default_value = "sqlite:trellis.db", global = true)]
        db: String,
        /// How to print.
        #[arg(long, value_enum, default_value_t = runs::RunsFormat::Table, global = true)]
        format: runs::RunsFormat,
        #[command(subcommand)]
        command: runs::RunsCommand,
    },
    /// Print what changed between two versions of a `.graph` file: graphs, nodes, their
    /// attributes, edges. Exits 0 when nothing changed, 1 when something did.
    Diff {
        /// How to print.
        #[arg(long, value_enum, default_value_t = diff::DiffFormat::Text)]
        format: diff::DiffFormat,
        /// Only this graph, when the files hold more than one.
        #[arg(long)]
        graph: Option<String>,
        /// A node renamed, `OLD=NEW` (repeat for several); without it, a renamed node shows as
        /// one removed and one added.
        #[arg(long = "rename", value_name = "OLD=NEW", value_parser = diff::parse_rename)]
        renames: Vec<(String, String)>,
        /// The older `.graph` file.
        old: PathBuf,
        /// The newer `.graph` file.
        new: PathBuf,
    },
    /// Serve the `.graph` language to an editor (Language Server Protocol over stdio).
    Lsp,
    /// Print the Rust code generated for a file's graphs, formatted.
    Expand {
        /// Only this graph, when the file holds more than one.
        #[arg(long)]
        graph: Option<String>,
        /// The `.graph` file.
        file: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum CheckFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    Json,
    Dot,
    Mermaid,
}

/// A failure that ends the command with exit code 2.
#[derive(Debug, thiserror::Error)]
enum UsageError {
    #[error("cannot read `{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write `{path}`: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Graph(String),
    #[error("cannot export: {0}")]
    Export(#[from] export::ExportError),
    #[error("the generated code does not parse as Rust (a bug in trellis-codegen): {0}")]
    Generated(syn::Error),
    #[error("cannot write to standard output: {0}")]
    Stdout(std::io::Error),
    #[error(transparent)]
    Runs(runs::RunsError),
    #[error(transparent)]
    Lsp(trellis_lsp::LspError),
}

/// How a command ended when it did not fail to run.
enum Outcome {
    Clean,
    Problems,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check {
            format,
            deny_warnings,
            files,
        } => check(&files, format, deny_warnings),
        Command::Fmt { check, files } => fmt(&files, check),
        Command::Export {
            format,
            graph,
            file,
        } => export(&file, format, graph.as_deref()),
        Command::Expand { graph, file } => expand(&file, graph.as_deref()),
        Command::Diff {
            format,
            graph,
            renames,
            old,
            new,
        } => diff::diff(&old, &new, graph.as_deref(), &renames, format),
        Command::Lsp => trellis_lsp::serve_stdio()
            .map(|()| Outcome::Clean)
            .map_err(UsageError::Lsp),
        Command::Runs {
            db,
            format,
            command,
        } => runs::run(command, &db, format)
            .map(|()| Outcome::Clean)
            .or_else(|error| match error {
                runs::RunsError::NoRun(_)
                | runs::RunsError::Run(trellis::RunError::Unresumable { .. }) => {
                    eprintln!("error: {error}");
                    Ok(Outcome::Problems)
                }
                other => Err(UsageError::Runs(other)),
            }),
    };
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Problems) => ExitCode::from(1),
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

/// A source file as read: its text (lossy if it was not UTF-8) and its decoding error, if any.
struct Source {
    name: String,
    text: String,
    decode_error: Option<Diagnostic>,
}

fn read(path: &Path) -> Result<Source, UsageError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| UsageError::Read {
        path: name.clone(),
        source,
    })?;
    Ok(match trellis_dsl::decode(&bytes) {
        Ok(text) => Source {
            name,
            text: text.to_owned(),
            decode_error: None,
        },
        Err(error) => Source {
            name,
            text: String::from_utf8_lossy(&bytes).into_owned(),
            decode_error: Some(error),
        },
    })
}

/// Checks a source; an undecodable file yields just its decoding error.
fn check_source(source: &Source) -> Checked {
    match &source.decode_error {
        Some(error) => Checked {
            module: trellis_dsl::Module::default(),
            diagnostics: vec![error.clone()],
        },
        None => trellis_dsl::check(&source.text),
    }
}

fn human_style() -> HumanStyle {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    HumanStyle { color, width: 100 }
}

fn print_human(source: &Source, diagnostics: &[Diagnostic]) {
    let style = human_style();
    let mut stderr = std::io::stderr().lock();
    let index = trellis_dsl::LineIndex::new(&source.text);
    for diagnostic in diagnostics {
        let _ = writeln!(
            stderr,
            "{}",
            render::human(diagnostic, &source.name, &index, style)
        );
    }
}

fn check(
    paths: &[PathBuf],
    format: CheckFormat,
    deny_warnings: bool,
) -> Result<Outcome, UsageError> {
    let files = sources::files(paths)
        .map_err(|error| UsageError::Graph(format!("cannot read a folder: {error}")))?;
    let (mut errors, mut warnings, mut checked) = (0, 0, 0);
    let mut stdout = std::io::stdout().lock();
    for (path, given) in files {
        let Some(kind) = sources::Kind::of(&path) else {
            return Err(UsageError::Graph(format!(
                "`{}` is neither a `.graph` file nor a Rust file: `trellis check` reads those (and those in a folder)",
                path.display()
            )));
        };
        let source = read(&path)?;
        let diagnostics = match (kind, &source.decode_error) {
            (sources::Kind::Graph, None) => with_modules_beside(&path, check_source(&source)),
            (sources::Kind::Graph, _) | (_, Some(_)) => check_source(&source).diagnostics,
            (sources::Kind::Rust, None) => match rust_diagnostics(&source, given)? {
                Some(diagnostics) => diagnostics,
                None => continue,
            },
        };
        checked += 1;
        errors += diagnostics.iter().filter(|d| d.is_error()).count();
        warnings += diagnostics.iter().filter(|d| !d.is_error()).count();
        match format {
            CheckFormat::Human => print_human(&source, &diagnostics),
            CheckFormat::Json => {
                let index = trellis_dsl::LineIndex::new(&source.text);
                for diagnostic in &diagnostics {
                    writeln!(
                        stdout,
                        "{}",
                        render::json_line(diagnostic, &source.name, &index)
                    )
                    .map_err(UsageError::Stdout)?;
                }
            }
        }
    }
    if matches!(format, CheckFormat::Human) {
        eprintln!("{}", summary(checked, errors, warnings));
    }
    Ok(if errors > 0 || (deny_warnings && warnings > 0) {
        Outcome::Problems
    } else {
        Outcome::Clean
    })
}

/// A `.graph` file's diagnostics, with E0211 for a path to another module's graph
/// (`graph research::Research;`) that the module's file beside it (`research.graph`) does not
/// declare — as the language server checks it. A module with no file beside is left alone (its
/// graph may be built in Rust).
fn with_modules_beside(path: &Path, checked: Checked) -> Vec<Diagnostic> {
    let mut diagnostics = checked.diagnostics;
    let folder = path.parent().unwrap_or(Path::new("."));
    for module_path in trellis_dsl::modules::module_paths(&checked.module) {
        let file_name = format!("{}.graph", module_path.module);
        let Ok(text) = std::fs::read_to_string(folder.join(&file_name)) else {
            continue;
        };
        let other = trellis_dsl::check(&text);
        diagnostics.extend(trellis_dsl::modules::undeclared(
            &module_path,
            &other.module,
            &file_name,
        ));
    }
    diagnostics.sort_by_key(|d| d.span);
    diagnostics
}

/// The diagnostics of every `graph! { … }` in a Rust file, placed in the file; `None` for a
/// file with none that was found in a folder (not checked, not counted). A file given by name
/// with no `graph!` says so; one that is not Rust is refused when given, passed over (and said
/// so) in a folder.
fn rust_diagnostics(source: &Source, given: bool) -> Result<Option<Vec<Diagnostic>>, UsageError> {
    let bodies = match sources::graph_bodies(&source.text) {
        Ok(bodies) => bodies,
        Err(error) => {
            let at = error.span().start();
            let why = format!(
                "`{}` does not parse as Rust ({}:{}: {error})",
                source.name,
                at.line,
                at.column + 1
            );
            if given {
                return Err(UsageError::Graph(why));
            }
            eprintln!("note: passed over {why}");
            return Ok(None);
        }
    };
    if bodies.is_empty() {
        if !given {
            return Ok(None);
        }
        eprintln!("{}: no `graph!` in this file", source.name);
    }
    let mut diagnostics = Vec::new();
    for body in bodies {
        let start = body.start;
        diagnostics.extend(
            trellis_dsl::check(&source.text[body])
                .diagnostics
                .into_iter()
                .map(|diagnostic| diagnostic.shifted(start)),
        );
    }
    Ok(Some(diagnostics))
}

fn summary(files: usize, errors: usize, warnings: usize) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "checked {}: {}, {}",
        plural(files, "file"),
        plural(errors, "error"),
        plural(warnings, "warning")
    )
}

fn fmt(files: &[PathBuf], check_only: bool) -> Result<Outcome, UsageError> {
    let mut outcome = Outcome::Clean;
    for path in files {
        let source = read(path)?;
        if let Some(error) = &source.decode_error {
            print_human(&source, std::slice::from_ref(error));
            outcome = Outcome::Problems;
            continue;
        }
        let formatted = match trellis_dsl::format(&source.text) {
            Ok(formatted) => formatted,
            Err(trellis_dsl::FormatError::Syntax(errors)) => {
                print_human(&source, &errors);
                eprintln!("{}: not formatted: it has syntax errors", source.name);
                outcome = Outcome::Problems;
                continue;
            }
            Err(error) => {
                eprintln!("{}: not formatted: {error}", source.name);
                outcome = Outcome::Problems;
                continue;
            }
        };
        if formatted == source.text {
            continue;
        }
        if check_only {
            eprintln!("{}: would be reformatted", source.name);
            outcome = Outcome::Problems;
        } else {
            std::fs::write(path, formatted).map_err(|source_error| UsageError::Write {
                path: source.name.clone(),
                source: source_error,
            })?;
        }
    }
    Ok(outcome)
}

/// Reads and checks a file for a command that needs it free of errors; `Err(Outcome)` when it
/// has errors (they are printed, with `not <verb>` after them).
fn checked_module(
    path: &Path,
    verb: &str,
) -> Result<Result<(Source, Checked), Outcome>, UsageError> {
    let source = read(path)?;
    let checked = check_source(&source);
    if checked.has_errors() {
        print_human(&source, &checked.diagnostics);
        eprintln!("{}: not {verb}: it has errors", source.name);
        return Ok(Err(Outcome::Problems));
    }
    Ok(Ok((source, checked)))
}

/// The error for a `--graph NAME` the file does not hold.
fn no_such_graph(source: &Source, name: &str, graphs: &[trellis_dsl::Blueprint]) -> UsageError {
    let names: Vec<String> = graphs.iter().map(|g| format!("`{}`", g.name)).collect();
    UsageError::Graph(format!(
        "`{}` has no graph `{name}`; it has {}",
        source.name,
        names.join(", ")
    ))
}

fn export(path: &Path, format: ExportFormat, graph: Option<&str>) -> Result<Outcome, UsageError> {
    let (source, checked) = match checked_module(path, "exported")? {
        Ok(checked) => checked,
        Err(outcome) => return Ok(outcome),
    };
    let graphs = &checked.module.graphs;
    let names = || {
        graphs
            .iter()
            .map(|g| format!("`{}`", g.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let blueprint = match (graph, graphs.as_slice()) {
        (Some(name), _) => checked
            .module
            .graph(name)
            .ok_or_else(|| no_such_graph(&source, name, graphs))?,
        (None, [only]) => only,
        (None, []) => {
            return Err(UsageError::Graph(format!("`{}` has no graph", source.name)));
        }
        (None, _) => {
            return Err(UsageError::Graph(format!(
                "`{}` has several graphs ({}); choose one with --graph",
                source.name,
                names()
            )));
        }
    };
    let text = match format {
        ExportFormat::Json => export::to_json(blueprint)?,
        ExportFormat::Dot => export::to_dot(blueprint),
        ExportFormat::Mermaid => export::to_mermaid(blueprint),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(UsageError::Stdout)?;
    Ok(Outcome::Clean)
}

fn expand(path: &Path, graph: Option<&str>) -> Result<Outcome, UsageError> {
    let (source, checked) = match checked_module(path, "expanded")? {
        Ok(checked) => checked,
        Err(outcome) => return Ok(outcome),
    };
    let mut module = checked.module;
    if let Some(name) = graph {
        if module.graph(name).is_none() {
            return Err(no_such_graph(&source, name, &module.graphs));
        }
        module.graphs.retain(|g| g.name == name);
    }
    let tokens = trellis_codegen::generate(&module, &trellis_codegen::Options::default());
    let file: syn::File = syn::parse2(tokens).map_err(UsageError::Generated)?;
    std::io::stdout()
        .lock()
        .write_all(prettyplease::unparse(&file).as_bytes())
        .map_err(UsageError::Stdout)?;
    Ok(Outcome::Clean)
}
