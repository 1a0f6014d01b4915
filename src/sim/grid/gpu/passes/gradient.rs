//! Gradient subtraction (gradient.wgsl): centre the solved pressure on its mean, then
//! u_face -= q_right - q_left on interior faces. Mirrors cpu/gradient.rs
//! (`subtract_gradient`).

use super::divergence::SlotUniform;
use super::reduce::{Reduce, Reduction, slot};
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, uniform};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes};

/// The `@binding`s of gradient.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const P: Binding = Binding::new(0, "P");
    pub const G: Binding = Binding::new(1, "G");
    pub const Q: Binding = Binding::new(2, "q");
    pub const SUMS: Binding = Binding::new(3, "sums");
    pub const U: Binding = Binding::new(4, "u");
    pub const V: Binding = Binding::new(5, "v");
    pub const Q_CENTRED: Binding = Binding::new(6, "q_centred");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[P, G, Q, SUMS, U, V, Q_CENTRED];
}

/// The gradient pass.
pub(in crate::sim::grid::gpu) struct Gradient {
    centre: Kernel,
    subtract_u: Kernel,
    subtract_v: Kernel,
    /// The sum of q, and q minus its mean.
    q_sum: Reduction,
    centred: wgpu::BindGroup,
    /// `[velocity parity]`.
    u: [wgpu::BindGroup; 2],
    v: [wgpu::BindGroup; 2],
    cells: (u32, u32),
}

impl Gradient {
    pub fn new(device: &wgpu::Device, b: &Buffers, s: &Sizes, reduce: &Reduce) -> Self {
        use binding::*;
        let m = module(device, "gradient");
        let centre = Kernel::new(device, &m, "subtract_gradient_centre");
        let subtract_u = Kernel::new(device, &m, "subtract_gradient_u");
        let subtract_v = Kernel::new(device, &m, "subtract_gradient_v");
        let p = &b.uniforms;
        let nc = s.nc();
        let g = uniform(
            device,
            "Uniform: centre",
            &SlotUniform {
                slot: slot::Q,
                count: nc as u32,
                _p: [0; 2],
            },
        );
        let centred = centre.bind(
            device,
            &[
                (P, p),
                (G, &g),
                (Q, &b.q),
                (SUMS, &b.results),
                (Q_CENTRED, &b.q_centred),
            ],
        );
        Self {
            q_sum: reduce.reduction(device, &b.q, None, nc, slot::Q),
            centred,
            u: [0, 1].map(|i| {
                subtract_u.bind(device, &[(P, p), (U, &b.u[i]), (Q_CENTRED, &b.q_centred)])
            }),
            v: [0, 1].map(|i| {
                subtract_v.bind(device, &[(P, p), (V, &b.v[i]), (Q_CENTRED, &b.q_centred)])
            }),
            centre,
            subtract_u,
            subtract_v,
            cells: groups2(s.w, s.h),
        }
    }

    /// Subtract the projection's pressure gradient from velocity `vel`.
    pub fn encode(&self, d: &mut Dispatcher, reduce: &Reduce, vel: usize) {
        reduce.encode(d, &self.q_sum);
        d.go(&self.centre, &self.centred, self.cells);
        d.go(&self.subtract_u, &self.u[vel], self.cells);
        d.go(&self.subtract_v, &self.v[vel], self.cells);
    }
}
