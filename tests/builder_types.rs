//! The builder's typed parts as users meet them: a mismatch is a compile error at the user's
//! line (`.stderr` files), not a failed branch at run time.

#[test]
fn builder_types() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("builder_types/fail/*.rs");
}
