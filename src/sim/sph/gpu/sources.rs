//! What reaches the particles on the GPU from outside (`shaders/sph_sources.wgsl`): impulses
//! ([`Impulse`], as [`crate::sim::sph::Fluid::apply`]) and new particles that take the oldest ones'
//! slots when the budget is full (as [`crate::sim::sph::Fluid::remove_oldest`] then
//! [`crate::sim::sph::Fluid::add`]: the same particles, in other places of the arrays).
//!
//! Each particle carries its serial number in its colour's fourth component
//! ([`crate::gpu::serial`]), so the oldest are found without a search.

use crate::gpu::kernel::{Binding, Kernel, module, storage, uniform};
use crate::sim::sph::sources::Impulse;

/// The `@binding`s of sph_sources.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub const Q: Binding = Binding::new(0, "Q");
    pub const POS: Binding = Binding::new(1, "pos");
    pub const VEL: Binding = Binding::new(2, "vel");
    pub const COLOR: Binding = Binding::new(3, "color");
    pub const IMPULSE: Binding = Binding::new(4, "impulse");
    pub const FRESH: Binding = Binding::new(5, "fresh");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[Q, POS, VEL, COLOR, IMPULSE, FRESH];
}

/// The uniform `Sources` of sph_sources.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct SourcesUniform {
    pub n: u32,
    pub count: u32,
    pub recycle: u32,
    pub oldest: u32,
}

/// The struct `Impulse` of sph_sources.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct GpuImpulse {
    pub centre: [f32; 2],
    pub reach: f32,
    pub pull: u32,
    pub force: [f32; 2],
    pub calm: f32,
    pub _p: u32,
}

impl From<&Impulse> for GpuImpulse {
    fn from(i: &Impulse) -> Self {
        match *i {
            Impulse::Shock {
                centre,
                reach,
                force,
            } => Self {
                centre,
                reach,
                pull: 0,
                force,
                ..Self::default()
            },
            Impulse::Pull {
                centre,
                reach,
                pull,
                calm,
            } => Self {
                centre,
                reach,
                pull: 1,
                force: [pull, 0.0],
                calm,
                _p: 0,
            },
        }
    }
}

/// The struct `Fresh` of sph_sources.wgsl: a new particle.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct GpuFresh {
    pub pos: [f32; 2],
    pub vel: [f32; 2],
    /// Colour, and the serial number's bits.
    pub color: [f32; 4],
}

pub(crate) use crate::gpu::serial::{SERIAL_MASK, serial_from_f32, serial_to_f32};

/// The sources' pipelines.
pub(crate) struct SourceKernels {
    impulses: Kernel,
    recycle: Kernel,
    append: Kernel,
}

impl SourceKernels {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "sph_sources");
        Self {
            impulses: Kernel::new(device, &m, "impulses"),
            recycle: Kernel::new(device, &m, "recycle"),
            append: Kernel::new(device, &m, "append"),
        }
    }
}

/// The sources' buffers, and bind groups tied to the particles' buffers (built again only
/// when those or these grow).
pub(crate) struct GpuSources {
    uniform: wgpu::Buffer,
    impulse: wgpu::Buffer,
    impulse_cap: usize,
    fresh: wgpu::Buffer,
    fresh_cap: usize,
    groups: Option<[wgpu::BindGroup; 3]>,
}

/// The particles' buffers the sources write: positions, velocities, colours.
pub(crate) type Particles<'a> = (&'a wgpu::Buffer, &'a wgpu::Buffer, &'a wgpu::Buffer);

impl GpuSources {
    pub fn new(device: &wgpu::Device) -> Self {
        Self {
            uniform: uniform(device, "SPH: sources", &SourcesUniform::default()),
            impulse: storage(device, "SPH: impulses", 64 * 32),
            impulse_cap: 64,
            fresh: storage(device, "SPH: new particles", 512 * 32),
            fresh_cap: 512,
            groups: None,
        }
    }

    /// Forget the bind groups (the particles' buffers were replaced).
    pub fn unbind(&mut self) {
        self.groups = None;
    }

    fn groups(
        &mut self,
        device: &wgpu::Device,
        k: &SourceKernels,
        (pos, vel, color): Particles<'_>,
    ) -> &[wgpu::BindGroup; 3] {
        use binding as b;
        self.groups.get_or_insert_with(|| {
            let with_fresh = |kernel: &Kernel| {
                kernel.bind(
                    device,
                    &[
                        (b::Q, &self.uniform),
                        (b::POS, pos),
                        (b::VEL, vel),
                        (b::COLOR, color),
                        (b::FRESH, &self.fresh),
                    ],
                )
            };
            [
                k.impulses.bind(
                    device,
                    &[
                        (b::Q, &self.uniform),
                        (b::POS, pos),
                        (b::VEL, vel),
                        (b::IMPULSE, &self.impulse),
                    ],
                ),
                with_fresh(&k.recycle),
                with_fresh(&k.append),
            ]
        })
    }

    /// Put `impulses` on the `n` particles, in order.
    pub fn apply(
        &mut self,
        ctx: &crate::gpu::GpuContext,
        k: &SourceKernels,
        particles: Particles<'_>,
        n: usize,
        impulses: &[Impulse],
    ) {
        if impulses.is_empty() || n == 0 {
            return;
        }
        if impulses.len() > self.impulse_cap {
            self.impulse_cap = impulses.len().next_power_of_two();
            self.impulse = storage(&ctx.device, "SPH: impulses", (self.impulse_cap * 32) as u64);
            self.groups = None;
        }
        let list: Vec<GpuImpulse> = impulses.iter().map(GpuImpulse::from).collect();
        let q = &ctx.queue;
        q.write_buffer(&self.impulse, 0, bytemuck::cast_slice(&list));
        q.write_buffer(
            &self.uniform,
            0,
            bytemuck::bytes_of(&SourcesUniform {
                n: n as u32,
                count: list.len() as u32,
                ..Default::default()
            }),
        );
        let [g, ..] = self.groups(&ctx.device, k, particles);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("SPH: impulses"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&k.impulses.pipeline);
            pass.set_bind_group(0, g, &[]);
            pass.dispatch_workgroups(crate::sim::sph::gpu::groups(n), 1, 1);
        }
        ctx.queue.submit([enc.finish()]);
    }

    /// Give the `recycle` oldest of the `n` particles' slots (serial numbers from `oldest`)
    /// to the first of `fresh`, and put the rest after the `n` (the buffers hold them).
    pub fn add(
        &mut self,
        ctx: &crate::gpu::GpuContext,
        k: &SourceKernels,
        particles: Particles<'_>,
        (n, recycle, oldest): (usize, usize, u32),
        fresh: &[GpuFresh],
    ) {
        if fresh.is_empty() {
            return;
        }
        if fresh.len() > self.fresh_cap {
            self.fresh_cap = fresh.len().next_power_of_two();
            self.fresh = storage(
                &ctx.device,
                "SPH: new particles",
                (self.fresh_cap * 32) as u64,
            );
            self.groups = None;
        }
        let q = &ctx.queue;
        q.write_buffer(&self.fresh, 0, bytemuck::cast_slice(fresh));
        q.write_buffer(
            &self.uniform,
            0,
            bytemuck::bytes_of(&SourcesUniform {
                n: n as u32,
                count: fresh.len() as u32,
                recycle: recycle as u32,
                oldest,
            }),
        );
        let [_, rec, app] = self.groups(&ctx.device, k, particles);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("SPH: new particles"),
                timestamp_writes: None,
            });
            if recycle > 0 && n > 0 {
                pass.set_pipeline(&k.recycle.pipeline);
                pass.set_bind_group(0, rec, &[]);
                pass.dispatch_workgroups(crate::sim::sph::gpu::groups(n), 1, 1);
            }
            let rest = fresh.len() - recycle;
            if rest > 0 {
                pass.set_pipeline(&k.append.pipeline);
                pass.set_bind_group(0, app, &[]);
                pass.dispatch_workgroups(crate::sim::sph::gpu::groups(rest), 1, 1);
            }
        }
        ctx.queue.submit([enc.finish()]);
    }
}
