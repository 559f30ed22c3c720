//! `build()`, and the adapter from the user's `Handlers` to the runtime's `Node`.

use crate::text::{Lines, Lit, put};

use super::shape::{Mapped, SendEdge, SubgraphNode};
use super::{Names, NodeNames, Wiring};

/// The adapter from the trait to the runtime's `Node`: one boxed future per activation.
pub(super) fn adapter(code: &mut Lines<'_>, names: &Names<'_>, nodes: &[NodeNames<'_>]) {
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
            // A node with `writes` returns its own update type: made the state's here.
            let run = |call: &str| match &n.writes {
                Some(ty) => format!(
                    "::std::boxed::Box::pin(async move {{ {call}.await.map(|result| result.map_update({ty}::into_update)) }})"
                ),
                None => format!("::std::boxed::Box::pin({call})"),
            };
            match &n.input {
                // A sent branch's input, read as the declared type; a mismatch fails the
                // branch.
                Some(ty) => {
                    put!(code, "Node::{variant} => match ctx.input::<{ty}>() {{");
                    put!(
                        code,
                        "::core::result::Result::Ok(input) => {},",
                        run(&format!("self.0.{method}(state, input, ctx)"))
                    );
                    put!(code, "::core::result::Result::Err(error) => {{");
                    put!(
                        code,
                        "::std::boxed::Box::pin(async move {{ ::core::result::Result::Err(error) }})"
                    );
                    put!(code, "}}");
                    put!(code, "}},");
                }
                None => put!(
                    code,
                    "Node::{variant} => {},",
                    run(&format!("self.0.{method}(state, ctx)"))
                ),
            }
        }
        put!(code, "}}");
    }
    put!(code, "}}");
    put!(code, "}}");
}

pub(super) fn build_body(code: &mut Lines<'_>, names: &Names<'_>, wiring: &Wiring<'_>) {
    let (routes, sends, subgraphs) = (wiring.routes, wiring.sends, wiring.subgraphs);
    let (krate, state) = (names.krate, names.build_state);
    put!(code, "let handlers = Arc::new(handlers);");
    let binding = if sends.is_empty() && subgraphs.is_empty() && wiring.sites.is_empty() {
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
    set_sends(code, names, sends);
    set_subgraphs(code, names, subgraphs);
    super::answers::register(code, wiring.sites);
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

/// `builder.set_send(…)` for each send edge: its sender method, its branches to `SendTo`s.
fn set_sends(code: &mut Lines<'_>, names: &Names<'_>, sends: &[SendEdge<'_>]) {
    let (krate, state) = (names.krate, names.build_state);
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
                    "{enum_name}::{variant}(input) => {krate}::send::SendTo::new({}, &input),",
                    Lit(target)
                );
            }
            put!(code, "}}).collect()");
        }
        put!(code, "}});");
    }
}

/// `builder.set_subgraph(…)` for each subgraph node, or `set_subgraph_mapped` with its
/// `Mappings` methods.
fn set_subgraphs(code: &mut Lines<'_>, names: &Names<'_>, subgraphs: &[SubgraphNode]) {
    let (krate, state) = (names.krate, names.build_state);
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
                put!(code, "{krate}::subgraph::MapFn(");
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
}
