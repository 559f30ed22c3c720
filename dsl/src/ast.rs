//! The parsed file, as written: every name, literal and statement with its byte span.
//!
//! Nothing is checked here beyond the grammar; literals stay text until lowering decodes them.

use crate::diagnostic::Span;

/// A word with its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ident<'a> {
    pub(crate) text: &'a str,
    pub(crate) span: Span,
}

/// A `///` or `//!` line, prefix included.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DocLine<'a> {
    pub(crate) text: &'a str,
    pub(crate) span: Span,
}

#[derive(Debug, Default)]
pub(crate) struct File<'a> {
    pub(crate) docs: Vec<DocLine<'a>>,
    pub(crate) graphs: Vec<Graph<'a>>,
}

#[derive(Debug)]
pub(crate) struct Graph<'a> {
    pub(crate) docs: Vec<DocLine<'a>>,
    /// `None` when the header was malformed and the body was parsed anyway.
    pub(crate) name: Option<Ident<'a>>,
    /// The `graph Name {` header, or the brace alone after a malformed header.
    pub(crate) head_span: Span,
    pub(crate) items: Vec<Item<'a>>,
    /// Doc comments before the closing brace: they document nothing.
    pub(crate) stray_docs: Vec<DocLine<'a>>,
    /// Whether a syntax error was found inside the graph (whole-graph checks are then skipped).
    pub(crate) had_syntax_error: bool,
    /// Node names declared by statements too broken to parse; references to them are not errors.
    pub(crate) poisoned: Vec<&'a str>,
    /// From the header to the closing brace (or where parsing of the graph stopped).
    pub(crate) extent: Span,
}

#[derive(Debug)]
pub(crate) struct Item<'a> {
    pub(crate) docs: Vec<DocLine<'a>>,
    pub(crate) kind: ItemKind<'a>,
}

#[derive(Debug)]
pub(crate) enum ItemKind<'a> {
    State(RustPath<'a>),
    MaxSteps(Literal<'a>),
    Node(NodeDecl<'a>),
    Edge(EdgeStmt<'a>),
    /// A statement starting with a word that is no keyword and no edge source.
    Unknown(Ident<'a>),
}

/// A Rust type path, kept as its tokens so the IR can spell it canonically.
#[derive(Debug)]
pub(crate) struct RustPath<'a> {
    pub(crate) tokens: Vec<Ident<'a>>,
    pub(crate) span: Span,
}

/// A number, duration or string literal, undecoded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Literal<'a> {
    pub(crate) text: &'a str,
    pub(crate) span: Span,
}

#[derive(Debug)]
pub(crate) struct NodeDecl<'a> {
    pub(crate) name: Ident<'a>,
    pub(crate) attrs: Vec<Attr<'a>>,
}

#[derive(Debug)]
pub(crate) struct Attr<'a> {
    /// The attribute's first word (`retry`, `timeout`, …).
    pub(crate) keyword: Ident<'a>,
    pub(crate) kind: AttrKind<'a>,
    pub(crate) span: Span,
}

#[derive(Debug)]
pub(crate) enum AttrKind<'a> {
    Retry {
        attempts: Literal<'a>,
        backoff: Option<Literal<'a>>,
        /// `max D`: the longest wait.
        max: Option<Literal<'a>>,
        /// `jitter`, where it is written.
        jitter: Option<Span>,
    },
    /// `retry_on timeout, error;`: the failures named.
    RetryOn(Vec<Ident<'a>>),
    Timeout(Literal<'a>),
    MaxVisits(Literal<'a>),
    /// `before` or `after`, the question the pause asks and the type it is answered with, if
    /// written.
    Interrupt(Ident<'a>, Option<Literal<'a>>, Option<RustPath<'a>>),
    /// `asks Question -> Answer;`: the question's payload type and the answer's.
    Asks(RustPath<'a>, RustPath<'a>),
    Defer,
    OnError(Endpoint<'a>),
    Kind(KindSpec<'a>),
    Meta {
        key: Ident<'a>,
        value: MetaLiteral<'a>,
    },
    /// `input Type;`: what a branch sent to the node carries.
    Input(RustPath<'a>),
    /// `graph Research;`: the node runs that graph.
    Graph(RustPath<'a>),
    MaxConcurrency(Literal<'a>),
    /// `writes notes, sources;`: the state fields the node may write.
    Writes(Vec<Ident<'a>>),
    Unknown,
}

#[derive(Debug)]
pub(crate) enum KindSpec<'a> {
    Named {
        name: Ident<'a>,
        argument: Option<Ident<'a>>,
    },
    Custom(Literal<'a>),
}

#[derive(Debug)]
pub(crate) enum MetaLiteral<'a> {
    String(Literal<'a>),
    Integer(Literal<'a>),
    Bool(bool),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Endpoint<'a> {
    Start(Span),
    End(Span),
    Node(Ident<'a>),
}

impl Endpoint<'_> {
    pub(crate) fn span(&self) -> Span {
        match self {
            Endpoint::Start(span) | Endpoint::End(span) => *span,
            Endpoint::Node(ident) => ident.span,
        }
    }
}

/// `source -> hop -> … -> target;`, or `source & joined… -> join -> … -> target;`
#[derive(Debug)]
pub(crate) struct EdgeStmt<'a> {
    pub(crate) source: Endpoint<'a>,
    /// The other sources of a waiting join (`a & b -> c`): `c` runs once all are done.
    pub(crate) joined: Vec<Endpoint<'a>>,
    pub(crate) hops: Vec<Endpoint<'a>>,
    pub(crate) target: Target<'a>,
}

#[derive(Debug)]
pub(crate) enum Target<'a> {
    Single(Endpoint<'a>),
    Conditional(Vec<Endpoint<'a>>),
    Fork(Vec<Endpoint<'a>>),
    /// `each a | b`: a send.
    Send(Vec<Endpoint<'a>>),
}
