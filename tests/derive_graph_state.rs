//! `#[derive(GraphState)]` as users meet it: what compiles (warning-free under
//! `#![deny(warnings)]`), and the errors for what does not, each pointing at the mistake.

#[test]
fn derive_graph_state() {
    let cases = trybuild::TestCases::new();
    cases.pass("derive_graph_state/pass/*.rs");
    cases.compile_fail("derive_graph_state/fail/*.rs");
}
