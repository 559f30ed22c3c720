//! The message loop: documents opened and changed, diagnostics published after each change,
//! requests answered one at a time in the order they came.

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    Cancel, DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument,
    DidOpenTextDocument, DidSaveTextDocument, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentLinkRequest, DocumentSymbolRequest, FoldingRangeRequest,
    Formatting, GotoDefinition, HoverRequest, PrepareRenameRequest, References, Rename,
    Request as _, SemanticTokensFullRequest, WorkspaceSymbolRequest,
};
use lsp_types::{
    CodeActionProviderCapability, CompletionOptions, FoldingRangeProviderCapability,
    HoverProviderCapability, OneOf, PositionEncodingKind, PrepareRenameResponse,
    PublishDiagnosticsParams, RenameOptions, SemanticTokensFullOptions, SemanticTokensOptions,
    SemanticTokensServerCapabilities, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextEdit, Uri,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::LspError;
use crate::analysis::Analysis;
use crate::{complete, diagnostics, hover, navigate, semantic, workspace};

/// The request that asks the client to tell of every `.graph` file created, changed or
/// deleted (`workspace/didChangeWatchedFiles`), so that documents naming their graphs are
/// checked again.
pub(crate) fn watch_graph_files() -> Request {
    let registration = lsp_types::Registration {
        id: "trellis-graph-files".to_owned(),
        method: DidChangeWatchedFiles::METHOD.to_owned(),
        register_options: serde_json::to_value(
            lsp_types::DidChangeWatchedFilesRegistrationOptions {
                watchers: vec![lsp_types::FileSystemWatcher {
                    glob_pattern: lsp_types::GlobPattern::String("**/*.graph".to_owned()),
                    kind: None,
                }],
            },
        )
        .ok(),
    };
    Request::new(
        "trellis/watch".to_owned().into(),
        lsp_types::request::RegisterCapability::METHOD.to_owned(),
        lsp_types::RegistrationParams {
            registrations: vec![registration],
        },
    )
}

/// What the server can do, as told to the client.
pub(crate) fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            lsp_types::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(lsp_types::TextDocumentSyncSaveOptions::Supported(true)),
                ..lsp_types::TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![">".into(), "|".into(), "&".into()]),
            ..CompletionOptions::default()
        }),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: semantic::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                work_done_progress_options: Default::default(),
            },
        )),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        document_link_provider: Some(lsp_types::DocumentLinkOptions {
            resolve_provider: Some(false),
            work_done_progress_options: Default::default(),
        }),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        ..ServerCapabilities::default()
    }
}

/// The open documents, by URI.
#[derive(Default)]
pub(crate) struct Server {
    documents: HashMap<String, (Uri, Analysis)>,
}

impl Server {
    /// Serves until the client shuts the server down.
    ///
    /// Messages are taken in order, with everything already waiting read first: a change to a
    /// document that a newer change (or its closing) waits behind is not analysed (full sync:
    /// the newer one holds the whole text), a request on a document that a newer change waits
    /// behind is answered `ContentModified`, and one cancelled by a waiting `$/cancelRequest`
    /// is answered `RequestCanceled` — so a burst of keystrokes costs one analysis, not one each.
    pub(crate) fn run(&mut self, connection: &Connection) -> Result<(), LspError> {
        let mut waiting: VecDeque<Message> = VecDeque::new();
        loop {
            if waiting.is_empty() {
                match connection.receiver.recv() {
                    Ok(message) => waiting.push_back(message),
                    Err(_) => return Ok(()),
                }
            }
            waiting.extend(connection.receiver.try_iter());
            let Some(message) = waiting.pop_front() else {
                continue;
            };
            match message {
                Message::Request(request) => {
                    if connection.handle_shutdown(&request)? {
                        return Ok(());
                    }
                    let response = match stale(&request, &waiting) {
                        Some((code, reason)) => {
                            Response::new_err(request.id, code as i32, reason.to_owned())
                        }
                        None => self.request(request),
                    };
                    connection.sender.send(Message::Response(response))?;
                }
                Message::Notification(notification) => {
                    if superseded(&notification, &waiting) {
                        continue;
                    }
                    for published in self.notification(notification) {
                        connection.sender.send(Message::Notification(published))?;
                    }
                }
                Message::Response(_) => {}
            }
        }
    }

    /// A notification; the diagnostics to publish: a changed document's, and those of the
    /// open documents beside a changed file (which may name its graphs).
    fn notification(&mut self, notification: Notification) -> Vec<Notification> {
        let mut published = Vec::new();
        let changed: Vec<Uri> = match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Some(params) =
                    parse::<lsp_types::DidOpenTextDocumentParams>(notification.params)
                else {
                    return published;
                };
                let document = params.text_document;
                published.push(self.update(document.uri.clone(), document.text, document.version));
                vec![document.uri]
            }
            DidChangeTextDocument::METHOD => {
                let Some(params) =
                    parse::<lsp_types::DidChangeTextDocumentParams>(notification.params)
                else {
                    return published;
                };
                // Full sync: the last change holds the whole text.
                let Some(change) = params.content_changes.into_iter().last() else {
                    return published;
                };
                let document = params.text_document;
                published.push(self.update(document.uri.clone(), change.text, document.version));
                vec![document.uri]
            }
            DidCloseTextDocument::METHOD => {
                let Some(params) =
                    parse::<lsp_types::DidCloseTextDocumentParams>(notification.params)
                else {
                    return published;
                };
                let uri = params.text_document.uri;
                self.documents.remove(uri.as_str());
                published.push(publish(uri.clone(), Vec::new(), None));
                vec![uri]
            }
            DidSaveTextDocument::METHOD => {
                parse::<lsp_types::DidSaveTextDocumentParams>(notification.params)
                    .map(|params| vec![params.text_document.uri])
                    .unwrap_or_default()
            }
            DidChangeWatchedFiles::METHOD => {
                parse::<lsp_types::DidChangeWatchedFilesParams>(notification.params)
                    .map(|params| {
                        params
                            .changes
                            .into_iter()
                            .map(|change| change.uri)
                            .collect()
                    })
                    .unwrap_or_default()
            }
            _ => Vec::new(),
        };
        published.extend(self.recheck_beside(&changed));
        published
    }

    /// Reads a document's new text and returns its diagnostics.
    fn update(&mut self, uri: Uri, text: String, version: i32) -> Notification {
        let mut analysis = Analysis::new(text);
        workspace::resolve(&uri, &mut analysis, &|file| self.read(file));
        let found = diagnostics::to_lsp(&uri, &analysis);
        self.documents
            .insert(uri.as_str().to_owned(), (uri.clone(), analysis));
        publish(uri, found, Some(version))
    }

    /// The open documents that name a graph of one of the `changed` files (a subgraph path
    /// to its module), looked up again, and their diagnostics.
    fn recheck_beside(&mut self, changed: &[Uri]) -> Vec<Notification> {
        let beside: Vec<String> = self
            .documents
            .iter()
            .filter(|(_, (uri, analysis))| {
                changed
                    .iter()
                    .any(|file| file != uri && workspace::names_graphs_of(uri, analysis, file))
            })
            .map(|(key, _)| key.clone())
            .collect();
        let mut published = Vec::new();
        for key in beside {
            let Some((uri, analysis)) = self.documents.remove(&key) else {
                continue;
            };
            let mut again = Analysis::new(analysis.text);
            workspace::resolve(&uri, &mut again, &|file| self.read(file));
            published.push(publish(
                uri.clone(),
                diagnostics::to_lsp(&uri, &again),
                None,
            ));
            self.documents.insert(key, (uri, again));
        }
        published
    }

    /// The graphs and nodes whose names contain `query` (any case), of the open documents
    /// and of the `.graph` files beside them.
    #[allow(deprecated)] // `SymbolInformation::deprecated`, which the type still has.
    fn workspace_symbols(&self, query: &str) -> Vec<lsp_types::SymbolInformation> {
        let mut files: Vec<Uri> = Vec::new();
        for (uri, _) in self.documents.values() {
            for file in self.folder_files(uri) {
                if !files.contains(&file) {
                    files.push(file);
                }
            }
        }
        files.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        let query = query.to_lowercase();
        let mut symbols = Vec::new();
        for file in files {
            let Some(text) = self.read(&file) else {
                continue;
            };
            let analysis = Analysis::new(text);
            for symbol in navigate::symbols(&analysis) {
                let graph = symbol.name.clone();
                let children = symbol.children.clone().unwrap_or_default();
                for (found, container) in std::iter::once((symbol, None)).chain(
                    children
                        .into_iter()
                        .map(|child| (child, Some(graph.clone()))),
                ) {
                    if found.name.to_lowercase().contains(&query) {
                        symbols.push(lsp_types::SymbolInformation {
                            name: found.name,
                            kind: found.kind,
                            tags: None,
                            deprecated: None,
                            location: lsp_types::Location::new(file.clone(), found.selection_range),
                            container_name: container,
                        });
                    }
                }
            }
        }
        symbols
    }

    /// The `.graph` files in the folder of `uri`, itself first: those open and those on disk.
    fn folder_files(&self, uri: &Uri) -> Vec<Uri> {
        let folder = workspace::folder_of;
        let mut files: Vec<Uri> = vec![uri.clone()];
        let open = self.documents.values().map(|(open, _)| open.clone());
        let on_disk = workspace::local_path(uri)
            .and_then(|path| path.parent().map(Path::to_owned))
            .and_then(|folder| std::fs::read_dir(folder).ok())
            .into_iter()
            .flat_map(|entries| entries.flatten())
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                workspace::beside(uri, name.strip_suffix(".graph")?)
            });
        for file in open.chain(on_disk) {
            if folder(&file) == folder(uri) && !files.contains(&file) {
                files.push(file);
            }
        }
        files
    }

    /// A file's text: the open document's, else the file's on disk.
    fn read(&self, uri: &Uri) -> Option<String> {
        match self.documents.get(uri.as_str()) {
            Some((_, analysis)) => Some(analysis.text.clone()),
            None => std::fs::read_to_string(workspace::local_path(uri)?).ok(),
        }
    }

    fn request(&self, request: Request) -> Response {
        let id = request.id.clone();
        match request.method.as_str() {
            HoverRequest::METHOD => self.answer(request, |p: lsp_types::HoverParams| {
                let at = p.text_document_position_params;
                let (_, analysis, offset) = self.at(&at.text_document.uri, at.position)?;
                Ok(hover::hover(analysis, offset))
            }),
            GotoDefinition::METHOD => self.answer(request, |p: lsp_types::GotoDefinitionParams| {
                let at = p.text_document_position_params;
                let (uri, analysis, offset) = self.at(&at.text_document.uri, at.position)?;
                Ok(navigate::definition(uri, analysis, offset))
            }),
            References::METHOD => self.answer(request, |p: lsp_types::ReferenceParams| {
                let at = p.text_document_position;
                let (uri, analysis, offset) = self.at(&at.text_document.uri, at.position)?;
                let with_declaration = p.context.include_declaration;
                Ok(navigate::references(
                    uri,
                    analysis,
                    offset,
                    with_declaration,
                ))
            }),
            PrepareRenameRequest::METHOD => {
                self.answer(request, |p: lsp_types::TextDocumentPositionParams| {
                    let (uri, analysis, offset) = self.at(&p.text_document.uri, p.position)?;
                    if let Some((_, name, span)) = workspace::graph_at(uri, analysis, offset) {
                        return Ok(PrepareRenameResponse::RangeWithPlaceholder {
                            range: analysis.lines.range(&analysis.text, span),
                            placeholder: name,
                        });
                    }
                    let at = navigate::prepare_rename(analysis, offset).map_err(refused)?;
                    let range = analysis.lines.range(&analysis.text, at.span);
                    Ok(PrepareRenameResponse::RangeWithPlaceholder {
                        range,
                        placeholder: at.name,
                    })
                })
            }
            Rename::METHOD => self.answer(request, |p: lsp_types::RenameParams| {
                let at = p.text_document_position;
                let (uri, analysis, offset) = self.at(&at.text_document.uri, at.position)?;
                // A graph's name: in its file and in the paths to it from the files beside.
                if let Some((declaring, name, _)) = workspace::graph_at(uri, analysis, offset) {
                    let files: Vec<(Uri, String)> = self
                        .folder_files(&declaring)
                        .into_iter()
                        .filter_map(|file| Some((file.clone(), self.read(&file)?)))
                        .collect();
                    let changes = workspace::rename_graph(&declaring, &name, &p.new_name, &files)
                        .map_err(refused)?;
                    return Ok(lsp_types::WorkspaceEdit::new(changes.into_iter().collect()));
                }
                navigate::rename(uri, analysis, offset, &p.new_name).map_err(refused)
            }),
            Completion::METHOD => self.answer(request, |p: lsp_types::CompletionParams| {
                let at = p.text_document_position;
                let (_, analysis, offset) = self.at(&at.text_document.uri, at.position)?;
                Ok(complete::complete(analysis, offset))
            }),
            DocumentSymbolRequest::METHOD => {
                self.answer(request, |p: lsp_types::DocumentSymbolParams| {
                    let (_, analysis) = self.document(&p.text_document.uri)?;
                    Ok(lsp_types::DocumentSymbolResponse::Nested(
                        navigate::symbols(analysis),
                    ))
                })
            }
            Formatting::METHOD => self.answer(request, |p: lsp_types::DocumentFormattingParams| {
                let (_, analysis) = self.document(&p.text_document.uri)?;
                // A file that does not parse is left alone; its diagnostics say why.
                Ok(trellis_dsl::format(&analysis.text).ok().map(|formatted| {
                    let whole = trellis_dsl::Span::new(0, analysis.text.len());
                    vec![TextEdit::new(
                        analysis.lines.range(&analysis.text, whole),
                        formatted,
                    )]
                }))
            }),
            SemanticTokensFullRequest::METHOD => {
                self.answer(request, |p: lsp_types::SemanticTokensParams| {
                    let (_, analysis) = self.document(&p.text_document.uri)?;
                    Ok(lsp_types::SemanticTokensResult::Tokens(semantic::tokens(
                        analysis,
                    )))
                })
            }
            DocumentLinkRequest::METHOD => {
                self.answer(request, |p: lsp_types::DocumentLinkParams| {
                    let (_, analysis) = self.document(&p.text_document.uri)?;
                    Ok(navigate::links(analysis))
                })
            }
            WorkspaceSymbolRequest::METHOD => {
                self.answer(request, |p: lsp_types::WorkspaceSymbolParams| {
                    Ok(lsp_types::WorkspaceSymbolResponse::Flat(
                        self.workspace_symbols(&p.query),
                    ))
                })
            }
            FoldingRangeRequest::METHOD => {
                self.answer(request, |p: lsp_types::FoldingRangeParams| {
                    let (_, analysis) = self.document(&p.text_document.uri)?;
                    Ok(semantic::folding_ranges(analysis))
                })
            }
            CodeActionRequest::METHOD => self.answer(request, |p: lsp_types::CodeActionParams| {
                let (uri, analysis) = self.document(&p.text_document.uri)?;
                Ok(diagnostics::quick_fixes(uri, analysis, p.range))
            }),
            method => Response::new_err(
                id,
                ErrorCode::MethodNotFound as i32,
                format!("`{method}` is not a request this server answers"),
            ),
        }
    }

    /// Decodes a request's parameters, runs `answer` on them, and encodes its result.
    fn answer<P, R>(
        &self,
        request: Request,
        answer: impl FnOnce(P) -> Result<R, (ErrorCode, String)>,
    ) -> Response
    where
        P: DeserializeOwned,
        R: Serialize,
    {
        let params = match serde_json::from_value::<P>(request.params) {
            Ok(params) => params,
            Err(error) => {
                return Response::new_err(
                    request.id,
                    ErrorCode::InvalidParams as i32,
                    format!(
                        "the parameters of `{}` do not parse: {error}",
                        request.method
                    ),
                );
            }
        };
        match answer(params) {
            Ok(result) => Response::new_ok(request.id, result),
            Err((code, message)) => Response::new_err(request.id, code as i32, message),
        }
    }

    fn document(&self, uri: &Uri) -> Result<(&Uri, &Analysis), (ErrorCode, String)> {
        self.documents
            .get(uri.as_str())
            .map(|(uri, analysis)| (uri, analysis))
            .ok_or_else(|| {
                (
                    ErrorCode::InvalidParams,
                    format!("`{}` is not open", uri.as_str()),
                )
            })
    }

    fn at(
        &self,
        uri: &Uri,
        position: lsp_types::Position,
    ) -> Result<(&Uri, &Analysis, usize), (ErrorCode, String)> {
        let (uri, analysis) = self.document(uri)?;
        Ok((
            uri,
            analysis,
            analysis.lines.offset(&analysis.text, position),
        ))
    }
}

/// The document a message is about (`params.textDocument.uri`), if any.
fn document_of(params: &serde_json::Value) -> Option<&str> {
    params.get("textDocument")?.get("uri")?.as_str()
}

/// Whether a message waiting in `queue` replaces the text of document `uri`.
fn changed_later(uri: &str, queue: &VecDeque<Message>) -> bool {
    queue.iter().any(|message| {
        matches!(message, Message::Notification(later)
            if (later.method == DidChangeTextDocument::METHOD
                || later.method == DidCloseTextDocument::METHOD)
                && document_of(&later.params) == Some(uri))
    })
}

/// Whether a change notification is superseded by a newer change of its document waiting in
/// `queue` (full sync: the newer one holds the whole text).
fn superseded(notification: &Notification, queue: &VecDeque<Message>) -> bool {
    notification.method == DidChangeTextDocument::METHOD
        && document_of(&notification.params).is_some_and(|uri| changed_later(uri, queue))
}

/// Why a request is not worth answering: cancelled by a `$/cancelRequest` waiting in `queue`,
/// or about a document that a change waiting in `queue` replaces.
fn stale(request: &Request, queue: &VecDeque<Message>) -> Option<(ErrorCode, &'static str)> {
    let id = serde_json::to_value(&request.id).ok()?;
    let cancelled = queue.iter().any(|message| {
        matches!(message, Message::Notification(cancel)
            if cancel.method == Cancel::METHOD && cancel.params.get("id") == Some(&id))
    });
    if cancelled {
        return Some((ErrorCode::RequestCanceled, "cancelled by the client"));
    }
    let uri = document_of(&request.params)?;
    changed_later(uri, queue).then_some((
        ErrorCode::ContentModified,
        "the document changed since the request was made",
    ))
}

fn refused(reason: String) -> (ErrorCode, String) {
    (ErrorCode::RequestFailed, reason)
}

fn parse<P: DeserializeOwned>(params: serde_json::Value) -> Option<P> {
    serde_json::from_value(params).ok()
}

fn publish(
    uri: Uri,
    diagnostics: Vec<lsp_types::Diagnostic>,
    version: Option<i32>,
) -> Notification {
    Notification::new(
        PublishDiagnostics::METHOD.to_owned(),
        PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        },
    )
}

#[cfg(test)]
mod every_position {
    //! Every request at every UTF-16 position of any text answers: a response, never a panic
    //! (the editor sends them all, and a server that dies takes the user's diagnostics along).

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// Pieces of `.graph` text and of what people write in it: accents, dashes, emoji (a
    /// surrogate pair in UTF-16), line ends of both kinds, unclosed comments and strings.
    fn pieces() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("graph G {".to_owned()),
            Just("}".to_owned()),
            Just("node a;".to_owned()),
            Just("node ü { interrupt before \"Prêt — ok?\"; }".to_owned()),
            Just("START -> a;".to_owned()),
            Just("a -> b | END;".to_owned()),
            Just("a -> a | a | a;".to_owned()),
            Just("a & b -> c;".to_owned()),
            Just("/// Größe 😀 E0202".to_owned()),
            Just("// é\u{1D11E}".to_owned()),
            Just("/* ü".to_owned()),
            Just("\"ß".to_owned()),
            Just("\r\n".to_owned()),
            Just("\n".to_owned()),
            Just(" ".to_owned()),
            any::<char>().prop_map(String::from),
            "[a-z_ü—😀]{1,4}".prop_map(|s| s),
        ];
        prop::collection::vec(piece, 0..14).prop_map(|pieces| pieces.concat())
    }

    fn request(server: &Server, method: &str, params: serde_json::Value) -> Response {
        let request = Request::new(lsp_server::RequestId::from(1), method.to_owned(), params);
        server.request(request)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        #[test]
        fn every_request_at_every_position_answers(text in pieces()) {
            let mut server = Server::default();
            let uri = "file:///g.graph";
            let published = server.notification(Notification::new(
                DidOpenTextDocument::METHOD.to_owned(),
                json!({ "textDocument": {
                    "uri": uri, "languageId": "trellis", "version": 1, "text": text,
                }}),
            ));
            prop_assert!(!published.is_empty(), "diagnostics are published");
            let document = json!({ "uri": uri });
            // What is asked of the whole document.
            for method in [
                SemanticTokensFullRequest::METHOD,
                FoldingRangeRequest::METHOD,
                DocumentLinkRequest::METHOD,
                DocumentSymbolRequest::METHOD,
            ] {
                request(&server, method, json!({ "textDocument": document }));
            }
            let lines: Vec<&str> = text.split('\n').collect();
            for (line, written) in lines.iter().enumerate() {
                let units = written.encode_utf16().count();
                // One past the end of each line too, and a line past the last.
                for character in 0..=units + 1 {
                    let at = json!({ "line": line, "character": character });
                    let position = json!({ "textDocument": document, "position": at });
                    for method in [
                        HoverRequest::METHOD,
                        GotoDefinition::METHOD,
                        Completion::METHOD,
                        PrepareRenameRequest::METHOD,
                    ] {
                        request(&server, method, position.clone());
                    }
                    let mut references = position.clone();
                    references["context"] = json!({ "includeDeclaration": true });
                    request(&server, References::METHOD, references);
                    let mut rename = position.clone();
                    rename["newName"] = json!("renamed");
                    request(&server, Rename::METHOD, rename);
                    let range = json!({ "start": { "line": 0, "character": 0 }, "end": at });
                    let actions = json!({
                        "textDocument": document,
                        "range": range,
                        "context": { "diagnostics": [] },
                    });
                    let answer = request(&server, CodeActionRequest::METHOD, actions);
                    prop_assert!(answer.response_result.is_ok(), "{:?}", answer.response_result);
                }
            }
            let beyond = json!({ "textDocument": document,
                "position": { "line": lines.len() + 1, "character": 3 } });
            request(&server, HoverRequest::METHOD, beyond);
            let whole = json!({ "textDocument": document });
            let symbols = request(&server, DocumentSymbolRequest::METHOD, whole);
            prop_assert!(symbols.response_result.is_ok(), "{:?}", symbols.response_result);
            let formatting = json!({ "textDocument": document,
                "options": { "tabSize": 4, "insertSpaces": true } });
            let formatted = request(&server, Formatting::METHOD, formatting);
            prop_assert!(formatted.response_result.is_ok(), "{:?}", formatted.response_result);
        }
    }
}
