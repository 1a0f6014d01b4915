//! Advection (advect.wgsl): semi-Lagrangian transport of the velocity by itself and of the dye
//! through it, with the dissipation and the limits fused in (as the CPU does). Writes the
//! other buffer of the pair. Mirrors cpu/advect.rs (`advect_velocity`, `advect_dye`, and with
//! obstacles `advect_dye_near_solids`).

use super::obstacles::{Solids, list_groups};
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes};

/// The `@binding`s of advect.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const P: Binding = Binding::new(0, "P");
    pub const U: Binding = Binding::new(1, "u");
    pub const V: Binding = Binding::new(2, "v");
    pub const U_OUT: Binding = Binding::new(3, "u_out");
    pub const V_OUT: Binding = Binding::new(4, "v_out");
    pub const DYE: Binding = Binding::new(5, "dye");
    pub const DYE_OUT: Binding = Binding::new(6, "dye_out");
    pub const NEAR: Binding = Binding::new(7, "near");
    pub const NEAR_ENDS: Binding = Binding::new(8, "near_ends");
    pub const SOLID: Binding = Binding::new(9, "solid");
    pub const SUMS: Binding = Binding::new(10, "sums");
    pub const HEAT: Binding = Binding::new(11, "heat");
    pub const HEAT_OUT: Binding = Binding::new(12, "heat_out");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[
        P, U, V, U_OUT, V_OUT, DYE, DYE_OUT, NEAR, NEAR_ENDS, SOLID, SUMS, HEAT, HEAT_OUT,
    ];
}

/// The advection pass.
pub(in crate::sim::grid::gpu) struct Advect {
    advect_u: Kernel,
    advect_v: Kernel,
    advect_dye: Kernel,
    /// `[velocity parity]`: reads `vel`, writes `1 - vel`.
    u: [wgpu::BindGroup; 2],
    v: [wgpu::BindGroup; 2],
    /// `[velocity parity][dye parity]`: reads `dye`, writes `1 - dye`.
    dye: [[wgpu::BindGroup; 2]; 2],
    advect_heat: Kernel,
    /// `[velocity parity][heat parity]`: reads `heat`, writes `1 - heat`.
    heat: [[wgpu::BindGroup; 2]; 2],
    advect_dye_near_solids: Kernel,
    /// With obstacles: as `dye`, for the dye cells near solids; and how many cells are listed.
    near: Option<([[wgpu::BindGroup; 2]; 2], usize)>,
    sizes: Sizes,
}

impl Advect {
    pub fn new(device: &wgpu::Device, b: &Buffers, s: &Sizes) -> Self {
        use binding::*;
        let m = module(device, "advect");
        let advect_u = Kernel::new(device, &m, "advect_u");
        let advect_v = Kernel::new(device, &m, "advect_v");
        let advect_dye = Kernel::new(device, &m, "advect_dye");
        let advect_heat = Kernel::new(device, &m, "advect_heat");
        let p = &b.uniforms;
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
            heat: [0, 1].map(|i| {
                [0, 1].map(|ph| {
                    advect_heat.bind(
                        device,
                        &[
                            (P, p),
                            (U, &b.u[i]),
                            (V, &b.v[i]),
                            (HEAT, &b.heat[ph]),
                            (HEAT_OUT, &b.heat[1 - ph]),
                            (SOLID, &b.solid),
                        ],
                    )
                })
            }),
            advect_u,
            advect_v,
            advect_dye,
            advect_heat,
            advect_dye_near_solids: Kernel::new(device, &m, "advect_dye_near_solids"),
            near: None,
            sizes: *s,
        }
    }

    /// Advect the dye near the obstacles `solids` without sampling them (`None`: the plain
    /// pass alone).
    pub fn set_solids(&mut self, device: &wgpu::Device, b: &Buffers, solids: Option<&Solids>) {
        use binding::*;
        self.near = solids.filter(|s| s.near_count > 0).map(|s| {
            let groups = [0, 1].map(|i| {
                [0, 1].map(|pd| {
                    self.advect_dye_near_solids.bind(
                        device,
                        &[
                            (P, &b.uniforms),
                            (U, &b.u[i]),
                            (V, &b.v[i]),
                            (DYE, &b.dye[pd]),
                            (DYE_OUT, &b.dye[1 - pd]),
                            (NEAR, &s.near),
                            (NEAR_ENDS, &s.near_ends),
                            (SOLID, &s.solid),
                            (SUMS, &b.results),
                        ],
                    )
                })
            });
            (groups, s.near_count)
        });
    }

    /// Advect velocity `vel` by itself; returns the parity holding the result.
    pub fn encode_velocity(&self, d: &mut Dispatcher, vel: usize) -> usize {
        let s = &self.sizes;
        d.go(&self.advect_u, &self.u[vel], groups2(s.w + 1, s.h));
        d.go(&self.advect_v, &self.v[vel], groups2(s.w, s.h + 1));
        1 - vel
    }

    /// Advect the temperature `heat` through velocity `vel` (cooling, never sampling solids);
    /// returns the parity holding the result.
    pub fn encode_heat(&self, d: &mut Dispatcher, vel: usize, heat: usize) -> usize {
        let s = &self.sizes;
        d.go(&self.advect_heat, &self.heat[vel][heat], groups2(s.w, s.h));
        1 - heat
    }

    /// Advect dye `dye` through velocity `vel`; returns the parity holding the result. With
    /// obstacles, the largest |u| and |v| must be in their result slots already
    /// (`Obstacles::encode_speed`).
    pub fn encode_dye(&self, d: &mut Dispatcher, vel: usize, dye: usize) -> usize {
        d.go(
            &self.advect_dye,
            &self.dye[vel][dye],
            groups2(self.sizes.dw, self.sizes.dh),
        );
        if let Some((groups, count)) = &self.near {
            // Every listed cell gets a thread; those beyond this step's reach return at once.
            d.go(
                &self.advect_dye_near_solids,
                &groups[vel][dye],
                list_groups(*count),
            );
        }
        1 - dye
    }
}
