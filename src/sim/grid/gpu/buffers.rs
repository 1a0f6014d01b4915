//! The fields every pass shares: velocity and dye (two of each, ping-ponged by parity), the
//! divergence and pressure right-hand side, the projection's pressure, and the reduction
//! results. Buffers only one pass uses belong to that pass.

use super::passes::reduce::slot;
use super::uniforms::GridUniforms;
use crate::gpu::kernel::{storage, uniform};
use crate::sim::SimConfig;

pub(super) use crate::gpu::bytes_f32;

/// Cell counts of the grids, and their workgroup counts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sizes {
    pub w: usize,
    pub h: usize,
    pub dw: usize,
    pub dh: usize,
}

impl Sizes {
    pub fn new(cfg: &SimConfig) -> Self {
        Self {
            w: cfg.width,
            h: cfg.height,
            dw: cfg.dye_width(),
            dh: cfg.dye_height(),
        }
    }

    /// u faces: `(w + 1) x h`.
    pub fn nu(&self) -> usize {
        (self.w + 1) * self.h
    }

    /// v faces: `w x (h + 1)`.
    pub fn nv(&self) -> usize {
        self.w * (self.h + 1)
    }

    /// Cells.
    pub fn nc(&self) -> usize {
        self.w * self.h
    }

    /// Dye cells (each RGBA).
    pub fn nd(&self) -> usize {
        self.dw * self.dh
    }
}

/// The shared buffers.
pub(super) struct Buffers {
    /// `GridUniforms` (common.wgsl).
    pub uniforms: wgpu::Buffer,
    pub u: [wgpu::Buffer; 2],
    pub v: [wgpu::Buffer; 2],
    /// RGBA dye (alpha unused).
    pub dye: [wgpu::Buffer; 2],
    /// Temperature per cell.
    pub heat: [wgpu::Buffer; 2],
    /// Solid flag (u32) per cell: all 0 without obstacles.
    pub solid: wgpu::Buffer,
    /// Divergence D.
    pub d: wgpu::Buffer,
    /// Pressure right-hand side b = -D (mean-free after `divergence_subtract_mean`).
    pub b: wgpu::Buffer,
    /// The projection's pressure, warm-started step to step.
    pub q: wgpu::Buffer,
    /// The other half of the pressure's out-of-place solves (Jacobi, red-black, the finest
    /// multigrid level's smoothing): it holds nothing between them.
    pub q_scratch: wgpu::Buffer,
    /// The last projection's pressure minus its mean, as the gradient subtracts it.
    pub q_centred: wgpu::Buffer,
    /// Reduction results, vec4 per [`slot`].
    pub results: wgpu::Buffer,
}

impl Buffers {
    pub fn new(device: &wgpu::Device, s: &Sizes) -> Self {
        let f = |label: &str, n: usize| storage(device, label, bytes_f32(n));
        Self {
            uniforms: uniform(device, "Uniform: grid", &GridUniforms::default()),
            u: [f("Buffer: u A", s.nu()), f("Buffer: u B", s.nu())],
            v: [f("Buffer: v A", s.nv()), f("Buffer: v B", s.nv())],
            dye: [
                f("Buffer: dye A", s.nd() * 4),
                f("Buffer: dye B", s.nd() * 4),
            ],
            heat: [f("Buffer: heat A", s.nc()), f("Buffer: heat B", s.nc())],
            solid: f("Buffer: solid cells", s.nc()),
            d: f("Buffer: divergence", s.nc()),
            b: f("Buffer: pressure rhs", s.nc()),
            q: f("Buffer: pressure", s.nc()),
            q_scratch: f("Buffer: pressure scratch", s.nc()),
            q_centred: f("Buffer: pressure centred", s.nc()),
            results: storage(device, "Buffer: reduction results", slot::COUNT * 16),
        }
    }
}
