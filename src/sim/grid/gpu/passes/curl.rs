//! Curl (curl.wgsl): the vorticity at cell centres. Mirrors cpu/curl.rs (`curl`).

use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, storage};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes, bytes_f32};

/// The `@binding`s of curl.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const P: Binding = Binding::new(0, "P");
    pub const U: Binding = Binding::new(1, "u");
    pub const V: Binding = Binding::new(2, "v");
    pub const CURL_OUT: Binding = Binding::new(3, "curl_out");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[P, U, V, CURL_OUT];
}

/// The curl pass, writing its own `curl` buffer (read by [`super::Vorticity`]).
pub(in crate::sim::grid::gpu) struct Curl {
    curl: Kernel,
    /// `[velocity parity]`.
    groups: [wgpu::BindGroup; 2],
    pub out: wgpu::Buffer,
    cells: (u32, u32),
}

impl Curl {
    pub fn new(device: &wgpu::Device, b: &Buffers, s: &Sizes) -> Self {
        use binding::*;
        let m = module(device, "curl");
        let curl = Kernel::new(device, &m, "curl");
        let out = storage(device, "Buffer: curl", bytes_f32(s.nc()));
        Self {
            groups: [0, 1].map(|i| {
                curl.bind(
                    device,
                    &[
                        (P, &b.uniforms),
                        (U, &b.u[i]),
                        (V, &b.v[i]),
                        (CURL_OUT, &out),
                    ],
                )
            }),
            curl,
            out,
            cells: groups2(s.w, s.h),
        }
    }

    /// The curl of velocity `vel`.
    pub fn encode(&self, d: &mut Dispatcher, vel: usize) {
        d.go(&self.curl, &self.groups[vel], self.cells);
    }
}
