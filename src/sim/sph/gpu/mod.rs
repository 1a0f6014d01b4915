//! The particle fluid on the GPU: the particle core's driver
//! ([`GpuParticles`](crate::sim::particles::gpu::driver::GpuParticles)) in the 2D box, the same
//! step as [`Fluid::step`], with the neighbour search's sort by either of two methods ([`Sort`]:
//! the core's counting sort or Lague's bitonic sort); both give the CPU's order exactly (by
//! cell, by index within a cell).
//!
//! The particles live on the GPU between steps; [`GpuFluid::upload`] hands it a CPU fluid's
//! particles and [`GpuFluid::download`] reads them back (tests, statistics). With obstacles
//! ([`GpuFluid::set_solids`]) each step ends with the collisions of `shaders/sph_solids.wgsl`.

pub mod backend;
pub mod light;
pub mod solids;

use crate::gpu::{GpuContext, GpuError};
use crate::sim::particles::gpu::driver::{GpuContainer, GpuParticles, Hook};
use crate::sim::particles::gpu::groups;
use crate::sim::particles::gpu::step::After;
use crate::sim::particles::hash::Grid;
use crate::sim::particles::sources::Impulse;
use crate::sim::sph::gpu::solids::{CollideKernel, GpuSolids};
use crate::sim::sph::solids::Solids;
use crate::sim::sph::{Fluid, Knobs};

pub use crate::sim::particles::gpu::driver::Sort;
/// Threads per workgroup: the cell sort's (the step's passes use the same).
pub use crate::sim::particles::hash::gpu::SW;

/// The particle fluid on the GPU.
pub struct GpuFluid {
    core: GpuParticles<2>,
    collide: CollideKernel,
    /// The obstacles the particles collide with, and the buffers their bind group is over.
    solids: Option<(GpuSolids, u64)>,
}

impl GpuFluid {
    /// An empty fluid on `ctx`'s device (its pipelines built: a few ms).
    pub fn new(ctx: GpuContext) -> Self {
        let collide = CollideKernel::new(&ctx.device);
        let the_box = GpuContainer {
            buffers: Vec::new(),
            stages: &[],
            passes: &[],
        };
        let core = GpuParticles::new(ctx, "sph", (the_box, Fluid::new(1.0).size()));
        Self {
            core,
            collide,
            solids: None,
        }
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> String {
        self.core.adapter_name()
    }

    pub fn len(&self) -> usize {
        self.core.len()
    }

    pub fn is_empty(&self) -> bool {
        self.core.is_empty()
    }

    /// The sort the steps use.
    pub fn set_sort(&mut self, sort: Sort) {
        self.core.set_sort(sort);
    }

    /// Time each step with timestamp queries (when the adapter has them); the steps still run
    /// back to back, and [`GpuFluid::take_gpu_times`] reads the times.
    pub fn set_timing(&mut self, on: bool) {
        self.core.set_timing(on);
    }

    /// The GPU times of the steps timed since the last call, ms (none without timestamps).
    pub fn take_gpu_times(&mut self) -> Vec<f64> {
        self.core.take_gpu_times()
    }

    /// Collide the particles with `solids` after each step from now on (`None`: no
    /// obstacles), as [`Solids::collide`] with the step's dt and wall bounce.
    pub fn set_solids(&mut self, solids: Option<&Solids>) {
        let device = &self.core.context().device;
        self.solids = solids.map(|s| (GpuSolids::new(device, s), 0));
    }

    /// Take `fluid`'s box and particles (positions, velocities, colours).
    pub fn upload(&mut self, fluid: &Fluid) {
        self.core.upload(fluid);
    }

    /// Read the particles back into `fluid` (its box becomes this one's): positions,
    /// velocities, colours and densities, in the GPU's (sorted) order. A device that failed
    /// leaves `fluid` as it was.
    pub fn download(&mut self, fluid: &mut Fluid) {
        if let Some((p, _)) = self.core.download(&[]) {
            *fluid = p;
        }
    }

    /// The box's width and height.
    pub fn size(&self) -> [f32; 2] {
        self.core.size()
    }

    /// The device it runs on.
    pub fn context(&self) -> &GpuContext {
        self.core.context()
    }

    /// The particles' positions, velocities and colours (serial numbers in the fourth
    /// component), `len()` of each, in the last step's sorted order; `None` before any.
    pub(crate) fn buffers(&self) -> Option<(&wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer)> {
        self.core.buffers()
    }

    /// The next serial number it will give (see [`crate::gpu::serial::serial_from_f32`]).
    pub(crate) fn births(&self) -> u64 {
        self.core.births()
    }

    /// Remove the `k` oldest particles (all of them when `k >= len`), as
    /// [`Fluid::remove_oldest`]. Waits for a round trip through the CPU: for a lowered budget,
    /// not for every frame.
    pub fn remove_oldest(&mut self, k: usize) {
        self.core.remove_oldest(k);
    }

    /// Put `impulses` on the particles, in order (as [`Fluid::apply`] one after another).
    pub fn apply(&mut self, impulses: &[Impulse]) {
        self.core.apply(impulses);
    }

    /// Add particles at `p` with velocity `v` and colour `c`, at most `budget` in all
    /// (clamped to 1..=[`crate::sim::sph::MAX_PARTICLES`]): past it the oldest give their places to
    /// the new ones, as [`Fluid::remove_oldest`] then [`Fluid::add`] (non-finite positions
    /// become the box's centre, velocities rest). More new ones than the budget: the last of
    /// them. The budget only makes room for new ones: particles past it stay until then.
    pub fn add(&mut self, new: &[([f32; 2], [f32; 2], [f32; 3])], budget: usize) {
        let budget = budget.clamp(1, crate::sim::sph::MAX_PARTICLES);
        self.core.add(new, budget);
    }

    /// One step of `dt` seconds (clamped to 0..1/30) with `knobs`, as [`Fluid::step`].
    pub fn step(&mut self, knobs: &Knobs, dt: f32) -> Result<(), GpuError> {
        let k = knobs.sanitized();
        let dt = if dt.is_finite() {
            dt.clamp(0.0, 1.0 / 30.0)
        } else {
            0.0
        };
        if self.core.is_empty() || dt == 0.0 {
            return Ok(());
        }
        self.run(&k, dt)
    }

    /// Encode and submit a step, the obstacles' collisions after it; the device's failure,
    /// if it failed.
    fn run(&mut self, k: &Knobs, dt: f32) -> Result<(), GpuError> {
        let (collide, solids) = (&self.collide, &mut self.solids);
        let obstacles = |after, pass: &mut wgpu::ComputePass<'_>, hook: &Hook<'_>| {
            if let (After::Integrate, Some((solids, bound))) = (after, solids.as_mut()) {
                // The obstacles' bind group is over the particles' buffers: made again with
                // them.
                if *bound != hook.generation {
                    solids.unbind();
                    *bound = hook.generation;
                }
                solids.encode(hook.device, collide, hook.buffers, pass, groups(hook.n));
            }
        };
        self.core.step(&k.physics(dt), dt, |_| {}, obstacles);
        self.core.check();
        self.core.failure().map_or(Ok(()), Err)
    }

    /// The device's failure, if it failed (a read or a wait that timed out included).
    pub fn failure(&self) -> Option<GpuError> {
        self.core.failure()
    }

    /// Wait for `submission` at most the driver's bound; `false` if the device failed.
    pub(crate) fn wait_for(&mut self, submission: wgpu::SubmissionIndex) -> bool {
        self.core.wait_for(Some(submission))
    }

    /// Wait for every step in flight.
    pub fn wait(&self) {
        let _ = self
            .core
            .context()
            .device
            .poll(wgpu::PollType::wait_indefinitely());
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
        }
        .sanitized();
        let previous = self.core.sort();
        self.core.set_sort(sort);
        // A whole step: the order and the start table are the sort's (no later stage writes
        // them).
        let result = self.run(&knobs, 1.0 / 60.0);
        self.core.set_sort(previous);
        result?;
        let cells = Grid::new(size, knobs.radius).cells();
        Ok(self
            .core
            .sorted(cells)
            .unwrap_or_else(|| (Vec::new(), vec![0; cells + 1])))
    }
}
