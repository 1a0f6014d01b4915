//! The particle fluid's GPU pipelines and buffers (for [`crate::sim::sph::gpu::GpuFluid`]): the sort's
//! and the step's kernels, built once per device, and the buffers for a capacity of particles
//! and cells with every bind group over them, built once per capacity.

use crate::gpu::kernel::{Kernel, module, storage, uniform};
use crate::sim::particles::gpu::reorder::{Motion, Reorder, ReorderGroups};
use crate::sim::particles::gpu::step::{ContainerBindings, StepGroups, StepKernels, StepUniform};
use crate::sim::particles::hash::gpu::{CellSort, CellSortGroups, CellSortUniform};
use crate::sim::sph::gpu::{BLOCK, SW, StageUniform, binding};

/// The pipelines, built once per device.
pub(super) struct Pipelines {
    /// The core's step, in the 2D box.
    pub step: StepKernels,
    pub key_pairs: Kernel,
    /// The core's counting sort by cell.
    pub cell_sort: CellSort,
    pub bitonic_blocks: Kernel,
    pub bitonic_local: Kernel,
    pub bitonic_global: Kernel,
    pub pair_starts: Kernel,
    /// The core's gather into sorted order, in 2D.
    pub reorder: Reorder,
}

impl Pipelines {
    pub(super) fn new(device: &wgpu::Device) -> Self {
        let sort = module(device, "sph_sort");
        let k = |m: &wgpu::ShaderModule, e| Kernel::new(device, m, e);
        Self {
            step: StepKernels::new(device, 2, &[]),
            key_pairs: k(&sort, "key_pairs"),
            cell_sort: CellSort::new(device),
            bitonic_blocks: k(&sort, "bitonic_blocks"),
            bitonic_local: k(&sort, "bitonic_local"),
            bitonic_global: k(&sort, "bitonic_global"),
            pair_starts: k(&sort, "pair_starts"),
            reorder: Reorder::new(device, 2),
        }
    }
}

/// A bitonic merge step: `(k, j, bind group)`; `j == 0` is the in-memory run of half-widths
/// 256..1 of stage `k`.
pub(super) type StageGroup = (u32, u32, wgpu::BindGroup);

/// The buffers for up to `capacity` particles and `cells` cells, and their bind groups.
pub(super) struct Resources {
    pub capacity: usize,
    pub cells: usize,
    pub uniform: wgpu::Buffer,
    /// The shared cell sort's uniform (particles, cells).
    pub sort_uniform: wgpu::Buffer,
    /// The particles' own buffers (the core's).
    pub motion: Motion,
    pub counts: wgpu::Buffer,
    pub start: wgpu::Buffer,
    pub order: wgpu::Buffer,
    pub groups: Groups,
}

pub(super) struct Groups {
    pub step: StepGroups,
    pub key_pairs: wgpu::BindGroup,
    pub cell_sort: CellSortGroups,
    pub bitonic_blocks: wgpu::BindGroup,
    pub stages: Vec<StageGroup>,
    pub pair_starts: wgpu::BindGroup,
    pub reorder: ReorderGroups,
}

/// The bitonic sort's length for `n` particles: a power of two, at least a block.
pub(super) fn padded(n: usize) -> usize {
    n.next_power_of_two().max(BLOCK)
}

impl Resources {
    pub(super) fn new(device: &wgpu::Device, k: &Pipelines, capacity: usize, cells: usize) -> Self {
        use binding::sort as so;
        let u = |label, count: usize| storage(device, label, (count * 4) as u64);
        let uniform = uniform(device, "SPH: uniform", &StepUniform::default());
        let sort_uniform =
            crate::gpu::kernel::uniform(device, "SPH: cell sort", &CellSortUniform::default());
        let motion = Motion::new(device, "SPH", 2, capacity);
        let Motion {
            pos,
            vel,
            pred,
            svel,
            density,
            ..
        } = &motion;
        let keys = u("SPH: keys", capacity);
        let counts = u("SPH: counts", cells);
        let start = u("SPH: start", cells + 1);
        let sums = u("SPH: block sums", cells.div_ceil(SW as usize));
        let fill = u("SPH: fill", cells);
        let arrival = u("SPH: arrival", capacity);
        let order = u("SPH: order", capacity);
        let pairs = storage(device, "SPH: pairs", (capacity * 8) as u64);
        let s = &uniform;
        let mut stages = Vec::new();
        let mut kk = 2 * BLOCK;
        while kk <= capacity {
            let mut j = kk / 2;
            while j >= BLOCK {
                stages.push((kk as u32, j as u32));
                j /= 2;
            }
            stages.push((kk as u32, 0));
            kk *= 2;
        }
        let stages = stages
            .into_iter()
            .map(|(kk, j)| {
                let t = crate::gpu::kernel::uniform(
                    device,
                    "SPH: bitonic stage",
                    &StageUniform {
                        k: kk,
                        j,
                        ..Default::default()
                    },
                );
                let group = if j == 0 {
                    k.bitonic_local
                        .bind(device, &[(so::PAIRS, &pairs), (so::T, &t)])
                } else {
                    k.bitonic_global
                        .bind(device, &[(so::S, s), (so::PAIRS, &pairs), (so::T, &t)])
                };
                (kk, j, group)
            })
            .collect();
        let groups = Groups {
            step: k.step.bind(
                device,
                [s, pos, vel, pred, svel, &start, density, &keys, &counts],
                &ContainerBindings {
                    buffers: &[],
                    stages: &[],
                    passes: &[],
                },
            ),
            key_pairs: k.key_pairs.bind(
                device,
                &[(so::S, s), (so::KEYS, &keys), (so::PAIRS, &pairs)],
            ),
            cell_sort: k.cell_sort.bind(
                device,
                [
                    &sort_uniform,
                    &keys,
                    &counts,
                    &start,
                    &sums,
                    &fill,
                    &arrival,
                    &order,
                ],
            ),
            bitonic_blocks: k.bitonic_blocks.bind(device, &[(so::PAIRS, &pairs)]),
            stages,
            pair_starts: k.pair_starts.bind(
                device,
                &[
                    (so::S, s),
                    (so::START, &start),
                    (so::ORDER, &order),
                    (so::PAIRS, &pairs),
                ],
            ),
            reorder: motion.bind_reorder(device, &k.reorder, &sort_uniform, &order),
        };
        Self {
            capacity,
            cells,
            uniform,
            sort_uniform,
            motion,
            counts,
            start,
            order,
            groups,
        }
    }
}
