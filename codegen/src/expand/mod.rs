//! One blueprint → one Rust module, written as text: node enum, route enums, send enums,
//! handler trait, `build`, `blueprint`.
mod answers;
mod build;
mod enums;
mod shape;
mod traits;
mod writes;

use std::collections::HashSet;

use rustc_hash::FxBuildHasher;
use trellis_dsl::rust_names;
use trellis_dsl::{Blueprint, Endpoint, GraphSpans, Node};

use crate::blueprint;
use crate::paths::Paths;
use crate::text::{Lines, Lit, put};

use build::{adapter, build_body};
use enums::{node_enum, route_enum, send_enum};
use shape::{Declared, Route, SendEdge, SubgraphNode, routes, sends, subgraph_nodes};
use traits::{handlers, mappings};
use writes::{same_step_checks, writes_types};

/// Whether the blueprint is valid (full code) or has errors (a skeleton of the same shape, so
/// code that names the module does not drown the real error in follow-on errors).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Full,
    Skeleton,
}

/// Whether Rust reserves `word`; a node with such a name becomes a raw identifier (`r#type`).
/// A `match`, not a list searched word by word: it is asked twice for every node.
pub(super) fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "as" | "break"
            | "const"
            | "continue"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "static"
            | "struct"
            | "trait"
            | "true"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
            | "async"
            | "await"
            | "dyn"
            | "abstract"
            | "become"
            | "box"
            | "do"
            | "final"
            | "macro"
            | "override"
            | "priv"
            | "typeof"
            | "unsized"
            | "virtual"
            | "yield"
            | "try"
            | "gen"
    )
}

/// A name as a Rust identifier, raw when it is a keyword; `None` when it cannot be one.
pub(crate) fn ident(name: &str) -> Option<String> {
    ident_owned(name.to_owned())
}

/// [`ident`] of a name already owned (no copy when it is no keyword).
pub(super) fn ident_owned(name: String) -> Option<String> {
    let mut bytes = name.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if !first_ok || !bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_') || name == "_" {
        return None;
    }
    if matches!(name.as_str(), "self" | "super" | "crate" | "Self") {
        return None;
    }
    Some(if is_keyword(&name) {
        format!("r#{name}")
    } else {
        name
    })
}

/// The body every method and function of a skeleton has.
pub(super) const UNREACHABLE: &str =
    "::core::unreachable!(\"the graph has errors; see the compile errors above\")";

/// A node the generated code can name: its declaration, its method and its variant, and the
/// type of the input its sent branches carry (`input T;`), where the source writes it.
pub(super) struct NodeNames<'a> {
    pub(super) node: &'a Node,
    /// Its position in the blueprint.
    pub(super) at: usize,
    pub(super) method: String,
    pub(super) variant: String,
    pub(super) input: Option<String>,
    /// Its own update type (`WebWrites`) when it declares `writes` (a handler's node, in a
    /// graph that names its state).
    pub(super) writes: Option<String>,
}

/// How the module names things that depend on whether the source names a state type.
pub(super) struct Names<'a> {
    pub(super) krate: &'a str,
    /// The state in the trait: `State`, or the trait's own `Self::State`.
    pub(super) trait_state: &'static str,
    /// The state in `build` and the adapter: `State`, or `H::State`.
    pub(super) build_state: &'static str,
    /// What a handler returns, in the trait.
    pub(super) output: &'static str,
}

pub(crate) fn graph(
    code: &mut Lines<'_>,
    blueprint: &Blueprint,
    spans: &GraphSpans,
    module_graphs: &[Blueprint],
    krate: &str,
    paths: &mut Paths<'_>,
    mode: Mode,
) {
    let nodes = node_names(blueprint, spans, paths, mode);
    let declared = Declared::new(blueprint, &nodes, mode);
    // A skeleton's routes also name every declared node and END: the user's code names the
    // target it meant (`Route::Pay`) when the graph misspells it (`pyy`), and that adds no error.
    let meant: Vec<Endpoint> = match mode {
        Mode::Full => Vec::new(),
        Mode::Skeleton => nodes
            .iter()
            .map(|n| Endpoint::Node(n.node.id.clone()))
            .chain([Endpoint::End])
            .collect(),
    };
    let routes = routes(blueprint, &declared, &meant);
    let sends = sends(blueprint, &nodes, &declared);
    let subgraphs = subgraph_nodes(blueprint, spans, module_graphs, paths);
    let sites = answers::sites(code, blueprint, spans, &nodes, krate, paths);

    let state_given = blueprint.state.is_some();
    let names = Names {
        krate,
        trait_state: if state_given { "State" } else { "Self::State" },
        build_state: if state_given { "State" } else { "H::State" },
        output: if state_given {
            "NodeOutput"
        } else {
            "NodeOutput<Self::State>"
        },
    };

    module_doc(code, blueprint, mode);
    // The node methods' futures (`-> impl Future + Send`) name the user's state type, usually
    // crate-private; rustc 1.95 takes each future for a `pub` item reachable from outside and
    // lints it even in a private module. Allowed on the module, where rustc honours it.
    put!(code, "#[allow(private_bounds, private_interfaces)]");
    put!(code, "pub mod {} {{", rust_names::module(&blueprint.name));
    preamble(
        code,
        blueprint,
        spans,
        paths,
        krate,
        !routes.is_empty() || !sends.is_empty(),
    );
    node_enum(code, &blueprint.name, &nodes);
    for route in &routes {
        route_enum(code, route, mode);
    }
    for send in &sends {
        send_enum(code, send);
    }
    let defining = writes_types(code, blueprint, spans, &nodes, krate, paths);
    if mode == Mode::Full {
        same_step_checks(
            code,
            blueprint,
            module_graphs,
            spans,
            &defining,
            krate,
            paths,
        );
    }
    handlers(
        code, blueprint, &names, &nodes, &routes, &sends, &subgraphs, mode,
    );
    mappings(code, blueprint, &names, &subgraphs, mode);
    if mode == Mode::Full {
        adapter(code, &names, &nodes);
    }
    answers::helpers(code, &sites, krate);
    let wiring = Wiring {
        routes: &routes,
        sends: &sends,
        subgraphs: &subgraphs,
        sites: &sites,
    };
    entry_points(code, blueprint, &names, &wiring, mode);
    put!(code, "}}");
}

/// The names of the nodes the code can name. In skeleton mode the blueprint may hold names that
/// clash or are not identifiers: the first of each is kept, so that the skeleton itself compiles.
/// In full mode the name rules (E0106) have kept them apart.
fn node_names<'b>(
    blueprint: &'b Blueprint,
    spans: &GraphSpans,
    paths: &mut Paths<'_>,
    mode: Mode,
) -> Vec<NodeNames<'b>> {
    let mut seen_variants: HashSet<String, FxBuildHasher> = HashSet::default();
    blueprint
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(at, node)| {
            let method = ident(&node.id)?;
            let variant = ident_owned(rust_names::variant(&node.id))?;
            if mode == Mode::Skeleton && !seen_variants.insert(variant.clone()) {
                return None;
            }
            let input = node.input.as_deref().map(|path| {
                let written = spans.nodes.get(at).map_or(&[][..], |s| s.input.as_slice());
                paths.place(path, written)
            });
            let writes =
                (node.writes.is_some() && node.graph.is_none() && blueprint.state.is_some())
                    .then(|| format!("{variant}Writes"));
            Some(NodeNames {
                node,
                at,
                method,
                variant,
                input,
                writes,
            })
        })
        .collect()
}

/// The module's first items: its state alias, its name, the names its code uses, and what a
/// handler returns.
fn preamble(
    code: &mut Lines<'_>,
    blueprint: &Blueprint,
    spans: &GraphSpans,
    paths: &mut Paths<'_>,
    krate: &str,
    routes_or_sends: bool,
) {
    if let Some(path) = &blueprint.state {
        // The path's tokens stand where the source writes it, so that an unknown type is
        // reported there, not at the macro call.
        let ty = paths.place(path, &spans.state);
        // A state type called `State` itself: inside the module the name is the alias's own
        // (`pub type State = State;` is a cycle), so it is named where the module sees it.
        let outside = if names_state(path) { "super::" } else { "" };
        put!(code, "#[allow(unused_imports)]");
        put!(code, "use super::*;");
        code.doc_line(format_args!(
            " The state this graph runs on (`state {path};`)."
        ));
        put!(code, "pub type State = {outside}{ty};");
        code.state_alias_written();
    }
    code.doc("The graph's name.");
    put!(code, "pub const NAME: &str = {};", Lit(&blueprint.name));
    put!(code, "use ::std::sync::Arc;");
    put!(code, "use {krate}::NodeContext as Context;");
    // Routers see the nodes' visits; a graph without one has no use for the name.
    if routes_or_sends {
        put!(code, "use {krate}::Visits;");
    }
    if blueprint.state.is_some() {
        code.doc("What a handler returns: its result, or why it failed.");
        put!(code, "pub type NodeOutput = {krate}::NodeOutput<State>;");
    } else {
        code.doc("What a handler returns for the state `S` its handlers choose.");
        put!(code, "pub type NodeOutput<S> = {krate}::NodeOutput<S>;");
    }
}

/// Whether a state path's first segment is `State`, the name the module's alias takes.
fn names_state(path: &str) -> bool {
    let first = path.split("::").next().unwrap_or(path);
    first.split('<').next().unwrap_or(first).trim() == "State"
}

/// `build` and `blueprint`: in a skeleton, bodies that are `unreachable!`.
/// What `build()` wires besides the nodes: routers, senders, subgraphs and typed pauses.
struct Wiring<'a> {
    routes: &'a [Route<'a>],
    sends: &'a [SendEdge<'a>],
    subgraphs: &'a [SubgraphNode],
    sites: &'a [answers::Site<'a>],
}

fn entry_points(
    code: &mut Lines<'_>,
    blueprint: &Blueprint,
    names: &Names<'_>,
    wiring: &Wiring<'_>,
    mode: Mode,
) {
    let krate = names.krate;
    code.doc(
        "Builds the graph on `handlers`. Infallible: the `.graph` source was validated when\n\
         this code was generated.",
    );
    // A skeleton's build asks for no `Mappings`: the user's code may not have them when the
    // graph's error is what made a subgraph look mapped.
    let bound = if mode == Mode::Full && wiring.subgraphs.iter().any(|s| s.mapped.is_some()) {
        "Handlers + Mappings"
    } else {
        "Handlers"
    };
    put!(
        code,
        "pub fn build<H: {bound}>(handlers: H) -> {krate}::CompiledGraph<{}> {{",
        names.build_state
    );
    match mode {
        Mode::Skeleton => {
            put!(code, "let _ = handlers;");
            put!(code, "{UNREACHABLE}");
        }
        Mode::Full => build_body(code, names, wiring),
    }
    put!(code, "}}");
    code.doc(
        "The topology and settings as the `.graph` source declares them: what\n\
         `trellis export --format json` prints (serialize it to get the same JSON), and what\n\
         [`build`] hands to `GraphBuilder::from_blueprint`.",
    );
    put!(
        code,
        "pub fn blueprint() -> {krate}::blueprint::Blueprint {{"
    );
    match mode {
        Mode::Full => blueprint::construct(code, blueprint, krate),
        Mode::Skeleton => put!(code, "{UNREACHABLE}"),
    }
    put!(code, "}}");
}

/// The graph's own docs, then its Mermaid diagram.
pub(super) fn module_doc(code: &mut Lines<'_>, blueprint: &Blueprint, mode: Mode) {
    code.doc(blueprint.doc.as_deref().unwrap_or_default());
    if blueprint
        .doc
        .as_deref()
        .is_some_and(|doc| doc.lines().next().is_some())
    {
        code.doc_line(format_args!(""));
    }
    if mode == Mode::Skeleton {
        return;
    }
    let links = trellis_graph::export::mermaid_links(blueprint);
    if links > trellis_graph::export::MERMAID_MAX_EDGES {
        // Mermaid would draw an error instead; and the lines would cost most of the time a
        // large graph's code takes to generate.
        code.doc_line(format_args!(
            " The graph's diagram is left out: {links} links, more than Mermaid draws ({}); \
             `trellis export --format mermaid` prints it.",
            trellis_graph::export::MERMAID_MAX_EDGES
        ));
    } else {
        let diagram = trellis_graph::export::to_mermaid(blueprint);
        code.doc("```mermaid");
        for line in diagram.lines() {
            code.doc_line(format_args!(" {line}"));
        }
        code.doc("```");
    }
}

#[cfg(test)]
mod tests {
    use super::names_state;

    #[test]
    fn only_a_path_that_starts_with_state_is_named_from_outside() {
        for path in ["State", "State<u8>", "State <u8>"] {
            assert!(names_state(path), "{path}");
        }
        for path in ["my::State", "Work", "States", "crate::State", "Vec<State>"] {
            assert!(!names_state(path), "{path}");
        }
    }
}
