//! The particle fluid on the GPU as a [`FluidBackend`]: the same sources, steps, light and rest
//! as the CPU's [`crate::sim::sph::cpu::CpuFluid`], with the particles living on the GPU.
//!
//! - **Steps**: [`GpuFluid`] (sort, density, forces, move, drag and collisions), at most
//!   [`MAX_STEPS_IN_FLIGHT`] advances queued before the oldest is waited for.
//! - **Sources**: impulses in a row go to the GPU together, bursts recycle the oldest
//!   particles there.
//! - **Picture**: the light is splatted on the GPU (`shaders/sph_light.wgsl`) into a field of
//!   light, which the display's [`GpuPicture`] colours and tones (bloom, rays, shading,
//!   palettes) into the frame, read back without waiting as the grid fluid's are; the
//!   model draws the obstacles over it, as on the CPU. A new light size (the
//!   discs look follows the frame's height, in steps of 32 rows) makes a new field.
//! - **Rest**: the particles' places and serial numbers are copied into a staging buffer and
//!   read back without waiting; the measure is the CPU model's ([`rest_speed`]).
//! - **Seldom**: a lowered budget and a snapshot wait for a round trip through the CPU.

use crate::display::gpu::{GpuPicture, GpuSource};
use crate::fluid::ColorMode;
use crate::gpu::kernel::storage;
use crate::gpu::serial::serial_from_f32;
use crate::gpu::{GpuContext, GpuError, bytes_f32};
use crate::sim::Activity;
use crate::sim::sph::backend::{FluidBackend, FrameJob};
use crate::sim::sph::gpu::GpuFluid;
use crate::sim::sph::gpu::light::{GpuLight, LightJob};
use crate::sim::sph::shared::{
    empty_activity, light_look, light_size, liquid_activity, rest_speed,
};
use crate::sim::sph::solids::Solids;
use crate::sim::sph::sources::Action;
use crate::sim::sph::{Fluid, Knobs};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Advances the GPU may have queued before `advance` waits for the oldest (as the grid
/// solver's `MAX_STEPS_IN_FLIGHT`): a GPU slower than real time then shows up in the step's
/// time, and the engine drops steps instead of queueing without end.
pub const MAX_STEPS_IN_FLIGHT: usize = 2;

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

/// The particle fluid on the GPU, with its picture.
pub struct GpuBackend {
    fluid: GpuFluid,
    /// The particles as last read back.
    host: Fluid,
    light: GpuLight,
    /// The field of light (RGBA per cell) and its size (`None` until the first frame).
    field: Option<(wgpu::Buffer, (usize, usize))>,
    /// The picture the light is drawn through.
    picture: GpuPicture,
    probe: Probe,
    in_flight: VecDeque<wgpu::SubmissionIndex>,
}

impl GpuBackend {
    /// `fluid` on `ctx`'s device.
    pub fn new(ctx: GpuContext, fluid: &Fluid) -> Result<Self, GpuError> {
        let light = GpuLight::new(&ctx.device);
        let picture = GpuPicture::new(&ctx.device);
        let mut gpu = GpuFluid::new(ctx);
        gpu.upload(fluid);
        gpu.context().check()?;
        Ok(Self {
            fluid: gpu,
            host: fluid.clone(),
            light,
            field: None,
            picture,
            probe: Probe::default(),
            in_flight: VecDeque::with_capacity(MAX_STEPS_IN_FLIGHT + 1),
        })
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> String {
        self.fluid.adapter_name()
    }

    /// Splat the light for a frame `rows` tall in `look` into the field of light (made first
    /// at the light's size when it changed).
    fn draw_light(&mut self, job: &FrameJob) {
        let look = job.look;
        let size = light_size(self.fluid.size(), job.model_rows, look.liquid, job.height);
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
                target_density: job.target_density,
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

    /// Draw the light for `job`'s frame and encode the frame; its serial, or `None` for a
    /// skipped frame.
    fn encode_frame(&mut self, job: &FrameJob) -> Option<u64> {
        self.draw_light(job);
        let (field, size) = self.field.as_ref().expect("draw_light made it");
        let src = GpuSource {
            grid: *size,
            velocity: None,
            dye: field,
            dye_size: *size,
            heat: None,
        };
        let ctx = self.fluid.context();
        let size = (job.width, job.height);
        self.picture
            .encode_plain(ctx, &src, &light_look(job.look), size)
    }
}

impl FluidBackend for GpuBackend {
    fn len(&self) -> usize {
        self.fluid.len()
    }

    fn fluid(&mut self) -> &Fluid {
        self.fluid.download(&mut self.host);
        &self.host
    }

    fn set_fluid(&mut self, mut fluid: Fluid) {
        fluid.births = fluid.births.max(self.fluid.births());
        self.fluid.upload(&fluid);
        self.host = fluid;
    }

    /// Runs of impulses go to the GPU together, then each burst.
    fn act(&mut self, actions: &[Action], budget: usize) {
        if self.fluid.failure().is_some() {
            return;
        }
        let excess = self.fluid.len().saturating_sub(budget);
        self.fluid.remove_oldest(excess);
        let mut impulses = Vec::new();
        for action in actions {
            match action {
                Action::Impulse(impulse) => impulses.push(*impulse),
                Action::Burst(burst) => {
                    self.fluid.apply(&impulses);
                    impulses.clear();
                    self.fluid.add(burst, budget);
                }
            }
        }
        self.fluid.apply(&impulses);
    }

    fn step(&mut self, knobs: &Knobs, dt: f32, steps: usize) {
        if self.fluid.failure().is_some() {
            return;
        }
        for _ in 0..steps {
            if self.fluid.step(knobs, dt).is_err() {
                return;
            }
        }
        let submission = self.fluid.context().queue.submit([]);
        self.in_flight.push_back(submission);
        if self.in_flight.len() > MAX_STEPS_IN_FLIGHT
            && let Some(oldest) = self.in_flight.pop_front()
        {
            // A device that does not finish in time counts as failed (the driver's rule).
            self.fluid.wait_for(oldest);
        }
    }

    fn set_solids(&mut self, solids: Option<Solids>) {
        self.fluid.set_solids(solids.as_ref());
    }

    fn render(&mut self, job: &FrameJob, out: &mut [u8]) {
        self.picture.settle(self.fluid.context());
        match self.encode_frame(job) {
            Some(serial) => {
                let ctx = self.fluid.context();
                let look = light_look(job.look);
                self.picture.finish(ctx, serial, &look, out);
            }
            None => out.fill(0),
        }
    }

    fn request_frame(&mut self, job: &FrameJob) -> Option<bool> {
        let _ = self.fluid.context().device.poll(wgpu::PollType::Poll);
        Some(self.encode_frame(job).is_some())
    }

    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        self.picture.collect(self.fluid.context(), out)
    }

    /// As the CPU's (see [`rest_speed`]), from places read back without waiting: the
    /// measurement a call returns is from a copy an earlier call started.
    fn probe(&mut self, tag: u64, seconds: &mut f32) -> Option<(u64, Activity)> {
        let _ = self.fluid.context().device.poll(wgpu::PollType::Poll);
        self.probe.collect();
        if self.fluid.is_empty() {
            self.probe.before.clear();
            self.probe.latest = Some((tag, empty_activity()));
            return self.probe.latest;
        }
        if self.probe.start(&self.fluid, tag, *seconds) {
            *seconds = 0.0;
        }
        self.probe.latest
    }

    fn failure(&self) -> Option<GpuError> {
        self.fluid.failure()
    }
}
