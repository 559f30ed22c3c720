//! Why a request was refused: a status and a JSON body `{"error": {"code", "message"}}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use trellis::RunError;
use trellis::checkpoint::CheckpointError;

/// A refused request: what the client reads, and the status it comes with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// A stable code for programs: `not_found`, `bad_request`, `conflict`, `unauthorized`, …
    pub code: &'static str,
    /// One sentence for people.
    pub message: String,
}

impl ApiError {
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        ApiError {
            status: 400,
            code: "bad_request",
            message: message.into(),
        }
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        ApiError {
            status: 404,
            code: "not_found",
            message: message.into(),
        }
    }

    pub(crate) fn conflict(message: impl Into<String>) -> Self {
        ApiError {
            status: 409,
            code: "conflict",
            message: message.into(),
        }
    }

    pub(crate) fn too_large() -> Self {
        ApiError {
            status: 413,
            code: "too_large",
            message: "the request body is larger than this server accepts".into(),
        }
    }

    pub(crate) fn unauthorized() -> Self {
        ApiError {
            status: 401,
            code: "unauthorized",
            message: "a bearer token is required: `Authorization: Bearer TOKEN`".into(),
        }
    }

    pub(crate) fn forbidden(message: impl Into<String>) -> Self {
        ApiError {
            status: 403,
            code: "forbidden",
            message: message.into(),
        }
    }

    pub(crate) fn unsupported_type(message: impl Into<String>) -> Self {
        ApiError {
            status: 415,
            code: "unsupported_media_type",
            message: message.into(),
        }
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        ApiError {
            status: 500,
            code: "internal",
            message: message.into(),
        }
    }

    /// The JSON body.
    pub fn body(&self) -> serde_json::Value {
        json!({ "error": { "code": self.code, "message": self.message } })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(self.body())).into_response()
    }
}

impl From<CheckpointError> for ApiError {
    fn from(error: CheckpointError) -> Self {
        ApiError::internal(format!("the store failed: {error}"))
    }
}

impl From<RunError> for ApiError {
    fn from(error: RunError) -> Self {
        match &error {
            RunError::RunNotFound { .. } => ApiError::not_found(error.to_string()),
            RunError::AlreadyCompleted { .. }
            | RunError::AlreadyFailed { .. }
            | RunError::AlreadyCancelled { .. }
            | RunError::Checkpoint(CheckpointError::Fenced { .. })
            | RunError::StillRunning { .. }
            | RunError::NotFailed { .. }
            | RunError::NotCancellable { .. }
            | RunError::WrongGraph { .. } => ApiError::conflict(error.to_string()),
            RunError::CheckpointNotFound { .. }
            | RunError::ThreadNotFound { .. }
            | RunError::NotOnThread { .. } => ApiError::not_found(error.to_string()),
            RunError::ThreadBusy { .. }
            | RunError::ThreadExists { .. }
            | RunError::NothingPending { .. } => ApiError::conflict(error.to_string()),
            RunError::Answers { .. }
            | RunError::WrongAnswer { .. }
            | RunError::UnknownNode { .. }
            | RunError::MergeConflict { .. } => ApiError::bad_request(error.to_string()),
            _ => ApiError::internal(error.to_string()),
        }
    }
}
