//! The particle core's step on the GPU (`shaders/particle_step.wgsl`, composed per dimension
//! with the dimension's container, `particle_box.wgsl` or `particle_tank.wgsl`): its uniform,
//! its kernels and bind groups, and a step encoded stage by stage, as the CPU's
//! [`Particles::step_in`](crate::sim::particles::Particles::step_in): predict, sort (the cell
//! sort or a driver's own, then the gather into sorted order), densities, forces, the
//! container's passes, integrate.

use super::reorder::{Motion, Reorder, ReorderGroups};
use super::{Timing, groups};
use crate::gpu::kernel::{Binding, Kernel, particle_module};
use crate::kernels::portable::Portable;
use crate::sim::particles::hash::Grid;
use crate::sim::particles::kernels::Kernels;
use crate::sim::particles::{LOOK_AHEAD_S, MAX_NEIGHBOURS, Physics};

/// The `@binding`s of particle_step.wgsl (0-8) and of the tank's (9, 10).
pub mod binding {
    use super::Binding;
    pub const S: Binding = Binding::new(0, "S");
    pub const POS: Binding = Binding::new(1, "pos");
    pub const VEL: Binding = Binding::new(2, "vel");
    pub const PRED: Binding = Binding::new(3, "pred");
    pub const SVEL: Binding = Binding::new(4, "svel");
    pub const START: Binding = Binding::new(5, "start");
    pub const DENSITY: Binding = Binding::new(6, "density");
    pub const KEYS: Binding = Binding::new(7, "keys");
    pub const COUNTS: Binding = Binding::new(8, "counts");
    pub const BALLS: Binding = Binding::new(9, "balls");
    pub const PUSHES: Binding = Binding::new(10, "pushes");
    /// The core's, in order (their buffers given in this order to [`super::StepKernels::bind`]).
    pub const CORE: [Binding; 9] = [S, POS, VEL, PRED, SVEL, START, DENSITY, KEYS, COUNTS];
    #[cfg(test)]
    pub const ALL: &[Binding] = &[
        S, POS, VEL, PRED, SVEL, START, DENSITY, KEYS, COUNTS, BALLS, PUSHES,
    ];
}

/// The core's stages on the GPU: each entry point and the core's bindings it uses.
const STAGES: [(&str, &[Binding]); 4] = {
    use binding::*;
    [
        ("predict", &[S, POS, VEL, PRED, KEYS, COUNTS]),
        ("densities", &[S, PRED, START, DENSITY]),
        ("forces", &[S, PRED, DENSITY, VEL, START, SVEL]),
        ("integrate", &[S, POS, SVEL, VEL]),
    ]
};

/// The uniform `ParticleStep` of common.wgsl: a step's physics over its grid (3D vectors; in
/// 2D the third components 0 and one cell deep).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct StepUniform {
    pub n: u32,
    pub nx: u32,
    pub ny: u32,
    pub nz: u32,
    pub size: [f32; 3],
    pub h: f32,
    pub gravity: [f32; 3],
    pub inv_cell: f32,
    pub dt: f32,
    pub look: f32,
    pub target_density: f32,
    pub pressure: f32,
    pub near_pressure: f32,
    pub viscosity: f32,
    pub bulk_viscosity: f32,
    pub bounce: f32,
    pub slip: f32,
    pub keep: f32,
    pub h5: f32,
    pub poly6: f32,
    pub spiky2: f32,
    pub spiky3: f32,
    pub spiky2_slope: f32,
    pub spiky3_slope: f32,
    pub max_neighbours: u32,
    pub cells: u32,
    pub floaters: u32,
    pub grip: f32,
    pub ball_mass: f32,
    pub padded: u32,
    pub _p0: u32,
    pub _p1: u32,
}

impl StepUniform {
    /// A step of `dt` seconds for `n` particles in a container `size` across, with `k` over
    /// `grid` (the container's own fields 0).
    pub fn new<const D: usize>(
        k: &Physics<D>,
        grid: &Grid<D>,
        size: [f32; D],
        n: usize,
        dt: f32,
    ) -> Self {
        let kern = Kernels::<D>::new(grid.reach);
        let three = |v: [f32; D]| std::array::from_fn(|c| if c < D { v[c] } else { 0.0 });
        Self {
            n: n as u32,
            nx: grid.dims[0] as u32,
            ny: grid.dims[1] as u32,
            nz: grid.dims[2] as u32,
            size: three(size),
            h: kern.h,
            gravity: three(k.gravity),
            inv_cell: grid.inv_cell,
            dt,
            look: LOOK_AHEAD_S,
            target_density: k.target_density,
            pressure: k.pressure,
            near_pressure: k.near_pressure,
            viscosity: k.viscosity,
            bulk_viscosity: k.bulk_viscosity,
            bounce: k.bounce,
            slip: k.slip.ppowf(dt),
            keep: k.keep,
            h5: kern.h5(),
            poly6: kern.poly6,
            spiky2: kern.spiky2,
            spiky3: kern.spiky3,
            spiky2_slope: kern.spiky2_slope,
            spiky3_slope: kern.spiky3_slope,
            max_neighbours: MAX_NEIGHBOURS as u32,
            cells: grid.cells() as u32,
            ..Self::default()
        }
    }
}

/// The step's kernels in `D` dimensions, built once per device, with the container's passes
/// (named by their entry points).
pub struct StepKernels {
    core: [Kernel; 4],
    container: Vec<Kernel>,
}

/// The step's bind groups over one set of buffers: the core's stages', then the container's
/// passes'.
pub struct StepGroups {
    core: [wgpu::BindGroup; 4],
    container: Vec<wgpu::BindGroup>,
}

/// What a container's WGSL binds beyond the core's: its buffers, and which of them each of the
/// core's stages and each of its own passes (entry point, bindings) uses.
pub struct ContainerBindings<'a> {
    pub buffers: &'a [(Binding, &'a wgpu::Buffer)],
    /// The core's stages' extra bindings, by entry point.
    pub stages: &'a [(&'static str, &'a [Binding])],
    /// The container's passes: entry point and every binding it uses.
    pub passes: &'a [(&'static str, &'a [Binding])],
}

impl StepKernels {
    /// The kernels in `dim` dimensions, with the passes `container` names.
    pub fn new(device: &wgpu::Device, dim: usize, container: &[&'static str]) -> Self {
        let m = particle_module(device, "particle_step", dim);
        Self {
            core: STAGES.map(|(entry, _)| Kernel::new(device, &m, entry)),
            container: container
                .iter()
                .map(|entry| Kernel::new(device, &m, entry))
                .collect(),
        }
    }

    /// The bind groups over `core` (the buffers of [`binding::CORE`], in its order) and the
    /// container's.
    pub fn bind(
        &self,
        device: &wgpu::Device,
        core: [&wgpu::Buffer; 9],
        container: &ContainerBindings,
    ) -> StepGroups {
        let mut all: Vec<(Binding, &wgpu::Buffer)> = binding::CORE.into_iter().zip(core).collect();
        all.extend_from_slice(container.buffers);
        let group = |kernel: &Kernel, used: &[Binding]| {
            let entries: Vec<_> = all
                .iter()
                .filter(|(b, _)| used.contains(b))
                .copied()
                .collect();
            kernel.bind(device, &entries)
        };
        StepGroups {
            core: std::array::from_fn(|i| {
                let (entry, used) = STAGES[i];
                let extra = container.stages.iter().filter(|(e, _)| *e == entry);
                let used: Vec<Binding> = used
                    .iter()
                    .chain(extra.flat_map(|(_, b)| b.iter()))
                    .copied()
                    .collect();
                group(&self.core[i], &used)
            }),
            container: self
                .container
                .iter()
                .zip(container.passes)
                .map(|(kernel, (_, used))| group(kernel, used))
                .collect(),
        }
    }

    /// One core stage (0 predict, 1 densities, 2 forces, 3 integrate) over `n` particles.
    fn stage(&self, pass: &mut wgpu::ComputePass<'_>, g: &StepGroups, i: usize, n: usize) {
        self.core[i].dispatch(pass, &g.core[i], groups(n));
    }

    /// The container's pass `i` (in the order [`StepKernels::new`] was given), `x` workgroups.
    pub fn container_pass(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        g: &StepGroups,
        i: usize,
        x: u32,
    ) {
        self.container[i].dispatch(pass, &g.container[i], x);
    }
}

/// One step of `n` particles, encoded: the kernels and groups of each stage.
pub struct Step<'a> {
    pub kernels: &'a StepKernels,
    pub groups: &'a StepGroups,
    pub reorder: (&'a Reorder, &'a ReorderGroups),
    pub motion: &'a Motion,
    pub n: usize,
}

/// Where the container's passes go in a step: after the forces, after integrate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    Forces,
    Integrate,
}

impl Step<'_> {
    /// Encode the step into `enc` in two passes (timed by `timing` when it is on) labelled by
    /// their stages: `<room>.predict_and_sort` (predict, `sort`, the gather and its copy back)
    /// and `<room>.densities+forces+integrate` (`container` after the forces and integrate).
    pub fn encode(
        &self,
        enc: &mut wgpu::CommandEncoder,
        room: &str,
        timing: &Timing,
        sort: impl FnOnce(&mut wgpu::ComputePass<'_>),
        mut container: impl FnMut(After, &mut wgpu::ComputePass<'_>),
    ) {
        let (k, g, n) = (self.kernels, self.groups, self.n);
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(&format!("{room}.predict_and_sort")),
                timestamp_writes: timing.writes(false),
            });
            k.stage(&mut pass, g, 0, n);
            sort(&mut pass);
            self.reorder.0.encode(&mut pass, self.reorder.1, n);
        }
        self.motion.copy_sorted(enc, n);
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(&format!("{room}.densities+forces+integrate")),
            timestamp_writes: timing.writes(true),
        });
        k.stage(&mut pass, g, 1, n);
        k.stage(&mut pass, g, 2, n);
        container(After::Forces, &mut pass);
        k.stage(&mut pass, g, 3, n);
        container(After::Integrate, &mut pass);
    }
}
