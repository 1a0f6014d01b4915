//! The grid fluid (stable fluids with PixelFlow's layer): its storage (64-byte aligned flat
//! buffers and the field set its solvers exchange), the CPU solver ([`cpu`]), the GPU solver
//! ([`gpu`]), the physics both share ([`physics`]), tracer particles and streamlines.

pub mod cpu;
pub mod gpu;
pub mod model;
pub mod particles;
pub mod physics;

use super::SimConfig;
use bytemuck::{Pod, Zeroable};
use std::ops::{Deref, DerefMut};

/// One cache line of floats; the unit of [`AlignedVec`]'s storage.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
struct Line([f32; 16]);

/// A flat `f32` buffer whose start is 64-byte aligned (measured 7-15 % faster passes than the
/// allocator's 16-byte alignment, PERF-NOTES 2026-11).
#[derive(Clone)]
pub struct AlignedVec {
    lines: Vec<Line>,
    len: usize,
}

impl AlignedVec {
    /// `len` zeros.
    pub fn zeros(len: usize) -> Self {
        Self {
            lines: vec![Line([0.0; 16]); len.div_ceil(16)],
            len,
        }
    }

    /// A copy of `data`.
    pub fn from_slice(data: &[f32]) -> Self {
        let mut v = Self::zeros(data.len());
        v.copy_from_slice(data);
        v
    }
}

impl Deref for AlignedVec {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        &bytemuck::cast_slice(&self.lines)[..self.len]
    }
}

impl DerefMut for AlignedVec {
    fn deref_mut(&mut self) -> &mut [f32] {
        &mut bytemuck::cast_slice_mut(&mut self.lines)[..self.len]
    }
}

impl std::fmt::Debug for AlignedVec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedVec(len {})", self.len)
    }
}

/// All the state of a fluid, in natural row-major layout (row 0 = bottom).
///
/// This is the exchange format between solvers: tests compare it, and a backend switch carries
/// it over.
#[derive(Clone, Debug, PartialEq)]
pub struct Fields {
    /// Simulation grid width in cells.
    pub width: usize,
    /// Simulation grid height in cells.
    pub height: usize,
    /// x velocity on vertical faces, `(width + 1) * height`, index `j * (width + 1) + i`.
    pub u: Vec<f32>,
    /// y velocity on horizontal faces, `width * (height + 1)`, index `j * width + i`.
    pub v: Vec<f32>,
    /// Scaled pressure `q` at cell centres, `width * height`.
    pub pressure: Vec<f32>,
    /// Dye grid width.
    pub dye_width: usize,
    /// Dye grid height.
    pub dye_height: usize,
    /// Dye R, G, B planes, `dye_width * dye_height` each.
    pub dye: [Vec<f32>; 3],
}

impl Fields {
    /// A fluid at rest with no dye, sized for `cfg`.
    pub fn zeros(cfg: &SimConfig) -> Self {
        let (w, h) = (cfg.width, cfg.height);
        let (dw, dh) = (cfg.dye_width(), cfg.dye_height());
        Self {
            width: w,
            height: h,
            u: vec![0.0; (w + 1) * h],
            v: vec![0.0; w * (h + 1)],
            pressure: vec![0.0; w * h],
            dye_width: dw,
            dye_height: dh,
            dye: std::array::from_fn(|_| vec![0.0; dw * dh]),
        }
    }

    /// These fields resampled (bilinear) to the grid sizes of `cfg`. Velocities are in canvas
    /// units, so they carry over unchanged in meaning; pressure restarts at 0 (it is only a warm
    /// start). Wall faces are zeroed. Non-finite values become 0.
    pub fn resampled(&self, cfg: &SimConfig) -> Self {
        let mut out = Self::zeros(cfg);
        if self.width == cfg.width && self.height == cfg.height {
            out.u.copy_from_slice(&self.u);
            out.v.copy_from_slice(&self.v);
            out.pressure.copy_from_slice(&self.pressure);
        } else {
            let (w, h) = (cfg.width, cfg.height);
            let (sw, sh) = (self.width, self.height);
            // A face or centre at canvas position (x, y) (in new-cell units) maps to the source
            // grid by the ratio of cell sizes.
            let sx = sw as f32 / w as f32;
            let sy = sh as f32 / h as f32;
            for j in 0..h {
                for i in 1..w {
                    let x = i as f32 * sx;
                    let y = (j as f32 + 0.5) * sy - 0.5;
                    out.u[j * (w + 1) + i] = sample(&self.u, sw + 1, sh, x, y);
                }
            }
            for j in 1..h {
                for i in 0..w {
                    let x = (i as f32 + 0.5) * sx - 0.5;
                    let y = j as f32 * sy;
                    out.v[j * w + i] = sample(&self.v, sw, sh + 1, x, y);
                }
            }
        }
        let (dw, dh) = (out.dye_width, out.dye_height);
        let sx = self.dye_width as f32 / dw as f32;
        let sy = self.dye_height as f32 / dh as f32;
        for (dst, src) in out.dye.iter_mut().zip(&self.dye) {
            if dw == self.dye_width && dh == self.dye_height {
                dst.copy_from_slice(src);
                continue;
            }
            for j in 0..dh {
                for i in 0..dw {
                    let x = (i as f32 + 0.5) * sx - 0.5;
                    let y = (j as f32 + 0.5) * sy - 0.5;
                    dst[j * dw + i] = sample(src, self.dye_width, self.dye_height, x, y);
                }
            }
        }
        for f in out
            .u
            .iter_mut()
            .chain(out.v.iter_mut())
            .chain(out.pressure.iter_mut())
            .chain(out.dye.iter_mut().flatten())
        {
            if !f.is_finite() {
                *f = 0.0;
            }
        }
        let (w, h) = (out.width, out.height);
        for j in 0..h {
            out.u[j * (w + 1)] = 0.0;
            out.u[j * (w + 1) + w] = 0.0;
        }
        for i in 0..w {
            out.v[i] = 0.0;
            out.v[h * w + i] = 0.0;
        }
        out
    }

    /// Total dye per channel (sum over cells).
    pub fn dye_totals(&self) -> [f64; 3] {
        std::array::from_fn(|c| self.dye[c].iter().map(|&x| f64::from(x)).sum())
    }
}

/// Bilinear sample of a `nx x ny` grid at index coordinates `(x, y)`, clamped to the grid.
pub fn sample(f: &[f32], nx: usize, ny: usize, x: f32, y: f32) -> f32 {
    crate::kernels::math::bilerp(f, nx, ny, x, y)
}
