//! Source text → spanned AST, one grammar piece at a time, recovering after syntax errors.
//!
//! The file is not handed to pest whole: the driver parses a graph header, then one graph item,
//! then (inside a broken node block) one attribute at a time. A piece that does not parse yields
//! one E0001 and the driver resumes at the next `;` or `}`, so later independent errors still
//! show. Pieces are small, so pest's token queue stays small however large the file is.

use pest::Parser as _;
use pest::error::{ErrorVariant, InputLocation};
use pest::iterators::Pair;

use crate::ast::{
    Attr, AttrKind, DocLine, EdgeStmt, Endpoint, File, Graph, Ident, Item, ItemKind, KindSpec,
    Literal, MetaLiteral, NodeDecl, RustPath, Target,
};
use crate::diagnostic::{Code, Diagnostic, Diagnostics, Span};
use crate::syntax::{GraphParser, Rule};
use crate::words;
use trellis_graph::did_you_mean;

/// After this many syntax errors in one file the rest is skipped: past it, errors are noise.
const MAX_SYNTAX_ERRORS: usize = 100;

/// Parses `text`, reporting syntax errors (E0001) into `diagnostics`.
pub(crate) fn parse<'a>(text: &'a str, diagnostics: &mut Diagnostics) -> File<'a> {
    parse_with(text, diagnostics, true, FIRST_WINDOW)
}

/// The text pest first sees of a piece, at least; most statements are far shorter.
const FIRST_WINDOW: usize = 64;

/// Parses `text`: first in one go with the `file` rule when `whole_file_first` (the common,
/// valid case, without per-statement overhead), else — or when that fails — piece by piece
/// with recovery, on windows of at least `first_window` bytes.
fn parse_with<'a>(
    text: &'a str,
    diagnostics: &mut Diagnostics,
    whole_file_first: bool,
    first_window: usize,
) -> File<'a> {
    let open_comment = unterminated_comment(text);
    if whole_file_first && open_comment.is_none() {
        // The common case, read by hand; then the whole file in one pest call.
        if let Some(file) = crate::fast::parse(text).or_else(|| parse_whole(text)) {
            return file;
        }
    }
    let mut parser = Parser {
        text,
        pos: 0,
        diagnostics,
        syntax_errors: 0,
        open_comment: open_comment.is_some(),
        cuts: cut_points(text),
        first_window,
    };
    if let Some(at) = open_comment {
        parser.report_unexpected(at, &[], None, None);
    }
    parser.file()
}

/// The whole file through the grammar's `file` rule, if it parses.
pub(crate) fn parse_whole(text: &str) -> Option<File<'_>> {
    let file_pair = GraphParser::parse(Rule::file, text).ok()?.next()?;
    let mut file = File::default();
    for part in file_pair.into_inner() {
        match part.as_rule() {
            Rule::inner_doc => file.docs.push(doc_line(&part, 0)),
            Rule::graph => {
                let extent = span(&part, 0);
                let mut graph: Option<Graph<'_>> = None;
                for piece in part.into_inner() {
                    match (piece.as_rule(), graph.as_mut()) {
                        (Rule::graph_head, _) => {
                            let (docs, name, brace) = head_parts(piece, 0);
                            let head =
                                Span::new(name.map_or(brace.start, |n| n.span.start), brace.end);
                            graph = Some(Graph::new(docs, name, head));
                        }
                        (Rule::graph_item, Some(graph)) => graph.items.push(build_item(piece, 0)),
                        (Rule::graph_close, Some(graph)) => {
                            graph.stray_docs.extend(docs_of(piece, 0));
                        }
                        _ => {}
                    }
                }
                let mut graph = graph?;
                graph.extent = extent;
                file.graphs.push(graph);
            }
            _ => {}
        }
    }
    Some(file)
}

/// The `///` lines directly inside a pair.
fn docs_of(pair: Pair<'_, Rule>, base: usize) -> impl Iterator<Item = DocLine<'_>> {
    pair.into_inner()
        .filter(|p| p.as_rule() == Rule::outer_doc)
        .map(move |p| doc_line(&p, base))
}

/// The doc lines, name and brace of a `graph_head` or `node_open` pair.
fn head_parts(head: Pair<'_, Rule>, base: usize) -> (Vec<DocLine<'_>>, Option<Ident<'_>>, Span) {
    let mut docs = Vec::new();
    let mut name = None;
    let mut brace = span(&head, base);
    for part in head.into_inner() {
        match part.as_rule() {
            Rule::outer_doc => docs.push(doc_line(&part, base)),
            Rule::ident => name = Some(ident(&part, base)),
            Rule::lbrace => brace = span(&part, base),
            _ => {}
        }
    }
    (docs, name, brace)
}

/// Where a block comment that is never closed starts. Such a comment runs to the end of the
/// file, so only the last comment can be one; the file is lexed only if it has a `/*` at all.
fn unterminated_comment(text: &str) -> Option<usize> {
    if !text.contains("/*") {
        return None;
    }
    let stream = GraphParser::parse(Rule::token_stream, text).ok()?.next()?;
    let last = stream
        .into_inner()
        .filter(|pair| pair.as_rule() == Rule::comment)
        .last()?;
    let comment = last.as_str();
    if !comment.starts_with("/*") || last.as_span().end() != text.len() {
        return None;
    }
    let mut depth = 0usize;
    let mut rest = comment;
    while !rest.is_empty() {
        if rest.starts_with("/*") {
            depth += 1;
            rest = &rest[2..];
        } else if rest.starts_with("*/") {
            depth -= 1;
            rest = &rest[2..];
        } else {
            let skip = rest.chars().next().map_or(1, char::len_utf8);
            rest = &rest[skip..];
        }
    }
    (depth > 0).then(|| last.as_span().start())
}

/// Whether `text` parses piece by piece without a syntax error.
#[cfg(test)]
pub(crate) fn is_syntactically_valid(text: &str) -> bool {
    let mut diagnostics = Diagnostics::default();
    parse_with(text, &mut diagnostics, false, FIRST_WINDOW);
    diagnostics.error_count() == 0
}

struct Parser<'a, 'd> {
    text: &'a str,
    pos: usize,
    diagnostics: &'d mut Diagnostics,
    syntax_errors: usize,
    /// A block comment swallows the end of the file (already reported): running into the end
    /// of the file is that same mistake, not another one.
    open_comment: bool,
    /// Where pest's view of the text may end (see [`cut_points`]).
    cuts: Vec<usize>,
    first_window: usize,
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
fn cut_points(text: &str) -> Vec<usize> {
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

type PieceResult<'a> = Result<Pair<'a, Rule>, pest::error::Error<Rule>>;

impl<'a> Parser<'a, '_> {
    fn file(&mut self) -> File<'a> {
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
            let wanted = self.pos.saturating_add(window);
            let end = match self.cuts.binary_search(&wanted) {
                Ok(at) | Err(at) => self.cuts.get(at).copied().unwrap_or(self.text.len()),
            };
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

    fn report_unexpected(
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
enum Resync<'a> {
    /// It was complete but for its `;`: here it is.
    Recovered(Item<'a>),
    /// It is broken, but the next statement starts at this position.
    NextStatement(usize),
    /// Neither: skip to the next `;` as for any broken statement.
    None,
}

/// Where in its input a pest error is.
fn error_offset(error: &pest::error::Error<Rule>) -> usize {
    match error.location {
        InputLocation::Pos(at) | InputLocation::Span((at, _)) => at,
    }
}

/// The grammar piece a syntax error was found in, for the reminder in its help.
#[derive(Clone, Copy)]
enum Piece {
    GraphHead,
    GraphItem,
    Attribute,
}

/// The form of the statement or attribute that failed to parse, told by its first word.
fn syntax_hint(piece_text: &str, piece: Piece) -> String {
    let word: String = piece_text
        .trim_start_matches(|c: char| c == '/' || c.is_whitespace())
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let form = |list: &[words::Word]| {
        list.iter()
            .find(|form| form.name == word)
            .map(|form| form.hint.to_owned())
    };
    match piece {
        Piece::GraphHead => "a graph is written `graph Name { … }`".to_owned(),
        Piece::GraphItem => form(words::GRAPH_ITEMS).unwrap_or_else(|| {
            "an edge is `a -> b;`, `a -> b | c;` (a router picks one) or `a -> b & c;` (all run)"
                .to_owned()
        }),
        Piece::Attribute => form(words::ATTRIBUTES).unwrap_or_else(|| {
            format!(
                "an attribute is one of {}, ending in `;`",
                words::quoted(words::attribute_names(), "or")
            )
        }),
    }
}

impl<'a> Graph<'a> {
    fn new(docs: Vec<DocLine<'a>>, name: Option<Ident<'a>>, head_span: Span) -> Self {
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

/// What stands at a syntax error's position.
enum Found {
    EndOfFile,
    UnterminatedComment,
    UnterminatedString,
    Token { text: String, is_word: bool },
    Described(&'static str),
}

/// Builds the E0001 for an unexpected token at `at`, saying what was expected.
fn unexpected_token(text: &str, at: usize, expected: &[Rule]) -> Diagnostic {
    let (span, found) = found_at(text, at);
    match found {
        Found::UnterminatedComment => Diagnostic::new(
            Code::E0001,
            span,
            "unterminated block comment",
            "this comment is never closed",
        )
        .with_help("close it with `*/`; each nested `/*` needs its own `*/`"),
        Found::UnterminatedString => Diagnostic::new(
            Code::E0001,
            span,
            "unterminated string",
            "this string is never closed",
        )
        .with_help("close it with `\"`; write a quote inside a string as `\\\"`"),
        found => {
            let expected_list = describe_expected(expected);
            let found_text = found.describe();
            let help = match &found {
                Found::Token {
                    text,
                    is_word: true,
                } => did_you_mean(text, expected.iter().filter_map(|r| words::keyword_of(*r)))
                    .map(|keyword| format!("did you mean `{keyword}`?")),
                Found::Described("`//!` doc comment") => {
                    Some("`//!` documents the whole file and goes at its top".to_owned())
                }
                _ => None,
            };
            let (message, label) = if expected_list.is_empty() {
                (
                    format!("unexpected {found_text}"),
                    "unexpected here".to_owned(),
                )
            } else {
                (
                    format!("expected {expected_list}, found {found_text}"),
                    format!("expected {expected_list}"),
                )
            };
            Diagnostic::new(Code::E0001, span, message, label).with_optional_help(help)
        }
    }
}

impl Found {
    /// `keyword `node``, `` `->` ``, `end of file`, …
    fn describe(&self) -> String {
        match self {
            Found::EndOfFile => "end of file".to_owned(),
            Found::Token { text, is_word } if *is_word && words::is_reserved(text) => {
                format!("keyword `{text}`")
            }
            Found::Token { text, .. } => format!("`{text}`"),
            Found::Described(what) => (*what).to_owned(),
            Found::UnterminatedComment | Found::UnterminatedString => String::new(),
        }
    }
}

/// The token at `at`: its span and a description.
fn found_at(text: &str, at: usize) -> (Span, Found) {
    let rest = &text[at..];
    let Some(first) = rest.chars().next() else {
        return (Span::new(at, at), Found::EndOfFile);
    };
    if rest.starts_with("/*") {
        return (Span::new(at, at + 2), Found::UnterminatedComment);
    }
    if first == '"' {
        // The string rule failed here, so the string never closes.
        return (Span::new(at, at + 1), Found::UnterminatedString);
    }
    if rest.starts_with("//!") {
        let end = rest.find('\n').unwrap_or(rest.len());
        return (
            Span::new(at, at + end.min(3)),
            Found::Described("`//!` doc comment"),
        );
    }
    if rest.starts_with("///") {
        return (Span::new(at, at + 3), Found::Described("doc comment"));
    }
    if rest.starts_with("->") || rest.starts_with("::") {
        return (
            Span::new(at, at + 2),
            Found::Token {
                text: rest[..2].to_owned(),
                is_word: false,
            },
        );
    }
    if first.is_ascii_alphanumeric() || first == '_' {
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        // Quote at most a screenful of a very long word.
        let shown: String = rest[..len].chars().take(40).collect();
        let text = if shown.len() < len {
            format!("{shown}…")
        } else {
            shown
        };
        return (
            Span::new(at, at + len),
            Found::Token {
                text,
                is_word: !first.is_ascii_digit(),
            },
        );
    }
    let span = Span::new(at, at + first.len_utf8());
    let text = if first.is_control() || first.is_whitespace() {
        first.escape_default().to_string()
    } else {
        first.to_string()
    };
    (
        span,
        Found::Token {
            text,
            is_word: false,
        },
    )
}

/// The tokens a rule can start with. pest names the rule itself, not its first tokens, when it
/// fails at its own start; this spells such rules out so messages list tokens.
fn first_tokens(rule: Rule) -> Vec<Rule> {
    match rule {
        Rule::graph_head => vec![Rule::kw_graph],
        Rule::graph_item => words::GRAPH_ITEMS
            .iter()
            .map(|word| word.rule)
            .chain([Rule::kw_start, Rule::ident, Rule::rbrace])
            .collect(),
        Rule::attr => words::ATTRIBUTES
            .iter()
            .map(|word| word.rule)
            .chain([Rule::rbrace])
            .collect(),
        Rule::endpoint | Rule::target => vec![Rule::kw_start, Rule::kw_end, Rule::ident],
        Rule::rust_path => vec![Rule::path_sep, Rule::ident],
        other => vec![other],
    }
}

/// "`;`", "one of `;` or `{`", "one of `a`, `b`, or `c`".
fn describe_expected(expected: &[Rule]) -> String {
    let mut names: Vec<(usize, String)> = expected
        .iter()
        .filter_map(|rule| rule_description(*rule))
        .collect();
    // Doc comments are allowed in many places; listing them only adds noise.
    if names.len() > 1 {
        names.retain(|(_, name)| *name != "doc comment");
    }
    names.sort();
    names.dedup();
    let names: Vec<String> = names.into_iter().map(|(_, name)| name).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [one, other] => format!("one of {one} or {other}"),
        [init @ .., last] => format!("one of {}, or {last}", init.join(", ")),
    }
}

/// How a token rule is named in "expected …", with its rank in such lists (keywords first).
fn rule_description(rule: Rule) -> Option<(usize, String)> {
    let name = match rule {
        Rule::semi => "`;`",
        Rule::arrow => "`->`",
        Rule::pipe => "`|`",
        Rule::amp => "`&`",
        Rule::eq => "`=`",
        Rule::lbrace => "`{`",
        Rule::rbrace => "`}`",
        Rule::lparen => "`(`",
        Rule::rparen => "`)`",
        Rule::path_sep => "`::`",
        Rule::lt => "`<`",
        Rule::gt => "`>`",
        Rule::comma => "`,`",
        Rule::ident => "a name",
        Rule::number => "a number",
        Rule::string => "a string",
        Rule::outer_doc => "doc comment",
        Rule::inner_doc => "`//!` doc comment",
        Rule::EOI => "end of file",
        other => return words::keyword_of(other).map(|keyword| (0, format!("`{keyword}`"))),
    };
    Some((1, name.to_owned()))
}

// ---- pairs → AST -------------------------------------------------------------------------------

fn span(pair: &Pair<'_, Rule>, base: usize) -> Span {
    let inner = pair.as_span();
    Span::new(base + inner.start(), base + inner.end())
}

fn ident<'a>(pair: &Pair<'a, Rule>, base: usize) -> Ident<'a> {
    Ident {
        text: pair.as_str(),
        span: span(pair, base),
    }
}

fn literal<'a>(pair: &Pair<'a, Rule>, base: usize) -> Literal<'a> {
    Literal {
        text: pair.as_str(),
        span: span(pair, base),
    }
}

fn doc_line<'a>(pair: &Pair<'a, Rule>, base: usize) -> DocLine<'a> {
    DocLine {
        text: pair.as_str(),
        span: span(pair, base),
    }
}

fn build_item(pair: Pair<'_, Rule>, base: usize) -> Item<'_> {
    let item_span = span(&pair, base);
    let mut docs = Vec::new();
    let mut kind = None;
    for part in pair.into_inner() {
        match part.as_rule() {
            Rule::outer_doc => docs.push(doc_line(&part, base)),
            Rule::state_decl | Rule::state_decl_open => {
                let path = part
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::rust_path)
                    .map(|p| rust_path(p, base));
                kind = path.map(ItemKind::State);
            }
            Rule::max_steps_decl | Rule::max_steps_decl_open => {
                kind = part
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::number)
                    .map(|p| ItemKind::MaxSteps(literal(&p, base)));
            }
            Rule::node_decl | Rule::node_decl_open => {
                let mut name = None;
                let mut attrs = Vec::new();
                for piece in part.into_inner() {
                    match piece.as_rule() {
                        Rule::ident => name = Some(ident(&piece, base)),
                        Rule::attr => attrs.push(build_attr(piece, base)),
                        _ => {}
                    }
                }
                kind = name.map(|name| ItemKind::Node(NodeDecl { name, attrs }));
            }
            Rule::edge | Rule::edge_open => kind = Some(ItemKind::Edge(build_edge(part, base))),
            Rule::unknown_setting => {
                kind = part
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::ident)
                    .map(|p| ItemKind::Unknown(ident(&p, base)));
            }
            _ => {}
        }
    }
    Item {
        docs,
        // Every alternative of `graph_item` yields its parts; the fallback is unreachable but
        // keeps the builder total.
        kind: kind.unwrap_or(ItemKind::Unknown(Ident {
            text: "",
            span: item_span,
        })),
    }
}

fn rust_path(pair: Pair<'_, Rule>, base: usize) -> RustPath<'_> {
    let path_span = span(&pair, base);
    let mut tokens = Vec::new();
    for part in pair.into_inner() {
        if part.as_rule() == Rule::generic_args {
            tokens.extend(part.into_inner().map(|p| ident(&p, base)));
        } else {
            tokens.push(ident(&part, base));
        }
    }
    // From its first token to its last: pest's span of the rule also holds the whitespace
    // skipped while looking for generic arguments that are not there (`state Ticket ;`).
    let span = match (tokens.first(), tokens.last()) {
        (Some(first), Some(last)) => first.span.to(last.span),
        _ => path_span,
    };
    RustPath { tokens, span }
}

fn endpoint(pair: Pair<'_, Rule>, base: usize) -> Endpoint<'_> {
    let inner = pair.into_inner().next();
    match inner {
        Some(p) if p.as_rule() == Rule::kw_start => Endpoint::Start(span(&p, base)),
        Some(p) if p.as_rule() == Rule::kw_end => Endpoint::End(span(&p, base)),
        Some(p) => Endpoint::Node(ident(&p, base)),
        None => Endpoint::Node(Ident {
            text: "",
            span: Span::new(base, base),
        }),
    }
}

fn build_edge(pair: Pair<'_, Rule>, base: usize) -> EdgeStmt<'_> {
    let mut endpoints = Vec::new();
    // The endpoints before the first arrow: the source, and a join's other sources.
    let mut sources = None;
    let mut target = None;
    for part in pair.into_inner() {
        match part.as_rule() {
            Rule::endpoint => endpoints.push(endpoint(part, base)),
            Rule::arrow if sources.is_none() => sources = Some(endpoints.len()),
            Rule::target => {
                let mut fork = false;
                let mut branch = false;
                let mut send = false;
                let mut targets = Vec::new();
                for piece in part.into_inner() {
                    match piece.as_rule() {
                        Rule::endpoint => targets.push(endpoint(piece, base)),
                        Rule::pipe => branch = true,
                        Rule::amp => fork = true,
                        Rule::kw_each => send = true,
                        _ => {}
                    }
                }
                target = Some(if send {
                    Target::Send(targets)
                } else if fork {
                    Target::Fork(targets)
                } else if branch {
                    Target::Conditional(targets)
                } else {
                    match targets.pop() {
                        Some(single) => Target::Single(single),
                        None => Target::Conditional(Vec::new()),
                    }
                });
            }
            _ => {}
        }
    }
    let hops = endpoints.split_off(sources.unwrap_or(1).min(endpoints.len()));
    let mut endpoints = endpoints.into_iter();
    let source = endpoints.next().unwrap_or(Endpoint::Node(Ident {
        text: "",
        span: Span::new(base, base),
    }));
    EdgeStmt {
        source,
        joined: endpoints.collect(),
        hops,
        target: target.unwrap_or(Target::Conditional(Vec::new())),
    }
}

fn build_attr(pair: Pair<'_, Rule>, base: usize) -> Attr<'_> {
    let attr_span = span(&pair, base);
    let Some(specific) = pair.into_inner().next() else {
        return unknown_attr(attr_span);
    };
    let rule = specific.as_rule();
    let mut parts = specific.into_inner().filter(|p| {
        !matches!(
            p.as_rule(),
            Rule::semi | Rule::lparen | Rule::rparen | Rule::eq | Rule::kw_backoff
        )
    });
    let Some(first) = parts.next() else {
        return unknown_attr(attr_span);
    };
    let keyword = ident(&first, base);
    let rest: Vec<Pair<'_, Rule>> = parts.collect();
    let lit = |i: usize| rest.get(i).map(|p| literal(p, base));
    let kind = match rule {
        Rule::retry_attr => lit(0).map(|attempts| AttrKind::Retry {
            attempts,
            backoff: lit(1),
        }),
        Rule::timeout_attr => lit(0).map(AttrKind::Timeout),
        Rule::max_visits_attr => lit(0).map(AttrKind::MaxVisits),
        Rule::max_concurrency_attr => lit(0).map(AttrKind::MaxConcurrency),
        Rule::input_attr => rest
            .first()
            .cloned()
            .map(|p| AttrKind::Input(rust_path(p, base))),
        Rule::graph_attr => rest
            .first()
            .cloned()
            .map(|p| AttrKind::Graph(rust_path(p, base))),
        Rule::interrupt_attr => rest
            .first()
            .map(|p| AttrKind::Interrupt(ident(p, base), rest.get(1).map(|q| literal(q, base)))),
        Rule::defer_attr => Some(AttrKind::Defer),
        Rule::on_error_attr => rest
            .first()
            .cloned()
            .map(|p| AttrKind::OnError(endpoint(p, base))),
        Rule::kind_attr => rest.first().map(|p| {
            if p.as_rule() == Rule::string {
                AttrKind::Kind(KindSpec::Custom(literal(p, base)))
            } else {
                AttrKind::Kind(KindSpec::Named {
                    name: ident(p, base),
                    argument: rest.get(1).map(|a| ident(a, base)),
                })
            }
        }),
        Rule::meta_attr => match (rest.first(), rest.get(1)) {
            (Some(key), Some(value)) => Some(AttrKind::Meta {
                key: ident(key, base),
                value: match value.as_rule() {
                    Rule::string => MetaLiteral::String(literal(value, base)),
                    Rule::number => MetaLiteral::Integer(literal(value, base)),
                    other => MetaLiteral::Bool(other == Rule::kw_true),
                },
            }),
            _ => None,
        },
        _ => Some(AttrKind::Unknown),
    };
    Attr {
        keyword,
        kind: kind.unwrap_or(AttrKind::Unknown),
        span: attr_span,
    }
}

fn unknown_attr(span: Span) -> Attr<'static> {
    Attr {
        keyword: Ident { text: "", span },
        kind: AttrKind::Unknown,
        span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<Diagnostic> {
        let mut diagnostics = Diagnostics::default();
        parse(text, &mut diagnostics);
        diagnostics.into_sorted()
    }

    #[test]
    fn a_valid_file_parses_into_graphs_items_and_attributes() {
        let text = "//! file\n/// doc\ngraph G {\n  state a::B<C, D<E>>;\n  node x { retry 3 backoff 200ms; meta owner = \"me\"; }\n  START -> x -> y | END;\n}\n";
        let mut diagnostics = Diagnostics::default();
        let file = parse(text, &mut diagnostics);
        assert!(diagnostics.into_sorted().is_empty());
        assert_eq!(file.docs.len(), 1);
        let graph = &file.graphs[0];
        assert_eq!(graph.name.map(|n| n.text), Some("G"));
        assert_eq!(graph.items.len(), 3);
        match &graph.items[0].kind {
            ItemKind::State(path) => {
                let texts: Vec<&str> = path.tokens.iter().map(|t| t.text).collect();
                assert_eq!(
                    texts,
                    ["a", "::", "B", "<", "C", ",", "D", "<", "E", ">", ">"]
                );
            }
            other => panic!("expected state, got {other:?}"),
        }
        match &graph.items[1].kind {
            ItemKind::Node(node) => {
                assert_eq!(node.name.text, "x");
                assert_eq!(node.attrs.len(), 2);
                assert!(matches!(
                    node.attrs[0].kind,
                    AttrKind::Retry {
                        backoff: Some(_),
                        ..
                    }
                ));
            }
            other => panic!("expected node, got {other:?}"),
        }
        match &graph.items[2].kind {
            ItemKind::Edge(edge) => {
                assert!(matches!(edge.source, Endpoint::Start(_)));
                assert_eq!(edge.hops.len(), 1);
                assert!(matches!(&edge.target, Target::Conditional(t) if t.len() == 2));
            }
            other => panic!("expected edge, got {other:?}"),
        }
    }

    #[test]
    fn recovers_at_the_next_semicolon_and_reports_each_error() {
        let found = errors("graph G {\n node a b;\n node c;\n c -> -> d;\n}\n");
        let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "expected one of `;` or `{`, found `b`",
                "expected one of `END`, `START`, or a name, found `->`"
            ]
        );
    }

    #[test]
    fn recovers_inside_a_node_block_attribute_by_attribute() {
        let found = errors("graph G {\n node a { retry; timeout 1s; max_visits ; }\n}\n");
        assert_eq!(found.len(), 2);
        assert!(
            found
                .iter()
                .all(|d| d.message == "expected a number, found `;`")
        );
    }

    #[test]
    fn a_node_block_without_its_brace_is_closed_at_the_next_graph_item() {
        let found = errors("graph G {\n node a { retry 2;\n a -> END;\n}\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].message, "expected `}`, found `a`");
        assert_eq!(
            found[0].labels[0].message,
            "this node block is never closed"
        );
    }

    #[test]
    fn a_misspelled_keyword_gets_a_suggestion() {
        let found = errors("grahp G {}\n");
        assert_eq!(found[0].message, "expected `graph`, found `grahp`");
        assert_eq!(found[0].help.as_deref(), Some("did you mean `graph`?"));
        // A misspelled item keyword is no syntax error: lowering reports it as unknown (E0107).
        let checked = crate::check("graph G { nodee a; }");
        assert_eq!(checked.diagnostics[0].code, Code::E0107);
        assert_eq!(
            checked.diagnostics[0].help.as_deref(),
            Some("did you mean `node`?")
        );
        let found = errors("graph G { node a { retry 3 backof 1s; } }");
        assert_eq!(found[0].help.as_deref(), Some("did you mean `backoff`?"));
    }

    #[test]
    fn unterminated_comments_and_strings_say_so() {
        let found = errors("graph G { node a; /* open\n");
        assert_eq!(found[0].message, "unterminated block comment");
        let found = errors("graph G { node a { kind \"open; } }");
        assert_eq!(found[0].message, "unterminated string");
    }

    #[test]
    fn an_unclosed_graph_points_at_its_brace() {
        let text = "graph G {\n node a;\n";
        let found = errors(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].message, "expected `}`, found end of file");
        assert_eq!(found[0].span, Span::new(text.len(), text.len()));
        assert_eq!(found[0].labels[0].span, Span::new(8, 9));
    }

    #[test]
    fn every_whitespace_character_separates_pieces_during_recovery() {
        // A vertical tab, a form feed and a BOM before attributes of a broken node block, and one
        // real error: only the error is reported (recovery skips trivia itself between pieces).
        let found =
            errors("graph G {\n node a {\u{b}retry 2;\u{c}timeout 1s;\u{FEFF}max_visits; }\n}\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].message, "expected a number, found `;`");
    }

    #[test]
    fn cut_points_skip_strings_and_comments() {
        let text = "a; \"x;}\" // c;\n /* ; /* } */ ; */ b } \"open;";
        let cuts = cut_points(text);
        let cut_chars: Vec<char> = cuts
            .iter()
            .map(|&at| text.as_bytes()[at - 1] as char)
            .collect();
        assert_eq!(cut_chars, [';', '}']);
        assert_eq!(
            cuts,
            [2, text.find(" b }").map(|at| at + 4).unwrap_or_default()]
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
        /// Windows, and parsing the whole file in one go, change what parsing costs, never what
        /// it finds.
        #[test]
        fn windows_do_not_change_results(text in window_soup()) {
            let mut tiny = Diagnostics::default();
            let with_tiny = format!("{:?}", parse_with(&text, &mut tiny, false, 1));
            let mut whole = Diagnostics::default();
            let with_whole = format!("{:?}", parse_with(&text, &mut whole, false, usize::MAX));
            proptest::prop_assert_eq!(&with_tiny, &with_whole);
            let mut fast = Diagnostics::default();
            let with_fast = format!("{:?}", parse_with(&text, &mut fast, true, FIRST_WINDOW));
            proptest::prop_assert_eq!(&with_tiny, &with_fast);
            let tiny = tiny.into_sorted();
            proptest::prop_assert_eq!(&tiny, &whole.into_sorted());
            proptest::prop_assert_eq!(&tiny, &fast.into_sorted());
        }

        /// The piecewise parser accepts exactly what the grammar's `file` rule accepts (the
        /// grammar lets a comment left open run to the end; the front end reports it).
        #[test]
        fn pieces_accept_what_the_file_rule_accepts(text in window_soup()) {
            let whole = GraphParser::parse(Rule::file, &text).is_ok()
                && unterminated_comment(&text).is_none();
            proptest::prop_assert_eq!(is_syntactically_valid(&text), whole, "{:?}", text);
        }
    }

    fn window_soup() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        const WORDS: &[&str] = &[
            "graph",
            "G",
            "{",
            "}",
            "node",
            "a",
            "b",
            ";",
            "->",
            "|",
            "&",
            "START",
            "END",
            "retry",
            "3",
            "backoff",
            "1s",
            "state",
            "T",
            "<",
            ">",
            ",",
            "kind",
            "\"s;}\"",
            "\"open",
            "meta",
            "=",
            "/* ; } */",
            "/*",
            "*/",
            "// ; }\n",
            "/// d\n",
            "//! f\n",
            "\n",
            "x",
            "defer",
            "max_visits",
            "@",
            "\u{b}",
            "\u{c}",
            "\u{FEFF}",
            "\r\n",
        ];
        prop::collection::vec(prop::sample::select(WORDS), 0..60).prop_map(|w| w.join(" "))
    }

    #[test]
    fn syntax_errors_stop_after_the_limit() {
        let text = format!("graph G {{ {} }}", "@;".repeat(500));
        let found = errors(&text);
        assert_eq!(found.len(), MAX_SYNTAX_ERRORS);
        assert!(
            found[MAX_SYNTAX_ERRORS - 1]
                .message
                .starts_with("too many syntax errors")
        );
    }
}
