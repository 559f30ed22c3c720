//! The message loop: documents opened and changed, diagnostics published after each change,
//! requests answered one at a time in the order they came.

use std::collections::HashMap;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification as _,
    PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest,
    PrepareRenameRequest, References, Rename, Request as _,
};
use lsp_types::{
    CodeActionProviderCapability, CompletionOptions, HoverProviderCapability, OneOf,
    PositionEncodingKind, PrepareRenameResponse, PublishDiagnosticsParams, RenameOptions,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind, TextEdit, Uri,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::LspError;
use crate::analysis::Analysis;
use crate::{complete, diagnostics, hover, navigate};

/// What the server can do, as told to the client.
pub(crate) fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
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
    pub(crate) fn run(&mut self, connection: &Connection) -> Result<(), LspError> {
        for message in &connection.receiver {
            match message {
                Message::Request(request) => {
                    if connection.handle_shutdown(&request)? {
                        return Ok(());
                    }
                    let response = self.request(request);
                    connection.sender.send(Message::Response(response))?;
                }
                Message::Notification(notification) => {
                    if let Some(published) = self.notification(notification) {
                        connection.sender.send(Message::Notification(published))?;
                    }
                }
                Message::Response(_) => {}
            }
        }
        Ok(())
    }

    /// A notification; the diagnostics to publish when a document changed.
    fn notification(&mut self, notification: Notification) -> Option<Notification> {
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let params: lsp_types::DidOpenTextDocumentParams = parse(notification.params)?;
                let document = params.text_document;
                Some(self.update(document.uri, document.text, document.version))
            }
            DidChangeTextDocument::METHOD => {
                let params: lsp_types::DidChangeTextDocumentParams = parse(notification.params)?;
                // Full sync: the last change holds the whole text.
                let text = params.content_changes.into_iter().last()?.text;
                let document = params.text_document;
                Some(self.update(document.uri, text, document.version))
            }
            DidCloseTextDocument::METHOD => {
                let params: lsp_types::DidCloseTextDocumentParams = parse(notification.params)?;
                let uri = params.text_document.uri;
                self.documents.remove(uri.as_str());
                Some(publish(uri, Vec::new(), None))
            }
            _ => None,
        }
    }

    /// Reads a document's new text and returns its diagnostics.
    fn update(&mut self, uri: Uri, text: String, version: i32) -> Notification {
        let analysis = Analysis::new(text);
        let found = diagnostics::to_lsp(&uri, &analysis);
        self.documents
            .insert(uri.as_str().to_owned(), (uri.clone(), analysis));
        publish(uri, found, Some(version))
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
                    let (_, analysis, offset) = self.at(&p.text_document.uri, p.position)?;
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
