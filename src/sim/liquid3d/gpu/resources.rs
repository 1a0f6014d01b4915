//! The 3D liquid's GPU pipelines and buffers (for [`super::GpuLiquid`]): the kernels of the
//! core's step in the tank, the sort and the sources, built once per device; the particles' buffers for a
//! capacity; the cells' buffers for a grid, with every bind group of the step over both.

use crate::gpu::kernel::{Binding, storage, uniform};
use crate::sim::liquid3d::floaters::MAX_FLOATERS;
use crate::sim::particles::gpu::reorder::{Motion, Reorder, ReorderGroups};
use crate::sim::particles::gpu::sources::SourceKernels;
use crate::sim::particles::gpu::step::binding::{BALLS, PUSHES, S};
use crate::sim::particles::gpu::step::{ContainerBindings, StepGroups, StepKernels, StepUniform};
use crate::sim::particles::hash::gpu::{CellSort, CellSortGroups, CellSortUniform};

/// The struct `Ball` of particle_tank.wgsl: a floater (centre and radius, velocity and mass).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct GpuBall {
    pub pos: [f32; 4],
    pub vel: [f32; 4],
}

/// The pipelines, built once per device.
pub(super) struct Pipelines {
    /// The core's step in the tank, with its floaters' passes ([`TANK_PASSES`]).
    pub step: StepKernels,
    /// The core's counting sort by cell.
    pub cell_sort: CellSort,
    /// The core's gather into sorted order, in 3D.
    pub reorder: Reorder,
    /// The particle core's sources stage, in 3D.
    pub sources: SourceKernels,
}

impl Pipelines {
    pub(super) fn new(device: &wgpu::Device) -> Self {
        Self {
            step: StepKernels::new(device, 3, &TANK_PASSES.map(|(entry, _)| entry)),
            cell_sort: CellSort::new(device),
            reorder: Reorder::new(device, 3),
            sources: SourceKernels::new(device, 3),
        }
    }
}

/// The particles' buffers for up to `capacity` particles (`vec4`s of 16 bytes; densities 8).
pub(super) struct Particles {
    pub capacity: usize,
    pub uniform: wgpu::Buffer,
    /// The particles' own buffers (the core's).
    pub motion: Motion,
    pub keys: wgpu::Buffer,
    pub arrival: wgpu::Buffer,
    pub order: wgpu::Buffer,
    /// The floaters, and the pushes the particles pay back to them (fixed point, atomics).
    pub balls: wgpu::Buffer,
    pub pushes: wgpu::Buffer,
}

impl Particles {
    pub(super) fn new(device: &wgpu::Device, capacity: usize) -> Self {
        let one = |label: &str| storage(device, label, (capacity * 4) as u64);
        Self {
            capacity,
            uniform: uniform(device, "Liquid 3D: step", &StepUniform::default()),
            motion: Motion::new(device, "Liquid 3D", 3, capacity),
            keys: one("Liquid 3D: cell keys"),
            arrival: one("Liquid 3D: arrival order"),
            order: one("Liquid 3D: sorted order"),
            balls: storage(
                device,
                "Liquid 3D: floaters",
                (MAX_FLOATERS * size_of::<GpuBall>()) as u64,
            ),
            pushes: storage(
                device,
                "Liquid 3D: floaters' pushes",
                (MAX_FLOATERS * 16) as u64,
            ),
        }
    }

    /// Copy `old`'s first `n` particles (positions, velocities, colours, densities) and the
    /// floaters.
    pub(super) fn copy_from(&self, enc: &mut wgpu::CommandEncoder, old: &Particles, n: usize) {
        self.motion.copy_from(enc, &old.motion, n);
        enc.copy_buffer_to_buffer(&old.balls, 0, &self.balls, 0, old.balls.size());
    }
}

/// The cells' buffers for up to `cells` cells, and the step's bind groups.
pub(super) struct Cells {
    pub cells: usize,
    pub uniform: wgpu::Buffer,
    pub counts: wgpu::Buffer,
    pub groups: Groups,
}

/// The step's bind groups.
pub(super) struct Groups {
    pub step: StepGroups,
    pub cell_sort: CellSortGroups,
    pub reorder: ReorderGroups,
}

/// The tank's passes (particle_tank.wgsl): the floaters moved after the forces, their drag
/// after integrate; each with its bindings.
pub(super) const TANK_PASSES: [(&str, &[Binding]); 2] = [
    ("floaters", &[S, BALLS, PUSHES]),
    ("floaters_keep", &[S, BALLS]),
];

/// What the tank adds to the core's stages: the floaters met as walls, pushed and gripped.
const TANK_STAGES: [(&str, &[Binding]); 3] = [
    ("densities", &[BALLS]),
    ("forces", &[BALLS, PUSHES]),
    ("integrate", &[BALLS]),
];

impl Cells {
    pub(super) fn new(device: &wgpu::Device, k: &Pipelines, p: &Particles, cells: usize) -> Self {
        let uniform = uniform(device, "Liquid 3D: sort", &CellSortUniform::default());
        let counts = storage(device, "Liquid 3D: cell counts", (cells * 4) as u64);
        let start = storage(device, "Liquid 3D: cell starts", ((cells + 1) * 4) as u64);
        let sums = storage(
            device,
            "Liquid 3D: scan sums",
            (cells.div_ceil(super::SW as usize) * 4) as u64,
        );
        let fill = storage(device, "Liquid 3D: cell fill", (cells * 4) as u64);
        let m = &p.motion;
        let groups = Groups {
            step: k.step.bind(
                device,
                [
                    &p.uniform, &m.pos, &m.vel, &m.pred, &m.svel, &start, &m.density, &p.keys,
                    &counts,
                ],
                &ContainerBindings {
                    buffers: &[(BALLS, &p.balls), (PUSHES, &p.pushes)],
                    stages: &TANK_STAGES,
                    passes: &TANK_PASSES,
                },
            ),
            cell_sort: k.cell_sort.bind(
                device,
                [
                    &uniform, &p.keys, &counts, &start, &sums, &fill, &p.arrival, &p.order,
                ],
            ),
            reorder: m.bind_reorder(device, &k.reorder, &uniform, &p.order),
        };
        Self {
            cells,
            uniform,
            counts,
            groups,
        }
    }
}
