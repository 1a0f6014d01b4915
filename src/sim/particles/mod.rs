//! The particle core: what the 2D particle fluid (`sim/sph`, the box) and the 3D liquid
//! (`sim/liquid3d`, the tank) share, each stage written once for both dimensions
//! (`const D: usize`, 2 or 3) and named as the stage it is. The core names neither of them
//! (the layout test holds it). The plan it is carried out by, and what is left of it:
//! docs/src/internals/particle-core.md.

pub mod gpu;
pub mod hash;
pub mod kernels;
mod scan;
pub mod sources;
pub mod state;
pub mod step;

pub use state::Particles;
pub use step::{Container, LOOK_AHEAD_S, MAX_NEIGHBOURS, Physics, SUBSTEP_S, Walls, substeps};
