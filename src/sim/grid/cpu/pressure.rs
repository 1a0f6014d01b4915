//! Pressure Poisson solve: Jacobi, red-black SOR, or multigrid V-cycles.
//!
//! Equation (per cell c, over the neighbours n that are inside the grid; walls are Neumann):
//! `sum_n (q_n - q_c) = D_c`, i.e. `A q = b` with `A q = n_c q_c - sum_n q_n` and `b = -D`,
//! where `D` is the flux divergence and `q` the scaled pressure (see `sim` module docs). `A` is
//! symmetric positive semi-definite; constants are its null space, so `b` is made mean-free.
//!
//! Storage: the checkerboard as two half-width planes (red: `(i + j)` even, black: odd), row
//! `j` of a plane holding the cells `i = s + 2k` with `s = (j + colour) % 2` at index
//! `j * hw + k`, `hw = ceil(w / 2)`; so cell `(i, j)` is at `i / 2` in its plane. A red update
//! reads only black cells, contiguous in memory: 2.1x faster than the natural layout at 512²
//! (PERF-NOTES, 2026-11).
//!
//! Multigrid: every level covers the same canvas with `ceil(n / 2)` cells per axis, so on
//! grids whose sizes are not powers of two the coarse cells are slightly wider or taller than
//! twice the fine ones (67 cells -> 34 cells of 1.97 fine cells). Each level uses the matching
//! anisotropic 5-point operator (`cx = hy / hx`, `cy = hx / hy`, scaled by cell area), an
//! area-weighted restriction and bilinear prolongation between the actual cell centres. With
//! naive cell-pairing instead, odd sizes converged at only 0.57 per V-cycle (measured on
//! 67x45); with consistent geometry every size converges like a power of two (~0.07).

mod faces;
mod multigrid;
mod nodes;

pub use faces::{Faces, Regions, SplitFaces};
pub use multigrid::{CoarseLevels, Multigrid};

use crate::kernels::band::{self, MIN_TASK_CELLS, Shared, min_rows};
use crate::sim::grid::AlignedVec;
use crate::sim::multigrid::*;
use faces::{MaskedUpdate, relax_row_faces, residual_row_faces};
use multigrid::residual_row;
use rayon::prelude::*;

/// A cell-centred field in checkerboard layout.
#[derive(Clone, Debug)]
pub struct Split {
    /// Width in cells.
    pub w: usize,
    /// Height in cells.
    pub h: usize,
    /// Plane row length, `ceil(w / 2)`.
    pub hw: usize,
    /// `[red, black]` planes, `h * hw` each.
    pub planes: [AlignedVec; 2],
}

impl Split {
    /// A zero field of `w x h` cells.
    pub fn zeros(w: usize, h: usize) -> Self {
        let hw = w.div_ceil(2);
        Self {
            w,
            h,
            hw,
            planes: [AlignedVec::zeros(h * hw), AlignedVec::zeros(h * hw)],
        }
    }

    /// Colour and plane index of cell `(i, j)`.
    #[inline(always)]
    pub fn index(&self, i: usize, j: usize) -> (usize, usize) {
        ((i + j) & 1, j * self.hw + i / 2)
    }

    /// Value at cell `(i, j)`.
    #[inline(always)]
    pub fn get(&self, i: usize, j: usize) -> f32 {
        let (c, k) = self.index(i, j);
        self.planes[c][k]
    }

    /// Set cell `(i, j)`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, j: usize, value: f32) {
        let (c, k) = self.index(i, j);
        self.planes[c][k] = value;
    }

    /// The field in natural row-major order.
    pub fn to_natural(&self) -> Vec<f32> {
        let mut out = vec![0.0; self.w * self.h];
        for j in 0..self.h {
            for i in 0..self.w {
                out[j * self.w + i] = self.get(i, j);
            }
        }
        out
    }

    /// Fill from natural row-major order.
    pub fn set_natural(&mut self, data: &[f32]) {
        for j in 0..self.h {
            for i in 0..self.w {
                self.set(i, j, data[j * self.w + i]);
            }
        }
    }

    /// Write the field in natural layout into `out` (`w * h`), minus `offset`, in parallel.
    pub fn write_natural(&self, out: &mut [f32], offset: f32) {
        let [red, black] = &self.planes;
        interleave_planes(red, black, (self.w, self.hw), out, offset);
    }

    /// Add a natural-layout field (`w * h`) to this one, in parallel.
    pub fn add_natural(&mut self, add: &[f32]) {
        let (w, hw) = (self.w, self.hw);
        let [red, black] = &mut self.planes;
        red.par_chunks_mut(hw)
            .zip(black.par_chunks_mut(hw))
            .with_min_len(min_rows(w))
            .enumerate()
            .for_each(|(j, (r, b))| {
                deinterleave_add_row(&add[j * w..(j + 1) * w], r, b, j & 1 == 1);
            });
    }

    /// Set from a natural-layout field (`w * h`), in parallel.
    pub fn assign_natural(&mut self, data: &[f32]) {
        let [red, black] = &mut self.planes;
        deinterleave_planes(data, (self.w, self.hw), red, black);
    }

    /// Set every cell to 0.
    pub fn clear(&mut self) {
        for p in &mut self.planes {
            p.fill(0.0);
        }
    }

    /// Sum over all cells, in a fixed order (identical for any thread count).
    pub fn sum(&self) -> f64 {
        let row_sums: Vec<f64> = (0..self.h)
            .into_par_iter()
            .with_min_len(min_rows(self.w))
            .map(|j| {
                let mut s = 0.0f64;
                for c in 0..2 {
                    let n = row_count(self.w, (j + c) & 1);
                    s += super::reduce::row_sum(&self.planes[c][j * self.hw..j * self.hw + n]);
                }
                s
            })
            .collect();
        row_sums.iter().sum()
    }

    /// The mean over all cells.
    pub fn mean(&self) -> f32 {
        (self.sum() / (self.w * self.h).max(1) as f64) as f32
    }

    /// Subtract `value` from every cell.
    pub fn subtract(&mut self, value: f32) {
        if value != 0.0 {
            for p in &mut self.planes {
                p.par_iter_mut()
                    .with_min_len(MIN_TASK_CELLS)
                    .for_each(|x| *x -= value);
            }
        }
    }

    /// Subtract the mean over all cells.
    pub fn remove_mean(&mut self) {
        let mean = self.mean();
        self.subtract(mean);
    }
}

/// Red and black planes (`hw` cells a row) into `out` (natural layout, `w` cells a row,
/// as many rows as it holds), minus `offset`, in parallel.
pub(super) fn interleave_planes(
    red: &[f32],
    black: &[f32],
    (w, hw): (usize, usize),
    out: &mut [f32],
    offset: f32,
) {
    out.par_chunks_mut(w)
        .with_min_len(min_rows(w))
        .enumerate()
        .for_each(|(j, row)| {
            let line = j * hw..(j + 1) * hw;
            interleave_row(&red[line.clone()], &black[line], row, j & 1 == 1, offset);
        });
}

/// `data` (natural layout, `w` cells a row) into red and black planes (`hw` cells a row, as
/// many rows as they hold), in parallel.
pub(super) fn deinterleave_planes(
    data: &[f32],
    (w, hw): (usize, usize),
    red: &mut [f32],
    black: &mut [f32],
) {
    red.par_chunks_mut(hw)
        .zip(black.par_chunks_mut(hw))
        .with_min_len(min_rows(w))
        .enumerate()
        .for_each(|(j, (r, b))| {
            deinterleave_row(&data[j * w..(j + 1) * w], r, b, j & 1 == 1);
        });
}

kernel! {
/// Natural row from the red and black plane rows (`odd`: the row starts with a black cell),
/// minus `offset`.
fn interleave_row(red: &[f32], black: &[f32], out: &mut [f32], odd: bool, offset: f32) {
    let (first, second) = if odd { (black, red) } else { (red, black) };
    let w = out.len();
    for k in 0..w / 2 {
        out[2 * k] = first[k] - offset;
        out[2 * k + 1] = second[k] - offset;
    }
    if w % 2 == 1 {
        out[w - 1] = first[w / 2] - offset;
    }
}
}

kernel! {
/// Split a natural row into the red and black plane rows.
fn deinterleave_row(src: &[f32], red: &mut [f32], black: &mut [f32], odd: bool) {
    let (first, second) = if odd { (black, red) } else { (red, black) };
    let w = src.len();
    for k in 0..w / 2 {
        first[k] = src[2 * k];
        second[k] = src[2 * k + 1];
    }
    if w % 2 == 1 {
        first[w / 2] = src[w - 1];
    }
}
}

kernel! {
/// Add a natural row into the red and black plane rows.
fn deinterleave_add_row(add: &[f32], red: &mut [f32], black: &mut [f32], odd: bool) {
    let (first, second) = if odd { (black, red) } else { (red, black) };
    let w = add.len();
    for k in 0..w / 2 {
        first[k] += add[2 * k];
        second[k] += add[2 * k + 1];
    }
    if w % 2 == 1 {
        first[w / 2] += add[w - 1];
    }
}
}

/// Number of cells of a colour in a row whose first cell of that colour is at `i = s`.
#[inline(always)]
pub fn row_count(w: usize, s: usize) -> usize {
    if w > s { (w - s).div_ceil(2) } else { 0 }
}

/// How one relaxation half-sweep writes its colour.
#[derive(Clone, Copy)]
enum Update {
    /// Gauss-Seidel / SOR in place: `q += omega * (q_gs - q)`.
    InPlace(f32),
    /// Jacobi into a separate plane: `q = q_gs`.
    Replace,
}

kernel! {
/// Relax one row of one colour. `out` is that colour's row; `other`, `other_dn`, `other_up`
/// the other colour's rows `j`, `j - 1`, `j + 1` (absent at walls); `rhs` the right-hand side
/// row.
#[allow(clippy::too_many_arguments)]
fn relax_row(
    out: &mut [f32],
    other: &[f32],
    other_dn: Option<&[f32]>,
    other_up: Option<&[f32]>,
    rhs: &[f32],
    w: usize,
    s: usize,
    update: Update,
    op: Operator,
) {
    let Operator { cx, cy } = op;
    let count = row_count(w, s);
    let generic = |k: usize, out: &mut [f32]| {
        let i = s + 2 * k;
        let mut sum = 0.0f32;
        let mut n = 0.0f32;
        if i >= 1 {
            sum = cx.mul_add(other[k + s - 1], sum);
            n += cx;
        }
        if i + 1 < w {
            sum = cx.mul_add(other[k + s], sum);
            n += cx;
        }
        if let Some(d) = other_dn {
            sum = cy.mul_add(d[k], sum);
            n += cy;
        }
        if let Some(u) = other_up {
            sum = cy.mul_add(u[k], sum);
            n += cy;
        }
        let gs = if n > 0.0 { (sum + rhs[k]) / n } else { out[k] };
        out[k] = match update {
            Update::InPlace(omega) => omega.mul_add(gs - out[k], out[k]),
            Update::Replace => gs,
        };
    };
    let (Some(dn), Some(up)) = (other_dn, other_up) else {
        for k in 0..count {
            generic(k, out);
        }
        return;
    };
    // Interior cells (1 <= i <= w - 2) have all four neighbours.
    let k_lo = if s == 0 { 1 } else { 0 };
    let k_hi = if w >= 2 + s { (w - 2 - s) / 2 + 1 } else { 0 };
    if k_lo >= k_hi {
        for k in 0..count {
            generic(k, out);
        }
        return;
    }
    for k in 0..k_lo {
        generic(k, out);
    }
    let left = &other[k_lo + s - 1..k_hi + s - 1];
    let right = &other[k_lo + s..k_hi + s];
    let dn = &dn[k_lo..k_hi];
    let up = &up[k_lo..k_hi];
    let b = &rhs[k_lo..k_hi];
    let o = &mut out[k_lo..k_hi];
    // Equal lengths let the compiler drop the bounds checks and vectorise.
    let n = o.len();
    let (left, right, dn, up, b) = (&left[..n], &right[..n], &dn[..n], &up[..n], &b[..n]);
    let inv = 1.0 / (2.0 * (cx + cy));
    match update {
        Update::InPlace(omega) => {
            for idx in 0..o.len() {
                let sum = cx.mul_add(left[idx] + right[idx], cy.mul_add(dn[idx] + up[idx], b[idx]));
                let gs = sum * inv;
                o[idx] = omega.mul_add(gs - o[idx], o[idx]);
            }
        }
        Update::Replace => {
            for idx in 0..o.len() {
                let sum = cx.mul_add(left[idx] + right[idx], cy.mul_add(dn[idx] + up[idx], b[idx]));
                o[idx] = sum * inv;
            }
        }
    }
    for k in k_hi..count {
        generic(k, out);
    }
}
}

/// `sweeps` red-black half-sweep pairs over `q`, band-parallel: phase `2 s + c` relaxes colour
/// `c` of sweep `s`. Jacobi (`Update::Replace`) writes into `tmp` and swaps after each sweep.
#[allow(clippy::too_many_arguments)]
fn relax_sweeps(
    q: &mut Split,
    mut tmp: Option<&mut Split>,
    b: &Split,
    sweeps: u32,
    update: Update,
    op: Operator,
    faces: Option<&SplitFaces>,
) {
    let (w, h, hw) = (q.w, q.h, q.hw);
    if sweeps == 0 || w == 0 || h == 0 {
        return;
    }
    let qp = q.planes.each_mut().map(|p| Shared::new(p));
    let tp = tmp
        .as_mut()
        .map(|t| t.planes.each_mut().map(|p| Shared::new(p)));
    let rhs = [&b.planes[0][..], &b.planes[1][..]];
    band::phases(h, w, 2 * sweeps as usize, |phase, rows| {
        let (sweep, c) = (phase / 2, phase % 2);
        // Jacobi ping-pongs: even sweeps read `q` and write `tmp`, odd sweeps the reverse.
        let (src, dst) = match tp {
            Some(tp) if sweep % 2 == 1 => (tp, qp),
            Some(tp) => (qp, tp),
            None => (qp, qp),
        };
        for j in rows {
            let row = |r: usize| r * hw..(r + 1) * hw;
            // SAFETY: in this phase the threads write only colour `c` of `dst`, each in its own
            // band of rows, and read only colour `1 - c` of `src` (and, for Jacobi, nothing of
            // `dst`); `src` and `dst` colour `1 - c` are not written in this phase.
            unsafe {
                let other = src[1 - c];
                if let Some(f) = faces {
                    let same = other.get(row(j));
                    let masked = match update {
                        Update::InPlace(omega) => MaskedUpdate::InPlace(omega),
                        Update::Replace => MaskedUpdate::Replace,
                    };
                    relax_row_faces(
                        dst[c].get_mut(row(j)),
                        same,
                        if j > 0 { other.get(row(j - 1)) } else { same },
                        if j + 1 < h {
                            other.get(row(j + 1))
                        } else {
                            same
                        },
                        &rhs[c][row(j)],
                        f.planes[c].each_ref().map(|p| &p[row(j)]),
                        w,
                        (j + c) & 1,
                        masked,
                        f.row(c, j),
                    );
                    continue;
                }
                relax_row(
                    dst[c].get_mut(row(j)),
                    other.get(row(j)),
                    (j > 0).then(|| other.get(row(j - 1))),
                    (j + 1 < h).then(|| other.get(row(j + 1))),
                    &rhs[c][row(j)],
                    w,
                    (j + c) & 1,
                    update,
                    op,
                );
            }
        }
    });
    if let Some(tmp) = tmp
        && sweeps % 2 == 1
    {
        std::mem::swap(&mut q.planes, &mut tmp.planes);
    }
}

/// `sweeps` red-black Gauss-Seidel/SOR sweeps of `A q = b` in place (finest-level operator).
pub fn rb_sor(q: &mut Split, b: &Split, sweeps: u32, omega: f32) {
    rb_sor_op(q, b, sweeps, omega, Operator::UNIT, None);
}

/// [`rb_sor`] with per-face couplings (obstacles).
pub fn rb_sor_faces(q: &mut Split, b: &Split, sweeps: u32, omega: f32, faces: &SplitFaces) {
    rb_sor_op(q, b, sweeps, omega, Operator::UNIT, Some(faces));
}

fn rb_sor_op(
    q: &mut Split,
    b: &Split,
    sweeps: u32,
    omega: f32,
    op: Operator,
    faces: Option<&SplitFaces>,
) {
    relax_sweeps(q, None, b, sweeps, Update::InPlace(omega), op, faces);
}

/// `iterations` Jacobi iterations of `A q = b`; `tmp` is scratch of the same size.
pub fn jacobi(q: &mut Split, b: &Split, tmp: &mut Split, iterations: u32) {
    relax_sweeps(
        q,
        Some(tmp),
        b,
        iterations,
        Update::Replace,
        Operator::UNIT,
        None,
    );
}

/// [`jacobi`] with per-face couplings (obstacles).
pub fn jacobi_faces(
    q: &mut Split,
    b: &Split,
    tmp: &mut Split,
    iterations: u32,
    faces: &SplitFaces,
) {
    let op = Operator::UNIT;
    relax_sweeps(
        q,
        Some(tmp),
        b,
        iterations,
        Update::Replace,
        op,
        Some(faces),
    );
}

/// Scale the warm start `q` by the factor `a >= 0` that minimises the residual
/// `|| b - a A q ||`, so the starting guess is never worse than starting from zero.
///
/// The last step's pressure is usually a good guess, but after a change in forcing it can fit
/// this step's divergence worse than nothing at all: with few relaxation sweeps the projection
/// then left more divergence than it found (measured: RMS 1.2-1.6x "before" at 512² with 20
/// red-black sweeps). Costs one pass. `q_nat` and `aq` are scratch of `w * h` values; `d` is the
/// divergence (natural layout) with mean `d_mean`, so `b = d_mean - d`. With obstacles,
/// `faces` holds the couplings and the right-hand side `b` (natural layout), used instead.
pub fn scale_warm_start(
    q: &mut Split,
    d: &[f32],
    d_mean: f32,
    q_nat: &mut [f32],
    aq: &mut [f32],
    faces: Option<(&Faces, &[f32])>,
) {
    let (w, h) = (q.w, q.h);
    q.write_natural(q_nat, 0.0);
    let zeros_row = vec![0.0f32; w];
    let dots: Vec<(f64, f64)> = aq[..w * h]
        .par_chunks_mut(w)
        .with_min_len(min_rows(w))
        .enumerate()
        .map(|(j, row)| {
            let line = |r: usize| &q_nat[r * w..(r + 1) * w];
            // The residual with b = 0 is -A q.
            if let Some((f, _)) = faces {
                residual_row_faces(
                    line(j),
                    line(j.saturating_sub(1)),
                    line((j + 1).min(h - 1)),
                    &zeros_row,
                    row,
                    &f.x[j * (w + 1)..(j + 1) * (w + 1)],
                    &f.y[j * w..(j + 1) * w],
                    &f.y[(j + 1) * w..(j + 2) * w],
                    None,
                );
            } else {
                residual_row(
                    line(j),
                    (j > 0).then(|| line(j - 1)),
                    (j + 1 < h).then(|| line(j + 1)),
                    &zeros_row,
                    row,
                    1.0,
                    1.0,
                );
            }
            let mut b_aq = 0.0f64;
            let mut aq_aq = 0.0f64;
            let mut add = |b: f64, neg_aq: f32| {
                b_aq -= b * f64::from(neg_aq);
                aq_aq += f64::from(neg_aq) * f64::from(neg_aq);
            };
            match faces {
                Some((_, b)) => {
                    for (&neg_aq, &bi) in row.iter().zip(&b[j * w..(j + 1) * w]) {
                        add(f64::from(bi), neg_aq);
                    }
                }
                None => {
                    for (&neg_aq, &di) in row.iter().zip(&d[j * w..(j + 1) * w]) {
                        add(f64::from(d_mean - di), neg_aq);
                    }
                }
            }
            (b_aq, aq_aq)
        })
        .collect();
    let (b_aq, aq_aq) = dots
        .iter()
        .fold((0.0, 0.0), |(x, y), &(a, b)| (x + a, y + b));
    let a = if aq_aq > 0.0 {
        (b_aq / aq_aq).max(0.0)
    } else {
        0.0
    };
    let a = if a.is_finite() { a as f32 } else { 0.0 };
    if a != 1.0 {
        for p in &mut q.planes {
            p.par_iter_mut()
                .with_min_len(MIN_TASK_CELLS)
                .for_each(|x| *x *= a);
        }
    }
}

#[cfg(test)]
mod tests;
