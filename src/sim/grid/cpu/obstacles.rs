//! Obstacles on the CPU solver's grid: the mask in the forms the passes use.
//!
//! Boundary rules (as PixelFlow's): no flow through a solid face, pure Neumann pressure at
//! solid faces (the pressure solve couples fluid cells through open faces only), no dye inside
//! solids, and a splat inside a solid does nothing. Faces are free-slip: only the velocity
//! *through* a solid face is held at 0, as at the canvas walls, so the flow streams along an
//! obstacle instead of sticking to it (no-slip would need ghost velocities in every pass for a
//! boundary layer a grid this coarse cannot resolve anyway).

use super::advect::NearSolids;
use super::pressure::{Faces, Regions, Split, SplitFaces};
use super::reduce::row_sum;
use crate::kernels::band::min_rows;
use crate::sim::obstacles::Mask;
use rayon::prelude::*;

/// A run of fluid cells of one region along a row: columns `start..end`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Run {
    start: u32,
    end: u32,
    label: u32,
}

/// The regions' cells as runs along the rows, for [`Obstacles::set_rhs`]: a per-cell loop
/// over the labels (a serial chain of f64 adds through a table) cost 4 % of a step among
/// pillars at 512x512; runs are summed and shifted by vectorised row loops, in parallel.
#[derive(Clone, Debug)]
struct Runs {
    w: usize,
    /// Row `j`'s runs are `runs[row[j]..row[j + 1]]`, left to right.
    row: Vec<u32>,
    runs: Vec<Run>,
    /// Cells per region.
    size: Vec<u32>,
    /// Scratch: a sum per run.
    sums: Vec<f64>,
}

impl Runs {
    fn new(regions: &Regions, w: usize, h: usize) -> Self {
        let labels = regions.labels();
        let mut row = vec![0u32];
        let mut runs = Vec::new();
        for j in 0..h {
            let line = &labels[j * w..(j + 1) * w];
            let mut i = 0;
            while i < w {
                let label = line[i];
                let start = i;
                while i < w && line[i] == label {
                    i += 1;
                }
                if label != u32::MAX {
                    runs.push(Run {
                        start: start as u32,
                        end: i as u32,
                        label,
                    });
                }
            }
            row.push(runs.len() as u32);
        }
        Self {
            w,
            sums: vec![0.0; runs.len()],
            row,
            runs,
            size: regions.sizes().to_vec(),
        }
    }

    /// `b = -d`, then mean-free in every region and 0 outside them (natural layout).
    fn negate_without_means(&mut self, d: &[f32], b: &mut [f32]) {
        let Self {
            w,
            row,
            runs,
            size,
            sums,
        } = self;
        let w = *w;
        // Each row's slice of the run sums.
        let mut rest = &mut sums[..];
        let mut per_row = Vec::with_capacity(row.len() - 1);
        for pair in row.windows(2) {
            let (mine, tail) = rest.split_at_mut((pair[1] - pair[0]) as usize);
            per_row.push(mine);
            rest = tail;
        }
        let rows = b.par_chunks_mut(w).zip(d.par_chunks(w)).zip(per_row);
        rows.with_min_len(min_rows(w))
            .enumerate()
            .for_each(|(j, ((out, d), sums))| {
                for (o, &x) in out.iter_mut().zip(d) {
                    *o = -x;
                }
                let mine = &runs[row[j] as usize..row[j + 1] as usize];
                for (s, r) in sums.iter_mut().zip(mine) {
                    *s = row_sum(&out[r.start as usize..r.end as usize]);
                }
            });
        // Means per region, summed in run order (the same for any thread count).
        let mut total = vec![0.0f64; size.len()];
        for (r, &s) in runs.iter().zip(sums.iter()) {
            total[r.label as usize] += s;
        }
        let means: Vec<f32> = total
            .iter()
            .zip(size.iter())
            .map(|(&s, &n)| (s / f64::from(n)) as f32)
            .collect();
        b.par_chunks_mut(w)
            .with_min_len(min_rows(w))
            .enumerate()
            .for_each(|(j, out)| {
                let mut next = 0;
                for r in &runs[row[j] as usize..row[j + 1] as usize] {
                    let (start, end) = (r.start as usize, r.end as usize);
                    out[next..start].fill(0.0);
                    let mean = means[r.label as usize];
                    out[start..end].iter_mut().for_each(|x| *x -= mean);
                    next = end;
                }
                out[next..].fill(0.0);
            });
    }
}

/// A mask and what the passes derive from it, built once when the obstacles change.
pub(super) struct Obstacles {
    pub mask: Mask,
    /// The pressure solve's couplings, natural and checkerboard layout.
    pub faces: Faces,
    pub split: SplitFaces,
    /// Connected fluid regions (each gets a mean-free right-hand side), as runs.
    runs: Runs,
    /// Interior faces that are closed: indices into `u` and into `v`.
    closed_u: Vec<u32>,
    closed_v: Vec<u32>,
    /// Dye cells inside solids: their indices, and a flag per dye cell.
    solid_dye: Vec<u32>,
    /// The simulation's cells inside solids (the temperature's grid).
    solid_cells: Vec<u32>,
    pub solid_dye_flags: Vec<bool>,
    /// Fluid dye cells near solids (advected again without sampling solids).
    pub near: NearSolids,
    /// The same for the simulation's cells (the temperature's grid).
    pub near_cells: NearSolids,
    /// The pressure right-hand side, natural layout (scratch, kept for the warm start).
    pub b: Vec<f32>,
}

impl Obstacles {
    /// For a mask already at the grid's size, and dye `dye_scale` times finer.
    /// `faces` are the mask's (`Faces::from_mask(mask)`).
    pub fn with_faces(mask: &Mask, faces: Faces, dye_scale: usize) -> Self {
        let (w, h) = (mask.width(), mask.height());
        let closed_u = (0..h)
            .flat_map(|j| (1..w).map(move |i| (i, j)))
            .filter(|&(i, j)| !mask.u_open(i, j))
            .map(|(i, j)| (j * (w + 1) + i) as u32)
            .collect();
        let closed_v = (1..h)
            .flat_map(|j| (0..w).map(move |i| (i, j)))
            .filter(|&(i, j)| !mask.v_open(i, j))
            .map(|(i, j)| (j * w + i) as u32)
            .collect();
        let dw = w * dye_scale;
        let solid_dye_flags: Vec<bool> = (0..h * dye_scale)
            .flat_map(|dj| (0..dw).map(move |di| (di, dj)))
            .map(|(di, dj)| mask.is_solid(di / dye_scale, dj / dye_scale))
            .collect();
        let flagged = |flags: &[bool]| -> Vec<u32> {
            let at = flags.iter().enumerate().filter(|&(_, &f)| f);
            at.map(|(k, _)| k as u32).collect()
        };
        let solid_dye = flagged(&solid_dye_flags);
        let solid_cells = flagged(mask.cells());
        Self {
            solid_cells,
            mask: mask.clone(),
            split: SplitFaces::new(&faces),
            runs: Runs::new(&Regions::new(&faces), w, h),
            faces,
            closed_u,
            closed_v,
            solid_dye,
            near: NearSolids::new(&solid_dye_flags, dw),
            near_cells: NearSolids::new(mask.cells(), w),
            solid_dye_flags,
            b: vec![0.0; w * h],
        }
    }

    /// Hold the velocity through every solid face at 0.
    pub fn close_faces(&self, u: &mut [f32], v: &mut [f32]) {
        for &k in &self.closed_u {
            u[k as usize] = 0.0;
        }
        for &k in &self.closed_v {
            v[k as usize] = 0.0;
        }
    }

    /// Clear the dye inside solids.
    pub fn clear_solid_dye(&self, dye: &mut [impl std::ops::DerefMut<Target = [f32]>; 3]) {
        for plane in dye.iter_mut() {
            for &k in &self.solid_dye {
                plane[k as usize] = 0.0;
            }
        }
    }

    /// Set a field of the simulation's cells (the temperature) to 0 inside solids.
    pub fn clear_solid_cells(&self, field: &mut [f32]) {
        for &k in &self.solid_cells {
            field[k as usize] = 0.0;
        }
    }

    /// The pressure right-hand side from the divergence `d` (natural layout): `-d`, mean-free
    /// in every fluid region and 0 in solids; into `b` (checkerboard) and `self.b`.
    pub fn set_rhs(&mut self, d: &[f32], b: &mut Split) {
        self.runs.negate_without_means(d, &mut self.b);
        b.assign_natural(&self.b);
    }
}

/// Set the cells of `field` that `solid` flags (one flag per cell) to 0.
pub(super) fn clear_solid_cells(solid: &[bool], field: &mut [f32]) {
    for (x, &solid) in field.iter_mut().zip(solid) {
        if solid {
            *x = 0.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::obstacles::Layout;

    /// The runs give what the per-cell labels give: `-d`, mean-free per region (an enclosed
    /// pocket is its own), 0 in solids.
    #[test]
    fn runs_remove_each_regions_mean() {
        // A closed square wall: a pocket inside it.
        let mut boxed = Mask::empty(97, 54);
        for t in 10..30 {
            for (i, j) in [(t, 10), (t, 29), (10, t), (29, t)] {
                boxed.set(i, j, true);
            }
        }
        let masks = [Layout::Ring, Layout::Maze, Layout::Pillars].map(|l| Mask::layout(l, 97, 54));
        for (n, mask) in masks.iter().chain([&boxed]).enumerate() {
            let (w, h) = (mask.width(), mask.height());
            let regions = Regions::new(&Faces::from_mask(mask));
            assert!(
                n < 3 || regions.count() == 2,
                "the box's pocket is a region"
            );
            let d: Vec<f32> = (0..w * h)
                .map(|k| ((k * 7919) % 1013) as f32 / 100.0 - 3.0)
                .collect();
            let mut want: Vec<f32> = d.iter().map(|x| -x).collect();
            regions.remove_means(&mut want);
            let mut runs = Runs::new(&regions, w, h);
            let mut got = vec![f32::NAN; w * h];
            runs.negate_without_means(&d, &mut got);
            for (k, (&a, &b)) in got.iter().zip(&want).enumerate() {
                assert!((a - b).abs() <= 1e-5, "mask {n} cell {k}: {a} against {b}");
                if mask.cells()[k] {
                    assert_eq!(a, 0.0, "solid cell {k}");
                }
            }
        }
    }
}
