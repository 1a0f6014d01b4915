//! The particle fluid on the GPU: the same step as [`Fluid::step`] as wgpu compute passes
//! (the particle core's, [`crate::sim::particles::gpu::step`], with the 2D box), with the
//! neighbour search's sort by either of two methods ([`Sort`]: the core's counting sort or
//! `shaders/sph_sort.wgsl`'s bitonic sort); both give the CPU's order exactly (by cell, by
//! index within a cell).
//!
//! The particles live on the GPU between steps; [`GpuFluid::upload`] hands it a CPU fluid's
//! particles and [`GpuFluid::download`] reads them back (tests, statistics). With obstacles
//! ([`GpuFluid::set_solids`]) each step ends with the collisions of `shaders/sph_solids.wgsl`.
//! The pipelines, buffers and bind groups are in `resources.rs`.

pub mod light;
pub mod model;
mod resources;
pub mod solids;

use crate::gpu::frames::pod_vec;
use crate::gpu::kernel::Binding;
use crate::gpu::serial::{SERIAL_MASK, serial_from_f32, serial_to_f32};
use crate::sim::particles::gpu::Timing;
use crate::sim::particles::gpu::sources::{GpuFresh2, GpuImpulse, SourceKernels, Sources};
use crate::sim::particles::gpu::step::{After, Step, StepUniform};
use crate::sim::particles::hash::Grid;
use crate::sim::particles::hash::gpu::CellSortUniform;
use crate::sim::particles::sources::Impulse;
use crate::sim::sph::gpu::resources::{Pipelines, Resources, padded};
use crate::sim::sph::gpu::solids::{CollideKernel, GpuSolids};
use crate::sim::sph::solids::Solids;
use crate::sim::sph::{Fluid, Knobs};

use crate::gpu::{GpuContext, GpuError};

/// Threads per workgroup: the cell sort's (the step's passes use the same).
pub use crate::sim::particles::hash::gpu::SW;
/// Pairs per workgroup of the bitonic sort's in-memory stages.
pub(super) const BLOCK: usize = 512;

/// How the GPU sorts the particles by cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sort {
    /// Counting sort: cell counts, a prefix sum, a scatter, each cell put in index order.
    #[default]
    Counting,
    /// Bitonic merge sort of (cell, index) pairs, as in Lague's source.
    Bitonic,
}

/// The `@binding`s of sph_sort.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub mod sort {
        use super::Binding;
        pub const S: Binding = Binding::new(0, "S");
        pub const KEYS: Binding = Binding::new(2, "keys");
        pub const START: Binding = Binding::new(4, "start");
        pub const ORDER: Binding = Binding::new(8, "order");
        pub const PAIRS: Binding = Binding::new(9, "pairs");
        pub const T: Binding = Binding::new(10, "T");
        #[cfg(test)]
        pub const ALL: &[Binding] = &[S, KEYS, START, ORDER, PAIRS, T];
    }
}

/// The uniform `Stage` of sph_sort.wgsl: one merge step of the bitonic sort.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct StageUniform {
    pub k: u32,
    pub j: u32,
    pub _p0: u32,
    pub _p1: u32,
}

/// The particle fluid on the GPU.
pub struct GpuFluid {
    ctx: GpuContext,
    kernels: Pipelines,
    res: Option<Resources>,
    /// Box width and height.
    size: [f32; 2],
    n: usize,
    sort: Sort,
    timing: Timing,
    collide: CollideKernel,
    /// The obstacles the particles collide with.
    solids: Option<GpuSolids>,
    source_kernels: SourceKernels,
    sources: Sources<GpuFresh2>,
    /// The next serial number to give; the particles hold the `n` before it.
    births: u64,
}

pub(super) use crate::sim::particles::gpu::groups;

impl GpuFluid {
    /// An empty fluid on `ctx`'s device (its pipelines built: a few ms).
    pub fn new(ctx: GpuContext) -> Self {
        let kernels = Pipelines::new(&ctx.device);
        let collide = CollideKernel::new(&ctx.device);
        let (source_kernels, sources) = (
            SourceKernels::new(&ctx.device, 2),
            Sources::new(&ctx.device, "SPH"),
        );
        Self {
            collide,
            solids: None,
            source_kernels,
            sources,
            births: 0,
            ctx,
            kernels,
            res: None,
            size: Fluid::new(1.0).size(),
            n: 0,
            sort: Sort::default(),
            timing: Timing::default(),
        }
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> String {
        self.ctx.adapter_name()
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The sort the steps use.
    pub fn set_sort(&mut self, sort: Sort) {
        self.sort = sort;
    }

    /// Time each step with timestamp queries (when the adapter has them); the steps still run
    /// back to back, and [`GpuFluid::take_gpu_times`] reads the times.
    pub fn set_timing(&mut self, on: bool) {
        self.timing.set(&self.ctx, on, "SPH: step times");
    }

    /// The GPU times of the steps timed since the last call, ms (none without timestamps).
    pub fn take_gpu_times(&mut self) -> Vec<f64> {
        self.timing.take(&self.ctx)
    }

    /// Buffers for `n` particles and `cells` cells (kept when large enough).
    fn reserve(&mut self, n: usize, cells: usize) {
        let fits = self
            .res
            .as_ref()
            .is_some_and(|r| r.capacity >= padded(n) && r.cells >= cells);
        if !fits {
            let (capacity, cells) = match &self.res {
                Some(r) => (padded(n).max(r.capacity), cells.max(r.cells)),
                None => (padded(n), cells),
            };
            let fresh = Resources::new(&self.ctx.device, &self.kernels, capacity, cells);
            // The particles carry over (a smaller radius needs more cells mid-run).
            if let Some(old) = &self.res
                && self.n > 0
            {
                let mut enc = self.ctx.device.create_command_encoder(&Default::default());
                let n = self.n.min(old.capacity);
                fresh.motion.copy_from(&mut enc, &old.motion, n);
                self.ctx.queue.submit([enc.finish()]);
            }
            self.res = Some(fresh);
            if let Some(s) = &mut self.solids {
                s.unbind();
            }
            self.sources.unbind();
        }
    }

    /// Collide the particles with `solids` after each step from now on (`None`: no
    /// obstacles), as [`Solids::collide`] with the step's dt and wall damping.
    pub fn set_solids(&mut self, solids: Option<&Solids>) {
        self.solids = solids.map(|s| GpuSolids::new(&self.ctx.device, s));
    }

    /// Take `fluid`'s box and particles (positions, velocities, colours).
    pub fn upload(&mut self, fluid: &Fluid) {
        self.size = fluid.size();
        // Nothing to carry over into new buffers: the upload replaces it.
        self.n = 0;
        self.reserve(fluid.len(), 1);
        self.n = fluid.len();
        let Some(r) = &self.res else { return };
        let q = &self.ctx.queue;
        // Serial numbers made consecutive, in the order of birth: the oldest gets
        // `births - n`.
        let n = fluid.len();
        let mut by_birth: Vec<usize> = (0..n).collect();
        by_birth.sort_by_key(|&i| (fluid.birth.get(i).copied().unwrap_or(0), i));
        let latest = fluid.birth.iter().copied().max().map_or(0, |b| b + 1);
        self.births = fluid.births.max(latest).max(n as u64);
        let oldest = self.births - n as u64;
        let mut serial = vec![0u64; n];
        for (rank, &i) in by_birth.iter().enumerate() {
            serial[i] = oldest + rank as u64;
        }
        let colors: Vec<[f32; 4]> = fluid
            .color
            .iter()
            .zip(&serial)
            .map(|(c, &s)| [c[0], c[1], c[2], serial_to_f32(s)])
            .collect();
        if self.n > 0 {
            q.write_buffer(&r.motion.pos, 0, bytemuck::cast_slice(&fluid.pos));
            q.write_buffer(&r.motion.vel, 0, bytemuck::cast_slice(&fluid.vel));
            q.write_buffer(&r.motion.color, 0, bytemuck::cast_slice(&colors));
        }
    }

    /// Read the particles back into `fluid` (its box becomes this one's): positions,
    /// velocities, colours and densities, in the GPU's (sorted) order.
    pub fn download(&self, fluid: &mut Fluid) {
        *fluid = Fluid::new(1.0);
        fluid.size = self.size;
        let Some(r) = &self.res else { return };
        let n = self.n;
        let read = |b: &wgpu::Buffer, size: usize| {
            crate::gpu::frames::read_buffer(&self.ctx, b, (n * size).max(4) as u64)
        };
        let pairs = |bytes: Vec<u8>| -> Vec<[f32; 2]> { pod_vec(&bytes[..n * 8]) };
        fluid.pos = pairs(read(&r.motion.pos, 8));
        fluid.vel = pairs(read(&r.motion.vel, 8));
        fluid.density = pairs(read(&r.motion.density, 8));
        let colors = read(&r.motion.color, 16);
        let colors: Vec<[f32; 4]> = pod_vec(&colors[..n * 16]);
        fluid.color = colors.iter().map(|c| [c[0], c[1], c[2]]).collect();
        fluid.birth = colors
            .iter()
            .map(|c| serial_from_f32(c[3], self.births))
            .collect();
        fluid.births = self.births;
    }

    /// The box's width and height.
    pub fn size(&self) -> [f32; 2] {
        self.size
    }

    /// The device it runs on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// The particles' positions, velocities and colours (serial numbers in the fourth
    /// component), `len()` of each, in the last step's sorted order; `None` before any.
    pub(crate) fn buffers(&self) -> Option<(&wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer)> {
        self.res
            .as_ref()
            .map(|r| (&r.motion.pos, &r.motion.vel, &r.motion.color))
    }

    /// The next serial number it will give (see [`serial_from_f32`]).
    pub(crate) fn births(&self) -> u64 {
        self.births
    }

    /// Remove the `k` oldest particles (all of them when `k >= len`), as
    /// [`Fluid::remove_oldest`]. Waits for a round trip through the CPU: for a lowered budget,
    /// not for every frame.
    pub fn remove_oldest(&mut self, k: usize) {
        if k == 0 || self.n == 0 {
            return;
        }
        let mut fluid = Fluid::new(1.0);
        self.download(&mut fluid);
        fluid.remove_oldest(k);
        self.upload(&fluid);
    }

    /// Put `impulses` on the particles, in order (as [`Fluid::apply`] one after another).
    pub fn apply(&mut self, impulses: &[Impulse]) {
        let Some(r) = &self.res else { return };
        self.sources.apply(
            &self.ctx,
            &self.source_kernels,
            (&r.motion.pos, &r.motion.vel, &r.motion.color),
            self.n,
            &impulses.iter().map(GpuImpulse::from).collect::<Vec<_>>(),
        );
    }

    /// Add particles at `p` with velocity `v` and colour `c`, at most `budget` in all
    /// (clamped to 1..=[`crate::sim::sph::MAX_PARTICLES`]): past it the oldest give their places to
    /// the new ones, as [`Fluid::remove_oldest`] then [`Fluid::add`] (non-finite positions
    /// become the box's centre, velocities rest). More new ones than the budget: the last of
    /// them. The budget only makes room for new ones: particles past it stay until then.
    pub fn add(&mut self, new: &[([f32; 2], [f32; 2], [f32; 3])], budget: usize) {
        let budget = budget.clamp(1, crate::sim::sph::MAX_PARTICLES);
        let new = &new[new.len().saturating_sub(budget)..];
        if new.is_empty() {
            return;
        }
        let free = budget.saturating_sub(self.n);
        let recycle = new.len().saturating_sub(free).min(self.n);
        let [w, h] = self.size;
        let finite = |a: &[f32]| a.iter().all(|x| x.is_finite());
        let fresh: Vec<GpuFresh2> = new
            .iter()
            .enumerate()
            .map(|(j, (p, v, c))| GpuFresh2 {
                pos: if finite(p) {
                    [p[0].clamp(0.0, w), p[1].clamp(0.0, h)]
                } else {
                    [0.5 * w, 0.5 * h]
                },
                vel: if finite(v) { *v } else { [0.0; 2] },
                color: [c[0], c[1], c[2], serial_to_f32(self.births + j as u64)],
            })
            .collect();
        let total = self.n + new.len() - recycle;
        let cells = self.res.as_ref().map_or(1, |r| r.cells);
        self.reserve(total, cells);
        let Some(r) = &self.res else { return };
        let oldest = (self.births - self.n as u64) as u32 & SERIAL_MASK;
        self.sources.add(
            &self.ctx,
            &self.source_kernels,
            (&r.motion.pos, &r.motion.vel, &r.motion.color),
            (self.n, recycle, oldest),
            &fresh,
        );
        self.n = total;
        self.births += new.len() as u64;
    }

    /// The uniform for a step of `dt` with `knobs` (sanitised) over `grid`.
    fn uniform(&self, k: &Knobs, dt: f32, grid: &Grid<2>) -> StepUniform {
        StepUniform {
            padded: padded(self.n) as u32,
            ..StepUniform::new(&k.physics(dt), grid, self.size, self.n, dt)
        }
    }

    /// One step of `dt` seconds (clamped to 0..1/30) with `knobs`, as [`Fluid::step`].
    pub fn step(&mut self, knobs: &Knobs, dt: f32) -> Result<(), GpuError> {
        let k = knobs.sanitized();
        let dt = if dt.is_finite() {
            dt.clamp(0.0, 1.0 / 30.0)
        } else {
            0.0
        };
        if self.n == 0 || dt == 0.0 {
            return Ok(());
        }
        self.run(&k, dt)
    }

    /// Encode and submit a step (timed when timing is on).
    fn run(&mut self, k: &Knobs, dt: f32) -> Result<(), GpuError> {
        let grid = Grid::new(self.size, k.radius);
        let cells = grid.cells();
        self.reserve(self.n, cells);
        let u = self.uniform(k, dt, &grid);
        self.timing.before_step(&self.ctx);
        let (Some(r), kn) = (&self.res, &self.kernels) else {
            return Ok(());
        };
        let (g, n, q) = (&r.groups, self.n, &self.ctx.queue);
        q.write_buffer(&r.uniform, 0, bytemuck::bytes_of(&u));
        let sort_uniform = CellSortUniform {
            n: u.n,
            cells: u.cells,
            ..Default::default()
        };
        q.write_buffer(&r.sort_uniform, 0, bytemuck::bytes_of(&sort_uniform));
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        enc.clear_buffer(&r.counts, 0, Some((cells * 4) as u64));
        let sort = |pass: &mut wgpu::ComputePass<'_>| match self.sort {
            Sort::Counting => kn.cell_sort.encode(pass, &g.cell_sort, n, cells),
            Sort::Bitonic => {
                let len = padded(n);
                kn.key_pairs.dispatch(pass, &g.key_pairs, groups(len));
                kn.bitonic_blocks
                    .dispatch(pass, &g.bitonic_blocks, (len / BLOCK) as u32);
                for (_, j, group) in g.stages.iter().filter(|s| s.0 as usize <= len) {
                    if *j == 0 {
                        kn.bitonic_local.dispatch(pass, group, (len / BLOCK) as u32);
                    } else {
                        kn.bitonic_global.dispatch(pass, group, groups(len / 2));
                    }
                }
                kn.pair_starts.dispatch(pass, &g.pair_starts, groups(n + 1));
            }
        };
        let step = Step {
            kernels: &kn.step,
            groups: &g.step,
            reorder: (&kn.reorder, &g.reorder),
            motion: &r.motion,
            n,
        };
        let (device, collide, solids) = (&self.ctx.device, &self.collide, &mut self.solids);
        let obstacles = |after, pass: &mut wgpu::ComputePass<'_>| {
            if let (After::Integrate, Some(solids)) = (after, solids.as_mut()) {
                let buffers = (&r.uniform, &r.motion.pos, &r.motion.vel);
                solids.encode(device, collide, buffers, pass, groups(n));
            }
        };
        step.encode(&mut enc, "SPH", &self.timing, sort, obstacles);
        self.ctx.queue.submit([enc.finish()]);
        self.timing.after_step();
        self.ctx.check()
    }

    /// Wait for every step in flight.
    pub fn wait(&self) {
        let _ = self.ctx.device.poll(wgpu::PollType::wait_indefinitely());
    }

    /// Sort `points` by the cell of a grid of cells `radius` wide over a `size` box, on the
    /// GPU with `sort`: the order and the start table, as [`Grid::sort`] gives them.
    pub fn sort_points(
        &mut self,
        points: &[[f32; 2]],
        size: [f32; 2],
        radius: f32,
        sort: Sort,
    ) -> Result<(Vec<u32>, Vec<u32>), GpuError> {
        let mut fluid = Fluid::new(1.0);
        fluid.size = size;
        // NaN has no defined cell on a GPU (the CPU puts it in cell 0): 0 here too.
        fluid.pos = points
            .iter()
            .map(|p| p.map(|x| if x.is_nan() { 0.0 } else { x }))
            .collect();
        fluid.vel = vec![[0.0; 2]; points.len()];
        fluid.color = vec![[0.0; 3]; points.len()];
        self.upload(&fluid);
        // Without gravity or velocity the predicted positions are the points.
        let knobs = Knobs {
            gravity: 0.0,
            radius,
            ..Knobs::default()
        };
        let previous = std::mem::replace(&mut self.sort, sort);
        // A whole step: the order and the start table are the sort's (no later stage writes
        // them).
        let result = self.run(&knobs.sanitized(), 1.0 / 60.0);
        self.sort = previous;
        result?;
        let grid = Grid::new(size, knobs.sanitized().radius);
        let Some(r) = &self.res else {
            return Ok((Vec::new(), vec![0; grid.cells() + 1]));
        };
        let read = |b: &wgpu::Buffer, count: usize| -> Vec<u32> {
            let bytes = crate::gpu::frames::read_buffer(&self.ctx, b, (count * 4) as u64);
            pod_vec(&bytes[..count * 4])
        };
        let order = if self.n > 0 {
            read(&r.order, self.n)
        } else {
            Vec::new()
        };
        Ok((order, read(&r.start, grid.cells() + 1)))
    }
}
