//! The pressure equation around obstacles, as both solvers set it up: per-face couplings and
//! the connected fluid regions, built once per mask (the solves themselves are
//! `cpu::pressure` and pressure.wgsl).
//!
//! With a solid mask the Poisson equation of a fluid cell sums over its *open* faces only
//! (pure Neumann at solid faces, as at the canvas walls): `sum_f w_f (q_c - q_n) = b_c`, with
//! `w_f` the level's coupling (`cx` or `cy`) times the face's open fraction. Solid cells take
//! no part: all their faces are closed, their right-hand side is 0 and their pressure stays 0.
//!
//! The coarse multigrid levels around obstacles are built from these couplings as node graphs
//! (`super::nodes`).
//!
//! The constant per connected fluid region is the null space (one per region: an enclosed
//! pocket is its own), so right-hand sides are made mean-free region by region
//! ([`Regions::remove_means`]).

use super::Mask;
use crate::sim::multigrid::Operator;

/// Face couplings of one level, natural layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Faces {
    pub w: usize,
    pub h: usize,
    /// Vertical faces, `(w + 1) * h`: face `i` of row `j` couples cells `i - 1` and `i`.
    pub x: Vec<f32>,
    /// Horizontal faces, `w * (h + 1)`: face `j` of column `i` couples `(i, j - 1)` and
    /// `(i, j)`.
    pub y: Vec<f32>,
    /// The level's uniform operator (the coupling of a fully open face).
    pub op: Operator,
}

impl Faces {
    /// The finest level's couplings: 1 for an open face, 0 for a solid one or a wall.
    pub fn from_mask(mask: &Mask) -> Self {
        let (w, h) = (mask.width(), mask.height());
        let mut x = vec![0.0; (w + 1) * h];
        let mut y = vec![0.0; w * (h + 1)];
        for j in 0..h {
            for i in 0..=w {
                x[j * (w + 1) + i] = f32::from(u8::from(mask.u_open(i, j)));
            }
        }
        for j in 0..=h {
            for i in 0..w {
                y[j * w + i] = f32::from(u8::from(mask.v_open(i, j)));
            }
        }
        Self {
            w,
            h,
            x,
            y,
            op: Operator::UNIT,
        }
    }

    /// Total coupling of cell `(i, j)` (the diagonal of the operator).
    pub fn diagonal(&self, i: usize, j: usize) -> f32 {
        let (w, x, y) = (self.w, &self.x, &self.y);
        x[j * (w + 1) + i] + x[j * (w + 1) + i + 1] + y[j * w + i] + y[(j + 1) * w + i]
    }
}

/// The connected fluid regions of a level: cells joined through faces with a coupling above 0.
#[derive(Clone, Debug)]
pub struct Regions {
    /// Region of each cell (natural layout); `u32::MAX` for a cell with no open face.
    label: Vec<u32>,
    /// Cells per region.
    size: Vec<u32>,
}

impl Regions {
    pub fn new(faces: &Faces) -> Self {
        let (w, h) = (faces.w, faces.h);
        let mut label = vec![u32::MAX; w * h];
        let mut size = Vec::new();
        let mut stack = Vec::new();
        for start in 0..w * h {
            let (si, sj) = (start % w, start / w);
            if label[start] != u32::MAX || faces.diagonal(si, sj) <= 0.0 {
                continue;
            }
            let id = size.len() as u32;
            let mut n = 0u32;
            label[start] = id;
            stack.push(start);
            while let Some(c) = stack.pop() {
                n += 1;
                let (i, j) = (c % w, c / w);
                let mut visit = |open: f32, next: usize| {
                    if open > 0.0 && label[next] == u32::MAX {
                        label[next] = id;
                        stack.push(next);
                    }
                };
                if i > 0 {
                    visit(faces.x[j * (w + 1) + i], c - 1);
                }
                if i + 1 < w {
                    visit(faces.x[j * (w + 1) + i + 1], c + 1);
                }
                if j > 0 {
                    visit(faces.y[j * w + i], c - w);
                }
                if j + 1 < h {
                    visit(faces.y[(j + 1) * w + i], c + w);
                }
            }
            size.push(n);
        }
        Self { label, size }
    }

    /// How many regions there are.
    pub fn count(&self) -> usize {
        self.size.len()
    }

    /// The region of each cell (natural layout); `u32::MAX` for a cell with no open face.
    pub fn labels(&self) -> &[u32] {
        &self.label
    }

    /// Cells per region.
    pub fn sizes(&self) -> &[u32] {
        &self.size
    }

    /// Make `b` (natural layout) mean-free in every region, and 0 in cells outside them.
    pub fn remove_means(&self, b: &mut [f32]) {
        let mut sums = vec![0.0f64; self.size.len()];
        for (&l, &v) in self.label.iter().zip(b.iter()) {
            if l != u32::MAX {
                sums[l as usize] += f64::from(v);
            }
        }
        let means: Vec<f32> = sums
            .iter()
            .zip(&self.size)
            .map(|(&s, &n)| (s / f64::from(n)) as f32)
            .collect();
        for (&l, v) in self.label.iter().zip(b.iter_mut()) {
            *v = if l == u32::MAX {
                0.0
            } else {
                *v - means[l as usize]
            };
        }
    }
}
