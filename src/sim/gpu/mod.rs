//! The GPU solver: wgpu compute shaders (WGSL in `shaders/`), one struct per pass
//! (`passes/`: pipelines and bind groups built once, and an `encode`), the same algorithm as
//! the CPU solver pass for pass.

mod activity;
mod buffers;
pub mod context;
pub(crate) mod frames;
pub mod kernel;
#[cfg(test)]
mod layout_tests;
mod passes;
pub mod shaders;
pub mod solver;
mod uniforms;

pub use context::{GpuContext, GpuError, GpuOptions};
pub use kernel::WORKGROUP;
pub use solver::GpuSolver;
