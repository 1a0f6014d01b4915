//! The particle core on the GPU: each stage written once in WGSL over the dimension's vector
//! (`shaders/particle_<stage>.wgsl` after `particle_dim2.wgsl` or `particle_dim3.wgsl`, see
//! [`crate::gpu::shaders::particle_module`]) and driven from here.

pub mod sources;

use crate::sim::particles::hash::gpu::SW;

/// Workgroups for `n` particles, one thread each (at least one).
pub fn groups(n: usize) -> u32 {
    (n as u32).div_ceil(SW).max(1)
}
