//! The picture stage on the GPU: a model's [`GpuSource`] through colorize, then (filmic tone)
//! bloom, sunrays and the tone pass, then the obstacle overlay, into a frame read back
//! without stalls through a pool of staging buffers. Mirrors `display/cpu/picture.rs`.
//!
//! A frame is encoded in steps, so a model can draw its own layers between them: [`begin`]
//! (target, staging buffer, uniforms), [`encode_colour`] (with a hook drawing the particles'
//! light inside the same pass), [`encode_tone`], the model's streamlines
//! ([`encode_streamlines`], from the vertices it traced) or its own layers into [`frame`],
//! [`encode_overlay`] and [`submit`]. A model with nothing of
//! its own to draw calls [`GpuPicture::encode_plain`].
//!
//! [`begin`]: GpuPicture::begin
//! [`encode_colour`]: GpuPicture::encode_colour
//! [`encode_tone`]: GpuPicture::encode_tone
//! [`encode_streamlines`]: GpuPicture::encode_streamlines
//! [`frame`]: GpuPicture::frame
//! [`encode_overlay`]: GpuPicture::encode_overlay
//! [`submit`]: GpuPicture::submit

use super::GpuSource;
use super::bloom::Bloom;
use super::colorize::Colorize;
use super::obstacle_overlay::ObstacleOverlay;
use super::streamlines::Streamlines;
use super::sunrays::Sunrays;
use super::tone::Tone;
use super::uniforms::{ColourUniform, PictureUniform};
use crate::display::streamlines::Lines;
use crate::fluid::mask::Mask;
use crate::fluid::{Look, ObstacleStyle, ToneMode};
use crate::gpu::context::GpuContext;
use crate::gpu::frames::Frames;
use crate::gpu::kernel::{Dispatcher, uniform};
use crate::gpu::timestamps::{PassSample, PassTimes, Timestamps};

/// Longest wait for a frame before it counts as lost (an offline render then stops with an
/// error; a frame rendered at once is zeros).
const FRAME_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A frame being encoded (from [`GpuPicture::begin`] to [`GpuPicture::submit`], which takes
/// it: a staging buffer is submitted once).
#[derive(Debug)]
pub struct FrameJob {
    /// The source's grid and dye sizes the colour uniform was written for.
    sizes: [(usize, usize); 2],
    /// Its staging buffer.
    index: usize,
    /// Whether the particles' light is drawn into it.
    particles: bool,
    /// Whether the filmic tone's passes run (not the legacy tone).
    filmic: bool,
    /// The effects uniform's switch: any effect on.
    effects: bool,
}

/// The picture's passes, uniforms, frame target and staging pool.
pub struct GpuPicture {
    colorize: Colorize,
    bloom: Bloom,
    sunrays: Sunrays,
    tone: Tone,
    /// A model's streamlines drawn over the finished frame (made at the first frame with them).
    streamlines: Option<Streamlines>,
    /// The obstacles drawn over the finished frame.
    overlay: ObstacleOverlay,
    /// The colour stage's uniform (`ColourUniform`), written per frame.
    colour: wgpu::Buffer,
    /// The effects' uniform (`PictureUniform`), written per frame.
    picture: wgpu::Buffer,
    /// Frame timing, when asked for ([`GpuPicture::set_timing`]) and the adapter has it:
    /// colorize (stamps 0 and 1), then the display pipeline (2 and 3).
    timing: Option<Timestamps>,
    /// GPU time of the last frame rendered with timing: `[colorize, display pipeline]` ms.
    last_ms: Option<[f64; 2]>,
    /// Each pass timed on its own, when asked for ([`GpuPicture::set_time_passes`]): the
    /// display pipeline's stages then run in a pass each.
    pass_times: Option<PassTimes>,
    frames: Frames,
}

impl GpuPicture {
    pub fn new(device: &wgpu::Device) -> Self {
        let colour = uniform(device, "Uniform: colour", &ColourUniform::default());
        Self {
            colorize: Colorize::new(device, &colour),
            bloom: Bloom::new(device),
            sunrays: Sunrays::new(device),
            tone: Tone::new(device),
            streamlines: None,
            overlay: ObstacleOverlay::new(device),
            colour,
            picture: uniform(device, "Uniform: picture", &PictureUniform::default()),
            timing: None,
            last_ms: None,
            pass_times: None,
            frames: Frames::default(),
        }
    }

    /// Forget the sources drawn so far (a model that replaced its source buffers: their bind
    /// groups would keep them alive).
    pub fn forget_sources(&mut self) {
        self.colorize.forget_sources();
    }

    /// Draw `mask` over every frame from now on (`None`: no obstacles).
    pub fn set_mask(&mut self, device: &wgpu::Device, mask: Option<&Mask>) {
        self.overlay.set_mask(device, mask);
    }

    /// Time each frame's colorize and display pipeline with timestamp queries (when the
    /// adapter has them): [`GpuPicture::last_gpu_ms`] after each [`GpuPicture::finish`].
    pub fn set_timing(&mut self, ctx: &GpuContext, on: bool) {
        self.timing = on
            .then(|| Timestamps::new(ctx, "Queries: frame time", 4))
            .flatten();
        self.last_ms = None;
    }

    /// Time every pass of each frame on its own, and count its dispatches (timestamp queries,
    /// when the adapter has them): [`GpuPicture::pass_samples`]. Reading them back waits for
    /// the frame.
    pub fn set_time_passes(&mut self, ctx: &GpuContext, on: bool) {
        self.pass_times = on
            .then(|| PassTimes::new(ctx, "Queries: frame pass times"))
            .flatten();
    }

    /// The passes of the frames timed since [`GpuPicture::set_time_passes`]: each label and
    /// its time and dispatches in each frame it ran in.
    pub fn pass_samples(&self) -> &[(String, Vec<PassSample>)] {
        self.pass_times.as_ref().map_or(&[], |p| p.samples())
    }

    /// Whether frames are timed.
    pub fn timed(&self) -> bool {
        self.timing.is_some()
    }

    /// GPU time of the last timed frame: colorize, and the display pipeline after it (bloom,
    /// sunrays, tone), in ms.
    pub fn last_gpu_ms(&self) -> Option<[f64; 2]> {
        self.last_ms
    }

    /// Frames skipped because every staging buffer was still busy.
    pub fn skipped(&self) -> u64 {
        self.frames.skipped
    }

    /// Start a `size` frame of `src` in `look` (with the particles' light when `particles`):
    /// the target (rebuilt for a new size), a free staging buffer, the uniforms. `None` when
    /// the size is empty or no staging buffer is free (a skipped frame).
    pub fn begin(
        &mut self,
        ctx: &GpuContext,
        src: &GpuSource,
        look: &Look,
        size: (usize, usize),
        particles: bool,
    ) -> Option<FrameJob> {
        if size.0 == 0 || size.1 == 0 {
            return None;
        }
        let device = &ctx.device;
        if self.colorize.ensure(device, size, particles) {
            self.frames.resize(size);
            let c = &self.colorize;
            self.bloom.bind(device, &self.picture, c.light(), c.size());
            self.sunrays.bind(device, &self.bloom);
            let (glow, _) = self.bloom.glow();
            let (colour, picture) = (&self.colour, &self.picture);
            self.tone.bind(
                device,
                colour,
                picture,
                c.light(),
                glow,
                c.frame(),
                c.size(),
            );
            self.overlay.unbind();
        }
        debug_assert!(self.bloom.fits(size));
        let index = self.frames.take_free(device, size)?;
        let colour = ColourUniform::new(src, look, size, particles);
        let picture = PictureUniform::new(look, size.1, src.dye_size.1, self.bloom.glow().1);
        ctx.queue
            .write_buffer(&self.colour, 0, bytemuck::bytes_of(&colour));
        ctx.queue
            .write_buffer(&self.picture, 0, bytemuck::bytes_of(&picture));
        Some(FrameJob {
            sizes: [src.grid, src.dye_size],
            index,
            particles,
            filmic: look.tone != ToneMode::Legacy,
            effects: picture.effects != 0,
        })
    }

    /// The frame buffer, RGBA8 rows top first (after [`GpuPicture::begin`]): a model's own
    /// layers draw into it between [`GpuPicture::encode_tone`] and
    /// [`GpuPicture::encode_overlay`].
    pub fn frame(&self) -> &wgpu::Buffer {
        self.colorize.frame()
    }

    /// A labelled compute pass with direct dispatches: timed on its own when each pass is,
    /// else by the frame queries `first` (start) and `first + 1` (end) when timing is on.
    fn timed_pass<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        label: &str,
        first: u32,
    ) -> Dispatcher<'e, 'e> {
        let (timestamp_writes, counter) = match (&self.pass_times, &self.timing) {
            (Some(p), _) => p.writes(label).unzip(),
            (None, Some(t)) => {
                let writes = wgpu::ComputePassTimestampWrites {
                    query_set: t.queries(),
                    beginning_of_pass_write_index: Some(first),
                    end_of_pass_write_index: Some(first + 1),
                };
                (Some(writes), None)
            }
            (None, None) => (None, None),
        };
        let pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes,
        });
        Dispatcher::direct(pass).counted(counter)
    }

    /// Colorize `src`. With the job's particles, their light buffer is cleared first and
    /// `draw_particles` draws into it inside the same pass (its timestamps time both).
    pub fn encode_colour(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        job: &FrameJob,
        src: &GpuSource,
        draw_particles: impl FnOnce(&mut Dispatcher, &wgpu::Buffer),
    ) {
        debug_assert_eq!(
            job.sizes,
            [src.grid, src.dye_size],
            "colour a frame from the source it began with"
        );
        if job.particles {
            encoder.clear_buffer(self.colorize.particle_light(), 0, None);
        }
        let plight = self.colorize.particle_light().clone();
        let mut d = self.timed_pass(encoder, "display.colorize", 0);
        if job.particles {
            draw_particles(&mut d, &plight);
        }
        self.colorize.encode(device, &mut d, src);
    }

    /// The filmic tone's passes (nothing in the legacy tone, whose colorize writes the frame):
    /// bloom and sunrays when on, then the tone pass.
    pub fn encode_tone(&self, encoder: &mut wgpu::CommandEncoder, job: &FrameJob, look: &Look) {
        if !job.filmic {
            return;
        }
        let fx = look.effects.sanitized();
        if self.pass_times.is_some() {
            // A pass per stage for the per-pass table: the same dispatches in the same order.
            let bloom = job.effects
                && self
                    .bloom
                    .encode_down_up(&mut self.timed_pass(encoder, "display.bloom", 2), &fx);
            if bloom {
                if fx.rays > 0.0 {
                    self.sunrays
                        .encode(&mut self.timed_pass(encoder, "display.sunrays", 2));
                }
                self.bloom
                    .encode_glow(&mut self.timed_pass(encoder, "display.glow", 2));
            }
            self.tone
                .encode(&mut self.timed_pass(encoder, "display.tone", 2));
            return;
        }
        let mut d = self.timed_pass(encoder, "display.tone", 2);
        if job.effects && self.bloom.encode_down_up(&mut d, &fx) {
            if fx.rays > 0.0 {
                self.sunrays.encode(&mut d);
            }
            self.bloom.encode_glow(&mut d);
        }
        self.tone.encode(&mut d);
    }

    /// Draw `lines` from a model's traced vertices `verts` (canvas units, `steps + 1` per seed,
    /// seeds in order) over the finished frame (alone: over black).
    pub fn encode_streamlines(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        lines: &Lines,
        verts: &wgpu::Buffer,
    ) {
        let device = &ctx.device;
        let pass = self
            .streamlines
            .get_or_insert_with(|| Streamlines::new(device));
        let frame = self.colorize.frame();
        pass.encode(device, &ctx.queue, encoder, lines, verts, frame);
    }

    /// Draw the obstacles (the mask of [`GpuPicture::set_mask`]) over the finished frame in
    /// `style`, in both tone modes.
    pub fn encode_overlay(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        style: ObstacleStyle,
    ) {
        if !self.overlay.has_mask() || style == ObstacleStyle::Hidden {
            return;
        }
        let mut d = Dispatcher::direct(encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("display.obstacle_overlay"),
            timestamp_writes: None,
        }));
        let (frame, size) = (self.colorize.frame(), self.colorize.size());
        self.overlay
            .encode(&ctx.device, &ctx.queue, &mut d, frame, size, style);
    }

    /// Resolve the timing queries, copy the frame into its staging buffer, submit `encoder`
    /// and request the mapping; the frame's serial.
    pub fn submit(
        &mut self,
        ctx: &GpuContext,
        mut encoder: wgpu::CommandEncoder,
        job: FrameJob,
    ) -> u64 {
        // Each pass timed on its own replaces the frame's two spans.
        match (&self.pass_times, &self.timing) {
            (Some(p), _) => p.resolve(&mut encoder),
            (None, Some(t)) => t.resolve(&mut encoder, if job.filmic { 4 } else { 2 }),
            (None, None) => {}
        }
        let frame = self.colorize.frame();
        self.frames.submit(ctx, encoder, frame, job.index)
    }

    /// A frame of `src` with nothing of the model's own: colour, tone and the obstacles, then
    /// [`GpuPicture::submit`]; its serial, or `None` for a skipped frame.
    pub fn encode_plain(
        &mut self,
        ctx: &GpuContext,
        src: &GpuSource,
        look: &Look,
        size: (usize, usize),
    ) -> Option<u64> {
        let job = self.begin(ctx, src, look, size, false)?;
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        self.encode_colour(&ctx.device, &mut encoder, &job, src, |_, _| {});
        self.encode_tone(&mut encoder, &job, look);
        self.encode_overlay(ctx, &mut encoder, look.obstacles);
        Some(self.submit(ctx, encoder, job))
    }

    /// Wait for the device, then drop every frame in flight (before a frame rendered at once).
    pub fn settle(&mut self, ctx: &GpuContext) {
        let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
        let mut scratch = Vec::new();
        while self.frames.collect(&mut scratch).is_some() {}
    }

    /// Wait for the frame `serial` (from [`GpuPicture::submit`]) and copy it into `out` (its
    /// size; zeros if it did not come back), reading its timing when timed.
    pub fn finish(&mut self, ctx: &GpuContext, serial: u64, look: &Look, out: &mut [u8]) {
        let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
        if let Some(p) = &mut self.pass_times {
            p.collect(ctx);
        } else if let Some(t) = &self.timing {
            let ms = t.read_pairs_ms(ctx, 2);
            // The legacy tone has no display pipeline (its stamps were not written).
            let display = if look.tone == ToneMode::Legacy {
                0.0
            } else {
                ms[1]
            };
            self.last_ms = Some([ms[0], display]);
        }
        if !self.frames.take(ctx, serial, out, FRAME_WAIT) {
            out.fill(0);
        }
    }

    /// Wait for the frame `serial` (from [`GpuPicture::submit`]) alone, without waiting for
    /// what was submitted after it, and copy it into `out` (its size); `false` (and `out`
    /// untouched) when it did not come back.
    pub fn wait(&mut self, ctx: &GpuContext, serial: u64, out: &mut [u8]) -> bool {
        let ok = self.frames.take(ctx, serial, out, FRAME_WAIT);
        if let Some(p) = &mut self.pass_times {
            p.collect(ctx);
        }
        ok
    }

    /// Copy the newest finished frame into `out` without waiting; its size.
    pub fn collect(&mut self, ctx: &GpuContext, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        let _ = ctx.device.poll(wgpu::PollType::Poll);
        self.frames.collect(out).map(|(size, _)| size)
    }
}
