//! Diagnostics as tokens, placed on the tokens they are about: `compile_error!` for an error, a
//! use of a `#[deprecated]` item for a warning (stable Rust has no other way for a macro or a
//! generated file to warn).

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use trellis_dsl::Code;

use crate::text::{Lit, put};

/// `::core::compile_error! { "message" }` with the path on `start` and the braces on `end`: rustc
/// then underlines everything from `start` to `end` (the trick `syn::Error` uses on stable).
pub fn compile_error(message: &str, start: Span, end: Span) -> TokenStream {
    let punct = |c, spacing, span| {
        let mut punct = Punct::new(c, spacing);
        punct.set_span(span);
        TokenTree::Punct(punct)
    };
    let mut literal = Literal::string(message);
    literal.set_span(end);
    let mut group = Group::new(Delimiter::Brace, TokenTree::Literal(literal).into());
    group.set_span(end);
    [
        punct(':', Spacing::Joint, start),
        punct(':', Spacing::Alone, start),
        TokenTree::Ident(Ident::new("core", start)),
        punct(':', Spacing::Joint, start),
        punct(':', Spacing::Alone, start),
        TokenTree::Ident(Ident::new("compile_error", start)),
        punct('!', Spacing::Alone, start),
        TokenTree::Group(group),
    ]
    .into_iter()
    .collect()
}

/// A warning at `span` reading `message`: rustc reports "use of deprecated unit struct `…::W0301`:
/// message" there, under the `deprecated` lint (so `#[allow(deprecated)]` silences it and
/// `#![deny(warnings)]` makes it fail the build, like any warning).
///
/// ```
/// let tokens = trellis_codegen::warning(
///     trellis_dsl::Code::W0301,
///     "node `archive` cannot be reached from START",
///     proc_macro2::Span::call_site(),
/// );
/// assert!(tokens.to_string().contains("deprecated"));
/// ```
pub fn warning(code: Code, message: &str, span: Span) -> TokenStream {
    let mut text = crate::text::Lines::with_capacity(message.len() + 128);
    warning_text(&mut text, code, message);
    let tokens: TokenStream = text.into_text().parse().unwrap_or_default();
    // The code's name is where rustc reports the use of the deprecated item.
    placed(tokens, code.as_str(), span)
}

/// The warning as the code a build script writes: the one rule [`warning`] parses.
pub(crate) fn warning_text(text: &mut crate::text::Lines<'_>, code: Code, message: &str) {
    // Each warning in its own anonymous constant, so that two of one code do not clash.
    put!(text, "const _: () = {{");
    put!(text, "#[deprecated(note = {})]", Lit(message));
    put!(text, "struct {};", code.as_str());
    put!(text, "let _ = {};", code.as_str());
    put!(text, "}};");
}

/// `tokens` with every identifier `name` (in groups too) at `span`.
fn placed(tokens: TokenStream, name: &str, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Ident(mut ident) if ident == name => {
                ident.set_span(span);
                TokenTree::Ident(ident)
            }
            TokenTree::Group(group) => {
                let mut inner = Group::new(group.delimiter(), placed(group.stream(), name, span));
                inner.set_span(group.span());
                TokenTree::Group(inner)
            }
            other => other,
        })
        .collect()
}
