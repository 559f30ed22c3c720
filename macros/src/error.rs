//! `compile_error!` placed on a range of tokens.

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

/// `::core::compile_error! { "message" }` with the path on `start` and the braces on `end`: rustc
/// then underlines everything from `start` to `end` (the trick `syn::Error` uses on stable).
pub(crate) fn compile_error(message: &str, start: Span, end: Span) -> TokenStream {
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
