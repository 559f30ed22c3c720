//! What hovering shows: a node (its doc, declaration, and edges in and out), or a diagnostic
//! code (its section of the language reference).

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind};
use trellis_dsl::{Blueprint, EdgeKind, Endpoint};

use crate::analysis::Analysis;
use crate::explain;

pub(crate) fn hover(analysis: &Analysis, offset: usize) -> Option<Hover> {
    let mut parts = Vec::new();
    let mut span = None;
    if let Some(at) = analysis.occurrence(offset) {
        parts.extend(node(analysis, at.graph, &at.name));
        span = Some(at.span);
    }
    if let Some(found) = analysis.elsewhere_at(offset)
        && let Some((_, doc)) = &found.declared
    {
        let file = found.file.as_str().rsplit('/').next().unwrap_or_default();
        let mut text = format!("```graph\ngraph {}\n```\nin `{file}`", found.name);
        if let Some(doc) = doc {
            text.push_str("\n\n");
            text.push_str(doc);
        }
        parts.push(text);
        span = Some(found.span);
    }
    // What the codes of the diagnostics here mean, or of the code written here (in a comment).
    let mut codes: Vec<_> = analysis
        .checked
        .diagnostics
        .iter()
        .filter(|d| d.span.start <= offset && offset <= d.span.end)
        .map(|d| {
            span.get_or_insert(d.span);
            d.code
        })
        .chain(explain::code_at(&analysis.text, offset))
        .collect();
    codes.dedup();
    parts.extend(codes.into_iter().filter_map(explain::explain));
    if parts.is_empty() {
        return None;
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: parts.join("\n\n---\n\n"),
        }),
        range: span.map(|span| analysis.lines.range(&analysis.text, span)),
    })
}

fn node(analysis: &Analysis, graph: usize, name: &str) -> Option<String> {
    let (blueprint, _) = analysis.graph(graph)?;
    let node = blueprint.nodes.iter().find(|node| node.id == name)?;
    let declared = analysis.declaration(graph, name)?;
    let mut out = format!(
        "```graph\n{}\n```\n",
        analysis.declaration_text(graph, declared)
    );
    if let Some(doc) = &node.doc {
        out.push_str(&format!("\n{}\n", doc.trim()));
    }
    let incoming = edges(blueprint, |edge| edge.targets.iter().any(|t| is(t, name)));
    let outgoing = edges(blueprint, |edge| is(&edge.from, name));
    out.push_str(&format!(
        "\nnode of graph `{}`\n\n**in:** {}\n\n**out:** {}\n",
        blueprint.name,
        list(&incoming, "none: no edge leads here"),
        list(&outgoing, "none"),
    ));
    Some(out)
}

fn is(endpoint: &Endpoint, name: &str) -> bool {
    matches!(endpoint, Endpoint::Node(node) if node == name)
}

/// The edges `keep` picks, each as written: `a -> b | c`; a join with all its sources,
/// `a & b -> j`, once.
fn edges(blueprint: &Blueprint, keep: impl Fn(&trellis_dsl::Edge) -> bool) -> Vec<String> {
    let mut written: Vec<String> = Vec::new();
    for edge in blueprint.edges.iter().filter(|edge| keep(edge)) {
        let targets: Vec<String> = edge.targets.iter().map(ToString::to_string).collect();
        let text = match edge.kind {
            EdgeKind::Static | EdgeKind::Conditional => {
                format!("`{} -> {}`", edge.from, targets.join(" | "))
            }
            EdgeKind::Fork => format!("`{} -> {}`", edge.from, targets.join(" & ")),
            EdgeKind::Each => format!("`{} -> each {}`", edge.from, targets.join(" | ")),
            EdgeKind::Join => {
                let sources: Vec<String> = blueprint
                    .edges
                    .iter()
                    .filter(|other| other.kind == EdgeKind::Join && other.targets == edge.targets)
                    .map(|other| other.from.to_string())
                    .collect();
                format!("`{} -> {}`", sources.join(" & "), targets.join(" | "))
            }
        };
        if !written.contains(&text) {
            written.push(text);
        }
    }
    written
}

fn list(items: &[String], none: &str) -> String {
    if items.is_empty() {
        none.to_owned()
    } else {
        items.join(", ")
    }
}
