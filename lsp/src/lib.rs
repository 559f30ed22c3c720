//! The `.graph` language server behind `trellis lsp`: the diagnostics of `trellis check` (codes,
//! labels, help) as the file is typed, with quick fixes; hover on a node or a code; definition,
//! references and rename of node names; completion; the outline; formatting; semantic tokens
//! (so every editor colours `.graph` without a grammar) and folding ranges; the `.graph` files
//! of a folder as one workspace (subgraph paths checked, linked, hovered and followed into the
//! file beside; workspace symbols).
//!
//! It speaks LSP over stdio ([`serve_stdio`]) or any [`lsp_server::Connection`] ([`serve`]),
//! with positions in UTF-16 code units as the protocol requires. Each change re-reads the whole
//! document (full sync): the front end checks a 1,000-node file in a few milliseconds, so there
//! is no incremental state to get wrong. Changes that arrive while one is analysed are
//! coalesced: only the newest text of a document is analysed, and a request made before a
//! newer change is answered `ContentModified`. Over stdio, a message that is not valid JSON
//! (a lone surrogate, bytes that are not UTF-8) is logged to stderr and skipped.
//!
//! ```
//! use lsp_server::{Connection, Message, Notification, Request};
//! use serde_json::json;
//!
//! let (server, client) = Connection::memory();
//! let thread = std::thread::spawn(move || trellis_lsp::serve(&server));
//! client.sender.send(Message::Request(Request::new(
//!     1.into(), "initialize".into(), json!({ "capabilities": {} }),
//! ))).unwrap();
//! let _capabilities = client.receiver.recv().unwrap();
//! client.sender.send(Message::Notification(Notification::new(
//!     "initialized".into(), json!({}),
//! ))).unwrap();
//! client.sender.send(Message::Notification(Notification::new(
//!     "textDocument/didOpen".into(),
//!     json!({ "textDocument": {
//!         "uri": "file:///a.graph", "languageId": "trellis-graph", "version": 1,
//!         "text": "graph G { node a; START -> a -> b; }",
//!     }}),
//! ))).unwrap();
//! let Message::Notification(published) = client.receiver.recv().unwrap() else { panic!() };
//! assert_eq!(published.params["diagnostics"][0]["code"], "E0202");
//! client.sender.send(Message::Request(Request::new(2.into(), "shutdown".into(), json!(null)))).unwrap();
//! let _ = client.receiver.recv().unwrap();
//! client.sender.send(Message::Notification(Notification::new("exit".into(), json!(null)))).unwrap();
//! thread.join().unwrap().unwrap();
//! ```

mod analysis;
mod complete;
mod diagnostics;
mod explain;
mod hover;
mod navigate;
mod semantic;
mod server;
mod text;
mod transport;
mod workspace;

use lsp_server::Connection;

/// Why the server stopped other than by a shutdown.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    /// The client broke the protocol (e.g. no `initialize` first).
    #[error("language server protocol: {0}")]
    Protocol(#[from] lsp_server::ProtocolError),
    /// The client went away while the server was answering.
    #[error("the client is gone: {0}")]
    Disconnected(#[from] crossbeam_channel::SendError<lsp_server::Message>),
    /// Reading stdin or writing stdout failed.
    #[error("stdio: {0}")]
    Io(#[from] std::io::Error),
    /// The server's capabilities could not be written as JSON (a bug).
    #[error("capabilities: {0}")]
    Json(#[from] serde_json::Error),
}

/// Serves one client over this process's stdin and stdout until it shuts the server down.
///
/// # Errors
/// As [`serve`]; and [`LspError::Io`] when stdio fails.
pub fn serve_stdio() -> Result<(), LspError> {
    let (connection, io) = transport::stdio();
    serve(&connection)?;
    drop(connection);
    io.join()?;
    Ok(())
}

/// Serves one client on `connection`: the `initialize` handshake, then requests and
/// notifications until `shutdown` and `exit`.
///
/// # Errors
/// [`LspError::Protocol`] when the client does not start with `initialize` or sends messages
/// after `shutdown`; [`LspError::Disconnected`] when it goes away mid-answer.
pub fn serve(connection: &Connection) -> Result<(), LspError> {
    let capabilities = serde_json::to_value(server::capabilities())?;
    let (id, client) = connection.initialize_start()?;
    connection.initialize_finish(
        id,
        serde_json::json!({
            "capabilities": capabilities,
            "serverInfo": { "name": "trellis", "version": env!("CARGO_PKG_VERSION") },
        }),
    )?;
    // The files beside an open one are read from disk: asks to hear when any `.graph` changes,
    // if the client can say so.
    if client["capabilities"]["workspace"]["didChangeWatchedFiles"]["dynamicRegistration"] == true {
        connection
            .sender
            .send(lsp_server::Message::Request(server::watch_graph_files()))?;
    }
    server::Server::default().run(connection)
}
