//! The library's integration tests, one module per subject, in one binary (each test binary
//! links the whole crate and its dependencies once more). Tests that measure the whole process
//! (its threads, its CPU time) have binaries of their own: `engine`, `idle`, `cpu_threads`,
//! `chroma_thread`; the command line's tests are `tests/cli/`.
//!
//! One subject: `cargo test --test it gpu_parity::`.

#[path = "../common/mod.rs"]
mod common;

mod bridge;
mod capture_realtime;
mod cpu_solver;
mod docs;
mod drums;
mod editor;
mod editor_liquid;
mod editor_obstacles;
mod editor_speed;
mod gpu_parity;
mod heat;
mod hosts;
mod layout;
mod liquid;
mod liquid3d_gpu;
mod mixing;
mod music;
mod obstacle_engine;
mod obstacle_overlay;
mod obstacle_state;
mod obstacles;
mod obstacles_gpu;
mod osc;
mod output_window;
mod params;
mod particles;
mod particles_gpu;
mod plugin_engine;
mod plugin_host;
mod shaders;
mod sizes;
mod sph_gpu;
mod sph_gpu_model;
mod streamlines_gpu;
mod twins;
mod vocabulary;
