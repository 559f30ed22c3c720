//! `trellis lsp` driven over stdio with real JSON-RPC messages, as an editor drives it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

/// A client talking to one `trellis lsp` process.
struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
    /// Notifications received while waiting for a response.
    notifications: Vec<Value>,
}

const URI: &str = "file:///work/support.graph";

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_trellis"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("trellis lsp starts");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (send, incoming) = channel();
        std::thread::spawn(move || {
            while let Some(message) = read_message(&mut stdout) {
                if send.send(message).is_err() {
                    break;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            incoming,
            next_id: 0,
            notifications: Vec::new(),
        };
        let init = client.request(
            "initialize",
            json!({ "processId": null, "rootUri": null, "capabilities": {} }),
        );
        assert_eq!(init["capabilities"]["positionEncoding"], "utf-16", "{init}");
        assert_eq!(init["serverInfo"]["name"], "trellis");
        client.notify("initialized", json!({}));
        client
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("writes");
        self.stdin.flush().expect("flushes");
    }

    fn receive(&mut self) -> Value {
        self.incoming
            .recv_timeout(Duration::from_secs(20))
            .expect("the server answers (no crash, no hang)")
    }

    /// A frame around `body` as written, whatever its bytes.
    fn send_raw(&mut self, body: &[u8]) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).expect("writes");
        self.stdin.write_all(body).expect("writes");
        self.stdin.flush().expect("flushes");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// The whole response to a request (`result` or `error`).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.receive();
            if message["id"] == id {
                return message;
            }
            self.notifications.push(message);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// The next diagnostics published for `URI`.
    fn diagnostics(&mut self) -> Vec<Value> {
        let published = match self
            .notifications
            .iter()
            .position(|n| n["method"] == "textDocument/publishDiagnostics")
        {
            Some(at) => self.notifications.remove(at),
            None => loop {
                let message = self.receive();
                if message["method"] == "textDocument/publishDiagnostics" {
                    break message;
                }
            },
        };
        assert_eq!(published["params"]["uri"], URI);
        published["params"]["diagnostics"]
            .as_array()
            .expect("a list")
            .clone()
    }

    /// The next diagnostics published for `uri`, whichever documents' come first.
    fn published_for(&mut self, uri: &str) -> Vec<Value> {
        loop {
            let found = match self.notifications.iter().position(|n| {
                n["method"] == "textDocument/publishDiagnostics" && n["params"]["uri"] == uri
            }) {
                Some(at) => self.notifications.remove(at),
                None => {
                    let message = self.receive();
                    if message["method"] != "textDocument/publishDiagnostics"
                        || message["params"]["uri"] != uri
                    {
                        self.notifications.push(message);
                        continue;
                    }
                    message
                }
            };
            return found["params"]["diagnostics"]
                .as_array()
                .cloned()
                .unwrap_or_default();
        }
    }

    fn open(&mut self, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": {
                "uri": URI, "languageId": "trellis-graph", "version": 1, "text": text,
            }}),
        );
        self.diagnostics()
    }

    fn change(&mut self, version: i32, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": URI, "version": version },
                "contentChanges": [{ "text": text }],
            }),
        );
        self.diagnostics()
    }

    fn at(&mut self, method: &str, line: u32, character: u32, more: Value) -> Value {
        let mut params = json!({
            "textDocument": { "uri": URI },
            "position": { "line": line, "character": character },
        });
        if let (Some(params), Value::Object(more)) = (params.as_object_mut(), more) {
            params.extend(more);
        }
        self.request(method, params)
    }

    /// The code actions offered on `diagnostic`'s range.
    fn quick_fixes(&mut self, diagnostic: &Value) -> Value {
        self.request(
            "textDocument/codeAction",
            json!({
                "textDocument": { "uri": URI },
                "range": diagnostic["range"],
                "context": { "diagnostics": [diagnostic] },
            }),
        )
    }

    /// The edits `textDocument/formatting` answers (null when it formats nothing).
    fn format(&mut self) -> Value {
        self.request(
            "textDocument/formatting",
            json!({ "textDocument": { "uri": URI }, "options": { "tabSize": 4, "insertSpaces": true } }),
        )
    }

    fn shut_down(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let status = self.child.wait().expect("exits");
        assert!(status.success(), "{status}");
    }
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// The offset of a UTF-16 position in `text` (the test's own reading of the protocol).
fn offset(text: &str, position: &Value) -> usize {
    let line = position["line"].as_u64().expect("line") as usize;
    let character = position["character"].as_u64().expect("character") as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let mut units = 0;
    for (at, c) in text[start..].char_indices() {
        if units >= character || c == '\n' {
            return start + at;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// `text` with `edits` (LSP `TextEdit`s, not overlapping) applied.
fn apply(text: &str, edits: &[Value]) -> String {
    let mut edits: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|edit| {
            (
                offset(text, &edit["range"]["start"]),
                offset(text, &edit["range"]["end"]),
                edit["newText"].as_str().expect("new text"),
            )
        })
        .collect();
    edits.sort_by_key(|edit| std::cmp::Reverse(edit.0));
    let mut out = text.to_owned();
    for (start, end, new) in edits {
        out.replace_range(start..end, new);
    }
    out
}

/// Non-ASCII before the typo on its line: `«é𝄞»` is 4 characters, 5 UTF-16 units, 9 bytes.
const TYPO: &str = r#"//! Support replies — «draft» 𝄞
graph Support {
    /// Décide: billing or général.
    node classify { meta label = "Grüße 𝄞"; }
    /// Writes the reply.
    node draft { max_visits 2; }
    node review;
    START -> classify; // ünïcode 𝄞
    /* «é𝄞» */ classify -> drfat | review;
    draft -> review;
    review -> END;
}
"#;

#[test]
fn a_typo_is_underlined_at_its_utf16_range_and_its_quick_fix_makes_the_file_clean() {
    let mut client = Client::start();
    let diagnostics = client.open(TYPO);
    let typo = diagnostics
        .iter()
        .find(|d| d["code"] == "E0202")
        .unwrap_or_else(|| panic!("{diagnostics:#?}"));
    // Line 8: 4 spaces, `/* «é𝄞» */ ` (11 characters, 12 units), `classify -> ` (12).
    assert_eq!(
        typo["range"],
        json!({ "start": { "line": 8, "character": 28 }, "end": { "line": 8, "character": 33 } })
    );
    assert_eq!(typo["severity"], 1);
    assert_eq!(typo["source"], "trellis");
    assert_eq!(
        typo["message"],
        "node `drfat` is not declared in graph `Support`\nhelp: did you mean `draft`?"
    );
    assert_eq!(typo["relatedInformation"][0]["message"], "not declared");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");

    let actions = client.quick_fixes(typo);
    let fix = &actions[0];
    assert_eq!(fix["title"], "replace with `draft`");
    assert_eq!(fix["kind"], "quickfix");
    let fixed = apply(TYPO, fix["edit"]["changes"][URI].as_array().expect("edits"));
    assert!(
        fixed.contains("/* «é𝄞» */ classify -> draft | review;"),
        "{fixed}"
    );
    assert_eq!(client.change(2, &fixed), Vec::<Value>::new());
    // Warnings are published too, as warnings.
    let looping = fixed.replace("review -> END;", "review -> review | END;");
    let warnings = client.change(3, &looping);
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert_eq!(
        (&warnings[0]["code"], &warnings[0]["severity"]),
        (&json!("W0303"), &json!(2))
    );
    client.shut_down();
}

#[test]
fn a_node_leading_nowhere_gets_its_end_edge_from_the_quick_fix() {
    let text = "graph Flow {\n    node a;\n    node b;\n    START -> a;\n    a -> b;\n}\n";
    let mut client = Client::start();
    let diagnostics = client.open(text);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["code"], "E0204");
    let actions = client.quick_fixes(&diagnostics[0]);
    assert_eq!(actions[0]["title"], "add `b -> END;`");
    let fixed = apply(
        text,
        actions[0]["edit"]["changes"][URI]
            .as_array()
            .expect("edits"),
    );
    assert_eq!(
        fixed,
        "graph Flow {\n    node a;\n    node b;\n    START -> a;\n    a -> b;\n    b -> END;\n}\n"
    );
    assert_eq!(client.change(2, &fixed), Vec::<Value>::new());
    client.shut_down();
}

const CLEAN: &str = r#"graph Support {
    /// Decide billing vs général 𝄞.
    node classify;
    node lookup { retry 3 backoff 200ms; timeout 10s; on_error fallback; }
    node fallback;
    node draft { max_visits 2; }

    START -> classify;
    classify -> lookup | draft;
    lookup -> draft;
    fallback -> draft;
    draft -> END;
}
"#;

#[test]
fn hover_shows_a_node_with_its_edges_and_a_code_with_its_explanation() {
    let mut client = Client::start();
    assert_eq!(client.open(CLEAN), Vec::<Value>::new());
    // On `lookup` in `classify -> lookup | draft;`.
    let hover = client.at("textDocument/hover", 8, 18, json!({}));
    let text = hover["contents"]["value"].as_str().expect("markdown");
    assert!(
        text.contains("node lookup { retry 3 backoff 200ms; timeout 10s; on_error fallback; }"),
        "{text}"
    );
    assert!(
        text.contains("**in:** `classify -> lookup | draft`"),
        "{text}"
    );
    assert!(text.contains("**out:** `lookup -> draft`"), "{text}");
    assert_eq!(
        hover["range"]["start"],
        json!({ "line": 8, "character": 16 })
    );
    // The doc, whose non-ASCII must not shift anything.
    let hover = client.at("textDocument/hover", 2, 10, json!({}));
    let text = hover["contents"]["value"].as_str().expect("markdown");
    assert!(text.contains("Decide billing vs général 𝄞."), "{text}");
    assert!(text.contains("**in:** `START -> classify`"), "{text}");

    // A code, where a diagnostic shows it or where a comment names it.
    client.change(2, "// see E0204\ngraph G { node a; START -> a; }\n");
    let hover = client.at("textDocument/hover", 0, 9, json!({}));
    let text = hover["contents"]["value"].as_str().expect("markdown");
    assert!(
        text.starts_with("**E0204 — a node with no outgoing edge**"),
        "{text}"
    );
    let hover = client.at("textDocument/hover", 1, 15, json!({}));
    let text = hover["contents"]["value"].as_str().expect("markdown");
    assert!(
        text.starts_with("```graph\nnode a;\n```"),
        "the node first: {text}"
    );
    assert!(
        text.contains("---\n\n**E0204 — a node with no outgoing edge**"),
        "then what its diagnostic's code means: {text}"
    );
    client.shut_down();
}

#[test]
fn definition_references_and_rename_follow_a_node_name() {
    let mut client = Client::start();
    client.open(CLEAN);
    // `draft` in `lookup -> draft;` (line 9).
    let definition = client.at("textDocument/definition", 9, 15, json!({}));
    assert_eq!(definition["uri"], URI);
    assert_eq!(
        definition["range"],
        json!({ "start": { "line": 5, "character": 9 }, "end": { "line": 5, "character": 14 } })
    );
    let references = client.at(
        "textDocument/references",
        9,
        15,
        json!({ "context": { "includeDeclaration": true } }),
    );
    let lines: Vec<u64> = references
        .as_array()
        .expect("a list")
        .iter()
        .map(|r| r["range"]["start"]["line"].as_u64().expect("line"))
        .collect();
    assert_eq!(lines, [5, 8, 9, 10, 11]);

    let prepared = client.at("textDocument/prepareRename", 9, 15, json!({}));
    assert_eq!(prepared["placeholder"], "draft");
    let edit = client.at(
        "textDocument/rename",
        9,
        15,
        json!({ "newName": "write_reply" }),
    );
    let renamed = apply(CLEAN, edit["changes"][URI].as_array().expect("edits"));
    assert!(!renamed.contains("draft"), "{renamed}");
    assert_eq!(renamed.matches("write_reply").count(), 5);
    assert_eq!(client.change(2, &renamed), Vec::<Value>::new());

    // Refused: a name taken, a keyword, a name in the wrong case, START.
    for (new_name, reason) in [
        ("classify", "already has a node `classify`"),
        ("node", "keyword"),
        ("WriteReply", "snake_case"),
    ] {
        let refused = client.call(
            "textDocument/rename",
            json!({
                "textDocument": { "uri": URI },
                "position": { "line": 9, "character": 15 },
                "newName": new_name,
            }),
        );
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(reason), "{new_name}: {refused}");
    }
    let on_start = client.call(
        "textDocument/prepareRename",
        json!({ "textDocument": { "uri": URI }, "position": { "line": 7, "character": 6 } }),
    );
    assert!(on_start.get("error").is_some(), "{on_start}");
    client.shut_down();
}

fn labels(items: &Value) -> Vec<String> {
    items
        .as_array()
        .expect("a list")
        .iter()
        .map(|item| item["label"].as_str().expect("label").to_owned())
        .collect()
}

#[test]
fn completion_offers_what_may_be_written_where_the_cursor_is() {
    let text =
        "graph G {\n    node plan; /* { */ \n    node web { ma }\n    START -> plan -> \n}\n";
    let mut client = Client::start();
    client.open(text);
    let after_arrow = labels(&client.at("textDocument/completion", 3, 21, json!({})));
    assert_eq!(after_arrow, ["plan", "web", "END", "each"]);
    let attributes = labels(&client.at("textDocument/completion", 2, 17, json!({})));
    assert!(
        attributes.contains(&"max_visits".to_owned()),
        "{attributes:?}"
    );
    // Filtered by what was typed (`ma`), and each replaces the whole word.
    assert!(
        !attributes.contains(&"interrupt".to_owned()),
        "{attributes:?}"
    );
    let items = client.at("textDocument/completion", 2, 17, json!({}));
    let edit = &items[0]["textEdit"];
    assert_eq!(edit["range"]["start"]["character"], 15, "{edit}");
    assert_eq!(edit["range"]["end"]["character"], 17, "{edit}");
    // A brace in a comment opens nothing: a graph item starts here.
    let items = labels(&client.at("textDocument/completion", 1, 23, json!({})));
    for expected in ["node", "state", "max_steps", "START", "plan"] {
        assert!(items.contains(&expected.to_owned()), "{items:?}");
    }
    let top = labels(&client.at("textDocument/completion", 5, 0, json!({})));
    assert_eq!(top, ["graph"]);
    client.shut_down();
}

#[test]
fn symbols_outline_graphs_and_their_nodes_and_formatting_uses_the_formatter() {
    let mut client = Client::start();
    client.open(
        "graph A{node x;START->x->END;}\n/// B's doc\ngraph B { node y; START -> y -> END; }\n",
    );
    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": URI } }),
    );
    assert_eq!(symbols[0]["name"], "A");
    assert_eq!(symbols[0]["children"][0]["name"], "x");
    assert_eq!(symbols[1]["name"], "B");
    assert_eq!(symbols[1]["detail"], "B's doc");
    assert_eq!(symbols[1]["children"][0]["name"], "y");
    assert_eq!(
        symbols[1]["children"][0]["selectionRange"]["start"]["line"],
        2
    );

    let messy = "graph A{node x;START->x->END;}\n";
    client.change(2, messy);
    let edits = client.format();
    let formatted = apply(messy, edits.as_array().expect("edits"));
    assert_eq!(
        formatted,
        "graph A {\n    node x;\n    START -> x -> END;\n}\n"
    );
    client.shut_down();
}

#[test]
fn a_file_with_broken_syntax_keeps_the_server_serving() {
    let broken = "graph Support {\n    node classify\n    node draft;\n    START -> classify;\n    classify -> draft;\n    draft -> nowhere;\n}\n";
    let mut client = Client::start();
    let diagnostics = client.open(broken);
    let codes: Vec<&str> = diagnostics
        .iter()
        .map(|d| d["code"].as_str().expect("code"))
        .collect();
    assert!(codes.contains(&"E0001"), "the syntax error: {codes:?}");
    // What can be read is still checked.
    assert!(codes.contains(&"E0202"), "the typo after it: {codes:?}");
    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": URI } }),
    );
    assert_eq!(symbols[0]["name"], "Support");
    // Formatting a file that does not parse changes nothing.
    let edits = client.format();
    assert_eq!(edits, Value::Null);
    // Garbage, an empty file, an unclosed comment: diagnostics, never a crash.
    for (version, text) in [(2, "}}}{{ -> ->"), (3, ""), (4, "graph G { /* open")] {
        client.change(version, text);
    }
    let unknown = client.call("textDocument/unknownThing", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    let fixed = broken
        .replace("classify\n", "classify;\n")
        .replace("nowhere", "END");
    assert_eq!(client.change(5, &fixed), Vec::<Value>::new());
    client.shut_down();
}

#[test]
fn hover_and_completion_after_accented_text_answer_and_a_malformed_message_is_skipped() {
    let text = "/// Größe — prüfen\ngraph Support {\n    node prüf;\n    node draft { interrupt before \"Prêt — ok?\"; }\n    START -> draft;\n    draft -> END;\n}\n";
    let mut client = Client::start();
    client.open(text);
    for (line, written) in text.split('\n').enumerate() {
        for character in 0..=written.encode_utf16().count() as u32 + 1 {
            client.at("textDocument/hover", line as u32, character, json!({}));
            client.at("textDocument/completion", line as u32, character, json!({}));
        }
    }
    // A lone surrogate in the JSON, then bytes that are not UTF-8: each skipped, not fatal.
    client.send_raw(
        br#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"t":"\ud800"}}"#,
    );
    client.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"\xff\"}");
    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": URI } }),
    );
    assert_eq!(
        symbols[0]["name"], "Support",
        "still serving, the document as it was"
    );
    client.shut_down();
}

#[test]
fn a_burst_of_changes_is_analysed_once_at_its_newest_version() {
    let mut client = Client::start();
    let file = |n: usize| {
        let mut text = String::from("graph Big {\n    START -> n0;\n");
        for i in 0..n {
            text.push_str(&format!("    node n{i};\n    n{i} -> n{};\n", i + 1));
        }
        text.push_str(&format!("    node n{n};\n    n{n} -> END;\n}}\n"));
        text
    };
    client.open(&file(2_000));
    // 200 changes sent at once, the last one with a typo.
    for version in 2..=201 {
        let text = if version == 201 {
            file(2_000).replace("n7 -> n8;", "n7 -> n8x;")
        } else {
            file(2_000 + version as usize)
        };
        client.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": URI, "version": version },
                "contentChanges": [{ "text": text }],
            }),
        );
    }
    let hover = client.call(
        "textDocument/hover",
        json!({ "textDocument": { "uri": URI }, "position": { "line": 1, "character": 14 } }),
    );
    let mut published = 0;
    let last = loop {
        let found = match client
            .notifications
            .iter()
            .position(|n| n["method"] == "textDocument/publishDiagnostics")
        {
            Some(at) => client.notifications.remove(at),
            None => client.receive(),
        };
        if found["method"] != "textDocument/publishDiagnostics" {
            continue;
        }
        published += 1;
        if found["params"]["version"] == 201 {
            break found;
        }
    };
    assert_eq!(last["params"]["diagnostics"][0]["code"], "E0202");
    assert!(
        published < 200,
        "changes waiting behind newer ones are not analysed ({published} published)"
    );
    assert!(
        hover.get("result").is_some() || hover["error"]["code"] == -32801,
        "a request behind newer changes is answered, or told the content changed: {hover}"
    );
    client.shut_down();
}

#[test]
fn semantic_tokens_and_folds_come_over_the_protocol() {
    let mut client = Client::start();
    client.open(TYPO);
    let tokens = client.request(
        "textDocument/semanticTokens/full",
        json!({ "textDocument": { "uri": URI } }),
    );
    let data: Vec<u64> = tokens["data"]
        .as_array()
        .expect("tokens")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert_eq!(data.len() % 5, 0, "five numbers a token");
    // Made absolute: (line, column, length, type, modifiers).
    let (mut line, mut column) = (0, 0);
    let decoded: Vec<[u64; 5]> = data
        .chunks(5)
        .map(|t| {
            if t[0] > 0 {
                column = 0;
            }
            line += t[0];
            column += t[1];
            [line, column, t[2], t[3], t[4]]
        })
        .collect();
    // The first line is a doc comment (type 1, modifier 2): 31 characters, 32 UTF-16 units.
    assert_eq!(decoded[0], [0, 0, 32, 1, 2]);
    // `classify` declared on line 3 (a node: type 6, declaration: modifier 1).
    assert!(decoded.contains(&[3, 9, 8, 6, 1]), "{decoded:?}");
    // After `/* «é𝄞» */ ` (12 units) on line 8, `classify` used.
    assert!(decoded.contains(&[8, 16, 8, 6, 0]), "{decoded:?}");
    let folds = client.request(
        "textDocument/foldingRange",
        json!({ "textDocument": { "uri": URI } }),
    );
    let folds: Vec<(u64, u64)> = folds
        .as_array()
        .expect("folds")
        .iter()
        .map(|f| {
            (
                f["startLine"].as_u64().unwrap_or(0),
                f["endLine"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert!(folds.contains(&(1, 11)), "the graph folds: {folds:?}");
    client.shut_down();
}

/// The position on the graph's name in desk.graph's `graph research::Research;`.
fn on_path_at(uri: &str) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": { "line": 1, "character": 38 } })
}

#[test]
fn the_graph_files_of_a_folder_are_one_workspace() {
    let folder = tempfile::Builder::new()
        .prefix("trellis-lsp-workspace-")
        .tempdir()
        .expect("a folder");
    let research =
        "/// Finds sources.\ngraph Research {\n    node web;\n    START -> web -> END;\n}\n";
    std::fs::write(folder.path().join("research.graph"), research).expect("written");
    let desk_uri = format!("file://{}/desk.graph", folder.path().display());
    let research_uri = format!("file://{}/research.graph", folder.path().display());
    let desk = "graph Desk {\n    node research { graph research::Resarch; }\n    START -> research -> END;\n}\n";
    let mut client = Client::start();
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": {
            "uri": desk_uri, "languageId": "trellis-graph", "version": 1, "text": desk,
        }}),
    );
    // A misspelt graph of the file beside: E0211 on the name, with its fix.
    let found = client.published_for(&desk_uri);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["code"], "E0211");
    assert_eq!(
        found[0]["message"],
        "graph `Resarch` is not declared in `research.graph`\nhelp: did you mean `Research`?"
    );
    assert_eq!(
        found[0]["range"]["start"],
        json!({ "line": 1, "character": 36 })
    );

    // Fixed, the path links, hovers and jumps to that graph.
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": desk_uri, "version": 2 },
            "contentChanges": [{ "text": desk.replace("Resarch", "Research") }],
        }),
    );
    assert_eq!(client.published_for(&desk_uri), Vec::<Value>::new());
    let on_path =
        json!({ "textDocument": { "uri": desk_uri }, "position": { "line": 1, "character": 32 } });
    let definition = client.request("textDocument/definition", on_path.clone());
    assert_eq!(definition["uri"], research_uri);
    assert_eq!(
        definition["range"]["start"],
        json!({ "line": 1, "character": 6 })
    );
    let hover = client.request("textDocument/hover", on_path);
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        shown.contains("in `research.graph`") && shown.contains("Finds sources."),
        "{shown}"
    );
    let links = client.request(
        "textDocument/documentLink",
        json!({ "textDocument": { "uri": desk_uri } }),
    );
    assert_eq!(links[0]["target"], research_uri);

    // Symbols of the folder, open or not.
    let symbols = client.request("workspace/symbol", json!({ "query": "WE" }));
    assert_eq!(symbols[0]["name"], "web");
    assert_eq!(symbols[0]["containerName"], "Research");
    assert_eq!(symbols[0]["location"]["uri"], research_uri);

    // Renaming the graph from the path renames it where it is declared too.
    let prepared = client.request("textDocument/prepareRename", on_path_at(&desk_uri));
    assert_eq!(prepared["placeholder"], "Research");
    let renamed = client.request(
        "textDocument/rename",
        json!({
            "textDocument": { "uri": desk_uri },
            "position": { "line": 1, "character": 38 },
            "newName": "Sources",
        }),
    );
    let edits = |uri: &str| {
        renamed["changes"][uri]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(edits(&desk_uri).len(), 1, "{renamed}");
    assert_eq!(
        edits(&desk_uri)[0]["range"]["start"],
        json!({ "line": 1, "character": 36 })
    );
    assert_eq!(edits(&research_uri).len(), 1, "{renamed}");
    assert_eq!(
        edits(&research_uri)[0]["range"]["start"],
        json!({ "line": 1, "character": 6 })
    );
    assert_eq!(edits(&research_uri)[0]["newText"], "Sources");

    // The file beside changes on disk: the document naming its graph is checked again.
    std::fs::write(
        folder.path().join("research.graph"),
        research.replace("graph Research", "graph Sources"),
    )
    .expect("written");
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": research_uri, "type": 2 }] }),
    );
    let found = client.published_for(&desk_uri);
    assert_eq!(found[0]["code"], "E0211", "{found:?}");
    assert_eq!(
        found[0]["message"],
        "graph `Research` is not declared in `research.graph`\nhelp: `research.graph` declares `Sources`"
    );
    client.shut_down();
}
