//! The source as the lexer reads it (the grammar's `token_stream`, the formatter's input too):
//! tokens and comments with their spans, for a tool that must tell code from comments and
//! strings without parsing, such as an editor completing at a cursor.

use pest::Parser as _;

use crate::diagnostic::Span;
use crate::syntax::{GraphParser, Rule};

/// What a lexeme is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LexemeKind {
    /// A keyword, name, number, string, `->`, `::`, or any other character. A string left open
    /// is a lone `"` token (and what follows it, tokens of their own).
    Token,
    /// `// …` (to the end of its line, the line break excluded) or `/* … */` (nested; one left
    /// open runs to the end of the text).
    Comment,
    /// `/// …` or `//! …`.
    Doc,
}

/// One token or comment of a source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lexeme {
    /// What it is.
    pub kind: LexemeKind,
    /// Where it is.
    pub span: Span,
}

/// Every token and comment of `text`, in order; whitespace is left out.
///
/// ```
/// use trellis_dsl::{LexemeKind, lexemes};
/// let text = "a -> b; /* c { */ // d";
/// let kinds: Vec<LexemeKind> = lexemes(text).iter().map(|l| l.kind).collect();
/// use LexemeKind::{Comment, Token};
/// assert_eq!(kinds, [Token, Token, Token, Token, Comment, Comment]);
/// ```
pub fn lexemes(text: &str) -> Vec<Lexeme> {
    // The stream rule accepts any text (a character no other rule takes is a token of its own).
    let Some(stream) = GraphParser::parse(Rule::token_stream, text)
        .ok()
        .and_then(|mut pairs| pairs.next())
    else {
        return Vec::new();
    };
    stream
        .into_inner()
        .filter_map(|pair| {
            let kind = match pair.as_rule() {
                Rule::comment => LexemeKind::Comment,
                Rule::outer_doc | Rule::inner_doc => LexemeKind::Doc,
                Rule::lex_token => LexemeKind::Token,
                _ => return None,
            };
            let span = pair.as_span();
            Some(Lexeme {
                kind,
                span: Span::new(span.start(), span.end()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<(LexemeKind, &str)> {
        lexemes(text)
            .iter()
            .map(|l| (l.kind, &text[l.span.start..l.span.end]))
            .collect()
    }

    #[test]
    fn comments_nest_and_strings_hold_what_looks_like_code() {
        use LexemeKind::{Comment, Doc, Token};
        assert_eq!(
            pieces("/// d\nx /* a /* { */ } */ \"-> {\" // e\n"),
            [
                (Doc, "/// d"),
                (Token, "x"),
                (Comment, "/* a /* { */ } */"),
                (Token, "\"-> {\""),
                (Comment, "// e"),
            ]
        );
        // Left open: a block comment runs to the end; a string is a lone quote.
        assert_eq!(pieces("a /* b { c"), [(Token, "a"), (Comment, "/* b { c")]);
        assert_eq!(
            pieces("kind \"ab"),
            [(Token, "kind"), (Token, "\""), (Token, "ab")]
        );
    }
}
