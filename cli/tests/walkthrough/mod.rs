//! Following a document to the letter: its commands run in order, its files are written where
//! it says, and what it shows a command printing is what the command prints. Shared by the
//! getting-started guide's test and the README's.
//!
//! The blocks, by their info string:
//! - ```` ```toml file=PATH ```` (any language): written to `PATH`, replacing what was there;
//! - ```` ```sh ````: commands, one per line, run in order (`cargo new`, `cd`, `cargo run …`,
//!   `trellis …`); any other command fails the test, so a document cannot grow one it does not
//!   run; ```` ```sh ci ````: commands CI runs (`.ci/run` must hold each as written);
//! - ```` ```text ```` right after a `sh` block: what its last command prints (stdout, then
//!   stderr). A run id stands for any run id (and the one printed is used in later commands), `…`
//!   for anything up to the end of its part of the line. A command succeeds unless the text
//!   shows an `error:`;
//! - ```` ```text edit="OLD" to="NEW" ````: what `trellis check` prints for the document's graph
//!   file with `OLD` replaced by `NEW` (the file is restored after).
//!
//! The guide's other blocks are all of these; the README also shows code that other tests
//! build (its ```` ```graph ```` and ```` ```rust ```` blocks).
//!
//! The only liberty taken: a crate's path dependencies on a clone of Trellis beside it
//! (`../trellis/…`) point at this checkout, and the workspace's lock file is copied in, so
//! nothing is downloaded.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A document to follow, and how.
pub(crate) struct Document {
    /// The document, from the repository's root.
    pub(crate) path: &'static str,
    /// Where its commands start: a fresh folder, or the repository's root.
    pub(crate) start: Start,
    /// The graph file its `edit=` blocks change: in the current folder, or (`Copy`) a file of
    /// the repository checked from a scratch folder under its own name.
    pub(crate) graph_file: GraphFile,
}

/// Where a document's commands start.
pub(crate) enum Start {
    /// A new, empty folder (a guide that makes a crate).
    Fresh,
    /// The repository's root (the README's `cargo run -p …`).
    Repo,
}

/// The file an `edit=` block changes.
pub(crate) enum GraphFile {
    /// This path from the current folder (a file the document wrote).
    Here(&'static str),
    /// This file of the repository, copied to a scratch folder and checked there by its name.
    Copy(&'static str),
}

/// Where a new crate expects its clone of Trellis (`path = "../trellis/runtime"`).
const CLONE: &str = "../trellis/";

impl Document {
    /// Whether blocks other than files, commands and outputs may stand in it (the README's
    /// graph and Rust, built by other tests).
    fn shows_other_blocks(&self) -> bool {
        matches!(self.start, Start::Repo)
    }
}

/// How many files a document wrote, commands it ran and outputs it compared.
pub(crate) type Counts = (usize, usize, usize);

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
    assert!(open.is_none(), "an unclosed code block");
    blocks
}

/// The value of `key="…"` or `key=…` in an info string.
pub(crate) fn attribute(info: &str, key: &str) -> Option<String> {
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
pub(crate) fn line_matches(expected: &str, actual: &str) -> Option<Vec<String>> {
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
    doc: &'static Document,
    repo: PathBuf,
    /// A scratch folder for edited copies of graph files.
    scratch: PathBuf,
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

    /// The guide's path dependencies on a clone of Trellis beside the new crate
    /// (`../trellis/runtime`), as paths to this checkout.
    fn local_dependencies(&self, manifest: &str) -> String {
        let mut replaced = 0;
        let lines: Vec<String> = manifest
            .lines()
            .map(|line| {
                let Some(written) = line
                    .split_once("path = \"")
                    .and_then(|(_, rest)| rest.split_once('"'))
                    .map(|(path, _)| path)
                    .filter(|path| path.starts_with(CLONE))
                else {
                    return line.to_owned();
                };
                replaced += 1;
                let folder = &written[CLONE.len()..];
                let path = self.repo.join(folder).display().to_string();
                line.replace(&format!("{written:?}"), &format!("{path:?}"))
            })
            .collect();
        assert_eq!(
            replaced, 2,
            "{}: trellis and trellis-codegen from the clone",
            self.doc.path
        );
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
            _ => panic!(
                "{}:{line}: a command this test does not run: {command}",
                self.doc.path
            ),
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
                "{}:{line}: the document shows\n{expected}\nbut the command printed\n{actual}",
                self.doc.path
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
                        "{}:{line}: one run id in the document, two runs",
                        self.doc.path
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
        let (file, shown, folder) = match self.doc.graph_file {
            GraphFile::Here(path) => (self.cwd.join(path), path.to_owned(), self.cwd.clone()),
            GraphFile::Copy(path) => {
                let name = Path::new(path).file_name().expect("a file name");
                let copy = self.scratch.join(name);
                std::fs::copy(self.repo.join(path), &copy).expect("a copy of the graph file");
                let name = name.to_string_lossy().into_owned();
                (copy, name, self.scratch.clone())
            }
        };
        let original = std::fs::read_to_string(&file).expect("the graph file");
        assert_eq!(
            original.matches(&old).count(),
            1,
            "{}:{}: `{old}` once in {shown}",
            self.doc.path,
            block.line
        );
        std::fs::write(&file, original.replace(&old, &new)).expect("the edited graph");
        let cwd = std::mem::replace(&mut self.cwd, folder);
        let (printed, success) = self
            .run(block.line, &format!("trellis check {shown}"))
            .expect("output");
        self.cwd = cwd;
        std::fs::write(&file, &original).expect("the graph restored");
        assert!(
            !success,
            "{}:{}: the edited graph is refused",
            self.doc.path, block.line
        );
        self.compare(block.line, &block.text, &printed);
    }
}

/// Follows `doc`: writes its files, runs its commands, compares what they print with what it
/// shows; the counts, for the caller to pin.
pub(crate) fn follow(doc: &'static Document) -> Counts {
    let repo = repo();
    let markdown = std::fs::read_to_string(repo.join(doc.path)).expect("the document");
    let root = std::env::temp_dir().join(format!(
        "trellis-walkthrough-{}-{}",
        doc.path.replace(['/', '.'], "-"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&root);
    let scratch = root.join("scratch");
    std::fs::create_dir_all(&scratch).expect("a fresh folder");
    let cwd = match doc.start {
        Start::Fresh => root.clone(),
        Start::Repo => repo.clone(),
    };
    let ci = std::fs::read_to_string(repo.join(".ci/run")).expect("the CI script");
    let mut guide = Guide {
        doc,
        repo,
        scratch,
        cwd,
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
        } else if language == "sh" && block.info.split_whitespace().any(|word| word == "ci") {
            // Run by CI itself (the test command cannot run inside a test): it must be there
            // as written.
            for command in block.text.lines().map(str::trim).filter(|c| !c.is_empty()) {
                assert!(
                    ci.lines().any(|line| line.trim().starts_with(command)),
                    "{}:{}: `{command}` is not what .ci/run runs",
                    doc.path,
                    block.line
                );
                commands += 1;
            }
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
            let (line, printed, success) = last.take().unwrap_or_else(|| {
                panic!("{}:{}: output shown for no command", doc.path, block.line)
            });
            let fails = block.text.lines().any(|l| l.starts_with("error:"));
            assert_eq!(
                success,
                !fails,
                "{}:{line}: the command {} but the document shows {}:\n{printed}",
                doc.path,
                if success { "succeeded" } else { "failed" },
                if fails { "an error" } else { "no error" },
            );
            guide.compare(block.line, &block.text, &printed);
            outputs += 1;
        } else {
            assert!(
                doc.shows_other_blocks(),
                "{}:{}: a block this test neither writes nor runs (```{})",
                doc.path,
                block.line,
                block.info
            );
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    (files, commands, outputs)
}
