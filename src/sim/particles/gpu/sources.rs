//! What reaches the particles on the GPU from outside (`shaders/particle_sources.wgsl`):
//! impulses ([`Impulse`], as [`crate::sim::particles::Particles::apply`]) in a row, and new
//! particles that take the oldest ones' slots when the budget is full (as
//! [`crate::sim::particles::Particles::add_burst`]: the same particles, in other places of the
//! arrays).
//!
//! Each particle carries its serial number in its colour's fourth component
//! ([`crate::gpu::serial`]), so the oldest are found without a search.

use super::groups;
use crate::gpu::GpuContext;
use crate::gpu::kernel::{Binding, Kernel, storage, uniform};
use crate::sim::particles::sources::Impulse;

/// The `@binding`s of particle_sources.wgsl.
pub mod binding {
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

/// The uniform `Sources` of particle_sources.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SourcesUniform {
    pub n: u32,
    pub count: u32,
    pub recycle: u32,
    pub oldest: u32,
}

/// The struct `Impulse` of particle_sources.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuImpulse {
    pub centre: [f32; 2],
    pub reach: f32,
    /// 0: a shock, 1: a pull (of `force[0]`, with `calm`), 2: a slosh.
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
            Impulse::Slosh { push } => Self {
                pull: 2,
                force: push,
                ..Self::default()
            },
        }
    }
}

/// The struct `Fresh` of particle_sources.wgsl in 2D: a new particle (the driver writes its
/// floats in this order, [`super::driver`]).
#[cfg(test)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuFresh2 {
    pub pos: [f32; 2],
    pub vel: [f32; 2],
    /// Colour, and the serial number's bits.
    pub color: [f32; 4],
}

/// The struct `Fresh` of particle_sources.wgsl in 3D (positions and velocities are stored as
/// `vec4`, the fourth component unused).
#[cfg(test)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuFresh3 {
    pub pos: [f32; 4],
    pub vel: [f32; 4],
    /// Colour, and the serial number's bits.
    pub color: [f32; 4],
}

/// The sources' pipelines (for one dimension).
pub struct SourceKernels {
    impulses: Kernel,
    recycle: Kernel,
    append: Kernel,
}

impl SourceKernels {
    /// The stage for `dim` (2 or 3) dimensions.
    pub fn new(device: &wgpu::Device, dim: usize) -> Self {
        let m = crate::gpu::kernel::particle_module(device, "particle_sources", dim);
        Self {
            impulses: Kernel::new(device, &m, "impulses"),
            recycle: Kernel::new(device, &m, "recycle"),
            append: Kernel::new(device, &m, "append"),
        }
    }
}

/// The particles' buffers the sources write: positions, velocities, colours.
pub type Buffers<'a> = (&'a wgpu::Buffer, &'a wgpu::Buffer, &'a wgpu::Buffer);

/// The sources' buffers, and bind groups tied to the particles' buffers (built again only
/// when those or these grow).
pub struct Sources {
    /// The fluid's name in the passes' labels.
    name: &'static str,
    uniform: wgpu::Buffer,
    impulse: wgpu::Buffer,
    impulse_cap: usize,
    fresh: wgpu::Buffer,
    fresh_cap: usize,
    /// Floats of one new particle (`Fresh`: 8 in 2D, 12 in 3D).
    fresh_floats: usize,
    groups: Option<[wgpu::BindGroup; 3]>,
}

impl Sources {
    /// The sources of particles in `dim` dimensions, their work labelled `name`.
    pub fn new(device: &wgpu::Device, name: &'static str, dim: usize) -> Self {
        let (impulse_cap, fresh_cap) = (64, 512);
        let fresh_floats = if dim == 2 { 8 } else { 12 };
        Self {
            name,
            uniform: uniform(device, name, &SourcesUniform::default()),
            impulse: storage(device, name, (impulse_cap * size_of::<GpuImpulse>()) as u64),
            impulse_cap,
            fresh: storage(device, name, (fresh_cap * fresh_floats * 4) as u64),
            fresh_cap,
            fresh_floats,
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
        (pos, vel, color): Buffers<'_>,
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
        ctx: &GpuContext,
        k: &SourceKernels,
        buffers: Buffers<'_>,
        n: usize,
        impulses: &[GpuImpulse],
    ) {
        if impulses.is_empty() || n == 0 {
            return;
        }
        if impulses.len() > self.impulse_cap {
            self.impulse_cap = impulses.len().next_power_of_two();
            let bytes = (self.impulse_cap * size_of::<GpuImpulse>()) as u64;
            self.impulse = storage(&ctx.device, self.name, bytes);
            self.groups = None;
        }
        let q = &ctx.queue;
        q.write_buffer(&self.impulse, 0, bytemuck::cast_slice(impulses));
        let u = SourcesUniform {
            n: n as u32,
            count: impulses.len() as u32,
            ..Default::default()
        };
        q.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
        let label = format!("{}: impulses", self.name);
        let [g, ..] = self.groups(&ctx.device, k, buffers);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(&label),
                timestamp_writes: None,
            });
            pass.set_pipeline(&k.impulses.pipeline);
            pass.set_bind_group(0, g, &[]);
            pass.dispatch_workgroups(groups(n), 1, 1);
        }
        ctx.queue.submit([enc.finish()]);
    }

    /// Give the `recycle` oldest of the `n` particles' slots (serial numbers from `oldest`)
    /// to the first of `fresh` (`Fresh` structs' floats, one after another), and put the rest
    /// after the `n` (the buffers hold them).
    pub fn add(
        &mut self,
        ctx: &GpuContext,
        k: &SourceKernels,
        buffers: Buffers<'_>,
        (n, recycle, oldest): (usize, usize, u32),
        fresh: &[f32],
    ) {
        let count = fresh.len() / self.fresh_floats;
        if count == 0 {
            return;
        }
        if count > self.fresh_cap {
            self.fresh_cap = count.next_power_of_two();
            let bytes = (self.fresh_cap * self.fresh_floats * 4) as u64;
            self.fresh = storage(&ctx.device, self.name, bytes);
            self.groups = None;
        }
        let q = &ctx.queue;
        q.write_buffer(&self.fresh, 0, bytemuck::cast_slice(fresh));
        let u = SourcesUniform {
            n: n as u32,
            count: count as u32,
            recycle: recycle as u32,
            oldest,
        };
        q.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
        let label = format!("{}: new particles", self.name);
        let [_, rec, app] = self.groups(&ctx.device, k, buffers);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(&label),
                timestamp_writes: None,
            });
            if recycle > 0 && n > 0 {
                pass.set_pipeline(&k.recycle.pipeline);
                pass.set_bind_group(0, rec, &[]);
                pass.dispatch_workgroups(groups(n), 1, 1);
            }
            let rest = count - recycle;
            if rest > 0 {
                pass.set_pipeline(&k.append.pipeline);
                pass.set_bind_group(0, app, &[]);
                pass.dispatch_workgroups(groups(rest), 1, 1);
            }
        }
        ctx.queue.submit([enc.finish()]);
    }
}
