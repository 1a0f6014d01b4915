//! The particle fluid on the CPU: its model ([`model::SphModel`], the physics of
//! [`super::Fluid`] stepped with rayon) and its light ([`light`]: the particles drawn into a
//! field of light for the picture).

pub(crate) mod light;
pub mod model;
