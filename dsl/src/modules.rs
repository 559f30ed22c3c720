//! Graphs of other modules: a subgraph node naming `research::Research` names graph `Research`
//! of the `.graph` file that module `research` is generated from — by the layout of build.rs and
//! `include_generated!`, `research.graph` beside this file. The language server and
//! `trellis check` look such paths up with these two functions.

use crate::blueprint::Module;
use crate::diagnostic::{Code, Diagnostic, Span};

/// A subgraph node's path to another module's graph, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModulePath<'m> {
    /// The whole path (`research::Research`).
    pub span: Span,
    /// The graph's name in it.
    pub name_span: Span,
    /// The module the graph is in: the path's last module (`research`).
    pub module: &'m str,
    /// The graph's name.
    pub name: &'m str,
}

/// Every subgraph path of `module` that names another module's graph, in source order.
///
/// ```
/// let checked = trellis_dsl::check(
///     "graph Desk { node r { graph research::Research; } START -> r -> END; }",
/// );
/// let paths = trellis_dsl::modules::module_paths(&checked.module);
/// assert_eq!((paths[0].module, paths[0].name), ("research", "Research"));
/// ```
pub fn module_paths(module: &Module) -> Vec<ModulePath<'_>> {
    let mut paths = Vec::new();
    for (graph, spans) in module.graphs.iter().zip(&module.spans) {
        for (node, at) in graph.nodes.iter().zip(&spans.nodes) {
            let (Some(path), Some(span)) = (node.graph.as_deref(), at.graph) else {
                continue;
            };
            let mut segments: Vec<&str> = path.split("::").map(str::trim).collect();
            let name = segments.pop().unwrap_or_default();
            let Some(module) = segments.last().copied().filter(|m| !m.is_empty()) else {
                continue;
            };
            paths.push(ModulePath {
                span,
                name_span: Span::new(span.end.saturating_sub(name.len()), span.end),
                module,
                name,
            });
        }
    }
    paths
}

/// E0211 for `path` when `other` — the checked file of its module, called `file_name` — does
/// not declare its graph: at the name, with a did-you-mean (and its fix) or the graphs the file
/// declares.
pub fn undeclared(path: &ModulePath<'_>, other: &Module, file_name: &str) -> Option<Diagnostic> {
    if other.graphs.iter().any(|g| g.name == path.name) {
        return None;
    }
    let known: Vec<&str> = other.graphs.iter().map(|g| g.name.as_str()).collect();
    let problem = Diagnostic::new(
        Code::E0211,
        path.name_span,
        format!("graph `{}` is not declared in `{file_name}`", path.name),
        format!("not a graph of `{file_name}`"),
    );
    Some(
        match trellis_graph::did_you_mean(path.name, known.iter().copied()) {
            Some(near) => problem.with_did_you_mean(path.name_span, near),
            None if known.is_empty() => {
                problem.with_help(format!("`{file_name}` declares no graph"))
            }
            None => problem.with_help(format!(
                "`{file_name}` declares {}",
                known
                    .iter()
                    .map(|g| format!("`{g}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_the_module_s_file_lacks_is_e0211_with_the_nearest() {
        let desk = crate::check(
            "graph Desk {\n    node r { graph research::Resarch; }\n    node s { graph Local; }\n    START -> r -> s -> END;\n}\ngraph Local { node a; START -> a -> END; }\n",
        );
        let paths = module_paths(&desk.module);
        assert_eq!(paths.len(), 1, "a graph of the same file is no module path");
        let research = crate::check("graph Research { node web; START -> web -> END; }");
        let problem = undeclared(&paths[0], &research.module, "research.graph").expect("E0211");
        assert_eq!(problem.code, Code::E0211);
        assert_eq!(problem.help.as_deref(), Some("did you mean `Research`?"));
        let empty = crate::check("");
        let problem = undeclared(&paths[0], &empty.module, "research.graph").expect("E0211");
        assert_eq!(
            problem.help.as_deref(),
            Some("`research.graph` declares no graph")
        );
    }
}
