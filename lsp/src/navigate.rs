//! Moving through a graph by its node names: definition, references, rename, and the outline.

use std::collections::HashMap;

use lsp_types::{DocumentSymbol, Location, SymbolKind, TextEdit, Uri, WorkspaceEdit};
use trellis_dsl::Span;

use crate::analysis::{Analysis, Occurrence};

pub(crate) fn definition(uri: &Uri, analysis: &Analysis, offset: usize) -> Option<Location> {
    if let Some(span) = analysis.subgraph_at(offset) {
        return Some(location(uri, analysis, span));
    }
    if let Some(found) = analysis.elsewhere_at(offset) {
        let (range, _) = found.declared.clone()?;
        return Some(Location::new(found.file.clone(), range));
    }
    let at = analysis.occurrence(offset)?;
    let span = analysis.declaration(at.graph, &at.name)?;
    Some(location(uri, analysis, span))
}

pub(crate) fn references(
    uri: &Uri,
    analysis: &Analysis,
    offset: usize,
    declaration: bool,
) -> Vec<Location> {
    let Some(at) = analysis.occurrence(offset) else {
        return Vec::new();
    };
    analysis
        .occurrences(at.graph, &at.name, declaration)
        .into_iter()
        .map(|span| location(uri, analysis, span))
        .collect()
}

/// A link on each subgraph path whose module's file is beside this one (`research::Research`
/// → `research.graph`).
pub(crate) fn links(analysis: &Analysis) -> Vec<lsp_types::DocumentLink> {
    analysis
        .elsewhere
        .iter()
        .map(|found| lsp_types::DocumentLink {
            range: analysis.lines.range(&analysis.text, found.span),
            target: Some(found.file.clone()),
            tooltip: Some(match &found.declared {
                Some(_) => format!("graph `{}`", found.name),
                None => format!("no graph `{}` there", found.name),
            }),
            data: None,
        })
        .collect()
}

/// Why a rename is refused.
pub(crate) type Refusal = String;

/// The node name a rename at `offset` would change.
pub(crate) fn prepare_rename(analysis: &Analysis, offset: usize) -> Result<Occurrence, Refusal> {
    analysis.occurrence(offset).ok_or_else(|| {
        "only a node's name can be renamed here (START and END are not nodes)".to_owned()
    })
}

/// Every occurrence of the node at `offset` renamed to `new_name`, refused when the new name
/// could not name a node or is taken.
pub(crate) fn rename(
    uri: &Uri,
    analysis: &Analysis,
    offset: usize,
    new_name: &str,
) -> Result<WorkspaceEdit, Refusal> {
    let at = prepare_rename(analysis, offset)?;
    if let Some(problem) = trellis_dsl::node_name_problem(new_name) {
        return Err(format!("`{new_name}` cannot name a node: {problem}"));
    }
    if new_name != at.name && analysis.declaration(at.graph, new_name).is_some() {
        return Err(format!("the graph already has a node `{new_name}`"));
    }
    let edits = analysis
        .occurrences(at.graph, &at.name, true)
        .into_iter()
        .map(|span| {
            TextEdit::new(
                analysis.lines.range(&analysis.text, span),
                new_name.to_owned(),
            )
        })
        .collect();
    Ok(WorkspaceEdit::new(HashMap::from([(uri.clone(), edits)])))
}

/// The outline: each graph, and its nodes inside it.
pub(crate) fn symbols(analysis: &Analysis) -> Vec<DocumentSymbol> {
    let range = |span: Span| analysis.lines.range(&analysis.text, span);
    (0..analysis.checked.module.graphs.len())
        .filter_map(|index| analysis.graph(index))
        .map(|(graph, spans)| {
            let nodes = graph
                .nodes
                .iter()
                .zip(&spans.nodes)
                .map(|(node, node_spans)| {
                    #[allow(deprecated)] // `deprecated` is a field the protocol still has.
                    DocumentSymbol {
                        name: node.id.clone(),
                        detail: node.doc.clone(),
                        kind: SymbolKind::FUNCTION,
                        tags: None,
                        deprecated: None,
                        range: range(node_spans.name),
                        selection_range: range(node_spans.name),
                        children: None,
                    }
                })
                .collect();
            #[allow(deprecated)]
            DocumentSymbol {
                name: graph.name.clone(),
                detail: graph.doc.clone(),
                kind: SymbolKind::CLASS,
                tags: None,
                deprecated: None,
                range: range(spans.extent.to(spans.name)),
                selection_range: range(spans.name),
                children: Some(nodes),
            }
        })
        .collect()
}

fn location(uri: &Uri, analysis: &Analysis, span: Span) -> Location {
    Location::new(uri.clone(), analysis.lines.range(&analysis.text, span))
}
