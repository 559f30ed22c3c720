//! The documentation's Rust examples, compiled (and run, unless marked `no_run`) as doctests of
//! this crate, against the code the generator emits and the crates as they are: an example in
//! `docs/` or the README cannot rot. `docs/getting-started.md` is not here: its test
//! (`cli/tests/getting_started.rs`) follows it to the letter in a fresh crate.

/// `README.md`.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct Readme;

/// `docs/agents.md`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/agents.md")]
pub struct Agents;

/// `docs/bench.md`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/bench.md")]
pub struct Bench;

/// `docs/cli.md`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/cli.md")]
pub struct Cli;

/// `docs/codegen.md`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/codegen.md")]
pub struct Codegen;

/// `docs/front-end.md`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/front-end.md")]
pub struct FrontEnd;

/// `docs/language.md`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/language.md")]
pub struct Language;

/// `docs/runtime.md`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/runtime.md")]
pub struct Runtime;

/// `docs/server.md`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/server.md")]
pub struct ServerDocs;
