//! The coarse multigrid levels around obstacles on the CPU: relaxation, residual, restriction,
//! prolongation and the coarsest solve on the node graphs of `sim::obstacles::nodes` (see
//! there for how the graphs are made). nodes.wgsl does the same on the GPU.

use crate::sim::multigrid::{COARSEST_OMEGA, coarsest_sweeps};
use crate::sim::obstacles::nodes::{Coarsest, Hierarchy, NodeLevel};
use rayon::prelude::*;

/// One coarse level with its unknowns.
#[derive(Clone, Debug)]
struct Work {
    level: NodeLevel,
    inv: Vec<f32>,
    /// Correction, right-hand side, residual (per node).
    e: Vec<f32>,
    b: Vec<f32>,
    r: Vec<f32>,
}

/// The coarse levels around one mask and their workspace.
#[derive(Clone, Debug)]
pub(super) struct Nodes {
    levels: Vec<Work>,
    coarsest: Coarsest,
}

impl Nodes {
    pub fn new(h: Hierarchy) -> Self {
        let levels = h
            .levels
            .into_iter()
            .map(|level| {
                let n = level.graph.len();
                Work {
                    inv: level.graph.inverse_diagonal(),
                    level,
                    e: vec![0.0; n],
                    b: vec![0.0; n],
                    r: vec![0.0; n],
                }
            })
            .collect();
        Self {
            levels,
            coarsest: h.coarsest,
        }
    }

    /// The coarse correction of a finer level whose residual is `r` (per finer node; at the
    /// finest level per cell, natural order), into `out` (same indexing): restrict, solve
    /// below by V-cycles, prolongate.
    pub fn correction(&mut self, r: &[f32], out: &mut [f32], sweeps: u32) {
        let Self { levels, coarsest } = self;
        restrict(&mut levels[0], r);
        cycle(levels, coarsest, sweeps);
        prolongate(&levels[0], out);
    }
}

/// Level `levels[0]`'s V-cycle on its right-hand side, from a zero correction.
fn cycle(levels: &mut [Work], coarsest: &Coarsest, sweeps: u32) {
    let Some((lv, rest)) = levels.split_first_mut() else {
        return;
    };
    lv.e.fill(0.0);
    if rest.is_empty() {
        solve_coarsest(lv, coarsest);
        return;
    }
    relax(lv, sweeps);
    residual(lv);
    restrict(&mut rest[0], &lv.r);
    cycle(rest, coarsest, sweeps);
    prolongate(&rest[0], &mut lv.r);
    lv.e.iter_mut().zip(&lv.r).for_each(|(e, c)| *e += c);
    relax(lv, sweeps);
}

/// Nodes per rayon task.
const CHUNK: usize = 2048;

kernel! {
/// Relax nodes `first..first + out.len()` of one colour (their values `out`) from the other
/// colour's values `other` (node `m` at `other[m - offset]`).
#[allow(clippy::too_many_arguments)]
fn relax_nodes(
    out: &mut [f32],
    first: usize,
    other: &[f32],
    offset: usize,
    b: &[f32],
    inv: &[f32],
    (start, nbr, weight): (&[u32], &[u32], &[f32]),
    omega: f32,
) {
    for (k, e) in out.iter_mut().enumerate() {
        let n = first + k;
        let range = start[n] as usize..start[n + 1] as usize;
        let mut sum = b[n];
        for (&m, &w) in nbr[range.clone()].iter().zip(&weight[range]) {
            sum = w.mul_add(other[m as usize - offset], sum);
        }
        let gs = sum * inv[n];
        *e = omega.mul_add(gs - *e, *e);
    }
}
}

kernel! {
/// `out = b - A e` for nodes `first..first + out.len()`.
fn residual_nodes(
    out: &mut [f32],
    first: usize,
    e: &[f32],
    b: &[f32],
    (start, nbr, weight): (&[u32], &[u32], &[f32]),
) {
    for (k, r) in out.iter_mut().enumerate() {
        let n = first + k;
        let range = start[n] as usize..start[n + 1] as usize;
        let mut flux = 0.0f32;
        for (&m, &w) in nbr[range.clone()].iter().zip(&weight[range]) {
            flux = w.mul_add(e[n] - e[m as usize], flux);
        }
        *r = b[n] - flux;
    }
}
}

kernel! {
/// `out` (nodes `first..`) = the weighted sums of the finer residual `r` over their finer
/// nodes.
fn restrict_nodes(
    out: &mut [f32],
    first: usize,
    r: &[f32],
    (start, child, weight): (&[u32], &[u32], &[f32]),
) {
    for (k, b) in out.iter_mut().enumerate() {
        let n = first + k;
        let range = start[n] as usize..start[n + 1] as usize;
        let mut sum = 0.0f32;
        for (&a, &w) in child[range.clone()].iter().zip(&weight[range]) {
            sum = w.mul_add(r[a as usize], sum);
        }
        *b = sum;
    }
}
}

kernel! {
/// `out` (finer nodes) = the four-tap interpolation of `e`.
fn prolong_nodes(out: &mut [f32], node: &[[u32; 4]], weight: &[[f32; 4]], e: &[f32]) {
    for ((o, n), w) in out.iter_mut().zip(node).zip(weight) {
        *o = w[0] * e[n[0] as usize]
            + w[1] * e[n[1] as usize]
            + w[2] * e[n[2] as usize]
            + w[3] * e[n[3] as usize];
    }
}
}

/// `sweeps` red-black Gauss-Seidel sweeps (over-relaxed by `omega`).
fn relax_omega(lv: &mut Work, sweeps: u32, omega: f32) {
    let red = lv.level.red;
    let g = &lv.level.graph;
    let graph = (&g.start[..], &g.nbr[..], &g.weight[..]);
    let (b, inv) = (&lv.b, &lv.inv);
    for _ in 0..sweeps {
        for colour in [0, 1] {
            let (reds, blacks) = lv.e.split_at_mut(red);
            let (mine, other, base, offset) = if colour == 0 {
                (reds, &*blacks, 0, red)
            } else {
                (blacks, &*reds, red, 0)
            };
            mine.par_chunks_mut(CHUNK).enumerate().for_each(|(c, out)| {
                relax_nodes(out, base + c * CHUNK, other, offset, b, inv, graph, omega);
            });
        }
    }
}

fn relax(lv: &mut Work, sweeps: u32) {
    relax_omega(lv, sweeps, 1.0);
}

/// `r = b - A e`.
fn residual(lv: &mut Work) {
    let g = &lv.level.graph;
    let graph = (&g.start[..], &g.nbr[..], &g.weight[..]);
    let (e, b) = (&lv.e, &lv.b);
    lv.r.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, out)| residual_nodes(out, c * CHUNK, e, b, graph));
}

/// `lv.b` = the weighted sums of the finer residual `r` over each node's finer nodes.
fn restrict(lv: &mut Work, r: &[f32]) {
    let l = &lv.level;
    let taps = (&l.child_start[..], &l.child[..], &l.child_weight[..]);
    lv.b.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, out)| restrict_nodes(out, c * CHUNK, r, taps));
}

/// `out` (per finer node) = the interpolation of `lv.e`.
fn prolongate(lv: &Work, out: &mut [f32]) {
    let (node, weight, e) = (&lv.level.tap_node, &lv.level.tap_weight, &lv.e);
    if e.is_empty() {
        // No node on this level (nothing coupled below: all solid, or only cells cut off
        // from each other): no correction. (Unused taps point at node 0.)
        out.fill(0.0);
        return;
    }
    out.par_chunks_mut(4 * CHUNK)
        .enumerate()
        .for_each(|(c, o)| {
            let range = c * 4 * CHUNK..c * 4 * CHUNK + o.len();
            prolong_nodes(o, &node[range.clone()], &weight[range], e);
        });
}

kernel! {
/// `out[k] = sum_m s[(first + k) n + m] b[m]`.
fn dense_rows(out: &mut [f32], first: usize, s: &[f32], b: &[f32]) {
    let n = b.len();
    for (k, o) in out.iter_mut().enumerate() {
        let row = &s[(first + k) * n..(first + k + 1) * n];
        let mut sum = 0.0f32;
        for (x, y) in row.iter().zip(b) {
            sum = x.mul_add(*y, sum);
        }
        *o = sum;
    }
}
}

/// The coarsest level: exactly (dense), or mean-free per region and relaxed.
fn solve_coarsest(lv: &mut Work, coarsest: &Coarsest) {
    let n = lv.e.len();
    match coarsest {
        Coarsest::Direct(s) => {
            let b = &lv.b;
            lv.e.par_chunks_mut(64)
                .enumerate()
                .for_each(|(c, out)| dense_rows(out, c * 64, s, b));
        }
        Coarsest::Sweeps(regions) => {
            let mut sums = vec![0.0f64; n];
            for (&[l, _], &b) in regions.iter().zip(&lv.b) {
                sums[l as usize] += f64::from(b);
            }
            for (&[l, size], b) in regions.iter().zip(lv.b.iter_mut()) {
                *b -= (sums[l as usize] / f64::from(size)) as f32;
            }
            let (w, h) = (lv.level.graph.w, lv.level.graph.h);
            relax_omega(lv, coarsest_sweeps(w, h), COARSEST_OMEGA);
        }
    }
}
