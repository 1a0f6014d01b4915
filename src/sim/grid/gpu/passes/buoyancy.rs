//! Buoyancy and weight (buoyancy.wgsl): each cell's acceleration along the up direction from
//! its temperature and dye, then the face updates. Mirrors cpu/buoyancy.rs (`lift`, `apply`).

use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, storage};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes, bytes_f32};

/// The `@binding`s of buoyancy.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const P: Binding = Binding::new(0, "P");
    pub const HEAT: Binding = Binding::new(1, "heat");
    pub const DYE: Binding = Binding::new(2, "dye");
    pub const LIFT: Binding = Binding::new(3, "lift");
    pub const U: Binding = Binding::new(4, "u");
    pub const V: Binding = Binding::new(5, "v");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[P, HEAT, DYE, LIFT, U, V];
}

/// The buoyancy pass.
pub(in crate::sim::grid::gpu) struct Buoyancy {
    lift_cells: Kernel,
    lift_u: Kernel,
    lift_v: Kernel,
    /// `[heat parity][dye parity]`.
    cells: [[wgpu::BindGroup; 2]; 2],
    /// `[velocity parity]`.
    u: [wgpu::BindGroup; 2],
    v: [wgpu::BindGroup; 2],
    _lift: wgpu::Buffer,
    groups: (u32, u32),
}

impl Buoyancy {
    pub fn new(device: &wgpu::Device, b: &Buffers, s: &Sizes) -> Self {
        use binding::*;
        let m = module(device, "buoyancy");
        let (lift_cells, lift_u, lift_v) = (
            Kernel::new(device, &m, "lift_cells"),
            Kernel::new(device, &m, "lift_u"),
            Kernel::new(device, &m, "lift_v"),
        );
        let lift = storage(device, "Buffer: lift", bytes_f32(s.nc()));
        let p = &b.uniforms;
        Self {
            cells: [0, 1].map(|h| {
                [0, 1].map(|d| {
                    let (heat, dye) = (&b.heat[h], &b.dye[d]);
                    lift_cells.bind(device, &[(P, p), (HEAT, heat), (DYE, dye), (LIFT, &lift)])
                })
            }),
            u: [0, 1].map(|i| lift_u.bind(device, &[(P, p), (LIFT, &lift), (U, &b.u[i])])),
            v: [0, 1].map(|i| lift_v.bind(device, &[(P, p), (LIFT, &lift), (V, &b.v[i])])),
            lift_cells,
            lift_u,
            lift_v,
            _lift: lift,
            groups: groups2(s.w, s.h),
        }
    }

    /// Lift velocity `vel` in place by temperature `heat` and dye `dye`.
    pub fn encode(&self, d: &mut Dispatcher, vel: usize, heat: usize, dye: usize) {
        d.go(&self.lift_cells, &self.cells[heat][dye], self.groups);
        d.go(&self.lift_u, &self.u[vel], self.groups);
        d.go(&self.lift_v, &self.v[vel], self.groups);
    }
}
