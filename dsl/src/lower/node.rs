//! One node declaration → its blueprint node and spans: each attribute's checks and place.

use trellis_graph::{
    Asks, InterruptPoint, MetaValue, Node, NodeKind, Retry, RetryOn, did_you_mean,
};

use super::{canonical_path, endpoint, given_twice};
use crate::ast::{self, Attr, AttrKind, DocLine, KindSpec, MetaLiteral};
use crate::blueprint::NodeSpans;
use crate::diagnostic::{Code, Diagnostic, Diagnostics, Span};
use crate::literal;
use crate::words;

/// A node's attribute key (`true` for a meta key), with where it was first given.
pub(super) type Seen<'a> = Vec<((bool, &'a str), Span)>;

pub(super) fn lower_node<'a>(
    decl: &ast::NodeDecl<'a>,
    docs: &[DocLine<'_>],
    seen: &mut Seen<'a>,
    diagnostics: &mut Diagnostics,
) -> (Node, NodeSpans) {
    let mut node = Node {
        id: decl.name.text.to_owned(),
        doc: literal::doc_text(docs),
        ..Node::default()
    };
    let mut spans = NodeSpans {
        name: decl.name.span,
        ..NodeSpans::default()
    };
    // Nodes have a handful of attributes: a list beats a map.
    seen.clear();
    let mut interrupt_span: Option<(Span, &str)> = None;
    // Applied once every attribute is read: `retry_on` may come before `retry`.
    let mut retry_on: Option<(Span, RetryOn)> = None;
    for attr in &decl.attrs {
        let key = match &attr.kind {
            AttrKind::Meta { key, .. } => Some((true, key.text)),
            // Interrupts get their own message (`before` and `after` both, or one twice).
            AttrKind::Unknown | AttrKind::Interrupt(..) => None,
            _ => Some((false, attr.keyword.text)),
        };
        if let Some(key) = key {
            if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
                let what = match &attr.kind {
                    AttrKind::Meta { key, .. } => format!("meta key `{}`", key.text),
                    _ => format!("attribute `{}`", attr.keyword.text),
                };
                diagnostics.push(given_twice(&what, "on node", &node.id, *first, attr.span));
                continue;
            }
            seen.push((key, attr.span));
        }
        if let AttrKind::RetryOn(failures) = &attr.kind {
            retry_on = lower_retry_on(failures, diagnostics).map(|on| (attr.span, on));
            continue;
        }
        lower_attr(
            attr,
            &mut node,
            &mut spans,
            &mut interrupt_span,
            diagnostics,
        );
    }
    if let Some((at, on)) = retry_on {
        match &mut node.retry {
            Some(retry) => retry.on = on,
            None => diagnostics.push(
                Diagnostic::new(
                    Code::E0104,
                    at,
                    format!("node `{}` says what to retry but is not retried", node.id),
                    "`retry_on` without `retry`",
                )
                .with_help("add `retry N;` to the node, or remove `retry_on`"),
            ),
        }
    }
    (node, spans)
}

/// The failures `retry_on` names; `None` after an E0107 for a word that is none.
fn lower_retry_on(failures: &[ast::Ident<'_>], diagnostics: &mut Diagnostics) -> Option<RetryOn> {
    let mut on = RetryOn::NONE;
    let mut known = true;
    for failure in failures {
        match on.with(failure.text) {
            Some(more) => on = more,
            None => {
                known = false;
                let unknown = Diagnostic::new(
                    Code::E0107,
                    failure.span,
                    format!("unknown failure `{}`", failure.text),
                    "not a failure a node can have",
                );
                diagnostics.push(
                    match did_you_mean(failure.text, RetryOn::NAMES.iter().copied()) {
                        Some(known) => unknown.with_did_you_mean(failure.span, known),
                        None => {
                            unknown.with_help("the failures are `timeout`, `error` and `panic`")
                        }
                    },
                );
            }
        }
    }
    known.then_some(on)
}

fn lower_attr<'a>(
    attr: &Attr<'a>,
    node: &mut Node,
    spans: &mut NodeSpans,
    interrupt_span: &mut Option<(Span, &'a str)>,
    diagnostics: &mut Diagnostics,
) {
    let mut report = |result: Result<(), Diagnostic>| {
        if let Err(error) = result {
            diagnostics.push(error);
        }
    };
    match &attr.kind {
        AttrKind::Retry {
            attempts,
            backoff,
            max,
            jitter,
        } => report((|| {
            let count = literal::integer(*attempts, "`retry`")?;
            let backoff_ms = backoff.map(literal::duration_ms).transpose()?;
            let max_backoff_ms = max.map(literal::duration_ms).transpose()?;
            node.retry = Some(Retry {
                // No wait is no backoff: `backoff 0ms` and no `backoff` are one blueprint.
                backoff_ms: backoff_ms.filter(|&ms| ms > 0),
                max_backoff_ms,
                jitter: jitter.is_some(),
                // `retry_on`, read with the node's other attributes, is applied after them.
                ..Retry::new(count)
            });
            spans.retry = Some(attempts.span);
            Ok(())
        })()),
        AttrKind::RetryOn(_) => {}
        AttrKind::Timeout(value) => report(literal::duration_ms(*value).map(|ms| {
            node.timeout_ms = Some(ms);
            spans.timeout = Some(value.span);
        })),
        AttrKind::MaxVisits(value) => report(literal::integer(*value, "`max_visits`").map(|n| {
            node.max_visits = Some(n);
            spans.max_visits = Some(value.span);
        })),
        AttrKind::MaxConcurrency(value) => {
            report(literal::integer(*value, "`max_concurrency`").map(|n| {
                node.max_concurrency = Some(n);
                spans.max_concurrency = Some(value.span);
            }))
        }
        AttrKind::Input(path) => {
            node.input = Some(canonical_path(&path.tokens));
            spans.input = path_tokens(path);
        }
        AttrKind::Asks(question, answer) => {
            node.asks = Some(Asks {
                question: canonical_path(&question.tokens),
                answer: canonical_path(&answer.tokens),
            });
            spans.asks = [path_tokens(question), path_tokens(answer)];
        }
        AttrKind::Graph(path) => {
            node.graph = Some(canonical_path(&path.tokens));
            spans.graph = Some(path.span);
        }
        AttrKind::Interrupt(when, question, answer) => {
            if lower_interrupt(attr, *when, *question, node, interrupt_span, diagnostics)
                && let Some(answer) = answer
            {
                node.answer = Some(canonical_path(&answer.tokens));
                spans.answer = path_tokens(answer);
            }
        }
        AttrKind::Defer => node.defer = true,
        // `on_error START;` is kept as the runtime spells START, for the graph rules to refuse.
        AttrKind::OnError(target) => {
            node.on_error = Some(endpoint(target).as_str().to_owned());
            spans.on_error = Some(target.span());
        }
        AttrKind::Kind(spec) => report(lower_kind(spec).map(|kind| node.kind = Some(kind))),
        AttrKind::Meta { key, value } => {
            if let Some(value) = lower_meta(value, diagnostics) {
                node.meta.push((key.text.to_owned(), value));
            }
        }
        AttrKind::Writes(fields) => {
            let mut writes: Vec<String> = Vec::with_capacity(fields.len());
            for field in fields {
                if let Some(at) = writes.iter().position(|known| known == field.text) {
                    diagnostics.push(given_twice(
                        &format!("field `{}`", field.text),
                        "in the `writes` of node",
                        &node.id,
                        spans.writes[at],
                        field.span,
                    ));
                    continue;
                }
                writes.push(field.text.to_owned());
                spans.writes.push(field.span);
            }
            node.writes = Some(writes);
        }
        AttrKind::Unknown => {
            let word = attr.keyword;
            let unknown = Diagnostic::new(
                Code::E0107,
                word.span,
                format!("unknown attribute `{}`", word.text),
                "unknown attribute",
            );
            report(Err(
                match did_you_mean(word.text, words::attribute_names()) {
                    Some(known) => unknown.with_did_you_mean(word.span, known),
                    None => unknown.with_help(format!(
                        "the attributes are {}",
                        words::quoted(words::attribute_names(), "and")
                    )),
                },
            ));
        }
    }
}

/// A type path's tokens with their places, for generated code to put them where they are written.
fn path_tokens(path: &ast::RustPath<'_>) -> Vec<(String, Span)> {
    path.tokens
        .iter()
        .map(|token| (token.text.to_owned(), token.span))
        .collect()
}

/// `interrupt before|after "question";`: the pause, once per node (E0104 for a second one).
/// Whether it was taken.
fn lower_interrupt<'a>(
    attr: &Attr<'a>,
    when: ast::Ident<'a>,
    question: Option<ast::Literal<'a>>,
    node: &mut Node,
    interrupt_span: &mut Option<(Span, &'a str)>,
    diagnostics: &mut Diagnostics,
) -> bool {
    if let Some((first, first_when)) = *interrupt_span {
        diagnostics.push(if first_when == when.text {
            given_twice(
                "attribute `interrupt`",
                "on node",
                &node.id,
                first,
                attr.span,
            )
        } else {
            Diagnostic::new(
                Code::E0104,
                attr.span,
                format!(
                    "node `{}` has both `interrupt {first_when}` and `interrupt {}`",
                    node.id, when.text
                ),
                "second interrupt here",
            )
            .with_label(first, "first interrupt here")
            .with_help("a node pauses the run either before or after it runs: keep one")
        });
        return false;
    }
    *interrupt_span = Some((attr.span, when.text));
    node.interrupt = Some(if when.text == "before" {
        InterruptPoint::Before
    } else {
        InterruptPoint::After
    });
    if let Some(question) = question {
        match literal::string(question) {
            Ok(text) => node.question = Some(text),
            Err(errors) => errors.into_iter().for_each(|e| diagnostics.push(e)),
        }
    }
    true
}

/// A `meta` value, or `None` after the errors of a bad literal.
fn lower_meta(value: &MetaLiteral<'_>, diagnostics: &mut Diagnostics) -> Option<MetaValue> {
    match value {
        MetaLiteral::String(text) => match literal::string(*text) {
            Ok(text) => Some(MetaValue::Text(text)),
            Err(errors) => {
                errors.into_iter().for_each(|e| diagnostics.push(e));
                None
            }
        },
        MetaLiteral::Integer(number) => match literal::integer(*number, "a `meta` number") {
            Ok(n) => Some(MetaValue::Integer(n)),
            Err(error) => {
                diagnostics.push(error);
                None
            }
        },
        MetaLiteral::Bool(flag) => Some(MetaValue::Bool(*flag)),
    }
}

fn lower_kind(spec: &KindSpec<'_>) -> Result<NodeKind, Diagnostic> {
    match spec {
        KindSpec::Custom(text) => literal::string(*text)
            .map(NodeKind::Custom)
            .map_err(|mut errors| errors.remove(0)),
        KindSpec::Named { name, argument } if name.text == "delegate" => match argument {
            Some(target) => Ok(NodeKind::Delegate(target.text.to_owned())),
            None => Err(Diagnostic::new(
                Code::E0107,
                name.span,
                "kind `delegate` needs the graph it delegates to",
                "no graph named",
            )
            .with_help("write `kind delegate(GraphName);`")),
        },
        KindSpec::Named { name, argument } => {
            let Some((_, kind)) = NodeKind::BUILT_IN.iter().find(|(n, _)| *n == name.text) else {
                let known = NodeKind::BUILT_IN
                    .iter()
                    .map(|(n, _)| *n)
                    .chain(std::iter::once("delegate"));
                let unknown = Diagnostic::new(
                    Code::E0107,
                    name.span,
                    format!("unknown node kind `{}`", name.text),
                    "unknown kind",
                );
                return Err(match did_you_mean(name.text, known) {
                    Some(kind) => unknown.with_did_you_mean(name.span, kind),
                    None => unknown.with_help(format!(
                        "use a string for a kind of your own: `kind \"{}\";`",
                        name.text
                    )),
                });
            };
            if let Some(argument) = argument {
                return Err(Diagnostic::new(
                    Code::E0107,
                    argument.span,
                    format!("kind `{}` takes no argument", name.text),
                    "unexpected argument",
                )
                .with_help(format!("write `kind {};`", name.text)));
            }
            Ok(kind.clone())
        }
    }
}
