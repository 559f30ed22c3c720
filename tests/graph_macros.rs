//! `graph!` and `include_graph!` as users meet them: generated code that compiles warning-free
//! under `#![deny(warnings)]`, and errors that point at the mistake (`.stderr` files).

#[test]
fn graph_macros() {
    let cases = trybuild::TestCases::new();
    cases.pass("graph_macros/pass/*.rs");
    cases.compile_fail("graph_macros/fail/*.rs");
}
