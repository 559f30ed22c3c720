//! What `trellis check` reads: `.graph` files, the `graph! { … }` bodies of Rust files (each
//! checked as the language and reported at its place in the `.rs` file), and the files of a
//! directory.

use std::ops::Range;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// What a path given to `check` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A `.graph` file.
    Graph,
    /// A Rust file, whose `graph!` bodies are checked.
    Rust,
}

impl Kind {
    /// The kind of `path` by its extension, if `check` reads it.
    pub(crate) fn of(path: &Path) -> Option<Kind> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("graph") => Some(Kind::Graph),
            Some("rs") => Some(Kind::Rust),
            _ => None,
        }
    }
}

/// The files `paths` name: a file as given, a directory as its `.graph` and Rust files, in
/// name order (build output, dependencies and hidden folders left out).
///
/// # Errors
/// A directory that cannot be read.
pub(crate) fn files(paths: &[PathBuf]) -> Result<Vec<(PathBuf, bool)>, walkdir::Error> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push((path.clone(), true));
            continue;
        }
        let walk = walkdir::WalkDir::new(path)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|entry| {
                let name = entry.file_name().to_string_lossy();
                entry.depth() == 0
                    || !(entry.file_type().is_dir()
                        && (name.starts_with('.') || name == "target" || name == "node_modules"))
            });
        for entry in walk {
            let entry = entry?;
            if entry.file_type().is_file() && Kind::of(entry.path()).is_some() {
                files.push((entry.into_path(), false));
            }
        }
    }
    Ok(files)
}

/// The byte ranges of the bodies of the `graph! { … }` (or `trellis::graph!`, any delimiter)
/// invocations in a Rust file's `text`, in order: what is between the delimiters.
///
/// # Errors
/// The text does not parse as a Rust file.
pub(crate) fn graph_bodies(text: &str) -> Result<Vec<Range<usize>>, syn::Error> {
    let file = syn::parse_file(text)?;
    let mut found = Bodies(Vec::new());
    found.visit_file(&file);
    Ok(found.0)
}

/// Collects the bodies while syn walks the file.
struct Bodies(Vec<Range<usize>>);

impl<'ast> Visit<'ast> for Bodies {
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if mac.path.segments.last().is_some_and(|s| s.ident == "graph") {
            let span = match &mac.delimiter {
                syn::MacroDelimiter::Brace(d) => d.span,
                syn::MacroDelimiter::Paren(d) => d.span,
                syn::MacroDelimiter::Bracket(d) => d.span,
            };
            self.0
                .push(span.open().byte_range().end..span.close().byte_range().start);
        }
        syn::visit::visit_macro(self, mac);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bodies_of_every_graph_macro_are_found_where_they_are() {
        let text = r#"//! Ünïcödé before, so that offsets are bytes.
trellis::graph! {
    graph A { node a; START -> a -> END; }
}

fn main() {
    let s = "graph! { not a macro }";
    graph![graph B { node b; START -> b -> END; }];
    println!("{s}");
}
"#;
        let bodies: Vec<&str> = graph_bodies(text)
            .expect("parses")
            .into_iter()
            .map(|range| &text[range])
            .collect();
        assert_eq!(
            bodies,
            [
                "\n    graph A { node a; START -> a -> END; }\n",
                "graph B { node b; START -> b -> END; }"
            ]
        );
    }

    #[test]
    fn a_file_that_is_not_rust_is_a_syntax_error() {
        let error = graph_bodies("graph A { node a; }").expect_err("not Rust");
        assert_eq!(error.span().start().line, 1);
    }
}
