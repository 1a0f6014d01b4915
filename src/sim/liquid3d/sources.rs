//! What reaches the 3D liquid from outside: the particle core's actions
//! ([`crate::sim::particles::sources`]) in three dimensions, planned by the model from the
//! model-neutral sources (`model.rs`: notes, drums, the mouse) and carried out by either
//! backend. Impulses act across the tank and up, through its whole depth.

pub use crate::sim::particles::sources::Impulse;

/// One source's effect on the liquid.
pub type Action = crate::sim::particles::sources::Action<3>;
/// A new particle: place and velocity in the tank's frame (m, m/s), colour (linear RGB).
pub type Fresh = crate::sim::particles::sources::Fresh<3>;
