//! Splats (splat.wgsl): dye and momentum with Gaussian, block or radial footprints. Mirrors
//! cpu/splat.rs (`splat_velocity`, `splat_dye`).

use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, storage};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes};
use crate::sim::grid::physics::{CellSplat, MAX_PENDING_SPLATS};
use bytemuck::{Pod, Zeroable};

/// The `@binding`s of splat.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const P: Binding = Binding::new(0, "P");
    pub const SPLATS: Binding = Binding::new(1, "splats");
    pub const U: Binding = Binding::new(2, "u");
    pub const V: Binding = Binding::new(3, "v");
    pub const DYE: Binding = Binding::new(4, "dye");
    pub const HEAT: Binding = Binding::new(5, "heat");
    pub const SOLID: Binding = Binding::new(6, "solid");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[P, SPLATS, U, V, DYE, HEAT, SOLID];
}

/// `Splat` in splat.wgsl: one element of the splat list.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
pub(in crate::sim) struct GpuSplat {
    pub x: f32,
    pub y: f32,
    pub r: f32,
    pub reach: f32,
    pub dr: f32,
    pub dg: f32,
    pub db: f32,
    pub fx: f32,
    pub fy: f32,
    pub shape: u32,
    pub heat: f32,
    pub _pad: u32,
}

impl From<&CellSplat> for GpuSplat {
    fn from(s: &CellSplat) -> Self {
        Self {
            x: s.x,
            y: s.y,
            r: s.r,
            reach: s.reach,
            dr: s.dye[0],
            dg: s.dye[1],
            db: s.dye[2],
            fx: s.force[0],
            fy: s.force[1],
            shape: s.shape as u32,
            heat: s.heat,
            _pad: 0,
        }
    }
}

/// The splat pass: u, v and dye, per parity.
pub(in crate::sim::grid::gpu) struct Splat {
    splat_u: Kernel,
    splat_v: Kernel,
    splat_dye: Kernel,
    splat_heat: Kernel,
    /// `[velocity parity]`.
    u: [wgpu::BindGroup; 2],
    v: [wgpu::BindGroup; 2],
    /// `[dye parity]`.
    dye: [wgpu::BindGroup; 2],
    /// `[heat parity]`.
    heat: [wgpu::BindGroup; 2],
    splats: wgpu::Buffer,
    cells: (u32, u32),
    dye_cells: (u32, u32),
}

impl Splat {
    pub fn new(device: &wgpu::Device, b: &Buffers, s: &Sizes) -> Self {
        use binding::*;
        let m = module(device, "splat");
        let (splat_u, splat_v, splat_dye, splat_heat) = (
            Kernel::new(device, &m, "splat_u"),
            Kernel::new(device, &m, "splat_v"),
            Kernel::new(device, &m, "splat_dye"),
            Kernel::new(device, &m, "splat_heat"),
        );
        let splats = storage(
            device,
            "Buffer: splats",
            (MAX_PENDING_SPLATS * size_of::<GpuSplat>()) as u64,
        );
        let p = &b.uniforms;
        Self {
            u: [0, 1].map(|i| splat_u.bind(device, &[(P, p), (SPLATS, &splats), (U, &b.u[i])])),
            v: [0, 1].map(|i| splat_v.bind(device, &[(P, p), (SPLATS, &splats), (V, &b.v[i])])),
            dye: [0, 1]
                .map(|i| splat_dye.bind(device, &[(P, p), (SPLATS, &splats), (DYE, &b.dye[i])])),
            heat: [0, 1].map(|i| {
                let (heat, solid) = (&b.heat[i], &b.solid);
                splat_heat.bind(
                    device,
                    &[(P, p), (SPLATS, &splats), (HEAT, heat), (SOLID, solid)],
                )
            }),
            splat_u,
            splat_v,
            splat_dye,
            splat_heat,
            splats,
            cells: groups2(s.w, s.h),
            dye_cells: groups2(s.dw, s.dh),
        }
    }

    /// Upload this step's splats (at most `MAX_PENDING_SPLATS`).
    pub fn upload(&self, queue: &wgpu::Queue, list: &[GpuSplat]) {
        if !list.is_empty() {
            queue.write_buffer(&self.splats, 0, bytemuck::cast_slice(list));
        }
    }

    /// Apply the uploaded splats to velocity `vel` and dye `dye` in place.
    pub fn encode(&self, d: &mut Dispatcher, vel: usize, dye: usize) {
        d.go(&self.splat_u, &self.u[vel], self.cells);
        d.go(&self.splat_v, &self.v[vel], self.cells);
        d.go(&self.splat_dye, &self.dye[dye], self.dye_cells);
    }

    /// Apply the uploaded splats' heat to the temperature `heat` in place (solid cells: 0).
    pub fn encode_heat(&self, d: &mut Dispatcher, heat: usize) {
        d.go(&self.splat_heat, &self.heat[heat], self.cells);
    }
}
