//! `trellis check`'s diagnostics as the editor shows them, and their fixes as quick fixes.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, DiagnosticRelatedInformation,
    DiagnosticSeverity, Location, NumberOrString, Range, TextEdit, Uri, WorkspaceEdit,
};
use trellis_dsl::{Diagnostic, Severity, Span};

use crate::analysis::Analysis;

/// Every diagnostic of the document: code, message, help, and each label where it points.
pub(crate) fn to_lsp(uri: &Uri, analysis: &Analysis) -> Vec<lsp_types::Diagnostic> {
    analysis
        .checked
        .diagnostics
        .iter()
        .map(|diagnostic| one(uri, analysis, diagnostic))
        .collect()
}

fn one(uri: &Uri, analysis: &Analysis, diagnostic: &Diagnostic) -> lsp_types::Diagnostic {
    let range = |span: Span| analysis.lines.range(&analysis.text, span);
    let mut message = diagnostic.message.clone();
    if let Some(help) = &diagnostic.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let here = std::iter::once((diagnostic.span, &diagnostic.label))
        .filter(|(_, label)| !label.is_empty());
    let labels = diagnostic
        .labels
        .iter()
        .map(|label| (label.span, &label.message));
    let related = here
        .chain(labels)
        .map(|(span, label)| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), range(span)),
            message: label.clone(),
        })
        .collect();
    lsp_types::Diagnostic {
        range: range(diagnostic.span),
        severity: Some(match diagnostic.severity() {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(diagnostic.code.to_string())),
        source: Some("trellis".to_owned()),
        message,
        related_information: Some(related),
        ..lsp_types::Diagnostic::default()
    }
}

/// The quick fixes for the diagnostics that touch `range`.
pub(crate) fn quick_fixes(
    uri: &Uri,
    analysis: &Analysis,
    range: Range,
) -> Vec<CodeActionOrCommand> {
    let start = analysis.lines.offset(&analysis.text, range.start);
    let end = analysis.lines.offset(&analysis.text, range.end);
    analysis
        .checked
        .diagnostics
        .iter()
        .filter(|d| d.span.start <= end && start <= d.span.end)
        .filter_map(|diagnostic| {
            let fix = diagnostic.fix.as_ref()?;
            let edit = TextEdit::new(
                analysis.lines.range(&analysis.text, fix.span),
                fix.text_in(&analysis.text),
            );
            Some(CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.title.clone(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![one(uri, analysis, diagnostic)]),
                edit: Some(WorkspaceEdit::new(HashMap::from([(
                    uri.clone(),
                    vec![edit],
                )]))),
                is_preferred: Some(true),
                ..CodeAction::default()
            }))
        })
        .collect()
}
