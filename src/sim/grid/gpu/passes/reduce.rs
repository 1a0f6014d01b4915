//! Reductions (reduce.wgsl): sum, sum of squares and largest magnitude of a field, or the
//! warm-start dot products, in two stages into a result slot. Mirrors cpu/reduce.rs.

use crate::gpu::kernel::{Binding, Dispatcher, Kernel, module, storage, uniform};
use bytemuck::{Pod, Zeroable};

/// Workgroups of the first reduction stage (each folds a strided share of the field).
const MAX_REDUCE_GROUPS: usize = 1024;
/// Threads per reduction workgroup (`RW` in reduce.wgsl).
pub(in crate::sim) const REDUCE_THREADS: usize = 256;

/// The `@binding`s of reduce.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const R: Binding = Binding::new(0, "R");
    pub const X: Binding = Binding::new(1, "x");
    pub const Y: Binding = Binding::new(2, "y");
    pub const PARTIALS: Binding = Binding::new(3, "partials");
    pub const RESULTS: Binding = Binding::new(4, "results");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[R, X, Y, PARTIALS, RESULTS];
}

/// Result slots of the reductions (vec4 each: sum, sum of squares, max |x|).
pub(in crate::sim) mod slot {
    pub const DIV_BEFORE: u32 = 0;
    pub const DIV_AFTER: u32 = 1;
    /// The warm start's dot products (Jacobi and red-black).
    pub const DOTS: u32 = 2;
    /// The pressure's sum (its mean is subtracted).
    pub const Q: u32 = 3;
    pub const DIV_ADVECTED: u32 = 4;
    pub const U: u32 = 5;
    pub const V: u32 = 6;
    /// The activity probe's three slots: u, v and dye (see `activity.rs`).
    pub const ACTIVITY: u32 = 9;
    /// The largest |u| and |v| before dye advection, with obstacles (`SLOT_SPEED_U`,
    /// `SLOT_SPEED_V` in advect.wgsl).
    pub const SPEED_U: u32 = 12;
    pub const SPEED_V: u32 = 13;
    pub const COUNT: u64 = 16;
}

/// `Reduce` in reduce.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
pub(in crate::sim) struct ReduceUniform {
    pub n: u32,
    pub groups: u32,
    pub slot: u32,
    pub mode: u32,
}

/// The reduction kernels and the partials buffer every reduction shares (reductions run one
/// after another, never at once).
pub(in crate::sim::grid::gpu) struct Reduce {
    norms: Kernel,
    dots: Kernel,
    finish: Kernel,
    partials: wgpu::Buffer,
    results: wgpu::Buffer,
}

/// The bind groups of one reduction of one field into one result slot.
pub(in crate::sim::grid::gpu) struct Reduction {
    partial: wgpu::BindGroup,
    finish: wgpu::BindGroup,
    groups: u32,
    dots: bool,
}

impl Reduce {
    /// Kernels writing into `results`.
    pub fn new(device: &wgpu::Device, results: &wgpu::Buffer) -> Self {
        let m = module(device, "reduce");
        Self {
            norms: Kernel::new(device, &m, "reduce_norms"),
            dots: Kernel::new(device, &m, "reduce_dots"),
            finish: Kernel::new(device, &m, "reduce_finish"),
            partials: storage(
                device,
                "Buffer: reduction partials",
                (MAX_REDUCE_GROUPS * 16) as u64,
            ),
            results: results.clone(),
        }
    }

    /// A reduction of the first `n` values of `x` into result `slot`: its norms, or with `y`
    /// the warm-start dots `(b.Aq, Aq.Aq, scale)` of `x = b`, `y = -Aq`.
    pub fn reduction(
        &self,
        device: &wgpu::Device,
        x: &wgpu::Buffer,
        y: Option<&wgpu::Buffer>,
        n: usize,
        slot: u32,
    ) -> Reduction {
        use binding::*;
        let groups = n.div_ceil(REDUCE_THREADS).clamp(1, MAX_REDUCE_GROUPS) as u32;
        let u = uniform(
            device,
            "Uniform: reduce",
            &ReduceUniform {
                n: n as u32,
                groups,
                slot,
                mode: u32::from(y.is_some()),
            },
        );
        let partial = match y {
            Some(y) => self.dots.bind(
                device,
                &[(R, &u), (X, x), (Y, y), (PARTIALS, &self.partials)],
            ),
            None => self
                .norms
                .bind(device, &[(R, &u), (X, x), (PARTIALS, &self.partials)]),
        };
        let finish = self.finish.bind(
            device,
            &[
                (R, &u),
                (PARTIALS, &self.partials),
                (RESULTS, &self.results),
            ],
        );
        Reduction {
            partial,
            finish,
            groups,
            dots: y.is_some(),
        }
    }

    /// Encode reduction `r`.
    pub fn encode(&self, d: &mut Dispatcher, r: &Reduction) {
        let kernel = if r.dots { &self.dots } else { &self.norms };
        d.go(kernel, &r.partial, (r.groups, 1));
        d.go(&self.finish, &r.finish, (1, 1));
    }
}
