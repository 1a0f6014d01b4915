//! The 3D liquid's particles into the picture's volume on the GPU
//! (`shaders/liquid3d_splat.wgsl`): the CPU's [`crate::sim::liquid3d::splat::splat`] as
//! passes, into a [`GpuVolume`] the ray march reads. The cloud-in-cell sums are in 64-bit fixed
//! point (65 536 units a unit) with atomics, so they do not depend on the order the GPU runs the
//! particles in; the smoothing ping-pongs between the volume and a second one; the walls are
//! evened out as on the CPU; the floaters become the march's balls.

use crate::display::gpu::raymarch::{GpuVolume, MAX_BALLS};
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, folded, module, storage, uniform};
use crate::sim::liquid3d::splat::{grid, inside, norm};

/// Threads per workgroup (`SPLAT_SW` in liquid3d_splat.wgsl).
pub const SPLAT_SW: u32 = 256;
/// Fixed-point units per unit of density (`UNITS` in liquid3d_splat.wgsl, which alone uses
/// it): a particle's share rounds to 1/65 536 of the bulk, far below what the picture shows.
#[cfg(test)]
pub const UNITS: f32 = 65_536.0;

/// The `@binding`s of liquid3d_splat.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub const S: Binding = Binding::new(0, "S");
    pub const POS: Binding = Binding::new(1, "pos");
    pub const COLOR: Binding = Binding::new(2, "color");
    pub const ACC: Binding = Binding::new(3, "acc");
    pub const SRC_D: Binding = Binding::new(4, "src_d");
    pub const SRC_C: Binding = Binding::new(5, "src_c");
    pub const DST_D: Binding = Binding::new(6, "dst_d");
    pub const DST_C: Binding = Binding::new(7, "dst_c");
    pub const SCALES: Binding = Binding::new(8, "scales");
    pub const STEP_BALLS: Binding = Binding::new(9, "step_balls");
    pub const BALLS: Binding = Binding::new(10, "balls");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[
        S, POS, COLOR, ACC, SRC_D, SRC_C, DST_D, DST_C, SCALES, STEP_BALLS, BALLS,
    ];
}

/// The uniform `Splat3d` of liquid3d_splat.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct Splat3dUniform {
    pub n: u32,
    pub nx: u32,
    pub ny: u32,
    pub nz: u32,
    pub inside_x: u32,
    pub inside_y: u32,
    pub inside_z: u32,
    pub floaters: u32,
    pub inv_voxel: f32,
    pub norm: f32,
    pub _p0: u32,
    pub _p1: u32,
    pub colours: [[f32; 4]; MAX_BALLS],
}

/// What a frame's volume is splatted from.
pub(crate) struct SplatJob<'a> {
    /// The particles' positions and colours (`vec4`s) and how many there are.
    pub particles: (&'a wgpu::Buffer, &'a wgpu::Buffer, usize),
    /// The step's floaters (`Ball` of particle_tank.wgsl) and their colours.
    pub floaters: (&'a wgpu::Buffer, &'a [[f32; 3]]),
    /// The tank's size, m, and the particles per m³ of the liquid at rest.
    pub size: [f32; 3],
    pub target_density: f32,
    /// The voxel asked for, m (the volume's may be coarser: [`grid`]).
    pub voxel: f32,
}

/// The buffers a set of bind groups was made for.
type Bound = [wgpu::Buffer; 9];

/// The bind groups of one frame's passes.
struct Groups {
    splat: wgpu::BindGroup,
    resolve: wgpu::BindGroup,
    /// The smoothing from the volume into the other and back.
    there: [wgpu::BindGroup; 3],
    back: [wgpu::BindGroup; 3],
    /// The walls' sums and scales, across x and across z.
    sums: [wgpu::BindGroup; 2],
    scale: [wgpu::BindGroup; 2],
    balls: wgpu::BindGroup,
}

/// The splat's pipelines, uniform and working buffers.
pub(crate) struct GpuSplat {
    splat: Kernel,
    resolve: Kernel,
    smooth: [Kernel; 3],
    wall_sums: [Kernel; 2],
    wall_scale: [Kernel; 2],
    balls: Kernel,
    uniform: wgpu::Buffer,
    /// The fixed-point sums (8 words a voxel) and the second volume (density, dye), for this
    /// many voxels (grown, never shrunk).
    work: (usize, [wgpu::Buffer; 3]),
    scales: wgpu::Buffer,
    groups: Option<(Bound, Groups)>,
}

impl GpuSplat {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "liquid3d_splat");
        let k = |e| Kernel::new(device, &m, e);
        Self {
            splat: k("splat"),
            resolve: k("resolve"),
            smooth: [k("smooth_x"), k("smooth_y"), k("smooth_z")],
            wall_sums: [k("wall_sums_x"), k("wall_sums_z")],
            wall_scale: [k("wall_scale_x"), k("wall_scale_z")],
            balls: k("floater_balls"),
            uniform: uniform(device, "Liquid 3D: splat", &Splat3dUniform::default()),
            work: (0, Self::work(device, 1)),
            scales: storage(device, "Liquid 3D: wall scales", 16),
            groups: None,
        }
    }

    fn work(device: &wgpu::Device, voxels: usize) -> [wgpu::Buffer; 3] {
        let v = voxels as u64;
        [
            storage(device, "Liquid 3D: splat sums", v * 32),
            storage(device, "Liquid 3D: smoothing density", v * 4),
            storage(device, "Liquid 3D: smoothing dye", v * 16),
        ]
    }

    /// Splat `job` into `vol` (resized to the volume's grid) in `encoder`.
    pub fn encode(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        job: &SplatJob,
        vol: &mut GpuVolume,
    ) {
        use binding::*;
        let (dims, voxel) = grid(job.size, job.voxel);
        vol.resize(device, dims, voxel);
        let voxels = vol.len();
        if self.work.0 < voxels {
            self.work = (voxels, Self::work(device, voxels));
        }
        let (pos, color, n) = job.particles;
        let (step_balls, colours) = job.floaters;
        let count = colours.len().min(MAX_BALLS);
        vol.ball_count = count;
        let ins = inside(job.size, voxel, dims);
        let mut u = Splat3dUniform {
            n: n as u32,
            nx: dims[0] as u32,
            ny: dims[1] as u32,
            nz: dims[2] as u32,
            inside_x: ins[0] as u32,
            inside_y: ins[1] as u32,
            inside_z: ins[2] as u32,
            floaters: count as u32,
            inv_voxel: 1.0 / voxel,
            norm: norm(job.target_density, voxel),
            ..Default::default()
        };
        for (o, c) in u.colours.iter_mut().zip(colours) {
            *o = [c[0], c[1], c[2], 0.0];
        }
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
        let [acc, od, oc] = &self.work.1;
        let bound: Bound = [
            pos.clone(),
            color.clone(),
            acc.clone(),
            od.clone(),
            oc.clone(),
            vol.density.clone(),
            vol.dye.clone(),
            step_balls.clone(),
            vol.balls.clone(),
        ];
        if self.groups.as_ref().is_none_or(|(b, _)| *b != bound) {
            let s = &self.uniform;
            let (vd, vc) = (&vol.density, &vol.dye);
            let smooth = |k: &Kernel,
                          from: (&wgpu::Buffer, &wgpu::Buffer),
                          to: (&wgpu::Buffer, &wgpu::Buffer)| {
                k.bind(
                    device,
                    &[
                        (S, s),
                        (SRC_D, from.0),
                        (SRC_C, from.1),
                        (DST_D, to.0),
                        (DST_C, to.1),
                    ],
                )
            };
            let groups = Groups {
                splat: self
                    .splat
                    .bind(device, &[(S, s), (POS, pos), (COLOR, color), (ACC, acc)]),
                resolve: self
                    .resolve
                    .bind(device, &[(S, s), (ACC, acc), (DST_D, vd), (DST_C, vc)]),
                there: self
                    .smooth
                    .each_ref()
                    .map(|k| smooth(k, (vd, vc), (od, oc))),
                back: self
                    .smooth
                    .each_ref()
                    .map(|k| smooth(k, (od, oc), (vd, vc))),
                sums: self
                    .wall_sums
                    .each_ref()
                    .map(|k| k.bind(device, &[(S, s), (DST_D, vd), (SCALES, &self.scales)])),
                scale: self.wall_scale.each_ref().map(|k| {
                    k.bind(
                        device,
                        &[(S, s), (DST_D, vd), (DST_C, vc), (SCALES, &self.scales)],
                    )
                }),
                balls: self.balls.bind(
                    device,
                    &[(S, s), (STEP_BALLS, step_balls), (BALLS, &vol.balls)],
                ),
            };
            self.groups = Some((bound, groups));
        }
        let (_, g) = self.groups.as_ref().expect("bound above");
        encoder.clear_buffer(acc, 0, Some((voxels * 32) as u64));
        // An empty dispatch (no particles, no voxels) is a no-op.
        let mut d = Dispatcher::direct(encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("Liquid 3D: splat"),
            timestamp_writes: None,
        }));
        let list = |items: usize| folded(items.div_ceil(SPLAT_SW as usize));
        d.go(&self.splat, &g.splat, list(n));
        d.go(&self.resolve, &g.resolve, list(voxels));
        // Two passes along each axis: there and back, ending in the volume.
        for axis in 0..3 {
            d.go(&self.smooth[axis], &g.there[axis], list(voxels));
            d.go(&self.smooth[axis], &g.back[axis], list(voxels));
        }
        // The walls across x, then across z (whose sums see the x walls evened out, as on the
        // CPU): a workgroup per side, then every (line, row) of the walls.
        let lines = [ins[2] * dims[1], ins[0] * dims[1]];
        for (k, lines) in lines.into_iter().enumerate() {
            d.go(&self.wall_sums[k], &g.sums[k], (2, 1));
            d.go(&self.wall_scale[k], &g.scale[k], list(lines));
        }
        d.go(
            &self.balls,
            &g.balls,
            (count.div_ceil(SPLAT_SW as usize) as u32, 1),
        );
    }
}
