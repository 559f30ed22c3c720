//! docs/getting-started.md, followed to the letter: its commands run in order in a fresh
//! directory, its files are written where it says, and what it shows a command printing is what
//! the command prints.
//!
//! The guide's blocks, by their info string:
//! - ```` ```toml file=PATH ```` (any language): written to `PATH`, replacing what was there;
//! - ```` ```sh ````: commands, one per line, run in order (`cargo new`, `cd`, `cargo run …`,
//!   `trellis …`); any other command fails this test, so the guide cannot grow one it does not
//!   run;
//! - ```` ```text ```` right after a `sh` block: what its last command prints (stdout, then
//!   stderr). A run id stands for any run id (and the one printed is used in later commands), `…`
//!   for anything up to the end of its part of the line. A command succeeds unless the text
//!   shows an `error:`;
//! - ```` ```text edit="OLD" to="NEW" ````: what `trellis check` prints for the graph file with
//!   `OLD` replaced by `NEW` (the file is restored after).
//!
//! The only liberty taken: the guide's git dependencies on Trellis are replaced by paths to
//! this checkout, and the workspace's lock file is copied in, so nothing is downloaded.

use std::path::{Path, PathBuf};
use std::process::Command;

const GUIDE: &str = "docs/getting-started.md";
const GIT: &str = r#"git = "https://github.com/trellis-graphs/trellis""#;
const GRAPH_FILE: &str = "graphs/reply.graph";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the CLI crate is in the workspace")
        .to_owned()
}

struct Block {
    /// Where it starts in the guide, for messages.
    line: usize,
    info: String,
    text: String,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (number, line) in markdown.lines().enumerate() {
        match open.as_mut() {
            Some(_) if line.starts_with("```") => blocks.extend(open.take()),
            Some(block) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    open = Some(Block {
                        line: number + 1,
                        info: info.trim().to_owned(),
                        text: String::new(),
                    });
                }
            }
        }
    }
    assert!(open.is_none(), "{GUIDE}: an unclosed code block");
    blocks
}

/// The value of `key="…"` or `key=…` in an info string.
fn attribute(info: &str, key: &str) -> Option<String> {
    let start = info.find(&format!("{key}="))? + key.len() + 1;
    let rest = &info[start..];
    Some(match rest.strip_prefix('"') {
        Some(quoted) => quoted[..quoted.find('"')?].to_owned(),
        None => rest.split_whitespace().next()?.to_owned(),
    })
}

/// A run id as the runtime writes one: 26 characters of Crockford's base 32.
fn is_run_id(word: &str) -> bool {
    word.len() == 26
        && word
            .bytes()
            .all(|b| b.is_ascii_digit() || (b.is_ascii_uppercase() && !b"ILOU".contains(&b)))
}

/// Matches `actual` against an expected line; returns the run ids the placeholders matched.
fn line_matches(expected: &str, actual: &str) -> Option<Vec<String>> {
    // Expected, cut into literal text, run ids and `…`.
    enum Piece<'a> {
        Text(&'a str),
        RunId,
        Any,
    }
    let mut pieces = Vec::new();
    let mut rest = expected;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('…') {
            pieces.push(Piece::Any);
            rest = after;
            continue;
        }
        let word_end = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        if word_end > 0 && is_run_id(&rest[..word_end]) {
            pieces.push(Piece::RunId);
            rest = &rest[word_end..];
            continue;
        }
        let text_end = rest
            .char_indices()
            .skip(1)
            .find(|&(i, c)| c == '…' || (c.is_ascii_alphanumeric() && starts_run_id(&rest[i..])))
            .map_or(rest.len(), |(i, _)| i);
        pieces.push(Piece::Text(&rest[..text_end]));
        rest = &rest[text_end..];
    }
    fn starts_run_id(text: &str) -> bool {
        let end = text
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(text.len());
        is_run_id(&text[..end])
    }
    fn matches(pieces: &[Piece<'_>], actual: &str, ids: &mut Vec<String>) -> bool {
        match pieces.split_first() {
            None => actual.is_empty(),
            Some((Piece::Text(text), rest)) => actual
                .strip_prefix(text)
                .is_some_and(|after| matches(rest, after, ids)),
            Some((Piece::RunId, rest)) => {
                let id = actual.get(..26).filter(|id| is_run_id(id));
                id.is_some_and(|id| {
                    ids.push(id.to_owned());
                    matches(rest, &actual[26..], ids) || {
                        ids.pop();
                        false
                    }
                })
            }
            Some((Piece::Any, rest)) => (0..=actual.len())
                .filter(|&i| actual.is_char_boundary(i))
                .any(|i| matches(rest, &actual[i..], ids)),
        }
    }
    let mut ids = Vec::new();
    matches(&pieces, actual, &mut ids).then_some(ids)
}

struct Guide {
    repo: PathBuf,
    /// Where the guide's commands run (`cd` moves it).
    cwd: PathBuf,
    /// Run ids shown in the guide → the ones this run of it printed.
    ids: Vec<(String, String)>,
}

impl Guide {
    fn write(&self, path: &str, text: &str) {
        let text = if path == "Cargo.toml" {
            std::fs::copy(self.repo.join("Cargo.lock"), self.cwd.join("Cargo.lock"))
                .expect("the workspace's lock file");
            self.local_dependencies(text)
        } else {
            text.to_owned()
        };
        let file = self.cwd.join(path);
        std::fs::create_dir_all(file.parent().expect("a file in a folder")).expect("a folder");
        std::fs::write(file, text).expect("a written file");
    }

    /// The guide's git dependencies on Trellis, as paths to this checkout.
    fn local_dependencies(&self, manifest: &str) -> String {
        let mut replaced = 0;
        let lines: Vec<String> = manifest
            .lines()
            .map(|line| {
                let Some((name, _)) = line.split_once(" = ").filter(|_| line.contains(GIT)) else {
                    return line.to_owned();
                };
                let folder = match name.trim() {
                    "trellis" => "runtime",
                    "trellis-codegen" => "codegen",
                    other => panic!("{GUIDE}: a git dependency on `{other}`"),
                };
                replaced += 1;
                let path = format!("path = {:?}", self.repo.join(folder).display().to_string());
                line.replace(GIT, &path)
            })
            .collect();
        assert_eq!(replaced, 2, "{GUIDE}: trellis and trellis-codegen from git");
        lines.join("\n") + "\n"
    }

    /// Runs one of the guide's commands; its output, stdout then stderr, and whether it
    /// succeeded.
    fn run(&mut self, line: usize, command: &str) -> Option<(String, bool)> {
        let mut command = command.to_owned();
        for (shown, printed) in &self.ids {
            command = command.replace(shown, printed);
        }
        let words: Vec<&str> = command.split_whitespace().collect();
        let mut process = match words[..] {
            ["cd", folder] => {
                self.cwd = self.cwd.join(folder);
                return None;
            }
            ["cargo", "new", _] => {
                let mut process = Command::new(env!("CARGO"));
                process.args(&words[1..]);
                process
            }
            ["cargo", "run", ..] => {
                let mut process = Command::new(env!("CARGO"));
                process.args(["run", "--offline", "-q"]).args(&words[2..]);
                process
            }
            ["trellis", ..] => {
                let mut process = Command::new(env!("CARGO_BIN_EXE_trellis"));
                process.args(&words[1..]);
                process
            }
            _ => panic!("{GUIDE}:{line}: a command this test does not run: {command}"),
        };
        let output = process
            .current_dir(&self.cwd)
            // Compiled once with the other fixture crates (see tests/build_script.rs), inside
            // the target directory this test run builds in.
            .env(
                "CARGO_TARGET_DIR",
                Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixture-crate"),
            )
            .env_remove("RUSTFLAGS")
            .output()
            .expect("the command starts");
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        Some((text, output.status.success()))
    }

    /// Checks `actual` against the guide's `expected`, learning the run ids it printed.
    fn compare(&mut self, line: usize, expected: &str, actual: &str) {
        let expected_lines: Vec<&str> = expected.lines().collect();
        let actual_lines: Vec<&str> = actual.trim_end().lines().collect();
        let mismatch = || {
            format!(
                "{GUIDE}:{line}: the guide shows\n{expected}\nbut the command printed\n{actual}"
            )
        };
        assert_eq!(expected_lines.len(), actual_lines.len(), "{}", mismatch());
        for (want, got) in expected_lines.iter().zip(&actual_lines) {
            let got = got.trim_end();
            let Some(ids) = line_matches(want, got) else {
                panic!("{}\n(first difference: `{want}` vs `{got}`)", mismatch());
            };
            let shown = want
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| is_run_id(w));
            for (shown, printed) in shown.zip(ids) {
                match self.ids.iter().find(|(s, _)| s == shown) {
                    Some((_, known)) => assert_eq!(
                        known, &printed,
                        "{GUIDE}:{line}: one run id in the guide, two runs"
                    ),
                    None => self.ids.push((shown.to_owned(), printed)),
                }
            }
        }
    }

    /// `trellis check` on the graph file with one edit, which is undone after.
    fn check_edited(&mut self, block: &Block) {
        let old = attribute(&block.info, "edit").expect("edit=\"OLD\"");
        let new = attribute(&block.info, "to").expect("to=\"NEW\"");
        let file = self.cwd.join(GRAPH_FILE);
        let original = std::fs::read_to_string(&file).expect("the graph file");
        assert_eq!(
            original.matches(&old).count(),
            1,
            "{GUIDE}:{}: `{old}` once in {GRAPH_FILE}",
            block.line
        );
        std::fs::write(&file, original.replace(&old, &new)).expect("the edited graph");
        let (printed, success) = self
            .run(block.line, &format!("trellis check {GRAPH_FILE}"))
            .expect("output");
        std::fs::write(&file, &original).expect("the graph restored");
        assert!(
            !success,
            "{GUIDE}:{}: the edited graph is refused",
            block.line
        );
        self.compare(block.line, &block.text, &printed);
    }
}

#[test]
fn the_getting_started_guide_works_as_written() {
    let repo = repo();
    let markdown = std::fs::read_to_string(repo.join(GUIDE)).expect("the guide");
    let root = std::env::temp_dir().join(format!("trellis-getting-started-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("a fresh folder");
    let mut guide = Guide {
        repo,
        cwd: root.clone(),
        ids: Vec::new(),
    };

    let blocks = blocks(&markdown);
    let (mut files, mut commands, mut outputs) = (0, 0, 0);
    let mut last: Option<(usize, String, bool)> = None;
    for block in &blocks {
        let language = block.info.split_whitespace().next().unwrap_or_default();
        if let Some(path) = attribute(&block.info, "file") {
            guide.write(&path, &block.text);
            files += 1;
            last = None;
        } else if language == "sh" {
            for command in block.text.lines().map(str::trim) {
                if command.is_empty() {
                    continue;
                }
                commands += 1;
                if let Some((printed, success)) = guide.run(block.line, command) {
                    last = Some((block.line, printed, success));
                }
            }
        } else if language == "text" && block.info.contains("edit=") {
            guide.check_edited(block);
            outputs += 1;
        } else if language == "text" {
            let (line, printed, success) = last
                .take()
                .unwrap_or_else(|| panic!("{GUIDE}:{}: output shown for no command", block.line));
            let fails = block.text.lines().any(|l| l.starts_with("error:"));
            assert_eq!(
                success,
                !fails,
                "{GUIDE}:{line}: the command {} but the guide shows {}:\n{printed}",
                if success { "succeeded" } else { "failed" },
                if fails { "an error" } else { "no error" },
            );
            guide.compare(block.line, &block.text, &printed);
            outputs += 1;
        } else {
            panic!(
                "{GUIDE}:{}: a block this test neither writes nor runs (```{})",
                block.line, block.info
            );
        }
    }
    // The guide as it stands: a block that stops being run shows up here.
    assert_eq!((files, commands, outputs), (7, 9, 8));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn expected_lines_match_run_ids_and_ellipses_only() {
    let id = "01JF3Q8ZK5V9W2T7M4N6P8R0XY";
    let printed = "01M8XK4D0G4KGD60E1DH03ZD6A";
    assert_eq!(
        line_matches(
            &format!("run {id} is waiting"),
            &format!("run {printed} is waiting")
        ),
        Some(vec![printed.to_owned()])
    );
    assert_eq!(
        line_matches("run … waiting", "run 42 is waiting"),
        Some(vec![])
    );
    assert_eq!(line_matches("CREATED…", "CREATED   UPDATED"), Some(vec![]));
    assert!(line_matches(&format!("run {id}"), "run 42").is_none());
    assert!(line_matches("sent", "not sent").is_none());
    assert!(line_matches("a … c", "a b d").is_none());
    assert_eq!(
        attribute(r#"text edit="a | b;" to="a | c;""#, "to").as_deref(),
        Some("a | c;")
    );
    assert_eq!(
        attribute("toml file=Cargo.toml", "file").as_deref(),
        Some("Cargo.toml")
    );
}
