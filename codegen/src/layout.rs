//! Generated tokens as readable Rust text for the files build.rs writes: a statement or item per
//! line, blocks indented, attributes on their own lines. rustc quotes these lines in its notes,
//! so they must be short; this is not rustfmt (no line width, no external tool), only enough
//! layout for the code this crate generates.
//!
//! Tokens are never glued in a way that changes how they lex: a punctuation mark is joined to
//! the next only when the token stream says it is (`Spacing::Joint`) or when the pair cannot lex
//! as one token.

use std::fmt::Write as _;

use proc_macro2::{Delimiter, Punct, Spacing, TokenStream, TokenTree};

const INDENT: &str = "    ";
/// Keywords after which `::`, `(` or `[` start something new (`self`, `super`, `crate`, `Self`
/// are not among them: `self::x`). A `match`, not a list searched word by word: it is asked for
/// every word of the generated code.
fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "as" | "async"
            | "await"
            | "break"
            | "const"
            | "dyn"
            | "else"
            | "enum"
            | "extern"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "static"
            | "struct"
            | "trait"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
    )
}
/// A parenthesized or bracketed list with this many commas gets an item per line.
const LONG_LIST: usize = 6;

/// Lays out `tokens` as Rust source text.
pub(crate) fn layout(tokens: TokenStream) -> String {
    let mut out = Layout::default();
    out.stream(tokens, 0, false);
    let mut text = out.text;
    while text.ends_with([' ', '\n']) {
        text.pop();
    }
    text.push('\n');
    text
}

/// What the last written token was, to decide the space before the next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Start of a line (or of a group): no space.
    Start,
    /// A word or a literal.
    Word,
    /// A punctuation mark that binds to what follows (`::`, `.`, `#`, `&`, `'`, `!` of a
    /// macro, `<` of generics, or any joint mark).
    Tight,
    /// A punctuation mark followed by a space (`,`, `:`, `=`, `->`, `>`, …).
    Spaced,
    /// A closing bracket or parenthesis.
    Close,
}

#[derive(Default)]
struct Layout {
    text: String,
    last: Option<Last>,
    /// Whether the last token was `impl` (its generics bind to it).
    after_impl: bool,
    /// A word being written (kept for its allocation).
    word: String,
}

impl Layout {
    fn newline(&mut self, depth: usize) {
        while self.text.ends_with(' ') {
            self.text.pop();
        }
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        for _ in 0..depth {
            self.text.push_str(INDENT);
        }
        self.last = Some(Last::Start);
    }

    fn space_unless(&mut self, tight: bool) {
        if !tight && !matches!(self.last, None | Some(Last::Start | Last::Tight)) {
            self.text.push(' ');
        }
    }

    /// Writes `tokens` at `depth`; with `one_per_line`, each comma ends a line (the items of a
    /// block, a match, a struct literal, or of a long list).
    fn stream(&mut self, tokens: TokenStream, depth: usize, one_per_line: bool) {
        self.trees(tokens.into_iter().collect(), depth, one_per_line);
    }

    /// [`stream`](Self::stream) on the stream's trees. Each tree is taken out of the list, so
    /// that a group is dropped before its contents are walked: a stream still shared with its
    /// group is copied whole by `into_iter`, at every level of nesting (quadratic in depth).
    fn trees(&mut self, mut tokens: Vec<TokenTree>, depth: usize, one_per_line: bool) {
        // Generic arguments open with a `<` glued to a word: commas inside them end no line.
        let mut angles = 0usize;
        // The previous tree of this list, when it was a punctuation mark: (mark, joint).
        let mut previous: Option<(char, bool)> = None;
        for at in 0..tokens.len() {
            let token = std::mem::replace(
                &mut tokens[at],
                TokenTree::Punct(Punct::new(',', Spacing::Alone)),
            );
            let next = tokens.get(at + 1);
            let before = previous.take();
            let previous_joint = matches!(before, Some((_, true)));
            match token {
                TokenTree::Ident(ident) => {
                    // One buffer for every word: `to_string` would allocate per token.
                    let mut word = std::mem::take(&mut self.word);
                    word.clear();
                    let _ = write!(word, "{ident}");
                    // A `where` clause on a line of its own: signatures are long enough.
                    if word == "where" && one_per_line {
                        self.newline(depth);
                    }
                    self.space_unless(false);
                    // After a keyword, a path or a group starts a new phrase: `use ::std`,
                    // `match (a, b)`; after a name it binds: `Arc::new`, `f(x)`.
                    self.last = Some(if is_keyword(&word) {
                        Last::Spaced
                    } else {
                        Last::Word
                    });
                    self.text.push_str(&word);
                    self.after_impl = word == "impl";
                    self.word = word;
                    continue;
                }
                TokenTree::Literal(literal) => {
                    self.space_unless(false);
                    let _ = write!(self.text, "{literal}");
                    self.last = Some(Last::Word);
                }
                TokenTree::Punct(punct) => {
                    let c = punct.as_char();
                    let joint = punct.spacing() == Spacing::Joint;
                    previous = Some((c, joint));
                    // No space before `,` `;` `.` `:` (the second `:` of `::` too), `?`, or a
                    // mark glued to the previous one.
                    let tight_before = previous_joint
                        || matches!(c, ',' | ';' | '.' | '?')
                        // A lone `:`, or the first of `::` after a name (`Arc::new`).
                        || (c == ':'
                            && (!joint || matches!(self.last, Some(Last::Word | Last::Close))))
                        || (c == '>' && self.last == Some(Last::Word) && !previous_joint)
                        || (c == '<' && (self.last == Some(Last::Word) || self.after_impl))
                        || (c == '!' && self.last == Some(Last::Word));
                    self.space_unless(tight_before);
                    self.text.push(c);
                    let closes_generics = c == '>' && !previous_joint && angles > 0;
                    let turbofish = c == '<' && self.text.ends_with("::");
                    if c == '<' && (tight_before || turbofish) {
                        angles += 1;
                    } else if closes_generics {
                        angles -= 1;
                    }
                    self.last = Some(
                        if joint || matches!(c, '.' | '#' | '&' | '\'' | '!' | '<') {
                            Last::Tight
                        } else {
                            Last::Spaced
                        },
                    );
                    // `::` binds both ways; `>` closing generics is followed like a word.
                    if c == ':' && previous_joint {
                        self.last = Some(Last::Tight);
                    } else if closes_generics {
                        self.last = Some(Last::Close);
                    }
                    if c == ';' || (c == ',' && one_per_line && angles == 0) {
                        self.newline(depth);
                    }
                }
                TokenTree::Group(group) => {
                    let delimiter = group.delimiter();
                    let inner = group.stream();
                    drop(group);
                    let inner: Vec<TokenTree> = inner.into_iter().collect();
                    match delimiter {
                        Delimiter::Brace => {
                            self.space_unless(false);
                            if inner.is_empty() {
                                self.text.push_str("{}");
                                self.last = Some(Last::Close);
                            } else {
                                self.text.push('{');
                                self.newline(depth + 1);
                                self.trees(inner, depth + 1, true);
                                self.newline(depth);
                                self.text.push('}');
                                self.last = Some(Last::Close);
                            }
                            // A block ends a line unless an expression goes on (`} else`,
                            // `},`, `}.method()`, `})`).
                            let continues = matches!(next, Some(TokenTree::Punct(p)) if matches!(p.as_char(), ',' | '.' | ';' | '?'))
                                || matches!(next, Some(TokenTree::Ident(i)) if i == "else");
                            if !continues {
                                self.newline(depth);
                            }
                        }
                        Delimiter::Parenthesis | Delimiter::Bracket => {
                            let (open, close) = if delimiter == Delimiter::Bracket {
                                ('[', ']')
                            } else {
                                ('(', ')')
                            };
                            // A call or an index binds to what it follows; `#[…]` to its `#`.
                            let tight =
                                matches!(self.last, Some(Last::Word | Last::Close | Last::Tight));
                            self.space_unless(tight);
                            self.text.push(open);
                            self.last = Some(Last::Tight);
                            let commas = inner
                                .iter()
                                .filter(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
                                .count();
                            let has_block = inner
                                .iter()
                                .any(|t| matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace));
                            if commas >= LONG_LIST || (commas > 0 && has_block) {
                                self.newline(depth + 1);
                                self.trees(inner, depth + 1, true);
                                self.newline(depth);
                            } else {
                                self.trees(inner, depth, false);
                            }
                            self.text.push(close);
                            self.last = Some(Last::Close);
                            let attribute = open == '[' && matches!(before, Some(('#' | '!', _)));
                            if attribute {
                                self.newline(depth);
                            }
                        }
                        Delimiter::None => self.trees(inner, depth, one_per_line),
                    }
                }
            }
            self.after_impl = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn lays_out_items_and_blocks() {
        let tokens = quote! {
            #[doc = " A node."]
            pub mod m {
                use ::std::sync::Arc;
                pub fn build<H: Handlers>(handlers: H) -> ::x::Graph<State> {
                    let handlers = Arc::new(handlers);
                    match builder.compile() {
                        Ok(graph) => graph,
                        Err(error) => ::core::unreachable!("{}", error),
                    }
                }
                impl<'a> Trait for T<'a> where Self: 'a {}
            }
        };
        let text = layout(tokens);
        assert_eq!(
            text,
            "#[doc = \" A node.\"]\npub mod m {\n    use ::std::sync::Arc;\n    pub fn build<H: Handlers>(handlers: H) -> ::x::Graph<State> {\n        let handlers = Arc::new(handlers);\n        match builder.compile() {\n            Ok(graph) => graph,\n            Err(error) => ::core::unreachable!(\"{}\", error),\n        }\n    }\n    impl<'a> Trait for T<'a>\n    where Self: 'a {}\n}\n"
        );
    }

    /// The laid-out text of every example graph lexes to the very tokens it was made of.
    #[test]
    fn changes_no_token_of_the_generated_code() {
        let examples = [
            include_str!("../../examples/graphs/support.graph"),
            include_str!("../../examples/graphs/research.graph"),
            include_str!("../../examples/graphs/agent_turn.graph"),
            "graph Broken { state Vec<Vec<u8>>; node a; START -> a; a -> b | END; }",
        ];
        for source in examples {
            let tokens = crate::expand_source(source, &crate::Options::default()).tokens;
            let text = layout(tokens.clone());
            // The same syntax tree, printed by syn with its own spacing.
            let original: syn::File = syn::parse2(tokens).expect("generated code parses");
            let laid_out = syn::parse_file(&text).expect("the layout parses as Rust");
            assert_eq!(quote!(#laid_out).to_string(), quote!(#original).to_string());
            let longest = text.lines().map(str::len).max().unwrap_or(0);
            assert!(longest < 250, "a line of {longest} characters in:\n{text}");
        }
    }
}
