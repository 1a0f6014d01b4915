//! The particles themselves, in two or three dimensions: positions, velocities, colours,
//! densities and serial numbers, with their bookkeeping (add, remove the oldest, clear, the
//! measures the benches and tests read) and the stages every step begins with (gravity, the
//! predicted positions, the sort by cell and the reorder by it).

use super::hash::{Grid, dist2, reorder};
use super::step::{Pack, Pairs};
use rayon::prelude::*;

/// The particles in a container of `size` (the 2D box, the 3D tank in its own frame), in
/// sorted order after each step (see [`super::hash`]).
#[derive(Clone, Debug)]
pub struct Particles<const D: usize> {
    /// The container's size along each axis.
    pub(in crate::sim) size: [f32; D],
    pub pos: Vec<[f32; D]>,
    pub vel: Vec<[f32; D]>,
    /// Per particle: its colour (dye, linear RGB).
    pub color: Vec<[f32; 3]>,
    /// Per particle: density and near density at its predicted position (last step).
    pub density: Vec<[f32; 2]>,
    /// Per particle: its serial number, counting every particle ever added (the oldest go
    /// first when a budget is full; an integer never stops counting, as an f32 clock would).
    pub birth: Vec<u64>,
    /// The serial number of the next particle added.
    pub births: u64,
    /// Per particle: where it will be, `look_ahead` seconds along its velocity (the last
    /// [`Particles::predict_and_sort`]).
    pub(in crate::sim) predicted: Vec<[f32; D]>,
    /// The neighbour grid of the last sort (kept while the radius stays).
    pub(in crate::sim) grid: Option<Grid<D>>,
    /// Buffers the sort reorders into (and the stages after it write into), kept between
    /// steps so that a warm step allocates nothing.
    pub(in crate::sim) scratch: Scratch<D>,
}

#[derive(Clone, Debug)]
pub(in crate::sim) struct Scratch<const D: usize> {
    pub pos: Vec<[f32; D]>,
    pub vel: Vec<[f32; D]>,
    pub color: Vec<[f32; 3]>,
    pub birth: Vec<u64>,
    /// The predicted positions by axis, for the neighbour scan.
    pub axes: [Vec<f32>; D],
    /// Each particle's neighbours in reach, by chunks of [`super::step::PAIR_CHUNK`].
    pub pairs: Vec<Pairs>,
    /// What a pair reads of each particle, packed.
    pub pack: Vec<Pack>,
}

impl<const D: usize> Default for Scratch<D> {
    fn default() -> Self {
        Self {
            pos: Vec::new(),
            vel: Vec::new(),
            color: Vec::new(),
            birth: Vec::new(),
            axes: std::array::from_fn(|_| Vec::new()),
            pairs: Vec::new(),
            pack: Vec::new(),
        }
    }
}

impl<const D: usize> Default for Particles<D> {
    /// No particles in a container of size 0 (each configuration makes its own).
    fn default() -> Self {
        Self {
            size: [0.0; D],
            pos: Vec::new(),
            vel: Vec::new(),
            color: Vec::new(),
            density: Vec::new(),
            birth: Vec::new(),
            births: 0,
            predicted: Vec::new(),
            grid: None,
            scratch: Scratch::default(),
        }
    }
}

impl<const D: usize> Particles<D> {
    /// Most particles: 2^20 in 2D, 2^21 in 3D.
    pub const MAX_PARTICLES: usize = if D == 2 { 1 << 20 } else { 1 << 21 };

    /// No particles in a container of `size` (sanitised by the caller: each configuration has
    /// its own bounds).
    pub fn empty(size: [f32; D]) -> Self {
        Self {
            size,
            ..Self::default()
        }
    }

    /// The container's size.
    pub fn size(&self) -> [f32; D] {
        self.size
    }

    pub fn len(&self) -> usize {
        self.pos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Add a particle at `p` with velocity `v` and colour `c` (inside the container;
    /// non-finite values become its centre and rest); whether it was added: past
    /// [`Particles::MAX_PARTICLES`] it is not (a budget that recycles the oldest belongs to
    /// whatever emits them).
    pub fn add(&mut self, p: [f32; D], v: [f32; D], c: [f32; 3]) -> bool {
        if self.pos.len() >= Self::MAX_PARTICLES {
            return false;
        }
        let finite = |a: &[f32]| a.iter().all(|x| x.is_finite());
        let p = if finite(&p) {
            std::array::from_fn(|a| p[a].clamp(0.0, self.size[a]))
        } else {
            self.size.map(|s| 0.5 * s)
        };
        self.pos.push(p);
        self.vel.push(if finite(&v) { v } else { [0.0; D] });
        self.color.push(c);
        self.density.push([0.0; 2]);
        self.birth.push(self.births);
        self.births += 1;
        true
    }

    /// Remove the `k` oldest particles (by [`Particles::birth`]; the rest keep their order).
    pub fn remove_oldest(&mut self, k: usize) {
        let n = self.pos.len();
        if k == 0 || n == 0 {
            return;
        }
        if k >= n {
            self.clear();
            return;
        }
        // Serial numbers are unique, but public fields can be set by hand: every particle gets
        // one, and of equal ones the first go.
        self.birth.resize(n, self.births);
        let mut births = self.birth.clone();
        let (_, cut, _) = births.select_nth_unstable(k - 1);
        let cut = *cut;
        let below = self.birth.iter().filter(|&&b| b < cut).count();
        let mut at_cut = k - below;
        let keep: Vec<bool> = self
            .birth
            .iter()
            .map(|&b| {
                if b < cut {
                    false
                } else if b == cut && at_cut > 0 {
                    at_cut -= 1;
                    false
                } else {
                    true
                }
            })
            .collect();
        retain_by(&mut self.pos, &keep);
        retain_by(&mut self.vel, &keep);
        retain_by(&mut self.color, &keep);
        retain_by(&mut self.density, &keep);
        retain_by(&mut self.birth, &keep);
    }

    /// Remove every particle (the container and the serial count stay).
    pub fn clear(&mut self) {
        self.pos.clear();
        self.vel.clear();
        self.color.clear();
        self.density.clear();
        self.birth.clear();
    }

    /// The same particles in a container of `size` (sanitised by the caller): positions and
    /// velocities scaled with the container's sides. Returns the scale along each axis.
    pub fn rescale(&mut self, size: [f32; D]) -> [f32; D] {
        let f = std::array::from_fn(|c| size[c] / self.size[c]);
        for (p, v) in self.pos.iter_mut().zip(&mut self.vel) {
            for c in 0..D {
                p[c] = (p[c] * f[c]).clamp(0.0, size[c]);
                v[c] *= f[c];
            }
        }
        self.size = size;
        self.grid = None;
        f
    }

    /// Total momentum (unit mass per particle).
    pub fn momentum(&self) -> [f64; D] {
        self.vel.iter().fold([0.0; D], |m, v| {
            std::array::from_fn(|c| m[c] + f64::from(v[c]))
        })
    }

    /// Total kinetic energy (unit mass per particle).
    pub fn kinetic_energy(&self) -> f64 {
        self.vel
            .iter()
            .map(|v| 0.5 * v.iter().map(|&x| f64::from(x * x)).sum::<f64>())
            .sum()
    }

    /// Total potential energy in `gravity` (zero at the container's origin; unit mass).
    pub fn potential_energy(&self, gravity: [f32; D]) -> f64 {
        self.pos
            .iter()
            .map(|p| -(0..D).map(|c| f64::from(p[c] * gravity[c])).sum::<f64>())
            .sum()
    }

    /// The median particle's density (at its predicted position, last step) against
    /// `target`: `(median - target) / target` (0 with no particles or no target).
    pub fn density_error(&self, target: f32) -> f64 {
        let mut d: Vec<f32> = self.density.iter().map(|d| d[0]).collect();
        if d.is_empty() || target <= 0.0 {
            return 0.0;
        }
        let mid = d.len() / 2;
        let (_, median, _) = d.select_nth_unstable_by(mid, f32::total_cmp);
        f64::from((*median - target) / target)
    }

    /// The mean number of other particles closer than `radius` to each particle.
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

    /// The stages every step begins with: `gravity` for `dt` seconds, each particle's
    /// predicted position `look_ahead` seconds along its velocity, the sort by the predicted
    /// positions' cells (`radius` wide), and every array reordered by it, so that the
    /// particles of a cell lie together. The grid is then `Particles::grid`.
    pub fn predict_and_sort(&mut self, gravity: [f32; D], look_ahead: f32, radius: f32, dt: f32) {
        self.vel.par_iter_mut().for_each(|v| {
            for c in 0..D {
                v[c] += gravity[c] * dt;
            }
        });
        self.predicted.clear();
        self.predicted.extend(
            self.pos
                .iter()
                .zip(&self.vel)
                .map(|(p, v)| std::array::from_fn(|c| p[c] + v[c] * look_ahead)),
        );
        let grid = match &mut self.grid {
            Some(g) if g.radius == radius => g,
            slot => slot.insert(Grid::new(self.size, radius)),
        };
        grid.sort(&self.predicted);
        let s = &mut self.scratch;
        reorder(&self.pos, &grid.order, &mut s.pos);
        reorder(&self.vel, &grid.order, &mut s.vel);
        reorder(&self.color, &grid.order, &mut s.color);
        self.birth.resize(self.pos.len(), self.births);
        reorder(&self.birth, &grid.order, &mut s.birth);
        std::mem::swap(&mut self.pos, &mut s.pos);
        std::mem::swap(&mut self.vel, &mut s.vel);
        std::mem::swap(&mut self.color, &mut s.color);
        std::mem::swap(&mut self.birth, &mut s.birth);
        reorder(&self.predicted, &grid.order, &mut s.pos);
        std::mem::swap(&mut self.predicted, &mut s.pos);
    }
}

/// A step's length clamped to `0..=1/30` s (NaN: 0).
pub fn clamp_dt(dt: f32) -> f32 {
    if dt.is_finite() {
        dt.clamp(0.0, 1.0 / 30.0)
    } else {
        0.0
    }
}

/// Keep the items of `v` whose flag in `keep` is set (items past its end stay).
fn retain_by<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut flags = keep.iter();
    v.retain(|_| *flags.next().unwrap_or(&true));
}
