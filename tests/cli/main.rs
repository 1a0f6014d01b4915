//! The `dyeflow` command's tests, one module per subject, in one binary: the one that
//! `windows` cross-builds and runs under Wine.
//!
//! One subject: `cargo test --test cli render::`.

#[path = "../common/mod.rs"]
mod common;

mod bench;
mod capture;
mod commands;
mod hostile;
mod outputs;
mod presets;
mod render;
mod support;
mod windows;
