//! `include_generated!`'s reports: the errors and warnings the build script left for a
//! `.graph` file (`OUT_DIR/<stem>.reports`), reported at the macro's string literal — in the
//! user's source file, where editors show them — with the `.graph` place in the message.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned};
use syn::LitStr;
use trellis_graph::reports;

pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let stem: LitStr = syn::parse2(input)?;
    let span = stem.span();
    let Ok(out_dir) = std::env::var("OUT_DIR") else {
        return Err(syn::Error::new(
            span,
            "`include_generated!` reads what a build script wrote to OUT_DIR: call `trellis_codegen::compile` in this crate's build.rs",
        ));
    };
    let path = std::path::Path::new(&out_dir).join(reports::file_name(&stem.value()));
    // No file: a build by a codegen that wrote none, or a stem it never compiled, which the
    // `include!` beside this reports.
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(TokenStream::new());
    };
    let tracked = path.display().to_string();
    // Read through `include_str!` as well, so that rustc rebuilds when the reports change.
    let mut tokens = quote_spanned! {span=>
        const _: &str = ::core::include_str!(#tracked);
    };
    for report in reports::read(&text) {
        let message = &report.text;
        if report.error {
            tokens.extend(quote_spanned! {span=> ::core::compile_error! { #message } });
        } else {
            let code = format_ident!("{}", report.code, span = span);
            tokens.extend(warning(span, &code, message));
        }
    }
    Ok(tokens)
}

/// A warning of the build at `span`: a use of a deprecated item whose note is the report (as
/// the generated code of `graph!` reports the language's warnings).
fn warning(span: Span, code: &syn::Ident, message: &str) -> TokenStream {
    quote_spanned! {span=>
        const _: () = {
            #[deprecated(note = #message)]
            struct #code;
            let _ = #code;
        };
    }
}
