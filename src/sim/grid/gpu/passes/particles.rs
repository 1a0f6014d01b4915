//! Particles (particles.wgsl): the slots (a ring the host fills with each step's new
//! particles, emitted by the same code as the CPU's), their move through the flow, their
//! culling by new obstacles, and their drawing into the frame's particle light. Mirrors
//! cpu/particles.rs. Built at the first emission: a solver whose frames have no particles
//! holds no slots.

use crate::gpu::kernel::{Binding, Dispatcher, Kernel, module, storage};
use crate::sim::grid::gpu::buffers::Buffers;
use crate::sim::grid::particles::{GPU_CAPACITY, Particle};

/// The `@binding`s of particles.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const P: Binding = Binding::new(0, "P");
    pub const U: Binding = Binding::new(1, "u");
    pub const V: Binding = Binding::new(2, "v");
    pub const SOLID: Binding = Binding::new(3, "solid");
    pub const PARTICLES: Binding = Binding::new(4, "particles");
    pub const PLIGHT: Binding = Binding::new(5, "plight");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[P, U, V, SOLID, PARTICLES, PLIGHT];
}

/// Threads per workgroup (`PW` in particles.wgsl).
const PW: u32 = 256;

/// The particles pass.
pub(in crate::sim::grid::gpu) struct Particles {
    advect: Kernel,
    cull: Kernel,
    draw: Kernel,
    slots: wgpu::Buffer,
    /// `[velocity parity]`.
    advect_groups: [wgpu::BindGroup; 2],
    cull_group: wgpu::BindGroup,
    /// The draw's bind group and the particle-light buffer it was made for.
    draw_group: Option<(wgpu::Buffer, wgpu::BindGroup)>,
}

impl Particles {
    pub fn new(device: &wgpu::Device, b: &Buffers) -> Self {
        use binding::*;
        let m = module(device, "particles");
        let (advect, cull, draw) = (
            Kernel::new(device, &m, "advect_particles"),
            Kernel::new(device, &m, "cull_particles"),
            Kernel::new(device, &m, "draw_particles"),
        );
        let bytes = (GPU_CAPACITY * std::mem::size_of::<Particle>()) as u64;
        let slots = storage(device, "Buffer: particles", bytes);
        let p = &b.uniforms;
        Self {
            advect_groups: [0, 1].map(|i| {
                advect.bind(
                    device,
                    &[
                        (P, p),
                        (U, &b.u[i]),
                        (V, &b.v[i]),
                        (SOLID, &b.solid),
                        (PARTICLES, &slots),
                    ],
                )
            }),
            cull_group: cull.bind(device, &[(P, p), (SOLID, &b.solid), (PARTICLES, &slots)]),
            draw_group: None,
            advect,
            cull,
            draw,
            slots,
        }
    }

    /// Workgroups covering every slot.
    fn groups() -> (u32, u32) {
        ((GPU_CAPACITY as u32).div_ceil(PW), 1)
    }

    /// The slots' buffer.
    pub fn slots(&self) -> &wgpu::Buffer {
        &self.slots
    }

    /// Write `particles` into the slots from `first` on.
    pub fn upload(&self, queue: &wgpu::Queue, first: usize, particles: &[Particle]) {
        let offset = (first * std::mem::size_of::<Particle>()) as u64;
        queue.write_buffer(&self.slots, offset, bytemuck::cast_slice(particles));
    }

    /// Move the particles through velocity `vel`.
    pub fn encode_advect(&self, d: &mut Dispatcher, vel: usize) {
        d.go(&self.advect, &self.advect_groups[vel], Self::groups());
    }

    /// End the particles inside solid cells.
    pub fn encode_cull(&self, d: &mut Dispatcher) {
        d.go(&self.cull, &self.cull_group, Self::groups());
    }

    /// Draw the particles into `plight` (cleared by the caller).
    pub fn encode_draw(
        &mut self,
        device: &wgpu::Device,
        b: &Buffers,
        d: &mut Dispatcher,
        plight: &wgpu::Buffer,
    ) {
        use binding::*;
        if self
            .draw_group
            .as_ref()
            .is_none_or(|(bound, _)| bound != plight)
        {
            let group = self.draw.bind(
                device,
                &[(P, &b.uniforms), (PARTICLES, &self.slots), (PLIGHT, plight)],
            );
            self.draw_group = Some((plight.clone(), group));
        }
        let (_, group) = self.draw_group.as_ref().expect("bound above");
        d.go(&self.draw, group, Self::groups());
    }
}
