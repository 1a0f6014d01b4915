//! The GPU solver: the CPU solver's algorithm as wgpu compute passes (`passes/`), one step per
//! command buffer, every bind group built once (and those of obstacles once per mask). `step`
//! reads as the algorithm: one line per stage, each pass in a labelled compute pass.
//!
//! The solver owns every pass and buffer; its step's stages (one method each, `encode.rs`),
//! readbacks and the `Solver` trait's methods all work on them; the passes themselves are one
//! file each in `passes/`, and the picture is the display's
//! (`display::gpu::GpuPicture`), which the solver hands its fields and draws its particles and
//! streamlines into.

mod encode;

use super::activity::ActivityProbe;
use super::buffers::{Buffers, Sizes, bytes_f32};
use super::passes::reduce::slot;
use super::passes::{
    Advect, Buoyancy, Compressibility, Curl, Diffuse, Divergence, GpuSplat, Gradient, Multigrid,
    Norms, Obstacles, Particles, Pressure, Reduce, Splat, StreamlineTrace, Vorticity,
};
use super::uniforms::GridUniforms;
use crate::display::gpu::{GpuPicture, GpuSource};
use crate::display::streamlines::Lines;
use crate::gpu::context::{GpuContext, GpuError};
use crate::gpu::frames::{self, read_f32};
use crate::gpu::kernel::{Dispatcher, module};
pub use crate::gpu::timestamps::PassSample;
use crate::gpu::timestamps::{PassTimes, Timestamps};
use crate::sim::grid::Fields;
use crate::sim::grid::particles::{GPU_CAPACITY, Particle, Spawner};
use crate::sim::grid::physics::{
    CellSplat, MAX_PENDING_SPLATS, REPROJECT_ABOVE_COMPRESSIBILITY, extra_iterations,
};
use crate::sim::multigrid;
use crate::sim::obstacles::Mask;
use crate::sim::{
    Activity, Look, PressureMethod, SimConfig, Solver, Splat as SplatEvent, Stage, StepInput,
    StepStats,
};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

pub use crate::gpu::frames::FRAME_STAGING_BUFFERS;

/// The largest coarsest multigrid level the single-workgroup solve holds (`COARSE_MAX` in
/// pressure.wgsl). Grids flatter than about 256:1 exceed it and run on the CPU instead.
pub(in crate::sim) const COARSE_MAX_CELLS: usize = 1024;

/// Steps the GPU may have queued before `step` waits for the oldest. Without a bound, a GPU
/// slower than real time would queue work without end (the submit returns at once), and every
/// frame would show an ever older fluid; with it the wait shows up in the engine's step time,
/// and the engine drops steps instead.
pub const MAX_STEPS_IN_FLIGHT: usize = 2;

/// Frames an offline render keeps in flight ([`Solver::submit_frame`]): one being drawn and
/// read back while the next frame's steps run. (The staging pool has a buffer more.)
pub const RENDER_FRAMES_IN_FLIGHT: usize = FRAME_STAGING_BUFFERS - 1;

/// Longest wait for a step in flight before the device counts as hung.
const STEP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The wgpu solver.
pub struct GpuSolver {
    ctx: GpuContext,
    cfg: SimConfig,
    sizes: Sizes,
    buf: Buffers,
    reduce: Reduce,
    splat: Splat,
    curl: Curl,
    vorticity: Vorticity,
    buoyancy: Buoyancy,
    diffuse: Diffuse,
    divergence: Divergence,
    pressure: Pressure,
    multigrid: Multigrid,
    gradient: Gradient,
    advect: Advect,
    compressibility: Compressibility,
    /// Solid obstacles: their boundary rules, and the buffers the other passes bind.
    obstacles: Obstacles,
    /// The picture: colorize, the filmic tone's passes, the obstacle overlay and the frames'
    /// readback.
    picture: GpuPicture,
    /// Which buffer holds the current velocity, dye and temperature.
    vel: usize,
    dye: usize,
    heat: usize,
    /// Whether the temperature may be non-zero anywhere (a heat splat since the last reset).
    heated: bool,
    /// Whether this step's splats carry heat.
    splat_heat: bool,
    pending: Vec<SplatEvent>,
    dropped_splats: u64,
    measure: bool,
    /// Whether the last compressibility check read back chose extra iterations for the next
    /// projection (known only when measuring; counts them in its statistics).
    extra_next: bool,
    /// The step's start and end stamps (when the adapter has timestamps).
    timing: Option<Timestamps>,
    last_gpu_ms: Option<f64>,
    /// Every pass of each step timed on its own, for the bench's `passes` table (on request,
    /// when the adapter has timestamps; the step's own timing is off meanwhile).
    pass_times: Option<PassTimes>,
    /// Splats uploaded for the step being encoded (0: the splat passes are skipped).
    splat_count: u32,
    /// Steps submitted and perhaps not yet finished, oldest first.
    in_flight: std::collections::VecDeque<wgpu::SubmissionIndex>,
    /// The serials of an offline render's frames in flight, oldest first
    /// ([`Solver::submit_frame`]).
    ordered: std::collections::VecDeque<u64>,
    /// Measures the fluid's motion and dye for the engine, read back without waiting.
    activity: ActivityProbe,
    /// The particles' slots and passes (made at the first emission).
    particles: Option<Particles>,
    /// The particles' emission, ring and lifetime (see [`Spawner`]).
    spawner: Spawner,
    /// The streamlines' trace and its vertices (made at the first frame with lines; the
    /// picture draws them).
    streamlines: Option<StreamlineTrace>,
}

impl GpuSolver {
    /// Build every pipeline, buffer and bind group for `cfg` on `ctx`'s device.
    pub fn new(ctx: GpuContext, cfg: &SimConfig) -> Result<Self, GpuError> {
        let cfg = cfg.sanitized();
        let s = Sizes::new(&cfg);
        let (w, h) = (s.w, s.h);
        let plans = multigrid::plan(w, h);
        let coarsest = plans.last().map_or(w * h, |p| p.w * p.h);
        if coarsest > COARSE_MAX_CELLS {
            return Err(GpuError::Failed {
                adapter: ctx.info.name.clone(),
                message: format!(
                    "a {w}x{h} grid is too flat for the GPU multigrid (coarsest level {coarsest} \
                     cells, at most {COARSE_MAX_CELLS})"
                ),
            });
        }
        let largest = bytes_f32(s.nd() * 4).max(bytes_f32((w + 1) * (h + 1)));
        let limits = ctx.device.limits();
        let allowed = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        if largest > allowed {
            return Err(GpuError::TooLarge {
                adapter: ctx.info.name.clone(),
                needed: largest,
                allowed,
            });
        }
        let device = &ctx.device;
        let b = Buffers::new(device, &s);
        let reduce = Reduce::new(device, &b.results);
        let pressure_module = module(device, "pressure");
        let curl = Curl::new(device, &b, &s);
        let timing = Timestamps::new(&ctx, "Queries: step time", 2);
        let mut solver = Self {
            splat: Splat::new(device, &b, &s),
            vorticity: Vorticity::new(device, &b, &s, &curl),
            buoyancy: Buoyancy::new(device, &b, &s),
            curl,
            diffuse: Diffuse::new(device, &b, &s),
            divergence: Divergence::new(device, &b, &s, &reduce),
            pressure: Pressure::new(device, &pressure_module, &b, &s, &reduce),
            multigrid: Multigrid::new(device, &pressure_module, &b, &s, &plans),
            gradient: Gradient::new(device, &b, &s, &reduce),
            advect: Advect::new(device, &b, &s),
            compressibility: Compressibility::new(device, &b, &s, &reduce),
            obstacles: Obstacles::new(device),
            picture: GpuPicture::new(device),
            activity: ActivityProbe::new(device, &reduce, &b, &s),
            reduce,
            buf: b,
            cfg,
            sizes: s,
            vel: 0,
            dye: 0,
            heat: 0,
            heated: false,
            splat_heat: false,
            extra_next: false,
            pending: Vec::with_capacity(MAX_PENDING_SPLATS),
            dropped_splats: 0,
            measure: true,
            timing,
            last_gpu_ms: None,
            pass_times: None,
            splat_count: 0,
            in_flight: std::collections::VecDeque::with_capacity(MAX_STEPS_IN_FLIGHT + 1),
            ordered: std::collections::VecDeque::new(),
            particles: None,
            streamlines: None,
            spawner: Spawner::new(GPU_CAPACITY),
            ctx,
        };
        solver.build_extra_table();
        solver.ctx.check()?;
        Ok(solver)
    }

    /// The temperature, one value per simulation cell, row-major from the bottom row (read
    /// back, blocking).
    pub fn read_heat(&mut self) -> Vec<f32> {
        read_f32(&self.ctx, &self.buf.heat[self.heat], self.sizes.nc())
    }

    /// The particle slots, read back (blocking; empty until the first emission).
    pub fn read_particles(&mut self) -> Vec<Particle> {
        match &self.particles {
            Some(pp) => {
                let bytes = std::mem::size_of::<Particle>() * GPU_CAPACITY;
                let raw = frames::read_buffer(&self.ctx, pp.slots(), bytes as u64);
                frames::pod_vec(&raw)
            }
            None => Vec::new(),
        }
    }

    /// Put particles into the slots from the first on (tests and the bench's seeding), the
    /// rest emptied; at most the capacity.
    pub fn set_particles(&mut self, particles: &[Particle]) {
        let n = self.spawner.seed(particles);
        let pp = particles_pass(&mut self.particles, &self.ctx, &self.buf);
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        encoder.clear_buffer(pp.slots(), 0, None);
        self.ctx.queue.submit([encoder.finish()]);
        pp.upload(&self.ctx.queue, 0, &particles[..n]);
        self.ctx.queue.submit([]);
    }

    /// Emit this step's particles from the pending splats and upload them into the ring.
    fn emit_particles(&mut self, p: &StepInput) {
        let cells = (self.cfg.width, self.cfg.height);
        let mask = self.obstacles.solids().map(|o| &o.mask);
        let runs = self
            .spawner
            .emit(&self.pending, cells, mask, p.particle_life);
        for (start, born) in runs.into_iter().filter(|(_, b)| !b.is_empty()) {
            let pp = particles_pass(&mut self.particles, &self.ctx, &self.buf);
            pp.upload(&self.ctx.queue, start, born);
        }
    }

    /// Close the solid faces of the current velocity and clear the dye inside solids (after
    /// fields were written or obstacles set), and submit.
    fn enforce_obstacles(&self) {
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        let mut d = self.pass(&mut encoder, "grid.enforce_obstacles");
        self.obstacles.encode_close(&mut d, self.vel);
        self.obstacles.encode_clear(&mut d, self.dye);
        drop(d);
        self.ctx.queue.submit([encoder.finish()]);
    }

    /// Record the extra iterations' dispatch sizes into the compressibility check's table
    /// (they depend only on the method, its iterations and the obstacles), and forget any
    /// pending decision.
    fn build_extra_table(&mut self) {
        let mut table: Vec<[u32; 3]> = Vec::new();
        let extra = extra_iterations(self.cfg.pressure, self.cfg.pressure_iterations);
        self.encode_project_solve(&mut Dispatcher::record(&mut table), extra);
        let (device, queue) = (&self.ctx.device, &self.ctx.queue);
        self.compressibility
            .set_table(device, queue, &self.buf, &table);
        self.forget_extra();
    }

    /// No extra iterations pending: the arguments zeroed, and none counted (after fields were
    /// written, a reset or a new table, the last decision was about another flow).
    fn forget_extra(&mut self) {
        self.compressibility.forget(&self.ctx.queue);
        self.extra_next = false;
    }

    /// The adapter's name for the UI.
    pub fn adapter_name(&self) -> String {
        self.ctx.adapter_name()
    }

    /// Whether steps are timed on the GPU (timestamp queries; on when the adapter supports
    /// them and the solver measures).
    pub fn timed(&self) -> bool {
        self.timing.is_some() && self.measure
    }

    /// Time every compute pass of each step on its own (timestamp queries, when the adapter
    /// has them): [`GpuSolver::pass_samples`]. Reading them back waits for each step; the
    /// step's own time ([`GpuSolver::last_gpu_ms`]) is not taken meanwhile.
    pub fn set_time_passes(&mut self, on: bool) {
        self.pass_times = on
            .then(|| PassTimes::new(&self.ctx, "Queries: pass times"))
            .flatten();
    }

    /// The GPU times of the passes of the steps timed since [`GpuSolver::set_time_passes`]:
    /// each pass's label and its time (ms) and dispatches in each step it ran in, in the
    /// step's order.
    pub fn pass_samples(&self) -> &[(String, Vec<PassSample>)] {
        self.pass_times.as_ref().map_or(&[], |p| p.samples())
    }

    /// GPU time of the last measured step in ms, when the adapter supports timestamps.
    pub fn last_gpu_ms(&self) -> Option<f64> {
        self.last_gpu_ms
    }

    /// Time each frame's colorize and display pipeline on the GPU with timestamp queries
    /// (when the adapter has them; [`GpuSolver::last_frame_gpu_ms`] after each
    /// [`Solver::render`]). For the bench: reading the times back waits for the frame.
    pub fn set_time_frames(&mut self, on: bool) {
        self.picture.set_timing(&self.ctx, on);
    }

    /// Time every compute pass of each frame [`Solver::render`] draws on its own, and count
    /// its dispatches (timestamp queries, when the adapter has them; the display pipeline's
    /// stages then run in a pass each): [`GpuSolver::frame_pass_samples`]. For the bench.
    pub fn set_time_frame_passes(&mut self, on: bool) {
        self.picture.set_time_passes(&self.ctx, on);
    }

    /// The passes of the frames timed since [`GpuSolver::set_time_frame_passes`], as
    /// [`GpuSolver::pass_samples`].
    pub fn frame_pass_samples(&self) -> &[(String, Vec<PassSample>)] {
        self.picture.pass_samples()
    }

    /// GPU time of the last frame [`Solver::render`] drew with timing on: colorize, and the
    /// display pipeline after it (bloom, sunrays, tone), in ms.
    pub fn last_frame_gpu_ms(&self) -> Option<[f64; 2]> {
        self.picture.last_gpu_ms()
    }

    /// Frames skipped because every staging buffer was still busy.
    pub fn skipped_frames(&self) -> u64 {
        self.picture.skipped()
    }

    /// Dispatches in the extra iterations (their indirect argument table).
    pub fn extra_dispatches(&self) -> u32 {
        self.compressibility.count()
    }

    /// Splats dropped because the queue was full.
    pub fn dropped_splats(&self) -> u64 {
        self.dropped_splats
    }

    /// A labelled compute pass (`stamp`: write the step's start (0) or end (1) timestamp).
    fn begin<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        label: &str,
        stamp: Option<u32>,
    ) -> (wgpu::ComputePass<'e>, Option<Arc<AtomicU32>>) {
        let (timestamp_writes, counter) = match (&self.timing, stamp, &self.pass_times) {
            (Some(t), Some(index), _) => {
                let writes = wgpu::ComputePassTimestampWrites {
                    query_set: t.queries(),
                    beginning_of_pass_write_index: (index == 0).then_some(0),
                    end_of_pass_write_index: (index == 1).then_some(1),
                };
                (Some(writes), None)
            }
            (_, None, Some(passes)) => passes.writes(label).unzip(),
            _ => (None, None),
        };
        let pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes,
        });
        (pass, counter)
    }

    /// A labelled compute pass with direct dispatches.
    fn pass<'e>(&self, encoder: &'e mut wgpu::CommandEncoder, label: &str) -> Dispatcher<'e, 'e> {
        let (pass, counter) = self.begin(encoder, label, None);
        Dispatcher::direct(pass).counted(counter)
    }

    /// Read the reductions back (blocking) into step statistics. `projected`: the projection
    /// ran (its iterations count, with the extra ones the last check chose); `checked`: the
    /// compressibility check ran (its decision, the same rule as `compressibility_decide`, is
    /// kept for the next projection's count).
    fn measured(&mut self, gp: &GridUniforms, projected: bool, checked: bool) -> StepStats {
        let (w, h) = (self.cfg.width, self.cfg.height);
        let bytes = frames::read_buffer(&self.ctx, &self.buf.results, slot::COUNT * 16);
        let r: Vec<[f32; 4]> = frames::pod_vec(&bytes);
        let cells = (w * h) as f32;
        let before = r[slot::DIV_BEFORE as usize];
        let after = r[slot::DIV_AFTER as usize];
        let mut pressure_iterations = 0;
        if projected {
            let iterations = self.cfg.pressure_iterations;
            pressure_iterations = iterations;
            if std::mem::take(&mut self.extra_next) {
                pressure_iterations += extra_iterations(self.cfg.pressure, iterations);
            }
        }
        if checked {
            let (ru, rv) = (r[slot::U as usize], r[slot::V as usize]);
            let rd = r[slot::DIV_ADVECTED as usize];
            let reach = gp.k * ru[2].max(rv[2]);
            let flow_rms = ((ru[1] + rv[1]) / ((w + 1) * h + w * h) as f32).sqrt();
            let div_rms = (rd[1] / cells).sqrt();
            self.extra_next = reach > 1.0
                && flow_rms > 0.0
                && div_rms / flow_rms > REPROJECT_ABOVE_COMPRESSIBILITY;
        }
        StepStats {
            div_rms_before: (before[1] / cells).sqrt(),
            div_rms_after: (after[1] / cells).sqrt(),
            div_max_before: before[2],
            div_max_after: after[2],
            pressure_iterations,
        }
    }

    /// Encode the frame (colorize with the particles' light, the filmic tone's passes, the
    /// streamlines, the obstacles) and a copy into a free staging buffer, and request its
    /// mapping; returns the frame's serial.
    fn encode_frame(&mut self, look: &Look, width: usize, height: usize) -> Option<u64> {
        let glow = crate::sim::grid::particles::sanitize_glow(look.particle_glow);
        let particles = self.particles.is_some() && self.spawner.alive() && glow > 0.0;
        let b = &self.buf;
        let src = GpuSource {
            grid: (self.sizes.w, self.sizes.h),
            velocity: Some((&b.u[self.vel], &b.v[self.vel])),
            dye: &b.dye[self.dye],
            dye_size: (self.sizes.dw, self.sizes.dh),
            heat: Some(&b.heat[self.heat]),
        };
        let job = self
            .picture
            .begin(&self.ctx, &src, look, (width, height), particles)?;
        let params = GridUniforms::frame(&self.cfg, look, width, height);
        let (device, queue) = (&self.ctx.device, &self.ctx.queue);
        queue.write_buffer(&self.buf.uniforms, 0, bytemuck::bytes_of(&params));
        let mut encoder = device.create_command_encoder(&Default::default());
        let grid = (self.cfg.width, self.cfg.height);
        let lines = Lines::new(&look.streamlines, grid, (width, height));
        // Lines alone cover every pixel: no picture under them (unless its passes are timed,
        // whose timestamps are read back).
        if !lines.is_some_and(|l| l.alone) || self.picture.timed() {
            let (buf, particles) = (&self.buf, &mut self.particles);
            self.picture
                .encode_colour(device, &mut encoder, &job, &src, |d, plight| {
                    if let Some(pp) = particles {
                        pp.encode_draw(device, buf, d, plight);
                    }
                });
            self.picture.encode_tone(&mut encoder, &job, look);
        }
        if let Some(lines) = lines {
            // Over the finished frame (alone: over black), under the obstacles.
            let trace = self
                .streamlines
                .get_or_insert_with(|| StreamlineTrace::new(device));
            let verts = trace.encode(
                device,
                queue,
                &mut encoder,
                &self.buf,
                &lines,
                grid,
                self.vel,
            );
            self.picture
                .encode_streamlines(&self.ctx, &mut encoder, &lines, verts);
        }
        self.picture
            .encode_overlay(&self.ctx, &mut encoder, look.obstacles);
        Some(self.picture.submit(&self.ctx, encoder, job))
    }
}

/// The particles' pass in `slot`, made on first use.
fn particles_pass<'a>(
    slot: &'a mut Option<Particles>,
    ctx: &GpuContext,
    b: &Buffers,
) -> &'a Particles {
    slot.get_or_insert_with(|| Particles::new(&ctx.device, b))
}

impl Solver for GpuSolver {
    fn config(&self) -> SimConfig {
        self.cfg
    }

    fn backend(&self) -> &'static str {
        "gpu"
    }

    fn inject(&mut self, splats: &[SplatEvent]) {
        let room = MAX_PENDING_SPLATS - self.pending.len();
        let take = splats.len().min(room);
        self.pending.extend_from_slice(&splats[..take]);
        self.dropped_splats += (splats.len() - take) as u64;
    }

    fn set_measure(&mut self, on: bool) {
        self.measure = on;
    }

    fn set_pressure_iterations(&mut self, iterations: u32) {
        let iterations = iterations.clamp(1, 10_000);
        if iterations != self.cfg.pressure_iterations {
            self.cfg.pressure_iterations = iterations;
            // The extra iterations' dispatch list depends on the count.
            self.build_extra_table();
        }
    }

    fn set_obstacles(&mut self, mask: Option<&Mask>) {
        let (w, h) = (self.cfg.width, self.cfg.height);
        let mask = mask
            .filter(|m| !m.is_empty())
            .map(|m| m.resampled(w, h))
            .filter(|m| !m.is_empty());
        let plans = multigrid::plan(w, h);
        let device = &self.ctx.device;
        let (b, s) = (&self.buf, &self.sizes);
        self.obstacles
            .set(device, b, s, &plans, &self.reduce, mask.as_ref());
        let nodes = self.obstacles.take_nodes();
        let solids = self.obstacles.solids();
        self.pressure.set_faces(device, solids.map(|o| &o.finest));
        self.multigrid
            .set_faces(device, b, solids.map(|o| &o.finest), nodes.as_ref());
        self.advect.set_solids(device, b, solids);
        let flags: Vec<u32> = match solids {
            Some(o) => o.mask.cells().iter().map(|&x| u32::from(x)).collect(),
            None => vec![0; w * h],
        };
        self.ctx
            .queue
            .write_buffer(&b.solid, 0, bytemuck::cast_slice(&flags));
        if let (Some(pp), Some(_)) = (&self.particles, solids) {
            // A particle a new solid covers is gone (it has no way out). The pass reads the
            // grid's sizes (every step and frame writes its own parameters after).
            let base = GridUniforms::base(&self.cfg);
            let queue = &self.ctx.queue;
            queue.write_buffer(&self.buf.uniforms, 0, bytemuck::bytes_of(&base));
            let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
            pp.encode_cull(&mut Dispatcher::direct(
                encoder.begin_compute_pass(&Default::default()),
            ));
            self.ctx.queue.submit([encoder.finish()]);
        }
        self.picture.set_mask(device, solids.map(|o| &o.mask));
        // The extra iterations' dispatch list changes with the obstacles.
        self.build_extra_table();
        if self.obstacles.solids().is_some() {
            let b = &self.buf;
            let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
            for q in [&b.q, &b.q_centred] {
                encoder.clear_buffer(q, 0, None);
            }
            self.ctx.queue.submit([encoder.finish()]);
            self.enforce_obstacles();
        }
    }

    fn obstacles(&self) -> Option<&Mask> {
        self.obstacles.solids().map(|o| &o.mask)
    }

    fn read_extras(&mut self) -> crate::sim::Extras {
        let heat = if self.heated {
            self.read_heat()
        } else {
            Vec::new()
        };
        let particles = if self.spawner.alive() {
            let mut all = self.read_particles();
            all.retain(Particle::alive);
            all
        } else {
            Vec::new()
        };
        crate::sim::Extras {
            heat,
            heat_size: (self.cfg.width, self.cfg.height),
            particles,
        }
    }

    fn write_extras(&mut self, extras: &crate::sim::Extras) {
        let grid = (self.cfg.width, self.cfg.height);
        let mask = self.obstacles.solids().map(|o| &o.mask);
        let heat = extras
            .heat_on(grid, mask)
            .unwrap_or_else(|| vec![0.0; grid.0 * grid.1]);
        let aspect = grid.0 as f32 / grid.1 as f32;
        let particles = extras.particles_for(aspect, mask, GPU_CAPACITY);
        let queue = &self.ctx.queue;
        queue.write_buffer(&self.buf.heat[self.heat], 0, bytemuck::cast_slice(&heat));
        self.heated = !extras.heat.is_empty();
        if !(particles.is_empty() && self.particles.is_none()) {
            self.set_particles(&particles);
        }
    }

    fn failure(&self) -> Option<GpuError> {
        self.ctx.check().err()
    }

    fn step(&mut self, params: &StepInput) -> StepStats {
        let p = params.sanitized();
        let gp = self.prepare(&p, true);
        let mut encoder = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("Step"),
            });
        let timing = self.timing.is_some() && self.measure && self.pass_times.is_none();
        if timing {
            drop(self.begin(&mut encoder, "grid.timing_start", Some(0)));
        }
        self.encode_step(&mut encoder, &p);
        if timing {
            drop(self.begin(&mut encoder, "grid.timing_end", Some(1)));
            if let Some(t) = &self.timing {
                t.resolve(&mut encoder, 2);
            }
        }
        if let Some(passes) = &self.pass_times {
            passes.resolve(&mut encoder);
        }
        let index = self.ctx.queue.submit([encoder.finish()]);
        if let Some(passes) = &mut self.pass_times {
            passes.collect(&self.ctx);
        }
        self.in_flight.push_back(index);
        if self.in_flight.len() > MAX_STEPS_IN_FLIGHT
            && let Some(oldest) = self.in_flight.pop_front()
            && let Err(e) = self.ctx.device.poll(wgpu::PollType::Wait {
                submission_index: Some(oldest),
                timeout: Some(STEP_WAIT),
            })
        {
            nice_plug::nice_error!("Waiting for the GPU failed: {e}");
        }
        if self.ctx.check().is_err() || !self.measure || p.dt == 0.0 {
            return StepStats::default();
        }
        if timing {
            let t = self.timing.as_ref().expect("timing is on");
            self.last_gpu_ms = t.read_pairs_ms(&self.ctx, 1).first().copied();
        }
        self.measured(&gp, true, true)
    }

    fn run_stage(&mut self, stage: Stage, params: &StepInput) -> StepStats {
        let p = params.sanitized();
        let gp = self.prepare(&p, stage == Stage::ApplySplats);
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        self.encode_stage(&mut encoder, stage, &p);
        self.ctx.queue.submit([encoder.finish()]);
        if self.ctx.check().is_err() || !self.measure {
            return StepStats::default();
        }
        match stage {
            Stage::Project => self.measured(&gp, true, false),
            Stage::CheckCompressibility => self.measured(&gp, false, true),
            _ => StepStats::default(),
        }
    }

    fn render(&mut self, look: &Look, width: usize, height: usize, out: &mut [u8]) {
        assert_eq!(out.len(), width * height * 4, "frame buffer size");
        if width == 0 || height == 0 {
            return;
        }
        // Wait for frames in flight (an offline render's too: dropped), then render
        // synchronously.
        self.picture.settle(&self.ctx);
        self.ordered.clear();
        match self.encode_frame(look, width, height) {
            Some(serial) => self.picture.finish(&self.ctx, serial, look, out),
            None => out.fill(0),
        }
    }

    fn request_frame(&mut self, look: &Look, width: usize, height: usize) -> bool {
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);
        self.encode_frame(look, width, height).is_some()
    }

    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        self.picture.collect(&self.ctx, out)
    }

    fn frames_in_flight(&self) -> usize {
        RENDER_FRAMES_IN_FLIGHT
    }

    fn submit_frame(&mut self, look: &Look, width: usize, height: usize) -> bool {
        if width == 0 || height == 0 || self.ordered.len() >= RENDER_FRAMES_IN_FLIGHT {
            return false;
        }
        match self.encode_frame(look, width, height) {
            Some(serial) => {
                self.ordered.push_back(serial);
                true
            }
            None => false,
        }
    }

    fn wait_frame(&mut self, out: &mut [u8]) -> bool {
        match self.ordered.pop_front() {
            Some(serial) => self.picture.wait(&self.ctx, serial, out),
            None => false,
        }
    }

    fn probe_activity(&mut self, tag: u64) -> Option<(u64, Activity)> {
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);
        let results = &self.buf.results;
        let particles = self.spawner.alive();
        self.activity
            .probe(&self.ctx, &self.reduce, results, self.vel, self.dye, tag)
            .map(|(tag, a)| (tag, Activity { particles, ..a }))
    }

    fn read_fields(&mut self) -> Fields {
        let s = self.sizes;
        let (ctx, b) = (&self.ctx, &self.buf);
        let u = read_f32(ctx, &b.u[self.vel], s.nu());
        let v = read_f32(ctx, &b.v[self.vel], s.nv());
        // The projection's pressure, centred (as the CPU reports it).
        let mut pressure = read_f32(ctx, &b.q, s.nc());
        let mean = (pressure.iter().map(|&x| f64::from(x)).sum::<f64>() / s.nc() as f64) as f32;
        pressure.iter_mut().for_each(|x| *x -= mean);
        let rgba = read_f32(ctx, &b.dye[self.dye], s.nd() * 4);
        let dye = std::array::from_fn(|ch| rgba.iter().skip(ch).step_by(4).copied().collect());
        Fields {
            width: s.w,
            height: s.h,
            u,
            v,
            pressure,
            dye_width: s.dw,
            dye_height: s.dh,
            dye,
        }
    }

    fn write_fields(&mut self, fields: &Fields) {
        let f = fields.resampled(&self.cfg);
        self.forget_extra();
        let q = &self.ctx.queue;
        let b = &self.buf;
        q.write_buffer(&b.u[self.vel], 0, bytemuck::cast_slice(&f.u));
        q.write_buffer(&b.v[self.vel], 0, bytemuck::cast_slice(&f.v));
        q.write_buffer(&b.q, 0, bytemuck::cast_slice(&f.pressure));
        q.write_buffer(&b.q_centred, 0, bytemuck::cast_slice(&f.pressure));
        let rgba: Vec<f32> = (0..f.dye[0].len())
            .flat_map(|i| [f.dye[0][i], f.dye[1][i], f.dye[2][i], 0.0])
            .collect();
        q.write_buffer(&b.dye[self.dye], 0, bytemuck::cast_slice(&rgba));
        if self.obstacles.solids().is_some() {
            self.enforce_obstacles();
        } else {
            q.submit([]);
        }
    }

    fn reset(&mut self) {
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        let b = &self.buf;
        for buffer in [
            &b.u[0],
            &b.u[1],
            &b.v[0],
            &b.v[1],
            &b.dye[0],
            &b.dye[1],
            &b.heat[0],
            &b.heat[1],
            &b.q_centred,
            &b.q,
        ] {
            encoder.clear_buffer(buffer, 0, None);
        }
        if let Some(pp) = &self.particles {
            encoder.clear_buffer(pp.slots(), 0, None);
        }
        self.forget_extra();
        self.ctx.queue.submit([encoder.finish()]);
        self.pending.clear();
        self.heated = false;
        self.spawner.reset();
    }
}
