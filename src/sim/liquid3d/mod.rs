//! The 3D liquid: Sebastian Lague's particle fluid taken to 3D, as his video ends it, in a
//! tank. Particles carry mass 1; density and near density come from the 3D spiky kernels over
//! the neighbours at predicted positions; pressure and near pressure push pairs apart,
//! viscosity pulls their velocities together; gravity pulls; the tank's walls bounce with
//! damping. This module is the CPU reference (rayon, parallel over particles); [`hash`] finds
//! the neighbours.
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
//! With `r < h` and `v = h - r`: density `15 / (2 pi h^5) v^2`, near density
//! `15 / (pi h^6) v^3`, each integrating to 1 over the ball of radius `h` (a test checks it);
//! their slopes `-15 / (pi h^5) v` and `-45 / (pi h^6) v^2`; viscosity's weight
//! `315 / (64 pi h^9) (h^2 - r^2)^3`. A particle's density is then about the number of
//! particles per cubic metre around it.
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
pub mod hash;
pub mod model;
mod scan;
pub mod sources;
pub mod splat;

use floaters::{Floater, Push};
use hash::{Grid, reorder};
use rayon::prelude::*;
use scan::{Hits, LANES, scan};

/// How far ahead the density looks: positions are predicted `LOOK_AHEAD_S` seconds along the
/// velocity, as in the source.
pub const LOOK_AHEAD_S: f32 = 1.0 / 120.0;
/// A step's length: 60 frames a second, three sub-steps a frame, as in the source.
pub const SUBSTEP_S: f32 = 1.0 / 180.0;
/// Most particles.
pub const MAX_PARTICLES: usize = 1 << 21;
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

/// The 3D kernels for radius `h` (see the module's header).
#[derive(Clone, Copy, Debug)]
pub struct Kernels {
    h: f32,
    spiky2: f32,
    spiky3: f32,
    spiky2_slope: f32,
    spiky3_slope: f32,
    poly6: f32,
}

impl Kernels {
    pub fn new(h: f32) -> Self {
        let pi = std::f32::consts::PI;
        Self {
            h,
            spiky2: 15.0 / (2.0 * pi * h.powi(5)),
            spiky3: 15.0 / (pi * h.powi(6)),
            spiky2_slope: 15.0 / (pi * h.powi(5)),
            spiky3_slope: 45.0 / (pi * h.powi(6)),
            poly6: 315.0 / (64.0 * pi * h.powi(9)),
        }
    }

    /// Density and near density weights at squared distance `r2` (zero beyond `h`).
    #[inline]
    pub fn densities(&self, r2: f32) -> [f32; 2] {
        self.densities_at(r2.sqrt())
    }

    /// Density and near density weights at distance `r` (zero beyond `h`).
    #[inline]
    pub fn densities_at(&self, r: f32) -> [f32; 2] {
        let v = (self.h - r).max(0.0);
        let v2 = v * v;
        [v2 * self.spiky2, v2 * v * self.spiky3]
    }

    /// The slopes of the two density kernels at distance `r < h` (negative: they fall).
    #[inline]
    pub fn slopes(&self, r: f32) -> [f32; 2] {
        let v = self.h - r;
        [-v * self.spiky2_slope, -v * v * self.spiky3_slope]
    }

    /// A wall at distance `d < h`: the shares of the density and near density kernels that
    /// lie beyond it, and how fast each grows as the particle nears it (their slopes against
    /// `-d`); `None` beyond reach. Closed forms of the kernels' integrals over the half-space
    /// (with `x = h - d`): `x^4 (3d + 2h) / 4h^5` and `x^5 (2d + h) / 2h^6`, both 1/2 at the
    /// wall; slopes `5 x^3 (3d + h) / 4h^5` and `3 x^4 (4d + h) / 2h^6`.
    #[inline]
    pub fn wall(&self, d: f32) -> Option<[f32; 4]> {
        let h = self.h;
        // NaN is not within reach either.
        if d.is_nan() || d >= h {
            return None;
        }
        let d = d.max(0.0);
        let x = h - d;
        let (x2, h5) = (x * x, self.h5());
        Some([
            x2 * x2 * (3.0 * d + 2.0 * h) / (4.0 * h5),
            x2 * x2 * x * (2.0 * d + h) / (2.0 * h5 * h),
            5.0 * x2 * x * (3.0 * d + h) / (4.0 * h5),
            3.0 * x2 * x2 * (4.0 * d + h) / (2.0 * h5 * h),
        ])
    }

    #[inline]
    fn h5(&self) -> f32 {
        let h2 = self.h * self.h;
        h2 * h2 * self.h
    }

    /// Viscosity's weight at squared distance `r2 < h²`.
    #[inline]
    pub fn poly6(&self, r2: f32) -> f32 {
        let v = self.h * self.h - r2;
        v * v * v * self.poly6
    }
}

/// The liquid's particles, in the tank's frame, and the step's working memory.
#[derive(Clone, Debug, Default)]
pub struct Liquid {
    size: [f32; 3],
    /// Positions, m.
    pub pos: Vec<[f32; 3]>,
    /// Velocities, m/s.
    pub vel: Vec<[f32; 3]>,
    /// Each particle's dye (linear RGB).
    pub color: Vec<[f32; 3]>,
    /// Density and near density at the last step's predicted positions.
    pub density: Vec<[f32; 2]>,
    /// Each particle's serial number, in the order they came (the oldest go first when the
    /// tank is full).
    pub birth: Vec<u64>,
    /// The next particle's serial number.
    next_birth: u64,
    /// Balls floating in the liquid ([`floaters`]), at most [`floaters::MAX_FLOATERS`].
    pub floaters: Vec<Floater>,
    predicted: Vec<[f32; 3]>,
    grid: Option<Grid>,
    /// Each particle's neighbours in reach, by chunks of [`PAIR_CHUNK`] particles.
    pairs: Vec<Pairs>,
    /// The predicted positions by axis (x, y, z), for the neighbour scan.
    axes: [Vec<f32>; 3],
    scratch: Scratch,
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

/// Buffers the step reorders into, kept between steps.
#[derive(Clone, Debug, Default)]
struct Scratch {
    floaters: Vec<Floater>,
    pack: Vec<[f32; PACK]>,
    pos: Vec<[f32; 3]>,
    vel: Vec<[f32; 3]>,
    color: Vec<[f32; 3]>,
    birth: Vec<u64>,
}

impl Liquid {
    /// An empty tank of `size` (m; each side sanitised to 0.05..1000, NaN to 1).
    pub fn new(size: [f32; 3]) -> Self {
        let side = |x: f32| if x.is_nan() { 1.0 } else { x.clamp(0.05, 1e3) };
        Self {
            size: size.map(side),
            ..Self::default()
        }
    }

    /// The tank's size, m.
    pub fn size(&self) -> [f32; 3] {
        self.size
    }

    pub fn len(&self) -> usize {
        self.pos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Add a particle at `p` with velocity `v` (non-finite values are replaced: the tank's
    /// centre, at rest), inside the tank; `false` when the tank is full.
    pub fn add(&mut self, p: [f32; 3], v: [f32; 3], color: [f32; 3]) -> bool {
        if self.pos.len() >= MAX_PARTICLES {
            return false;
        }
        let finite = |a: &[f32; 3]| a.iter().all(|x| x.is_finite());
        let p = if finite(&p) {
            [0, 1, 2].map(|c| p[c].clamp(0.0, self.size[c]))
        } else {
            self.size.map(|s| 0.5 * s)
        };
        self.pos.push(p);
        self.vel.push(if finite(&v) { v } else { [0.0; 3] });
        self.color.push(color);
        self.density.push([0.0; 2]);
        self.birth.push(self.next_birth);
        self.next_birth += 1;
        true
    }

    /// Remove the `count` oldest particles.
    pub fn remove_oldest(&mut self, count: usize) {
        if count == 0 {
            return;
        }
        if count >= self.len() {
            self.clear();
            return;
        }
        let mut births = self.birth.clone();
        let (_, &mut cut, _) = births.select_nth_unstable(count - 1);
        let keep: Vec<bool> = self.birth.iter().map(|&b| b > cut).collect();
        let mut k = keep.iter();
        self.pos.retain(|_| *k.next().unwrap_or(&false));
        let mut k = keep.iter();
        self.vel.retain(|_| *k.next().unwrap_or(&false));
        let mut k = keep.iter();
        self.color.retain(|_| *k.next().unwrap_or(&false));
        let mut k = keep.iter();
        self.density.retain(|_| *k.next().unwrap_or(&false));
        self.birth.retain(|&b| b > cut);
    }

    /// Remove every particle.
    pub fn clear(&mut self) {
        self.pos.clear();
        self.vel.clear();
        self.color.clear();
        self.density.clear();
        self.birth.clear();
    }

    /// The same liquid in a tank of `size`: positions and velocities scaled with the tank's
    /// sides (each sanitised as in [`Liquid::new`]).
    pub fn resize_tank(&mut self, size: [f32; 3]) {
        let size = Self::new(size).size;
        let f = [0, 1, 2].map(|c| size[c] / self.size[c]);
        for (p, v) in self
            .pos
            .iter_mut()
            .zip(&mut self.vel)
            .chain(self.floaters.iter_mut().map(|f| (&mut f.pos, &mut f.vel)))
        {
            for c in 0..3 {
                p[c] = (p[c] * f[c]).clamp(0.0, size[c]);
                v[c] *= f[c];
            }
        }
        self.size = size;
        self.grid = None;
    }

    /// Total momentum (mass 1 each).
    pub fn momentum(&self) -> [f64; 3] {
        self.vel
            .iter()
            .fold([0.0; 3], |m, v| [0, 1, 2].map(|c| m[c] + f64::from(v[c])))
    }

    /// Total kinetic energy, J (mass 1 each).
    pub fn kinetic_energy(&self) -> f64 {
        self.vel
            .iter()
            .map(|v| 0.5 * v.iter().map(|&x| f64::from(x * x)).sum::<f64>())
            .sum()
    }

    /// Total potential energy in `gravity` (zero at the tank's origin), J.
    pub fn potential_energy(&self, gravity: [f32; 3]) -> f64 {
        self.pos
            .iter()
            .map(|p| -(0..3).map(|c| f64::from(p[c] * gravity[c])).sum::<f64>())
            .sum()
    }

    /// The median particle's density against `target`, as a fraction (0.02: 2 % denser).
    pub fn density_error(&self, target: f32) -> f64 {
        let mut d: Vec<f32> = self.density.iter().map(|d| d[0]).collect();
        if d.is_empty() || target <= 0.0 {
            return 0.0;
        }
        let mid = d.len() / 2;
        let (_, median, _) = d.select_nth_unstable_by(mid, f32::total_cmp);
        f64::from((*median - target) / target)
    }

    /// The mean number of neighbours in reach (the last step's neighbour search).
    pub fn neighbours_mean(&self, radius: f32) -> f64 {
        if self.pos.is_empty() {
            return 0.0;
        }
        let mut grid = Grid::new(self.size, radius);
        grid.sort(&self.pos);
        let mut sorted = Vec::new();
        reorder(&self.pos, &grid.order, &mut sorted);
        let r2 = radius * radius;
        let total: usize = (0..sorted.len())
            .into_par_iter()
            .map(|a| {
                let p = sorted[a];
                let (rows, count) = grid.rows_around(p);
                rows[..count]
                    .iter()
                    .flat_map(|&(lo, hi)| lo as usize..hi as usize)
                    .filter(|&b| b != a && dist2(sorted[b], p) < r2)
                    .count()
            })
            .sum();
        total as f64 / self.pos.len() as f64
    }

    /// Advance by `dt` seconds (clamped to 0..1/30 s; use [`SUBSTEP_S`]).
    pub fn step(&mut self, knobs: &Knobs, dt: f32) {
        let k = knobs.sanitized();
        let dt = if dt.is_finite() {
            dt.clamp(0.0, 1.0 / 30.0)
        } else {
            0.0
        };
        if self.pos.is_empty() || dt == 0.0 {
            return;
        }
        self.floaters.truncate(floaters::MAX_FLOATERS);
        // Gravity, then where each particle is about to be.
        let g = k.gravity;
        self.vel.par_iter_mut().for_each(|v| {
            for c in 0..3 {
                v[c] += g[c] * dt;
            }
        });
        self.predicted.clear();
        self.predicted.extend(
            self.pos
                .iter()
                .zip(&self.vel)
                .map(|(p, v)| [0, 1, 2].map(|c| p[c] + v[c] * LOOK_AHEAD_S)),
        );
        // Sort everything by cell of the predicted positions.
        let grid = match &mut self.grid {
            Some(grid) if grid.radius == k.radius => grid,
            slot => slot.insert(Grid::new(self.size, k.radius)),
        };
        grid.sort(&self.predicted);
        let s = &mut self.scratch;
        reorder(&self.pos, &grid.order, &mut s.pos);
        reorder(&self.vel, &grid.order, &mut s.vel);
        reorder(&self.color, &grid.order, &mut s.color);
        reorder(&self.birth, &grid.order, &mut s.birth);
        std::mem::swap(&mut self.birth, &mut s.birth);
        std::mem::swap(&mut self.pos, &mut s.pos);
        std::mem::swap(&mut self.vel, &mut s.vel);
        std::mem::swap(&mut self.color, &mut s.color);
        reorder(&self.predicted, &grid.order, &mut s.pos);
        std::mem::swap(&mut self.predicted, &mut s.pos);
        let grid = &*grid;
        let kern = Kernels::new(grid.reach);
        let predicted = &self.predicted;
        let (size, rho0) = (self.size, k.target_density);

        self.scratch.floaters.clear();
        self.scratch
            .floaters
            .extend(self.floaters.iter().map(|f| Floater {
                pos: [0, 1, 2].map(|c| f.pos[c] + f.vel[c] * LOOK_AHEAD_S),
                ..*f
            }));

        // Densities, and each particle's neighbours in reach (the force pass reads them
        // instead of the 27 cells again: about 37 pairs instead of about 220 candidates).
        let n = self.pos.len();
        self.density.resize(n, [0.0; 2]);
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
        let density = &self.density;
        let vel = &self.vel;
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
        self.scratch.vel.clear();
        self.scratch.vel.resize(self.pos.len(), [0.0; 3]);
        let pairs = &self.pairs;
        self.scratch
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
                g,
                spacing(rho0),
                (dt, 1.0),
                size,
            );
        }
        std::mem::swap(&mut self.vel, &mut self.scratch.vel);

        // Move, and bounce off the tank's walls (and out of the floaters).
        let (bounce, slip) = (k.wall_bounce, k.wall_slip.ppowf(dt));
        let floaters = &self.floaters;
        self.pos
            .par_iter_mut()
            .zip(self.vel.par_iter_mut())
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

#[inline]
fn dist2(a: [f32; 3], b: [f32; 3]) -> f32 {
    let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
}

#[cfg(test)]
mod tests;
