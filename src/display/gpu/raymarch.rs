//! The 3D liquid's picture on the GPU (`shaders/raymarch.wgsl`): the CPU's ray march
//! ([`crate::display::cpu::raymarch`]) step for step, as three passes over a [`GpuVolume`] a
//! model fills: the bricks' largest densities, the floor's shadow map, then one thread per
//! pixel of the light. The light, RGBA rows bottom first at [`Quality::light_size`], is what
//! the model hands [`super::GpuPicture`] as its dye.

use crate::display::cpu::raymarch::{Lens, Quality, ShadowRect, march_box};
use crate::display::volume::{BRICK, Ball, Scene, Volume};
use crate::gpu::GpuContext;
use crate::gpu::frames::read_f32;
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, folded, module, storage, uniform};

/// Threads per workgroup of the bricks and shadow passes (`MARCH_SW` in raymarch.wgsl); the
/// march runs 8 x 8 pixels a workgroup.
pub const MARCH_SW: u32 = 64;
/// Most balls in the tank (the 3D liquid's floaters).
pub const MAX_BALLS: usize = 8;

/// The `@binding`s of raymarch.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub const M: Binding = Binding::new(0, "M");
    pub const DENSITY: Binding = Binding::new(1, "density");
    pub const DYE: Binding = Binding::new(2, "dye");
    pub const BRICK_MAX: Binding = Binding::new(3, "brick_max");
    pub const DEPTH: Binding = Binding::new(4, "depth");
    pub const BALLS: Binding = Binding::new(5, "balls");
    pub const LIGHT: Binding = Binding::new(6, "light");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[M, DENSITY, DYE, BRICK_MAX, DEPTH, BALLS, LIGHT];
}

/// The uniform `March` of raymarch.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct MarchUniform {
    pub eye: [f32; 4],
    pub right: [f32; 4],
    pub up: [f32; 4],
    pub forward: [f32; 4],
    pub axis_x: [f32; 4],
    pub axis_y: [f32; 4],
    pub axis_z: [f32; 4],
    pub corner: [f32; 4],
    pub sun: [f32; 4],
    pub sun_local: [f32; 4],
    pub box_: [f32; 4],
    pub shadow: [f32; 4],
    pub dims: [u32; 4],
    pub bricks: [u32; 4],
    pub sizes: [u32; 4],
}

fn four(v: [f32; 3], w: f32) -> [f32; 4] {
    [v[0], v[1], v[2], w]
}

impl MarchUniform {
    /// The uniform for a volume of `dims` voxels of `voxel` m holding `balls` balls, seen in
    /// `scene` with a light of `size`.
    pub(crate) fn new(
        (dims, voxel, balls): ([usize; 3], f32, usize),
        scene: &Scene,
        size: (usize, usize),
    ) -> Self {
        let lens = Lens::new(&scene.camera, size);
        let tank = &scene.tank;
        let pixel = 2.0 * lens.half / size.1.max(1) as f32;
        let shadow = ShadowRect::new(voxel, scene);
        let (shadow, shadow_dims) = match shadow {
            Some(r) => ([r.corner[0], r.corner[1], r.texel, 1.0], r.dims),
            None => ([0.0; 4], (0, 0)),
        };
        let u = |v: usize| v as u32;
        Self {
            eye: four(scene.camera.eye, lens.half),
            right: four(lens.right, pixel),
            up: four(lens.up, 0.0),
            forward: four(lens.forward, 0.0),
            axis_x: four(tank.axes[0], voxel),
            axis_y: four(tank.axes[1], 0.0),
            axis_z: four(tank.axes[2], 0.0),
            corner: four(tank.corner, 0.0),
            sun: four(scene.sun, 0.0),
            sun_local: four(tank.dir_to_local(scene.sun), 0.0),
            box_: four(march_box(dims, voxel, scene), 0.0),
            shadow,
            dims: [u(dims[0]), u(dims[1]), u(dims[2]), u(balls.min(MAX_BALLS))],
            bricks: dims.map(|d| u(d.div_ceil(BRICK))).map_to4(),
            sizes: [u(size.0), u(size.1), u(shadow_dims.0), u(shadow_dims.1)],
        }
    }

    fn brick_count(&self) -> usize {
        self.bricks[..3].iter().map(|&b| b as usize).product()
    }

    fn texels(&self) -> usize {
        (self.sizes[2] * self.sizes[3]) as usize
    }
}

trait To4 {
    fn map_to4(self) -> [u32; 4];
}

impl To4 for [u32; 3] {
    fn map_to4(self) -> [u32; 4] {
        [self[0], self[1], self[2], 0]
    }
}

/// A liquid's volume on the GPU, as [`crate::display::volume::Volume`]: density (one `f32` a
/// voxel) and dye (`vec4`, rgb weighted by the density) over `dims` voxels of `voxel` m, and
/// the balls in it (centre and radius in voxels, colour: `Ball` of raymarch.wgsl). A model
/// fills it; its buffers are rebuilt only when the volume outgrows them.
pub struct GpuVolume {
    pub dims: [usize; 3],
    pub voxel: f32,
    pub density: wgpu::Buffer,
    pub dye: wgpu::Buffer,
    pub balls: wgpu::Buffer,
    /// The balls in use (at most [`MAX_BALLS`]).
    pub ball_count: usize,
    /// Voxels the buffers hold.
    capacity: usize,
}

impl GpuVolume {
    pub fn new(device: &wgpu::Device) -> Self {
        let mut v = Self {
            dims: [0; 3],
            voxel: 1.0,
            density: storage(device, "Volume: density", 4),
            dye: storage(device, "Volume: dye", 16),
            balls: storage(device, "Volume: balls", (MAX_BALLS * 32) as u64),
            ball_count: 0,
            capacity: 0,
        };
        v.resize(device, [1, 1, 1], 1.0);
        v
    }

    /// Make it `dims` voxels of `voxel` m; whether its buffers were made anew (bind groups of
    /// the old ones are stale).
    pub fn resize(&mut self, device: &wgpu::Device, dims: [usize; 3], voxel: f32) -> bool {
        let n = dims.iter().product::<usize>().max(1);
        self.dims = dims;
        self.voxel = voxel;
        if n <= self.capacity {
            return false;
        }
        self.capacity = n;
        self.density = storage(device, "Volume: density", (n * 4) as u64);
        self.dye = storage(device, "Volume: dye", (n * 16) as u64);
        true
    }

    /// Voxels in use.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// No voxels.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Take a volume from the CPU and its balls (m, the tank's frame), as the CPU's ray march
    /// is handed them (for tests and tools: a model splats into it on the GPU).
    pub fn upload(&mut self, ctx: &GpuContext, vol: &Volume, balls: &[Ball]) {
        self.resize(&ctx.device, vol.dims, vol.voxel);
        if !vol.density.is_empty() {
            let dye: Vec<[f32; 4]> = vol.dye.iter().map(|c| [c[0], c[1], c[2], 0.0]).collect();
            ctx.queue
                .write_buffer(&self.density, 0, bytemuck::cast_slice(&vol.density));
            ctx.queue
                .write_buffer(&self.dye, 0, bytemuck::cast_slice(&dye));
        }
        let balls: Vec<[f32; 4]> = balls
            .iter()
            .take(MAX_BALLS)
            .flat_map(|b| {
                let c = b.centre.map(|x| x / vol.voxel);
                let colour = b.color.map(|x| x.clamp(0.0, 1.0));
                [
                    [c[0], c[1], c[2], b.radius / vol.voxel],
                    [colour[0], colour[1], colour[2], 0.0],
                ]
            })
            .collect();
        self.ball_count = balls.len() / 2;
        if !balls.is_empty() {
            ctx.queue
                .write_buffer(&self.balls, 0, bytemuck::cast_slice(&balls));
        }
    }

    /// Read it back as a volume on the CPU (waits for the GPU; its bricks made on the CPU).
    pub fn download(&self, ctx: &GpuContext) -> Volume {
        let mut vol = Volume::default();
        vol.clear(self.dims, self.voxel);
        let n = self.len();
        if n > 0 {
            vol.density = read_f32(ctx, &self.density, n);
            vol.dye = read_f32(ctx, &self.dye, 4 * n)
                .chunks_exact(4)
                .map(|c| [c[0], c[1], c[2]])
                .collect();
            vol.finish();
        }
        vol
    }
}

/// The buffers a set of bind groups was made for.
type Bound = [wgpu::Buffer; 6];

/// The ray march's pipelines, uniform, bricks, shadow map and light.
pub struct GpuRayMarch {
    bricks: Kernel,
    shadow: Kernel,
    march: Kernel,
    uniform: wgpu::Buffer,
    /// The bricks' largest densities, the shadow map and the light, each with the items it
    /// holds (grown, never shrunk).
    brick_max: (usize, wgpu::Buffer),
    depth: (usize, wgpu::Buffer),
    light: (usize, wgpu::Buffer),
    groups: Option<(Bound, [wgpu::BindGroup; 3])>,
    size: (usize, usize),
}

impl GpuRayMarch {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "raymarch");
        Self {
            bricks: Kernel::new(device, &m, "bricks"),
            shadow: Kernel::new(device, &m, "shadow"),
            march: Kernel::new(device, &m, "march"),
            uniform: uniform(device, "Ray march", &MarchUniform::default()),
            brick_max: (1, storage(device, "Ray march: bricks", 4)),
            depth: (1, storage(device, "Ray march: shadow map", 4)),
            light: (1, storage(device, "Ray march: light", 16)),
            groups: None,
            size: (0, 0),
        }
    }

    /// The light (RGBA `vec4<f32>` per pixel, rows bottom first) and its size, after
    /// [`GpuRayMarch::encode`].
    pub fn light(&self) -> (&wgpu::Buffer, (usize, usize)) {
        (&self.light.1, self.size)
    }

    /// March `vol` in `scene` for a frame of `size` at `quality` and read the light back as
    /// the CPU's ray march leaves it ([`crate::display::cpu::raymarch::RayMarch::planes`]:
    /// three planes, rows bottom first); the light's size. Waits for the GPU (for tests).
    pub fn draw_planes(
        &mut self,
        ctx: &GpuContext,
        vol: &GpuVolume,
        scene: &Scene,
        size: (usize, usize),
        quality: Quality,
    ) -> ([Vec<f32>; 3], (usize, usize)) {
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let (w, h) = self.encode(ctx, &mut encoder, vol, scene, size, quality);
        ctx.queue.submit([encoder.finish()]);
        let light = read_f32(ctx, &self.light.1, 4 * w * h);
        let plane = |c: usize| light.chunks_exact(4).map(|p| p[c]).collect();
        ([plane(0), plane(1), plane(2)], (w, h))
    }

    /// March `vol` in `scene` for a `width x height` frame at `quality` into the light, in
    /// `encoder`; the light's size.
    pub fn encode(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        vol: &GpuVolume,
        scene: &Scene,
        (width, height): (usize, usize),
        quality: Quality,
    ) -> (usize, usize) {
        use binding::*;
        let (device, queue) = (&ctx.device, &ctx.queue);
        let size = quality.light_size(width.max(1), height.max(1));
        self.size = size;
        let u = MarchUniform::new((vol.dims, vol.voxel, vol.ball_count), scene, size);
        let grow = |have: &mut (usize, wgpu::Buffer), n: usize, bytes: usize, label: &str| {
            if have.0 < n {
                *have = (n, storage(device, label, (n * bytes) as u64));
            }
        };
        grow(
            &mut self.brick_max,
            u.brick_count().max(1),
            4,
            "Ray march: bricks",
        );
        grow(
            &mut self.depth,
            u.texels().max(1),
            4,
            "Ray march: shadow map",
        );
        grow(&mut self.light, size.0 * size.1, 16, "Ray march: light");
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
        let bound: Bound = [
            vol.density.clone(),
            vol.dye.clone(),
            vol.balls.clone(),
            self.brick_max.1.clone(),
            self.depth.1.clone(),
            self.light.1.clone(),
        ];
        if self.groups.as_ref().is_none_or(|(b, _)| *b != bound) {
            let un = &self.uniform;
            let (d, c, b) = (&vol.density, &vol.dye, &vol.balls);
            let (bm, dp, l) = (&self.brick_max.1, &self.depth.1, &self.light.1);
            let bricks = self
                .bricks
                .bind(device, &[(M, un), (DENSITY, d), (BRICK_MAX, bm)]);
            let shadow = self.shadow.bind(
                device,
                &[
                    (M, un),
                    (DENSITY, d),
                    (BRICK_MAX, bm),
                    (DEPTH, dp),
                    (BALLS, b),
                ],
            );
            let march = self.march.bind(
                device,
                &[
                    (M, un),
                    (DENSITY, d),
                    (DYE, c),
                    (BRICK_MAX, bm),
                    (DEPTH, dp),
                    (BALLS, b),
                    (LIGHT, l),
                ],
            );
            self.groups = Some((bound, [bricks, shadow, march]));
        }
        let (_, [bricks, shadow, march]) = self.groups.as_ref().expect("bound above");
        // An empty dispatch (no particles, no voxels) is a no-op.
        let mut d = Dispatcher::direct(encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("Ray march"),
            timestamp_writes: None,
        }));
        let list = |n: usize| folded(n.div_ceil(MARCH_SW as usize));
        if !vol.is_empty() {
            d.go(&self.bricks, bricks, list(u.brick_count()));
            d.go(&self.shadow, shadow, list(u.texels()));
        }
        let tiles = (size.0.div_ceil(8) as u32, size.1.div_ceil(8) as u32);
        d.go(&self.march, march, tiles);
        size
    }
}
