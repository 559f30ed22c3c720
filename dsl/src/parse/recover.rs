//! The driver that parses piece by piece and recovers after each syntax error.

use pest::Parser as _;
use pest::error::{ErrorVariant, InputLocation};
use pest::iterators::Pair;

use crate::ast::{DocLine, File, Graph, Ident, Item, ItemKind, NodeDecl};
use crate::diagnostic::{Code, Diagnostic, Diagnostics, Span};
use crate::syntax::{GraphParser, Rule};

use super::MAX_SYNTAX_ERRORS;
use super::expected::{Piece, first_tokens, found_at, syntax_hint, unexpected_token};
use super::tree::{batch_item, build_attr, build_item, doc_line, docs_of, head_parts, ident};

pub(super) struct Parser<'a, 'd> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
    pub(super) diagnostics: &'d mut Diagnostics,
    pub(super) syntax_errors: usize,
    /// A block comment swallows the end of the file (already reported): running into the end
    /// of the file is that same mistake, not another one.
    pub(super) open_comment: bool,
    /// Where pest's view of the text may end (see [`cut_points`]).
    pub(super) cuts: Vec<usize>,
    pub(super) first_window: usize,
    /// Items are parsed many to a pest call on windows of at least this many bytes, if set
    /// (see [`Parser::items`]).
    pub(super) batch: Option<usize>,
}

/// Byte offsets just after each `;` and `}` that stands outside strings and comments.
///
/// pest builds an error by walking from the end of its input back to the error, so a failed
/// parse of a piece would cost the whole rest of the file, and recovering from many errors in a
/// large file would be quadratic. Pieces are therefore parsed on a window of the text that ends
/// at one of these points. No piece spans one except a node block, which then fails right at the
/// window's end; a result that touches the window's end is redone on a larger window, so windows
/// change the cost of parsing, never its result (a test compares with unwindowed parsing).
///
/// The scan follows the grammar's lexical rules for strings and comments (nested block comments;
/// a comment left open runs to the end; a string left open hides everything after it, which only
/// makes windows larger).
pub(super) fn cut_points(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut cuts = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b';' | b'}' => {
                cuts.push(at + 1);
                at += 1;
            }
            b'"' => {
                at += 1;
                loop {
                    match bytes.get(at) {
                        None => return cuts,
                        Some(b'"') => break,
                        Some(b'\\') => at += 2,
                        Some(_) => at += 1,
                    }
                }
                at += 1;
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at = bytes[at..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |newline| at + newline);
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                let mut depth = 0usize;
                while at < bytes.len() {
                    if bytes[at..].starts_with(b"/*") {
                        depth += 1;
                        at += 2;
                    } else if bytes[at..].starts_with(b"*/") {
                        depth -= 1;
                        at += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        at += 1;
                    }
                }
            }
            _ => at += 1,
        }
    }
    cuts
}

pub(super) type PieceResult<'a> = Result<Pair<'a, Rule>, pest::error::Error<Rule>>;

impl<'a> Parser<'a, '_> {
    pub(super) fn file(&mut self) -> File<'a> {
        let mut file = File::default();
        loop {
            self.skip_trivia();
            let Ok(doc) = self.piece(Rule::file_doc) else {
                break;
            };
            let base = self.pos;
            self.pos += doc.as_str().len();
            file.docs
                .extend(doc.into_inner().map(|p| doc_line(&p, base)));
        }
        loop {
            self.skip_trivia();
            if self.at_end() || self.gave_up() {
                break;
            }
            let start = self.pos;
            match self.piece(Rule::graph_head) {
                Ok(head) => {
                    self.pos += head.as_str().len();
                    let (docs, name, brace) = head_parts(head, start);
                    let head_span = Span::new(
                        name.map_or(brace.start, |n: Ident<'_>| n.span.start),
                        brace.end,
                    );
                    let mut graph = Graph::new(docs, name, head_span);
                    self.graph_body(&mut graph, brace);
                    graph.extent = Span::new(start, self.pos);
                    file.graphs.push(graph);
                }
                Err(error) => {
                    self.syntax_error(start, &error, Piece::GraphHead);
                    match self.recover(start) {
                        Some(b'{') => {
                            // A malformed header: still check the body, as a graph without a name.
                            let brace = Span::new(self.pos, self.pos + 1);
                            self.pos += 1;
                            let mut graph = Graph::new(Vec::new(), None, brace);
                            graph.had_syntax_error = true;
                            self.graph_body(&mut graph, brace);
                            graph.extent = Span::new(start, self.pos);
                            file.graphs.push(graph);
                        }
                        Some(_) => self.pos += 1,
                        None => {}
                    }
                }
            }
        }
        let declared = self.names_after_node();
        if !declared.is_empty() {
            for graph in &mut file.graphs {
                graph.poisoned.clone_from(&declared);
            }
        }
        file
    }

    fn graph_body(&mut self, graph: &mut Graph<'a>, open_brace: Span) {
        loop {
            self.skip_trivia();
            if self.gave_up() {
                graph.had_syntax_error = true;
                return;
            }
            if self.at_end() {
                graph.had_syntax_error = true;
                self.unclosed(open_brace, "this graph is never closed");
                return;
            }
            if let Some(window) = self.batch
                && self.items(graph, window)
            {
                continue;
            }
            let start = self.pos;
            // The item first: in a valid file every piece then parses at the first try.
            match self.piece(Rule::graph_item) {
                Ok(item) => {
                    self.pos += item.as_str().len();
                    graph.items.push(build_item(item, start));
                }
                Err(error) => {
                    if let Ok(close) = self.piece(Rule::graph_close) {
                        self.pos += close.as_str().len();
                        graph.stray_docs.extend(docs_of(close, start));
                        return;
                    }
                    graph.had_syntax_error = true;
                    if let Ok(open) = self.piece(Rule::node_open) {
                        self.pos += open.as_str().len();
                        let item = self.node_block(open, start);
                        graph.items.push(item);
                        continue;
                    }
                    match self.missing_semicolon(start, &error) {
                        Resync::Recovered(item) => {
                            graph.items.push(item);
                            continue;
                        }
                        // Report the broken statement, but not the next one with it.
                        Resync::NextStatement(at) => {
                            self.syntax_error(start, &error, Piece::GraphItem);
                            self.pos = at;
                            continue;
                        }
                        Resync::None => {}
                    }
                    // A broken declaration still declares its node, so that neither its uses
                    // nor the code that implements it are reported again.
                    if let Ok(probe) = self.piece(Rule::node_name_probe)
                        && let Some(name) = probe.into_inner().find(|p| p.as_rule() == Rule::ident)
                    {
                        graph.items.push(Item {
                            docs: Vec::new(),
                            kind: ItemKind::Node(NodeDecl {
                                name: ident(&name, start),
                                attrs: Vec::new(),
                            }),
                        });
                    }
                    self.syntax_error(start, &error, Piece::GraphItem);
                    self.resume_after_broken_piece(start);
                }
            }
        }
    }

    /// Parses the items that follow, as many as a window of at least `window` bytes holds, in
    /// one pest call (`batch_items`); whether there was one. Anything else — the graph's end, a
    /// syntax error, an item that `graph_item` would not accept as written, an item longer than
    /// the window — is left to the item-by-item path, which judges it.
    ///
    /// An item ends with its `;` or `}` and no rule looks past that, so an item that parses in
    /// a window parses the same in the whole text; one that the window cuts does not parse,
    /// and the batch ends before it.
    fn items(&mut self, graph: &mut Graph<'a>, window: usize) -> bool {
        let end = self.window_end(window);
        let start = self.pos;
        let Some(items) = GraphParser::parse(Rule::batch_items, &self.text[start..end])
            .ok()
            .and_then(|mut pairs| pairs.next())
        else {
            return false;
        };
        let before = graph.items.len();
        for pair in items.into_inner() {
            let end = start + pair.as_span().end();
            let Some(item) = batch_item(pair, start) else {
                break;
            };
            graph.items.push(item);
            self.pos = end;
        }
        graph.items.len() > before
    }

    /// Parses the attributes of a node block one by one, after `node name {` parsed but the
    /// whole declaration did not.
    fn node_block(&mut self, open: Pair<'a, Rule>, start: usize) -> Item<'a> {
        let (docs, name, brace) = head_parts(open, start);
        let mut attrs = Vec::new();
        loop {
            self.skip_trivia();
            if self.gave_up() {
                break;
            }
            if self.at_end() {
                self.unclosed(brace, "this node block is never closed");
                break;
            }
            if self.rest().starts_with('}') {
                self.pos += 1;
                break;
            }
            let attr_start = self.pos;
            match self.piece(Rule::attr) {
                Ok(attr) => {
                    self.pos += attr.as_str().len();
                    attrs.push(build_attr(attr, attr_start));
                }
                Err(error) => {
                    if self.piece(Rule::graph_item).is_ok() {
                        // A graph item where an attribute should be: the block lacks its `}`.
                        self.report_unexpected(
                            attr_start,
                            &[Rule::rbrace],
                            Some((brace, "this node block is never closed")),
                            Some("add the missing `}` after the last attribute"),
                        );
                        break;
                    }
                    self.syntax_error(attr_start, &error, Piece::Attribute);
                    self.resume_after_broken_piece(attr_start);
                }
            }
        }
        let name = name.unwrap_or(Ident {
            text: "",
            span: brace,
        });
        Item {
            docs,
            kind: ItemKind::Node(NodeDecl { name, attrs }),
        }
    }

    /// After a syntax error, every name written after `node` anywhere in the file: the source
    /// declares them, even where recovery skipped the statement or a stray `}` closed a graph
    /// early, so no use of them is reported as undeclared. The first word after `node` in the
    /// same statement counts, stray marks between them or not (`node <draft {` still means
    /// `draft`). A plain scan, no lexing (a 50 MB file of garbage has many errors); a `node` in a
    /// comment may count too, which only ever spares an error while another one stands.
    fn names_after_node(&self) -> Vec<&'a str> {
        if self.syntax_errors == 0 {
            return Vec::new();
        }
        let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        let bytes = self.text.as_bytes();
        let mut names = Vec::new();
        for (at, _) in self.text.match_indices("node") {
            let after = at + "node".len();
            let bounded = (at == 0 || !is_word(bytes[at - 1]))
                && bytes.get(after).is_none_or(|&c| !is_word(c));
            if !bounded {
                continue;
            }
            // To the next word, over marks, strings and comments, within the statement.
            let mut start = after;
            while let Some(&c) = bytes.get(start) {
                if bytes[start..].starts_with(b"//") {
                    start += bytes[start..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .unwrap_or(bytes.len() - start);
                } else if bytes[start..].starts_with(b"/*") {
                    start += bytes[start..]
                        .windows(2)
                        .position(|pair| pair == b"*/")
                        .map_or(bytes.len() - start, |end| end + 2);
                } else if c == b'"' {
                    start += 1;
                    while let Some(&c) = bytes.get(start) {
                        start += if c == b'\\' { 2 } else { 1 };
                        if c == b'"' {
                            break;
                        }
                    }
                } else if is_word(c) || matches!(c, b';' | b'{' | b'}') {
                    break;
                } else {
                    start += 1;
                }
            }
            if !bytes
                .get(start)
                .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
            {
                continue;
            }
            let end = bytes[start..]
                .iter()
                .position(|&c| !is_word(c))
                .map_or(bytes.len(), |length| start + length);
            names.push(&self.text[start..end]);
        }
        names
    }

    /// A statement that runs into the next one for want of its `;`: when the piece failed where a
    /// `;` could stand, at a token that starts the next statement (or closes the graph), the
    /// statement is reported once as missing its `;` and kept as written, having moved past it;
    /// if even without its `;` it is no statement, parsing still resumes at the next one.
    fn missing_semicolon(&mut self, start: usize, error: &pest::error::Error<Rule>) -> Resync<'a> {
        let wants_semicolon = match &error.variant {
            ErrorVariant::ParsingError { positives, .. } => positives
                .iter()
                .any(|rule| first_tokens(*rule).contains(&Rule::semi)),
            ErrorVariant::CustomError { .. } => false,
        };
        let at = start + error_offset(error);
        if !wants_semicolon || at <= start {
            return Resync::None;
        }
        let next_starts = {
            let saved = self.pos;
            self.pos = at;
            // A known statement (not a stray word, which may as well belong to this one).
            let item = self.piece(Rule::graph_item).is_ok_and(|item| {
                item.into_inner()
                    .all(|part| part.as_rule() != Rule::unknown_setting)
            });
            let starts = item || self.piece(Rule::graph_close).is_ok();
            self.pos = saved;
            starts
        };
        if !next_starts {
            return Resync::None;
        }
        let Some(statement) = GraphParser::parse(Rule::unterminated_item, &self.text[start..at])
            .ok()
            .and_then(|mut pairs| pairs.next())
        else {
            return Resync::NextStatement(at);
        };
        // Where the `;` belongs: right after the statement's last token (a rule's span may
        // reach over the trivia after it).
        let end = statement
            .clone()
            .into_inner()
            .flatten()
            .filter(|pair| {
                pair.as_rule() != Rule::EOI && pair.clone().into_inner().next().is_none()
            })
            .map(|token| start + token.as_span().end())
            .max()
            .unwrap_or(at);
        let item = build_item(statement, start);
        if !self.gave_up() {
            self.syntax_errors += 1;
            let (found, what) = found_at(self.text, at);
            let found_text = what.describe();
            self.diagnostics.push(
                Diagnostic::new(
                    Code::E0001,
                    Span::new(end, end),
                    format!("expected `;`, found {found_text}"),
                    "add `;` here",
                )
                .with_label(
                    found,
                    if self.text[at..].starts_with('}') {
                        "the graph closes here"
                    } else {
                        "the next statement starts here"
                    },
                )
                .with_help("end each statement with `;`"),
            );
        }
        self.pos = at;
        Resync::Recovered(item)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn gave_up(&self) -> bool {
        self.syntax_errors >= MAX_SYNTAX_ERRORS
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    /// Parses one piece at the current position, on a window of the text (see [`cut_points`]).
    fn piece(&self, rule: Rule) -> PieceResult<'a> {
        let mut window = self.first_window;
        loop {
            let end = self.window_end(window);
            let slice = &self.text[self.pos..end];
            let result = GraphParser::parse(rule, slice);
            let trusted = end == self.text.len()
                || match &result {
                    Ok(_) => true,
                    Err(error) => error_offset(error) < slice.len(),
                };
            if trusted {
                return result.and_then(|mut pairs| {
                    pairs.next().ok_or_else(|| {
                        pest::error::Error::new_from_pos(
                            ErrorVariant::ParsingError {
                                positives: vec![rule],
                                negatives: vec![],
                            },
                            pest::Position::from_start(slice),
                        )
                    })
                });
            }
            window = window.saturating_mul(4);
        }
    }

    /// Where a window of at least `window` bytes from here ends: at the first cut point that far
    /// or farther, else at the end of the text.
    fn window_end(&self, window: usize) -> usize {
        let wanted = self.pos.saturating_add(window);
        match self.cuts.binary_search(&wanted) {
            Ok(at) | Err(at) => self.cuts.get(at).copied().unwrap_or(self.text.len()),
        }
    }

    fn skip_trivia(&mut self) {
        // Most pieces start right at a token; only call into pest when there is trivia.
        match self.rest().as_bytes().first() {
            // The grammar's whitespace (tab to carriage return, space, a BOM's first byte), comments.
            Some(b'\t'..=b'\r' | b' ' | b'/' | 0xEF) => {}
            _ => return,
        }
        if let Ok(trivia) = self.piece(Rule::trivia) {
            self.pos += trivia.as_str().len();
        }
    }

    /// Skips from `start` to the next `;`, `{` or `}` outside strings and comments and returns
    /// that byte (not consumed), or `None` at the end of the text.
    fn recover(&mut self, start: usize) -> Option<u8> {
        self.pos = start;
        if let Ok(skipped) = self.piece(Rule::recover) {
            self.pos += skipped.as_str().len();
        }
        self.text.as_bytes().get(self.pos).copied()
    }

    /// After a broken piece: consume up to and including its `;`, or its whole `{ … }` block;
    /// stop before a `}`, which closes the enclosing block.
    fn resume_after_broken_piece(&mut self, start: usize) {
        match self.recover(start) {
            Some(b';') => self.pos += 1,
            Some(b'{') => self.skip_block(),
            _ => {}
        }
    }

    /// Skips a balanced `{ … }` starting at the current `{`.
    fn skip_block(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.text.as_bytes().get(self.pos) {
                Some(b'{') => depth += 1,
                Some(b'}') => depth -= 1,
                Some(b';') => {}
                _ => return,
            }
            self.pos += 1;
            if depth == 0 {
                return;
            }
            let here = self.pos;
            self.recover(here);
        }
    }

    fn syntax_error(&mut self, base: usize, error: &pest::error::Error<Rule>, piece: Piece) {
        let offset = error_offset(error);
        let expected: Vec<Rule> = match &error.variant {
            ErrorVariant::ParsingError { positives, .. } => positives
                .iter()
                .flat_map(|rule| first_tokens(*rule))
                .collect(),
            ErrorVariant::CustomError { .. } => Vec::new(),
        };
        let hint = syntax_hint(&self.text[base..], piece);
        self.report_unexpected(base + offset, &expected, None, Some(&hint));
    }

    fn unclosed(&mut self, open_brace: Span, label: &str) {
        if self.open_comment {
            return;
        }
        self.report_unexpected(
            self.text.len(),
            &[Rule::rbrace],
            Some((open_brace, label)),
            Some("add the missing `}`"),
        );
    }

    pub(super) fn report_unexpected(
        &mut self,
        at: usize,
        expected: &[Rule],
        context: Option<(Span, &str)>,
        hint: Option<&str>,
    ) {
        if self.gave_up() {
            return;
        }
        self.syntax_errors += 1;
        let diagnostic = if self.gave_up() {
            Diagnostic::new(
                Code::E0001,
                Span::new(at, at),
                format!("too many syntax errors ({MAX_SYNTAX_ERRORS}); the rest of the file was not checked"),
                "checking stopped here",
            )
            .with_help("fix the errors above and check again")
        } else {
            let diagnostic = unexpected_token(self.text, at, expected);
            match (&diagnostic.help, hint) {
                (None, Some(hint)) => diagnostic.with_help(hint),
                _ => diagnostic,
            }
        };
        let diagnostic = match context {
            Some((span, label)) => diagnostic.with_label(span, label),
            None => diagnostic,
        };
        self.diagnostics.push(diagnostic);
    }
}

/// How parsing goes on after a statement that failed where its `;` could stand.
pub(super) enum Resync<'a> {
    /// It was complete but for its `;`: here it is.
    Recovered(Item<'a>),
    /// It is broken, but the next statement starts at this position.
    NextStatement(usize),
    /// Neither: skip to the next `;` as for any broken statement.
    None,
}

/// Where in its input a pest error is.
pub(super) fn error_offset(error: &pest::error::Error<Rule>) -> usize {
    match error.location {
        InputLocation::Pos(at) | InputLocation::Span((at, _)) => at,
    }
}

impl<'a> Graph<'a> {
    pub(super) fn new(docs: Vec<DocLine<'a>>, name: Option<Ident<'a>>, head_span: Span) -> Self {
        Graph {
            docs,
            name,
            head_span,
            items: Vec::new(),
            stray_docs: Vec::new(),
            had_syntax_error: false,
            poisoned: Vec::new(),
            extent: head_span,
        }
    }
}
