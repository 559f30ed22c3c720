//! Whether this package's PostgreSQL tests can run, decided when they are built: with
//! `TRELLIS_TEST_POSTGRES_URL` set (and, for the tests that start a server of their own,
//! `TRELLIS_TEST_POSTGRES_CONTROL`) — or in CI, where they must run and fail without it — they
//! run; otherwise `cargo test` lists them as ignored, with the reason, instead of passing them.
//!
//! This is the one copy: `runtime/`, `cli/`, `bench/` and `examples/durable_counter/` each have a
//! `build.rs` that is a symbolic link to it. A published package builds from its own folder (cargo
//! refuses a `build = "../…"` path there), and `cargo package` stores a link's target, so each
//! published crate carries a copy of this file while the repository keeps one. A package whose
//! build script does more (`examples/support/`, which also compiles its graph) includes it as a
//! module and calls [`gate`].
#[allow(dead_code)] // as a module, `main` is not the build script's
fn main() {
    gate();
}

/// Says which PostgreSQL tests to build as run, not ignored.
pub(crate) fn gate() {
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
