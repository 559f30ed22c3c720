//! The `.graph` files of one folder as one workspace: a subgraph node naming another module's
//! graph (`graph research::Research;`) is looked up in `research.graph` beside the file — the
//! file whose generated module that path names, as build.rs and `include_generated!` lay them
//! out — so that a misspelt name there is an error here (E0211, with a did-you-mean), and the
//! path hovers, links and jumps to that graph.

use std::str::FromStr;

use lsp_types::{Range, Uri};
use trellis_dsl::Span;

use crate::analysis::Analysis;
use crate::text::Lines;

/// A subgraph node's graph, written as a path to another module's, found in a file beside.
#[derive(Debug, Clone)]
pub(crate) struct Elsewhere {
    /// The path as written here (`research::Research`).
    pub(crate) span: Span,
    /// The file the path's module stands for (`research.graph` beside this one).
    pub(crate) file: Uri,
    /// The graph's name.
    pub(crate) name: String,
    /// Where that file declares the graph, and its doc; `None` when it does not.
    pub(crate) declared: Option<(Range, Option<String>)>,
}

/// The file of `module` beside `uri` (`file:///a/desk.graph`, `research` →
/// `file:///a/research.graph`).
pub(crate) fn beside(uri: &Uri, module: &str) -> Option<Uri> {
    Uri::from_str(&format!("{}/{module}.graph", folder_of(uri))).ok()
}

/// The folder part of a URI, without its last `/` (`file:///a/desk.graph` → `file:///a`).
pub(crate) fn folder_of(uri: &Uri) -> &str {
    let text = uri.as_str();
    &text[..text.rfind('/').unwrap_or(0)]
}

/// Whether `analysis` (the document at `uri`) has a subgraph path whose module's file is
/// `file`: it is checked again when that file changes.
pub(crate) fn names_graphs_of(uri: &Uri, analysis: &Analysis, file: &Uri) -> bool {
    trellis_dsl::modules::module_paths(&analysis.checked.module)
        .iter()
        .any(|path| beside(uri, path.module).as_ref() == Some(file))
}

/// The local path of a `file:` URI, decoded.
pub(crate) fn local_path(uri: &Uri) -> Option<std::path::PathBuf> {
    if uri.scheme().map(|scheme| scheme.as_str()) != Some("file") {
        return None;
    }
    let path = uri.path().as_estr().decode().into_string().ok()?;
    Some(std::path::PathBuf::from(path.into_owned()))
}

/// Looks up every subgraph path of `analysis` (the document at `uri`) in the file its module
/// names, read by `read` (an open document's text, else the file's); adds an E0211 for a graph
/// that file does not declare. A path whose file is not there (a graph built in Rust, say) is
/// left alone.
pub(crate) fn resolve(uri: &Uri, analysis: &mut Analysis, read: &dyn Fn(&Uri) -> Option<String>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    // Each module's file read and checked once, however many paths name it.
    let mut files: std::collections::HashMap<&str, Option<(String, trellis_dsl::Checked, Lines)>> =
        std::collections::HashMap::new();
    for path in trellis_dsl::modules::module_paths(&analysis.checked.module) {
        let Some(file) = beside(uri, path.module) else {
            continue;
        };
        let read_once = files.entry(path.module).or_insert_with(|| {
            let text = read(&file)?;
            let checked = trellis_dsl::check(&text);
            let lines = Lines::new(&text);
            Some((text, checked, lines))
        });
        let Some((text, other, lines)) = read_once.as_ref() else {
            continue;
        };
        let declared = other
            .module
            .graphs
            .iter()
            .zip(&other.module.spans)
            .find(|(g, _)| g.name == path.name)
            .map(|(g, s)| (lines.range(text, s.name), g.doc.clone()));
        let file_name = format!("{}.graph", path.module);
        problems.extend(trellis_dsl::modules::undeclared(
            &path,
            &other.module,
            &file_name,
        ));
        found.push(Elsewhere {
            span: path.span,
            file,
            name: path.name.to_owned(),
            declared,
        });
    }
    analysis.elsewhere = found;
    if !problems.is_empty() {
        analysis.checked.diagnostics.extend(problems);
        analysis.checked.diagnostics.sort_by_key(|d| d.span);
    }
}

/// The graph a rename at `offset` would change: the file that declares it, its name, and where
/// it is written at `offset` — its header, a `graph Name;` of this file, or the name in a path
/// to another file's graph.
pub(crate) fn graph_at(
    uri: &Uri,
    analysis: &Analysis,
    offset: usize,
) -> Option<(Uri, String, Span)> {
    let within = |span: Span| span.start <= offset && offset <= span.end;
    let module = &analysis.checked.module;
    for (graph, spans) in module.graphs.iter().zip(&module.spans) {
        if within(spans.name) {
            return Some((uri.clone(), graph.name.clone(), spans.name));
        }
        for (node, at) in graph.nodes.iter().zip(&spans.nodes) {
            if let (Some(name), Some(span)) = (node.graph.as_deref(), at.graph)
                && !name.contains("::")
                && within(span)
            {
                return Some((uri.clone(), name.to_owned(), span));
            }
        }
    }
    let found = analysis.elsewhere_at(offset)?;
    found.declared.as_ref()?;
    let span = Span::new(found.span.end - found.name.len(), found.span.end);
    Some((found.file.clone(), found.name.clone(), span))
}

/// The edits that rename graph `name`, declared in `declaring`, to `new_name`: its header and
/// the `graph name;` nodes of that file, and the paths to it (`module::Name`) in the other
/// `files` (each with its text), where the module is the declaring file's.
///
/// # Errors
/// Why the rename is refused: `new_name` cannot name a graph, or the file has one so named.
pub(crate) fn rename_graph(
    declaring: &Uri,
    name: &str,
    new_name: &str,
    files: &[(Uri, String)],
) -> Result<Vec<(Uri, Vec<lsp_types::TextEdit>)>, String> {
    // The language itself says what may name a graph.
    let probe = trellis_dsl::check(&format!(
        "graph {new_name} {{ node a; START -> a -> END; }}"
    ));
    if probe.has_errors() || probe.module.graphs.first().map(|g| g.name.as_str()) != Some(new_name)
    {
        return Err(format!("`{new_name}` cannot name a graph"));
    }
    let text = declaring.as_str();
    let module_name = text[text.rfind('/').map_or(0, |at| at + 1)..]
        .strip_suffix(".graph")
        .unwrap_or_default();
    let mut changes = Vec::new();
    for (file, text) in files {
        let analysis = Analysis::new(text.clone());
        let module = &analysis.checked.module;
        let mut spans = Vec::new();
        for (graph, at) in module.graphs.iter().zip(&module.spans) {
            if file == declaring && graph.name == new_name && new_name != name {
                return Err(format!(
                    "`{module_name}.graph` already has a graph `{new_name}`"
                ));
            }
            if file == declaring && graph.name == name {
                spans.push(at.name);
            }
            for (node, node_at) in graph.nodes.iter().zip(&at.nodes) {
                let (Some(path), Some(span)) = (node.graph.as_deref(), node_at.graph) else {
                    continue;
                };
                let segments: Vec<&str> = path.split("::").map(str::trim).collect();
                let names_it = match segments.as_slice() {
                    [only] => file == declaring && *only == name,
                    [.., module, last] => {
                        *last == name && *module == module_name && file != declaring
                    }
                    [] => false,
                };
                if names_it {
                    spans.push(Span::new(span.end - name.len(), span.end));
                }
            }
        }
        if !spans.is_empty() {
            let edits = spans
                .into_iter()
                .map(|span| {
                    lsp_types::TextEdit::new(
                        analysis.lines.range(&analysis.text, span),
                        new_name.to_owned(),
                    )
                })
                .collect();
            changes.push((file.clone(), edits));
        }
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trellis_dsl::{Code, Diagnostic};

    fn uri(text: &str) -> Uri {
        Uri::from_str(text).expect("a URI")
    }

    const DESK: &str = "graph Desk {\n    node research { graph research::Resarch; }\n    node other { graph rust_side::Built; }\n    START -> research -> other -> END;\n}\n";
    const RESEARCH: &str =
        "/// Finds sources.\ngraph Research {\n    node web;\n    START -> web -> END;\n}\n";

    fn read(file: &Uri) -> Option<String> {
        (file.as_str() == "file:///work/research.graph").then(|| RESEARCH.to_owned())
    }

    #[test]
    fn a_misspelt_graph_of_the_file_beside_is_an_error_with_its_fix() {
        let mut analysis = Analysis::new(DESK.to_owned());
        resolve(&uri("file:///work/desk.graph"), &mut analysis, &read);
        let errors: Vec<&Diagnostic> = analysis.checked.diagnostics.iter().collect();
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert_eq!(errors[0].code, Code::E0211);
        assert_eq!(
            errors[0].message,
            "graph `Resarch` is not declared in `research.graph`"
        );
        assert_eq!(&DESK[errors[0].span.start..errors[0].span.end], "Resarch");
        assert_eq!(errors[0].help.as_deref(), Some("did you mean `Research`?"));
        // The path whose file is not there (a graph built in Rust) is left alone.
        assert_eq!(analysis.elsewhere.len(), 1);
        assert!(analysis.elsewhere[0].declared.is_none());
    }

    #[test]
    fn a_graph_found_beside_is_where_its_name_is_with_its_doc() {
        let fixed = DESK.replace("Resarch", "Research");
        let mut analysis = Analysis::new(fixed.clone());
        resolve(&uri("file:///work/desk.graph"), &mut analysis, &read);
        assert!(analysis.checked.diagnostics.is_empty());
        let found = &analysis.elsewhere[0];
        assert_eq!(found.file.as_str(), "file:///work/research.graph");
        assert_eq!(
            &fixed[found.span.start..found.span.end],
            "research::Research"
        );
        let (range, doc) = found.declared.clone().expect("declared");
        assert_eq!((range.start.line, range.start.character), (1, 6));
        assert_eq!(doc.as_deref(), Some("Finds sources."));
    }

    #[test]
    fn a_graph_is_renamed_in_its_file_and_in_the_paths_beside_that_name_it() {
        let research_uri = uri("file:///work/research.graph");
        let desk_uri = uri("file:///work/desk.graph");
        let research = format!(
            "{RESEARCH}graph Wrapper {{\n    node inner {{ graph Research; }}\n    START -> inner -> END;\n}}\n"
        );
        let desk = DESK.replace("Resarch", "Research");
        let files = vec![(research_uri.clone(), research), (desk_uri.clone(), desk)];
        let changes = rename_graph(&research_uri, "Research", "Sources", &files).expect("renamed");
        let edits_of = |file: &Uri| -> Vec<lsp_types::TextEdit> {
            changes
                .iter()
                .find(|(changed, _)| changed == file)
                .map(|(_, edits)| edits.clone())
                .unwrap_or_default()
        };
        let lines = |file: &Uri| -> Vec<u32> {
            let mut lines: Vec<u32> = edits_of(file).iter().map(|e| e.range.start.line).collect();
            lines.sort_unstable();
            lines
        };
        // The header and `graph Research;` of its file; the path in the desk.
        assert_eq!(lines(&research_uri), [1, 6]);
        assert_eq!(lines(&desk_uri), [1]);
        assert_eq!(edits_of(&desk_uri)[0].range.start.character, 36);
        assert!(
            changes
                .iter()
                .flat_map(|(_, e)| e)
                .all(|e| e.new_text == "Sources")
        );
        assert_eq!(
            rename_graph(&research_uri, "Research", "Wrapper", &files).unwrap_err(),
            "`research.graph` already has a graph `Wrapper`"
        );
        assert_eq!(
            rename_graph(&research_uri, "Research", "no good", &files).unwrap_err(),
            "`no good` cannot name a graph"
        );
    }

    #[test]
    fn a_file_uri_reads_as_its_decoded_path() {
        let path = local_path(&uri("file:///work/my%20graphs/desk.graph")).expect("a path");
        assert_eq!(path, std::path::PathBuf::from("/work/my graphs/desk.graph"));
        assert_eq!(
            beside(&uri("file:///work/my%20graphs/desk.graph"), "research")
                .map(|u| u.as_str().to_owned()),
            Some("file:///work/my%20graphs/research.graph".to_owned())
        );
        assert!(local_path(&uri("untitled:desk.graph")).is_none());
    }
}
