//! The sources' actions on the GPU (`shaders/liquid3d_sources.wgsl`): shocks and pulls in a row
//! go to the particles together, and new particles take the oldest ones' slots when the budget
//! is full (found by their serial numbers, [`crate::gpu::serial`]), as
//! [`crate::sim::liquid3d::Liquid::act`] does on the CPU.

use super::resources::{Particles, Pipelines};
use crate::gpu::GpuContext;
use crate::gpu::kernel::{Binding, Kernel, storage, uniform};
use crate::sim::liquid3d::sources::Action;

/// The `@binding`s of liquid3d_sources.wgsl.
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

/// The uniform `Sources` of liquid3d_sources.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct SourcesUniform {
    pub n: u32,
    pub count: u32,
    pub recycle: u32,
    pub oldest: u32,
}

/// The struct `Impulse` of liquid3d_sources.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct GpuImpulse {
    pub centre: [f32; 2],
    pub reach: f32,
    pub pull: u32,
    pub force: [f32; 2],
    pub _p0: u32,
    pub _p1: u32,
}

impl GpuImpulse {
    /// A shock's, a pull's or a slosh's impulse (`None` for a burst).
    pub fn from_action(a: &Action) -> Option<Self> {
        match *a {
            Action::Shock {
                centre,
                reach,
                force,
            } => Some(Self {
                centre,
                reach,
                pull: 0,
                force,
                ..Self::default()
            }),
            Action::Pull {
                centre,
                reach,
                pull,
            } => Some(Self {
                centre,
                reach,
                pull: 1,
                force: [pull, 0.0],
                ..Self::default()
            }),
            Action::Slosh { push } => Some(Self {
                pull: 2,
                force: push,
                ..Self::default()
            }),
            Action::Burst(_) => None,
        }
    }
}

/// The struct `Fresh` of liquid3d_sources.wgsl: a new particle.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct GpuFresh {
    pub pos: [f32; 4],
    pub vel: [f32; 4],
    /// Colour, and the serial number's bits.
    pub color: [f32; 4],
}

/// The sources' buffers, and bind groups tied to the particles' buffers (built again when
/// those or these grow).
pub(super) struct Sources {
    uniform: wgpu::Buffer,
    impulse: wgpu::Buffer,
    impulse_cap: usize,
    fresh: wgpu::Buffer,
    fresh_cap: usize,
    groups: Option<[wgpu::BindGroup; 3]>,
}

/// Bytes of a `GpuImpulse` and of a `GpuFresh`.
const IMPULSE_BYTES: usize = size_of::<GpuImpulse>();
const FRESH_BYTES: usize = size_of::<GpuFresh>();

impl Sources {
    pub fn new(device: &wgpu::Device) -> Self {
        Self {
            uniform: uniform(device, "Liquid 3D: sources", &SourcesUniform::default()),
            impulse: storage(device, "Liquid 3D: impulses", (64 * IMPULSE_BYTES) as u64),
            impulse_cap: 64,
            fresh: storage(
                device,
                "Liquid 3D: new particles",
                (512 * FRESH_BYTES) as u64,
            ),
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
        k: &Pipelines,
        p: &Particles,
    ) -> &[wgpu::BindGroup; 3] {
        use binding as b;
        self.groups.get_or_insert_with(|| {
            let with_fresh = |kernel: &Kernel| {
                kernel.bind(
                    device,
                    &[
                        (b::Q, &self.uniform),
                        (b::POS, &p.pos),
                        (b::VEL, &p.vel),
                        (b::COLOR, &p.color),
                        (b::FRESH, &self.fresh),
                    ],
                )
            };
            [
                k.impulses.bind(
                    device,
                    &[
                        (b::Q, &self.uniform),
                        (b::POS, &p.pos),
                        (b::VEL, &p.vel),
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
        k: &Pipelines,
        p: &Particles,
        n: usize,
        impulses: &[GpuImpulse],
    ) {
        if impulses.is_empty() || n == 0 {
            return;
        }
        if impulses.len() > self.impulse_cap {
            self.impulse_cap = impulses.len().next_power_of_two();
            let bytes = (self.impulse_cap * IMPULSE_BYTES) as u64;
            self.impulse = storage(&ctx.device, "Liquid 3D: impulses", bytes);
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
        let [g, ..] = self.groups(&ctx.device, k, p);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("Liquid 3D: impulses"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&k.impulses.pipeline);
            pass.set_bind_group(0, g, &[]);
            pass.dispatch_workgroups(super::groups(n), 1, 1);
        }
        ctx.queue.submit([enc.finish()]);
    }

    /// Give the `recycle` oldest of the `n` particles' slots (serial numbers from `oldest`)
    /// to the first of `fresh`, and put the rest after the `n` (the buffers hold them).
    pub fn add(
        &mut self,
        ctx: &GpuContext,
        k: &Pipelines,
        p: &Particles,
        (n, recycle, oldest): (usize, usize, u32),
        fresh: &[GpuFresh],
    ) {
        if fresh.is_empty() {
            return;
        }
        if fresh.len() > self.fresh_cap {
            self.fresh_cap = fresh.len().next_power_of_two();
            let bytes = (self.fresh_cap * FRESH_BYTES) as u64;
            self.fresh = storage(&ctx.device, "Liquid 3D: new particles", bytes);
            self.groups = None;
        }
        let q = &ctx.queue;
        q.write_buffer(&self.fresh, 0, bytemuck::cast_slice(fresh));
        let u = SourcesUniform {
            n: n as u32,
            count: fresh.len() as u32,
            recycle: recycle as u32,
            oldest,
        };
        q.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
        let [_, rec, app] = self.groups(&ctx.device, k, p);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("Liquid 3D: new particles"),
                timestamp_writes: None,
            });
            if recycle > 0 && n > 0 {
                pass.set_pipeline(&k.recycle.pipeline);
                pass.set_bind_group(0, rec, &[]);
                pass.dispatch_workgroups(super::groups(n), 1, 1);
            }
            let rest = fresh.len() - recycle;
            if rest > 0 {
                pass.set_pipeline(&k.append.pipeline);
                pass.set_bind_group(0, app, &[]);
                pass.dispatch_workgroups(super::groups(rest), 1, 1);
            }
        }
        ctx.queue.submit([enc.finish()]);
    }
}
