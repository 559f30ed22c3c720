//! `graph! { … }`: the `.graph` language inline. Rust has already tokenized the input, so the
//! source is rebuilt from the tokens, remembering where each token went, and every diagnostic is
//! reported on the tokens it covers.

use proc_macro2::{Delimiter, Spacing, Span, TokenStream, TokenTree};
use trellis_codegen::{Expansion, compile_error, warning};
use trellis_dsl::Diagnostic;

/// Where one token landed in the rebuilt source.
struct Placed {
    start: usize,
    end: usize,
    span: Span,
}

/// The rebuilt `.graph` source and the place of every token in it.
#[derive(Default)]
struct Source {
    text: String,
    tokens: Vec<Placed>,
}

impl Source {
    fn push(&mut self, text: &str, span: Span, space_after: bool) {
        let start = self.text.len();
        self.text.push_str(text);
        self.tokens.push(Placed {
            start,
            end: self.text.len(),
            span,
        });
        if space_after {
            self.text.push(' ');
        }
    }

    fn walk(&mut self, tokens: TokenStream) {
        let mut tokens = tokens.into_iter().peekable();
        while let Some(token) = tokens.next() {
            match token {
                // `///` and `//!` arrive as `#[doc = "…"]` and `#![doc = "…"]`: write them back.
                TokenTree::Punct(hash) if hash.as_char() == '#' => {
                    let inner =
                        matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == '!');
                    let mut lookahead = tokens.clone();
                    if inner {
                        lookahead.next();
                    }
                    match lookahead.next().as_ref().and_then(doc_text) {
                        Some(doc) => {
                            tokens = lookahead;
                            let marker = if inner { "//!" } else { "///" };
                            let line: String = doc.lines().next().unwrap_or_default().to_owned();
                            self.push(&format!("{marker}{line}"), hash.span(), false);
                            self.text.push('\n');
                            for more in doc.lines().skip(1) {
                                self.push(&format!("{marker}{more}"), hash.span(), false);
                                self.text.push('\n');
                            }
                        }
                        None => self.push("#", hash.span(), true),
                    }
                }
                TokenTree::Punct(punct) => {
                    let joint = punct.spacing() == Spacing::Joint;
                    self.push(&punct.as_char().to_string(), punct.span(), !joint);
                }
                // `r#type` is how Rust spells a keyword as a name; the language just says `type`.
                TokenTree::Ident(ident) => {
                    let text = ident.to_string();
                    let name = text.strip_prefix("r#").unwrap_or(&text);
                    self.push(name, ident.span(), true);
                }
                TokenTree::Literal(literal) => {
                    self.push(&literal.to_string(), literal.span(), true)
                }
                TokenTree::Group(group) => {
                    let (open, close) = match group.delimiter() {
                        Delimiter::Brace => ("{", "}"),
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::None => ("", ""),
                    };
                    if !open.is_empty() {
                        self.push(open, group.span_open(), true);
                    }
                    self.walk(group.stream());
                    if !close.is_empty() {
                        self.push(close, group.span_close(), true);
                    }
                }
            }
        }
    }

    /// The spans of the first and last tokens that `start..end` covers.
    fn spans(&self, start: usize, end: usize) -> (Span, Span) {
        let covering: Vec<&Placed> = self
            .tokens
            .iter()
            .filter(|t| t.end > start && t.start < end.max(start + 1))
            .collect();
        match (covering.first(), covering.last()) {
            (Some(first), Some(last)) => (first.span, last.span),
            // An empty span between tokens (`expected ;`): the next token, or the last one.
            _ => {
                let next = self
                    .tokens
                    .iter()
                    .find(|t| t.start >= start)
                    .or(self.tokens.last())
                    .map_or_else(Span::call_site, |t| t.span);
                (next, next)
            }
        }
    }
}

/// The text of a `[doc = "…"]` group.
fn doc_text(token: &TokenTree) -> Option<String> {
    let TokenTree::Group(group) = token else {
        return None;
    };
    if group.delimiter() != Delimiter::Bracket {
        return None;
    }
    let attr: syn::MetaNameValue = syn::parse2(group.stream()).ok()?;
    if !attr.path.is_ident("doc") {
        return None;
    }
    match attr.value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) => Some(text.value()),
        _ => None,
    }
}

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let mut source = Source::default();
    source.walk(input);
    let place = |range: trellis_dsl::Span| source.spans(range.start, range.end).0;
    let Expansion {
        mut tokens,
        errors,
        warnings,
        ..
    } = trellis_codegen::expand_source_with(&source.text, &crate::options(), &place);
    for error in &errors {
        let (start, end) = source.spans(error.span.start, error.span.end);
        let message = format!("{}: {}", error.code.as_str(), with_help(error));
        tokens.extend(compile_error(&message, start, end));
        // Each place that explains it (a first declaration, the other end of a cycle) is
        // marked too, so that the editor shows every span of the one mistake. (A syntax
        // error's label is about the token it already points at.)
        let explained = error.code != trellis_dsl::Code::E0001;
        for label in error.labels.iter().filter(|_| explained) {
            let (start, end) = source.spans(label.span.start, label.span.end);
            let message = format!("{}: {}", error.code.as_str(), label.message);
            tokens.extend(compile_error(&message, start, end));
        }
    }
    for diagnostic in &warnings {
        let (start, _) = source.spans(diagnostic.span.start, diagnostic.span.end);
        tokens.extend(warning(diagnostic.code, &with_help(diagnostic), start));
    }
    tokens
}

/// The message, then its help as rustc writes one.
fn with_help(diagnostic: &Diagnostic) -> String {
    match &diagnostic.help {
        Some(help) => format!("{}\n\n= help: {help}", diagnostic.message),
        None => diagnostic.message.clone(),
    }
}
