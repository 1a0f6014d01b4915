//! The GPU solver: wgpu compute shaders (WGSL in `shaders/`), one struct of pipelines and
//! bind groups built once, the same algorithm as the CPU solver pass for pass.

mod activity;
pub mod context;
pub mod kernel;
pub mod shaders;
pub mod solver;

pub use context::{GpuContext, GpuError, GpuOptions};
pub use kernel::WORKGROUP;
pub use solver::GpuSolver;
