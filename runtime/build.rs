//! Whether this package's PostgreSQL tests can run, decided when they are built: with
//! `TRELLIS_TEST_POSTGRES_URL` set (or in CI, where they must run and fail without it) they run;
//! otherwise `cargo test` lists them as ignored, with the reason, instead of passing them.
fn main() {
    println!("cargo::rerun-if-env-changed=TRELLIS_TEST_POSTGRES_URL");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rustc-check-cfg=cfg(postgres_tests)");
    let server = std::env::var("TRELLIS_TEST_POSTGRES_URL").is_ok_and(|url| !url.is_empty());
    if server || std::env::var_os("CI").is_some() {
        println!("cargo::rustc-cfg=postgres_tests");
    }
}
