//! The 3D liquid: Sebastian Lague's particle fluid taken to 3D, as his video ends it, in a
//! tank. Particles carry mass 1; density and near density come from the 3D spiky kernels over
//! the neighbours at predicted positions; pressure and near pressure push pairs apart,
//! viscosity pulls their velocities together; gravity pulls; the tank's walls bounce with
//! damping. This module is the CPU reference (rayon, parallel over particles);
//! [`crate::sim::particles::hash`] finds the neighbours.
//!
//! The model behind the `Model` seam is [`model`] (sources, knobs, the picture: the particles
//! splatted into a volume by [`splat`] and ray-marched by `display::cpu::raymarch`); [`gpu`]
//! runs the same step as compute passes, [`scan`] is the density pass's neighbour scan.
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
//! `P = stiffness (rho - rho0)`, with `stiffness` in m^2/s^2: the square of the liquid's speed
//! of sound, so the hydrostatic compression at depth `d` is `g d / stiffness` and the step's
//! stability limit is `dt < 0.4 h / sqrt(stiffness)`. Below the target density the pressure is
//! negative and pulls particles together (it holds the liquid against the near pressure, which
//! always pushes apart at short range; cut to zero, the liquid swelled 28 % in a dam break).
//! Each pair's terms are symmetric in the pair, as in the 2D model, so pairs push each other
//! equally and oppositely and momentum is conserved to rounding.

use crate::kernels::portable::Portable;

pub mod backend;
pub mod floaters;
pub mod gpu;
pub mod model;
mod scan;
pub mod sources;
pub mod splat;

use crate::sim::particles::Particles;
use crate::sim::particles::kernels::Kernels;
use crate::sim::particles::state::clamp_dt;
use floaters::{Floater, Push};
use rayon::prelude::*;
use scan::{Hits, LANES, scan};

/// How far ahead the density looks: positions are predicted `LOOK_AHEAD_S` seconds along the
/// velocity, as in the source.
pub const LOOK_AHEAD_S: f32 = 1.0 / 120.0;
/// A step's length: 60 frames a second, three sub-steps a frame, as in the source.
pub const SUBSTEP_S: f32 = 1.0 / 180.0;
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
    pub stiffness: f32,
    /// Near pressure per unit of near density over the density, m²/s².
    pub near_stiffness: f32,
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
            stiffness: 75.0,
            // Near pressure and viscosity from a dam break's settling (tests.rs, 2026-11-28):
            // near 4 left 1.2 % of the released energy jittering after 5 s and near 1 4 %
            // (particles pairing up); near 10 swelled the liquid 5 %; viscosity 8 with near 6
            // kept 0.23 % and the median density within 0.3 % of the target.
            near_stiffness: 6.0,
            viscosity: 8.0,
            bulk_viscosity: 30.0,
            wall_bounce: 0.3,
            wall_slip: 0.5,
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
        Self {
            gravity: [0, 1, 2].map(|c| clean(self.gravity[c], -100.0, 100.0, d.gravity[c])),
            radius: clean(self.radius, 0.01, 1.0, d.radius),
            target_density: clean(self.target_density, 1.0, 1e7, d.target_density),
            stiffness: clean(self.stiffness, 0.0, 1e4, d.stiffness),
            near_stiffness: clean(self.near_stiffness, 0.0, 1e3, d.near_stiffness),
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
    /// Each particle's neighbours in reach, by chunks of [`PAIR_CHUNK`] particles.
    pairs: Vec<Pairs>,
    /// The predicted positions by axis (x, y, z), for the neighbour scan.
    axes: [Vec<f32>; 3],
    scratch: Scratch,
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

/// Most neighbours a particle keeps (about 37 in the liquid at rest). Particles piled into one
/// place (a broken input reset to the tank's centre, a splash into a corner) would otherwise
/// make every pair a neighbour: memory and time growing with the square of their number. Past
/// it, a particle's scan stops: its density is then an underestimate of a very dense place,
/// still pushing hard, and its pairs are no longer all mutual (momentum is kept only where the
/// cap is not reached).
pub const MAX_NEIGHBOURS: usize = 128;

/// Floats a pair reads of each particle, packed (see the force pass).
const PACK: usize = 12;

/// Particles per chunk of neighbour lists (one list per rayon task, kept between steps so the
/// step allocates nothing once warm).
const PAIR_CHUNK: usize = 256;

/// The neighbours in reach of a chunk's particles: particle `i` of the chunk has
/// `list[start[i]..start[i + 1]]`, each (sorted index, distance).
#[derive(Clone, Debug, Default)]
struct Pairs {
    start: Vec<u32>,
    list: Vec<(u32, f32)>,
}

/// The 3D step's own buffers, kept between steps.
#[derive(Clone, Debug, Default)]
struct Scratch {
    floaters: Vec<Floater>,
    pack: Vec<[f32; PACK]>,
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
        let k = knobs.sanitized();
        let dt = clamp_dt(dt);
        if self.pos.is_empty() || dt == 0.0 {
            return;
        }
        self.floaters.truncate(floaters::MAX_FLOATERS);
        self.particles
            .predict_and_sort(k.gravity, LOOK_AHEAD_S, k.radius, dt);
        let ps = &mut self.particles;
        let Some(grid) = &ps.grid else {
            return;
        };
        let kern = Kernels::<3>::new(grid.reach);
        let predicted = &ps.predicted;
        let (size, rho0) = (ps.size, k.target_density);

        self.scratch.floaters.clear();
        self.scratch
            .floaters
            .extend(self.floaters.iter().map(|f| Floater {
                pos: [0, 1, 2].map(|c| f.pos[c] + f.vel[c] * LOOK_AHEAD_S),
                ..*f
            }));

        // Densities, and each particle's neighbours in reach (the force pass reads them
        // instead of the 27 cells again: about 37 pairs instead of about 220 candidates).
        let n = ps.pos.len();
        ps.density.resize(n, [0.0; 2]);
        for (c, axis) in self.axes.iter_mut().enumerate() {
            axis.clear();
            axis.extend(predicted.iter().map(|p| p[c]));
            // Padding for the scan's last group (never in reach: masked off by its run).
            axis.extend([f32::INFINITY; LANES]);
        }
        let axes = &self.axes;
        // The floaters where they are about to be, as the particles' predicted positions.
        let ahead: &[Floater] = &self.scratch.floaters;
        self.pairs
            .resize_with(n.div_ceil(PAIR_CHUNK), Pairs::default);
        self.pairs
            .par_iter_mut()
            .zip(ps.density.par_chunks_mut(PAIR_CHUNK))
            .enumerate()
            .for_each(|(chunk, (pairs, densities))| {
                pairs.start.clear();
                pairs.list.clear();
                let mut stage = Hits::default();
                for (i, d) in densities.iter_mut().enumerate() {
                    let a = chunk * PAIR_CHUNK + i;
                    pairs.start.push(pairs.list.len() as u32);
                    let p = predicted[a];
                    let (rows, count) = grid.rows_around(p);
                    let mut acc = scan(
                        p,
                        a,
                        &rows[..count],
                        axes,
                        &kern,
                        &mut pairs.list,
                        &mut stage,
                    );
                    // The walls: the liquid as if it went on beyond them at the target density.
                    for c in 0..3 {
                        for gap in [p[c], size[c] - p[c]] {
                            if let Some([w2, w3, _, _]) = kern.wall(gap) {
                                acc = [acc[0] + rho0 * w2, acc[1] + rho0 * w3];
                            }
                        }
                    }
                    // And the floaters, as the walls.
                    let f = floaters::density(p, ahead, &kern, rho0);
                    *d = [acc[0] + f[0], acc[1] + f[1]];
                }
                pairs.start.push(pairs.list.len() as u32);
            });

        // Pressure, near pressure and viscosity, each pair's terms symmetric in the pair.
        let density = &ps.density;
        let vel = &ps.vel;
        let pressure = |d: [f32; 2]| [k.stiffness * (d[0] - rho0), k.near_stiffness * d[1]];
        let visc = k.viscosity / rho0;
        let damp = k.bulk_viscosity / rho0;
        // What a pair reads of each particle, together (one cache line per neighbour): its
        // predicted place, velocity, pressure over density and inverse density, near
        // pressure, density and near density.
        self.scratch.pack.clear();
        self.scratch.pack.resize(n, [0.0; PACK]);
        self.scratch
            .pack
            .par_iter_mut()
            .enumerate()
            .for_each(|(a, out)| {
                let (p, v, d) = (predicted[a], vel[a], density[a]);
                let q = pressure(d);
                let inv = 1.0 / d[0].max(1e-6);
                *out = [
                    p[0],
                    p[1],
                    p[2],
                    v[0],
                    v[1],
                    v[2],
                    q[0] * inv,
                    inv,
                    q[1],
                    d[0],
                    d[1],
                    0.0,
                ];
            });
        let pack = &self.scratch.pack;
        ps.scratch.vel.clear();
        ps.scratch.vel.resize(ps.pos.len(), [0.0; 3]);
        let pairs = &self.pairs;
        ps.scratch
            .vel
            .par_iter_mut()
            .enumerate()
            .for_each(|(a, out)| {
                let (pa, da, va) = (predicted[a], density[a], vel[a]);
                let qa = pressure(da);
                let me = &pack[a];
                let mut acc = [0.0f32; 3];
                let chunk = &pairs[a / PAIR_CHUNK];
                let i = a % PAIR_CHUNK;
                let near = &chunk.list[chunk.start[i] as usize..chunk.start[i + 1] as usize];
                for &(b, r) in near {
                    let pb = &pack[b as usize];
                    let d = [pb[0] - me[0], pb[1] - me[1], pb[2] - me[2]];
                    let rel = [pb[3] - me[3], pb[4] - me[4], pb[5] - me[5]];
                    // Coincident particles: the lower index goes down, the other up.
                    let (along, inv_len) = if r > 0.0 {
                        (d, 1.0 / r)
                    } else if a < b as usize {
                        ([0.0, 1.0, 0.0], 1.0)
                    } else {
                        ([0.0, -1.0, 0.0], 1.0)
                    };
                    let [s2, s3] = kern.slopes(r);
                    // Symmetric: the pair's mean pressure over the product of the densities,
                    // (Pa + Pb) / (2 da db) = (Pa/da / db + Pb/db / da) / 2, and the mean near
                    // pressure over the mean near density times the mean density; the same for
                    // a and b.
                    let t0 = 0.5 * (me[6] * pb[7] + pb[6] * me[7]);
                    let t1 = 0.5 * (me[8] + pb[8])
                        / (0.25 * (me[10] + pb[10]) * (me[9] + pb[9])).max(1e-12);
                    let push = (s2 * t0 + s3 * t1) * inv_len;
                    let poly = kern.poly6(r * r);
                    // Pairs closing in or drawing apart are damped harder along their line
                    // than in shear.
                    let along_rel = (rel[0] * along[0] + rel[1] * along[1] + rel[2] * along[2])
                        * (inv_len * inv_len);
                    let k1 = push + along_rel * poly * damp;
                    let k2 = poly * visc;
                    for c in 0..3 {
                        acc[c] += along[c] * k1 + rel[c] * k2;
                    }
                }
                // The walls push (never pull: a wall that pulled is what made the source's
                // liquid stick to its boundaries): the pressure of the liquid beyond them, and
                // its near pressure.
                let inv = 1.0 / da[0].max(1e-12);
                for c in 0..3 {
                    for (gap, away) in [(pa[c], 1.0), (size[c] - pa[c], -1.0)] {
                        if let Some([_, _, g2, g3]) = kern.wall(gap) {
                            let push =
                                qa[0].max(0.0) * inv * g2 + k.near_stiffness * rho0 * inv * g3;
                            acc[c] += away * push;
                        }
                    }
                }
                // The floaters push too, and grip.
                let push = Push::new(da[0], qa[0], k.near_stiffness, k.viscosity, rho0);
                for f in ahead {
                    if let Some(a) = push.from(pa, va, f, &kern) {
                        acc = [acc[0] + a[0], acc[1] + a[1], acc[2] + a[2]];
                    }
                }
                *out = [0, 1, 2].map(|c| va[c] + acc[c] * dt);
            });
        // What the particles gave the floaters: each push and grip paid back, summed over
        // fixed chunks in order (the same on any number of threads).
        if !self.floaters.is_empty() {
            let chunks: Vec<[[f32; 3]; floaters::MAX_FLOATERS]> = (0..n)
                .collect::<Vec<usize>>()
                .par_chunks(PAIR_CHUNK)
                .map(|chunk| {
                    let mut sums = [[0.0f32; 3]; floaters::MAX_FLOATERS];
                    for &a in chunk {
                        let (pa, da, va) = (predicted[a], density[a], vel[a]);
                        let push =
                            Push::new(da[0], pressure(da)[0], k.near_stiffness, k.viscosity, rho0);
                        for (f, sum) in ahead.iter().zip(&mut sums) {
                            if let Some(g) = push.from(pa, va, f, &kern) {
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
                &mut self.floaters,
                &force,
                k.gravity,
                spacing(rho0),
                (dt, 1.0),
                size,
            );
        }
        std::mem::swap(&mut ps.vel, &mut ps.scratch.vel);

        // Move, and bounce off the tank's walls (and out of the floaters).
        let (bounce, slip) = (k.wall_bounce, k.wall_slip.ppowf(dt));
        let floaters = &self.floaters;
        ps.pos
            .par_iter_mut()
            .zip(ps.vel.par_iter_mut())
            .for_each(|(p, v)| {
                for c in 0..3 {
                    p[c] += v[c] * dt;
                }
                floaters::keep_out(p, v, floaters);
                let mut touched = false;
                for c in 0..3 {
                    if !p[c].is_finite() || !v[c].is_finite() {
                        *p = size.map(|s| 0.5 * s);
                        *v = [0.0; 3];
                        return;
                    }
                    if p[c] < 0.0 {
                        p[c] = 0.0;
                        v[c] = v[c].abs() * bounce;
                        touched = true;
                    } else if p[c] > size[c] {
                        p[c] = size[c];
                        v[c] = -v[c].abs() * bounce;
                        touched = true;
                    }
                }
                if touched {
                    // Friction along the walls it touches (the normal part was set above).
                    for c in 0..3 {
                        if p[c] > 0.0 && p[c] < size[c] {
                            v[c] *= slip;
                        }
                    }
                }
            });
    }
}

#[cfg(test)]
mod tests;
