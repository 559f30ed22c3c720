//! `include_graph!("graphs/x.graph")`: a `.graph` file, relative to the crate's manifest.

use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;
use trellis_codegen::{compile_error, warning};

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let literal: syn::LitStr = match syn::parse2(input) {
        Ok(literal) => literal,
        Err(error) => return error.into_compile_error(),
    };
    let span = literal.span();
    let relative = literal.value();
    let root = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(PathBuf::new, PathBuf::from);
    let path = root.join(&relative);
    let source = match std::fs::read_to_string(&path) {
        Ok(source) => source,
        Err(error) => {
            let message = format!("cannot read `{relative}` ({}): {error}", path.display());
            return compile_error(&message, span, span);
        }
    };
    // Code that stands for a piece of the file (the state type) is placed at the path: rustc
    // then reports an unknown type there, not at the whole call.
    let place = |_: trellis_dsl::Span| span;
    let expansion = trellis_codegen::expand_source_with(&source, &crate::options(), &place);
    let mut tokens = expansion.tokens;
    for error in &expansion.errors {
        let report = trellis_codegen::plain_report(&relative, &source, error);
        tokens.extend(compile_error(&report, span, span));
    }
    for diagnostic in &expansion.warnings {
        let report = trellis_codegen::plain_report(&relative, &source, diagnostic);
        tokens.extend(warning(diagnostic.code, &report, span));
    }
    // Makes cargo rebuild the crate when the file changes.
    let absolute = path.display().to_string();
    tokens.extend(quote!(
        const _: &[u8] = ::core::include_bytes!(#absolute);
    ));
    tokens
}
