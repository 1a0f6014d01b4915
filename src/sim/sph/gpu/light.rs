//! The particle fluid's light on the GPU (`shaders/sph_light.wgsl`): the particles splatted
//! into a field of light, as the CPU's [`crate::sim::sph::cpu::light::Light::draw`] does, written into the
//! buffer the picture reads as its dye. Sums are in fixed point ([`LIGHT_UNITS`] a unit)
//! with atomics, so they do not depend on the order the GPU runs the particles in.

use crate::fluid::LiquidStyle;
use crate::gpu::kernel::{Binding, Kernel, module, storage, uniform};
use crate::sim::sph::gpu::{SW, groups};
use crate::sim::sph::shared::Footprint;

/// Fixed-point units of light per unit (`LIGHT_UNITS` in sph_light.wgsl): a particle's
/// contribution rounds to 1/16 384, far below what 8 bits show.
pub const LIGHT_UNITS: f32 = 16_384.0;

/// The `@binding`s of sph_light.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub const L: Binding = Binding::new(0, "L");
    pub const POS: Binding = Binding::new(1, "pos");
    pub const VEL: Binding = Binding::new(2, "vel");
    pub const COLOR: Binding = Binding::new(3, "color");
    pub const ACC: Binding = Binding::new(4, "acc");
    pub const FIELD: Binding = Binding::new(5, "field");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[L, POS, VEL, COLOR, ACC, FIELD];
}

/// The uniform `LightField` of sph_light.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct LightUniform {
    pub n: u32,
    pub w: u32,
    pub h: u32,
    pub style: u32,
    pub speed: u32,
    pub scale: f32,
    pub reach: f32,
    pub radius: f32,
    pub norm: f32,
    pub _p0: u32,
    pub _p1: u32,
    pub _p2: u32,
}

/// What the light of one frame is drawn from and into.
pub(crate) struct LightJob<'a> {
    /// The particles' positions, velocities and colours, and how many there are.
    pub particles: (&'a wgpu::Buffer, &'a wgpu::Buffer, &'a wgpu::Buffer, usize),
    /// The box's width and the target density (box units).
    pub box_width: f32,
    pub target_density: f32,
    /// The field's size, and the RGBA buffer it is written into (at least `w x h` vec4s).
    pub size: (usize, usize),
    pub field: &'a wgpu::Buffer,
    pub style: LiquidStyle,
    /// Coloured by speed (the source's gradient) instead of by their own colours.
    pub speed_colours: bool,
}

/// The buffers a bind group was made for.
type Bound = [wgpu::Buffer; 5];

/// The light's pipelines, uniform, fixed-point planes and bind groups.
pub(crate) struct GpuLight {
    splat: Kernel,
    resolve: Kernel,
    uniform: wgpu::Buffer,
    /// The five planes, for at most this many cells.
    acc: Option<(usize, wgpu::Buffer)>,
    groups: Option<(Bound, [wgpu::BindGroup; 2])>,
}

impl GpuLight {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "sph_light");
        Self {
            splat: Kernel::new(device, &m, "light_splat"),
            resolve: Kernel::new(device, &m, "light_resolve"),
            uniform: uniform(device, "SPH: light", &LightUniform::default()),
            acc: None,
            groups: None,
        }
    }

    /// Clear the planes, splat the particles and write the field, into `encoder`.
    pub fn encode(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        job: &LightJob,
    ) {
        use binding::*;
        let (pos, vel, color, n) = job.particles;
        let (w, h) = job.size;
        let cells = (w * h).max(1);
        if self.acc.as_ref().is_none_or(|(c, _)| *c < cells) {
            let bytes = (5 * cells * 4) as u64;
            self.acc = Some((cells, storage(device, "SPH: light planes", bytes)));
        }
        let (_, acc) = self.acc.as_ref().expect("made above");
        let bound: Bound = [
            pos.clone(),
            vel.clone(),
            color.clone(),
            acc.clone(),
            job.field.clone(),
        ];
        if self.groups.as_ref().is_none_or(|(b, _)| *b != bound) {
            let u = &self.uniform;
            let splat = self.splat.bind(
                device,
                &[(L, u), (POS, pos), (VEL, vel), (COLOR, color), (ACC, acc)],
            );
            let resolve = self
                .resolve
                .bind(device, &[(L, u), (ACC, acc), (FIELD, job.field)]);
            self.groups = Some((bound, [splat, resolve]));
        }
        let f = Footprint::new(job.box_width, job.target_density, w, job.style);
        let u = LightUniform {
            n: n as u32,
            w: w as u32,
            h: h as u32,
            style: u32::from(job.style == LiquidStyle::Discs),
            speed: u32::from(job.speed_colours),
            scale: f.scale,
            reach: f.reach,
            radius: f.radius,
            norm: f.norm,
            ..LightUniform::default()
        };
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
        encoder.clear_buffer(acc, 0, Some((5 * w * h * 4) as u64));
        let (_, [splat, resolve]) = self.groups.as_ref().expect("bound above");
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("SPH: light"),
            timestamp_writes: None,
        });
        if n > 0 {
            pass.set_pipeline(&self.splat.pipeline);
            pass.set_bind_group(0, splat, &[]);
            pass.dispatch_workgroups(groups(n), 1, 1);
        }
        pass.set_pipeline(&self.resolve.pipeline);
        pass.set_bind_group(0, resolve, &[]);
        pass.dispatch_workgroups((cells as u32).div_ceil(SW), 1, 1);
    }
}
