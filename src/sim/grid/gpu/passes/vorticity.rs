//! Vorticity confinement (vorticity.wgsl): cell forces from the curl, then the face updates.
//! Mirrors cpu/vorticity.rs (`confine`).

use super::Curl;
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, storage};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes, bytes_f32};

/// The `@binding`s of vorticity.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const P: Binding = Binding::new(0, "P");
    pub const CURL: Binding = Binding::new(1, "curl");
    pub const FX: Binding = Binding::new(2, "fx");
    pub const FY: Binding = Binding::new(3, "fy");
    pub const U: Binding = Binding::new(4, "u");
    pub const V: Binding = Binding::new(5, "v");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[P, CURL, FX, FY, U, V];
}

/// The confinement pass.
pub(in crate::sim::grid::gpu) struct Vorticity {
    confine_force: Kernel,
    confine_u: Kernel,
    confine_v: Kernel,
    force: wgpu::BindGroup,
    /// `[velocity parity]`.
    u: [wgpu::BindGroup; 2],
    v: [wgpu::BindGroup; 2],
    _forces: [wgpu::Buffer; 2],
    cells: (u32, u32),
}

impl Vorticity {
    pub fn new(device: &wgpu::Device, b: &Buffers, s: &Sizes, curl: &Curl) -> Self {
        use binding::*;
        let m = module(device, "vorticity");
        let (confine_force, confine_u, confine_v) = (
            Kernel::new(device, &m, "confine_force"),
            Kernel::new(device, &m, "confine_u"),
            Kernel::new(device, &m, "confine_v"),
        );
        let fx = storage(device, "Buffer: force x", bytes_f32(s.nc()));
        let fy = storage(device, "Buffer: force y", bytes_f32(s.nc()));
        let p = &b.uniforms;
        Self {
            force: confine_force.bind(device, &[(P, p), (CURL, &curl.out), (FX, &fx), (FY, &fy)]),
            u: [0, 1].map(|i| confine_u.bind(device, &[(P, p), (FX, &fx), (U, &b.u[i])])),
            v: [0, 1].map(|i| confine_v.bind(device, &[(P, p), (FY, &fy), (V, &b.v[i])])),
            confine_force,
            confine_u,
            confine_v,
            _forces: [fx, fy],
            cells: groups2(s.w, s.h),
        }
    }

    /// Confine velocity `vel` in place, from the curl [`Curl`] just computed.
    pub fn encode(&self, d: &mut Dispatcher, vel: usize) {
        d.go(&self.confine_force, &self.force, self.cells);
        d.go(&self.confine_u, &self.u[vel], self.cells);
        d.go(&self.confine_v, &self.v[vel], self.cells);
    }
}
