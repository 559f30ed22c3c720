//! docs/getting-started.md, followed to the letter (see `walkthrough`): its commands run in
//! order in a fresh directory, its files are written where it says, and what it shows a command
//! printing is what the command prints.

mod walkthrough;

use walkthrough::{Document, GraphFile, Start, attribute, line_matches};

static GUIDE: Document = Document {
    path: "docs/getting-started.md",
    start: Start::Fresh,
    graph_file: GraphFile::Here("graphs/reply.graph"),
};

#[test]
fn the_getting_started_guide_works_as_written() {
    // The guide as it stands: a block that stops being run shows up here.
    assert_eq!(walkthrough::follow(&GUIDE), (7, 9, 8));
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
