//! The enums of a graph's module: its nodes, each router's routes, each send's branches.

use crate::text::{Lines, Lit, put};

use super::shape::{Route, SendEdge};
use super::{Mode, NodeNames};

pub(super) fn node_enum(code: &mut Lines<'_>, graph: &str, nodes: &[NodeNames<'_>]) {
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

pub(super) fn route_enum(code: &mut Lines<'_>, route: &Route<'_>, mode: Mode) {
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

pub(super) fn send_enum(code: &mut Lines<'_>, send: &SendEdge<'_>) {
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
