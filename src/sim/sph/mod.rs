//! The particle fluid (smoothed-particle hydrodynamics), as built step by step in Sebastian
//! Lague's Fluid-Sim: particles in a box, density from a smoothing kernel over the neighbours
//! at predicted positions, pressure and near-pressure pushing pairs apart, viscosity smoothing
//! their velocities, gravity, and walls that bounce with damping: the particle core's step
//! ([`crate::sim::particles::step`], which says how each pair's push is kept equal and
//! opposite) in a box with nothing but its walls. This module is the box's configuration: its
//! knobs, its size, its model ([`model`]) over the CPU ([`cpu`]) or the GPU ([`gpu`]), solids
//! ([`solids`]) and sources ([`sources`]).
//!
//! # Units
//! Lengths are in box units: the box is [`BOX_HEIGHT`] tall (the source's scale, so its tuned
//! constants carry over) and `aspect` times as wide; time in seconds. The canvas is the box
//! scaled by `1 / BOX_HEIGHT`.

use crate::kernels::portable::Portable;

pub mod backend;
pub mod cpu;
pub mod gpu;
pub mod model;
pub(in crate::sim) mod shared;
pub mod solids;
pub mod sources;

pub use crate::sim::particles::SUBSTEP_S;
use crate::sim::particles::state::clamp_dt;
use crate::sim::particles::{LOOK_AHEAD_S, Particles, Physics, Walls};

/// The box's height in box units.
pub const BOX_HEIGHT: f32 = 10.0;
/// How far ahead the density looks (the core's, 1/120 s as in the source).
pub const LOOK_AHEAD: f32 = LOOK_AHEAD_S;
/// Most particles.
pub const MAX_PARTICLES: usize = Fluid::MAX_PARTICLES;

/// The fluid's knobs (box units and seconds), sanitised by [`Knobs::sanitized`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knobs {
    /// Gravity: acceleration along `gravity_dir`, box units per s².
    pub gravity: f32,
    /// Direction of gravity (normalised; down is `[0, -1]`).
    pub gravity_dir: [f32; 2],
    /// Smoothing radius.
    pub radius: f32,
    /// The density the pressure pushes towards.
    pub target_density: f32,
    /// Pressure per unit of density above the target.
    pub pressure: f32,
    /// Near pressure per unit of near density.
    pub near_pressure: f32,
    /// Viscosity strength (per second).
    pub viscosity: f32,
    /// Speed kept by a bounce off a wall (0..1).
    pub wall_bounce: f32,
    /// Drag: the velocity decays as `exp(-drag t)` (per second; 0 in the source).
    pub drag: f32,
}

impl Default for Knobs {
    /// The source's defaults.
    fn default() -> Self {
        Self {
            gravity: 12.0,
            gravity_dir: [0.0, -1.0],
            radius: 0.35,
            target_density: 55.0,
            pressure: 500.0,
            near_pressure: 18.0,
            viscosity: 0.06,
            wall_bounce: 0.95,
            drag: 0.0,
        }
    }
}

impl Knobs {
    /// Every knob finite and within its range (NaN falls back to the default).
    pub fn sanitized(&self) -> Self {
        let d = Self::default();
        let clean = |x: f32, lo: f32, hi: f32, or: f32| {
            if x.is_nan() { or } else { x.clamp(lo, hi) }
        };
        let [gx, gy] = self.gravity_dir;
        let len = (gx * gx + gy * gy).sqrt();
        let gravity_dir = if len.is_finite() && len > 1e-6 {
            [gx / len, gy / len]
        } else {
            d.gravity_dir
        };
        Self {
            gravity: clean(self.gravity, -100.0, 100.0, d.gravity),
            gravity_dir,
            radius: clean(self.radius, 0.05, 2.0, d.radius),
            target_density: clean(self.target_density, 0.0, 1000.0, d.target_density),
            pressure: clean(self.pressure, 0.0, 5000.0, d.pressure),
            near_pressure: clean(self.near_pressure, 0.0, 500.0, d.near_pressure),
            viscosity: clean(self.viscosity, 0.0, 10.0, d.viscosity),
            wall_bounce: clean(self.wall_bounce, 0.0, 1.0, d.wall_bounce),
            drag: clean(self.drag, 0.0, 1000.0, d.drag),
        }
    }

    /// The core's physics for a step of `dt` seconds: the knobs sanitised, gravity as a
    /// vector, walls that bounce with [`Knobs::wall_bounce`] and no friction.
    pub fn physics(&self, dt: f32) -> Physics<2> {
        let k = self.sanitized();
        Physics {
            gravity: k.gravity_dir.map(|c| k.gravity * c),
            radius: k.radius,
            target_density: k.target_density,
            pressure: k.pressure,
            near_pressure: k.near_pressure,
            viscosity: k.viscosity,
            bulk_viscosity: 0.0,
            bounce: k.wall_bounce,
            slip: 1.0,
            keep: k.keep(clamp_dt(dt)),
        }
    }

    /// The share of its velocity a particle keeps through a step of `dt` seconds of drag
    /// (exactly 1 without drag).
    pub fn keep(&self, dt: f32) -> f32 {
        if self.drag > 0.0 {
            (-self.drag * dt).pexp()
        } else {
            1.0
        }
    }
}

/// The particles in the box, in sorted order after each step.
pub type Fluid = Particles<2>;

impl Fluid {
    /// An empty box `aspect` times as wide as it is tall (sanitised to 0.1..10).
    pub fn new(aspect: f32) -> Self {
        let aspect = if aspect.is_finite() {
            aspect.clamp(0.1, 10.0)
        } else {
            1.0
        };
        Self::empty([aspect * BOX_HEIGHT, BOX_HEIGHT])
    }

    /// An empty box `width x height` box units (each sanitised to 0.1..10 000; NaN: the
    /// default box's).
    pub fn with_size(width: f32, height: f32) -> Self {
        let side = |x: f32| {
            if x.is_nan() {
                BOX_HEIGHT
            } else {
                x.clamp(0.1, 1e4)
            }
        };
        Self::empty([side(width), side(height)])
    }

    /// One step of `dt` seconds (clamped to 0..1/30) with `knobs`: the core's step
    /// ([`Particles::step_in`]) in a box with nothing but its walls.
    pub fn step(&mut self, knobs: &Knobs, dt: f32) {
        self.step_in(&mut Walls, &knobs.physics(dt), dt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Coincident particles, broken knobs and steps, no particles: never NaN, never outside
    /// the box, never a panic.
    #[test]
    fn broken_inputs_stay_finite_and_inside() {
        let mut empty = Fluid::new(f32::NAN);
        empty.step(&Knobs::default(), 1.0 / 60.0);
        assert!(empty.is_empty());
        let mut fluid = Fluid::new(1.78);
        for _ in 0..60 {
            fluid.add([5.0, 5.0], [0.0; 2], [1.0; 3]);
        }
        fluid.add([f32::NAN, 1.0], [f32::INFINITY, 0.0], [1.0; 3]);
        fluid.add([1e30, -1e30], [1e30, 1e30], [1.0; 3]);
        let broken = [
            Knobs::default(),
            Knobs {
                gravity: f32::NAN,
                radius: f32::INFINITY,
                pressure: f32::MAX,
                gravity_dir: [0.0, 0.0],
                ..Knobs::default()
            },
            Knobs {
                target_density: f32::NEG_INFINITY,
                near_pressure: f32::NAN,
                viscosity: 1e30,
                radius: 0.0,
                ..Knobs::default()
            },
        ];
        for knobs in broken {
            for dt in [1.0 / 60.0, f32::NAN, 1e9, -1.0] {
                for _ in 0..20 {
                    fluid.step(&knobs, dt);
                }
            }
        }
        let [w, h] = fluid.size();
        for (p, v) in fluid.pos.iter().zip(&fluid.vel) {
            assert!(p.iter().chain(v).all(|x| x.is_finite()), "{p:?} {v:?}");
            assert!(
                (0.0..=w).contains(&p[0]) && (0.0..=h).contains(&p[1]),
                "{p:?}"
            );
        }
        // Past the cap a particle is refused, and the others stay as they were.
        let mut full = Fluid::new(1.0);
        for _ in 0..MAX_PARTICLES {
            assert!(full.add([1.0, 1.0], [0.0; 2], [1.0; 3]));
        }
        assert!(!full.add([2.0, 2.0], [0.0; 2], [1.0; 3]));
        assert_eq!((full.len(), full.pos[0]), (MAX_PARTICLES, [1.0, 1.0]));
        // The coincident particles were pushed apart.
        let spread = fluid.pos.iter().map(|p| p[1]).fold(f32::MIN, f32::max)
            - fluid.pos.iter().map(|p| p[1]).fold(f32::MAX, f32::min);
        assert!(spread > 0.1, "{spread}");
    }
}
