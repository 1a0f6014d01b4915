//! The particle step, once for both dimensions, one function per stage, run in this order by
//! [`Particles::step_in`] alone (the force stage reads the lists the density stage wrote):
//!
//! 1. [`Particles::predict_and_sort`]: gravity, the predicted positions, the sort by cell;
//! 2. `densities`: density and near density at the predicted positions, and each particle's
//!    neighbours in reach;
//! 3. `forces`: pressure, near pressure and viscosity between those neighbours;
//! 4. the container's reaction (what the particles gave its bodies: the 3D tank's floaters);
//! 5. `integrate`: the move, the container's bodies and walls, the drag.
//!
//! A configuration (the 2D box, the 3D tank) is its [`Physics`] and its [`Container`]: what
//! the container adds to the densities and forces (walls that act as liquid beyond them,
//! floating balls), what its bodies feel back, and where they push particles out.
//!
//! # Equal and opposite
//! Each pair's terms are built from quantities symmetric in the pair: the pressure term
//! `(P_a + P_b) / 2 / (rho_a rho_b)`, the near term `(N_a + N_b) / 2` over the pair's mean
//! densities (Lague's source divides by the neighbour's near density and the particle's own
//! density, so its momentum drifts). The direction flips exactly from one particle to the
//! other, so each pair adds the same push to both, in opposite directions, to the last bit;
//! the total momentum moves only by the rounding of the sums. Viscosity is antisymmetric the
//! same way. Two particles at the same point have no direction between them: the one with the
//! lower index is pushed down and the other up (an exact pair again).

use super::Particles;
use super::kernels::Kernels;
use super::scan::{Hits, LANES, scan};
use super::state::clamp_dt;
use crate::kernels::portable::Portable;
use rayon::prelude::*;

/// How far ahead the density looks: positions are predicted `LOOK_AHEAD_S` seconds along the
/// velocity, as in Lague's source.
pub const LOOK_AHEAD_S: f32 = 1.0 / 120.0;

/// A step's length: 60 frames a second, three sub-steps a frame, as in Lague's source.
pub const SUBSTEP_S: f32 = 1.0 / 180.0;

/// The sub-steps of an advance by `dt` seconds (clamped to 0..0.25; not a number: 0): how
/// many, at most `most`, and how long each, at most [`SUBSTEP_S`] (longer frames are slowed
/// down rather than exploded); `None` when no time passes.
pub fn substeps(dt: f32, most: usize) -> Option<(usize, f32)> {
    let dt = if dt.is_finite() {
        dt.clamp(0.0, 0.25)
    } else {
        0.0
    };
    if dt == 0.0 {
        return None;
    }
    let steps = ((dt / SUBSTEP_S).ceil() as usize).clamp(1, most.max(1));
    Some((steps, (dt / steps as f32).min(SUBSTEP_S)))
}

/// Most neighbours a particle keeps (about 21 in the 2D fluid and 37 in the 3D liquid at
/// rest). Particles piled into one place (a broken input reset to the centre, a splash into a
/// corner) would otherwise make every pair a neighbour: memory and time growing with the
/// square of their number. Past it, a particle's scan stops: its density is then an
/// underestimate of a very dense place, still pushing hard, and its pairs are no longer all
/// mutual (momentum is kept only where the cap is not reached).
pub const MAX_NEIGHBOURS: usize = 128;

/// Particles per chunk of neighbour lists (one list per rayon task, kept between steps so the
/// step allocates nothing once warm).
pub const PAIR_CHUNK: usize = 256;

/// The physics of a step, in the configuration's units (sanitised by it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Physics<const D: usize> {
    /// Acceleration, units per s².
    pub gravity: [f32; D],
    /// Smoothing radius.
    pub radius: f32,
    /// The density the pressure keeps.
    pub target_density: f32,
    /// Pressure per unit of density above the target.
    pub pressure: f32,
    /// Near pressure per unit of near density.
    pub near_pressure: f32,
    /// Viscosity per unit of the pair's kernel weight, per second.
    pub viscosity: f32,
    /// Bulk viscosity, the same along the pair's line only (0: none).
    pub bulk_viscosity: f32,
    /// The share of its speed into a wall a particle keeps, bounced back (0..1).
    pub bounce: f32,
    /// The share of its speed along a wall a particle keeps per second in contact (0..1; 1:
    /// none lost).
    pub slip: f32,
    /// The share of its velocity a particle keeps through the step (the drag; 1: none).
    pub keep: f32,
}

impl<const D: usize> Physics<D> {
    /// Pressure and near pressure at densities `d`.
    #[inline]
    pub fn pressures(&self, d: [f32; 2]) -> [f32; 2] {
        [
            self.pressure * (d[0] - self.target_density),
            self.near_pressure * d[1],
        ]
    }
}

/// What a container adds to the step besides its walls (which the integrate stage
/// bounces with [`Physics::bounce`] and [`Physics::slip`]). Every hook does nothing unless a
/// container says otherwise; each adds to what the stage has summed so far, after it.
pub trait Container<const D: usize>: Sync {
    /// Before the densities: where the container's moving bodies will be, `LOOK_AHEAD_S` on.
    fn predict(&mut self) {}

    /// The density and near density at `p`, `acc` summed from the neighbours so far.
    #[inline]
    fn density(&self, p: [f32; D], acc: [f32; 2], kern: &Kernels<D>, k: &Physics<D>) -> [f32; 2] {
        let _ = (p, kern, k);
        acc
    }

    /// The acceleration of a particle at `p` moving at `v` of densities `d`, `acc` summed from
    /// its neighbours so far.
    #[inline]
    fn force(&self, at: Particle<D>, acc: [f32; D], kern: &Kernels<D>, k: &Physics<D>) -> [f32; D] {
        let _ = (at, kern, k);
        acc
    }

    /// After the forces, before the move: what the particles (`predicted`, `density`, `vel`
    /// before the forces) gave the container's bodies, and their move.
    fn react(&mut self, particles: &Particles<D>, kern: &Kernels<D>, k: &Physics<D>, dt: f32) {
        let _ = (particles, kern, k, dt);
    }

    /// After the move: a particle at `p` moving at `v` put out of the container's bodies.
    #[inline]
    fn keep_out(&self, p: &mut [f32; D], v: &mut [f32; D]) {
        let _ = (p, v);
    }
}

/// One particle as the force stage sees it: predicted place, velocity, densities.
#[derive(Clone, Copy, Debug)]
pub struct Particle<const D: usize> {
    pub p: [f32; D],
    pub v: [f32; D],
    pub d: [f32; 2],
}

/// A container with nothing in it but its walls.
#[derive(Clone, Copy, Debug, Default)]
pub struct Walls;

impl<const D: usize> Container<D> for Walls {}

/// The neighbours in reach of a chunk's particles: particle `i` of the chunk has
/// `list[start[i]..start[i + 1]]`, each (sorted index, distance).
#[derive(Clone, Debug, Default)]
pub(in crate::sim) struct Pairs {
    start: Vec<u32>,
    list: Vec<(u32, f32)>,
}

/// What a pair reads of each particle, together (one cache line per neighbour): its predicted
/// place (from 0) and velocity (from 3), pressure over density, inverse density, near
/// pressure, density and near density.
pub(in crate::sim) type Pack = [f32; 12];
const V: usize = 3;
const Q_OVER_D: usize = 6;
const INV_D: usize = 7;
const NEAR_Q: usize = 8;
const DENSITY: usize = 9;
const NEAR_D: usize = 10;

/// `a · b`, folded from the first term (`a0 b0 + a1 b1 (+ a2 b2)`, the bits either dimension
/// computed before it was generic).
#[inline]
fn dot<const D: usize>(a: [f32; D], b: [f32; D]) -> f32 {
    let mut s = a[0] * b[0];
    for c in 1..D {
        s += a[c] * b[c];
    }
    s
}

impl<const D: usize> Particles<D> {
    /// One step of `dt` seconds (clamped to 0..1/30) in `container` with physics `k`: the
    /// algorithm, one line per stage.
    pub fn step_in<C: Container<D>>(&mut self, container: &mut C, k: &Physics<D>, dt: f32) {
        let dt = clamp_dt(dt);
        if self.pos.is_empty() || dt == 0.0 {
            return;
        }
        self.predict_and_sort(k.gravity, LOOK_AHEAD_S, k.radius, dt);
        let Some(grid) = &self.grid else {
            return;
        };
        // The kernels use the radius the neighbour search filters at: the grid's reach, the
        // radius itself unless the container is so large that the cells had to widen.
        let kern = Kernels::<D>::new(grid.reach);
        container.predict();
        self.densities(container, &kern, k);
        self.forces(container, &kern, k, dt);
        container.react(self, &kern, k, dt);
        std::mem::swap(&mut self.vel, &mut self.scratch.vel);
        self.integrate(container, k, dt);
    }

    /// Densities at the predicted positions (each particle counts itself, at distance 0), and
    /// each particle's neighbours in reach (the force stage reads them instead of the cells
    /// again: about 37 pairs instead of about 220 candidates in 3D).
    fn densities<C: Container<D>>(&mut self, container: &C, kern: &Kernels<D>, k: &Physics<D>) {
        let Some(grid) = &self.grid else {
            return;
        };
        let n = self.pos.len();
        let predicted = &self.predicted;
        let s = &mut self.scratch;
        for (c, axis) in s.axes.iter_mut().enumerate() {
            axis.clear();
            axis.extend(predicted.iter().map(|p| p[c]));
            // Padding for the scan's last group (never in reach: masked off by its run).
            axis.extend([f32::INFINITY; LANES]);
        }
        let axes = &s.axes;
        self.density.resize(n, [0.0; 2]);
        s.pairs.resize_with(n.div_ceil(PAIR_CHUNK), Pairs::default);
        s.pairs
            .par_iter_mut()
            .zip(self.density.par_chunks_mut(PAIR_CHUNK))
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
                    let acc = scan(
                        p,
                        a,
                        &rows[..count],
                        axes,
                        kern,
                        &mut pairs.list,
                        &mut stage,
                    );
                    *d = container.density(p, acc, kern, k);
                }
                pairs.start.push(pairs.list.len() as u32);
            });
    }

    /// Pressure, near pressure and viscosity between the neighbours the densities found, from
    /// the velocities after gravity, each pair's terms symmetric in the pair (see the module's
    /// docs), and the container's pushes: the new velocities, into the scratch's (the caller
    /// swaps them in).
    fn forces<C: Container<D>>(
        &mut self,
        container: &C,
        kern: &Kernels<D>,
        k: &Physics<D>,
        dt: f32,
    ) {
        let n = self.pos.len();
        let (predicted, density, vel) = (&self.predicted, &self.density, &self.vel);
        let s = &mut self.scratch;
        s.pack.clear();
        s.pack.resize(n, [0.0; 12]);
        s.pack.par_iter_mut().enumerate().for_each(|(a, out)| {
            let (p, v, d) = (predicted[a], vel[a], density[a]);
            let q = k.pressures(d);
            let inv = 1.0 / d[0].max(1e-6);
            out[..D].copy_from_slice(&p);
            out[V..V + D].copy_from_slice(&v);
            out[Q_OVER_D] = q[0] * inv;
            out[INV_D] = inv;
            out[NEAR_Q] = q[1];
            out[DENSITY] = d[0];
            out[NEAR_D] = d[1];
        });
        let (pack, pairs) = (&s.pack, &s.pairs);
        let (visc, damp) = (k.viscosity, k.bulk_viscosity);
        let up: [f32; D] = std::array::from_fn(|c| if c == 1 { 1.0 } else { 0.0 });
        let down = up.map(|x| -x);
        s.vel.clear();
        s.vel.resize(n, [0.0; D]);
        s.vel.par_iter_mut().enumerate().for_each(|(a, out)| {
            let me = &pack[a];
            let mut acc = [0.0f32; D];
            let chunk = &pairs[a / PAIR_CHUNK];
            let i = a % PAIR_CHUNK;
            let near = &chunk.list[chunk.start[i] as usize..chunk.start[i + 1] as usize];
            for &(b, r) in near {
                let pb = &pack[b as usize];
                let d: [f32; D] = std::array::from_fn(|c| pb[c] - me[c]);
                let rel: [f32; D] = std::array::from_fn(|c| pb[V + c] - me[V + c]);
                let (along, inv_len) = if r > 0.0 {
                    (d, 1.0 / r)
                } else if a < b as usize {
                    (up, 1.0)
                } else {
                    (down, 1.0)
                };
                let [s2, s3] = kern.slopes(r);
                // (Pa + Pb) / (2 da db) = (Pa/da / db + Pb/db / da) / 2; the mean near pressure
                // over the mean near density times the mean density. The same for a and b.
                let t0 = 0.5 * (me[Q_OVER_D] * pb[INV_D] + pb[Q_OVER_D] * me[INV_D]);
                let t1 = 0.5 * (me[NEAR_Q] + pb[NEAR_Q])
                    / (0.25 * (me[NEAR_D] + pb[NEAR_D]) * (me[DENSITY] + pb[DENSITY])).max(1e-12);
                let push = (s2 * t0 + s3 * t1) * inv_len;
                let poly = kern.poly6(r * r);
                // Pairs closing in or drawing apart are damped harder along their line than
                // in shear (the bulk viscosity).
                let k1 = if damp != 0.0 {
                    push + dot(rel, along) * (inv_len * inv_len) * poly * damp
                } else {
                    push
                };
                let k2 = poly * visc;
                for c in 0..D {
                    acc[c] += along[c] * k1 + rel[c] * k2;
                }
            }
            let at = Particle {
                p: predicted[a],
                v: vel[a],
                d: density[a],
            };
            let acc = container.force(at, acc, kern, k);
            *out = std::array::from_fn(|c| at.v[c] + acc[c] * dt);
        });
    }

    /// The move: each particle along its velocity for `dt`, out of the container's bodies,
    /// bounced off its walls (with friction along the walls it touches), then the drag. A
    /// particle with a non-finite place or velocity goes to the container's centre, at rest.
    fn integrate<C: Container<D>>(&mut self, container: &C, k: &Physics<D>, dt: f32) {
        let size = self.size;
        let (bounce, slip, keep) = (k.bounce, k.slip.ppowf(dt), k.keep);
        self.pos
            .par_iter_mut()
            .zip(self.vel.par_iter_mut())
            .for_each(|(p, v)| {
                for c in 0..D {
                    p[c] += v[c] * dt;
                }
                container.keep_out(p, v);
                let mut touched = false;
                for c in 0..D {
                    if !p[c].is_finite() || !v[c].is_finite() {
                        *p = size.map(|s| 0.5 * s);
                        *v = [0.0; D];
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
                if touched && slip != 1.0 {
                    // Friction along the walls it touches (the normal part was set above).
                    for c in 0..D {
                        if p[c] > 0.0 && p[c] < size[c] {
                            v[c] *= slip;
                        }
                    }
                }
                if keep != 1.0 {
                    for x in v.iter_mut() {
                        *x *= keep;
                    }
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block of `n` particles a side, `spacing` apart from `corner`, jittered a little (a
    /// seeded generator), with random velocities up to `speed / 2` along each axis.
    fn block<const D: usize>(
        ps: &mut Particles<D>,
        corner: [f32; D],
        n: usize,
        spacing: f32,
        speed: f32,
    ) {
        let mut seed = 12_345u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        for index in 0..n.pow(D as u32) {
            let mut rest = index;
            let p = std::array::from_fn(|c| {
                let i = rest % n;
                rest /= n;
                corner[c] + (i as f32 + 0.5 + 0.2 * next()) * spacing
            });
            let v = std::array::from_fn(|_| speed * next());
            assert!(ps.add(p, v, [1.0; 3]));
        }
    }

    /// Without gravity and far from the walls, every pair's push is equal and opposite, so the
    /// total momentum only moves by rounding: over `steps` steps it stays within `share` of the
    /// sum of the particles' speeds (the scale a one-sided force would move it on), while the
    /// particles do move. Measured 2026-11-26 in 2D: 4.5e-6 against 60 (1e-7); with the
    /// source's near-pressure term (divided by the neighbour's near density and the particle's
    /// own density) it drifted by 12.9.
    fn momentum_is_kept<const D: usize>(
        k: Physics<D>,
        n: usize,
        spacing: f32,
        steps: usize,
        share: f64,
    ) {
        let side = 5.0 * n as f32 * spacing;
        let mut ps = Particles::<D>::empty([side; D]);
        block(&mut ps, [2.0 * n as f32 * spacing; D], n, spacing, 0.4);
        let before = ps.momentum();
        let speed = |v: &[f32; D]| f64::from(dot(*v, *v).sqrt());
        let speeds: f64 = ps.vel.iter().map(speed).sum();
        let mut drift = 0.0f64;
        for _ in 0..steps {
            ps.step_in(&mut Walls, &k, 1.0 / 180.0);
            let m = ps.momentum();
            drift = drift.max(
                (0..D)
                    .map(|c| (m[c] - before[c]).powi(2))
                    .sum::<f64>()
                    .sqrt(),
            );
            let reach = k.radius;
            assert!(
                ps.pos
                    .iter()
                    .flatten()
                    .all(|&x| x > reach && x < side - reach),
                "{D}D: a particle came within reach of a wall"
            );
        }
        eprintln!("{D}D: momentum drift {drift:e} against speeds {speeds:e}");
        assert!(
            drift < share * speeds,
            "{D}D: drift {drift} against {speeds}"
        );
        assert!(ps.kinetic_energy() > 0.0, "{D}D: the block froze");
    }

    #[test]
    fn momentum_is_conserved_without_gravity_and_walls() {
        // Lague's 2D defaults (the box's), and the 3D tank's (bulk viscosity on).
        let two = Physics {
            gravity: [0.0; 2],
            radius: 0.35,
            target_density: 55.0,
            pressure: 500.0,
            near_pressure: 18.0,
            viscosity: 0.06,
            bulk_viscosity: 0.0,
            bounce: 0.95,
            slip: 1.0,
            keep: 1.0,
        };
        momentum_is_kept(two, 20, 1.0 / 55f32.sqrt(), 1000, 1e-6);
        let three = Physics {
            gravity: [0.0; 3],
            radius: 0.12,
            target_density: 5082.0,
            pressure: 75.0,
            near_pressure: 6.0,
            viscosity: 8.0 / 5082.0,
            bulk_viscosity: 30.0 / 5082.0,
            bounce: 0.3,
            slip: 0.5,
            keep: 1.0,
        };
        momentum_is_kept(three, 10, 0.06, 300, 1e-5);
    }
}
