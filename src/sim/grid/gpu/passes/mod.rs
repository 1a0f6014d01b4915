//! The GPU solver's passes: one struct per pass (its pipelines and bind groups, built once,
//! and an `encode` method), named like the CPU pass (`sim/grid/cpu/<name>.rs`) and the WGSL
//! file (`shaders/<name>.wgsl`) it mirrors. The picture's passes are the display's
//! (`display/gpu/`). Each pass names its `@binding`s in a `binding` module;
//! the shader tests (`sim::shader_tests`) check them against the WGSL.

pub(in crate::sim) mod advect;
pub(in crate::sim) mod buoyancy;
pub(in crate::sim) mod curl;
pub(in crate::sim) mod diffuse;
pub(in crate::sim) mod divergence;
pub(in crate::sim) mod gradient;
pub(in crate::sim) mod multigrid;
pub(in crate::sim) mod nodes;
pub(in crate::sim) mod obstacles;
pub(in crate::sim) mod particles;
pub(in crate::sim) mod pressure;
pub(in crate::sim) mod reduce;
pub(in crate::sim) mod splat;
pub(in crate::sim) mod streamline_trace;
pub(in crate::sim) mod vorticity;

pub(in crate::sim::grid::gpu) use advect::Advect;
pub(in crate::sim::grid::gpu) use buoyancy::Buoyancy;
pub(in crate::sim::grid::gpu) use curl::Curl;
pub(in crate::sim::grid::gpu) use diffuse::Diffuse;
pub(in crate::sim::grid::gpu) use divergence::{Compressibility, Divergence, Norms};
pub(in crate::sim::grid::gpu) use gradient::Gradient;
pub(in crate::sim::grid::gpu) use multigrid::Multigrid;
pub(in crate::sim::grid::gpu) use obstacles::Obstacles;
pub(in crate::sim::grid::gpu) use particles::Particles;
pub(in crate::sim::grid::gpu) use pressure::Pressure;
pub(in crate::sim::grid::gpu) use reduce::Reduce;
pub(in crate::sim) use splat::GpuSplat;
pub(in crate::sim::grid::gpu) use splat::Splat;
pub(in crate::sim::grid::gpu) use streamline_trace::StreamlineTrace;
pub(in crate::sim::grid::gpu) use vorticity::Vorticity;
