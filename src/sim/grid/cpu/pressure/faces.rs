//! The pressure solve with obstacles: per-face couplings instead of the uniform operator.
//!
//! With a solid mask the Poisson equation of a fluid cell sums over its *open* faces only
//! (pure Neumann at solid faces, as at the canvas walls): `sum_f w_f (q_c - q_n) = b_c`, with
//! `w_f` the level's coupling (`cx` or `cy`) times the face's open fraction. Solid cells take
//! no part: all their faces are closed, their right-hand side is 0 and their pressure stays 0.
//!
//! The couplings and the fluid regions are shared with the GPU solver
//! (`sim::obstacles::faces`). These kernels serve the finest level (and Jacobi and red-black);
//! the coarse multigrid levels around obstacles are node graphs, one node per connected piece
//! of fluid in a coarse cell (`sim::obstacles::nodes`, solved in `super::nodes`). Coarsening
//! the mask instead (a coarse face's open fraction averaged from the finer faces) missed every
//! wall thinner than a coarse cell that runs through its inside: that level then coupled both
//! sides of the wall, and around the maze and the ring two V-cycles left 7x and 40x the
//! divergence they leave in open flow.
//!
//! The constant per connected fluid region is the null space (one per region: an enclosed
//! pocket is its own), so right-hand sides are made mean-free region by region
//! ([`Regions::remove_means`]).

use super::{Split, row_count};
pub use crate::sim::obstacles::faces::{Faces, Regions};

/// Runs of at least this many cells of a row and colour with the same five couplings are
/// relaxed with those as constants (see [`Run`]); shorter ones are not worth a separate loop.
const MIN_RUN: usize = 32;

/// Cells `start..end` of one row of one colour whose couplings are all the same, `w`
/// (`[left, right, down, up, inverse diagonal]`): most of a level, away from the walls. The
/// relaxation reads them as constants instead of loading five planes, with the same
/// arithmetic, so the bits are the same; a sweep then moves about half the bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Run {
    pub start: u32,
    pub end: u32,
    pub w: [f32; 5],
}

/// The couplings of one level in the checkerboard layout of [`Split`], for the relaxation:
/// per colour, the left, right, lower and upper face couplings of each cell and the inverse of
/// their sum (0 for a cell with no open face, whose pressure the relaxation then sets to 0).
#[derive(Clone, Debug)]
pub struct SplitFaces {
    /// `[red, black]` planes of `[left, right, down, up, inverse diagonal]`.
    pub planes: [[Vec<f32>; 5]; 2],
    /// Per colour, the [`Run`]s of every row: row `j`'s are `runs[c][run_rows[c][j]..run_rows[c][j + 1]]`.
    runs: [Vec<Run>; 2],
    run_rows: [Vec<u32>; 2],
    /// Per colour and row, the couplings of the row's first and last cells (those at the
    /// canvas walls), which the relaxation reads apart from the rest: kept together here so
    /// that a row whose cells lie in runs does not load a cache line of every plane for them.
    ends: [Vec<[[f32; 5]; 2]>; 2],
}

/// One row of one colour's couplings besides the planes: its [`Run`]s and its end cells'.
#[derive(Clone, Copy)]
pub struct RowCouplings<'a> {
    pub runs: &'a [Run],
    pub ends: [[f32; 5]; 2],
}

impl SplitFaces {
    pub fn new(faces: &Faces) -> Self {
        let (w, h) = (faces.w, faces.h);
        let hw = w.div_ceil(2);
        let mut planes: [[Vec<f32>; 5]; 2] =
            std::array::from_fn(|_| std::array::from_fn(|_| vec![0.0; h * hw]));
        for j in 0..h {
            for i in 0..w {
                let (c, k) = ((i + j) & 1, j * hw + i / 2);
                let p = &mut planes[c];
                p[0][k] = faces.x[j * (w + 1) + i];
                p[1][k] = faces.x[j * (w + 1) + i + 1];
                p[2][k] = faces.y[j * w + i];
                p[3][k] = faces.y[(j + 1) * w + i];
                let d = faces.diagonal(i, j);
                p[4][k] = if d > 0.0 { 1.0 / d } else { 0.0 };
            }
        }
        Self::from_planes(planes, w)
    }

    /// From the planes of a level `w` cells wide: finds the rows' [`Run`]s and end cells.
    pub fn from_planes(planes: [[Vec<f32>; 5]; 2], w: usize) -> Self {
        let hw = w.div_ceil(2);
        let scan = |c: usize| {
            let p = &planes[c];
            let rows = p[0].len().checked_div(hw).unwrap_or(0);
            let (mut runs, mut run_rows, mut ends) = (Vec::new(), vec![0u32], Vec::new());
            for j in 0..rows {
                let at = |k: usize| -> [f32; 5] { std::array::from_fn(|t| p[t][j * hw + k]) };
                let last = row_count(w, (j + c) & 1).max(1) - 1;
                ends.push([at(0), at(last)]);
                let mut k = 0;
                while k < hw {
                    let (w, start) = (at(k), k);
                    // Bitwise equal, so that a run's constants are the planes' values exactly.
                    let same =
                        |v: [f32; 5]| v.iter().zip(&w).all(|(a, b)| a.to_bits() == b.to_bits());
                    while k < hw && same(at(k)) {
                        k += 1;
                    }
                    if k - start >= MIN_RUN {
                        runs.push(Run {
                            start: start as u32,
                            end: k as u32,
                            w,
                        });
                    }
                }
                run_rows.push(runs.len() as u32);
            }
            (runs, run_rows, ends)
        };
        let [(r0, s0, e0), (r1, s1, e1)] = [0, 1].map(scan);
        Self {
            planes,
            runs: [r0, r1],
            run_rows: [s0, s1],
            ends: [e0, e1],
        }
    }

    /// The same couplings without runs: every cell relaxed from the planes (for tests).
    #[cfg(test)]
    pub fn without_runs(&self) -> Self {
        Self {
            planes: self.planes.clone(),
            runs: Default::default(),
            run_rows: Default::default(),
            ends: self.ends.clone(),
        }
    }

    /// The share of cells that lie in runs, 0..1 (for tests).
    #[cfg(test)]
    pub fn run_share(&self) -> f64 {
        let cells: usize = self.planes.iter().map(|p| p[0].len()).sum();
        let in_runs: usize = self
            .runs
            .iter()
            .flatten()
            .map(|r| (r.end - r.start) as usize)
            .sum();
        in_runs as f64 / cells.max(1) as f64
    }

    /// The [`RowCouplings`] of row `j`, colour `c`.
    pub fn row(&self, c: usize, j: usize) -> RowCouplings<'_> {
        let rows = &self.run_rows[c];
        let runs = match (rows.get(j), rows.get(j + 1)) {
            (Some(&a), Some(&b)) => &self.runs[c][a as usize..b as usize],
            _ => &[],
        };
        let ends = self.ends[c].get(j).copied().unwrap_or_default();
        RowCouplings { runs, ends }
    }
}

/// Make `b` (checkerboard layout) mean-free in every region of `regions`, and 0 outside them.
pub fn remove_means_split(regions: &Regions, b: &mut Split) {
    let mut natural = b.to_natural();
    regions.remove_means(&mut natural);
    b.set_natural(&natural);
}

/// How one relaxation half-sweep writes its colour (see `super::Update`).
#[derive(Clone, Copy)]
pub(super) enum MaskedUpdate {
    InPlace(f32),
    Replace,
}

/// What a row's relaxation reads besides its couplings: the other colour's rows `j`, `j - 1`
/// and `j + 1`, the right-hand side, and the row's shift `s` (the left neighbour of cell `k`
/// is `other[k + s - 1]`, the right one `other[k + s]`).
struct Neighbours<'a> {
    other: &'a [f32],
    dn: &'a [f32],
    up: &'a [f32],
    rhs: &'a [f32],
    s: usize,
}

/// A span's couplings: the row's planes (`[left, right, down, up, inverse diagonal]`), or
/// the same five for every cell of a [`Run`].
#[derive(Clone, Copy)]
enum Couplings<'a> {
    Planes([&'a [f32]; 5]),
    Same([f32; 5]),
}

/// Relax cells `span` of a row (none at a canvas wall): `sum = wl l + (wr r + (wd d + (wu u +
/// b)))`, fused, times the inverse diagonal, whichever way the couplings come.
#[inline(always)]
fn relax_span(
    out: &mut [f32],
    nb: &Neighbours,
    span: std::ops::Range<usize>,
    couplings: Couplings,
    update: MaskedUpdate,
) {
    let (a, b) = (span.start, span.end.max(span.start));
    if a == b {
        return;
    }
    let n = b - a;
    let left = &nb.other[a + nb.s - 1..][..n];
    let right = &nb.other[a + nb.s..][..n];
    let (dn, up, rhs) = (&nb.dn[a..b], &nb.up[a..b], &nb.rhs[a..b]);
    let o = &mut out[a..b];
    let step = |o: &mut f32, gs: f32| {
        *o = match update {
            MaskedUpdate::InPlace(omega) => omega.mul_add(gs - *o, *o),
            MaskedUpdate::Replace => gs,
        };
    };
    match couplings {
        Couplings::Planes(p) => {
            let [wl, wr, wd, wu, inv] = p.map(|p| &p[a..b]);
            for i in 0..n {
                let sum = wl[i].mul_add(
                    left[i],
                    wr[i].mul_add(right[i], wd[i].mul_add(dn[i], wu[i].mul_add(up[i], rhs[i]))),
                );
                step(&mut o[i], sum * inv[i]);
            }
        }
        Couplings::Same([wl, wr, wd, wu, inv]) => {
            for i in 0..n {
                let sum = wl.mul_add(
                    left[i],
                    wr.mul_add(right[i], wd.mul_add(dn[i], wu.mul_add(up[i], rhs[i]))),
                );
                step(&mut o[i], sum * inv);
            }
        }
    }
}

/// The cells `k_lo..k_hi` of a row of one colour (`count` cells, shifted by `s`, the other
/// colour's rows `hw` long) that have both a left and a right neighbour, `other[k + s - 1]`
/// and `other[k + s]`, contiguous: all but the first cell when `s` is 0 and the last when its
/// right neighbour would lie past the row.
#[inline(always)]
pub(super) fn interior(count: usize, s: usize, hw: usize) -> (usize, usize) {
    let k_lo = usize::from(s == 0).min(count);
    let k_hi = if count > 0 && (count - 1 + s) >= hw {
        count - 1
    } else {
        count
    }
    .max(k_lo);
    (k_lo, k_hi)
}

kernel! {
/// Relax one row of one colour with per-face couplings (`weights`: this colour's planes,
/// sliced to the row, and `row`: its runs and end cells' couplings). `other`, `other_dn`,
/// `other_up` are the other colour's rows `j`, `j - 1`, `j + 1`, or row `j` again at a wall
/// (where the coupling is 0).
#[allow(clippy::too_many_arguments)]
pub(super) fn relax_row_faces(
    out: &mut [f32],
    other: &[f32],
    other_dn: &[f32],
    other_up: &[f32],
    rhs: &[f32],
    weights: [&[f32]; 5],
    w: usize,
    s: usize,
    update: MaskedUpdate,
    row: RowCouplings,
) {
    let count = row_count(w, s);
    let hw = other.len();
    // Only the first and last cells (k = 0, k = count - 1) come here.
    let cell = |k: usize, out: &mut [f32]| {
        let [wl, wr, wd, wu, inv] = row.ends[usize::from(k > 0)];
        // Indices of absent neighbours are clamped into the row: their coupling is 0.
        let left = other[(k + s).wrapping_sub(1).min(hw - 1)];
        let right = other[(k + s).min(hw - 1)];
        let sum = wl.mul_add(
            left,
            wr.mul_add(right, wd.mul_add(other_dn[k], wu.mul_add(other_up[k], rhs[k]))),
        );
        let gs = sum * inv;
        out[k] = match update {
            MaskedUpdate::InPlace(omega) => omega.mul_add(gs - out[k], out[k]),
            MaskedUpdate::Replace => gs,
        };
    };
    let (k_lo, k_hi) = interior(count, s, hw);
    for k in 0..k_lo {
        cell(k, out);
    }
    // Between them, span by span: the runs with their constant couplings, the cells between
    // the runs with the planes'.
    let nbrs = Neighbours {
        other,
        dn: other_dn,
        up: other_up,
        rhs,
        s,
    };
    let mut k = k_lo;
    for run in row.runs {
        let a = (run.start as usize).clamp(k, k_hi);
        let b = (run.end as usize).clamp(a, k_hi);
        relax_span(out, &nbrs, k..a, Couplings::Planes(weights), update);
        relax_span(out, &nbrs, a..b, Couplings::Same(run.w), update);
        k = b;
    }
    relax_span(out, &nbrs, k..k_hi, Couplings::Planes(weights), update);
    for k in k_hi..count {
        cell(k, out);
    }
}
}

/// Per row of `faces`: the couplings of its cells between the two ends (`[left and right,
/// down, up]`) where they are all the same (bitwise), as in open flow; `None` for a row with a
/// solid or a wall among them. The residual then reads them as constants (same bits, fewer
/// loads).
pub fn constant_rows(faces: &Faces) -> Vec<Option<[f32; 3]>> {
    let (w, h) = (faces.w, faces.h);
    let same = |v: &[f32]| v.iter().all(|a| a.to_bits() == v[0].to_bits());
    (0..h)
        .map(|j| {
            if w < 3 {
                return None;
            }
            let x = &faces.x[j * (w + 1) + 1..j * (w + 1) + w];
            let dn = &faces.y[j * w + 1..j * w + w - 1];
            let up = &faces.y[(j + 1) * w + 1..(j + 1) * w + w - 1];
            (same(x) && same(dn) && same(up)).then(|| [x[0], dn[0], up[0]])
        })
        .collect()
}

kernel! {
/// Residual `r = b - A e` of one natural row `j` with per-face couplings; `e_dn`, `e_up` are
/// rows `j - 1`, `j + 1`, or row `j` again at a wall. `constant`: the row's couplings between
/// its ends when they are all the same ([`constant_rows`]), read as constants.
#[allow(clippy::too_many_arguments)]
pub(super) fn residual_row_faces(
    e: &[f32],
    e_dn: &[f32],
    e_up: &[f32],
    b: &[f32],
    out: &mut [f32],
    x: &[f32],
    y_dn: &[f32],
    y_up: &[f32],
    constant: Option<[f32; 3]>,
) {
    let w = out.len();
    let edge = |i: usize| {
        let c = e[i];
        let l = e[i.saturating_sub(1)];
        let r = e[(i + 1).min(w - 1)];
        let flux = x[i].mul_add(
            c - l,
            x[i + 1].mul_add(c - r, y_dn[i].mul_add(c - e_dn[i], y_up[i] * (c - e_up[i]))),
        );
        b[i] - flux
    };
    if w < 3 {
        for (i, o) in out.iter_mut().enumerate() {
            *o = edge(i);
        }
        return;
    }
    out[0] = edge(0);
    out[w - 1] = edge(w - 1);
    // Between the ends the neighbours are plain shifted slices (the same sums): this loop
    // vectorises, the clamped indices above do not.
    let n = w - 2;
    let (l, c, r) = (&e[..n], &e[1..n + 1], &e[2..n + 2]);
    if let Some([cx, yd, yu]) = constant {
        let (d, u, bb) = (&e_dn[1..n + 1], &e_up[1..n + 1], &b[1..n + 1]);
        for (k, o) in out[1..n + 1].iter_mut().enumerate() {
            let ck = c[k];
            let flux = cx.mul_add(
                ck - l[k],
                cx.mul_add(ck - r[k], yd.mul_add(ck - d[k], yu * (ck - u[k]))),
            );
            *o = bb[k] - flux;
        }
        return;
    }
    let (xl, xr) = (&x[1..n + 1], &x[2..n + 2]);
    let (yd, yu, d, u, bb) = (
        &y_dn[1..n + 1],
        &y_up[1..n + 1],
        &e_dn[1..n + 1],
        &e_up[1..n + 1],
        &b[1..n + 1],
    );
    for (k, o) in out[1..n + 1].iter_mut().enumerate() {
        let ck = c[k];
        let flux = xl[k].mul_add(
            ck - l[k],
            xr[k].mul_add(ck - r[k], yd[k].mul_add(ck - d[k], yu[k] * (ck - u[k]))),
        );
        *o = bb[k] - flux;
    }
}
}
