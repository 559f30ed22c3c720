//! The README, followed to the letter (see `walkthrough`): the main job's commands run from the
//! repository's root and print what it shows, the diagnostic it shows is `trellis check`'s on
//! the support graph with the misspelling, and the test command is the one CI runs. (Its graph
//! and Rust blocks are built by `tests/docs_examples.rs` and the doctests of `trellis-tests`.)

mod walkthrough;

use walkthrough::{Document, GraphFile, Start};

static README: Document = Document {
    path: "README.md",
    start: Start::Repo,
    graph_file: GraphFile::Copy("examples/graphs/support.graph"),
};

#[test]
fn the_readme_works_as_written() {
    // The README as it stands: a block that stops being run shows up here.
    assert_eq!(walkthrough::follow(&README), (0, 3, 3));
}
