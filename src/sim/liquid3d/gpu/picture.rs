//! The GPU model's picture, drawn where its particles are: the particles splatted into a
//! volume ([`GpuSplat`]), the volume ray-marched ([`GpuRayMarch`]), and the light through the
//! display's pipeline ([`GpuPicture`]: exposure, tone, bloom, dither), read back as an RGBA8
//! frame through its pool of staging buffers. No particle leaves the GPU for a frame; the
//! passes are the CPU model's ([`crate::sim::liquid3d::splat`],
//! [`crate::display::cpu::raymarch`]) one for one.

use super::splat::{GpuSplat, SplatJob};
use crate::display::gpu::raymarch::{GpuRayMarch, GpuVolume};
use crate::display::gpu::{GpuPicture, GpuSource};
use crate::display::volume::Volume;
use crate::fluid::{ColorMode, Look};
use crate::gpu::GpuContext;
use crate::sim::liquid3d::backend::FrameView;

/// The look the light goes through the display with: its own colours (the light is the dye).
pub fn light_look(look: &Look) -> Look {
    Look {
        color_mode: ColorMode::Dye,
        ..*look
    }
}

/// The picture's passes and buffers (made at the first frame).
pub(crate) struct LiquidPicture {
    splat: GpuSplat,
    volume: GpuVolume,
    march: GpuRayMarch,
    picture: GpuPicture,
    /// The light buffer the picture's bind groups were made for.
    light: Option<wgpu::Buffer>,
}

impl LiquidPicture {
    pub(super) fn new(device: &wgpu::Device) -> Self {
        Self {
            splat: GpuSplat::new(device),
            volume: GpuVolume::new(device),
            march: GpuRayMarch::new(device),
            picture: GpuPicture::new(device),
            light: None,
        }
    }

    /// Encode and submit a frame of the `n` particles whose positions and colours are in
    /// `particles` with the floaters' buffer (none: an empty tank of `size` m) seen in `view`; its serial, or `None` for an empty size or a frame skipped
    /// because every staging buffer was busy.
    pub(super) fn encode(
        &mut self,
        ctx: &GpuContext,
        (particles, n, size): (Option<[&wgpu::Buffer; 3]>, usize, [f32; 3]),
        view: &FrameView,
    ) -> Option<u64> {
        let (w, h) = view.size;
        if w == 0 || h == 0 {
            return None;
        }
        let (device, queue) = (&ctx.device, &ctx.queue);
        let mut encoder = device.create_command_encoder(&Default::default());
        match particles {
            Some([pos, color, balls]) => {
                let job = SplatJob {
                    particles: (pos, color, n),
                    floaters: (balls, view.colours),
                    size,
                    target_density: view.target_density,
                    voxel: view.voxel,
                };
                self.splat
                    .encode(device, queue, &mut encoder, &job, &mut self.volume);
            }
            None => {
                self.volume.resize(device, [0; 3], view.voxel);
                self.volume.ball_count = 0;
            }
        }
        // At most as many rays as one binding of the light holds on this device.
        let limit = (device.limits().max_storage_buffer_binding_size / 16).max(1) as usize;
        let mut quality = view.quality;
        quality.max_rays = match quality.max_rays {
            0 => limit,
            rays => rays.min(limit),
        };
        let light_size = self.march.encode(
            ctx,
            &mut encoder,
            &self.volume,
            view.scene,
            view.size,
            quality,
        );
        let (light, _) = self.march.light();
        if self.light.as_ref() != Some(light) {
            // The old light is dropped with the picture's bind group of it.
            self.picture.forget_sources();
            self.light = Some(light.clone());
        }
        let src = GpuSource {
            grid: light_size,
            velocity: None,
            dye: light,
            dye_size: light_size,
            heat: None,
        };
        let look = light_look(view.look);
        let job = self.picture.begin(ctx, &src, &look, view.size, false)?;
        self.picture
            .encode_colour(device, &mut encoder, &job, &src, |_, _| {});
        self.picture.encode_tone(&mut encoder, &job, &look);
        Some(self.picture.submit(ctx, encoder, job))
    }

    /// Splat `job` into the volume and read it back (waits for the GPU).
    pub(super) fn splat_volume(&mut self, ctx: &GpuContext, job: &SplatJob) -> Volume {
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        self.splat
            .encode(&ctx.device, &ctx.queue, &mut encoder, job, &mut self.volume);
        ctx.queue.submit([encoder.finish()]);
        self.volume.download(ctx)
    }

    /// Wait for the device, then drop every frame in flight (before a frame rendered at once).
    pub(super) fn settle(&mut self, ctx: &GpuContext) {
        self.picture.settle(ctx);
    }

    /// Wait for frame `serial` and copy it into `out` (its size; zeros if it did not come
    /// back).
    pub(super) fn finish(&mut self, ctx: &GpuContext, serial: u64, look: &Look, out: &mut [u8]) {
        self.picture.finish(ctx, serial, &light_look(look), out);
    }

    /// Copy the newest finished frame into `out` without waiting; its size.
    pub(super) fn collect(
        &mut self,
        ctx: &GpuContext,
        out: &mut Vec<u8>,
    ) -> Option<(usize, usize)> {
        self.picture.collect(ctx, out)
    }
}
