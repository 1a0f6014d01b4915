//! Obstacles in the models: a [`Mask`] (the shared words' `fluid::mask`) read through face
//! queries. A face is open only if the cells on both sides are fluid, and the canvas edges are
//! always closed, so the outer walls and the obstacles follow one rule. `faces`, `near` and
//! `nodes` build what the solvers need from a mask.

pub use crate::fluid::mask::{Layout, MAX_MASK_CELLS, MAX_MASK_EDGE, Mask, MaskError, is_bright};

pub mod faces;
pub mod near;
pub mod nodes;

/// The face queries.
impl Mask {
    /// Whether the vertical face `i` of row `j` (between cells `i - 1` and `i`; `i` in
    /// `0..=width`) lets fluid through: both cells are fluid. The canvas edges never do.
    pub fn u_open(&self, i: usize, j: usize) -> bool {
        i > 0 && i < self.width() && !self.is_solid(i - 1, j) && !self.is_solid(i, j)
    }

    /// Whether the horizontal face `j` of column `i` (between cells `j - 1` and `j`; `j` in
    /// `0..=height`) lets fluid through.
    pub fn v_open(&self, i: usize, j: usize) -> bool {
        j > 0 && j < self.height() && !self.is_solid(i, j - 1) && !self.is_solid(i, j)
    }

    /// The largest speed through a closed interior face of velocity faces `u`
    /// (`(width + 1) x height`) and `v` (`width x (height + 1)`) on this mask's grid: 0 when
    /// the projection kept every solid face shut. The canvas edges are left out.
    pub fn closed_face_speed(&self, u: &[f32], v: &[f32]) -> f32 {
        let (w, h) = (self.width(), self.height());
        let mut flux = 0.0f32;
        for j in 0..h {
            for i in 1..w {
                if !self.u_open(i, j) {
                    flux = flux.max(u[j * (w + 1) + i].abs());
                }
            }
        }
        for j in 1..h {
            for i in 0..w {
                if !self.v_open(i, j) {
                    flux = flux.max(v[j * w + i].abs());
                }
            }
        }
        flux
    }
}

#[cfg(test)]
mod tests;
