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
use crate::sim::obstacles::Mask;

/// A mask and what the passes derive from it, built once when the obstacles change.
pub(super) struct Obstacles {
    pub mask: Mask,
    /// The pressure solve's couplings, natural and checkerboard layout.
    pub faces: Faces,
    pub split: SplitFaces,
    /// Connected fluid regions (each gets a mean-free right-hand side).
    regions: Regions,
    /// Interior faces that are closed: indices into `u` and into `v`.
    closed_u: Vec<u32>,
    closed_v: Vec<u32>,
    /// Dye cells inside solids: their indices, and a flag per dye cell.
    solid_dye: Vec<u32>,
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
        let solid_dye = (0..solid_dye_flags.len())
            .filter(|&k| solid_dye_flags[k])
            .map(|k| k as u32)
            .collect();
        Self {
            mask: mask.clone(),
            split: SplitFaces::new(&faces),
            regions: Regions::new(&faces),
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

    /// The pressure right-hand side from the divergence `d` (natural layout): `-d`, mean-free
    /// in every fluid region and 0 in solids; into `b` (checkerboard) and `self.b`.
    pub fn set_rhs(&mut self, d: &[f32], b: &mut Split) {
        for (out, &di) in self.b.iter_mut().zip(d) {
            *out = -di;
        }
        self.regions.remove_means(&mut self.b);
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
