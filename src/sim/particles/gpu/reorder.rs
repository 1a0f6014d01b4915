//! The end of the sort stage on the GPU (`shaders/particle_reorder.wgsl`): once the sort gave
//! `order`, the particles gathered into their sorted copies (positions, velocities, predicted
//! positions in one pass, colours in another), as the CPU's `Particles::predict_and_sort`
//! reorders them. The driver copies the sorted copies back.

use super::groups;
use crate::gpu::kernel::{Binding, Kernel, particle_module};

/// The `@binding`s of particle_reorder.wgsl.
pub mod binding {
    use super::Binding;
    pub const C: Binding = Binding::new(0, "C");
    pub const ORDER: Binding = Binding::new(1, "order");
    pub const POS: Binding = Binding::new(2, "pos");
    pub const VEL: Binding = Binding::new(3, "vel");
    pub const PRED: Binding = Binding::new(4, "pred");
    pub const COLOR: Binding = Binding::new(5, "color");
    pub const SPOS: Binding = Binding::new(6, "spos");
    pub const SVEL: Binding = Binding::new(7, "svel");
    pub const SPRED: Binding = Binding::new(8, "spred");
    pub const SCOLOR: Binding = Binding::new(9, "scolor");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[C, ORDER, POS, VEL, PRED, COLOR, SPOS, SVEL, SPRED, SCOLOR];
}

/// The gather's two kernels in `D` dimensions, built once per device.
pub struct Reorder {
    motion: Kernel,
    color: Kernel,
}

/// The gather's bind groups over one set of buffers.
pub struct ReorderGroups {
    motion: wgpu::BindGroup,
    color: wgpu::BindGroup,
}

impl Reorder {
    pub fn new(device: &wgpu::Device, dim: usize) -> Self {
        let module = particle_module(device, "particle_reorder", dim);
        Self {
            motion: Kernel::new(device, &module, "reorder_motion"),
            color: Kernel::new(device, &module, "reorder_color"),
        }
    }

    /// The gather with the cell sort's uniform `c` (`CellSortUniform`: the particle count) and
    /// `order`, from the positions, velocities, predicted positions and colours into their
    /// sorted copies `to`, in the same order.
    pub fn bind(
        &self,
        device: &wgpu::Device,
        (c, order): (&wgpu::Buffer, &wgpu::Buffer),
        [pos, vel, pred, color]: [&wgpu::Buffer; 4],
        [spos, svel, spred, scolor]: [&wgpu::Buffer; 4],
    ) -> ReorderGroups {
        use binding::*;
        ReorderGroups {
            motion: self.motion.bind(
                device,
                &[
                    (C, c),
                    (ORDER, order),
                    (POS, pos),
                    (VEL, vel),
                    (PRED, pred),
                    (SPOS, spos),
                    (SVEL, svel),
                    (SPRED, spred),
                ],
            ),
            color: self.color.bind(
                device,
                &[(C, c), (ORDER, order), (COLOR, color), (SCOLOR, scolor)],
            ),
        }
    }

    /// The gather of `n` particles, in `pass`.
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>, g: &ReorderGroups, n: usize) {
        self.motion.dispatch(pass, &g.motion, groups(n));
        self.color.dispatch(pass, &g.color, groups(n));
    }
}
