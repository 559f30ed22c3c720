//! One document as the server knows it: its text, its check, and where every node name is
//! declared and used, per graph.

use trellis_dsl::{Blueprint, Checked, Endpoint, GraphSpans, LexemeKind, Span};

use crate::text::Lines;

/// A document's text and everything read from it.
#[derive(Debug)]
pub(crate) struct Analysis {
    pub(crate) text: String,
    pub(crate) lines: Lines,
    pub(crate) checked: Checked,
    /// Per graph of `checked.module`, position for position.
    pub(crate) names: Vec<Names>,
    /// The subgraph paths to other modules' graphs found in the files beside this one
    /// ([`workspace::resolve`](crate::workspace::resolve)); empty until looked up.
    pub(crate) elsewhere: Vec<crate::workspace::Elsewhere>,
}

/// Where the node names of one graph are written.
#[derive(Debug, Default)]
pub(crate) struct Names {
    /// Each declaration: the name and its span.
    pub(crate) declared: Vec<(String, Span)>,
    /// Each use in an edge or an `on_error`: the name and its span.
    pub(crate) used: Vec<(String, Span)>,
}

/// A node name under the cursor.
#[derive(Debug, Clone)]
pub(crate) struct Occurrence {
    pub(crate) graph: usize,
    pub(crate) name: String,
    pub(crate) span: Span,
}

impl Analysis {
    pub(crate) fn new(text: String) -> Self {
        let checked = trellis_dsl::check(&text);
        let names = checked
            .module
            .graphs
            .iter()
            .zip(&checked.module.spans)
            .map(|(graph, spans)| Names::of(graph, spans))
            .collect();
        Analysis {
            lines: Lines::new(&text),
            text,
            checked,
            names,
            elsewhere: Vec::new(),
        }
    }

    pub(crate) fn graph(&self, index: usize) -> Option<(&Blueprint, &GraphSpans)> {
        Some((
            self.checked.module.graphs.get(index)?,
            self.checked.module.spans.get(index)?,
        ))
    }

    /// The node name at `offset` (a cursor just after a name is on it), declared or used.
    pub(crate) fn occurrence(&self, offset: usize) -> Option<Occurrence> {
        self.names.iter().enumerate().find_map(|(graph, names)| {
            names
                .declared
                .iter()
                .chain(&names.used)
                .find(|(_, span)| span.start <= offset && offset <= span.end)
                .map(|(name, span)| Occurrence {
                    graph,
                    name: name.clone(),
                    span: *span,
                })
        })
    }

    /// For a cursor on a subgraph node's `graph Name;`: where graph `Name` of this file is
    /// named (a path to another module's graph leads nowhere here).
    pub(crate) fn subgraph_at(&self, offset: usize) -> Option<Span> {
        let module = &self.checked.module;
        let name = module
            .graphs
            .iter()
            .zip(&module.spans)
            .find_map(|(graph, spans)| {
                graph.nodes.iter().zip(&spans.nodes).find_map(|(node, at)| {
                    let span = at.graph?;
                    (span.start <= offset && offset <= span.end).then_some(node.graph.as_deref()?)
                })
            })?;
        let at = module.graphs.iter().position(|graph| graph.name == name)?;
        Some(module.spans[at].name)
    }

    /// The path to another file's graph at `offset`, if one is written there.
    pub(crate) fn elsewhere_at(&self, offset: usize) -> Option<&crate::workspace::Elsewhere> {
        self.elsewhere
            .iter()
            .find(|found| found.span.start <= offset && offset <= found.span.end)
    }

    /// Where `name` is declared in graph `graph`.
    pub(crate) fn declaration(&self, graph: usize, name: &str) -> Option<Span> {
        let names = self.names.get(graph)?;
        names
            .declared
            .iter()
            .find(|(declared, _)| declared == name)
            .map(|(_, span)| *span)
    }

    /// Every place `name` is written in graph `graph`, declarations first, in source order.
    pub(crate) fn occurrences(&self, graph: usize, name: &str, declarations: bool) -> Vec<Span> {
        let Some(names) = self.names.get(graph) else {
            return Vec::new();
        };
        let declared = names.declared.iter().filter(|_| declarations);
        let mut spans: Vec<Span> = declared
            .chain(&names.used)
            .filter(|(written, _)| written == name)
            .map(|(_, span)| *span)
            .collect();
        spans.sort();
        spans.dedup();
        spans
    }

    /// The text of the declaration whose name is at `name` in graph `graph`: `node x;` or
    /// `node x { … }`, read with the language's lexer (a `}` in a comment or a string ends
    /// nothing) up to the next item's name at most.
    pub(crate) fn declaration_text(&self, graph: usize, name: Span) -> &str {
        let text = &self.text;
        let start = text[..name.start]
            .rfind("node")
            .filter(|&at| text[at + 4..name.start].trim().is_empty())
            .unwrap_or(name.start);
        let limit = self
            .checked
            .module
            .spans
            .get(graph)
            .map_or(text.len(), |spans| {
                let names = spans.nodes.iter().map(|node| node.name);
                let edges = spans.edges.iter().map(|edge| edge.from);
                names
                    .chain(edges)
                    .map(|span| span.start)
                    .filter(|&at| at > name.end)
                    .fold(spans.extent.end, usize::min)
            })
            .min(text.len());
        let rest = &text[name.end..limit];
        let mut depth = 0_usize;
        let end = trellis_dsl::lexemes(rest)
            .into_iter()
            .filter(|lexeme| lexeme.kind == LexemeKind::Token)
            .find_map(|lexeme| {
                match &rest[lexeme.span.start..lexeme.span.end] {
                    "{" => depth += 1,
                    "}" if depth <= 1 => return Some(lexeme.span.end),
                    "}" => depth -= 1,
                    ";" if depth == 0 => return Some(lexeme.span.end),
                    _ => {}
                }
                None
            });
        &text[start..end.map_or(limit, |end| name.end + end)]
    }
}

impl Names {
    /// Read from the blueprint (whose endpoints already tell a node from START and END) and
    /// its spans, position for position.
    fn of(graph: &Blueprint, spans: &GraphSpans) -> Self {
        let node = |endpoint: &Endpoint, span: Span| match endpoint {
            Endpoint::Node(name) => Some((name.clone(), span)),
            Endpoint::Start | Endpoint::End => None,
        };
        let declared = graph
            .nodes
            .iter()
            .zip(&spans.nodes)
            .map(|(declared, at)| (declared.id.clone(), at.name))
            .collect();
        let edges = graph.edges.iter().zip(&spans.edges).flat_map(|(edge, at)| {
            std::iter::once((&edge.from, at.from))
                .chain(edge.targets.iter().zip(at.targets.iter().copied()))
        });
        let handlers = graph
            .nodes
            .iter()
            .zip(&spans.nodes)
            .filter_map(|(declared, at)| {
                Some((
                    Endpoint::from_name(declared.on_error.as_deref()?),
                    at.on_error?,
                ))
            });
        let used = edges
            .filter_map(|(endpoint, span)| node(endpoint, span))
            .chain(handlers.filter_map(|(endpoint, span)| node(&endpoint, span)))
            .collect();
        Names { declared, used }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subgraph_reference_leads_to_its_graph() {
        let text = "graph Review {\n    node check;\n    START -> check -> END;\n}\ngraph Desk {\n    node review { graph Review; }\n    node other { graph elsewhere::Other; }\n    START -> review -> other -> END;\n}\n";
        let analysis = Analysis::new(text.to_owned());
        let on = text.find("graph Review;").expect("written") + "graph Re".len();
        let span = analysis.subgraph_at(on).expect("a graph of the file");
        assert_eq!(&text[span.start..span.end], "Review");
        assert_eq!(span.start, "graph ".len(), "the first graph's name");
        let path = text.find("elsewhere").expect("written") + 2;
        assert_eq!(analysis.subgraph_at(path), None, "another module's graph");
        assert_eq!(
            analysis.subgraph_at(text.find("check").expect("written")),
            None
        );
    }

    #[test]
    fn a_declaration_ends_at_its_own_brace_or_semicolon() {
        let text = "graph G {\n    node a { // not the end }\n        kind \"}\"; }\n    node b;\n    START -> a -> b -> END;\n}\n";
        let analysis = Analysis::new(text.to_owned());
        let a = analysis.declaration(0, "a").unwrap();
        assert_eq!(
            analysis.declaration_text(0, a),
            "node a { // not the end }\n        kind \"}\"; }"
        );
        let b = analysis.declaration(0, "b").unwrap();
        assert_eq!(analysis.declaration_text(0, b), "node b;");
    }
}
