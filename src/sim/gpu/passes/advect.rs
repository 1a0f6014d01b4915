//! Advection (advect.wgsl): semi-Lagrangian transport of the velocity by itself and of the dye
//! through it, with the dissipation and the limits fused in (as the CPU does). Writes the
//! other buffer of the pair. Mirrors cpu/advect.rs (`advect_velocity`, `advect_dye`).

use crate::sim::gpu::buffers::{Buffers, Sizes};
use crate::sim::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module};

/// The `@binding`s of advect.wgsl.
pub(in crate::sim::gpu) mod binding {
    use super::Binding;
    pub const P: Binding = Binding::new(0, "P");
    pub const U: Binding = Binding::new(1, "u");
    pub const V: Binding = Binding::new(2, "v");
    pub const U_OUT: Binding = Binding::new(3, "u_out");
    pub const V_OUT: Binding = Binding::new(4, "v_out");
    pub const DYE: Binding = Binding::new(5, "dye");
    pub const DYE_OUT: Binding = Binding::new(6, "dye_out");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[P, U, V, U_OUT, V_OUT, DYE, DYE_OUT];
}

/// The advection pass.
pub(in crate::sim::gpu) struct Advect {
    advect_u: Kernel,
    advect_v: Kernel,
    advect_dye: Kernel,
    /// `[velocity parity]`: reads `vel`, writes `1 - vel`.
    u: [wgpu::BindGroup; 2],
    v: [wgpu::BindGroup; 2],
    /// `[velocity parity][dye parity]`: reads `dye`, writes `1 - dye`.
    dye: [[wgpu::BindGroup; 2]; 2],
    sizes: Sizes,
}

impl Advect {
    pub fn new(device: &wgpu::Device, b: &Buffers, s: &Sizes) -> Self {
        use binding::*;
        let m = module(device, "advect");
        let advect_u = Kernel::new(device, &m, "advect_u");
        let advect_v = Kernel::new(device, &m, "advect_v");
        let advect_dye = Kernel::new(device, &m, "advect_dye");
        let p = &b.params;
        Self {
            u: [0, 1].map(|i| {
                advect_u.bind(
                    device,
                    &[(P, p), (U, &b.u[i]), (V, &b.v[i]), (U_OUT, &b.u[1 - i])],
                )
            }),
            v: [0, 1].map(|i| {
                advect_v.bind(
                    device,
                    &[(P, p), (U, &b.u[i]), (V, &b.v[i]), (V_OUT, &b.v[1 - i])],
                )
            }),
            dye: [0, 1].map(|i| {
                [0, 1].map(|pd| {
                    advect_dye.bind(
                        device,
                        &[
                            (P, p),
                            (U, &b.u[i]),
                            (V, &b.v[i]),
                            (DYE, &b.dye[pd]),
                            (DYE_OUT, &b.dye[1 - pd]),
                        ],
                    )
                })
            }),
            advect_u,
            advect_v,
            advect_dye,
            sizes: *s,
        }
    }

    /// Advect velocity `vel` by itself; returns the parity holding the result.
    pub fn encode_velocity(&self, d: &mut Dispatcher, vel: usize) -> usize {
        let s = &self.sizes;
        d.go(&self.advect_u, &self.u[vel], groups2(s.w + 1, s.h));
        d.go(&self.advect_v, &self.v[vel], groups2(s.w, s.h + 1));
        1 - vel
    }

    /// Advect dye `dye` through velocity `vel`; returns the parity holding the result.
    pub fn encode_dye(&self, d: &mut Dispatcher, vel: usize, dye: usize) -> usize {
        d.go(
            &self.advect_dye,
            &self.dye[vel][dye],
            groups2(self.sizes.dw, self.sizes.dh),
        );
        1 - dye
    }
}
