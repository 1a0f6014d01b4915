//! The GPU solver: wgpu compute shaders (WGSL in `shaders/`), one struct per pass
//! (`passes/`: pipelines and bind groups built once, and an `encode`), the same algorithm as
//! the CPU solver pass for pass.

mod activity;
mod buffers;
pub(in crate::sim) mod passes;
pub mod solver;
pub(in crate::sim) mod uniforms;

pub use solver::GpuSolver;
