//! A hand-written reader for the common case: a file the grammar's `file` rule accepts, written
//! with the usual constructs. It builds the very AST the pest parser would, about ten times
//! faster, or gives up (`None`) at the first thing it does not handle the way the grammar does —
//! anything unusual, and every syntax error — and the pest parser reads the file instead.
//!
//! The grammar stays the definition of the language. This reader follows it rule for rule (the
//! rule each function mirrors is named above it), PEG order included: where the grammar would
//! try another alternative, this reader gives up rather than guess. A property test checks that
//! whenever it returns a file, it is the file pest builds (`tests` below and
//! `tests/robustness.rs`).

use crate::ast::{
    Attr, AttrKind, DocLine, EdgeStmt, Endpoint, File, Graph, Ident, Item, ItemKind, KindSpec,
    Literal, MetaLiteral, NodeDecl, RustPath, Target,
};
use crate::diagnostic::Span;

/// Reads `text` as the `file` rule would; `None` hands it to the pest parser.
pub(crate) fn parse(text: &str) -> Option<File<'_>> {
    let mut reader = Reader {
        text,
        pos: 0,
        docs: Vec::new(),
        attrs: Vec::new(),
    };
    reader.file()
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
    // Lists are gathered here and copied out at their exact length: a large graph has thousands
    // of short ones, and a list grown push by push holds room for four.
    docs: Vec<DocLine<'a>>,
    attrs: Vec<Attr<'a>>,
}

/// `ident_char = ASCII_ALPHANUMERIC | "_"`.
fn is_ident_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

impl<'a> Reader<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn rest(&self) -> &'a [u8] {
        &self.bytes()[self.pos..]
    }

    /// The implicit `WHITESPACE` and `COMMENT` between tokens. Stops at a doc comment (`///`
    /// but not `////`, and `//!`), which is a token. `None` for a block comment left open (the
    /// pest parser reports it).
    fn skip(&mut self) -> Option<()> {
        loop {
            let rest = self.rest();
            match rest {
                [b' ' | b'\t'..=b'\r', ..] => self.pos += 1,
                [0xEF, 0xBB, 0xBF, ..] => self.pos += 3,
                [b'/', b'/', b'/', b'/', ..] => self.line_comment(),
                [b'/', b'/', b'/', ..] | [b'/', b'/', b'!', ..] => return Some(()),
                [b'/', b'/', ..] => self.line_comment(),
                [b'/', b'*', ..] => self.block_comment()?,
                _ => return Some(()),
            }
        }
    }

    /// To the end of the line (the line feed is whitespace).
    fn line_comment(&mut self) {
        self.pos += self
            .rest()
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(self.rest().len());
    }

    /// `/* … */`, nested.
    fn block_comment(&mut self) -> Option<()> {
        self.pos += 2;
        let mut depth = 0usize;
        loop {
            match self.rest() {
                [b'/', b'*', ..] => {
                    depth += 1;
                    self.pos += 2;
                }
                [b'*', b'/', ..] => {
                    self.pos += 2;
                    if depth == 0 {
                        return Some(());
                    }
                    depth -= 1;
                }
                [] => return None,
                _ => self.pos += 1,
            }
        }
    }

    /// A word (`ident`'s or `number`'s characters) at the cursor, not consumed.
    fn peek_word(&self) -> &'a str {
        let length = self
            .rest()
            .iter()
            .position(|&b| !is_ident_char(b))
            .unwrap_or(self.rest().len());
        &self.text[self.pos..self.pos + length]
    }

    fn take(&mut self, length: usize) -> (&'a str, Span) {
        let start = self.pos;
        self.pos += length;
        (&self.text[start..self.pos], Span::new(start, self.pos))
    }

    /// `ident`: a letter or `_`, then identifier characters.
    fn ident(&mut self) -> Option<Ident<'a>> {
        self.skip()?;
        let word = self.peek_word();
        if !word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return None;
        }
        let (text, span) = self.take(word.len());
        Some(Ident { text, span })
    }

    /// A keyword (`kw_*`): the word itself, with no identifier character after it.
    fn keyword(&mut self, keyword: &str) -> Option<Ident<'a>> {
        self.skip()?;
        (self.peek_word() == keyword).then(|| {
            let (text, span) = self.take(keyword.len());
            Ident { text, span }
        })
    }

    /// Whether the next token is the keyword, without consuming it.
    fn at_keyword(&mut self, keyword: &str) -> Option<bool> {
        self.skip()?;
        Some(self.peek_word() == keyword)
    }

    /// A punctuation token (`semi`, `arrow`, …) that must come next.
    fn punct(&mut self, token: &str) -> Option<Span> {
        self.eat(token)?
    }

    /// A punctuation token if it comes next (the outer `None` gives up, as everywhere).
    fn eat(&mut self, token: &str) -> Option<Option<Span>> {
        self.skip()?;
        Some(
            self.rest()
                .starts_with(token.as_bytes())
                .then(|| self.take(token.len()).1),
        )
    }

    fn at_punct(&mut self, token: &str) -> Option<bool> {
        self.skip()?;
        Some(self.rest().starts_with(token.as_bytes()))
    }

    /// `number`: a digit, then identifier characters (a unit, checked by lowering).
    fn number(&mut self) -> Option<Literal<'a>> {
        self.skip()?;
        let word = self.peek_word();
        if !word.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let (text, span) = self.take(word.len());
        Some(Literal { text, span })
    }

    /// `string`: `"…"`, any escape (checked by lowering).
    fn string(&mut self) -> Option<Literal<'a>> {
        self.skip()?;
        if self.rest().first() != Some(&b'"') {
            return None;
        }
        let mut length = 1;
        loop {
            match self.rest().get(length)? {
                b'"' => break,
                b'\\' => {
                    // The escaped character may be any, multi-byte ones included.
                    let escaped = self.text[self.pos + length + 1..].chars().next()?;
                    length += 1 + escaped.len_utf8();
                }
                _ => length += 1,
            }
        }
        let (text, span) = self.take(length + 1);
        Some(Literal { text, span })
    }

    /// `outer_doc*`: `///` lines (not `////`, which is a comment).
    fn outer_docs(&mut self) -> Option<Vec<DocLine<'a>>> {
        loop {
            self.skip()?;
            if !(self.rest().starts_with(b"///") && self.rest().get(3) != Some(&b'/')) {
                let docs = self.docs.to_vec();
                self.docs.clear();
                return Some(docs);
            }
            let line = self.doc_line();
            self.docs.push(line);
        }
    }

    /// A doc line, to the end of its line (the line feed excluded).
    fn doc_line(&mut self) -> DocLine<'a> {
        let length = self
            .rest()
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(self.rest().len());
        let (text, span) = self.take(length);
        DocLine { text, span }
    }

    /// `file = { SOI ~ inner_doc* ~ graph* ~ EOI }`
    fn file(&mut self) -> Option<File<'a>> {
        let mut file = File::default();
        loop {
            self.skip()?;
            if !self.rest().starts_with(b"//!") {
                break;
            }
            file.docs.push(self.doc_line());
        }
        loop {
            self.skip()?;
            if self.rest().is_empty() {
                return Some(file);
            }
            file.graphs.push(self.graph()?);
        }
    }

    /// `graph = { graph_head ~ graph_item* ~ graph_close }`, with
    /// `graph_head = { outer_doc* ~ kw_graph ~ ident ~ lbrace }` and
    /// `graph_close = { outer_doc* ~ rbrace }`.
    fn graph(&mut self) -> Option<Graph<'a>> {
        self.skip()?;
        let start = self.pos;
        let docs = self.outer_docs()?;
        self.keyword("graph")?;
        let name = self.ident()?;
        let brace = self.punct("{")?;
        let mut graph = Graph {
            docs,
            name: Some(name),
            head_span: Span::new(name.span.start, brace.end),
            items: Vec::new(),
            stray_docs: Vec::new(),
            had_syntax_error: false,
            poisoned: Vec::new(),
            extent: Span::new(start, start),
        };
        loop {
            let docs = self.outer_docs()?;
            if let Some(close) = self.eat("}")? {
                graph.stray_docs = docs;
                graph.extent = Span::new(start, close.end);
                return Some(graph);
            }
            let kind = self.graph_item()?;
            graph.items.push(Item { docs, kind });
        }
    }

    /// `graph_item = { outer_doc* ~ (node_decl | edge | state_decl | max_steps_decl |
    /// unknown_setting) }`, after its docs. The statement's first word picks the alternative the
    /// grammar would succeed with; when that one fails, another might not, so the reader gives
    /// up.
    fn graph_item(&mut self) -> Option<ItemKind<'a>> {
        self.skip()?;
        match self.peek_word() {
            "node" => self.node_decl(),
            "state" => self.state_decl(),
            "max_steps" => self.max_steps_decl(),
            _ => self.edge(),
        }
    }

    /// `node_decl = { kw_node ~ ident ~ (semi | (lbrace ~ attr* ~ rbrace)) }`
    fn node_decl(&mut self) -> Option<ItemKind<'a>> {
        self.keyword("node")?;
        let name = self.ident()?;
        if self.eat(";")?.is_none() {
            self.punct("{")?;
            while self.eat("}")?.is_none() {
                let attr = self.attr()?;
                self.attrs.push(attr);
            }
        }
        let attrs = if self.attrs.is_empty() {
            Vec::new()
        } else {
            self.attrs.drain(..).collect()
        };
        Some(ItemKind::Node(NodeDecl { name, attrs }))
    }

    /// `attr`: one of the known attributes (an unknown one is the pest parser's).
    fn attr(&mut self) -> Option<Attr<'a>> {
        self.skip()?;
        let start = self.pos;
        let word = self.peek_word();
        let keyword = self.keyword(word)?;
        let kind = match word {
            // retry_attr = { kw_retry ~ number ~ (kw_backoff ~ number ~ (kw_max ~ number)?
            //                ~ kw_jitter?)? ~ semi }
            "retry" => {
                let attempts = self.number()?;
                let (mut backoff, mut max, mut jitter) = (None, None, None);
                if self.at_keyword("backoff")? {
                    self.keyword("backoff")?;
                    backoff = Some(self.number()?);
                    if self.at_keyword("max")? {
                        self.keyword("max")?;
                        max = Some(self.number()?);
                    }
                    if self.at_keyword("jitter")? {
                        jitter = Some(self.keyword("jitter")?.span);
                    }
                }
                AttrKind::Retry {
                    attempts,
                    backoff,
                    max,
                    jitter,
                }
            }
            // retry_on_attr = { kw_retry_on ~ ident ~ (comma ~ ident)* ~ semi }
            "retry_on" => {
                let mut failures = vec![self.ident()?];
                while self.eat(",")?.is_some() {
                    failures.push(self.ident()?);
                }
                AttrKind::RetryOn(failures)
            }
            // timeout_attr = { kw_timeout ~ number ~ semi }
            "timeout" => AttrKind::Timeout(self.number()?),
            // max_visits_attr = { kw_max_visits ~ number ~ semi }
            "max_visits" => AttrKind::MaxVisits(self.number()?),
            // max_concurrency_attr = { kw_max_concurrency ~ number ~ semi }
            "max_concurrency" => AttrKind::MaxConcurrency(self.number()?),
            // input_attr = { kw_input ~ rust_path ~ semi }
            "input" => AttrKind::Input(self.rust_path()?),
            // graph_attr = { kw_graph ~ rust_path ~ semi }
            "graph" => AttrKind::Graph(self.rust_path()?),
            // interrupt_attr = { kw_interrupt ~ (kw_before | kw_after) ~ string? ~ semi }
            "interrupt" => {
                let when = self.ident()?;
                if when.text != "before" && when.text != "after" {
                    return None;
                }
                let question = if self.at_punct("\"")? {
                    Some(self.string()?)
                } else {
                    None
                };
                AttrKind::Interrupt(when, question)
            }
            // defer_attr = { kw_defer ~ semi }
            "defer" => AttrKind::Defer,
            // on_error_attr = { kw_on_error ~ endpoint ~ semi }
            "on_error" => AttrKind::OnError(self.endpoint()?),
            // kind_attr = { kw_kind ~ (string | (ident ~ (lparen ~ ident ~ rparen)?)) ~ semi }
            "kind" => {
                if self.at_punct("\"")? {
                    AttrKind::Kind(KindSpec::Custom(self.string()?))
                } else {
                    let name = self.ident()?;
                    let argument = if self.eat("(")?.is_some() {
                        let argument = self.ident()?;
                        self.punct(")")?;
                        Some(argument)
                    } else {
                        None
                    };
                    AttrKind::Kind(KindSpec::Named { name, argument })
                }
            }
            // meta_attr = { kw_meta ~ ident ~ eq ~ (string | number | kw_true | kw_false) ~ semi }
            "meta" => {
                let key = self.ident()?;
                self.punct("=")?;
                self.skip()?;
                let value = match self.rest().first()? {
                    b'"' => MetaLiteral::String(self.string()?),
                    b'0'..=b'9' => MetaLiteral::Integer(self.number()?),
                    _ => match self.peek_word() {
                        "true" => {
                            self.keyword("true")?;
                            MetaLiteral::Bool(true)
                        }
                        "false" => {
                            self.keyword("false")?;
                            MetaLiteral::Bool(false)
                        }
                        _ => return None,
                    },
                };
                AttrKind::Meta { key, value }
            }
            _ => return None,
        };
        let end = self.punct(";")?;
        Some(Attr {
            keyword,
            kind,
            span: Span::new(start, end.end),
        })
    }

    /// `endpoint = { kw_start | kw_end | !kw_node ~ ident }`
    fn endpoint(&mut self) -> Option<Endpoint<'a>> {
        let ident = self.ident()?;
        Some(match ident.text {
            "START" => Endpoint::Start(ident.span),
            "END" => Endpoint::End(ident.span),
            // `!kw_node ~ ident`: the pest parser's error to report.
            "node" => return None,
            _ => Endpoint::Node(ident),
        })
    }

    /// Whether a name starts here (after trivia).
    fn starts_endpoint(&mut self) -> Option<bool> {
        self.skip()?;
        Some(matches!(
            self.rest().first(),
            Some(b'a'..=b'z' | b'A'..=b'Z' | b'_')
        ))
    }

    /// `edge = { endpoint ~ (amp ~ endpoint)* ~ (arrow ~ endpoint ~ &arrow)* ~ arrow ~ target ~
    /// semi }` with `target = { (kw_each ~ endpoint ~ (pipe ~ endpoint)*) | (endpoint ~ ((pipe
    /// ~ endpoint)+ | (amp ~ endpoint)+)?) }`
    fn edge(&mut self) -> Option<ItemKind<'a>> {
        let source = self.endpoint()?;
        let mut joined = Vec::new();
        while self.eat("&")?.is_some() {
            joined.push(self.endpoint()?);
        }
        let mut hops = Vec::new();
        self.punct("->")?;
        let mut next = self.endpoint()?;
        while self.at_punct("->")? {
            self.punct("->")?;
            hops.push(next);
            next = self.endpoint()?;
        }
        let target = if let (Endpoint::Node(each), true) = (next, self.starts_endpoint()?) {
            // `each a | b`: `each` was read as an endpoint; what follows is the first target.
            if each.text != "each" {
                return None;
            }
            let mut targets = vec![self.endpoint()?];
            while self.eat("|")?.is_some() {
                targets.push(self.endpoint()?);
            }
            Target::Send(targets)
        } else if self.at_punct("|")? {
            let mut targets = vec![next];
            while self.eat("|")?.is_some() {
                targets.push(self.endpoint()?);
            }
            Target::Conditional(targets)
        } else if self.at_punct("&")? {
            let mut targets = vec![next];
            while self.eat("&")?.is_some() {
                targets.push(self.endpoint()?);
            }
            Target::Fork(targets)
        } else {
            Target::Single(next)
        };
        self.punct(";")?;
        Some(ItemKind::Edge(EdgeStmt {
            source,
            joined,
            hops,
            target,
        }))
    }

    /// `state_decl = { kw_state ~ rust_path ~ semi }`
    fn state_decl(&mut self) -> Option<ItemKind<'a>> {
        self.keyword("state")?;
        let path = self.rust_path()?;
        self.punct(";")?;
        Some(ItemKind::State(path))
    }

    /// `rust_path = { path_sep? ~ ident ~ (path_sep ~ ident)* ~ generic_args? }` with
    /// `generic_args = { lt ~ ((lt ~ PUSH_LITERAL(">")) | (gt ~ DROP) | path_sep | comma |
    /// ident)* ~ gt }`: brackets balance.
    fn rust_path(&mut self) -> Option<RustPath<'a>> {
        let mut tokens = Vec::new();
        let separator = |reader: &mut Self| -> Option<Option<Ident<'a>>> {
            Some(reader.eat("::")?.map(|span| Ident {
                text: &reader.text[span.start..span.end],
                span,
            }))
        };
        if let Some(leading) = separator(self)? {
            tokens.push(leading);
        }
        tokens.push(self.ident()?);
        // `(path_sep ~ ident)*`: a separator counts only with the name after it.
        while self.at_punct("::")? {
            let saved = self.pos;
            let sep = separator(self)?.unwrap_or(Ident {
                text: "",
                span: Span::default(),
            });
            match self.ident() {
                Some(name) => tokens.extend([sep, name]),
                None => {
                    self.pos = saved;
                    break;
                }
            }
        }
        if self.at_punct("<")? {
            let mut depth = 0usize;
            loop {
                self.skip()?;
                let token = match self.rest().first()? {
                    b'<' => {
                        depth += 1;
                        self.take(1)
                    }
                    b'>' => {
                        depth -= 1;
                        self.take(1)
                    }
                    b',' => self.take(1),
                    b':' if self.rest().starts_with(b"::") => self.take(2),
                    b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                        let word = self.peek_word();
                        self.take(word.len())
                    }
                    _ => return None,
                };
                tokens.push(Ident {
                    text: token.0,
                    span: token.1,
                });
                if depth == 0 {
                    break;
                }
            }
        }
        let span = tokens.first()?.span.to(tokens.last()?.span);
        Some(RustPath { tokens, span })
    }

    /// `max_steps_decl = { kw_max_steps ~ number ~ semi }`
    fn max_steps_decl(&mut self) -> Option<ItemKind<'a>> {
        self.keyword("max_steps")?;
        let value = self.number()?;
        self.punct(";")?;
        Some(ItemKind::MaxSteps(value))
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    const EXAMPLES: &[&str] = &[
        include_str!("../../examples/graphs/support.graph"),
        include_str!("../../examples/graphs/research.graph"),
        include_str!("../../examples/graphs/agent_turn.graph"),
        "//! Docs.\n\u{FEFF}graph A { state ::a::B<C, D<E>>; max_steps 3; /** x */ node a { kind delegate(Other); meta k = false; meta n = 0; interrupt after \"Looks right?\"; defer; on_error END; } /* a /* nested */ one */ START -> a -> a | END; //// not a doc\n /// stray\n }\n/// Two.\ngraph B { node b { kind \"x\\\"y\"; retry 1; } START -> b & b; b -> END; }",
        "graph J { node a; node b; node c; node d; START -> a & b; a & b -> c -> d; d&END->c|d; }",
        "graph S { node each; node input { input a::B<C>; max_concurrency 3; } START -> each input | each; each -> each; input -> each -> END; }",
        "graph P { node a { graph Q; } node b { graph ::q::Q; retry 2; } START -> a -> b -> END; } graph Q { node c; START -> c -> END; }",
    ];

    /// The examples, and every construct the reader handles, read as pest reads them. (Random
    /// inputs are compared in `tests/robustness.rs`.)
    #[test]
    fn reads_every_example_as_pest_does() {
        for text in EXAMPLES {
            let fast = parse(text).map(|file| format!("{file:?}"));
            assert!(fast.is_some(), "the fast reader handles {text:?}");
            let pest = crate::parse::parse_whole(text).map(|file| format!("{file:?}"));
            assert_eq!(fast, pest, "{text:?}");
        }
    }
}
