//! One blueprint → one Rust module, written as text: node enum, route enums, send enums,
//! handler trait, `build`, `blueprint`.

use std::collections::HashSet;

use trellis_dsl::rust_names;
use trellis_dsl::{Blueprint, EdgeKind, Endpoint, GraphSpans, Node};
use trellis_graph::FnvBuildHasher;

use crate::blueprint;
use crate::paths::Paths;
use crate::text::{Code, Lit, put};

/// Whether the blueprint is valid (full code) or has errors (a skeleton of the same shape, so
/// code that names the module does not drown the real error in follow-on errors).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Full,
    Skeleton,
}

/// Whether Rust reserves `word`; a node with such a name becomes a raw identifier (`r#type`).
/// A `match`, not a list searched word by word: it is asked twice for every node.
fn is_keyword(word: &str) -> bool {
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
fn ident_owned(name: String) -> Option<String> {
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
const UNREACHABLE: &str =
    "::core::unreachable!(\"the graph has errors; see the compile errors above\")";

/// A node the generated code can name: its declaration, its method and its variant, and the
/// type of the input its sent branches carry (`input T;`), where the source writes it.
struct NodeNames<'a> {
    node: &'a Node,
    method: String,
    variant: String,
    input: Option<String>,
}

/// A subgraph node (`graph Research;`): its position, the method that builds its child, and
/// for a child on another state type the mapping methods and that type.
struct SubgraphNode {
    at: usize,
    method: String,
    /// `None` on the parent's own state type; else the child's state and the mapping methods.
    mapped: Option<Mapped>,
}

/// A subgraph on another state type: that type, and the methods that map to it and back.
struct Mapped {
    child: String,
    input: String,
    output: String,
}

/// The subgraph nodes of `blueprint`, with their child's state type: a graph of this file on
/// the same state (or naming none) runs on the parent's; another file's graph
/// (`graph path::Research;`) is the module `path::research`, on its `State`.
fn subgraph_nodes(
    blueprint: &Blueprint,
    spans: &GraphSpans,
    module_graphs: &[Blueprint],
    paths: &mut Paths<'_>,
) -> Vec<SubgraphNode> {
    let mut found = Vec::new();
    for (at, node) in blueprint.nodes.iter().enumerate() {
        let Some(path) = node.graph.as_deref() else {
            continue;
        };
        let Some(method) = ident(&node.id) else {
            continue;
        };
        let state = match path.rsplit_once("::") {
            None => {
                let Some(child) = module_graphs.iter().find(|g| g.name == path) else {
                    continue;
                };
                match &child.state {
                    Some(state) if Some(state) != blueprint.state.as_ref() => {
                        Some(format!("super::{}::State", rust_names::module(&child.name)))
                    }
                    _ => None,
                }
            }
            Some((prefix, name)) => Some(format!("{prefix}::{}::State", rust_names::module(name))),
        };
        let mapped = state.map(|state| Mapped {
            child: paths.place_at(&state, spans.nodes.get(at).and_then(|s| s.graph)),
            input: format!("{method}_input"),
            output: format!("{method}_output"),
        });
        found.push(SubgraphNode { at, method, mapped });
    }
    found
}

/// A send edge: its method, its enum, and per target the variant, the node and its input type.
struct SendEdge<'a> {
    /// The edge's position in the blueprint.
    edge: usize,
    from: &'a Endpoint,
    method: String,
    enum_name: String,
    variants: Vec<(String, String, String)>,
}

/// A conditional edge: its router method, its route enum and the enum's variants.
struct Route<'a> {
    /// The edge's position in the blueprint.
    edge: usize,
    from: &'a Endpoint,
    method: String,
    enum_name: String,
    /// (variant, target as the runtime names it)
    variants: Vec<(String, String)>,
}

/// How the module names things that depend on whether the source names a state type.
struct Names<'a> {
    krate: &'a str,
    /// The state in the trait: `State`, or the trait's own `Self::State`.
    trait_state: &'static str,
    /// The state in `build` and the adapter: `State`, or `H::State`.
    build_state: &'static str,
    /// What a handler returns, in the trait.
    output: &'static str,
}

pub(crate) fn graph(
    code: &mut Code<'_>,
    blueprint: &Blueprint,
    spans: &GraphSpans,
    module_graphs: &[Blueprint],
    krate: &str,
    paths: &mut Paths<'_>,
    mode: Mode,
) {
    let module = rust_names::module(&blueprint.name);
    let name = &blueprint.name;

    // In skeleton mode the blueprint may hold names that clash or are not identifiers: keep the
    // first of each so the skeleton itself compiles. In full mode the name rules (E0106) have
    // kept them apart.
    let mut seen_variants: HashSet<String, FnvBuildHasher> = HashSet::default();
    let nodes: Vec<NodeNames<'_>> = blueprint
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
            Some(NodeNames {
                node,
                method,
                variant,
                input,
            })
        })
        .collect();
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
    put!(code, "pub mod {module} {{");
    if let Some(path) = &blueprint.state {
        // The path's tokens stand where the source writes it, so that an unknown type is
        // reported there, not at the macro call.
        let ty = paths.place(path, &spans.state);
        put!(code, "#[allow(unused_imports)]");
        put!(code, "use super::*;");
        code.doc_line(format_args!(
            " The state this graph runs on (`state {path};`)."
        ));
        put!(code, "pub type State = {ty};");
        code.state_alias_written();
    }
    code.doc("The graph's name.");
    put!(code, "pub const NAME: &str = {};", Lit(name));
    put!(code, "use ::std::sync::Arc;");
    put!(code, "use {krate}::NodeContext as Context;");
    // Routers see the nodes' visits; a graph without one has no use for the name.
    if !routes.is_empty() || !sends.is_empty() {
        put!(code, "use {krate}::Visits;");
    }
    if state_given {
        code.doc("What a handler returns: its result, or why it failed.");
        put!(code, "pub type NodeOutput = {krate}::NodeOutput<State>;");
    } else {
        code.doc("What a handler returns for the state `S` its handlers choose.");
        put!(code, "pub type NodeOutput<S> = {krate}::NodeOutput<S>;");
    }
    node_enum(code, name, &nodes);
    for route in &routes {
        route_enum(code, route, mode);
    }
    for send in &sends {
        send_enum(code, send);
    }
    handlers(
        code, blueprint, &names, &nodes, &routes, &sends, &subgraphs, mode,
    );
    mappings(code, blueprint, &names, &subgraphs, mode);
    if mode == Mode::Full {
        adapter(code, &names, &nodes);
    }

    code.doc(
        "Builds the graph on `handlers`. Infallible: the `.graph` source was validated when\n\
         this code was generated.",
    );
    // A skeleton's build asks for no `Mappings`: the user's code may not have them when the
    // graph's error is what made a subgraph look mapped.
    let bound = if mode == Mode::Full && subgraphs.iter().any(|s| s.mapped.is_some()) {
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
        Mode::Full => build_body(code, &names, &routes, &sends, &subgraphs),
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
    put!(code, "}}");
}

/// The graph's own docs, then its Mermaid diagram.
fn module_doc(code: &mut Code<'_>, blueprint: &Blueprint, mode: Mode) {
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

/// Which endpoints a router or a send may name. While the graph has errors, every name stands as
/// the source writes it, declared or not, so the user's code that names it adds no error of its
/// own; in full mode only the declared nodes and END (which the rules have already made every
/// endpoint, for a checked module).
enum Declared<'a> {
    Any,
    Nodes(HashSet<&'a str, FnvBuildHasher>),
}

impl<'a> Declared<'a> {
    fn new(blueprint: &Blueprint, nodes: &[NodeNames<'a>], mode: Mode) -> Self {
        // Only a router or a send asks: most graphs' nodes need no set.
        let asked = blueprint
            .edges
            .iter()
            .any(|edge| matches!(edge.kind, EdgeKind::Conditional | EdgeKind::Each));
        if mode == Mode::Skeleton || !asked {
            return Declared::Any;
        }
        let mut ids = HashSet::with_capacity_and_hasher(nodes.len(), FnvBuildHasher::default());
        ids.extend(nodes.iter().map(|n| n.node.id.as_str()));
        Declared::Nodes(ids)
    }

    fn names(&self, endpoint: &Endpoint) -> bool {
        match (self, endpoint) {
            (Declared::Any, _) => true,
            (Declared::Nodes(ids), Endpoint::Node(id)) => ids.contains(id.as_str()),
            (Declared::Nodes(_), Endpoint::End) => true,
            (Declared::Nodes(_), Endpoint::Start) => false,
        }
    }
}

/// The routers' edges: one route enum and method per conditional edge, with a variant per
/// target and per endpoint of `meant` (a skeleton's declared nodes).
fn routes<'b>(
    blueprint: &'b Blueprint,
    declared: &Declared<'_>,
    meant: &[Endpoint],
) -> Vec<Route<'b>> {
    let mut route_names = HashSet::new();
    let mut routes = Vec::new();
    let conditionals = blueprint
        .edges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == EdgeKind::Conditional);
    for (edge_at, edge) in conditionals {
        let from_name = match &edge.from {
            Endpoint::Start => "start".to_owned(),
            Endpoint::Node(id) if declared.names(&edge.from) => id.clone(),
            _ => continue,
        };
        let (Some(method), Some(enum_name)) = (
            ident(&format!("route_{from_name}")),
            ident(&format!("{}Route", rust_names::variant(&from_name))),
        ) else {
            continue;
        };
        if !route_names.insert(from_name) {
            continue;
        }
        let mut variants = Vec::new();
        let mut seen = HashSet::new();
        let targets = edge.targets.iter().filter(|t| declared.names(t));
        for target in targets.chain(meant) {
            let name = match target {
                Endpoint::End => "End".to_owned(),
                Endpoint::Node(id) => rust_names::variant(id),
                Endpoint::Start => continue,
            };
            if let Some(variant) = ident(&name).filter(|_| seen.insert(name.clone())) {
                variants.push((variant, target.as_str().to_owned()));
            }
        }
        routes.push(Route {
            edge: edge_at,
            from: &edge.from,
            method,
            enum_name,
            variants,
        });
    }
    routes
}

/// One send enum and method per send edge: a variant per target that carries an input.
fn sends<'b>(
    blueprint: &'b Blueprint,
    nodes: &[NodeNames<'_>],
    declared: &Declared<'_>,
) -> Vec<SendEdge<'b>> {
    let mut send_names = HashSet::new();
    let mut sends = Vec::new();
    for (edge_at, edge) in blueprint.edges.iter().enumerate() {
        if edge.kind != EdgeKind::Each {
            continue;
        }
        let from_name = match &edge.from {
            Endpoint::Start => "start".to_owned(),
            Endpoint::Node(id) if declared.names(&edge.from) => id.clone(),
            _ => continue,
        };
        let (Some(method), Some(enum_name)) = (
            ident(&format!("send_{from_name}")),
            ident(&format!("{}Send", rust_names::variant(&from_name))),
        ) else {
            continue;
        };
        if !send_names.insert(from_name) {
            continue;
        }
        let mut variants = Vec::new();
        let mut seen = HashSet::new();
        for target in &edge.targets {
            let Endpoint::Node(id) = target else { continue };
            let Some(names) = nodes.iter().find(|n| n.node.id == *id) else {
                continue;
            };
            // Without its type (E0210), a target has no variant: only a skeleton gets here.
            let Some(input) = &names.input else { continue };
            if seen.insert(id.clone()) {
                variants.push((names.variant.clone(), id.clone(), input.clone()));
            }
        }
        sends.push(SendEdge {
            edge: edge_at,
            from: &edge.from,
            method,
            enum_name,
            variants,
        });
    }
    sends
}

fn node_enum(code: &mut Code<'_>, graph: &str, nodes: &[NodeNames<'_>]) {
    code.doc_line(format_args!(
        " The nodes of `{graph}`, in declaration order."
    ));
    put!(code, "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]");
    put!(code, "pub enum Node {{");
    for n in nodes {
        code.boundary();
        match n.node.doc.as_deref() {
            Some(doc) if doc.lines().next().is_some() => code.doc(doc),
            _ => code.doc_line(format_args!(" `{}`", n.node.id)),
        }
        put!(code, "{},", n.variant);
    }
    put!(code, "}}");
    put!(code, "impl Node {{");
    code.doc("Every node, in declaration order.");
    if nodes.is_empty() {
        put!(code, "pub const ALL: [Node; 0] = [];");
    } else {
        put!(code, "pub const ALL: [Node; {}] = [", nodes.len());
        for n in nodes {
            code.boundary();
            put!(code, "Node::{},", n.variant);
        }
        put!(code, "];");
    }
    code.doc("The node's name in the graph.");
    put!(code, "pub const fn as_str(self) -> &'static str {{");
    if nodes.is_empty() {
        put!(code, "match self {{}}");
    } else {
        put!(code, "match self {{");
        for n in nodes {
            code.boundary();
            put!(code, "Node::{} => {},", n.variant, Lit(&n.node.id));
        }
        put!(code, "}}");
    }
    put!(code, "}}");
    put!(code, "}}");
    put!(code, "impl ::core::fmt::Display for Node {{");
    put!(
        code,
        "fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {{"
    );
    put!(code, "f.write_str(self.as_str())");
    put!(code, "}}");
    put!(code, "}}");
}

fn route_enum(code: &mut Code<'_>, route: &Route<'_>, mode: Mode) {
    code.doc_line(format_args!(
        " Where `{}` may lead: its router returns one of these, so it cannot name an undeclared target.",
        route.from.as_str()
    ));
    // A skeleton names more targets than its routers use.
    if mode == Mode::Skeleton {
        put!(code, "#[allow(dead_code)]");
    }
    put!(code, "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]");
    put!(code, "pub enum {} {{", route.enum_name);
    for (variant, target) in &route.variants {
        if target == "__end__" {
            code.doc("END: the branch ends.");
        } else {
            code.doc_line(format_args!(" To `{target}`."));
        }
        put!(code, "{variant},");
    }
    put!(code, "}}");
    put!(code, "impl {} {{", route.enum_name);
    code.doc("The target's name, as the runtime knows it (`__end__` for END).");
    put!(code, "pub const fn as_str(self) -> &'static str {{");
    // An enum with no variant (a skeleton's) has no arm to write.
    if route.variants.is_empty() {
        put!(code, "match self {{}}");
    } else {
        put!(code, "match self {{");
        for (variant, target) in &route.variants {
            put!(code, "Self::{variant} => {},", Lit(target));
        }
        put!(code, "}}");
    }
    put!(code, "}}");
    put!(code, "}}");
}

fn send_enum(code: &mut Code<'_>, send: &SendEdge<'_>) {
    code.doc_line(format_args!(
        " What `{}` may send: one branch per value, running the variant's node with the value as its input.",
        send.from.as_str()
    ));
    put!(code, "#[derive(Clone, Debug)]");
    put!(code, "pub enum {} {{", send.enum_name);
    for (variant, target, ty) in &send.variants {
        code.doc_line(format_args!(" A branch running `{target}`."));
        put!(code, "{variant}({ty}),");
    }
    put!(code, "}}");
    put!(code, "impl {} {{", send.enum_name);
    code.doc("The node the branch runs.");
    put!(code, "pub const fn node(&self) -> &'static str {{");
    if send.variants.is_empty() {
        put!(code, "match *self {{}}");
    } else {
        put!(code, "match self {{");
        for (variant, target, _) in &send.variants {
            put!(code, "Self::{variant}(_) => {},", Lit(target));
        }
        put!(code, "}}");
    }
    put!(code, "}}");
    put!(code, "}}");
}

/// A trait method's end: none in the full module; in a skeleton, a default body, so that an
/// implementation missing a method adds no error while the graph's own errors stand.
fn method(code: &mut Code<'_>, mode: Mode, signature: std::fmt::Arguments<'_>) {
    match mode {
        Mode::Full => put!(code, "{signature};"),
        Mode::Skeleton => {
            put!(code, "{signature} {{");
            put!(code, "{UNREACHABLE}");
            put!(code, "}}");
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn handlers(
    code: &mut Code<'_>,
    blueprint: &Blueprint,
    names: &Names<'_>,
    nodes: &[NodeNames<'_>],
    routes: &[Route<'_>],
    sends: &[SendEdge<'_>],
    subgraphs: &[SubgraphNode],
    mode: Mode,
) {
    let (krate, state, output) = (names.krate, names.trait_state, names.output);
    code.doc_line(format_args!(
        " What the nodes and routers of `{}` do: implement it (with `#[trellis::async_trait]`), then [`build`] the graph.",
        blueprint.name
    ));
    // A skeleton's default bodies use no argument.
    if mode == Mode::Skeleton {
        put!(code, "#[allow(unused_variables)]");
    }
    put!(code, "#[{krate}::async_trait]");
    put!(
        code,
        "pub trait Handlers: ::core::marker::Send + ::core::marker::Sync + 'static {{"
    );
    if blueprint.state.is_none() {
        code.doc("The state the graph runs on (the `.graph` file names none).");
        put!(code, "type State: {krate}::GraphState;");
    }
    for n in nodes.iter().filter(|n| n.node.graph.is_none()) {
        code.boundary();
        match n.node.doc.as_deref() {
            Some(doc) if doc.lines().next().is_some() => code.doc(doc),
            _ => code.doc_line(format_args!(" Runs node `{}`.", n.node.id)),
        }
        // Short on purpose (`Arc`, `Context`, `NodeOutput` are the module's own names): the
        // generated code stays readable however many nodes the graph has.
        let method_name = &n.method;
        match &n.input {
            Some(ty) => method(
                code,
                mode,
                format_args!(
                    "async fn {method_name}(&self, state: Arc<{state}>, input: {ty}, ctx: &mut Context) -> {output}"
                ),
            ),
            None => method(
                code,
                mode,
                format_args!(
                    "async fn {method_name}(&self, state: Arc<{state}>, ctx: &mut Context) -> {output}"
                ),
            ),
        }
    }
    for route in routes {
        code.doc_line(format_args!(
            " Picks where `{}` leads, from the state merged after its step.",
            route.from.as_str()
        ));
        method(
            code,
            mode,
            format_args!(
                "fn {}(&self, state: &{state}, visits: &Visits<'_>) -> {}",
                route.method, route.enum_name
            ),
        );
    }
    for send in sends {
        code.doc_line(format_args!(
            " The branches `{}` sends, from the state merged after its step (none ends its branch).",
            send.from.as_str()
        ));
        method(
            code,
            mode,
            format_args!(
                "fn {}(&self, state: &{state}, visits: &Visits<'_>) -> ::std::vec::Vec<{}>",
                send.method, send.enum_name
            ),
        );
    }
    for sub in subgraphs {
        let node = &blueprint.nodes[sub.at];
        code.doc_line(format_args!(
            " The graph node `{}` runs (`graph {};`), built once by [`build`]: its module's `build` on handlers of its own.",
            node.id,
            node.graph.as_deref().unwrap_or_default()
        ));
        let sub_method = &sub.method;
        match &sub.mapped {
            None => method(
                code,
                mode,
                format_args!("fn {sub_method}(&self) -> {krate}::CompiledGraph<{state}>"),
            ),
            Some(Mapped { child, .. }) => method(
                code,
                mode,
                format_args!("fn {sub_method}(&self) -> {krate}::CompiledGraph<{child}>"),
            ),
        }
    }
    put!(code, "}}");
}

/// The `Mappings` trait: for each subgraph on another state type, the methods that map the
/// state to the child's and the child's final state back to an update. It is a trait apart
/// from `Handlers`, and `build` asks for it by a bound that names every state it maps
/// between (its `States` parameter): when one of those types does not resolve (a misspelt
/// `state`, which also makes a same-state subgraph look mapped), rustc reports that type and
/// drops the bound, where methods missing from `Handlers` would add an error of their own.
fn mappings(
    code: &mut Code<'_>,
    blueprint: &Blueprint,
    names: &Names<'_>,
    subgraphs: &[SubgraphNode],
    mode: Mode,
) {
    let mapped: Vec<(&SubgraphNode, &Mapped)> = subgraphs
        .iter()
        .filter_map(|sub| sub.mapped.as_ref().map(|m| (sub, m)))
        .collect();
    if mapped.is_empty() {
        return;
    }
    let (krate, state) = (names.krate, names.trait_state);
    // A generic graph's state is `Self::State`, which a parameter's default cannot name.
    let mut states: Vec<&str> = Vec::new();
    if names.trait_state == "State" {
        states.push("State");
    }
    for (_, m) in &mapped {
        if !states.contains(&m.child.as_str()) {
            states.push(&m.child);
        }
    }
    let states = match states.as_slice() {
        [one] => format!("({one},)"),
        many => format!("({})", many.join(", ")),
    };
    code.doc(
        "How the handlers map the state of each subgraph that runs on another state type:\n\
         implement it beside [`Handlers`]. `States` names the types it maps between; leave it\n\
         to its default.",
    );
    if mode == Mode::Skeleton {
        put!(code, "#[allow(unused_variables)]");
    }
    let module = rust_names::module(&blueprint.name);
    let ids: Vec<String> = mapped
        .iter()
        .map(|(sub, _)| format!("`{}`", blueprint.nodes[sub.at].id))
        .collect();
    let methods: Vec<String> = mapped
        .iter()
        .flat_map(|(_, m)| [format!("`{}`", m.input), format!("`{}`", m.output)])
        .collect();
    let message = format!(
        "`{{Self}}` does not map the states of the subgraphs of `{}`",
        blueprint.name
    );
    let label = format!(
        "{} {} on another state type: `{module}::build` needs `{module}::Mappings`",
        ids.join(", "),
        if ids.len() == 1 { "runs" } else { "run" }
    );
    let note = format!(
        "implement `{module}::Mappings` for `{{Self}}`: {}",
        methods.join(", ")
    );
    put!(code, "#[diagnostic::on_unimplemented(");
    put!(code, "message = {},", Lit(&message));
    put!(code, "label = {},", Lit(&label));
    put!(code, "note = {}", Lit(&note));
    put!(code, ")]");
    put!(code, "pub trait Mappings<States = {states}>: Handlers {{");
    for (
        sub,
        Mapped {
            child,
            input,
            output,
        },
    ) in mapped
    {
        code.doc_line(format_args!(
            " The input of the graph `{}` runs, from the state.",
            blueprint.nodes[sub.at].id
        ));
        method(
            code,
            mode,
            format_args!("fn {input}(&self, state: &{state}) -> {child}"),
        );
        code.doc_line(format_args!(
            " The update `{}` makes, from the state and its graph's final state.",
            blueprint.nodes[sub.at].id
        ));
        method(
            code,
            mode,
            format_args!(
                "fn {output}(&self, state: &{state}, child: {child}) -> <{state} as {krate}::GraphState>::Update"
            ),
        );
    }
    put!(code, "}}");
}

/// The adapter from the trait to the runtime's `Node`: one boxed future per activation.
fn adapter(code: &mut Code<'_>, names: &Names<'_>, nodes: &[NodeNames<'_>]) {
    let (krate, state) = (names.krate, names.build_state);
    let output = if state == "State" {
        "NodeOutput"
    } else {
        "NodeOutput<H::State>"
    };
    code.doc("Runs one node of the graph through the user's handlers.");
    put!(code, "struct Adapter<H>(Arc<H>, Node);");
    put!(
        code,
        "impl<H: Handlers> {krate}::Node<{state}> for Adapter<H> {{"
    );
    put!(code, "fn run<'life0, 'life1, 'async_trait>(");
    put!(code, "&'life0 self,");
    put!(code, "state: Arc<{state}>,");
    put!(code, "ctx: &'life1 mut Context,");
    put!(code, ") -> ::core::pin::Pin<");
    put!(code, "    ::std::boxed::Box<");
    put!(
        code,
        "        dyn ::core::future::Future<Output = {output}> + ::core::marker::Send + 'async_trait,"
    );
    put!(code, "    >,");
    put!(code, ">");
    put!(code, "where");
    put!(code, "    'life0: 'async_trait,");
    put!(code, "    'life1: 'async_trait,");
    put!(code, "    Self: 'async_trait,");
    put!(code, "{{");
    if nodes.is_empty() {
        put!(code, "match self.1 {{}}");
    } else {
        put!(code, "match self.1 {{");
        for n in nodes {
            code.boundary();
            let (method, variant) = (&n.method, &n.variant);
            if n.node.graph.is_some() {
                // `build` runs the child graph here instead (`set_subgraph`).
                put!(code, "Node::{variant} => {{");
                put!(code, "let _ = (state, ctx);");
                put!(code, "::std::boxed::Box::pin(async move {{");
                put!(
                    code,
                    "::core::result::Result::Err({krate}::NodeError::msg({}))",
                    Lit(&format!(
                        "node `{}` runs a graph; build() sets it",
                        n.node.id
                    ))
                );
                put!(code, "}})");
                put!(code, "}}");
                continue;
            }
            match &n.input {
                // A sent branch's input, read as the declared type; a mismatch fails the
                // branch.
                Some(ty) => {
                    put!(code, "Node::{variant} => match ctx.input::<{ty}>() {{");
                    put!(
                        code,
                        "::core::result::Result::Ok(input) => self.0.{method}(state, input, ctx),"
                    );
                    put!(code, "::core::result::Result::Err(error) => {{");
                    put!(
                        code,
                        "::std::boxed::Box::pin(async move {{ ::core::result::Result::Err(error) }})"
                    );
                    put!(code, "}}");
                    put!(code, "}},");
                }
                None => put!(code, "Node::{variant} => self.0.{method}(state, ctx),"),
            }
        }
        put!(code, "}}");
    }
    put!(code, "}}");
    put!(code, "}}");
}

fn build_body(
    code: &mut Code<'_>,
    names: &Names<'_>,
    routes: &[Route<'_>],
    sends: &[SendEdge<'_>],
    subgraphs: &[SubgraphNode],
) {
    let (krate, state) = (names.krate, names.build_state);
    put!(code, "let handlers = Arc::new(handlers);");
    let binding = if sends.is_empty() && subgraphs.is_empty() {
        "let builder"
    } else {
        "let mut builder"
    };
    put!(
        code,
        "{binding} = {krate}::GraphBuilder::<{state}>::from_blueprint("
    );
    put!(code, "blueprint(),");
    put!(
        code,
        "|at, _| Adapter(Arc::clone(&handlers), Node::ALL[at]),"
    );
    // One router closure for every conditional edge, told apart by the edge's position: a
    // single closure type, as `from_blueprint` wants.
    if routes.is_empty() {
        put!(code, "|_, _| |_: &{state}, _: &{krate}::Visits<'_>| \"\",");
    } else {
        put!(code, "|edge, _| {{");
        put!(code, "let routers = Arc::clone(&handlers);");
        put!(
            code,
            "move |state: &{state}, visits: &Visits<'_>| -> &'static str {{"
        );
        put!(code, "match edge {{");
        for route in routes {
            put!(
                code,
                "{} => routers.{}(state, visits).as_str(),",
                route.edge,
                route.method
            );
        }
        put!(code, "// Every conditional edge has its arm.");
        put!(code, "_ => \"\",");
        put!(code, "}}");
        put!(code, "}}");
        put!(code, "}},");
    }
    put!(code, ");");
    for send in sends {
        put!(code, "let senders = Arc::clone(&handlers);");
        put!(
            code,
            "builder.set_send({}, move |state: &{state}, visits: &Visits<'_>| {{",
            send.edge
        );
        let enum_name = &send.enum_name;
        if send.variants.is_empty() {
            put!(
                code,
                "senders.{}(state, visits).into_iter().map(|send: {enum_name}| match send {{}}).collect()",
                send.method
            );
        } else {
            put!(
                code,
                "senders.{}(state, visits).into_iter().map(|send| match send {{",
                send.method
            );
            for (variant, target, _) in &send.variants {
                put!(
                    code,
                    "{enum_name}::{variant}(input) => {krate}::SendTo::new({}, &input),",
                    Lit(target)
                );
            }
            put!(code, "}}).collect()");
        }
        put!(code, "}});");
    }
    for sub in subgraphs {
        match &sub.mapped {
            None => put!(
                code,
                "builder.set_subgraph({}, handlers.{}());",
                sub.at,
                sub.method
            ),
            Some(Mapped {
                child,
                input,
                output,
            }) => {
                put!(
                    code,
                    "let (inputs, outputs) = (Arc::clone(&handlers), Arc::clone(&handlers));"
                );
                put!(code, "builder.set_subgraph_mapped(");
                put!(code, "{},", sub.at);
                put!(code, "handlers.{}(),", sub.method);
                put!(code, "{krate}::MapFn(");
                put!(code, "move |state: &{state}| inputs.{input}(state),");
                put!(
                    code,
                    "move |state: &{state}, child: {child}| outputs.{output}(state, child),"
                );
                put!(code, "),");
                put!(code, ");");
            }
        }
    }
    put!(code, "match builder.compile() {{");
    put!(code, "::core::result::Result::Ok(graph) => graph,");
    put!(
        code,
        "// The same rules (`trellis-graph`) were checked when this code was generated."
    );
    put!(
        code,
        "::core::result::Result::Err(error) => ::core::unreachable!("
    );
    put!(
        code,
        "\"graph `{{}}` was validated when its code was generated: {{}}\", NAME, error"
    );
    put!(code, "),");
    put!(code, "}}");
}
