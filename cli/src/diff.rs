//! `trellis diff OLD NEW`: what changed between two versions of a `.graph` file, graph by graph
//! (the typed difference is `trellis_graph::GraphDiff`), as text or JSON.

use std::io::Write;
use std::path::Path;

use clap::ValueEnum;
use serde::Serialize;
use trellis_graph::{Blueprint, GraphDiff};

use crate::{Outcome, UsageError, checked_module, no_such_graph};

/// How `trellis diff` prints.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum DiffFormat {
    /// One line a change: `+` added, `-` removed, `~` changed.
    Text,
    /// One JSON object: `graphs` (each graph's difference), `graphs_added`, `graphs_removed`.
    Json,
}

/// The difference between two files.
#[derive(Serialize)]
struct FileDiff {
    /// Each graph both files hold (or the one graph each holds), in the old file's order.
    graphs: Vec<GraphDiff>,
    /// Graphs only the new file holds.
    graphs_added: Vec<String>,
    /// Graphs only the old file holds.
    graphs_removed: Vec<String>,
}

impl FileDiff {
    fn is_empty(&self) -> bool {
        self.graphs.iter().all(GraphDiff::is_empty)
            && self.graphs_added.is_empty()
            && self.graphs_removed.is_empty()
    }
}

/// Reads `OLD=NEW`.
pub(crate) fn parse_rename(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((from, to)) if !from.trim().is_empty() && !to.trim().is_empty() => {
            Ok((from.trim().to_owned(), to.trim().to_owned()))
        }
        _ => Err(format!(
            "`{text}` is not OLD=NEW (a node's old name and its new one)"
        )),
    }
}

/// Compares `old` and `new`: exit 0 when they hold the same graphs, 1 when something changed
/// (as diff(1) does), 2 when a file cannot be read or compared.
pub(crate) fn diff(
    old: &Path,
    new: &Path,
    graph: Option<&str>,
    renames: &[(String, String)],
    format: DiffFormat,
) -> Result<Outcome, UsageError> {
    let (old_source, old_checked) = match checked_module(old, "compared")? {
        Ok(checked) => checked,
        Err(outcome) => return Ok(outcome),
    };
    let (new_source, new_checked) = match checked_module(new, "compared")? {
        Ok(checked) => checked,
        Err(outcome) => return Ok(outcome),
    };
    let (before, after) = (&old_checked.module.graphs, &new_checked.module.graphs);
    let pairs: Vec<(&Blueprint, &Blueprint)> = match (graph, before.as_slice(), after.as_slice()) {
        (Some(name), _, _) => {
            let one = old_checked
                .module
                .graph(name)
                .ok_or_else(|| no_such_graph(&old_source, name, before))?;
            let other = new_checked
                .module
                .graph(name)
                .ok_or_else(|| no_such_graph(&new_source, name, after))?;
            vec![(one, other)]
        }
        // One graph each: the same graph, perhaps renamed.
        (None, [one], [other]) => vec![(one, other)],
        (None, _, _) => {
            if !renames.is_empty() {
                return Err(UsageError::Graph(
                    "--rename needs --graph NAME when the files hold several graphs".to_owned(),
                ));
            }
            before
                .iter()
                .filter_map(|one| after.iter().find(|g| g.name == one.name).map(|g| (one, g)))
                .collect()
        }
    };
    let mut found = FileDiff {
        graphs: Vec::with_capacity(pairs.len()),
        graphs_added: Vec::new(),
        graphs_removed: Vec::new(),
    };
    for (one, other) in &pairs {
        found.graphs.push(
            GraphDiff::between(one, other, renames)
                .map_err(|error| UsageError::Graph(error.to_string()))?,
        );
    }
    // Paired by name: the graphs either file holds alone were added or removed.
    let by_name = graph.is_none() && !(before.len() == 1 && after.len() == 1);
    if by_name {
        let paired = |name: &str| pairs.iter().any(|(one, _)| one.name == name);
        found.graphs_removed = before
            .iter()
            .filter(|g| !paired(&g.name))
            .map(|g| g.name.clone())
            .collect();
        found.graphs_added = after
            .iter()
            .filter(|g| !paired(&g.name))
            .map(|g| g.name.clone())
            .collect();
    }
    let text = match format {
        DiffFormat::Json => {
            let mut json = serde_json::to_string_pretty(&found).map_err(|error| {
                UsageError::Graph(format!("cannot write the difference as JSON: {error}"))
            })?;
            json.push('\n');
            json
        }
        DiffFormat::Text => {
            let mut text = String::new();
            for graph in &found.graphs {
                if graph.is_empty() {
                    text.push_str(&format!("graph {}: unchanged\n", graph.graph));
                } else {
                    text.push_str(&graph.to_string());
                }
            }
            for name in &found.graphs_added {
                text.push_str(&format!("+ graph {name}\n"));
            }
            for name in &found.graphs_removed {
                text.push_str(&format!("- graph {name}\n"));
            }
            text
        }
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(UsageError::Stdout)?;
    Ok(if found.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Problems
    })
}
