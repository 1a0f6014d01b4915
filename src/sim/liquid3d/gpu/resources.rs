//! The 3D liquid's GPU pipelines and buffers (for [`super::GpuLiquid`]): the kernels of the
//! step, the sort and the sources, built once per device; the particles' buffers for a
//! capacity; the cells' buffers for a grid, with every bind group of the step over both.

use crate::gpu::kernel::{Binding, Kernel, module, storage, uniform};
use crate::sim::liquid3d::floaters::MAX_FLOATERS;
use crate::sim::particles::gpu::reorder::{Motion, Reorder, ReorderGroups};
use crate::sim::particles::gpu::sources::SourceKernels;
use crate::sim::particles::hash::gpu::{CellSort, CellSortGroups, CellSortUniform};

/// The `@binding`s of cell_sort.wgsl and liquid3d_step.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub mod step {
        use super::Binding;
        pub const L: Binding = Binding::new(0, "L");
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
        #[cfg(test)]
        pub const ALL: &[Binding] = &[
            L, POS, VEL, PRED, SVEL, START, DENSITY, KEYS, COUNTS, BALLS, PUSHES,
        ];
    }
}

/// The uniform `Liquid3d` of liquid3d_step.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct Liquid3dUniform {
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
    pub rho0: f32,
    pub stiffness: f32,
    pub near_stiffness: f32,
    pub visc: f32,
    pub damp: f32,
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
    pub _p0: u32,
    pub _p1: u32,
    pub _p2: u32,
}

/// The struct `Ball` of liquid3d_step.wgsl: a floater (centre and radius, velocity and mass).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct GpuBall {
    pub pos: [f32; 4],
    pub vel: [f32; 4],
}

/// The pipelines, built once per device.
pub(super) struct Pipelines {
    pub predict: Kernel,
    /// The core's counting sort by cell.
    pub cell_sort: CellSort,
    /// The core's gather into sorted order, in 3D.
    pub reorder: Reorder,
    pub density: Kernel,
    pub forces: Kernel,
    pub moves: Kernel,
    pub floaters: Kernel,
    pub floaters_keep: Kernel,
    /// The particle core's sources stage, in 3D.
    pub sources: SourceKernels,
}

impl Pipelines {
    pub(super) fn new(device: &wgpu::Device) -> Self {
        let step = module(device, "liquid3d_step");
        let k = |m: &wgpu::ShaderModule, e| Kernel::new(device, m, e);
        Self {
            predict: k(&step, "predict"),
            cell_sort: CellSort::new(device),
            reorder: Reorder::new(device, 3),
            density: k(&step, "density_pass"),
            forces: k(&step, "forces"),
            moves: k(&step, "move_pass"),
            floaters: k(&step, "floaters_pass"),
            floaters_keep: k(&step, "floaters_keep"),
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
            uniform: uniform(device, "Liquid 3D: step", &Liquid3dUniform::default()),
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

/// The step's bind groups, one per kernel.
pub(super) struct Groups {
    pub predict: wgpu::BindGroup,
    pub cell_sort: CellSortGroups,
    pub reorder: ReorderGroups,
    pub density: wgpu::BindGroup,
    pub forces: wgpu::BindGroup,
    pub moves: wgpu::BindGroup,
    pub floaters: wgpu::BindGroup,
    pub floaters_keep: wgpu::BindGroup,
}

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
        use binding::step as s;
        let m = &p.motion;
        let all: [(Binding, &wgpu::Buffer); 11] = [
            (s::L, &p.uniform),
            (s::POS, &m.pos),
            (s::VEL, &m.vel),
            (s::PRED, &m.pred),
            (s::SVEL, &m.svel),
            (s::START, &start),
            (s::DENSITY, &m.density),
            (s::KEYS, &p.keys),
            (s::COUNTS, &counts),
            (s::BALLS, &p.balls),
            (s::PUSHES, &p.pushes),
        ];
        // Each kernel's layout lists only the bindings its entry point uses.
        let step = |kernel: &Kernel, used: &[Binding]| {
            let entries: Vec<(Binding, &wgpu::Buffer)> = all
                .iter()
                .filter(|(b, _)| used.contains(b))
                .copied()
                .collect();
            kernel.bind(device, &entries)
        };
        let groups = Groups {
            predict: step(
                &k.predict,
                &[s::L, s::POS, s::VEL, s::PRED, s::KEYS, s::COUNTS],
            ),
            cell_sort: k.cell_sort.bind(
                device,
                [
                    &uniform, &p.keys, &counts, &start, &sums, &fill, &p.arrival, &p.order,
                ],
            ),
            reorder: m.bind_reorder(device, &k.reorder, &uniform, &p.order),
            density: step(&k.density, &[s::L, s::PRED, s::START, s::DENSITY, s::BALLS]),
            forces: step(
                &k.forces,
                &[
                    s::L,
                    s::PRED,
                    s::DENSITY,
                    s::VEL,
                    s::START,
                    s::SVEL,
                    s::BALLS,
                    s::PUSHES,
                ],
            ),
            moves: step(&k.moves, &[s::L, s::POS, s::SVEL, s::VEL, s::BALLS]),
            floaters: step(&k.floaters, &[s::L, s::BALLS, s::PUSHES]),
            floaters_keep: step(&k.floaters_keep, &[s::L, s::BALLS]),
        };
        Self {
            cells,
            uniform,
            counts,
            groups,
        }
    }
}
