//! The 3D liquid on the GPU: the particle core's driver
//! ([`GpuParticles`](crate::sim::particles::gpu::driver::GpuParticles)) in the tank
//! (`shaders/particle_tank.wgsl`: the walls and the floaters), the same step as
//! [`Liquid::step`], and the picture's passes; a [`LiquidBackend`] for the model.
//!
//! The particles live on the GPU (positions, velocities, predicted positions as `vec4`s; the
//! colour's fourth component carries the serial number, [`crate::gpu::serial`]). A copy on the
//! host ([`Liquid`]) is read back when asked for after a change, and sent again before the next
//! step when it was edited (a new pool, a new budget, a snapshot restored): seldom, not every
//! frame. A step is two compute passes in one command buffer; at most
//! [`MAX_STEPS_IN_FLIGHT`] advances are queued before the oldest is waited for.

pub(crate) mod picture;
pub(crate) mod splat;

use super::backend::{FrameView, LiquidBackend};
use super::floaters::Floater;
use super::floaters::{self, MAX_FLOATERS};
use super::sources::Action;
use super::{Knobs, Liquid, MAX_PARTICLES, spacing};
use crate::display::volume::Volume;
use crate::fluid::Look;
use crate::gpu::frames::pod_vec;
use crate::gpu::kernel::storage;
use crate::gpu::{GpuContext, GpuError};
use crate::sim::particles::gpu::driver::{GpuContainer, GpuParticles, Hook};
use crate::sim::particles::gpu::step::After;
use crate::sim::particles::gpu::step::binding::{BALLS, PUSHES, S};
use picture::LiquidPicture;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Advances the GPU may have queued before the next waits for the oldest (as the other GPU
/// models): a GPU slower than real time shows in the step's time, and the engine drops steps
/// instead of queueing without end.
pub const MAX_STEPS_IN_FLIGHT: usize = 2;

/// The states of the floaters' readback map.
const MAPPING: u8 = 0;
const MAPPED: u8 = 1;
const UNMAPPABLE: u8 = 2;

/// The struct `Ball` of particle_tank.wgsl: a floater (centre and radius, velocity and mass).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct GpuBall {
    pub pos: [f32; 4],
    pub vel: [f32; 4],
}

/// The tank on the GPU (particle_tank.wgsl): the floaters and the pushes the particles pay
/// back to them (fixed point, atomics); what the floaters add to the core's stages (met as
/// walls, pushed, gripped, kept out); the floaters' passes, moved after the forces and given
/// their drag after integrate.
fn tank(device: &wgpu::Device) -> GpuContainer {
    let bytes = (MAX_FLOATERS * size_of::<GpuBall>()) as u64;
    GpuContainer {
        buffers: vec![
            (BALLS, storage(device, "Liquid 3D: floaters", bytes)),
            (
                PUSHES,
                storage(device, "Liquid 3D: floaters' pushes", bytes / 2),
            ),
        ],
        stages: &[
            ("densities", &[BALLS]),
            ("forces", &[BALLS, PUSHES]),
            ("integrate", &[BALLS]),
        ],
        passes: &[
            ("floaters", &[S, BALLS, PUSHES]),
            ("floaters_keep", &[S, BALLS]),
        ],
    }
}

/// The 3D liquid on the GPU.
pub struct GpuLiquid {
    core: GpuParticles<3>,
    /// The host's copy: the tank's size always; the particles when `fresh` or `edited`.
    host: Liquid,
    /// The host's particles are the GPU's.
    fresh: bool,
    /// The host's particles were edited: they go to the GPU before its next step.
    edited: bool,
    in_flight: VecDeque<wgpu::SubmissionIndex>,
    /// The picture's passes (made at the first frame).
    picture: Option<LiquidPicture>,
    /// The floaters' places and velocities copied after a step into a staging buffer being
    /// mapped (how many, and the map's state: [`MAPPING`], [`MAPPED`] or [`UNMAPPABLE`]),
    /// read by `refresh_floaters`.
    floater_read: Option<(wgpu::Buffer, usize, Arc<AtomicU8>)>,
}

impl GpuLiquid {
    /// An empty tank on `ctx`'s device (its pipelines built: a few ms).
    pub fn new(ctx: GpuContext) -> Result<Self, GpuError> {
        let host = Liquid::new([1.0; 3]);
        let container = (tank(&ctx.device), host.size);
        let core = GpuParticles::new(ctx, "liquid3d", container);
        core.context().check()?;
        Ok(Self {
            core,
            host,
            fresh: true,
            edited: false,
            in_flight: VecDeque::new(),
            picture: None,
            floater_read: None,
        })
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> String {
        self.core.adapter_name()
    }

    /// Time each step with timestamp queries (when the adapter has them); the steps still run
    /// back to back, and [`GpuLiquid::take_gpu_times`] reads the times.
    pub fn set_timing(&mut self, on: bool) {
        self.core.set_timing(on);
    }

    /// The GPU times of the steps timed since the last call, ms (none without timestamps).
    pub fn take_gpu_times(&mut self) -> Vec<f64> {
        self.core.take_gpu_times()
    }

    /// Wait for every step in flight.
    pub fn wait(&mut self) {
        self.core.wait_for(None);
    }

    /// The floaters' buffer (the tank's).
    fn balls(&self) -> &wgpu::Buffer {
        self.core
            .container_buffer(BALLS)
            .expect("the tank has its floaters")
    }

    /// The particles splatted into the picture's volume on the GPU at voxels of about `voxel`
    /// m, for `target_density` particles per m³ at rest, and read back (waits for the GPU):
    /// what the picture ray-marches, for tests against the CPU's splat. `None` on a failed
    /// device.
    pub fn volume(&mut self, voxel: f32, target_density: f32) -> Option<Volume> {
        if self.core.failure().is_some() {
            return None;
        }
        self.sync();
        self.core.reserve(self.core.len().max(1), 1);
        let (pos, _, color) = self.core.buffers()?;
        let picture = self
            .picture
            .get_or_insert_with(|| LiquidPicture::new(&self.core.context().device));
        let colours: Vec<[f32; 3]> = self.host.floaters.iter().map(|f| f.color).collect();
        let balls = self.core.container_buffer(BALLS)?;
        let job = splat::SplatJob {
            particles: (pos, color, self.core.len()),
            floaters: (balls, &colours),
            size: self.host.size,
            target_density,
            voxel,
        };
        let vol = picture.splat_volume(self.core.context(), &job);
        self.core.check();
        self.core.failure().is_none().then_some(vol)
    }

    /// Copy the floaters' places after the steps queued into a staging buffer and map it
    /// (none while the last copy is unread).
    fn copy_floaters(&mut self) {
        let count = self.host.floaters.len().min(MAX_FLOATERS);
        if count == 0 || self.floater_read.is_some() {
            return;
        }
        let bytes = (count * size_of::<GpuBall>()) as u64;
        let ctx = self.core.context();
        let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Liquid 3D: floaters readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(self.balls(), 0, &staging, 0, bytes);
        ctx.queue.submit([enc.finish()]);
        let state = Arc::new(AtomicU8::new(MAPPING));
        let flag = state.clone();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            flag.store(
                if r.is_ok() { MAPPED } else { UNMAPPABLE },
                Ordering::Release,
            );
        });
        self.floater_read = Some((staging, count, state));
    }

    /// Send the host's particles and floaters to the GPU (serial numbers made consecutive in
    /// the order of birth, the host's too).
    fn upload(&mut self) {
        let (birth, births) = crate::sim::particles::gpu::driver::serials(&self.host);
        self.host.birth = birth;
        self.host.births = births;
        self.core.upload(&self.host);
        let balls: Vec<GpuBall> = self
            .host
            .floaters
            .iter()
            .take(MAX_FLOATERS)
            .map(|f| GpuBall {
                pos: [f.pos[0], f.pos[1], f.pos[2], f.radius],
                vel: [f.vel[0], f.vel[1], f.vel[2], 0.0],
            })
            .collect();
        if !balls.is_empty() {
            let q = &self.core.context().queue;
            q.write_buffer(self.balls(), 0, bytemuck::cast_slice(&balls));
        }
        self.edited = false;
        self.fresh = true;
    }

    /// Read the particles and the floaters' places back into the host's copy (waits for the
    /// GPU); a device that failed (or hung) leaves the last copy as it was.
    fn download(&mut self) {
        self.fresh = true;
        // A copy of the floaters still unread is older than what this reads: dropped.
        self.floater_read = None;
        let count = self.host.floaters.len().min(MAX_FLOATERS);
        let extra = [(BALLS, count * size_of::<GpuBall>())];
        let Some((particles, balls)) = self.core.download(&extra) else {
            return;
        };
        self.host.particles = particles;
        // The floaters' places and velocities; their sizes and colours are the host's.
        let balls: Vec<f32> = pod_vec(&balls);
        for (f, b) in self.host.floaters.iter_mut().zip(balls.chunks_exact(8)) {
            f.pos = [b[0], b[1], b[2]];
            f.vel = [b[4], b[5], b[6]];
        }
    }

    /// The edited host copy sent to the GPU, if it was edited.
    fn sync(&mut self) {
        if self.edited {
            self.upload();
        }
    }

    /// Encode and submit one step of `dt` (0 < dt <= 1/30) with sanitised `k`, keeping `keep`
    /// of the velocities.
    fn run(&mut self, k: &Knobs, dt: f32, keep: f32) {
        let rho0 = k.target_density;
        let floaters = self.host.floaters.len().min(MAX_FLOATERS) as u32;
        let tank = |u: &mut crate::sim::particles::gpu::step::StepUniform| {
            u.floaters = floaters;
            u.grip = k.viscosity * floaters::GRIP;
            u.ball_mass =
                floaters::DENSITY * 4.0 / 3.0 * std::f32::consts::PI / spacing(rho0).powi(3);
        };
        // The floaters move after the forces, and get their drag after integrate.
        let passes = |after, pass: &mut wgpu::ComputePass<'_>, hook: &Hook<'_>| {
            if floaters > 0 {
                hook.pass(pass, usize::from(after == After::Integrate), 1);
            }
        };
        self.core.step(&k.physics(keep), dt, tank, passes);
    }
}

impl LiquidBackend for GpuLiquid {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn len(&self) -> usize {
        if self.edited {
            self.host.len()
        } else {
            self.core.len()
        }
    }

    fn size(&self) -> [f32; 3] {
        self.host.size
    }

    fn floaters(&self) -> &[Floater] {
        &self.host.floaters
    }

    fn refresh_floaters(&mut self) {
        if self.core.failed() {
            return;
        }
        let _ = self.core.context().device.poll(wgpu::PollType::Poll);
        let Some((staging, count, state)) = &self.floater_read else {
            return;
        };
        match state.load(Ordering::Acquire) {
            MAPPING => return,
            UNMAPPABLE => {
                // Let the next step make another.
                self.floater_read = None;
                return;
            }
            _ => {}
        }
        // A host copy being edited (or as fresh as the GPU) keeps its own.
        if !self.edited
            && !self.fresh
            && *count == self.host.floaters.len()
            && let Ok(view) = staging.slice(..).get_mapped_range()
        {
            let balls: Vec<f32> = pod_vec(&view);
            for (f, b) in self.host.floaters.iter_mut().zip(balls.chunks_exact(8)) {
                f.pos = [b[0], b[1], b[2]];
                f.vel = [b[4], b[5], b[6]];
            }
        }
        staging.unmap();
        self.floater_read = None;
    }

    fn tint_floater(&mut self, i: usize, colour: [f32; 3], share: f32) {
        if let Some(f) = self.host.floaters.get_mut(i) {
            f.tint(colour, share);
        }
    }

    fn liquid(&mut self) -> &Liquid {
        if !self.fresh {
            self.download();
        }
        &self.host
    }

    fn liquid_mut(&mut self) -> &mut Liquid {
        if !self.fresh {
            self.download();
        }
        self.edited = true;
        &mut self.host
    }

    fn act(&mut self, actions: &[Action], budget: usize) {
        if actions.is_empty() || self.core.failed() {
            return;
        }
        self.sync();
        let budget = budget.clamp(1, MAX_PARTICLES);
        let mut impulses = Vec::new();
        for action in actions {
            match action {
                Action::Burst(fresh) => {
                    self.core.apply(&impulses);
                    impulses.clear();
                    self.core.add(fresh, budget);
                }
                Action::Impulse(i) => impulses.push(*i),
            }
        }
        self.core.apply(&impulses);
        self.fresh = false;
        self.core.check();
        // Past the budget (a budget lowered behind its back), the oldest go, as on the CPU
        // (a round trip: seldom).
        if self.core.len() > budget {
            let liquid = self.liquid_mut();
            let excess = liquid.len().saturating_sub(budget);
            liquid.remove_oldest(excess);
        }
    }

    fn step(&mut self, knobs: &Knobs, dt: f32, keep: f32, steps: usize) {
        let k = knobs.sanitized();
        let dt = if dt.is_finite() {
            dt.clamp(0.0, 1.0 / 30.0)
        } else {
            0.0
        };
        let keep = if keep.is_finite() {
            keep.clamp(0.0, 1.0)
        } else {
            1.0
        };
        if self.core.failed() {
            return;
        }
        self.sync();
        if self.core.is_empty() || dt == 0.0 || steps == 0 {
            return;
        }
        for _ in 0..steps {
            self.run(&k, dt, keep);
        }
        self.fresh = false;
        self.copy_floaters();
        self.in_flight
            .push_back(self.core.context().queue.submit([]));
        if self.in_flight.len() > MAX_STEPS_IN_FLIGHT
            && let Some(oldest) = self.in_flight.pop_front()
        {
            self.core.wait_for(Some(oldest));
        }
        self.core.check();
    }

    fn failure(&self) -> Option<GpuError> {
        self.core.failure()
    }

    fn wait(&mut self) {
        GpuLiquid::wait(self);
        self.in_flight.clear();
    }

    fn time_steps(&mut self, on: bool) {
        self.set_timing(on);
    }

    fn take_step_times(&mut self) -> Vec<f64> {
        self.take_gpu_times()
    }

    fn draws(&self) -> bool {
        true
    }

    fn encode_frame(&mut self, view: &FrameView) -> Option<u64> {
        if self.core.failed() {
            return None;
        }
        self.sync();
        // Buffers even for no particles: the frame shows the empty tank.
        self.core.reserve(self.core.len().max(1), 1);
        let colours: Vec<[f32; 3]> = self.host.floaters.iter().map(|f| f.color).collect();
        let view = FrameView {
            colours: &colours,
            ..*view
        };
        let ctx = self.core.context();
        let picture = self
            .picture
            .get_or_insert_with(|| LiquidPicture::new(&ctx.device));
        let buffers = self.core.buffers().map(|(pos, _, color)| [pos, color]);
        let balls = self.core.container_buffer(BALLS);
        let particles = buffers.zip(balls).map(|([pos, color], b)| [pos, color, b]);
        let frame = (particles, self.core.len(), self.host.size);
        let serial = picture.encode(ctx, frame, &view);
        self.core.check();
        serial
    }

    fn finish_frame(&mut self, serial: u64, look: &Look, _size: (usize, usize), out: &mut [u8]) {
        match &mut self.picture {
            Some(p) if !self.core.failed() => p.finish(self.core.context(), serial, look, out),
            _ => out.fill(0),
        }
    }

    fn collect_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        if self.core.failed() {
            return None;
        }
        self.picture.as_mut()?.collect(self.core.context(), out)
    }

    fn settle_frames(&mut self) {
        if !self.core.failed()
            && let Some(p) = &mut self.picture
        {
            p.settle(self.core.context());
        }
    }
}
