//! `trellis runs`: what happened in recorded runs — list, show one, its checkpoints — and
//! what a store keeps of them (prune, compact a thread).

use std::io::Write;

use clap::{Subcommand, ValueEnum};
use trellis::checkpoint::{Checkpoint, Name, SqliteCheckpointer, StoreUrl, Vacuumed};
use trellis::retention::{Per, PrunedRun, Pruner, Retention};
use trellis::run::Timestamp;
use trellis::versions::{self, Renames};
use trellis::{RunId, ThreadId, checkpoint::RunRecord};
use trellis_agent::transcript::SqliteTranscripts;

/// `trellis runs …`.
#[derive(Subcommand)]
pub(crate) enum RunsCommand {
    /// The runs, newest first; FROM names the run and checkpoint a branch was forked from
    /// (`RUN#CHECKPOINT`).
    List {
        /// How many runs to show.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// How many of the newest runs to skip.
        #[arg(long, default_value_t = 0)]
        offset: usize,
    },
    /// One run: status, times, steps, the run it branches from, pending questions, error and
    /// state.
    Show {
        /// The run's id.
        id: String,
    },
    /// One run's checkpoints, in order; NEXT lists the next step's nodes, then the branches
    /// sent to run in it (`summarize×3`).
    Checkpoints {
        /// The run's id.
        id: String,
    },
    /// Deletes ended runs (with their checkpoints and subgraph runs) past the newest of their
    /// graph or thread, or older than a duration, or — both given — those that are both.
    /// Paused and running runs, and each thread's newest run (its state), are never deleted.
    Prune {
        /// Keep the newest N runs of each graph (or thread, with `--per thread`).
        #[arg(long, value_name = "N", required_unless_present = "older_than")]
        keep_last: Option<usize>,
        /// What `--keep-last` counts in.
        #[arg(long, value_enum, default_value_t = PerArg::Graph)]
        per: PerArg,
        /// Delete ended runs last written longer ago than this (`30d`, `12h`, `90min`).
        #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
        older_than: Option<std::time::Duration>,
        /// Only the runs of this graph.
        #[arg(long)]
        graph: Option<String>,
        /// Only the runs of this thread.
        #[arg(long)]
        thread: Option<String>,
        /// Print what would be deleted, and delete nothing.
        #[arg(long)]
        dry_run: bool,
        /// Also delete the pruned runs' agent transcripts, kept in this SQLite file (often the
        /// runs' own).
        #[arg(long, value_name = "PATH")]
        transcripts: Option<std::path::PathBuf>,
        /// Then rewrite the SQLite file without the space the deleted runs left, so that it
        /// shrinks (needs the file to itself; not with `--dry-run`).
        #[arg(long, conflicts_with = "dry_run")]
        vacuum: bool,
    },
    /// Compacts a thread to its latest state: deletes its earlier runs and its newest run's
    /// checkpoints before its latest committed one. The thread, a pending question and what
    /// comes next are as they were; history before them is gone.
    Compact {
        /// The thread's id.
        thread: String,
        /// Print what would be deleted, and delete nothing.
        #[arg(long)]
        dry_run: bool,
        /// Also delete the earlier runs' agent transcripts, kept in this SQLite file.
        #[arg(long, value_name = "PATH")]
        transcripts: Option<std::path::PathBuf>,
        /// Then rewrite the SQLite file without the space freed, so that it shrinks (needs the
        /// file to itself; not with `--dry-run`).
        #[arg(long, conflicts_with = "dry_run")]
        vacuum: bool,
    },
    /// Moves a paused run onto a newer version of its graph whose nodes were renamed: writes
    /// its latest checkpoint again with the new names (`--rename OLD=NEW`). With `--graph`, first
    /// checks that the new version has every node the run needs, and refuses naming each one
    /// it lacks (exit 1). A run whose graph changed elsewhere needs no migration.
    Migrate {
        /// The run's id.
        id: String,
        /// A node renamed, its old name = its new one (repeatable).
        #[arg(long = "rename", value_name = "OLD=NEW", value_parser = crate::diff::parse_rename)]
        renames: Vec<(String, String)>,
        /// The `.graph` file of the new version; its graph named as the run's is checked.
        #[arg(long, value_name = "FILE")]
        graph: Option<std::path::PathBuf>,
        /// Check, print what would be written, and write nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// `--per`: what `--keep-last` counts in.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum PerArg {
    /// Each graph's runs.
    Graph,
    /// Each thread's runs (a run on no thread goes only by `--older-than`).
    Thread,
}

/// How `trellis runs` prints.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum RunsFormat {
    /// Aligned columns for people.
    Table,
    /// One JSON object per line (the record's and checkpoints' serde shape).
    Json,
}

/// Why `trellis runs` could not answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunsError {
    #[error("no database at `{0}`")]
    Missing(String),
    #[error(transparent)]
    Store(#[from] trellis::checkpoint::CheckpointError),
    #[error("no run {0} in the database")]
    NoRun(String),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("cannot write to standard output: {0}")]
    Stdout(std::io::Error),
    #[error("cannot print as JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("say which runs go: `--keep-last N`, `--older-than DURATION`, or both")]
    NoRule,
    #[error(transparent)]
    Thread(#[from] trellis::InvalidThreadId),
    #[error(transparent)]
    Retention(#[from] trellis::retention::RetentionError),
    #[error(transparent)]
    Run(#[from] trellis::RunError),
    #[error("{0}")]
    Graph(String),
    #[error("cannot open the transcripts: {0}")]
    Transcripts(#[from] trellis_agent::transcript::TranscriptError),
    #[error(
        "`--vacuum` rewrites an SQLite file; PostgreSQL reclaims the space of deleted rows itself (autovacuum)"
    )]
    VacuumNotSqlite,
}

/// `sqlite:PATH`, `postgres://…`, or a bare path (an SQLite file).
fn store_url(url: &str) -> Result<StoreUrl, RunsError> {
    match url.parse::<StoreUrl>() {
        Ok(parsed) => Ok(parsed),
        Err(_) if !url.contains(':') => Ok(StoreUrl::Sqlite(url.into())),
        Err(error) => Err(error.into()),
    }
}

pub(crate) fn run(command: RunsCommand, db: &str, format: RunsFormat) -> Result<(), RunsError> {
    let url = store_url(db)?;
    // Inspecting must not create a database where there was none.
    if let StoreUrl::Sqlite(path) = &url
        && !path.is_file()
    {
        return Err(RunsError::Missing(path.display().to_string()));
    }
    let vacuum_asked = matches!(
        command,
        RunsCommand::Prune { vacuum: true, .. } | RunsCommand::Compact { vacuum: true, .. }
    );
    // Refused before anything is deleted.
    let vacuum_path = match &url {
        StoreUrl::Sqlite(path) if vacuum_asked => Some(path.clone()),
        _ if vacuum_asked => return Err(RunsError::VacuumNotSqlite),
        _ => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(RunsError::Runtime)?;
    let mut out = std::io::stdout().lock();
    let text = runtime.block_on(async {
        let store = url.open_existing().await?;
        match command {
            RunsCommand::List { limit, offset } => {
                let runs = store.list_runs(limit, offset).await?;
                match format {
                    RunsFormat::Json => json_lines(&runs),
                    RunsFormat::Table => Ok(runs_table(&runs)),
                }
            }
            RunsCommand::Show { id } => {
                let run = store
                    .load_run(&RunId::from(id.as_str()))
                    .await?
                    .ok_or(RunsError::NoRun(id))?;
                match format {
                    RunsFormat::Json => Ok(format!("{}\n", serde_json::to_string(&run)?)),
                    RunsFormat::Table => Ok(run_details(&run)?),
                }
            }
            RunsCommand::Checkpoints { id } => {
                let run_id = RunId::from(id.as_str());
                if store.load_run(&run_id).await?.is_none() {
                    return Err(RunsError::NoRun(id));
                }
                let checkpoints = store.list_checkpoints(&run_id).await?;
                match format {
                    RunsFormat::Json => json_lines(&checkpoints),
                    RunsFormat::Table => Ok(checkpoints_table(&checkpoints)),
                }
            }
            RunsCommand::Prune {
                keep_last,
                per,
                older_than,
                graph,
                thread,
                dry_run,
                transcripts,
                vacuum: _,
            } => {
                let mut policy = match (keep_last, older_than) {
                    (Some(n), Some(age)) => Retention::keep_last(n).and_older_than(age),
                    (Some(n), None) => Retention::keep_last(n),
                    (None, Some(age)) => Retention::older_than(age),
                    (None, None) => return Err(RunsError::NoRule),
                };
                policy = policy.per(match per {
                    PerArg::Graph => Per::Graph,
                    PerArg::Thread => Per::Thread,
                });
                if let Some(graph) = graph {
                    policy = policy.graph(graph);
                }
                if let Some(thread) = thread {
                    policy = policy.thread(ThreadId::parse(&thread)?);
                }
                let pruner = pruner(store, transcripts.as_deref())?;
                let now = Timestamp::now();
                let runs = if dry_run {
                    pruner.plan(&policy, now).await?
                } else {
                    pruner.prune(&policy, now).await?
                };
                // The vacuum needs the file to itself: this connection goes first.
                drop(pruner);
                let vacuumed = vacuumed(vacuum_path.as_deref()).await?;
                pruned(&runs, None, vacuumed, dry_run, format)
            }
            RunsCommand::Migrate {
                id,
                renames,
                graph,
                dry_run,
            } => {
                let run_id = RunId::from(id.as_str());
                let record = store
                    .load_run(&run_id)
                    .await?
                    .ok_or_else(|| RunsError::NoRun(id.clone()))?;
                let blueprint = match &graph {
                    Some(path) => Some(new_version(path, &record.graph)?),
                    None => None,
                };
                let renames: Renames = renames.into_iter().collect();
                let migrated = versions::migrate_stored(
                    store.as_ref(),
                    &run_id,
                    &renames,
                    blueprint.as_ref(),
                    None,
                    &|_| Ok(()),
                    dry_run,
                )
                .await?;
                let verb = if dry_run { "would write" } else { "wrote" };
                Ok(format!(
                    "run {id}: {verb} checkpoint {} with the new names\n",
                    migrated.checkpoint
                ))
            }
            RunsCommand::Compact {
                thread,
                dry_run,
                transcripts,
                vacuum: _,
            } => {
                let thread = ThreadId::parse(&thread)?;
                let pruner = pruner(store, transcripts.as_deref())?;
                let compacted = if dry_run {
                    pruner.compaction_plan(&thread).await?
                } else {
                    pruner.compact_thread(&thread).await?
                };
                drop(pruner);
                let vacuumed = vacuumed(vacuum_path.as_deref()).await?;
                pruned(
                    &compacted.runs,
                    Some(compacted.checkpoints),
                    vacuumed,
                    dry_run,
                    format,
                )
            }
        }
    })?;
    out.write_all(text.as_bytes()).map_err(RunsError::Stdout)
}

/// The graph named `name` in the `.graph` file at `path`, checked.
fn new_version(
    path: &std::path::Path,
    name: &str,
) -> Result<trellis::blueprint::Blueprint, RunsError> {
    let source = crate::read(path).map_err(|error| RunsError::Graph(error.to_string()))?;
    let checked = crate::check_source(&source);
    if checked.has_errors() {
        return Err(RunsError::Graph(format!(
            "`{}` has errors: `trellis check {}` shows them",
            source.name, source.name
        )));
    }
    checked.module.graph(name).cloned().ok_or_else(|| {
        RunsError::Graph(format!(
            "`{}` has no graph `{name}`, the run's",
            source.name
        ))
    })
}

/// A pruner of `store`, and of the agent transcripts in the SQLite file at `transcripts`.
fn pruner(
    store: std::sync::Arc<dyn trellis::checkpoint::RunQueue>,
    transcripts: Option<&std::path::Path>,
) -> Result<Pruner, RunsError> {
    let store: std::sync::Arc<dyn trellis::checkpoint::Checkpointer> = store;
    let mut pruner = Pruner::new(store);
    if let Some(path) = transcripts {
        // Opening an absent file would create it: a typo must not prune the runs alone.
        if !path.is_file() {
            return Err(RunsError::Missing(path.display().to_string()));
        }
        pruner = pruner.with(std::sync::Arc::new(SqliteTranscripts::open(path)?));
    }
    Ok(pruner)
}

/// The SQLite file at `path` vacuumed, when `--vacuum` gave one.
async fn vacuumed(path: Option<&std::path::Path>) -> Result<Option<Vacuumed>, RunsError> {
    match path {
        Some(path) => Ok(Some(SqliteCheckpointer::open(path)?.vacuum().await?)),
        None => Ok(None),
    }
}

/// The runs a prune or a compaction deleted (or would), then a line saying how many, and one
/// for the vacuum; as JSON, one object a run, then one for the totals.
fn pruned(
    runs: &[PrunedRun],
    checkpoints: Option<u64>,
    vacuumed: Option<Vacuumed>,
    dry_run: bool,
    format: RunsFormat,
) -> Result<String, RunsError> {
    let verb = if dry_run { "would delete" } else { "deleted" };
    match format {
        RunsFormat::Json => {
            let mut text = String::new();
            for run in runs {
                let line = serde_json::json!({
                    "run_id": run.run_id,
                    "graph": run.graph,
                    "status": run.status,
                    "thread": run.thread,
                    "updated_at": run.updated_at,
                });
                text.push_str(&serde_json::to_string(&line)?);
                text.push('\n');
            }
            let mut total = serde_json::json!({ "dry_run": dry_run, "runs": runs.len() });
            if let Some(checkpoints) = checkpoints {
                total["checkpoints"] = checkpoints.into();
            }
            if let Some(vacuumed) = vacuumed {
                total["vacuumed"] = serde_json::json!({
                    "bytes_before": vacuumed.bytes_before,
                    "bytes_after": vacuumed.bytes_after,
                });
            }
            text.push_str(&serde_json::to_string(&total)?);
            text.push('\n');
            Ok(text)
        }
        RunsFormat::Table => {
            let rows: Vec<Vec<String>> = runs
                .iter()
                .map(|run| {
                    vec![
                        run.run_id.to_string(),
                        run.graph.clone(),
                        run.status.to_string(),
                        run.thread
                            .as_ref()
                            .map_or_else(|| "-".to_owned(), ToString::to_string),
                        run.updated_at.to_string(),
                    ]
                })
                .collect();
            let mut text = if rows.is_empty() {
                String::new()
            } else {
                table(&["RUN", "GRAPH", "STATUS", "THREAD", "UPDATED"], &rows)
            };
            let plural =
                |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
            text.push_str(&format!("{verb} {}", plural(runs.len() as u64, "run")));
            if let Some(checkpoints) = checkpoints {
                text.push_str(&format!(
                    " and {} of the newest run",
                    plural(checkpoints, "earlier checkpoint")
                ));
            }
            text.push('\n');
            if let Some(vacuumed) = vacuumed {
                text.push_str(&format!(
                    "vacuumed: the file went from {} to {} bytes\n",
                    vacuumed.bytes_before, vacuumed.bytes_after
                ));
            }
            Ok(text)
        }
    }
}

fn json_lines<T: serde::Serialize>(items: &[T]) -> Result<String, RunsError> {
    let mut text = String::new();
    for item in items {
        text.push_str(&serde_json::to_string(item)?);
        text.push('\n');
    }
    Ok(text)
}

/// Rows under a header, each column as wide as its widest cell.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut text = line(header.iter().map(|h| (*h).to_owned()).collect());
    for row in rows {
        text.push_str(&line(row.clone()));
    }
    text
}

fn runs_table(runs: &[RunRecord]) -> String {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|run| {
            vec![
                run.run_id.to_string(),
                run.graph.to_string(),
                run.status.to_string(),
                run.steps.to_string(),
                run.last_node.as_deref().unwrap_or("-").to_owned(),
                run.parent
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), ToString::to_string),
                run.created_at.to_string(),
                run.updated_at.to_string(),
            ]
        })
        .collect();
    table(
        &[
            "RUN",
            "GRAPH",
            "STATUS",
            "STEPS",
            "LAST NODE",
            "FROM",
            "CREATED",
            "UPDATED",
        ],
        &rows,
    )
}

fn run_details(run: &RunRecord) -> Result<String, RunsError> {
    let mut text = format!(
        "run          {}\ngraph        {}\nstatus       {}\ncreated      {}\nupdated      {}\nsteps        {}\nactivations  {}\nlast node    {}\n",
        run.run_id,
        run.graph,
        run.status,
        run.created_at,
        run.updated_at,
        run.steps,
        run.transitions,
        run.last_node.as_deref().unwrap_or("-"),
    );
    if let Some(parent) = &run.parent {
        text.push_str(&format!(
            "branch of    {} at checkpoint {}\n",
            parent.run_id, parent.checkpoint
        ));
    }
    for interrupt in &run.interrupts {
        text.push_str(&format!(
            "waiting      {} ({}): {}\n",
            interrupt.id, interrupt.request.kind, interrupt.request.question
        ));
    }
    if let Some(error) = &run.error {
        text.push_str(&format!("error        {error}\n"));
    }
    text.push_str(&format!(
        "state\n{}\n",
        serde_json::to_string_pretty(&run.state)?
    ));
    Ok(text)
}

fn checkpoints_table(checkpoints: &[Checkpoint]) -> String {
    let rows: Vec<Vec<String>> = checkpoints
        .iter()
        .map(|c| {
            let list = |names: &[Name]| {
                if names.is_empty() {
                    "-".to_owned()
                } else {
                    names.join(",")
                }
            };
            // Sent branches waiting to run, after the frontier: `summarize×3`.
            let mut next = c.frontier.clone();
            for send in &c.sends {
                let branch = format!("{}×", send.node);
                match next.iter_mut().find(|n| n.starts_with(&branch)) {
                    Some(counted) => {
                        let count: usize = counted[branch.len()..].parse().unwrap_or(1);
                        *counted = format!("{branch}{}", count + 1).into();
                    }
                    None => next.push(format!("{branch}1").into()),
                }
            }
            vec![
                c.id.to_string(),
                c.step.to_string(),
                c.label.to_string(),
                list(&c.nodes),
                list(&next),
                c.created_at.to_string(),
            ]
        })
        .collect();
    table(&["ID", "STEP", "LABEL", "RAN", "NEXT", "WRITTEN"], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_urls() {
        let sqlite = |path: &str| StoreUrl::Sqlite(path.into());
        assert_eq!(store_url("sqlite:runs.db").unwrap(), sqlite("runs.db"));
        assert_eq!(
            store_url("sqlite:///tmp/x.db").unwrap(),
            sqlite("/tmp/x.db")
        );
        assert_eq!(store_url("runs.db").unwrap(), sqlite("runs.db"));
        assert_eq!(
            store_url("postgres://u@h:5/db").unwrap(),
            StoreUrl::Postgres("postgres://u@h:5/db".into())
        );
        let error = store_url("mysql://localhost/trellis").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("unsupported database URL `mysql://localhost/trellis`")
        );
    }

    #[test]
    fn next_lists_the_frontier_then_the_sent_branches_counted() {
        let checkpoint: trellis::checkpoint::Checkpoint =
            serde_json::from_value(serde_json::json!({
                "id": 2, "run_id": "01JRUN", "step": 1, "nodes": ["plan"], "label": "step",
                "state": {}, "frontier": ["audit"], "visits": {"plan": 1}, "approved": [],
                "failures": [],
                "sends": [
                    {"node": "summarize", "input": "a"},
                    {"node": "translate", "input": "b"},
                    {"node": "summarize", "input": "c"},
                ],
                "graph_fingerprint": "0", "state_type": "T",
                "created_at": "2026-12-03T10:00:00Z",
            }))
            .unwrap();
        let text = checkpoints_table(&[checkpoint]);
        let row = text.lines().nth(1).unwrap();
        assert_eq!(
            row.split_whitespace().nth(4),
            Some("audit,summarize×2,translate×1"),
            "{text}"
        );
    }

    #[test]
    fn tables_align_columns() {
        let text = table(&["A", "LONGER"], &[vec!["wide cell".into(), "x".into()]]);
        assert_eq!(text, "A          LONGER\nwide cell  x\n");
    }
}
