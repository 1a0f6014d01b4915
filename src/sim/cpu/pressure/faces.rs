//! The pressure solve with obstacles: per-face couplings instead of the uniform operator.
//!
//! With a solid mask the Poisson equation of a fluid cell sums over its *open* faces only
//! (pure Neumann at solid faces, as at the canvas walls): `sum_f w_f (q_c - q_n) = b_c`, with
//! `w_f` the level's coupling (`cx` or `cy`) times the face's open fraction. Solid cells take
//! no part: all their faces are closed, their right-hand side is 0 and their pressure stays 0.
//!
//! The couplings and the fluid regions are shared with the GPU solver
//! (`sim::obstacles::faces`). Coarse multigrid levels see coarsened masks ([`Faces::coarsen`]).
//! The correction from a coarse level is interpolated only from coarse cells joined to the
//! finer cell's own by an open face ([`prolongate_faces`]), and levels with obstacles smooth
//! more (`MG_OBSTACLE_SWEEPS`).
//!
//! Known limit: a wall thinner than a coarse cell that runs through its inside is not seen by
//! that level, which then couples both sides of the wall; around the maze and the ring layouts
//! two V-cycles leave about 7x and 40x the divergence they leave in open flow (still 10-100x
//! less than 20 red-black sweeps). Cutting the coarse coupling wherever a finer wall crosses
//! the path between two coarse centres was tried and diverged (it isolates coarse cells that
//! still hold residual). The cure is coarse cells split by connected component (Chentanez and
//! Müller 2011), to come.
//!
//! The constant per connected fluid region is the null space (one per region: an enclosed
//! pocket is its own), so right-hand sides are made mean-free region by region
//! ([`Regions::remove_means`]).

use super::{Split, row_count};
use crate::sim::multigrid::ProlongTaps;
pub use crate::sim::obstacles::faces::{Faces, Regions};
use rayon::prelude::*;

/// The couplings of one level in the checkerboard layout of [`Split`], for the relaxation:
/// per colour, the left, right, lower and upper face couplings of each cell and the inverse of
/// their sum (0 for a cell with no open face, whose pressure the relaxation then sets to 0).
#[derive(Clone, Debug)]
pub struct SplitFaces {
    /// `[red, black]` planes of `[left, right, down, up, inverse diagonal]`.
    pub planes: [[Vec<f32>; 5]; 2],
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
        Self { planes }
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

kernel! {
/// Relax one row of one colour with per-face couplings (`weights`: this colour's planes,
/// sliced to the row). `other`, `other_dn`, `other_up` are the other colour's rows `j`,
/// `j - 1`, `j + 1`, or row `j` again at a wall (where the coupling is 0).
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
) {
    let count = row_count(w, s);
    let hw = other.len();
    let [wl, wr, wd, wu, inv] = weights;
    let cell = |k: usize, out: &mut [f32]| {
        // Indices of absent neighbours are clamped into the row: their coupling is 0.
        let left = other[(k + s).wrapping_sub(1).min(hw - 1)];
        let right = other[(k + s).min(hw - 1)];
        let sum = wl[k].mul_add(
            left,
            wr[k].mul_add(right, wd[k].mul_add(other_dn[k], wu[k].mul_add(other_up[k], rhs[k]))),
        );
        let gs = sum * inv[k];
        out[k] = match update {
            MaskedUpdate::InPlace(omega) => omega.mul_add(gs - out[k], out[k]),
            MaskedUpdate::Replace => gs,
        };
    };
    // The first and last cells of the row may lack a left or right neighbour; between them
    // the neighbours are `other[k + s - 1]` and `other[k + s]`, contiguous.
    let k_lo = usize::from(s == 0).min(count);
    let k_hi = if count > 0 && (count - 1 + s) >= hw { count - 1 } else { count }.max(k_lo);
    for k in 0..k_lo {
        cell(k, out);
    }
    let n = k_hi - k_lo;
    let left = &other[k_lo + s - usize::from(k_lo + s > 0)..][..n];
    let right = &other[k_lo + s..][..n];
    let (dn, up, b) = (&other_dn[k_lo..k_hi], &other_up[k_lo..k_hi], &rhs[k_lo..k_hi]);
    let (wl_, wr_, wd_, wu_, inv_) = (
        &wl[k_lo..k_hi],
        &wr[k_lo..k_hi],
        &wd[k_lo..k_hi],
        &wu[k_lo..k_hi],
        &inv[k_lo..k_hi],
    );
    let o = &mut out[k_lo..k_hi];
    for idx in 0..n {
        let sum = wl_[idx].mul_add(
            left[idx],
            wr_[idx].mul_add(right[idx], wd_[idx].mul_add(dn[idx], wu_[idx].mul_add(up[idx], b[idx]))),
        );
        let gs = sum * inv_[idx];
        o[idx] = match update {
            MaskedUpdate::InPlace(omega) => omega.mul_add(gs - o[idx], o[idx]),
            MaskedUpdate::Replace => gs,
        };
    }
    for k in k_hi..count {
        cell(k, out);
    }
}
}

kernel! {
/// Residual `r = b - A e` of one natural row `j` with per-face couplings; `e_dn`, `e_up` are
/// rows `j - 1`, `j + 1`, or row `j` again at a wall.
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
) {
    let w = out.len();
    for i in 0..w {
        let c = e[i];
        let l = e[i.saturating_sub(1)];
        let r = e[(i + 1).min(w - 1)];
        let flux = x[i].mul_add(
            c - l,
            x[i + 1].mul_add(c - r, y_dn[i].mul_add(c - e_dn[i], y_up[i] * (c - e_up[i]))),
        );
        out[i] = b[i] - flux;
    }
}
}

/// Prolongation around obstacles: the bilinear interpolation of the coarse correction `ce`
/// (natural layout, couplings `coarse`) at each finer cell's centre, into `out` (`fw` wide),
/// taking only coarse cells that are fluid and joined to the coarse cell the finer cell lies in
/// by an open coarse face (renormalised). Interpolating from a solid coarse cell (whose
/// correction is 0) or from across a wall pulled the cells along walls towards the wrong
/// value: the two-grid cycle then *raised* the residual next to a straight wall (1.8x).
pub(super) fn prolongate_faces(
    ce: &[f32],
    coarse: &Faces,
    open: &[bool],
    (px, py): (&ProlongTaps, &ProlongTaps),
    fw: usize,
    out: &mut [f32],
) {
    let (cw, ch) = (coarse.w, coarse.h);
    let fh = py.0.len();
    debug_assert_eq!(open.len(), cw * ch);
    let home =
        |k: usize, fine: usize, n: usize| ((k as f64 + 0.5) * n as f64 / fine as f64) as usize;
    // The coarse column of each finer column (the same for every row).
    let homes: Vec<usize> = (0..fw).map(|i| home(i, fw, cw).min(cw - 1)).collect();
    out.par_chunks_mut(fw).enumerate().for_each(|(j, row)| {
        let (j0, j1, wy) = py.0[j];
        let (j0, j1) = (j0 as usize, j1 as usize);
        let hj = home(j, fh, ch).min(ch - 1);
        for ((i, o), &hi) in row.iter_mut().enumerate().zip(&homes) {
            let (i0, i1, wx) = px.0[i];
            let (i0, i1) = (i0 as usize, i1 as usize);
            let joined = |ci: usize, cj: usize| {
                if coarse.diagonal(ci, cj) <= 0.0 {
                    return false;
                }
                let x_ok = ci == hi || coarse.x[hj * (cw + 1) + ci.max(hi)] > 0.0;
                let y_ok = cj == hj || coarse.y[cj.max(hj) * cw + hi] > 0.0;
                x_ok && y_ok
            };
            // Away from walls (every face of the four taps open, the home cell one of them)
            // every tap is joined: the same sums without the checks.
            let clear = (hi == i0 || hi == i1)
                && (hj == j0 || hj == j1)
                && open[j0 * cw + i0]
                && open[j0 * cw + i1]
                && open[j1 * cw + i0]
                && open[j1 * cw + i1];
            let (mut sum, mut weight) = (0.0f32, 0.0f32);
            for (cj, ty) in [(j0, 1.0 - wy), (j1, wy)] {
                for (ci, tx) in [(i0, 1.0 - wx), (i1, wx)] {
                    let t = tx * ty;
                    if t > 0.0 && (clear || joined(ci, cj)) {
                        sum += t * ce[cj * cw + ci];
                        weight += t;
                    }
                }
            }
            *o = if weight > 0.0 { sum / weight } else { 0.0 };
        }
    });
}

/// Which cells of a level have all four faces open (above 0): the prolongation's fast path.
pub(super) fn open_cells(faces: &Faces) -> Vec<bool> {
    let (w, h) = (faces.w, faces.h);
    (0..w * h)
        .map(|c| {
            let (i, j) = (c % w, c / w);
            faces.x[j * (w + 1) + i] > 0.0
                && faces.x[j * (w + 1) + i + 1] > 0.0
                && faces.y[j * w + i] > 0.0
                && faces.y[(j + 1) * w + i] > 0.0
        })
        .collect()
}
