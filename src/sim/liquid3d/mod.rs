//! The 3D liquid: Sebastian Lague's particle fluid taken to 3D, as his video ends it, in a
//! tank. Particles carry mass 1; density and near density come from the 3D spiky kernels over
//! the neighbours at predicted positions; pressure and near pressure push pairs apart,
//! viscosity pulls their velocities together; gravity pulls; the tank's walls bounce with
//! damping. This module is the CPU reference (rayon, parallel over particles);
//! [`crate::sim::particles::hash`] finds the neighbours.
//!
//! The model behind the `Model` seam is [`model`] (sources, knobs, the picture: the particles
//! splatted into a volume by [`splat`] and ray-marched by `display::cpu::raymarch`); [`gpu`]
//! runs the same step as compute passes; the step is the core's (`particles::step`) in the tank.
//!
//! # Frame and units
//! The simulation runs in the tank's own frame: the tank is the box `[0, size]` (x across, y
//! up, z into the picture), lengths in metres, time in seconds. Gravity is given in that frame,
//! so a tilted tank is a turned gravity (the tank's motion comes as forces in a later step).
//!
//! # Kernels (3D)
//! Lague's spiky kernels for density and near density and the poly6 kernel for viscosity, in
//! their 3D normalisation ([`crate::sim::particles::kernels`]): a particle's density is then
//! about the number of particles per cubic metre around it.
//!
//! # Pressure
//! `P = k (rho - rho0)`, with the knob `pressure` (`k`, the stiffness) in m^2/s^2: the square
//! of the liquid's speed of sound, so the hydrostatic compression at depth `d` is `g d / k` and
//! the step's stability limit is `dt < 0.4 h / sqrt(k)`. Below the target density the pressure is
//! negative and pulls particles together (it holds the liquid against the near pressure, which
//! always pushes apart at short range; cut to zero, the liquid swelled 28 % in a dam break).
//! Each pair's terms are symmetric in the pair, as in the 2D model, so pairs push each other
//! equally and oppositely and momentum is conserved to rounding.

pub mod backend;
pub mod floaters;
pub mod gpu;
pub mod model;
pub mod sources;
pub mod splat;

use crate::sim::particles::kernels::Kernels;
use crate::sim::particles::step::{PAIR_CHUNK, Particle};
use crate::sim::particles::{Container, LOOK_AHEAD_S, Particles, Physics};
use floaters::{Floater, Push};
use rayon::prelude::*;

pub use crate::sim::particles::{MAX_NEIGHBOURS, SUBSTEP_S};
/// Most particles.
pub const MAX_PARTICLES: usize = Particles::<3>::MAX_PARTICLES;
/// The density (kernel sum, self included) inside a cubic lattice of particles 6 cm apart with
/// the default 12 cm radius: 1.098 times the plain 1/0.06³, measured by the test
/// `a_lattice_at_rest_is_at_the_target_density`. The default target.
pub const LATTICE_DENSITY: f32 = 5082.0;

/// The spacing of a cubic lattice of particles at `target_density` (the kernel sum, self
/// included: a lattice 6 cm apart sums to [`LATTICE_DENSITY`], 1.098 particles per 6 cm cube),
/// m: how far apart the particles of a liquid at rest are.
pub fn spacing(target_density: f32) -> f32 {
    0.06 * libm::cbrtf(LATTICE_DENSITY / target_density.max(1e-6))
}

/// The liquid's knobs (metres, seconds), sanitised by [`Knobs::sanitized`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knobs {
    /// Gravity in the tank's frame, m/s² (down is -y).
    pub gravity: [f32; 3],
    /// Smoothing radius, m.
    pub radius: f32,
    /// The density the pressure keeps, particles per m³.
    pub target_density: f32,
    /// Pressure per unit of density above the target over the density: m²/s² (the square of
    /// the speed of sound).
    pub pressure: f32,
    /// Near pressure per unit of near density over the density, m²/s².
    pub near_pressure: f32,
    /// Viscosity: how fast a particle's velocity joins its neighbours', per second.
    pub viscosity: f32,
    /// Bulk viscosity: how fast two neighbours' closing (or parting) speed along their line
    /// fades, per second, on top of the viscosity: it calms the jitter a liquid of particles
    /// keeps at rest (a pool's particles moved at 4 cm/s median after 10 s without it, 2.8
    /// with 30/s, 2026-11-28) without thickening its shear.
    pub bulk_viscosity: f32,
    /// The share of its speed into a wall a particle keeps, bounced back (0..1).
    pub wall_bounce: f32,
    /// The share of its speed along a wall a particle keeps per second in contact (0..1).
    pub wall_slip: f32,
}

impl Default for Knobs {
    /// A liquid of particles 6 cm apart (the target is the density a cubic lattice of that
    /// spacing has inside, self included: `LATTICE_DENSITY`), 33 neighbours in reach, a speed
    /// of sound of 8.7 m/s (stable at [`SUBSTEP_S`]; 2 % compression at 16 cm depth).
    fn default() -> Self {
        Self {
            gravity: [0.0, -9.81, 0.0],
            radius: 0.12,
            target_density: LATTICE_DENSITY,
            pressure: 75.0,
            // Near pressure and viscosity from a dam break's settling (tests.rs, 2026-11-28):
            // near 4 left 1.2 % of the released energy jittering after 5 s and near 1 4 %
            // (particles pairing up); near 10 swelled the liquid 5 %; viscosity 8 with near 6
            // kept 0.23 % and the median density within 0.3 % of the target.
            near_pressure: 6.0,
            viscosity: 8.0,
            bulk_viscosity: 30.0,
            wall_bounce: 0.3,
            wall_slip: 0.5,
        }
    }
}

impl Knobs {
    /// The core's physics (the knobs sanitised), the particles keeping `keep` of their
    /// velocity through a step: the viscosities per unit of density (over the target).
    pub fn physics(&self, keep: f32) -> Physics<3> {
        let k = self.sanitized();
        let rho0 = k.target_density;
        Physics {
            gravity: k.gravity,
            radius: k.radius,
            target_density: rho0,
            pressure: k.pressure,
            near_pressure: k.near_pressure,
            viscosity: k.viscosity / rho0,
            bulk_viscosity: k.bulk_viscosity / rho0,
            bounce: k.wall_bounce,
            slip: k.wall_slip,
            keep,
        }
    }

    /// Every knob finite and within its range (NaN falls back to the default).
    pub fn sanitized(&self) -> Self {
        let d = Self::default();
        let clean = |x: f32, lo: f32, hi: f32, or: f32| {
            if x.is_nan() { or } else { x.clamp(lo, hi) }
        };
        Self {
            gravity: [0, 1, 2].map(|c| clean(self.gravity[c], -100.0, 100.0, d.gravity[c])),
            radius: clean(self.radius, 0.01, 1.0, d.radius),
            target_density: clean(self.target_density, 1.0, 1e7, d.target_density),
            pressure: clean(self.pressure, 0.0, 1e4, d.pressure),
            near_pressure: clean(self.near_pressure, 0.0, 1e3, d.near_pressure),
            viscosity: clean(self.viscosity, 0.0, 100.0, d.viscosity),
            bulk_viscosity: clean(self.bulk_viscosity, 0.0, 100.0, d.bulk_viscosity),
            wall_bounce: clean(self.wall_bounce, 0.0, 1.0, d.wall_bounce),
            wall_slip: clean(self.wall_slip, 0.0, 1.0, d.wall_slip),
        }
    }
}

/// The liquid's particles, in the tank's frame, the balls floating in it, and the step's
/// working memory. The particles' own bookkeeping is [`Particles`] (reached through `Deref`
/// until the tank becomes the core's container, docs/src/internals/particle-core.md).
#[derive(Clone, Debug, Default)]
pub struct Liquid {
    pub particles: Particles<3>,
    /// Balls floating in the liquid ([`floaters`]), at most [`floaters::MAX_FLOATERS`].
    pub floaters: Vec<Floater>,
    /// The floaters where they are about to be (the step's, kept between steps).
    ahead: Vec<Floater>,
}

impl std::ops::Deref for Liquid {
    type Target = Particles<3>;
    fn deref(&self) -> &Particles<3> {
        &self.particles
    }
}

impl std::ops::DerefMut for Liquid {
    fn deref_mut(&mut self) -> &mut Particles<3> {
        &mut self.particles
    }
}

impl Liquid {
    /// An empty tank of `size` (m; each side sanitised to 0.05..1000, NaN to 1).
    pub fn new(size: [f32; 3]) -> Self {
        Self {
            particles: Particles::empty(Self::sanitized(size)),
            ..Self::default()
        }
    }

    fn sanitized(size: [f32; 3]) -> [f32; 3] {
        size.map(|x| if x.is_nan() { 1.0 } else { x.clamp(0.05, 1e3) })
    }

    /// The same liquid in a tank of `size`: positions and velocities scaled with the tank's
    /// sides (each sanitised as in [`Liquid::new`]), the floaters' too.
    pub fn resize_tank(&mut self, size: [f32; 3]) {
        let size = Self::sanitized(size);
        let f = self.particles.rescale(size);
        for b in &mut self.floaters {
            for c in 0..3 {
                b.pos[c] = (b.pos[c] * f[c]).clamp(0.0, size[c]);
                b.vel[c] *= f[c];
            }
        }
    }

    /// Advance by `dt` seconds (clamped to 0..1/30 s; use [`SUBSTEP_S`]).
    pub fn step(&mut self, knobs: &Knobs, dt: f32) {
        self.step_kept(knobs, dt, 1.0);
    }

    /// [`Liquid::step`], the particles keeping `keep` of their velocity at its end (the
    /// drag; the floaters' is the model's).
    pub fn step_kept(&mut self, knobs: &Knobs, dt: f32, keep: f32) {
        let k = knobs.sanitized();
        self.floaters.truncate(floaters::MAX_FLOATERS);
        let mut tank = Tank {
            floaters: &mut self.floaters,
            ahead: &mut self.ahead,
            knobs: k,
            size: self.particles.size,
        };
        let physics = k.physics(keep);
        self.particles.step_in(&mut tank, &physics, dt);
    }
}

/// The tank as the core's container: its walls act as liquid beyond them at the target
/// density (in the densities, and pushing, never pulling, in the forces), and the floaters
/// as the walls, gripping the liquid and moved by what it gives them.
struct Tank<'a> {
    floaters: &'a mut Vec<Floater>,
    /// The floaters where they are about to be, as the particles' predicted positions.
    ahead: &'a mut Vec<Floater>,
    knobs: Knobs,
    size: [f32; 3],
}

impl Container<3> for Tank<'_> {
    fn predict(&mut self) {
        self.ahead.clear();
        self.ahead.extend(self.floaters.iter().map(|f| Floater {
            pos: [0, 1, 2].map(|c| f.pos[c] + f.vel[c] * LOOK_AHEAD_S),
            ..*f
        }));
    }

    #[inline]
    fn density(&self, p: [f32; 3], acc: [f32; 2], kern: &Kernels<3>, k: &Physics<3>) -> [f32; 2] {
        let (size, rho0) = (self.size, k.target_density);
        let mut acc = acc;
        for c in 0..3 {
            for gap in [p[c], size[c] - p[c]] {
                if let Some([w2, w3, _, _]) = kern.wall(gap) {
                    acc = [acc[0] + rho0 * w2, acc[1] + rho0 * w3];
                }
            }
        }
        let f = floaters::density(p, self.ahead, kern, rho0);
        [acc[0] + f[0], acc[1] + f[1]]
    }

    #[inline]
    fn force(&self, at: Particle<3>, acc: [f32; 3], kern: &Kernels<3>, k: &Physics<3>) -> [f32; 3] {
        let (size, rho0) = (self.size, k.target_density);
        let (pa, qa) = (at.p, k.pressures(at.d));
        let mut acc = acc;
        // The walls push (never pull: a wall that pulled is what made the source's liquid
        // stick to its boundaries): the pressure of the liquid beyond them, and its near
        // pressure.
        let inv = 1.0 / at.d[0].max(1e-12);
        for c in 0..3 {
            for (gap, away) in [(pa[c], 1.0), (size[c] - pa[c], -1.0)] {
                if let Some([_, _, g2, g3]) = kern.wall(gap) {
                    let push = qa[0].max(0.0) * inv * g2 + k.near_pressure * rho0 * inv * g3;
                    acc[c] += away * push;
                }
            }
        }
        // The floaters push too, and grip.
        let push = self.push(at.d, k);
        for f in self.ahead.iter() {
            if let Some(a) = push.from(pa, at.v, f, kern) {
                acc = [acc[0] + a[0], acc[1] + a[1], acc[2] + a[2]];
            }
        }
        acc
    }

    /// What the particles gave the floaters: each push and grip paid back, summed over fixed
    /// chunks in order (the same on any number of threads); then the floaters' move.
    fn react(&mut self, particles: &Particles<3>, kern: &Kernels<3>, k: &Physics<3>, dt: f32) {
        if self.floaters.is_empty() {
            return;
        }
        let (predicted, density, vel) = (&particles.predicted, &particles.density, &particles.vel);
        let ahead: &[Floater] = self.ahead;
        let chunks: Vec<[[f32; 3]; floaters::MAX_FLOATERS]> = (0..particles.len())
            .collect::<Vec<usize>>()
            .par_chunks(PAIR_CHUNK)
            .map(|chunk| {
                let mut sums = [[0.0f32; 3]; floaters::MAX_FLOATERS];
                for &a in chunk {
                    let push = self.push(density[a], k);
                    for (f, sum) in ahead.iter().zip(&mut sums) {
                        if let Some(g) = push.from(predicted[a], vel[a], f, kern) {
                            *sum = [sum[0] - g[0], sum[1] - g[1], sum[2] - g[2]];
                        }
                    }
                }
                sums
            })
            .collect();
        let mut force = [[0.0f32; 3]; floaters::MAX_FLOATERS];
        for sums in &chunks {
            for (f, s) in force.iter_mut().zip(sums) {
                *f = [f[0] + s[0], f[1] + s[1], f[2] + s[2]];
            }
        }
        floaters::advance(
            self.floaters,
            &force,
            k.gravity,
            spacing(k.target_density),
            (dt, 1.0),
            self.size,
        );
    }

    #[inline]
    fn keep_out(&self, p: &mut [f32; 3], v: &mut [f32; 3]) {
        floaters::keep_out(p, v, self.floaters);
    }
}

impl Tank<'_> {
    /// What pushes a particle of densities `d` and a ball apart.
    #[inline]
    fn push(&self, d: [f32; 2], k: &Physics<3>) -> Push {
        let k3 = &self.knobs;
        Push::new(
            d[0],
            k.pressures(d)[0],
            k3.near_pressure,
            k3.viscosity,
            k.target_density,
        )
    }
}

#[cfg(test)]
mod tests;
