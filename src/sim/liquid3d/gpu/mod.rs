//! The 3D liquid on the GPU: the same step as [`Liquid::step`] as wgpu compute passes
//! (the particle core's, [`crate::sim::particles::gpu::step`], in the tank), the particles sorted by cell with the GPU's counting sort
//! (`shaders/cell_sort.wgsl`: the CPU's order exactly, by cell and by index within a cell), the
//! sources' actions with the particle core's (`shaders/particle_sources.wgsl`); a
//! [`LiquidBackend`] for the model.
//!
//! The particles live on the GPU (positions, velocities, predicted positions as `vec4`s; the
//! colour's fourth component carries the serial number, [`crate::gpu::serial`]). A copy on the
//! host ([`Liquid`]) is read back when asked for after a change, and sent again before the next
//! step when it was edited (a new pool, a new budget, a snapshot restored): seldom, not every
//! frame. A step is two compute passes in one command buffer; at most
//! [`MAX_STEPS_IN_FLIGHT`] advances are queued before the oldest is waited for.

pub(crate) mod picture;
pub(crate) mod resources;
pub(crate) mod splat;

use super::backend::{FrameView, LiquidBackend};
use super::floaters::Floater;
use super::floaters::{self, MAX_FLOATERS};
use super::sources::Action;
use super::{Knobs, Liquid, MAX_PARTICLES, spacing};
use crate::display::volume::Volume;
use crate::fluid::Look;
use crate::gpu::frames::pod_vec;
use crate::gpu::serial::{SERIAL_MASK, serial_from_f32, serial_to_f32};
use crate::gpu::{GpuContext, GpuError};
use crate::sim::particles::gpu::Timing;
use crate::sim::particles::gpu::sources::{GpuFresh3 as GpuFresh, GpuImpulse, Sources};
use crate::sim::particles::hash::Grid;
use picture::LiquidPicture;
use resources::{Cells, Particles, Pipelines};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::sim::particles::gpu::step::{After, Step, StepUniform};
use crate::sim::particles::hash::gpu::CellSortUniform;
use resources::GpuBall;

/// Threads per workgroup: the cell sort's (every pass of the 3D liquid uses it).
pub use crate::sim::particles::hash::gpu::SW;
/// Advances the GPU may have queued before the next waits for the oldest (as the other GPU
/// models): a GPU slower than real time shows in the step's time, and the engine drops steps
/// instead of queueing without end.
pub const MAX_STEPS_IN_FLIGHT: usize = 2;
/// Longest wait for an advance in flight before the device counts as hung.
const STEP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The states of the floaters' readback map.
const MAPPING: u8 = 0;
const MAPPED: u8 = 1;
const UNMAPPABLE: u8 = 2;

/// The 3D liquid on the GPU.
pub struct GpuLiquid {
    ctx: GpuContext,
    kernels: Pipelines,
    particles: Option<Particles>,
    cells: Option<Cells>,
    sources: Sources<GpuFresh>,
    /// Particles on the GPU.
    n: usize,
    /// The next serial number to give; the particles hold the `n` before it.
    births: u64,
    /// The host's copy: the tank's size always; the particles when `fresh` or `edited`.
    host: Liquid,
    /// The host's particles are the GPU's.
    fresh: bool,
    /// The host's particles were edited: they go to the GPU before its next step.
    edited: bool,
    in_flight: VecDeque<wgpu::SubmissionIndex>,
    timing: Timing,
    failure: Option<GpuError>,
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
        let kernels = Pipelines::new(&ctx.device);
        let sources = Sources::new(&ctx.device, "Liquid 3D");
        ctx.check()?;
        Ok(Self {
            ctx,
            kernels,
            particles: None,
            cells: None,
            sources,
            n: 0,
            births: 0,
            host: Liquid::new([1.0; 3]),
            fresh: true,
            edited: false,
            in_flight: VecDeque::new(),
            timing: Timing::default(),
            failure: None,
            picture: None,
            floater_read: None,
        })
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> String {
        self.ctx.adapter_name()
    }

    /// Time each step with timestamp queries (when the adapter has them); the steps still run
    /// back to back, and [`GpuLiquid::take_gpu_times`] reads the times.
    pub fn set_timing(&mut self, on: bool) {
        self.timing.set(&self.ctx, on, "Liquid 3D: step times");
    }

    /// The GPU times of the steps timed since the last call, ms (none without timestamps).
    pub fn take_gpu_times(&mut self) -> Vec<f64> {
        self.timing.take(&self.ctx)
    }

    /// Wait for every step in flight.
    pub fn wait(&mut self) {
        self.wait_for(None);
    }

    /// Wait for `submission` (or all the work queued) at most [`STEP_WAIT`]; a device that
    /// does not finish by then counts as failed. `false` if it failed (now or before).
    fn wait_for(&mut self, submission: Option<wgpu::SubmissionIndex>) -> bool {
        if self.failure.is_some() {
            return false;
        }
        match self.ctx.device.poll(wgpu::PollType::Wait {
            submission_index: submission,
            timeout: Some(STEP_WAIT),
        }) {
            Ok(_) => true,
            Err(e) => {
                nice_plug::nice_error!("Waiting for the GPU failed: {e}");
                self.failure.get_or_insert(GpuError::Failed {
                    adapter: self.ctx.adapter_name(),
                    message: format!("the 3D liquid's work did not finish: {e}"),
                });
                false
            }
        }
    }

    /// The particles splatted into the picture's volume on the GPU at voxels of about `voxel`
    /// m, for `target_density` particles per m³ at rest, and read back (waits for the GPU):
    /// what the picture ray-marches, for tests against the CPU's splat. `None` on a failed
    /// device.
    pub fn volume(&mut self, voxel: f32, target_density: f32) -> Option<Volume> {
        if self.failure.is_some() {
            return None;
        }
        self.sync();
        self.reserve(self.n.max(1));
        let p = self.particles.as_ref()?;
        let picture = self
            .picture
            .get_or_insert_with(|| LiquidPicture::new(&self.ctx.device));
        let colours: Vec<[f32; 3]> = self.host.floaters.iter().map(|f| f.color).collect();
        let job = splat::SplatJob {
            particles: (&p.motion.pos, &p.motion.color, self.n),
            floaters: (&p.balls, &colours),
            size: self.host.size,
            target_density,
            voxel,
        };
        let vol = picture.splat_volume(&self.ctx, &job);
        self.check();
        self.failure.is_none().then_some(vol)
    }

    /// Copy the floaters' places after the steps queued into a staging buffer and map it
    /// (none while the last copy is unread).
    fn copy_floaters(&mut self) {
        let count = self.host.floaters.len().min(MAX_FLOATERS);
        let Some(p) = &self.particles else { return };
        if count == 0 || self.floater_read.is_some() {
            return;
        }
        let bytes = (count * size_of::<GpuBall>()) as u64;
        let staging = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Liquid 3D: floaters readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&p.balls, 0, &staging, 0, bytes);
        self.ctx.queue.submit([enc.finish()]);
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

    /// Buffers for `n` particles (kept when large enough; the particles carried over).
    fn reserve(&mut self, n: usize) {
        if self.particles.as_ref().is_some_and(|p| p.capacity >= n) {
            return;
        }
        let capacity = n.max(1024).next_power_of_two();
        let fresh = Particles::new(&self.ctx.device, capacity);
        if let Some(old) = &self.particles
            && self.n > 0
        {
            let mut enc = self.ctx.device.create_command_encoder(&Default::default());
            fresh.copy_from(&mut enc, old, self.n);
            self.ctx.queue.submit([enc.finish()]);
        }
        self.particles = Some(fresh);
        self.cells = None;
        self.sources.unbind();
    }

    /// The cell buffers for `cells` cells and the bind groups over them and the particles.
    fn reserve_cells(&mut self, cells: usize) {
        let Some(p) = &self.particles else { return };
        if self.cells.as_ref().is_some_and(|c| c.cells >= cells) {
            return;
        }
        let cells = cells.max(self.cells.as_ref().map_or(0, |c| c.cells));
        self.cells = Some(Cells::new(&self.ctx.device, &self.kernels, p, cells));
    }

    /// Send the host's particles to the GPU (serial numbers made consecutive in the order of
    /// birth, the host's too).
    fn upload(&mut self) {
        let l = &mut self.host;
        let n = l.len();
        let mut by_birth: Vec<usize> = (0..n).collect();
        by_birth.sort_by_key(|&i| (l.birth[i], i));
        let latest = l.birth.iter().copied().max().map_or(0, |b| b + 1);
        self.births = l.births.max(latest).max(n as u64);
        let oldest = self.births - n as u64;
        for (rank, &i) in by_birth.iter().enumerate() {
            l.birth[i] = oldest + rank as u64;
        }
        l.births = self.births;
        self.n = 0;
        self.reserve(n);
        self.n = n;
        let Some(p) = &self.particles else { return };
        if n > 0 {
            let four = |v: &[[f32; 3]], w: &dyn Fn(usize) -> f32| -> Vec<[f32; 4]> {
                v.iter()
                    .enumerate()
                    .map(|(i, a)| [a[0], a[1], a[2], w(i)])
                    .collect()
            };
            let l = &self.host;
            let q = &self.ctx.queue;
            q.write_buffer(
                &p.motion.pos,
                0,
                bytemuck::cast_slice(&four(&l.pos, &|_| 0.0)),
            );
            q.write_buffer(
                &p.motion.vel,
                0,
                bytemuck::cast_slice(&four(&l.vel, &|_| 0.0)),
            );
            let serial = |i: usize| serial_to_f32(l.birth[i]);
            q.write_buffer(
                &p.motion.color,
                0,
                bytemuck::cast_slice(&four(&l.color, &serial)),
            );
            let density: Vec<[f32; 2]> = (0..n)
                .map(|i| l.density.get(i).copied().unwrap_or([0.0; 2]))
                .collect();
            q.write_buffer(&p.motion.density, 0, bytemuck::cast_slice(&density));
        }
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
            self.ctx
                .queue
                .write_buffer(&p.balls, 0, bytemuck::cast_slice(&balls));
        }
        self.edited = false;
        self.fresh = true;
    }

    /// Read the particles back into the host's copy (waits for the GPU); a device that failed
    /// leaves the last copy as it was.
    fn download(&mut self) {
        let Some(p) = &self.particles else {
            self.fresh = true;
            return;
        };
        // A device that failed (or hung) keeps the last copy: its reads could wait forever.
        if self.failure.is_some() {
            self.fresh = true;
            return;
        }
        let n = self.n;
        let count = self.host.floaters.len().min(MAX_FLOATERS);
        // A copy of the floaters still unread is older than what this reads: dropped.
        self.floater_read = None;
        // Every buffer copied into one staging buffer, one submission and one bounded wait.
        let parts: [(&wgpu::Buffer, u64); 5] = [
            (&p.motion.pos, (n * 16) as u64),
            (&p.motion.vel, (n * 16) as u64),
            (&p.motion.color, (n * 16) as u64),
            (&p.motion.density, (n * 8) as u64),
            (&p.balls, (count * size_of::<GpuBall>()) as u64),
        ];
        let total: u64 = parts.iter().map(|(_, b)| b).sum();
        let staging = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Liquid 3D: readback"),
            size: total.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        let mut at = 0;
        for (buffer, bytes) in parts {
            if bytes > 0 {
                enc.copy_buffer_to_buffer(buffer, 0, &staging, at, bytes);
            }
            at += bytes;
        }
        let submission = self.ctx.queue.submit([enc.finish()]);
        let slice = staging.slice(..);
        slice.map_async(wgpu::MapMode::Read, |_| {});
        if !self.wait_for(Some(submission)) {
            self.fresh = true;
            return;
        }
        if let Err(e) = self.ctx.check() {
            self.failure.get_or_insert(e);
            self.fresh = true;
            return;
        }
        let Ok(view) = slice.get_mapped_range() else {
            self.fresh = true;
            return;
        };
        let bytes = view.to_vec();
        drop(view);
        staging.unmap();
        let (pos, rest) = bytes.split_at(n * 16);
        let (vel, rest) = rest.split_at(n * 16);
        let (color, rest) = rest.split_at(n * 16);
        let (density, balls) = rest.split_at(n * 8);
        let four = |b: &[u8]| -> Vec<[f32; 4]> { pod_vec(b) };
        let three =
            |b: &[u8]| -> Vec<[f32; 3]> { four(b).iter().map(|c| [c[0], c[1], c[2]]).collect() };
        let mut l = Liquid::new(self.host.size);
        let colors = four(color);
        l.pos = three(pos);
        l.vel = three(vel);
        l.color = colors.iter().map(|c| [c[0], c[1], c[2]]).collect();
        l.density = pod_vec(density);
        l.birth = colors
            .iter()
            .map(|c| serial_from_f32(c[3], self.births))
            .collect();
        l.births = self.births;
        // The floaters' places and velocities; their sizes and colours are the host's.
        let balls: Vec<f32> = pod_vec(balls);
        l.floaters = self.host.floaters.clone();
        for (f, b) in l.floaters.iter_mut().zip(balls.chunks_exact(8)) {
            f.pos = [b[0], b[1], b[2]];
            f.vel = [b[4], b[5], b[6]];
        }
        self.host = l;
        self.fresh = true;
    }

    /// The edited host copy sent to the GPU, if it was edited.
    fn sync(&mut self) {
        if self.edited {
            self.upload();
        }
    }

    /// Add `new` particles, at most `budget` in all: past it the oldest give their slots to
    /// the new ones (more new ones than the budget: the last of them).
    fn add(&mut self, new: &[super::sources::Fresh], budget: usize) {
        let new = &new[new.len().saturating_sub(budget)..];
        if new.is_empty() {
            return;
        }
        let free = budget.saturating_sub(self.n);
        let recycle = new.len().saturating_sub(free).min(self.n);
        let size = self.host.size;
        let finite = |a: &[f32; 3]| a.iter().all(|x| x.is_finite());
        let fresh: Vec<GpuFresh> = new
            .iter()
            .enumerate()
            .map(|(j, (p, v, c))| GpuFresh {
                pos: if finite(p) {
                    [0, 1, 2].map(|k| p[k].clamp(0.0, size[k]))
                } else {
                    size.map(|s| 0.5 * s)
                }
                .map_to4(0.0),
                vel: (if finite(v) { *v } else { [0.0; 3] }).map_to4(0.0),
                color: c.map_to4(serial_to_f32(self.births + j as u64)),
            })
            .collect();
        let total = self.n + new.len() - recycle;
        self.reserve(total.max(budget));
        let Some(p) = &self.particles else { return };
        let oldest = (self.births - self.n as u64) as u32 & SERIAL_MASK;
        self.sources.add(
            &self.ctx,
            &self.kernels.sources,
            (&p.motion.pos, &p.motion.vel, &p.motion.color),
            (self.n, recycle, oldest),
            &fresh,
        );
        self.n = total;
        self.births += new.len() as u64;
    }

    /// Put `impulses` on the particles, in order.
    fn apply(&mut self, impulses: &[GpuImpulse]) {
        if let Some(p) = &self.particles {
            let buffers = (&p.motion.pos, &p.motion.vel, &p.motion.color);
            let k = &self.kernels.sources;
            self.sources.apply(&self.ctx, k, buffers, self.n, impulses);
        }
    }

    /// The step's uniform (`knobs` sanitised) over `grid`.
    fn uniform(&self, k: &Knobs, dt: f32, keep: f32, grid: &Grid<3>) -> StepUniform {
        let rho0 = k.target_density;
        StepUniform {
            floaters: self.host.floaters.len().min(MAX_FLOATERS) as u32,
            grip: k.viscosity * floaters::GRIP,
            ball_mass: floaters::DENSITY * 4.0 / 3.0 * std::f32::consts::PI / spacing(rho0).powi(3),
            ..StepUniform::new(&k.physics(keep), grid, self.host.size, self.n, dt)
        }
    }

    /// Encode and submit one step of `dt` (0 < dt <= 1/30) with sanitised `k`.
    fn run(&mut self, k: &Knobs, dt: f32, keep: f32) {
        let grid = Grid::new(self.host.size, k.radius);
        let cells = grid.cells();
        self.reserve(self.n);
        self.reserve_cells(cells);
        let u = self.uniform(k, dt, keep, &grid);
        self.timing.before_step(&self.ctx);
        let (Some(p), Some(c), kn) = (&self.particles, &self.cells, &self.kernels) else {
            return;
        };
        let q = &self.ctx.queue;
        q.write_buffer(&p.uniform, 0, bytemuck::bytes_of(&u));
        let sort = CellSortUniform {
            n: u.n,
            cells: u.cells,
            ..Default::default()
        };
        q.write_buffer(&c.uniform, 0, bytemuck::bytes_of(&sort));
        let (g, n) = (&c.groups, self.n);
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        enc.clear_buffer(&c.counts, 0, Some((cells * 4) as u64));
        let step = Step {
            kernels: &kn.step,
            groups: &g.step,
            reorder: (&kn.reorder, &g.reorder),
            motion: &p.motion,
            n,
        };
        // The floaters move after the forces, and get their drag after integrate.
        let balls = u.floaters > 0;
        let floaters = |after, pass: &mut wgpu::ComputePass<'_>| {
            if balls {
                let i = usize::from(after == After::Integrate);
                kn.step.container_pass(pass, &g.step, i, 1);
            }
        };
        let sort = |pass: &mut wgpu::ComputePass<'_>| {
            kn.cell_sort.encode(pass, &g.cell_sort, n, cells);
        };
        step.encode(&mut enc, "Liquid 3D", &self.timing, sort, floaters);
        self.ctx.queue.submit([enc.finish()]);
        self.timing.after_step();
    }

    /// Note a failure of the device, once.
    fn check(&mut self) {
        if self.failure.is_none()
            && let Err(e) = self.ctx.check()
        {
            self.failure = Some(e);
        }
    }
}

/// `[x, y, z]` and a fourth component.
trait To4 {
    fn map_to4(self, w: f32) -> [f32; 4];
}

impl To4 for [f32; 3] {
    fn map_to4(self, w: f32) -> [f32; 4] {
        [self[0], self[1], self[2], w]
    }
}

impl LiquidBackend for GpuLiquid {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn len(&self) -> usize {
        if self.edited { self.host.len() } else { self.n }
    }

    fn size(&self) -> [f32; 3] {
        self.host.size
    }

    fn floaters(&self) -> &[Floater] {
        &self.host.floaters
    }

    fn refresh_floaters(&mut self) {
        if self.failure.is_some() {
            return;
        }
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);
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
        if actions.is_empty() || self.failure.is_some() {
            return;
        }
        self.sync();
        let budget = budget.clamp(1, MAX_PARTICLES);
        let mut impulses: Vec<GpuImpulse> = Vec::new();
        for action in actions {
            match action {
                Action::Burst(fresh) => {
                    self.apply(&impulses);
                    impulses.clear();
                    self.add(fresh, budget);
                }
                Action::Impulse(i) => impulses.push(i.into()),
            }
        }
        self.apply(&impulses);
        self.fresh = false;
        self.check();
        // Past the budget (a budget lowered behind its back), the oldest go, as on the CPU
        // (a round trip: seldom).
        if self.n > budget {
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
        if self.failure.is_some() {
            return;
        }
        self.sync();
        if self.n == 0 || dt == 0.0 || steps == 0 {
            return;
        }
        for _ in 0..steps {
            self.run(&k, dt, keep);
        }
        self.fresh = false;
        self.copy_floaters();
        self.in_flight.push_back(self.ctx.queue.submit([]));
        if self.in_flight.len() > MAX_STEPS_IN_FLIGHT
            && let Some(oldest) = self.in_flight.pop_front()
        {
            self.wait_for(Some(oldest));
        }
        self.check();
    }

    fn failure(&self) -> Option<GpuError> {
        self.failure.clone().or_else(|| self.ctx.check().err())
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
        if self.failure.is_some() {
            return None;
        }
        self.sync();
        // Buffers even for no particles: the frame shows the empty tank.
        self.reserve(self.n.max(1));
        let colours: Vec<[f32; 3]> = self.host.floaters.iter().map(|f| f.color).collect();
        let view = FrameView {
            colours: &colours,
            ..*view
        };
        let picture = self
            .picture
            .get_or_insert_with(|| LiquidPicture::new(&self.ctx.device));
        let serial = picture.encode(
            &self.ctx,
            (self.particles.as_ref(), self.n, self.host.size),
            &view,
        );
        self.check();
        serial
    }

    fn finish_frame(&mut self, serial: u64, look: &Look, _size: (usize, usize), out: &mut [u8]) {
        match &mut self.picture {
            Some(p) if self.failure.is_none() => p.finish(&self.ctx, serial, look, out),
            _ => out.fill(0),
        }
    }

    fn collect_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        if self.failure.is_some() {
            return None;
        }
        self.picture.as_mut()?.collect(&self.ctx, out)
    }

    fn settle_frames(&mut self) {
        if self.failure.is_none()
            && let Some(p) = &mut self.picture
        {
            p.settle(&self.ctx);
        }
    }
}
