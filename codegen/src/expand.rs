//! One blueprint → one Rust module: node enum, route enums, send enums, handler trait, `build`,
//! `blueprint`.

use std::collections::HashSet;

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};
use trellis_dsl::rust_names;
use trellis_dsl::{Blueprint, EdgeKind, Endpoint, GraphSpans, Node};

use crate::{Options, SpanMap, blueprint};

/// Whether the blueprint is valid (full code) or has errors (a skeleton of the same shape, so
/// code that names the module does not drown the real error in follow-on errors).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Full,
    Skeleton,
}

/// Words Rust reserves; a node with such a name becomes a raw identifier (`r#type`).
const RUST_KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if",
    "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static",
    "struct", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized",
    "virtual", "yield", "try", "gen",
];

/// A name as a Rust identifier, raw when it is a keyword; `None` when it cannot be one.
fn ident(name: &str) -> Option<Ident> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') || name == "_" {
        return None;
    }
    if ["self", "super", "crate", "Self"].contains(&name) {
        return None;
    }
    Some(if RUST_KEYWORDS.contains(&name) {
        Ident::new_raw(name, Span::call_site())
    } else {
        Ident::new(name, Span::call_site())
    })
}

/// The documentation lines of `doc` as `#[doc = …]` attributes.
fn doc_attrs(doc: Option<&str>) -> TokenStream {
    let Some(doc) = doc else {
        return TokenStream::new();
    };
    doc.lines()
        .map(|line| {
            let line = format!(" {line}");
            quote!(#[doc = #line])
        })
        .collect()
}

/// A node the generated code can name: its declaration, its method and its variant, and the
/// type of the input its sent branches carry (`input T;`), where the source writes it.
struct NodeNames<'a> {
    node: &'a Node,
    method: Ident,
    variant: Ident,
    input: Option<TokenStream>,
}

/// A subgraph node (`graph Research;`): its position, the method that builds its child, and
/// for a child on another state type the mapping methods and that type.
struct SubgraphNode {
    at: usize,
    method: Ident,
    /// `None` on the parent's own state type; else the child's state and the mapping methods.
    mapped: Option<(TokenStream, Ident, Ident)>,
}

/// The subgraph nodes of `blueprint`, with their child's state type: a graph of this file on
/// the same state (or naming none) runs on the parent's; another file's graph
/// (`graph path::Research;`) is the module `path::research`, on its `State`.
fn subgraph_nodes(
    blueprint: &Blueprint,
    spans: &GraphSpans,
    module_graphs: &[Blueprint],
    span_map: &dyn SpanMap,
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
        let mapped = state.map(|state| {
            let at_source = spans
                .nodes
                .get(at)
                .and_then(|s| s.graph)
                .map_or_else(Span::call_site, |span| span_map.span(span));
            let tokens: TokenStream = fallback_path(&state)
                .into_iter()
                .map(|mut token| {
                    token.set_span(at_source);
                    token
                })
                .collect();
            (
                tokens,
                format_ident!("{}_input", method),
                format_ident!("{}_output", method),
            )
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
    method: Ident,
    enum_name: Ident,
    variants: Vec<(Ident, String, TokenStream)>,
}

/// A conditional edge: its router method, its route enum and the enum's variants.
struct Route<'a> {
    /// The edge's position in the blueprint.
    edge: usize,
    from: &'a Endpoint,
    method: Ident,
    enum_name: Ident,
    /// (variant, target as the runtime names it)
    variants: Vec<(Ident, String)>,
}

pub(crate) fn graph(
    blueprint: &Blueprint,
    spans: &GraphSpans,
    module_graphs: &[Blueprint],
    options: &Options,
    span_map: &dyn SpanMap,
    mode: Mode,
) -> TokenStream {
    let krate = &options.crate_tokens();
    let module = format_ident!("{}", rust_names::module(&blueprint.name));
    let name = &blueprint.name;

    // In skeleton mode the blueprint may hold names that clash or are not identifiers: keep the
    // first of each so the skeleton itself compiles.
    let mut seen_variants = HashSet::new();
    let nodes: Vec<NodeNames<'_>> = blueprint
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(at, node)| {
            let variant_name = rust_names::variant(&node.id);
            let method = ident(&node.id)?;
            let variant = ident(&variant_name)?;
            let input = node.input.as_deref().map(|path| {
                let written = spans.nodes.get(at).map_or(&[][..], |s| s.input.as_slice());
                path_tokens(path, written, span_map)
            });
            seen_variants.insert(variant_name).then_some(NodeNames {
                node,
                method,
                variant,
                input,
            })
        })
        .collect();
    let node_ids: HashSet<&str> = nodes.iter().map(|n| n.node.id.as_str()).collect();
    let declared = |endpoint: &Endpoint| match endpoint {
        Endpoint::Node(id) => node_ids.contains(id.as_str()),
        Endpoint::End => true,
        Endpoint::Start => false,
    };
    let mut route_names = HashSet::new();
    let mut routes = Vec::new();
    let conditionals = blueprint
        .edges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == EdgeKind::Conditional);
    for (edge_at, edge) in conditionals {
        // While the graph has errors, a router and a variant stand as the source names them,
        // declared or not, so the user's code that names them adds no error of its own.
        let from_name = match &edge.from {
            Endpoint::Start => "start".to_owned(),
            Endpoint::Node(id) if mode == Mode::Skeleton || declared(&edge.from) => id.clone(),
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
        let mut variants: Vec<(Ident, String)> = Vec::new();
        let mut seen = HashSet::new();
        for target in edge
            .targets
            .iter()
            .filter(|t| mode == Mode::Skeleton || declared(t))
        {
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

    // One send enum and method per send edge: a variant per target that carries an input.
    let mut send_names = HashSet::new();
    let mut sends = Vec::new();
    for (edge_at, edge) in blueprint.edges.iter().enumerate() {
        if edge.kind != EdgeKind::Each {
            continue;
        }
        let from_name = match &edge.from {
            Endpoint::Start => "start".to_owned(),
            Endpoint::Node(id) if mode == Mode::Skeleton || declared(&edge.from) => id.clone(),
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

    let state_given = blueprint.state.is_some();
    let state_alias = blueprint.state.as_ref().map(|path| {
        // The path's tokens stand where the source writes them, so that an unknown type is
        // reported there, not at the macro call.
        let ty = path_tokens(path, &spans.state, span_map);
        let doc = format!(" The state this graph runs on (`state {path};`).");
        quote! {
            #[allow(unused_imports)]
            use super::*;

            #[doc = #doc]
            pub type State = #ty;
        }
    });
    // How the state is named in the trait, and in `build`.
    let (trait_state, build_state) = if state_given {
        (quote!(State), quote!(State))
    } else {
        (quote!(Self::State), quote!(H::State))
    };
    // What a handler returns: the module's `NodeOutput`, which names the state when the source
    // does.
    // Routers see the nodes' visits; a graph without one has no use for the name.
    let visits_import =
        (!routes.is_empty() || !sends.is_empty()).then(|| quote!(use #krate::Visits;));
    let adapter_output = if state_given {
        quote!(NodeOutput)
    } else {
        quote!(NodeOutput<H::State>)
    };
    let (output, output_alias) = if state_given {
        (
            quote!(NodeOutput),
            quote! {
                /// What a handler returns: its result, or why it failed.
                pub type NodeOutput = #krate::NodeOutput<State>;
            },
        )
    } else {
        (
            quote!(NodeOutput<Self::State>),
            quote! {
                /// What a handler returns for the state `S` its handlers choose.
                pub type NodeOutput<S> = #krate::NodeOutput<S>;
            },
        )
    };
    let state_item = (!state_given).then(|| {
        quote! {
            /// The state the graph runs on (the `.graph` file names none).
            type State: #krate::GraphState;
        }
    });

    // ---- the node enum ----
    let variants: Vec<&Ident> = nodes.iter().map(|n| &n.variant).collect();
    let node_names: Vec<&str> = nodes.iter().map(|n| n.node.id.as_str()).collect();
    let node_docs: Vec<TokenStream> = nodes
        .iter()
        .map(|n| {
            let own = doc_attrs(n.node.doc.as_deref());
            let id = format!(" `{}`", n.node.id);
            if own.is_empty() {
                quote!(#[doc = #id])
            } else {
                own
            }
        })
        .collect();
    let count = Literal::usize_unsuffixed(nodes.len());
    let nodes_doc = format!(" The nodes of `{name}`, in declaration order.");
    let node_enum = quote! {
        #[doc = #nodes_doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Node {
            #(#node_docs #variants,)*
        }

        impl Node {
            /// Every node, in declaration order.
            pub const ALL: [Node; #count] = [#(Node::#variants),*];

            /// The node's name in the graph.
            pub const fn as_str(self) -> &'static str {
                match self {
                    #(Node::#variants => #node_names,)*
                }
            }
        }

        impl ::core::fmt::Display for Node {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };

    // ---- one route enum per conditional edge ----
    let route_enums: TokenStream = routes
        .iter()
        .map(|route| {
            let enum_name = &route.enum_name;
            let (route_variants, targets): (Vec<&Ident>, Vec<&str>) =
                route.variants.iter().map(|(v, t)| (v, t.as_str())).unzip();
            let doc = format!(
                " Where `{}` may lead: its router returns one of these, so it cannot name an undeclared target.",
                route.from.as_str()
            );
            let variant_docs = route.variants.iter().map(|(_, target)| {
                let doc = if target == "__end__" {
                    " END: the branch ends.".to_owned()
                } else {
                    format!(" To `{target}`.")
                };
                quote!(#[doc = #doc])
            });
            // An enum with no variant (a skeleton's) has no `as_str` body to write.
            let as_str = if route_variants.is_empty() {
                quote!(match self {})
            } else {
                quote!(match self { #(Self::#route_variants => #targets,)* })
            };
            quote! {
                #[doc = #doc]
                #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
                pub enum #enum_name {
                    #(#variant_docs #route_variants,)*
                }

                impl #enum_name {
                    /// The target's name, as the runtime knows it (`__end__` for END).
                    pub const fn as_str(self) -> &'static str {
                        #as_str
                    }
                }
            }
        })
        .collect();

    // ---- one send enum per send edge ----
    let send_enums: TokenStream = sends
        .iter()
        .map(|send| {
            let enum_name = &send.enum_name;
            let doc = format!(
                " What `{}` may send: one branch per value, running the variant's node with the value as its input.",
                send.from.as_str()
            );
            let variants = send.variants.iter().map(|(variant, target, ty)| {
                let doc = format!(" A branch running `{target}`.");
                quote!(#[doc = #doc] #variant(#ty))
            });
            let arms = send.variants.iter().map(|(variant, target, _)| {
                quote!(Self::#variant(_) => #target)
            });
            let node = if send.variants.is_empty() {
                quote!(match *self {})
            } else {
                quote!(match self { #(#arms,)* })
            };
            quote! {
                #[doc = #doc]
                #[derive(Clone, Debug)]
                pub enum #enum_name {
                    #(#variants,)*
                }

                impl #enum_name {
                    /// The node the branch runs.
                    pub const fn node(&self) -> &'static str {
                        #node
                    }
                }
            }
        })
        .collect();

    // ---- the handler trait ----
    let subgraphs = subgraph_nodes(blueprint, spans, module_graphs, span_map);
    let node_methods = nodes.iter().filter(|n| n.node.graph.is_none()).map(|n| {
        let method = &n.method;
        let own = doc_attrs(n.node.doc.as_deref());
        let doc = if own.is_empty() {
            let line = format!(" Runs node `{}`.", n.node.id);
            quote!(#[doc = #line])
        } else {
            own
        };
        // Short on purpose (`Arc`, `Context`, `NodeOutput` are the module's own names): a large
        // graph's expansion time is mostly the number of tokens.
        let body = skeleton_body(mode);
        match &n.input {
            Some(ty) => quote! {
                #doc
                async fn #method(&self, state: Arc<#trait_state>, input: #ty, ctx: &mut Context) -> #output #body
            },
            None => quote! {
                #doc
                async fn #method(&self, state: Arc<#trait_state>, ctx: &mut Context) -> #output #body
            },
        }
    });
    let send_methods = sends.iter().map(|send| {
        let (method, enum_name) = (&send.method, &send.enum_name);
        let doc = format!(
            " The branches `{}` sends, from the state merged after its step (none ends its branch).",
            send.from.as_str()
        );
        let body = skeleton_body(mode);
        quote! {
            #[doc = #doc]
            fn #method(&self, state: &#trait_state, visits: &Visits<'_>) -> ::std::vec::Vec<#enum_name> #body
        }
    });
    let route_methods = routes.iter().map(|route| {
        let (method, enum_name) = (&route.method, &route.enum_name);
        let doc = format!(
            " Picks where `{}` leads, from the state merged after its step.",
            route.from.as_str()
        );
        let body = skeleton_body(mode);
        quote! {
            #[doc = #doc]
            fn #method(&self, state: &#trait_state, visits: &Visits<'_>) -> #enum_name #body
        }
    });
    let subgraph_methods = subgraphs.iter().map(|sub| {
        let method = &sub.method;
        let node = &blueprint.nodes[sub.at];
        let doc = format!(
            " The graph node `{}` runs (`graph {};`), built once by [`build`]: its module's `build` on handlers of its own.",
            node.id,
            node.graph.as_deref().unwrap_or_default()
        );
        let body = skeleton_body(mode);
        match &sub.mapped {
            None => quote! {
                #[doc = #doc]
                fn #method(&self) -> #krate::CompiledGraph<#trait_state> #body
            },
            Some((child, input, output)) => {
                let input_doc = format!(" The input of the graph `{}` runs, from the state.", node.id);
                let output_doc = format!(
                    " The update `{}` makes, from the state and its graph's final state.",
                    node.id
                );
                let body_in = skeleton_body(mode);
                let body_out = skeleton_body(mode);
                quote! {
                    #[doc = #doc]
                    fn #method(&self) -> #krate::CompiledGraph<#child> #body
                    #[doc = #input_doc]
                    fn #input(&self, state: &#trait_state) -> #child #body_in
                    #[doc = #output_doc]
                    fn #output(&self, state: &#trait_state, child: #child) -> <#trait_state as #krate::GraphState>::Update #body_out
                }
            }
        }
    });
    let handlers_doc = format!(
        " What the nodes and routers of `{name}` do: implement it (with `#[trellis::async_trait]`), then [`build`] the graph."
    );
    // A skeleton's default bodies use no argument.
    let allow_unused = (mode == Mode::Skeleton).then(|| quote!(#[allow(unused_variables)]));
    let handlers = quote! {
        #[doc = #handlers_doc]
        #allow_unused
        #[#krate::async_trait]
        pub trait Handlers: ::core::marker::Send + ::core::marker::Sync + 'static {
            #state_item
            #(#node_methods)*
            #(#route_methods)*
            #(#send_methods)*
            #(#subgraph_methods)*
        }
    };

    // ---- the adapter from the trait to the runtime's `Node`: one boxed future per activation ----
    let adapter_state = if state_given {
        quote!(State)
    } else {
        quote!(H::State)
    };
    // Made once: quote lexes a literal such as `0` from text each time it appears.
    let handlers_field = quote!(self.0);
    let calls = nodes.iter().map(|n| {
        let (method, variant) = (&n.method, &n.variant);
        if n.node.graph.is_some() {
            // `build` runs the child graph here instead (`set_subgraph`).
            let message = format!("node `{}` runs a graph; build() sets it", n.node.id);
            return quote! {
                Node::#variant => {
                    let _ = (state, ctx);
                    ::std::boxed::Box::pin(async move {
                        ::core::result::Result::Err(#krate::NodeError::msg(#message))
                    })
                }
            };
        }
        match &n.input {
            // A sent branch's input, read as the declared type; a mismatch fails the branch.
            Some(ty) => quote! {
                Node::#variant => match ctx.input::<#ty>() {
                    ::core::result::Result::Ok(input) => #handlers_field.#method(state, input, ctx),
                    ::core::result::Result::Err(error) => {
                        ::std::boxed::Box::pin(async move { ::core::result::Result::Err(error) })
                    }
                },
            },
            None => quote!(Node::#variant => #handlers_field.#method(state, ctx),),
        }
    });
    let adapter_body = if nodes.is_empty() {
        quote!(match self.1 {})
    } else {
        quote!(match self.1 { #(#calls)* })
    };
    let adapter = (mode == Mode::Full).then(|| {
        quote! {
            /// Runs one node of the graph through the user's handlers.
            struct Adapter<H>(Arc<H>, Node);

            impl<H: Handlers> #krate::Node<#adapter_state> for Adapter<H> {
                fn run<'life0, 'life1, 'async_trait>(
                    &'life0 self,
                    state: Arc<#adapter_state>,
                    ctx: &'life1 mut Context,
                ) -> ::core::pin::Pin<
                    ::std::boxed::Box<
                        dyn ::core::future::Future<
                                Output = #adapter_output,
                            > + ::core::marker::Send
                            + 'async_trait,
                    >,
                >
                where
                    'life0: 'async_trait,
                    'life1: 'async_trait,
                    Self: 'async_trait,
                {
                    #adapter_body
                }
            }
        }
    });

    // ---- build() ----
    let build_body = match mode {
        Mode::Skeleton => quote! {
            let _ = handlers;
            ::core::unreachable!("the graph has errors; see the compile errors above")
        },
        Mode::Full => {
            // One router closure for every conditional edge, told apart by the edge's
            // position: a single closure type, as `from_blueprint` wants.
            let route_arms: Vec<TokenStream> = routes
                .iter()
                .map(|route| {
                    let (edge, method) = (Literal::usize_unsuffixed(route.edge), &route.method);
                    quote!(#edge => routers.#method(state, visits).as_str(),)
                })
                .collect();
            let routers = if route_arms.is_empty() {
                quote!(|_, _| |_: &#build_state, _: &#krate::Visits<'_>| "")
            } else {
                quote! {
                    |edge, _| {
                        let routers = Arc::clone(&handlers);
                        move |state: &#build_state, visits: &Visits<'_>| -> &'static str {
                            match edge {
                                #(#route_arms)*
                                // Every conditional edge has its arm.
                                _ => "",
                            }
                        }
                    }
                }
            };
            let set_sends = sends.iter().map(|send| {
                let (edge, method, enum_name) = (
                    Literal::usize_unsuffixed(send.edge),
                    &send.method,
                    &send.enum_name,
                );
                let arms = send.variants.iter().map(|(variant, target, _)| {
                    quote!(#enum_name::#variant(input) => #krate::SendTo::new(#target, &input),)
                });
                let convert = if send.variants.is_empty() {
                    quote!(|send: #enum_name| match send {})
                } else {
                    quote!(|send| match send { #(#arms)* })
                };
                quote! {
                    let senders = Arc::clone(&handlers);
                    builder.set_send(#edge, move |state: &#build_state, visits: &Visits<'_>| {
                        senders.#method(state, visits).into_iter().map(#convert).collect()
                    });
                }
            });
            let set_subgraphs = subgraphs.iter().map(|sub| {
                let (at, method) = (Literal::usize_unsuffixed(sub.at), &sub.method);
                match &sub.mapped {
                    None => quote!(builder.set_subgraph(#at, handlers.#method());),
                    Some((child, input, output)) => quote! {
                        let (inputs, outputs) = (Arc::clone(&handlers), Arc::clone(&handlers));
                        builder.set_subgraph_mapped(
                            #at,
                            handlers.#method(),
                            #krate::MapFn(
                                move |state: &#build_state| inputs.#input(state),
                                move |state: &#build_state, child: #child| outputs.#output(state, child),
                            ),
                        );
                    },
                }
            });
            let builder_binding = if sends.is_empty() && subgraphs.is_empty() {
                quote!(let builder)
            } else {
                quote!(let mut builder)
            };
            quote! {
                let handlers = Arc::new(handlers);
                #builder_binding = #krate::GraphBuilder::<#build_state>::from_blueprint(
                    blueprint(),
                    |at, _| Adapter(Arc::clone(&handlers), Node::ALL[at]),
                    #routers,
                );
                #(#set_sends)*
                #(#set_subgraphs)*
                match builder.compile() {
                    ::core::result::Result::Ok(graph) => graph,
                    // The same rules (`trellis-graph`) were checked when this code was generated.
                    ::core::result::Result::Err(error) => ::core::unreachable!(
                        "graph `{}` was validated when its code was generated: {}", NAME, error
                    ),
                }
            }
        }
    };
    let blueprint_body = match mode {
        Mode::Full => blueprint::construct(blueprint, krate),
        Mode::Skeleton => quote!(::core::unreachable!(
            "the graph has errors; see the compile errors above"
        )),
    };
    let module_doc = {
        let mut doc = doc_attrs(blueprint.doc.as_deref());
        if !doc.is_empty() {
            doc.extend(quote!(#[doc = ""]));
        }
        let links = trellis_dsl::export::mermaid_links(blueprint);
        if mode == Mode::Full && links > trellis_dsl::export::MERMAID_MAX_EDGES {
            // Mermaid would draw an error instead; and the lines would cost most of the time
            // a large graph's code takes to generate.
            let line = format!(
                " The graph's diagram is left out: {links} links, more than Mermaid draws ({}); \
                 `trellis export --format mermaid` prints it.",
                trellis_dsl::export::MERMAID_MAX_EDGES
            );
            doc.extend(quote!(#[doc = #line]));
        } else if mode == Mode::Full {
            // One attribute per line, so the diagram reads as `///` lines once formatted.
            let diagram = trellis_dsl::export::to_mermaid(blueprint);
            let lines = std::iter::once(" ```mermaid".to_owned())
                .chain(diagram.lines().map(|line| format!(" {line}")))
                .chain(std::iter::once(" ```".to_owned()));
            for line in lines {
                doc.extend(quote!(#[doc = #line]));
            }
        }
        doc
    };

    quote! {
        #module_doc
        pub mod #module {
            #state_alias

            /// The graph's name.
            pub const NAME: &str = #name;

            use ::std::sync::Arc;
            use #krate::NodeContext as Context;
            #visits_import

            #output_alias

            #node_enum
            #route_enums
            #send_enums
            #handlers
            #adapter

            /// Builds the graph on `handlers`. Infallible: the `.graph` source was validated when
            /// this code was generated.
            pub fn build<H: Handlers>(handlers: H) -> #krate::CompiledGraph<#build_state> {
                #build_body
            }

            /// The topology and settings as the `.graph` source declares them: what
            /// `trellis export --format json` prints (serialize it to get the same JSON), and what
            /// [`build`] hands to `GraphBuilder::from_blueprint`.
            pub fn blueprint() -> #krate::blueprint::Blueprint {
                #blueprint_body
            }
        }
    }
}

/// A trait method's body: none in the full module; in a skeleton, a default body, so that an
/// implementation missing a method adds no error while the graph's own errors stand.
fn skeleton_body(mode: Mode) -> TokenStream {
    match mode {
        Mode::Full => quote!(;),
        Mode::Skeleton => {
            quote!({ ::core::unreachable!("the graph has errors; see the compile errors above") })
        }
    }
}

/// A type path (`state`, a node's `input`), each token where the source writes it.
fn path_tokens(
    path: &str,
    written: &[(String, trellis_dsl::Span)],
    span_map: &dyn SpanMap,
) -> TokenStream {
    let mut tokens = TokenStream::new();
    for (text, span) in written {
        // Each token is an identifier or punctuation of the grammar's `rust_path`.
        let Ok(parsed) = text.parse::<TokenStream>() else {
            return fallback_path(path);
        };
        let at = span_map.span(*span);
        tokens.extend(parsed.into_iter().map(|mut token| {
            token.set_span(at);
            token
        }));
    }
    if tokens.is_empty() {
        return fallback_path(path);
    }
    tokens
}

/// The path from its canonical text; the unit type (in a skeleton) if even that does not parse.
fn fallback_path(path: &str) -> TokenStream {
    path.parse().unwrap_or_else(|_| quote!(()))
}
