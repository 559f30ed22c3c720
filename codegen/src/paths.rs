//! The type paths the source writes (the state, a node's input, a mapped subgraph's state) in
//! generated code: as text for a build script, or as stand-ins that the macros replace, after
//! parsing the text, with the path's tokens placed where the source writes them.

use proc_macro2::{Group, Span, TokenStream, TokenTree};

use crate::SpanMap;

/// How type paths the source writes (the state, a node's input) are placed: as text, or as a
/// stand-in identifier that [`Paths::into_tokens`] replaces with the path's tokens, each where
/// the source writes it (rustc then reports an unknown type there).
pub(crate) enum Paths<'s> {
    Text,
    Tokens {
        spans: &'s dyn SpanMap,
        placed: Vec<TokenStream>,
    },
}

/// The stand-in for the `n`th placed path: a name the generated code never uses otherwise.
pub(crate) const STAND_IN: &str = "__TRELLIS_PATH_";

impl<'s> Paths<'s> {
    pub(crate) fn tokens(spans: &'s dyn SpanMap) -> Self {
        Paths::Tokens {
            spans,
            placed: Vec::new(),
        }
    }

    /// The text to write for type `path`, whose tokens the source writes at `written`.
    pub(crate) fn place(&mut self, path: &str, written: &[(String, trellis_dsl::Span)]) -> String {
        match self {
            Paths::Text => text_of(path),
            Paths::Tokens { spans, placed } => {
                let tokens = path_tokens(path, written, *spans);
                placed.push(tokens);
                format!("{STAND_IN}{}", placed.len() - 1)
            }
        }
    }

    /// The text to write for type `path`, every token of it at `at` (when placed as tokens).
    pub(crate) fn place_at(&mut self, path: &str, at: Option<trellis_dsl::Span>) -> String {
        match self {
            Paths::Text => text_of(path),
            Paths::Tokens { spans, placed } => {
                let span = at.map_or_else(Span::call_site, |at| spans.span(at));
                let tokens = fallback_path(path)
                    .into_iter()
                    .map(|mut token| {
                        token.set_span(span);
                        token
                    })
                    .collect();
                placed.push(tokens);
                format!("{STAND_IN}{}", placed.len() - 1)
            }
        }
    }

    /// `text` as tokens, with every stand-in replaced by its path: looked for no more than
    /// `depth` groups deep (walking a large graph's every token cost more than the macro's
    /// whole expansion otherwise did).
    pub(crate) fn into_tokens(
        self,
        text: &str,
        depth: usize,
        parser: Option<crate::Parser>,
    ) -> TokenStream {
        let parsed = match parser {
            Some(parse) => parse(text),
            None => text.parse().ok(),
        };
        // Generated text always lexes; were it not to, the tokens say so where it is used.
        let tokens = parsed.unwrap_or_else(|| {
            crate::compile_error(
                "trellis-codegen wrote code that does not lex",
                Span::call_site(),
                Span::call_site(),
            )
        });
        match self {
            Paths::Tokens { placed, .. } if !placed.is_empty() => {
                replace_stand_ins(tokens, &placed, depth)
            }
            _ => tokens,
        }
    }
}

fn replace_stand_ins(tokens: TokenStream, placed: &[TokenStream], depth: usize) -> TokenStream {
    let mut out = TokenStream::new();
    for token in tokens {
        match token {
            TokenTree::Group(group) if depth > 0 => {
                let inner = replace_stand_ins(group.stream(), placed, depth - 1);
                let mut replaced = Group::new(group.delimiter(), inner);
                replaced.set_span(group.span());
                out.extend([TokenTree::Group(replaced)]);
            }
            TokenTree::Ident(ident) => {
                let name = ident.to_string();
                match name
                    .strip_prefix(STAND_IN)
                    .and_then(|n| n.parse::<usize>().ok())
                    .and_then(|n| placed.get(n))
                {
                    Some(path) => out.extend(path.clone()),
                    None => out.extend([TokenTree::Ident(ident)]),
                }
            }
            other => out.extend([other]),
        }
    }
    out
}

/// A type path as text: the unit type (in a skeleton) when it is not a path at all.
fn text_of(path: &str) -> String {
    if path.parse::<TokenStream>().is_ok() {
        path.to_owned()
    } else {
        "()".to_owned()
    }
}

/// A type path (`state`, a node's `input`), each token where the source writes it.
fn path_tokens(
    path: &str,
    written: &[(String, trellis_dsl::Span)],
    span_map: &dyn SpanMap,
) -> TokenStream {
    let mut tokens = TokenStream::new();
    for (text, span) in written {
        // Each token is an identifier or punctuation of the grammar's `rust_path`.
        let Ok(parsed) = text.parse::<TokenStream>() else {
            return fallback_path(path);
        };
        let at = span_map.span(*span);
        tokens.extend(parsed.into_iter().map(|mut token| {
            token.set_span(at);
            token
        }));
    }
    if tokens.is_empty() {
        return fallback_path(path);
    }
    tokens
}

/// The path from its canonical text; the unit type (in a skeleton) if even that does not parse.
fn fallback_path(path: &str) -> TokenStream {
    path.parse().unwrap_or_else(|_| {
        TokenStream::from(TokenTree::Group(Group::new(
            proc_macro2::Delimiter::Parenthesis,
            TokenStream::new(),
        )))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stand_ins_become_the_paths_tokens() {
        let place = |_: trellis_dsl::Span| Span::call_site();
        let mut paths = Paths::tokens(&place);
        let state = paths.place("my::State", &[]);
        let tokens = paths.into_tokens(
            &format!("pub mod m {{ pub type State = {state}; }}"),
            1,
            None,
        );
        assert_eq!(
            tokens.to_string(),
            "pub mod m { pub type State = my :: State ; }"
        );
    }

    #[test]
    fn a_build_script_gets_the_path_as_written_or_the_unit_type() {
        let mut paths = Paths::Text;
        assert_eq!(paths.place("Vec<Vec<u8>>", &[]), "Vec<Vec<u8>>");
        assert_eq!(paths.place_at("a::b::State", None), "a::b::State");
        assert_eq!(paths.place("(", &[]), "()", "a skeleton's unreadable path");
    }
}
