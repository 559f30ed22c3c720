//! `editor`: what typing in a 1,000-node `.graph` file costs through `trellis lsp` — a change
//! answered with its diagnostics, a hover, a completion — over the server's real message loop
//! (an in-memory connection instead of stdio, so that pipes do not blur the figure); a file
//! whose one line holds 8,000 targets, each a diagnostic (`long-line`: its diagnostics within
//! 1 s); and 200 changes to a 10,000-line file sent at once, as fast typing sends them
//! (`burst`: the last change's diagnostics within 1 s of it).

use std::time::{Duration, Instant};

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};

use super::{Bench, BenchError};
use crate::measure::{alone, per};
use crate::report::{Row, Target};
use crate::shapes::{mixed, one_long_line};

/// The bar: a change to a 1,000-node file answered within 20 ms (20 µs a node; the
/// table counts per node, as `tooling` does); the file's semantic tokens likewise.
const CHANGE: Target = Target::Ns(20e3);
/// The bars for the long line (1 s for its 8,000 targets) and the burst (the last
/// change's diagnostics within 1 s of it).
const LONG_LINE: Target = Target::Ns(1e9 / 8_000.0);
const BURST: Target = Target::Ns(1e9);
const W: &str = "editor";
const URI: &str = "file:///bench/mixed.graph";

struct Client {
    connection: Connection,
    server: Option<std::thread::JoinHandle<Result<(), trellis_lsp::LspError>>>,
    next_id: i32,
}

fn wrong(reason: impl Into<String>) -> BenchError {
    BenchError::Wrong {
        workload: W,
        reason: reason.into(),
    }
}

impl Client {
    fn start() -> Result<Client, BenchError> {
        let (server, connection) = Connection::memory();
        let server = std::thread::spawn(move || trellis_lsp::serve(&server));
        let mut client = Client {
            connection,
            server: Some(server),
            next_id: 0,
        };
        client.request("initialize", json!({ "capabilities": {} }))?;
        client.send(Message::Notification(Notification::new(
            "initialized".to_owned(),
            json!({}),
        )))?;
        Ok(client)
    }

    fn send(&self, message: Message) -> Result<(), BenchError> {
        self.connection
            .sender
            .send(message)
            .map_err(|_| wrong("the server stopped"))
    }

    fn receive(&self) -> Result<Message, BenchError> {
        self.connection
            .receiver
            .recv_timeout(Duration::from_secs(60))
            .map_err(|_| wrong("no answer from the server"))
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, BenchError> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(Message::Request(Request::new(
            id.clone(),
            method.to_owned(),
            params,
        )))?;
        loop {
            if let Message::Response(response) = self.receive()?
                && response.id == id
            {
                return response
                    .response_result
                    .map_err(|error| wrong(format!("{method}: {}", error.message)));
            }
        }
    }

    /// Sends the document's new text and waits for the diagnostics of that version.
    fn change(&self, version: i32, text: &str, open: bool) -> Result<usize, BenchError> {
        self.send_change(version, text, open)?;
        self.diagnostics_of(version)
    }

    /// Sends the document's new text (opening it first when `open`), without waiting.
    fn send_change(&self, version: i32, text: &str, open: bool) -> Result<(), BenchError> {
        let (method, params) = if open {
            let document = json!({
                "uri": URI, "languageId": "trellis-graph", "version": version, "text": text,
            });
            ("textDocument/didOpen", json!({ "textDocument": document }))
        } else {
            let document = json!({ "uri": URI, "version": version });
            let changes = json!([{ "text": text }]);
            (
                "textDocument/didChange",
                json!({ "textDocument": document, "contentChanges": changes }),
            )
        };
        self.send(Message::Notification(Notification::new(
            method.to_owned(),
            params,
        )))
    }

    /// Waits for the diagnostics of `version` (those of earlier versions pass by): how many.
    fn diagnostics_of(&self, version: i32) -> Result<usize, BenchError> {
        loop {
            if let Message::Notification(published) = self.receive()?
                && published.params["version"] == version
            {
                let diagnostics = published.params["diagnostics"].as_array().map(Vec::len);
                return diagnostics.ok_or_else(|| wrong("diagnostics without a list"));
            }
        }
    }

    fn stop(mut self) -> Result<(), BenchError> {
        self.request("shutdown", Value::Null)?;
        self.send(Message::Notification(Notification::new(
            "exit".to_owned(),
            Value::Null,
        )))?;
        let server = self.server.take().ok_or_else(|| wrong("stopped twice"))?;
        match server.join() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(wrong(error.to_string())),
            Err(_) => Err(wrong("the server panicked")),
        }
    }
}

/// The line and (ASCII) column of the first `needle` in `text`.
fn position(text: &str, needle: &str) -> Result<Value, BenchError> {
    let at = text
        .find(needle)
        .ok_or_else(|| wrong(format!("no `{needle}` in the generated file")))?;
    let line = text[..at].matches('\n').count();
    let column = at - text[..at].rfind('\n').map_or(0, |n| n + 1);
    Ok(json!({ "line": line, "character": column }))
}

pub(crate) fn editor(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    let nodes = bench.scale.size(1_000, 100);
    let text = mixed(nodes);
    // What typing does: the same file, one character different, every other change.
    let typed = text.replacen("START -> n0;", "START -> n0; ", 1);
    let mut client = Client::start()?;
    let found = client.change(1, &text, true)?;
    if found != 0 {
        return Err(wrong(format!("{found} diagnostics on the generated file")));
    }
    let mut version = 1;
    let change = alone(bench.scale.samples(41), || {
        version += 1;
        let next = if version % 2 == 0 { &typed } else { &text };
        let started = Instant::now();
        std::hint::black_box(client.change(version, next, false)?);
        Ok::<_, BenchError>(started.elapsed())
    })?;
    let middle = format!("n{} -> ", nodes / 2);
    let on_node = position(&text, &middle)?;
    let after_arrow = {
        let mut at = position(&text, &middle)?;
        at["character"] = json!(at["character"].as_u64().unwrap_or(0) + middle.len() as u64);
        at
    };
    let document = json!({ "uri": URI });
    let mut ask = |method: &str, params: Value| {
        alone(bench.scale.samples(41), || {
            let started = Instant::now();
            let answer = client.request(method, params.clone())?;
            if answer.is_null() {
                return Err(wrong(format!("{method}: no answer to {params}")));
            }
            Ok(started.elapsed())
        })
    };
    let at = |position: &Value| json!({ "textDocument": document, "position": position });
    let hover = ask("textDocument/hover", at(&on_node))?;
    let completion = ask("textDocument/completion", at(&after_arrow))?;
    // The whole file's colours and folds, as an editor asks for them on opening it.
    let whole = json!({ "textDocument": document });
    let tokens = ask("textDocument/semanticTokens/full", whole.clone())?;
    let folds = ask("textDocument/foldingRange", whole)?;
    client.stop()?;
    let units = nodes as u64;
    let row = |variant: &str, time: Duration| {
        Row::new(W, variant, units, "node", per(time, units), None)
            .with("whole_ms", (time.as_secs_f64() * 1e5).round() / 100.0)
    };
    bench.emit(row("change", change).judged(CHANGE));
    bench.emit(row("hover", hover));
    bench.emit(row("completion", completion));
    bench.emit(row("semantic_tokens", tokens).judged(CHANGE));
    bench.emit(row("folding_ranges", folds));
    long_line(bench)?;
    burst(bench)
}

/// A file whose one line names one node `targets` times (`a -> a | a | …`): opened, and its
/// diagnostics (one per repeated target) published.
fn long_line(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    let targets = bench.scale.size(8_000, 500);
    let text = one_long_line(targets);
    let client = Client::start()?;
    let mut version = 0;
    let time = alone(bench.scale.samples(5), || {
        version += 1;
        let started = Instant::now();
        let found = client.change(version, &text, version == 1)?;
        if found + 1 != targets {
            return Err(wrong(format!("{found} diagnostics for {targets} targets")));
        }
        Ok(started.elapsed())
    })?;
    client.stop()?;
    let units = targets as u64;
    bench.emit(
        Row::new(W, "long-line", units, "target", per(time, units), None)
            .with("whole_ms", (time.as_secs_f64() * 1e5).round() / 100.0)
            .judged(LONG_LINE),
    );
    Ok(())
}

/// 200 changes to a file of 10,000 lines or more, sent at once: the time from the last one
/// to its diagnostics (the server analyses the newest text, not each in turn).
fn burst(bench: &mut Bench<'_>) -> Result<(), BenchError> {
    const CHANGES: i32 = 200;
    let nodes = bench.scale.size(4_500, 200);
    let text = mixed(nodes);
    let typed = text.replacen("START -> n0;", "START -> n0; ", 1);
    let lines = text.lines().count();
    let client = Client::start()?;
    client.change(1, &text, true)?;
    let mut version = 1;
    let time = alone(bench.scale.samples(5), || {
        for _ in 0..CHANGES {
            version += 1;
            let next = if version % 2 == 0 { &typed } else { &text };
            client.send_change(version, next, false)?;
        }
        let last_sent = Instant::now();
        client.diagnostics_of(version)?;
        Ok::<_, BenchError>(last_sent.elapsed())
    })?;
    client.stop()?;
    bench.emit(
        Row::new(
            W,
            "burst",
            lines as u64,
            "burst",
            time.as_nanos() as f64,
            None,
        )
        .with("changes", CHANGES)
        .judged(BURST),
    );
    Ok(())
}
