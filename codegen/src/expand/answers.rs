//! Typed pause sites (`interrupt before "Send it?" answer Decision;`, `asks Question -> Answer;`):
//! a module `answer` with one function per typed pause, taking only its type, so that answering
//! a pause with another type does not compile; a module `ask` with one function per node that
//! asks, taking only its question's type; and the sites `build()` registers, so that a resume
//! (or an answer sent as JSON) of another type is refused at run time too.

use trellis_dsl::{Blueprint, GraphSpans, Span};

use crate::paths::Paths;
use crate::text::{Lines, Lit, put};

use super::NodeNames;

/// A node's typed pauses, as generated code writes them: each type placed where the source
/// writes it, and the code that needs the state to take an answer type placed at that type, so
/// that rustc reports a type the state does not take there.
pub(super) struct Site<'a> {
    /// The node's name, and its function's.
    node: &'a str,
    method: &'a str,
    /// Its `interrupt`'s answer function, if it declares the type.
    answer: Option<AnswerFn>,
    /// Its `asks`: the question type, and the answer function.
    asks: Option<(String, AnswerFn)>,
    question: Option<&'a str>,
    /// What `build()` calls to register the site's types.
    registers: Vec<String>,
}

/// The parameter type and body of a function that makes an answer the state's input.
struct AnswerFn {
    parameter: String,
    body: String,
}

/// The typed sites of a graph that names its state (the language refuses them otherwise).
pub(super) fn sites<'a>(
    code: &Lines<'_>,
    blueprint: &Blueprint,
    spans: &GraphSpans,
    nodes: &'a [NodeNames<'a>],
    krate: &str,
    paths: &mut Paths<'_>,
) -> Vec<Site<'a>> {
    if blueprint.state.is_none() {
        return Vec::new();
    }
    let first = |tokens: &[(String, Span)]| tokens.first().map(|&(_, span)| span);
    // Through a build script, the lines a wrong type fails on say where the type is written:
    // rustc quotes them.
    let place = |at: Option<Span>| {
        at.map(|at| code.located(at))
            .filter(|located| !located.is_empty())
            .map_or_else(String::new, |located| {
                format!(" // the answer type{located}")
            })
    };
    let answer_fn = |paths: &mut Paths<'_>, spelled: &str, at: Option<Span>| AnswerFn {
        parameter: paths.place_at(spelled, at),
        body: format!(
            "{}{}",
            paths.place_at(
                &format!("<State as {krate}::interrupt::TakesAnswer<{spelled}>>::input_of(answer)"),
                at,
            ),
            place(at)
        ),
    };
    let mut sites = Vec::new();
    for n in nodes {
        let written = spans.nodes.get(n.at);
        let node = Lit(&n.node.id);
        let mut registers = Vec::new();
        let answer = n.node.answer.as_deref().map(|spelled| {
            let at = written.and_then(|s| first(&s.answer));
            let call = paths.place_at(&format!("builder.set_answer::<{spelled}>({node})"), at);
            registers.push(format!("{call};{}", place(at)));
            answer_fn(paths, spelled, at)
        });
        let asks = n
            .node
            .asks
            .as_ref()
            .filter(|_| n.node.graph.is_none())
            .map(|asks| {
                let question = written.map_or(&[][..], |s| s.asks[0].as_slice());
                let at = written.and_then(|s| first(&s.asks[1]));
                let call = paths.place_at(
                    &format!(
                        "builder.set_asks::<{}, {}>({node})",
                        asks.question, asks.answer
                    ),
                    at,
                );
                registers.push(format!("{call};{}", place(at)));
                (
                    paths.place(&asks.question, question),
                    answer_fn(paths, &asks.answer, at),
                )
            });
        if answer.is_some() || asks.is_some() {
            sites.push(Site {
                node: &n.node.id,
                method: &n.method,
                answer,
                asks,
                question: n.node.question.as_deref(),
                registers,
            });
        }
    }
    sites
}

/// The modules `answer` and `asks`.
pub(super) fn helpers(code: &mut Lines<'_>, sites: &[Site<'_>], krate: &str) {
    let input = format!("<State as {krate}::interrupt::ApplyResume>::Input");
    let answer_fn = |code: &mut Lines<'_>, method: &str, answer: &AnswerFn| {
        put!(
            code,
            "pub fn {method}(answer: {}) -> {input} {{",
            answer.parameter
        );
        put!(code, "{}", answer.body);
        put!(code, "}}");
    };
    if sites.iter().any(|site| site.answer.is_some()) {
        code.boundary();
        code.doc(
            "Answers to the graph's pauses, one function per node whose `interrupt` declares its\n\
             answer type: it takes that type only. Give its result to `CompiledGraph::resume`.",
        );
        put!(code, "pub mod answer {{");
        put!(code, "#[allow(unused_imports)]");
        put!(code, "use super::*;");
        for site in sites {
            let Some(answer) = &site.answer else { continue };
            let asked = site
                .question
                .map_or_else(String::new, |question| format!(" ({question:?})"));
            code.doc_line(format_args!(
                " The answer to the pause of node `{}`{asked}.",
                site.node
            ));
            answer_fn(code, site.method, answer);
        }
        put!(code, "}}");
    }
    if sites.iter().any(|site| site.asks.is_some()) {
        code.boundary();
        code.doc(
            "What the graph's nodes ask from inside, one module per node with `asks`: `ask`\n\
             makes its question, `answer` its answer.",
        );
        put!(code, "pub mod asks {{");
        for site in sites {
            let Some((question, answer)) = &site.asks else {
                continue;
            };
            code.doc_line(format_args!(
                " Node `{}`'s question and its answer.",
                site.node
            ));
            put!(code, "pub mod {} {{", site.method);
            put!(code, "#[allow(unused_imports)]");
            put!(code, "use super::super::*;");
            code.doc(
                "The question, `text` for a person and `payload` for a UI: return it from the\n\
                 node (`NodeResult::ask`).",
            );
            put!(
                code,
                "pub fn ask(text: impl ::core::convert::Into<::std::string::String>, payload: &{question}) -> ::core::result::Result<{krate}::interrupt::InterruptRequest, {krate}::NodeError> {{"
            );
            put!(
                code,
                "::core::result::Result::Ok({krate}::interrupt::InterruptRequest::new({}, text).with_payload(payload)?)",
                Lit("asks")
            );
            put!(code, "}}");
            code.doc("The answer to the question.");
            answer_fn(code, "answer", answer);
            put!(code, "}}");
        }
        put!(code, "}}");
    }
}

/// What `build()` registers: each site's types, checked against each resume.
pub(super) fn register(code: &mut Lines<'_>, sites: &[Site<'_>]) {
    for call in sites.iter().flat_map(|site| &site.registers) {
        put!(code, "{call}");
    }
}
