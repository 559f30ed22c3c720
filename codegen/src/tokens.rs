//! Diagnostics as tokens, placed on the tokens they are about: `compile_error!` for an error, a
//! use of a `#[deprecated]` item for a warning (stable Rust has no other way for a macro or a
//! generated file to warn).

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::quote;
use trellis_dsl::Code;

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
    let name = Ident::new(code.as_str(), span);
    // Each warning in its own anonymous constant, so that two of one code do not clash.
    quote! {
        const _: () = {
            #[deprecated(note = #message)]
            struct #name;
            let _ = #name;
        };
    }
}
