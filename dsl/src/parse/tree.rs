//! Pest's pairs → the AST, for a whole file and for each piece.

use pest::iterators::Pair;

use crate::ast::{
    Attr, AttrKind, DocLine, EdgeStmt, Endpoint, Ident, Item, ItemKind, KindSpec, Literal,
    MetaLiteral, NodeDecl, RustPath, Target,
};
use crate::diagnostic::Span;
use crate::syntax::Rule;

pub(super) fn span(pair: &Pair<'_, Rule>, base: usize) -> Span {
    let inner = pair.as_span();
    Span::new(base + inner.start(), base + inner.end())
}

pub(super) fn ident<'a>(pair: &Pair<'a, Rule>, base: usize) -> Ident<'a> {
    Ident {
        text: pair.as_str(),
        span: span(pair, base),
    }
}

pub(super) fn literal<'a>(pair: &Pair<'a, Rule>, base: usize) -> Literal<'a> {
    Literal {
        text: pair.as_str(),
        span: span(pair, base),
    }
}

pub(super) fn doc_line<'a>(pair: &Pair<'a, Rule>, base: usize) -> DocLine<'a> {
    DocLine {
        text: pair.as_str(),
        span: span(pair, base),
    }
}

/// The item a `graph_item` (or `unterminated_item`) pair holds.
pub(super) fn build_item(pair: Pair<'_, Rule>, base: usize) -> Item<'_> {
    let item_span = span(&pair, base);
    // Only a `batch_item` can hold what the language does not write; these rules cannot.
    batch_item(pair, base).unwrap_or_else(|| Item {
        docs: Vec::new(),
        kind: ItemKind::Unknown(Ident {
            text: "",
            span: item_span,
        }),
    })
}

/// The item a `batch_item` pair holds, or `None` when `graph_item` would not accept it as
/// written (a hop that branches, an endpoint named `node`): the batch stops there and
/// `graph_item` judges it.
pub(super) fn batch_item(pair: Pair<'_, Rule>, base: usize) -> Option<Item<'_>> {
    let item_span = span(&pair, base);
    let mut docs = Vec::new();
    let mut kind = None;
    for part in pair.into_inner() {
        match part.as_rule() {
            Rule::outer_doc => docs.push(doc_line(&part, base)),
            Rule::state_decl | Rule::state_decl_open => {
                let path = part
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::rust_path)
                    .map(|p| rust_path(p, base));
                kind = path.map(ItemKind::State);
            }
            Rule::max_steps_decl | Rule::max_steps_decl_open => {
                kind = part
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::number)
                    .map(|p| ItemKind::MaxSteps(literal(&p, base)));
            }
            Rule::node_decl | Rule::node_decl_open => {
                let mut name = None;
                let mut attrs = Vec::new();
                for piece in part.into_inner() {
                    match piece.as_rule() {
                        Rule::ident => name = Some(ident(&piece, base)),
                        Rule::attr => attrs.push(build_attr(piece, base)),
                        _ => {}
                    }
                }
                kind = name.map(|name| ItemKind::Node(NodeDecl { name, attrs }));
            }
            Rule::edge | Rule::edge_open | Rule::batch_edge => {
                kind = Some(ItemKind::Edge(build_edge(part, base)?));
            }
            Rule::unknown_setting => {
                kind = part
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::ident)
                    .map(|p| ItemKind::Unknown(ident(&p, base)));
            }
            _ => {}
        }
    }
    Some(Item {
        docs,
        // Every alternative yields its parts; the fallback is unreachable but keeps this total.
        kind: kind.unwrap_or(ItemKind::Unknown(Ident {
            text: "",
            span: item_span,
        })),
    })
}

pub(super) fn rust_path(pair: Pair<'_, Rule>, base: usize) -> RustPath<'_> {
    let path_span = span(&pair, base);
    let mut tokens = Vec::new();
    for part in pair.into_inner() {
        if part.as_rule() == Rule::generic_args {
            tokens.extend(part.into_inner().map(|p| ident(&p, base)));
        } else {
            tokens.push(ident(&part, base));
        }
    }
    // From its first token to its last: pest's span of the rule also holds the whitespace
    // skipped while looking for generic arguments that are not there (`state Ticket ;`).
    let span = match (tokens.first(), tokens.last()) {
        (Some(first), Some(last)) => first.span.to(last.span),
        _ => path_span,
    };
    RustPath { tokens, span }
}

pub(super) fn endpoint(pair: Pair<'_, Rule>, base: usize) -> Endpoint<'_> {
    match pair.into_inner().next() {
        Some(inner) => named(&inner, base),
        None => Endpoint::Node(Ident {
            text: "",
            span: Span::new(base, base),
        }),
    }
}

/// The endpoint a `kw_start`, `kw_end` or `ident` pair names: `START` and `END` by their text,
/// as the fast path's rules read them as names.
fn named<'a>(pair: &Pair<'a, Rule>, base: usize) -> Endpoint<'a> {
    match pair.as_str() {
        "START" => Endpoint::Start(span(pair, base)),
        "END" => Endpoint::End(span(pair, base)),
        _ => Endpoint::Node(ident(pair, base)),
    }
}

/// An edge from an `edge`, `edge_open` or `batch_edge` pair; `None` when a hop but the last
/// branches or an endpoint is named `node`, which only `batch_edge` lets through.
pub(super) fn build_edge(pair: Pair<'_, Rule>, base: usize) -> Option<EdgeStmt<'_>> {
    let mut endpoints = Vec::new();
    // The endpoints before the first arrow: the source, and a join's other sources.
    let mut sources = None;
    let mut targets = Vec::new();
    for part in pair.into_inner() {
        match part.as_rule() {
            Rule::endpoint => endpoints.push(endpoint(part, base)),
            Rule::ident if part.as_str() == "node" => return None,
            Rule::ident => endpoints.push(named(&part, base)),
            Rule::arrow if sources.is_none() => sources = Some(endpoints.len()),
            Rule::target | Rule::batch_target => {
                // A `batch_edge` has no `arrow` pairs: its sources end where its targets begin.
                sources.get_or_insert(endpoints.len());
                targets.push(build_target(part, base)?);
            }
            _ => {}
        }
    }
    let target = targets.pop();
    // A `batch_edge`'s hops are targets too; each must be a single endpoint.
    for hop in targets {
        match hop {
            Target::Single(endpoint) => endpoints.push(endpoint),
            _ => return None,
        }
    }
    let hops = endpoints.split_off(sources.unwrap_or(1).min(endpoints.len()));
    let mut endpoints = endpoints.into_iter();
    let source = endpoints.next().unwrap_or(Endpoint::Node(Ident {
        text: "",
        span: Span::new(base, base),
    }));
    Some(EdgeStmt {
        source,
        joined: endpoints.collect(),
        hops,
        target: target.unwrap_or(Target::Conditional(Vec::new())),
    })
}

/// A `target` or `batch_target` pair; `None` for an endpoint named `node`.
fn build_target(pair: Pair<'_, Rule>, base: usize) -> Option<Target<'_>> {
    let mut fork = false;
    let mut branch = false;
    let mut send = false;
    let mut targets = Vec::new();
    for piece in pair.into_inner() {
        match piece.as_rule() {
            Rule::endpoint => targets.push(endpoint(piece, base)),
            Rule::ident if piece.as_str() == "node" => return None,
            Rule::ident => targets.push(named(&piece, base)),
            Rule::pipe => branch = true,
            Rule::amp => fork = true,
            Rule::kw_each => send = true,
            _ => {}
        }
    }
    Some(if send {
        Target::Send(targets)
    } else if fork {
        Target::Fork(targets)
    } else if branch {
        Target::Conditional(targets)
    } else {
        match targets.pop() {
            Some(single) => Target::Single(single),
            None => Target::Conditional(Vec::new()),
        }
    })
}

pub(super) fn build_attr(pair: Pair<'_, Rule>, base: usize) -> Attr<'_> {
    let attr_span = span(&pair, base);
    let Some(specific) = pair.into_inner().next() else {
        return unknown_attr(attr_span);
    };
    let rule = specific.as_rule();
    let mut parts = specific.into_inner().filter(|p| {
        !matches!(
            p.as_rule(),
            Rule::semi | Rule::lparen | Rule::rparen | Rule::eq | Rule::kw_backoff
        )
    });
    let Some(first) = parts.next() else {
        return unknown_attr(attr_span);
    };
    let keyword = ident(&first, base);
    let rest: Vec<Pair<'_, Rule>> = parts.collect();
    let lit = |i: usize| rest.get(i).map(|p| literal(p, base));
    let kind = match rule {
        Rule::retry_attr => {
            // `retry N (backoff D (max M)? jitter?)?`, `backoff` filtered out above.
            let after = |word: Rule| {
                rest.iter()
                    .position(|p| p.as_rule() == word)
                    .and_then(|at| rest.get(at + 1))
                    .map(|p| literal(p, base))
            };
            lit(0).map(|attempts| AttrKind::Retry {
                attempts,
                backoff: lit(1),
                max: after(Rule::kw_max),
                jitter: rest
                    .iter()
                    .find(|p| p.as_rule() == Rule::kw_jitter)
                    .map(|p| span(p, base)),
            })
        }
        Rule::retry_on_attr => Some(AttrKind::RetryOn(
            rest.iter()
                .filter(|p| p.as_rule() == Rule::ident)
                .map(|p| ident(p, base))
                .collect(),
        )),
        Rule::writes_attr => Some(AttrKind::Writes(
            rest.iter()
                .filter(|p| p.as_rule() == Rule::ident)
                .map(|p| ident(p, base))
                .collect(),
        )),
        Rule::timeout_attr => lit(0).map(AttrKind::Timeout),
        Rule::max_visits_attr => lit(0).map(AttrKind::MaxVisits),
        Rule::max_concurrency_attr => lit(0).map(AttrKind::MaxConcurrency),
        Rule::input_attr => rest
            .first()
            .cloned()
            .map(|p| AttrKind::Input(rust_path(p, base))),
        Rule::graph_attr => rest
            .first()
            .cloned()
            .map(|p| AttrKind::Graph(rust_path(p, base))),
        Rule::interrupt_attr => rest.first().map(|when| {
            let question = rest
                .iter()
                .find(|p| p.as_rule() == Rule::string)
                .map(|q| literal(q, base));
            let answer = rest
                .iter()
                .find(|p| p.as_rule() == Rule::rust_path)
                .map(|p| rust_path(p.clone(), base));
            AttrKind::Interrupt(ident(when, base), question, answer)
        }),
        Rule::asks_attr => {
            let mut paths = rest.iter().filter(|p| p.as_rule() == Rule::rust_path);
            match (paths.next(), paths.next()) {
                (Some(question), Some(answer)) => Some(AttrKind::Asks(
                    rust_path(question.clone(), base),
                    rust_path(answer.clone(), base),
                )),
                _ => None,
            }
        }
        Rule::defer_attr => Some(AttrKind::Defer),
        Rule::on_error_attr => rest
            .first()
            .cloned()
            .map(|p| AttrKind::OnError(endpoint(p, base))),
        Rule::kind_attr => rest.first().map(|p| {
            if p.as_rule() == Rule::string {
                AttrKind::Kind(KindSpec::Custom(literal(p, base)))
            } else {
                AttrKind::Kind(KindSpec::Named {
                    name: ident(p, base),
                    argument: rest.get(1).map(|a| ident(a, base)),
                })
            }
        }),
        Rule::meta_attr => match (rest.first(), rest.get(1)) {
            (Some(key), Some(value)) => Some(AttrKind::Meta {
                key: ident(key, base),
                value: match value.as_rule() {
                    Rule::string => MetaLiteral::String(literal(value, base)),
                    Rule::number => MetaLiteral::Integer(literal(value, base)),
                    other => MetaLiteral::Bool(other == Rule::kw_true),
                },
            }),
            _ => None,
        },
        _ => Some(AttrKind::Unknown),
    };
    Attr {
        keyword,
        kind: kind.unwrap_or(AttrKind::Unknown),
        span: attr_span,
    }
}

pub(super) fn unknown_attr(span: Span) -> Attr<'static> {
    Attr {
        keyword: Ident { text: "", span },
        kind: AttrKind::Unknown,
        span,
    }
}

/// The `///` lines directly inside a pair.
pub(super) fn docs_of(pair: Pair<'_, Rule>, base: usize) -> impl Iterator<Item = DocLine<'_>> {
    pair.into_inner()
        .filter(|p| p.as_rule() == Rule::outer_doc)
        .map(move |p| doc_line(&p, base))
}

/// The doc lines, name and brace of a `graph_head` or `node_open` pair.
pub(super) fn head_parts(
    head: Pair<'_, Rule>,
    base: usize,
) -> (Vec<DocLine<'_>>, Option<Ident<'_>>, Span) {
    let mut docs = Vec::new();
    let mut name = None;
    let mut brace = span(&head, base);
    for part in head.into_inner() {
        match part.as_rule() {
            Rule::outer_doc => docs.push(doc_line(&part, base)),
            Rule::ident => name = Some(ident(&part, base)),
            Rule::lbrace => brace = span(&part, base),
            _ => {}
        }
    }
    (docs, name, brace)
}
