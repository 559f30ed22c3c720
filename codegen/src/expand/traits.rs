//! The traits the user implements: `Handlers` (nodes, routers, senders, subgraphs) and
//! `Mappings` (the states of subgraphs on another state type).

use trellis_dsl::Blueprint;
use trellis_dsl::rust_names;

use crate::text::{Lines, Lit, put};

use super::shape::{Mapped, Route, SendEdge, SubgraphNode};
use super::{Mode, Names, NodeNames, UNREACHABLE};

/// A node method's future: declared as `-> impl Future + Send` (implemented with `async fn`),
/// not through `#[async_trait]`, whose expansion rust-analyzer does not complete from.
const FUTURE: &str = "::core::future::Future";
const SEND: &str = "::core::marker::Send";

/// A trait method's end: none in the full module; in a skeleton, a default body, so that an
/// implementation missing a method adds no error while the graph's own errors stand.
pub(super) fn method(code: &mut Lines<'_>, mode: Mode, signature: std::fmt::Arguments<'_>) {
    end(code, mode, signature, false);
}

/// A node method's end: as [`method`], a skeleton's default body being a future.
fn node_method(code: &mut Lines<'_>, mode: Mode, signature: std::fmt::Arguments<'_>) {
    end(code, mode, signature, true);
}

fn end(code: &mut Lines<'_>, mode: Mode, signature: std::fmt::Arguments<'_>, future: bool) {
    match mode {
        Mode::Full => put!(code, "{signature};"),
        Mode::Skeleton => {
            put!(code, "{signature} {{");
            if future {
                put!(code, "async {{ {UNREACHABLE} }}");
            } else {
                put!(code, "{UNREACHABLE}");
            }
            put!(code, "}}");
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn handlers(
    code: &mut Lines<'_>,
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
        " What the nodes and routers of `{}` do: implement it (node methods as `async fn`), then [`build`] the graph.",
        blueprint.name
    ));
    // A skeleton's default bodies use no argument.
    if mode == Mode::Skeleton {
        put!(code, "#[allow(unused_variables)]");
    }
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
        // A node with `writes` returns its own update type, which sets only those fields.
        let own_output;
        let output = match &n.writes {
            Some(ty) => {
                own_output = format!("Written<{ty}>");
                own_output.as_str()
            }
            None => output,
        };
        match &n.input {
            Some(ty) => node_method(
                code,
                mode,
                format_args!(
                    "fn {method_name}(&self, state: Arc<{state}>, input: {ty}, ctx: &mut Context) -> impl {FUTURE}<Output = {output}> + {SEND}"
                ),
            ),
            None => node_method(
                code,
                mode,
                format_args!(
                    "fn {method_name}(&self, state: Arc<{state}>, ctx: &mut Context) -> impl {FUTURE}<Output = {output}> + {SEND}"
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
pub(super) fn mappings(
    code: &mut Lines<'_>,
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
