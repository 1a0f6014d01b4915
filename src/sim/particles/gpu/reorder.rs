//! The end of the sort stage on the GPU (`shaders/particle_reorder.wgsl`): once the sort gave
//! `order`, the particles gathered into their sorted copies (positions, velocities, predicted
//! positions in one pass, colours in another), as the CPU's `Particles::predict_and_sort`
//! reorders them. The driver copies the sorted copies back.

use super::groups;
use crate::gpu::kernel::{Binding, Kernel, particle_module, storage};

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

/// The particles' own buffers on the GPU, for up to `capacity` particles: positions,
/// velocities and predicted positions (`vecD`: 8 bytes a particle in 2D, 16 in 3D), colours
/// with their serial numbers (16), their sorted copies, and the densities (8).
pub struct Motion {
    pub capacity: usize,
    /// The bytes of one particle's position (and velocity, predicted position).
    pub stride: usize,
    pub pos: wgpu::Buffer,
    pub vel: wgpu::Buffer,
    pub pred: wgpu::Buffer,
    pub color: wgpu::Buffer,
    pub spos: wgpu::Buffer,
    pub svel: wgpu::Buffer,
    pub spred: wgpu::Buffer,
    pub scolor: wgpu::Buffer,
    pub density: wgpu::Buffer,
}

impl Motion {
    /// Buffers for `capacity` particles in `dim` dimensions, labelled after `owner`.
    pub fn new(device: &wgpu::Device, owner: &str, dim: usize, capacity: usize) -> Self {
        let stride = if dim == 2 { 8 } else { 16 };
        let make = |what: &str, bytes: usize| {
            storage(
                device,
                &format!("{owner}: {what}"),
                (capacity * bytes) as u64,
            )
        };
        Self {
            capacity,
            stride,
            pos: make("positions", stride),
            vel: make("velocities", stride),
            pred: make("predicted positions", stride),
            color: make("colours and serial numbers", 16),
            spos: make("sorted positions", stride),
            svel: make("sorted velocities", stride),
            spred: make("sorted predicted positions", stride),
            scolor: make("sorted colours", 16),
            density: make("densities", 8),
        }
    }

    /// The gather's bind groups over these buffers, with the cell sort's uniform `c` and
    /// `order` (see [`Reorder::bind`]).
    pub fn bind_reorder(
        &self,
        device: &wgpu::Device,
        reorder: &Reorder,
        c: &wgpu::Buffer,
        order: &wgpu::Buffer,
    ) -> ReorderGroups {
        reorder.bind(
            device,
            (c, order),
            [&self.pos, &self.vel, &self.pred, &self.color],
            [&self.spos, &self.svel, &self.spred, &self.scolor],
        )
    }

    /// The sorted copies of the first `n` particles back into place.
    pub fn copy_sorted(&self, enc: &mut wgpu::CommandEncoder, n: usize) {
        let b = (n * self.stride) as u64;
        enc.copy_buffer_to_buffer(&self.spos, 0, &self.pos, 0, b);
        enc.copy_buffer_to_buffer(&self.svel, 0, &self.vel, 0, b);
        enc.copy_buffer_to_buffer(&self.spred, 0, &self.pred, 0, b);
        enc.copy_buffer_to_buffer(&self.scolor, 0, &self.color, 0, (n * 16) as u64);
    }

    /// Copy `old`'s first `n` particles (positions, velocities, colours, densities): a bigger
    /// set of buffers taking over.
    pub fn copy_from(&self, enc: &mut wgpu::CommandEncoder, old: &Motion, n: usize) {
        let b = (n * self.stride) as u64;
        enc.copy_buffer_to_buffer(&old.pos, 0, &self.pos, 0, b);
        enc.copy_buffer_to_buffer(&old.vel, 0, &self.vel, 0, b);
        enc.copy_buffer_to_buffer(&old.color, 0, &self.color, 0, (n * 16) as u64);
        enc.copy_buffer_to_buffer(&old.density, 0, &self.density, 0, (n * 8) as u64);
    }
}
