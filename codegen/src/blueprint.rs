//! The typed blueprint as Rust code: the body of a generated `blueprint()`, which builds the
//! same `trellis::blueprint::Blueprint` the `.graph` source lowered to.

use std::fmt::Write as _;

use trellis_dsl::{
    Blueprint, EdgeKind, Endpoint, InterruptPoint, MetaValue, Node, NodeKind, RetryOn,
};

use crate::text::{Lines, Lit, put};

pub(crate) fn construct(code: &mut Lines<'_>, blueprint: &Blueprint, krate: &str) {
    put!(code, "use {krate}::blueprint as B;");
    put!(code, "#[allow(unused_imports)]");
    put!(code, "use ::core::option::Option::{{None, Some}};");
    put!(code, "let n = |id: &str| B::Endpoint::Node(id.into());");
    put!(code, "let _ = &n;");
    put!(code, "B::Blueprint {{");
    put!(code, "name: {}.into(),", Lit(&blueprint.name));
    put!(code, "doc: {},", OptionString(blueprint.doc.as_deref()));
    put!(code, "state: {},", OptionString(blueprint.state.as_deref()));
    match blueprint.max_steps {
        Some(max) => put!(code, "max_steps: Some({max}),"),
        None => put!(code, "max_steps: None,"),
    }
    put!(code, "nodes: ::std::vec::Vec::from([");
    for node in &blueprint.nodes {
        code.boundary();
        self::node(code, node);
    }
    put!(code, "]),");
    put!(code, "edges: ::std::vec::Vec::from([");
    for edge in &blueprint.edges {
        code.boundary();
        let from = endpoint(&edge.from);
        // Most edges are `a -> b`: a third of the text of the struct literal.
        if let (EdgeKind::Static, [target]) = (edge.kind, edge.targets.as_slice()) {
            put!(code, "B::Edge::to({from}, {}),", endpoint(target));
            continue;
        }
        let kind = match edge.kind {
            EdgeKind::Static => "Static",
            EdgeKind::Conditional => "Conditional",
            EdgeKind::Fork => "Fork",
            EdgeKind::Join => "Join",
            EdgeKind::Each => "Each",
        };
        let mut targets = String::new();
        for (at, target) in edge.targets.iter().enumerate() {
            if at > 0 {
                targets.push_str(", ");
            }
            let _ = write!(targets, "{}", endpoint(target));
        }
        put!(code, "B::Edge {{");
        put!(code, "from: {from},");
        put!(code, "kind: B::EdgeKind::{kind},");
        put!(code, "targets: ::std::vec::Vec::from([{targets}]),");
        put!(code, "}},");
    }
    put!(code, "]),");
    put!(code, "}}");
}

/// A node: `B::Node::new("id")` when it has no attribute, else a struct literal over it.
fn node(code: &mut Lines<'_>, node: &Node) {
    let id = Lit(&node.id);
    // The struct literal, rewound to `B::Node::new` when the node has no attribute to set.
    let before = code.mark();
    put!(code, "B::Node {{");
    if let Some(doc) = &node.doc {
        put!(code, "doc: Some({}.into()),", Lit(doc));
    }
    if let Some(kind) = &node.kind {
        match kind {
            NodeKind::Dispatch => put!(code, "kind: Some(B::NodeKind::Dispatch),"),
            NodeKind::Parse => put!(code, "kind: Some(B::NodeKind::Parse),"),
            NodeKind::StopCheck => put!(code, "kind: Some(B::NodeKind::StopCheck),"),
            NodeKind::Tools => put!(code, "kind: Some(B::NodeKind::Tools),"),
            NodeKind::Compact => put!(code, "kind: Some(B::NodeKind::Compact),"),
            NodeKind::Finalize => put!(code, "kind: Some(B::NodeKind::Finalize),"),
            NodeKind::Hitl => put!(code, "kind: Some(B::NodeKind::Hitl),"),
            NodeKind::Delegate(graph) => put!(
                code,
                "kind: Some(B::NodeKind::Delegate({}.into())),",
                Lit(graph)
            ),
            NodeKind::Custom(text) => put!(
                code,
                "kind: Some(B::NodeKind::Custom({}.into())),",
                Lit(text)
            ),
        }
    }
    if let Some(retry) = node.retry {
        // Only what differs from `retry N;`, so that the common case reads as written.
        let mut fields = String::new();
        if let Some(backoff) = retry.backoff_ms {
            let _ = write!(fields, "backoff_ms: Some({backoff}), ");
        }
        if let Some(max) = retry.max_backoff_ms {
            let _ = write!(fields, "max_backoff_ms: Some({max}), ");
        }
        if retry.jitter {
            fields.push_str("jitter: true, ");
        }
        if retry.on != RetryOn::default() {
            let RetryOn {
                timeout,
                error,
                panic,
            } = retry.on;
            let _ = write!(
                fields,
                "on: B::RetryOn {{ timeout: {timeout}, error: {error}, panic: {panic} }}, "
            );
        }
        put!(
            code,
            "retry: Some(B::Retry {{ {fields}..B::Retry::new({}) }}),",
            retry.retries
        );
    }
    if let Some(timeout) = node.timeout_ms {
        put!(code, "timeout_ms: Some({timeout}),");
    }
    if let Some(max) = node.max_visits {
        put!(code, "max_visits: Some({max}),");
    }
    if let Some(max) = node.max_concurrency {
        put!(code, "max_concurrency: Some({max}),");
    }
    if let Some(graph) = &node.graph {
        put!(code, "graph: Some({}.into()),", Lit(graph));
    }
    if let Some(input) = &node.input {
        put!(code, "input: Some({}.into()),", Lit(input));
    }
    if let Some(fields) = &node.writes {
        let fields: Vec<String> = fields
            .iter()
            .map(|field| format!("{}.into()", Lit(field)))
            .collect();
        put!(code, "writes: Some(vec![{}]),", fields.join(", "));
    }
    if let Some(point) = node.interrupt {
        let point = match point {
            InterruptPoint::Before => "Before",
            InterruptPoint::After => "After",
            InterruptPoint::Node => "Node",
        };
        put!(code, "interrupt: Some(B::InterruptPoint::{point}),");
    }
    if let Some(question) = &node.question {
        put!(code, "question: Some({}.into()),", Lit(question));
    }
    if let Some(answer) = &node.answer {
        put!(code, "answer: Some({}.into()),", Lit(answer));
    }
    if let Some(asks) = &node.asks {
        put!(
            code,
            "asks: Some(B::Asks {{ question: {}.into(), answer: {}.into() }}),",
            Lit(&asks.question),
            Lit(&asks.answer)
        );
    }
    if node.defer {
        put!(code, "defer: true,");
    }
    if let Some(handler) = &node.on_error {
        put!(code, "on_error: Some({}.into()),", Lit(handler));
    }
    if !node.meta.is_empty() {
        put!(code, "meta: ::std::vec::Vec::from([");
        for (key, value) in &node.meta {
            let key = Lit(key);
            match value {
                MetaValue::Text(text) => {
                    put!(
                        code,
                        "({key}.into(), B::MetaValue::Text({}.into())),",
                        Lit(text)
                    );
                }
                MetaValue::Integer(number) => {
                    put!(code, "({key}.into(), B::MetaValue::Integer({number})),");
                }
                MetaValue::Bool(flag) => put!(code, "({key}.into(), B::MetaValue::Bool({flag})),"),
            }
        }
        put!(code, "]),");
    }
    if code.wrote_since(before) == 1 {
        code.rewind(before);
        put!(code, "B::Node::new({id}),");
        return;
    }
    put!(code, "..B::Node::new({id})");
    put!(code, "}},");
}

/// An endpoint as the blueprint's code names it.
struct EndpointCode<'a>(&'a Endpoint);

fn endpoint(endpoint: &Endpoint) -> EndpointCode<'_> {
    EndpointCode(endpoint)
}

impl std::fmt::Display for EndpointCode<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Endpoint::Start => f.write_str("B::Endpoint::Start"),
            Endpoint::End => f.write_str("B::Endpoint::End"),
            Endpoint::Node(id) => write!(f, "n({})", Lit(id)),
        }
    }
}

/// `Some("text".into())` or `None`.
struct OptionString<'a>(Option<&'a str>);

impl std::fmt::Display for OptionString<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(text) => write!(f, "Some({}.into())", Lit(text)),
            None => f.write_str("None"),
        }
    }
}
