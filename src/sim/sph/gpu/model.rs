//! The particle fluid on the GPU as a [`Model`]: the same sources, steps, light and rest as
//! the CPU's [`crate::sim::sph::cpu::model::SphModel`], with the particles living on the GPU.
//!
//! - **Steps**: [`GpuFluid`] (sort, density, forces, move, drag and collisions), at most
//!   [`MAX_STEPS_IN_FLIGHT`] advances queued before the oldest is waited for.
//! - **Sources**: the same [`Planner`] turns splats into impulses and bursts; impulses in a row
//!   go to the GPU together, bursts recycle the oldest particles there.
//! - **Picture**: the light is splatted on the GPU (`shaders/sph_light.wgsl`) into a field of
//!   light, which the display's [`GpuPicture`] colours and tones (bloom, rays, shading,
//!   palettes) into the frame, read back without waiting as the grid fluid's are; the
//!   obstacles are drawn over it from the model's mask, as on the CPU. A new light size (the
//!   discs look follows the frame's height, in steps of 32 rows) makes a new field.
//! - **Rest**: the particles' places and serial numbers are copied into a staging buffer and
//!   read back without waiting; the measure is the CPU model's ([`rest_speed`]).
//! - **Seldom**: a lowered budget and a snapshot wait for a round trip through the CPU.

use crate::display::gpu::{GpuPicture, GpuSource};
use crate::fluid::{ColorMode, Look, ObstacleStyle, Splat};
use crate::gpu::kernel::storage;
use crate::gpu::serial::serial_from_f32;
use crate::gpu::{GpuContext, GpuError, bytes_f32};
use crate::sim::model::{Model, Resolution, Snapshot};
use crate::sim::obstacles::Mask;
use crate::sim::sph::gpu::GpuFluid;
use crate::sim::sph::gpu::light::{GpuLight, LightJob};
use crate::sim::sph::shared::{
    SphSnapshot, carried, empty_activity, light_look, light_size, liquid_activity, liquid_knobs,
    model_cells, model_mask, queue_sources, rest_speed, solids, substeps,
};
use crate::sim::sph::sources::{Action, Planner};
use crate::sim::sph::{Fluid, Knobs};
use crate::sim::{Activity, StepInput};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Advances the GPU may have queued before `advance` waits for the oldest (as the grid
/// solver's `MAX_STEPS_IN_FLIGHT`): a GPU slower than real time then shows up in the step's
/// time, and the engine drops steps instead of queueing without end.
pub const MAX_STEPS_IN_FLIGHT: usize = 2;
/// Longest wait for an advance in flight before the device counts as hung.
const STEP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The staging buffer is free.
const FREE: u8 = 0;
/// A copy was submitted and its mapping requested.
const MAPPING: u8 = 1;
/// The mapping finished: the places can be read.
const READY: u8 = 2;
/// The mapping failed (device lost).
const FAILED: u8 = 3;

/// The rest probe's readback: the particles' places and serial numbers, copied on the GPU and
/// read by a later call, never waited for.
#[derive(Default)]
struct Probe {
    staging: Option<wgpu::Buffer>,
    state: Arc<AtomicU8>,
    /// The copy in flight: its tag, particle count, next serial then, and the simulated
    /// seconds since the copy before it.
    flight: Option<(u64, usize, u64, f32)>,
    /// The last copy's particles (serial number and place, by serial number).
    before: Vec<(u64, [f32; 2])>,
    latest: Option<(u64, Activity)>,
}

impl Probe {
    /// Read a finished copy, if any, into the newest measurement.
    fn collect(&mut self) {
        match self.state.load(Ordering::Acquire) {
            READY => {
                if let Some(staging) = &self.staging {
                    if let Some((tag, n, births, seconds)) = self.flight.take()
                        && let Ok(view) = staging.slice(..).get_mapped_range()
                    {
                        let pos: &[[f32; 2]] = bytemuck::cast_slice(&view[..n * 8]);
                        let color: &[[f32; 4]] = bytemuck::cast_slice(&view[n * 8..n * 24]);
                        let mut now: Vec<(u64, [f32; 2])> = color
                            .iter()
                            .zip(pos)
                            .map(|(c, p)| (serial_from_f32(c[3], births), *p))
                            .collect();
                        now.sort_unstable_by_key(|x| x.0);
                        let speed = rest_speed(&now, &self.before, seconds);
                        self.latest = Some((tag, liquid_activity(speed)));
                        self.before = now;
                    }
                    staging.unmap();
                }
                self.state.store(FREE, Ordering::Release);
            }
            FAILED => {
                self.flight = None;
                self.state.store(FREE, Ordering::Release);
            }
            _ => {}
        }
    }

    /// Start a copy of `fluid`'s particles tagged `tag`, `seconds` after the last; `false`
    /// when one is still in flight.
    fn start(&mut self, fluid: &GpuFluid, tag: u64, seconds: f32) -> bool {
        if self.state.load(Ordering::Acquire) != FREE || self.flight.is_some() {
            return false;
        }
        let Some((pos, _, color)) = fluid.buffers() else {
            return false;
        };
        let ctx = fluid.context();
        let n = fluid.len();
        let bytes = (n * 24) as u64;
        if self.staging.as_ref().is_none_or(|s| s.size() < bytes) {
            self.staging = Some(ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("SPH: rest probe staging"),
                size: bytes.next_power_of_two().max(256),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        let staging = self.staging.as_ref().expect("made above");
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(pos, 0, staging, 0, (n * 8) as u64);
        encoder.copy_buffer_to_buffer(color, 0, staging, (n * 8) as u64, (n * 16) as u64);
        ctx.queue.submit([encoder.finish()]);
        self.flight = Some((tag, n, fluid.births(), seconds));
        self.state.store(MAPPING, Ordering::Release);
        let state = self.state.clone();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            state.store(if r.is_ok() { READY } else { FAILED }, Ordering::Release);
        });
        true
    }
}

/// The particle fluid (SPH) on the GPU, as a [`Model`].
pub struct GpuSphModel {
    fluid: GpuFluid,
    knobs: Knobs,
    budget: usize,
    /// The model's resolution.
    cells: (usize, usize),
    pending: Vec<Splat>,
    planner: Planner,
    obstacles: Option<Mask>,
    light: GpuLight,
    /// The field of light (RGBA per cell) and its size (`None` until the first frame).
    field: Option<(wgpu::Buffer, (usize, usize))>,
    /// The picture the light is drawn through.
    picture: GpuPicture,
    probe: Probe,
    /// Simulated seconds since the last rest probe's copy.
    since_probe: f32,
    in_flight: VecDeque<wgpu::SubmissionIndex>,
    /// What made the model unusable, once something did.
    failure: Option<GpuError>,
    /// How the frame last requested draws the obstacles.
    overlay_style: ObstacleStyle,
}

impl GpuSphModel {
    /// A model on `ctx`'s device whose picture grid is `cells` (the canvas' shape), holding at
    /// most `budget` particles (clamped to 1..=[`crate::sim::sph::MAX_PARTICLES`]).
    pub fn new(ctx: GpuContext, cells: (usize, usize), budget: usize) -> Result<Self, GpuError> {
        let cells = model_cells(cells);
        let light = GpuLight::new(&ctx.device);
        let picture = GpuPicture::new(&ctx.device);
        let mut fluid = GpuFluid::new(ctx);
        fluid.upload(&Fluid::new(cells.0 as f32 / cells.1 as f32));
        fluid.context().check()?;
        Ok(Self {
            fluid,
            knobs: Knobs::default(),
            budget: budget.clamp(1, crate::sim::sph::MAX_PARTICLES),
            cells,
            pending: Vec::new(),
            planner: Planner::default(),
            obstacles: None,
            light,
            field: None,
            picture,
            probe: Probe::default(),
            since_probe: 0.0,
            in_flight: VecDeque::with_capacity(MAX_STEPS_IN_FLIGHT + 1),
            failure: None,
            overlay_style: ObstacleStyle::default(),
        })
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> String {
        self.fluid.adapter_name()
    }

    /// The particles, read back (waits for the GPU): for tests and benches.
    pub fn read_fluid(&mut self) -> Fluid {
        let mut fluid = Fluid::new(1.0);
        self.fluid.download(&mut fluid);
        fluid
    }

    /// Take the step's liquid knobs; a smaller budget recycles the oldest particles at once.
    fn set_liquid(&mut self, liquid: &crate::fluid::Liquid) {
        (self.knobs, self.budget) = liquid_knobs(liquid);
        let excess = self.fluid.len().saturating_sub(self.budget);
        self.fluid.remove_oldest(excess);
    }

    /// Apply the queued sources in order: runs of impulses together, then each burst.
    fn apply_sources(&mut self) {
        let mut impulses = Vec::new();
        for s in &self.pending {
            match self.planner.plan(s, &self.knobs, self.budget) {
                Some(Action::Impulse(impulse)) => impulses.push(impulse),
                Some(Action::Burst(burst)) => {
                    self.fluid.apply(&impulses);
                    impulses.clear();
                    self.fluid.add(&burst, self.budget);
                }
                None => {}
            }
        }
        self.fluid.apply(&impulses);
        self.pending.clear();
    }

    /// Splat the light for a frame `rows` tall in `look` into the field of light (made first
    /// at the light's size when it changed).
    fn draw_light(&mut self, look: &Look, rows: usize) {
        let size = light_size(self.fluid.size(), self.cells.1, look.liquid, rows);
        let ctx = self.fluid.context();
        if self.field.as_ref().is_none_or(|(_, s)| *s != size) {
            let bytes = bytes_f32(4 * size.0 * size.1);
            self.field = Some((storage(&ctx.device, "SPH: light field", bytes), size));
            // The old field is dropped with the picture's bind group of it.
            self.picture.forget_sources();
        }
        let (field, _) = self.field.as_ref().expect("made above");
        if let Some((pos, vel, color)) = self.fluid.buffers() {
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            let job = LightJob {
                particles: (pos, vel, color, self.fluid.len()),
                box_width: self.fluid.size()[0],
                target_density: self.knobs.target_density,
                size,
                field,
                style: look.liquid,
                speed_colours: look.color_mode == ColorMode::VelocityHue,
            };
            self.light
                .encode(&ctx.device, &ctx.queue, &mut encoder, &job);
            ctx.queue.submit([encoder.finish()]);
        }
    }

    /// Draw the light for a `width x height` frame in `look` and encode the frame; its serial,
    /// or `None` for a skipped frame.
    fn encode_frame(&mut self, look: &Look, width: usize, height: usize) -> Option<u64> {
        self.draw_light(look, height);
        let (field, size) = self.field.as_ref().expect("draw_light made it");
        let src = GpuSource {
            grid: *size,
            velocity: None,
            dye: field,
            dye_size: *size,
            heat: None,
        };
        let ctx = self.fluid.context();
        self.picture
            .encode_plain(ctx, &src, &light_look(look), (width, height))
    }
}

impl GpuSphModel {
    /// Draw the obstacles over a finished frame in `style`, from the model's mask, with the
    /// CPU model's pass: the two draw them bit for bit the same (the GPU's overlay pass agrees
    /// with it only to a few levels).
    fn overlay(&self, style: ObstacleStyle, width: usize, height: usize, out: &mut [u8]) {
        if let Some(mask) = &self.obstacles
            && out.len() == width * height * 4
        {
            crate::display::cpu::obstacle_overlay::draw(mask, style, out, width, height);
        }
    }
}

impl Model for GpuSphModel {
    fn backend(&self) -> &'static str {
        "gpu"
    }

    fn resolution(&self) -> Resolution {
        Resolution {
            cells: self.cells,
            detail: self.cells,
        }
    }

    fn inject(&mut self, sources: &[Splat]) {
        queue_sources(&mut self.pending, sources);
    }

    fn advance(&mut self, params: &StepInput) {
        self.set_liquid(&params.liquid);
        self.apply_sources();
        let Some((steps, sub)) = substeps(params.dt).filter(|_| !self.fluid.is_empty()) else {
            return;
        };
        self.since_probe += sub * steps as f32;
        for _ in 0..steps {
            if let Err(e) = self.fluid.step(&self.knobs, sub) {
                self.failure.get_or_insert(e);
                return;
            }
        }
        let ctx = self.fluid.context();
        self.in_flight.push_back(ctx.queue.submit([]));
        if self.in_flight.len() > MAX_STEPS_IN_FLIGHT
            && let Some(oldest) = self.in_flight.pop_front()
            && let Err(e) = ctx.device.poll(wgpu::PollType::Wait {
                submission_index: Some(oldest),
                timeout: Some(STEP_WAIT),
            })
        {
            nice_plug::nice_error!("Waiting for the GPU failed: {e}");
            self.failure.get_or_insert(GpuError::Failed {
                adapter: self.fluid.adapter_name(),
                message: format!("a particle step did not finish: {e}"),
            });
        }
    }

    fn set_effort(&mut self, _sweeps: u32) {}

    fn reset(&mut self) {
        self.pending.clear();
        let mut empty = Fluid::new(self.cells.0 as f32 / self.cells.1 as f32);
        empty.births = self.fluid.births();
        self.fluid.upload(&empty);
    }

    fn render(&mut self, look: &Look, width: usize, height: usize, out: &mut [u8]) {
        assert_eq!(out.len(), width * height * 4, "frame buffer size");
        if width == 0 || height == 0 {
            return;
        }
        self.picture.settle(self.fluid.context());
        match self.encode_frame(look, width, height) {
            Some(serial) => {
                let ctx = self.fluid.context();
                let look = light_look(look);
                self.picture.finish(ctx, serial, &look, out);
            }
            None => out.fill(0),
        }
        self.overlay(look.obstacles, width, height, out);
    }

    fn request_frame(&mut self, look: &Look, width: usize, height: usize) -> bool {
        if width == 0 || height == 0 {
            return false;
        }
        self.overlay_style = look.obstacles;
        let _ = self.fluid.context().device.poll(wgpu::PollType::Poll);
        self.encode_frame(look, width, height).is_some()
    }

    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        let (w, h) = self.picture.collect(self.fluid.context(), out)?;
        self.overlay(self.overlay_style, w, h, out);
        Some((w, h))
    }

    /// As the CPU model's (see [`rest_speed`]), from places read back without waiting: the
    /// measurement a call returns is from a copy an earlier call started.
    fn probe_activity(&mut self, tag: u64) -> Option<(u64, Activity)> {
        if !self.pending.is_empty() {
            return Some((tag, liquid_activity(1.0)));
        }
        let _ = self.fluid.context().device.poll(wgpu::PollType::Poll);
        self.probe.collect();
        if self.fluid.is_empty() {
            self.probe.before.clear();
            self.probe.latest = Some((tag, empty_activity()));
            return self.probe.latest;
        }
        if self.probe.start(&self.fluid, tag, self.since_probe) {
            self.since_probe = 0.0;
        }
        self.probe.latest
    }

    fn failure(&self) -> Option<GpuError> {
        self.failure
            .clone()
            .or_else(|| self.fluid.context().check().err())
    }

    fn set_obstacles(&mut self, mask: Option<&Mask>) {
        self.obstacles = model_mask(mask, self.cells);
        let solids = self
            .obstacles
            .as_ref()
            .and_then(|m| solids(m, self.fluid.size()));
        self.fluid.set_solids(solids.as_ref());
    }

    fn obstacles(&self) -> Option<&Mask> {
        self.obstacles.as_ref()
    }

    fn snapshot(&mut self) -> Snapshot {
        let mut fluid = Fluid::new(1.0);
        self.fluid.download(&mut fluid);
        Snapshot::new(SphSnapshot {
            fluid,
            obstacles: self.obstacles.clone(),
        })
    }

    fn restore(&mut self, snapshot: &Snapshot) -> bool {
        let Some(s) = snapshot.get::<SphSnapshot>() else {
            return false;
        };
        let fresh = carried(&s.fluid, self.fluid.size()[0]);
        self.fluid.upload(&fresh);
        self.set_obstacles(s.obstacles.as_ref());
        true
    }
}
