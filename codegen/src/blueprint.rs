//! The typed blueprint as Rust code: the body of a generated `blueprint()`, which builds the
//! same `trellis::blueprint::Blueprint` the `.graph` source lowered to.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use trellis_dsl::{Blueprint, EdgeKind, Endpoint, InterruptPoint, MetaValue, Node, NodeKind};

pub(crate) fn construct(blueprint: &Blueprint, krate: &TokenStream) -> TokenStream {
    let name = &blueprint.name;
    let doc = option_string(blueprint.doc.as_deref());
    let state = option_string(blueprint.state.as_deref());
    let max_steps = option(blueprint.max_steps.map(Literal::u32_unsuffixed));
    let nodes = blueprint.nodes.iter().map(node);
    let edges = blueprint.edges.iter().map(|edge| {
        let from = endpoint(&edge.from);
        // Most edges are `a -> b`: a third of the tokens of the struct literal (a large graph's
        // generated code is mostly its blueprint, and tokens are what generating costs).
        if let (EdgeKind::Static, [target]) = (edge.kind, edge.targets.as_slice()) {
            let target = endpoint(target);
            return quote!(B::Edge::to(#from, #target));
        }
        let targets = edge.targets.iter().map(endpoint);
        let kind = match edge.kind {
            EdgeKind::Static => quote!(Static),
            EdgeKind::Conditional => quote!(Conditional),
            EdgeKind::Fork => quote!(Fork),
            EdgeKind::Join => quote!(Join),
            EdgeKind::Each => quote!(Each),
        };
        quote!(B::Edge { from: #from, kind: B::EdgeKind::#kind, targets: ::std::vec::Vec::from([#(#targets),*]) })
    });
    quote! {
        use #krate::blueprint as B;
        #[allow(unused_imports)]
        use ::core::option::Option::{None, Some};
        let n = |id: &str| B::Endpoint::Node(id.into());
        let _ = &n;
        B::Blueprint {
            name: #name.into(),
            doc: #doc,
            state: #state,
            max_steps: #max_steps,
            nodes: ::std::vec::Vec::from([#(#nodes),*]),
            edges: ::std::vec::Vec::from([#(#edges),*]),
        }
    }
}

/// A node: `B::Node::new("id")` when it has no attribute, else a struct literal over it.
fn node(node: &Node) -> TokenStream {
    let id = &node.id;
    let mut fields = Vec::new();
    if let Some(doc) = &node.doc {
        fields.push(quote!(doc: Some(#doc.into())));
    }
    if let Some(kind) = &node.kind {
        let kind = match kind {
            NodeKind::Dispatch => quote!(B::NodeKind::Dispatch),
            NodeKind::Parse => quote!(B::NodeKind::Parse),
            NodeKind::StopCheck => quote!(B::NodeKind::StopCheck),
            NodeKind::Tools => quote!(B::NodeKind::Tools),
            NodeKind::Compact => quote!(B::NodeKind::Compact),
            NodeKind::Finalize => quote!(B::NodeKind::Finalize),
            NodeKind::Hitl => quote!(B::NodeKind::Hitl),
            NodeKind::Delegate(graph) => quote!(B::NodeKind::Delegate(#graph.into())),
            NodeKind::Custom(text) => quote!(B::NodeKind::Custom(#text.into())),
        };
        fields.push(quote!(kind: Some(#kind)));
    }
    if let Some(retry) = node.retry {
        let retries = Literal::u32_unsuffixed(retry.retries);
        let backoff = option(retry.backoff_ms.map(Literal::u64_unsuffixed));
        fields.push(quote!(retry: Some(B::Retry { retries: #retries, backoff_ms: #backoff })));
    }
    if let Some(timeout) = node.timeout_ms.map(Literal::u64_unsuffixed) {
        fields.push(quote!(timeout_ms: Some(#timeout)));
    }
    if let Some(max) = node.max_visits.map(Literal::u32_unsuffixed) {
        fields.push(quote!(max_visits: Some(#max)));
    }
    if let Some(max) = node.max_concurrency.map(Literal::u32_unsuffixed) {
        fields.push(quote!(max_concurrency: Some(#max)));
    }
    if let Some(graph) = &node.graph {
        fields.push(quote!(graph: Some(#graph.into())));
    }
    if let Some(input) = &node.input {
        fields.push(quote!(input: Some(#input.into())));
    }
    if let Some(point) = node.interrupt {
        let point = match point {
            InterruptPoint::Before => quote!(Before),
            InterruptPoint::After => quote!(After),
            InterruptPoint::Node => quote!(Node),
        };
        fields.push(quote!(interrupt: Some(B::InterruptPoint::#point)));
    }
    if let Some(question) = &node.question {
        fields.push(quote!(question: Some(#question.into())));
    }
    if node.defer {
        fields.push(quote!(defer: true));
    }
    if let Some(handler) = &node.on_error {
        fields.push(quote!(on_error: Some(#handler.into())));
    }
    if !node.meta.is_empty() {
        let entries = node.meta.iter().map(|(key, value)| {
            let value = match value {
                MetaValue::Text(text) => quote!(B::MetaValue::Text(#text.into())),
                MetaValue::Integer(number) => {
                    let number = Literal::u32_unsuffixed(*number);
                    quote!(B::MetaValue::Integer(#number))
                }
                MetaValue::Bool(flag) => quote!(B::MetaValue::Bool(#flag)),
            };
            quote!((#key.into(), #value))
        });
        fields.push(quote!(meta: ::std::vec::Vec::from([#(#entries),*])));
    }
    if fields.is_empty() {
        quote!(B::Node::new(#id))
    } else {
        quote!(B::Node { #(#fields,)* ..B::Node::new(#id) })
    }
}

fn endpoint(endpoint: &Endpoint) -> TokenStream {
    match endpoint {
        Endpoint::Start => quote!(B::Endpoint::Start),
        Endpoint::End => quote!(B::Endpoint::End),
        Endpoint::Node(id) => quote!(n(#id)),
    }
}

fn option_string(text: Option<&str>) -> TokenStream {
    option(text.map(|text| quote!(#text.into())))
}

fn option(value: Option<impl quote::ToTokens>) -> TokenStream {
    match value {
        Some(value) => quote!(Some(#value)),
        None => quote!(None),
    }
}
