//! The multigrid V-cycle of the pressure solve: the coarse levels, the residual, restriction
//! and prolongation (see the parent module's docs for the geometry; around obstacles the
//! finest level relaxes through `faces` and the coarse levels are the node graphs of `nodes`).

use super::faces::{self, Faces, Regions, SplitFaces, residual_row_faces};
use super::nodes::Nodes;
use super::{Split, rb_sor_op};
use crate::kernels::band::min_rows;
use crate::sim::multigrid::*;
use crate::sim::obstacles::nodes::Hierarchy;
use rayon::prelude::*;

kernel! {
/// Restrict one row along x: `out[I] = sum_t frac[I][t] * row[first[I] + t]`.
pub(super) fn restrict_row_x(row: &[f32], first: &[u32], frac: &[[f32; 3]], out: &mut [f32]) {
    let last = row.len() - 1;
    if row.len() == 2 * out.len() {
        // Exact halving: the taps are the two children with weight 1 (the fma below with
        // fractions [1, 1, 0] gives exactly a + b too).
        for (k, o) in out.iter_mut().enumerate() {
            *o = row[2 * k] + row[2 * k + 1];
        }
        return;
    }
    for (o, (&f0, fr)) in out.iter_mut().zip(first.iter().zip(frac)) {
        let i = f0 as usize;
        // Indices past the row carry a zero fraction; clamping keeps the read in bounds.
        let (a, b, c) = (row[i.min(last)], row[(i + 1).min(last)], row[(i + 2).min(last)]);
        *o = fr[0].mul_add(a, fr[1].mul_add(b, fr[2] * c));
    }
}
}

kernel! {
/// Restrict along y: `out = sum_t frac[t] * rows[t]`.
fn restrict_rows_y(rows: [&[f32]; 3], frac: [f32; 3], out: &mut [f32]) {
    let n = out.len();
    let (a, b, c) = (&rows[0][..n], &rows[1][..n], &rows[2][..n]);
    for i in 0..n {
        out[i] = frac[0].mul_add(a[i], frac[1].mul_add(b[i], frac[2] * c[i]));
    }
}
}

kernel! {
/// Interpolate one coarse row at the finer columns.
pub(super) fn prolong_row_x(src: &[f32], taps: &[(u32, u32, f32)], out: &mut [f32]) {
    let n = src.len();
    if out.len() == 2 * n && n >= 2 {
        // Exact halving (the taps give the same weights and clamps): fine cell 2c + 1 sits
        // 1/4 and fine cell 2c + 2 sits 3/4 of the way from coarse c to c + 1; the two end
        // cells copy the end values.
        out[0] = src[0];
        out[2 * n - 1] = src[n - 1];
        let (a, b) = (&src[..n - 1], &src[1..]);
        for (c, pair) in out[1..2 * n - 1].chunks_exact_mut(2).enumerate() {
            pair[0] = crate::kernels::math::lerp(a[c], b[c], 0.25);
            pair[1] = crate::kernels::math::lerp(a[c], b[c], 0.75);
        }
        return;
    }
    for (o, &(i0, i1, wx)) in out.iter_mut().zip(taps) {
        *o = crate::kernels::math::lerp(src[i0 as usize], src[i1 as usize], wx);
    }
}
}

/// Natural-layout scratch for one level.
#[derive(Clone, Debug)]
struct Scratch {
    /// The level's unknowns, natural layout.
    e: Vec<f32>,
    /// The level's right-hand side, natural layout.
    b: Vec<f32>,
    /// The level's residual, then its correction from below.
    r: Vec<f32>,
}

impl Scratch {
    fn new(w: usize, h: usize) -> Self {
        Self {
            e: vec![0.0; w * h],
            b: vec![0.0; w * h],
            r: vec![0.0; w * h],
        }
    }
}

/// One coarse level of the multigrid hierarchy.
#[derive(Clone, Debug)]
struct Level {
    /// Correction.
    e: Split,
    /// Right-hand side.
    b: Split,
    /// This level's operator.
    op: Operator,
    /// From the next finer level to this one.
    restrict_x: RestrictTaps,
    restrict_y: RestrictTaps,
    /// From this level to the next finer one.
    prolong_x: ProlongTaps,
    prolong_y: ProlongTaps,
    /// Transfer scratch: finer rows x this level's columns (restriction), or this level's rows
    /// x finer columns (prolongation).
    transfer: Vec<f32>,
    scratch: Scratch,
}

/// The finest level's couplings with obstacles, in both layouts.
#[derive(Clone, Debug)]
struct LevelFaces {
    natural: Faces,
    /// Per row, its couplings between the ends when they are all the same (`faces::constant_rows`).
    constant: Vec<Option<[f32; 3]>>,
    split: SplitFaces,
    /// The fluid regions (when the finest level is also the coarsest, whose solve needs them).
    regions: Option<Regions>,
}

impl LevelFaces {
    fn new(natural: Faces, coarsest: bool) -> Self {
        Self {
            split: SplitFaces::new(&natural),
            regions: coarsest.then(|| Regions::new(&natural)),
            constant: faces::constant_rows(&natural),
            natural,
        }
    }
}

/// The coarse levels around a mask, built by [`Multigrid::coarse_levels`].
#[derive(Clone, Debug)]
pub struct CoarseLevels(Nodes);

/// Multigrid workspace for a `w x h` grid: the coarse levels (the finest level's solution and
/// right-hand side belong to the caller).
#[derive(Clone, Debug)]
pub struct Multigrid {
    levels: Vec<Level>,
    /// The finest level's natural-layout scratch.
    finest: Scratch,
    /// The finest level's obstacles, if any.
    finest_faces: Option<LevelFaces>,
    /// The coarse levels around obstacles, if any (and if there are coarse levels).
    nodes: Option<Nodes>,
}

impl Multigrid {
    /// Build the hierarchy below a `w x h` grid: halve (rounding up) until the short side is at
    /// most 4 cells.
    pub fn new(w: usize, h: usize) -> Self {
        let levels = plan(w, h)
            .into_iter()
            .map(|p| Level {
                e: Split::zeros(p.w, p.h),
                b: Split::zeros(p.w, p.h),
                op: p.op,
                transfer: vec![0.0; (p.fine_h * p.w).max(p.h * p.fine_w)],
                scratch: Scratch::new(p.w, p.h),
                restrict_x: p.restrict_x,
                restrict_y: p.restrict_y,
                prolong_x: p.prolong_x,
                prolong_y: p.prolong_y,
            })
            .collect();
        Self {
            levels,
            finest: Scratch::new(w, h),
            finest_faces: None,
            nodes: None,
        }
    }

    /// Solve around obstacles: the finest level's couplings (`None`: no obstacles); the
    /// coarse levels become node graphs (`sim::obstacles::nodes`).
    pub fn set_faces(&mut self, faces: Option<&Faces>) {
        let coarse = faces.and_then(Self::coarse_levels);
        self.set_faces_with(faces, coarse);
    }

    /// The coarse levels' node graphs around `faces`, laid out for the solve (the heavy part
    /// of [`Self::set_faces`], which needs no multigrid: it can be built while other work
    /// runs).
    pub fn coarse_levels(faces: &Faces) -> Option<CoarseLevels> {
        let plans = plan(faces.w, faces.h);
        let hierarchy = Hierarchy::new(faces, &plans)?;
        Some(CoarseLevels(Nodes::new(hierarchy, &plans)))
    }

    /// [`Self::set_faces`] with the coarse levels already built ([`Self::coarse_levels`] of
    /// `faces`).
    pub fn set_faces_with(&mut self, faces: Option<&Faces>, coarse: Option<CoarseLevels>) {
        self.nodes = coarse.map(|c| c.0);
        let coarsest = self.levels.is_empty();
        self.finest_faces = faces.map(|f| LevelFaces::new(f.clone(), coarsest));
    }

    /// Number of levels including the finest.
    pub fn depth(&self) -> usize {
        self.levels.len() + 1
    }

    /// `cycles` V(2,2)-cycles of `A q = b`, warm-started from `q`.
    pub fn solve(&mut self, q: &mut Split, b: &Split, cycles: u32) {
        b.write_natural(&mut self.finest.b, 0.0);
        if let (Some(f), Some(nodes)) = (&self.finest_faces, &mut self.nodes) {
            for _ in 0..cycles {
                v_cycle_nodes(q, b, f, &mut self.finest, nodes);
            }
            return;
        }
        for _ in 0..cycles {
            let faces = self.finest_faces.as_ref();
            v_cycle(
                q,
                b,
                Operator::UNIT,
                faces,
                &mut self.finest,
                &mut self.levels,
            );
        }
    }
}

/// One V-cycle around obstacles: the finest level with its per-face couplings, the coarse
/// levels on their node graphs (`nodes`).
fn v_cycle_nodes(
    e: &mut Split,
    b: &Split,
    faces: &LevelFaces,
    scratch: &mut Scratch,
    nodes: &mut Nodes,
) {
    let split = Some(&faces.split);
    rb_sor_op(e, b, MG_PRE_SWEEPS, 1.0, Operator::UNIT, split);
    let (w, h) = (e.w, e.h);
    e.write_natural(&mut scratch.e, 0.0);
    let natural = Some((&faces.natural, &faces.constant[..]));
    residual(
        &scratch.e,
        &scratch.b,
        w,
        h,
        Operator::UNIT,
        natural,
        &mut scratch.r,
    );
    nodes.correction(&scratch.r, &mut scratch.e, MG_NODE_SWEEPS);
    e.add_natural(&scratch.e);
    rb_sor_op(e, b, MG_POST_SWEEPS, 1.0, Operator::UNIT, split);
}

fn v_cycle(
    e: &mut Split,
    b: &Split,
    op: Operator,
    faces: Option<&LevelFaces>,
    scratch: &mut Scratch,
    coarser: &mut [Level],
) {
    let split = faces.map(|f| &f.split);
    let Some((next, rest)) = coarser.split_first_mut() else {
        // Coarsest level: relax to convergence. The grid is at most 4 cells on its short side
        // and rarely more than ~10 on the long one; 4 * (w + h) SOR sweeps is plenty.
        let mut b = b.clone();
        match faces.and_then(|f| f.regions.as_ref()) {
            Some(regions) => faces::remove_means_split(regions, &mut b),
            None => b.remove_mean(),
        }
        rb_sor_op(e, &b, coarsest_sweeps(e.w, e.h), COARSEST_OMEGA, op, split);
        return;
    };
    debug_assert!(
        faces.is_none(),
        "around obstacles the coarse levels are node graphs"
    );
    rb_sor_op(e, b, MG_PRE_SWEEPS, 1.0, op, None);
    let (w, h) = (e.w, e.h);
    e.write_natural(&mut scratch.e, 0.0);
    residual(&scratch.e, &scratch.b, w, h, op, None, &mut scratch.r);
    restrict(&scratch.r, w, h, next);
    next.e.clear();
    let Level {
        e: ne,
        b: nb,
        op: nop,
        scratch: ns,
        ..
    } = next;
    v_cycle(ne, nb, *nop, None, ns, rest);
    prolongate(next, w, h, &mut scratch.r);
    e.add_natural(&scratch.r);
    rb_sor_op(e, b, MG_POST_SWEEPS, 1.0, op, None);
}

kernel! {
/// Residual `r = b - A e` of one natural row, Neumann at the walls.
#[allow(clippy::too_many_arguments)]
pub(super) fn residual_row(
    e: &[f32],
    e_dn: Option<&[f32]>,
    e_up: Option<&[f32]>,
    b: &[f32],
    out: &mut [f32],
    cx: f32,
    cy: f32,
) {
    let w = out.len();
    let generic = |i: usize| -> f32 {
        let c = e[i];
        let mut acc = b[i];
        if i > 0 {
            acc -= cx * (c - e[i - 1]);
        }
        if i + 1 < w {
            acc -= cx * (c - e[i + 1]);
        }
        if let Some(d) = e_dn {
            acc -= cy * (c - d[i]);
        }
        if let Some(u) = e_up {
            acc -= cy * (c - u[i]);
        }
        acc
    };
    let (Some(dn), Some(up)) = (e_dn, e_up) else {
        for (i, o) in out.iter_mut().enumerate() {
            *o = generic(i);
        }
        return;
    };
    if w < 3 {
        for (i, o) in out.iter_mut().enumerate() {
            *o = generic(i);
        }
        return;
    }
    out[0] = generic(0);
    out[w - 1] = generic(w - 1);
    let n = w - 2;
    let (l, c, r) = (&e[..n], &e[1..n + 1], &e[2..n + 2]);
    let (d, u, bb) = (&dn[1..n + 1], &up[1..n + 1], &b[1..n + 1]);
    for (k, o) in out[1..n + 1].iter_mut().enumerate() {
        let two_c = c[k] + c[k];
        let lap_x = two_c - (l[k] + r[k]);
        let lap_y = two_c - (d[k] + u[k]);
        *o = bb[k] - cx.mul_add(lap_x, cy * lap_y);
    }
}
}

/// Residual of a whole level, natural layout.
fn residual(
    e: &[f32],
    b: &[f32],
    w: usize,
    h: usize,
    op: Operator,
    faces: Option<(&Faces, &[Option<[f32; 3]>])>,
    out: &mut [f32],
) {
    out.par_chunks_mut(w)
        .with_min_len(min_rows(w))
        .enumerate()
        .for_each(|(j, row)| {
            let line = |r: usize| &e[r * w..(r + 1) * w];
            if let Some((f, constant)) = faces {
                residual_row_faces(
                    line(j),
                    line(j.saturating_sub(1)),
                    line((j + 1).min(h - 1)),
                    &b[j * w..(j + 1) * w],
                    row,
                    &f.x[j * (w + 1)..(j + 1) * (w + 1)],
                    &f.y[j * w..(j + 1) * w],
                    &f.y[(j + 1) * w..(j + 2) * w],
                    constant[j],
                );
                return;
            }
            residual_row(
                line(j),
                (j > 0).then(|| line(j - 1)),
                (j + 1 < h).then(|| line(j + 1)),
                &b[j * w..(j + 1) * w],
                row,
                op.cx,
                op.cy,
            );
        });
}

/// Coarse right-hand side: each coarse cell gathers the residual of the finer cells it
/// covers, weighted by the fraction of each finer cell inside it (the integral of the
/// residual over the coarse cell, in the finer level's units). Separable: rows, then columns.
fn restrict(r: &[f32], fw: usize, fh: usize, coarse: &mut Level) {
    let (rx, ry) = (&coarse.restrict_x, &coarse.restrict_y);
    let b_nat = &mut coarse.scratch.b;
    restrict_natural(r, (fw, fh), (rx, ry), &mut coarse.transfer, b_nat);
    coarse.b.assign_natural(b_nat);
}

/// [`restrict`] of `r` (natural layout, `fw x fh`) into `out` (natural layout, as many
/// columns as `rx` has coarse cells); `tmp` is scratch of at least `fh` rows of those.
pub(super) fn restrict_natural(
    r: &[f32],
    (fw, fh): (usize, usize),
    (rx, ry): (&RestrictTaps, &RestrictTaps),
    tmp: &mut [f32],
    out: &mut [f32],
) {
    let cw = rx.first.len();
    let tmp = &mut tmp[..fh * cw];
    tmp.par_chunks_mut(cw)
        .with_min_len(min_rows(fw))
        .enumerate()
        .for_each(|(j, out)| {
            restrict_row_x(&r[j * fw..(j + 1) * fw], &rx.first, &rx.frac, out);
        });
    let tmp = &*tmp;
    out.par_chunks_mut(cw)
        .with_min_len(min_rows(2 * cw))
        .enumerate()
        .for_each(|(cj, out)| {
            let first = ry.first[cj] as usize;
            let row = |t: usize| {
                let j = (first + t).min(fh - 1);
                &tmp[j * cw..(j + 1) * cw]
            };
            restrict_rows_y([row(0), row(1), row(2)], ry.frac[cj], out);
        });
}

/// The bilinear interpolation of the coarse correction at each finer cell's centre, into
/// `out` (natural layout, `fw x fh`). Separable: columns, then rows.
fn prolongate(coarse: &mut Level, fw: usize, fh: usize, out: &mut [f32]) {
    let (cw, ch) = (coarse.e.w, coarse.e.h);
    let ce = &mut coarse.scratch.e;
    coarse.e.write_natural(ce, 0.0);
    let taps = (&coarse.prolong_x, &coarse.prolong_y);
    prolongate_natural(ce, (cw, ch), taps, &mut coarse.transfer, out);
    debug_assert!(fw == coarse.prolong_x.0.len() && fh == coarse.prolong_y.0.len());
}

/// [`prolongate`] of `coarse` (natural layout, `cw x ch`) into `out` (natural layout, as
/// many cells as `px` and `py` have finer ones); `tmp` is scratch of at least `ch` finer rows.
pub(super) fn prolongate_natural(
    coarse: &[f32],
    (cw, ch): (usize, usize),
    (px, py): (&ProlongTaps, &ProlongTaps),
    tmp: &mut [f32],
    out: &mut [f32],
) {
    let (px, py) = (&px.0, &py.0);
    let fw = px.len();
    let tmp = &mut tmp[..ch * fw];
    tmp.par_chunks_mut(fw)
        .with_min_len(min_rows(fw))
        .enumerate()
        .for_each(|(cj, row)| {
            prolong_row_x(&coarse[cj * cw..(cj + 1) * cw], px, row);
        });
    let tmp = &*tmp;
    out[..py.len() * fw]
        .par_chunks_mut(fw)
        .with_min_len(min_rows(fw))
        .enumerate()
        .for_each(|(j, row)| {
            let (j0, j1, wy) = py[j];
            let (j0, j1) = (j0 as usize, j1 as usize);
            lerp_rows(
                &tmp[j0 * fw..(j0 + 1) * fw],
                &tmp[j1 * fw..(j1 + 1) * fw],
                wy,
                row,
            );
        });
}

kernel! {
fn lerp_rows(a: &[f32], b: &[f32], t: f32, out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = crate::kernels::math::lerp(a[i], b[i], t);
    }
}
}
