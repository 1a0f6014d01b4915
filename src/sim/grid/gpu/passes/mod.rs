//! The GPU solver's passes: one struct per pass (its pipelines and bind groups, built once,
//! and an `encode` method), named like the CPU pass (`sim/grid/cpu/<name>.rs`, or
//! `display/cpu/<name>.rs` for the picture's) and the WGSL file (`shaders/<name>.wgsl`) it
//! mirrors. Each pass names its `@binding`s in a `binding` module;
//! the layout tests check them against the WGSL.

pub(super) mod advect;
pub(super) mod bloom;
pub(super) mod buoyancy;
pub(super) mod colorize;
pub(super) mod curl;
pub(super) mod diffuse;
pub(super) mod display;
pub(super) mod divergence;
pub(super) mod gradient;
pub(super) mod multigrid;
pub(super) mod nodes;
pub(super) mod obstacle_overlay;
pub(super) mod obstacles;
pub(super) mod particles;
pub(super) mod pressure;
pub(super) mod reduce;
pub(super) mod splat;
pub(super) mod streamlines;
pub(super) mod sunrays;
pub(super) mod vorticity;

pub(super) use advect::Advect;
pub(super) use bloom::Bloom;
pub(super) use buoyancy::Buoyancy;
pub(super) use colorize::Colorize;
pub(super) use curl::Curl;
pub(super) use diffuse::Diffuse;
pub(super) use display::Display;
pub(super) use divergence::{Compressibility, Divergence, Norms};
pub(super) use gradient::Gradient;
pub(super) use multigrid::Multigrid;
pub(super) use obstacle_overlay::ObstacleOverlay;
pub(super) use obstacles::Obstacles;
pub(super) use particles::Particles;
pub(super) use pressure::Pressure;
pub(super) use reduce::Reduce;
pub(super) use splat::{GpuSplat, Splat};
pub(super) use streamlines::Streamlines;
pub(super) use sunrays::Sunrays;
pub(super) use vorticity::Vorticity;
