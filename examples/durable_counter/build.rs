//! Whether this package's PostgreSQL tests can run, decided when they are built: with
//! `TRELLIS_TEST_POSTGRES_URL` set (and, for the tests that start a server of their own,
//! `TRELLIS_TEST_POSTGRES_CONTROL`) — or in CI, where they must run and fail without it — they
//! run; otherwise `cargo test` lists them as ignored, with the reason, instead of passing them.
//! (`runtime/`, `cli/` and `examples/durable_counter/` each hold this same file: a published
//! package builds from its own folder, so it cannot include one from outside.)
fn main() {
    println!("cargo::rerun-if-env-changed=TRELLIS_TEST_POSTGRES_URL");
    println!("cargo::rerun-if-env-changed=TRELLIS_TEST_POSTGRES_CONTROL");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rustc-check-cfg=cfg(postgres_tests)");
    println!("cargo::rustc-check-cfg=cfg(postgres_control)");
    let set = |name| std::env::var(name).is_ok_and(|value| !value.is_empty());
    let ci = std::env::var_os("CI").is_some();
    if set("TRELLIS_TEST_POSTGRES_URL") || ci {
        println!("cargo::rustc-cfg=postgres_tests");
    }
    if set("TRELLIS_TEST_POSTGRES_CONTROL") || ci {
        println!("cargo::rustc-cfg=postgres_control");
    }
}
