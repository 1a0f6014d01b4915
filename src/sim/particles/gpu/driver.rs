//! One GPU driver for the particle core in either dimension: the particles' buffers on the
//! device (grown as needed, the particles carried over), their upload and readback (serial
//! numbers made consecutive, every read bounded in time), the sources (impulses; new
//! particles taking the oldest's slots past a budget) and the step (the core's stages, the
//! sort by either method, the container's passes). The 2D box's
//! [`GpuFluid`](crate::sim::sph::gpu::GpuFluid) and the 3D tank's
//! [`GpuLiquid`](crate::sim::liquid3d::gpu::GpuLiquid) are this with their container.

use super::Timing;
use super::bitonic::{Bitonic, BitonicGroups, padded};
use super::reorder::{Motion, Reorder, ReorderGroups};
use super::sources::{GpuImpulse, SourceKernels, Sources};
use super::step::{After, ContainerBindings, Step, StepGroups, StepKernels, StepUniform};
use crate::gpu::frames::pod_vec;
use crate::gpu::kernel::{Binding, storage, uniform};
use crate::gpu::serial::{SERIAL_MASK, serial_from_f32, serial_to_f32};
use crate::gpu::{GpuContext, GpuError};
use crate::sim::particles::hash::Grid;
use crate::sim::particles::hash::gpu::{CellSort, CellSortGroups, CellSortUniform, SW};
use crate::sim::particles::sources::{Fresh, Impulse};
use crate::sim::particles::{Particles, Physics};

/// Longest wait for the GPU's work before the device counts as hung.
const WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How the GPU sorts the particles by cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sort {
    /// Counting sort: cell counts, a prefix sum, a scatter, each cell put in index order.
    #[default]
    Counting,
    /// Bitonic merge sort of (cell, index) pairs, as in Lague's source.
    Bitonic,
}

/// A container's own buffers on the GPU and what uses them: the core's stages (extra
/// bindings, by entry point) and the container's passes (entry point and bindings), as its
/// WGSL declares them (particle_box.wgsl, particle_tank.wgsl).
pub struct GpuContainer {
    pub buffers: Vec<(Binding, wgpu::Buffer)>,
    pub stages: &'static [(&'static str, &'static [Binding])],
    pub passes: &'static [(&'static str, &'static [Binding])],
}

/// What a container's passes get in a step: the step's buffers (uniform, positions,
/// velocities), the particle count, and its own passes.
pub struct Hook<'a> {
    pub device: &'a wgpu::Device,
    pub buffers: (&'a wgpu::Buffer, &'a wgpu::Buffer, &'a wgpu::Buffer),
    pub n: usize,
    /// Which buffers these are ([`GpuParticles::generation`]).
    pub generation: u64,
    kernels: &'a StepKernels,
    groups: &'a StepGroups,
}

impl Hook<'_> {
    /// The container's pass `i` (in [`GpuContainer::passes`]), `x` workgroups.
    pub fn pass(&self, pass: &mut wgpu::ComputePass<'_>, i: usize, x: u32) {
        self.kernels.container_pass(pass, self.groups, i, x);
    }
}

struct Kernels {
    step: StepKernels,
    cell_sort: CellSort,
    bitonic: Bitonic,
    reorder: Reorder,
    sources: SourceKernels,
}

/// The buffers for up to `capacity` particles and `cells` cells, and every bind group.
struct Resources {
    capacity: usize,
    cells: usize,
    uniform: wgpu::Buffer,
    sort_uniform: wgpu::Buffer,
    motion: Motion,
    counts: wgpu::Buffer,
    start: wgpu::Buffer,
    order: wgpu::Buffer,
    step: StepGroups,
    cell_sort: CellSortGroups,
    bitonic: BitonicGroups,
    reorder: ReorderGroups,
}

impl Resources {
    fn new(
        device: &wgpu::Device,
        k: &Kernels,
        (name, dim): (&str, usize),
        (capacity, cells): (usize, usize),
        container: &GpuContainer,
    ) -> Self {
        let label = |what: &str| format!("{name}: {what}");
        let u32s = |what: &str, count: usize| storage(device, &label(what), (count * 4) as u64);
        let step_uniform = uniform(device, &label("step"), &StepUniform::default());
        let sort_uniform = uniform(device, &label("sort"), &CellSortUniform::default());
        let motion = Motion::new(device, name, dim, capacity);
        let keys = u32s("cell keys", capacity);
        let counts = u32s("cell counts", cells);
        let start = u32s("cell starts", cells + 1);
        let sums = u32s("scan sums", cells.div_ceil(SW as usize));
        let fill = u32s("cell fill", cells);
        let arrival = u32s("arrival order", capacity);
        let order = u32s("sorted order", capacity);
        let m = &motion;
        let core = [
            &step_uniform,
            &m.pos,
            &m.vel,
            &m.pred,
            &m.svel,
            &start,
            &m.density,
            &keys,
            &counts,
        ];
        let extra: Vec<(Binding, &wgpu::Buffer)> =
            container.buffers.iter().map(|(b, buf)| (*b, buf)).collect();
        let bindings = ContainerBindings {
            buffers: &extra,
            stages: container.stages,
            passes: container.passes,
        };
        let sort = [
            &sort_uniform,
            &keys,
            &counts,
            &start,
            &sums,
            &fill,
            &arrival,
            &order,
        ];
        Self {
            step: k.step.bind(device, core, &bindings),
            cell_sort: k.cell_sort.bind(device, sort),
            bitonic: k
                .bitonic
                .bind(device, capacity, [&step_uniform, &keys, &start, &order]),
            reorder: m.bind_reorder(device, &k.reorder, &sort_uniform, &order),
            capacity,
            cells,
            uniform: step_uniform,
            sort_uniform,
            motion,
            counts,
            start,
            order,
        }
    }
}

/// The particle core on the GPU in `D` dimensions, with a container.
pub struct GpuParticles<const D: usize> {
    ctx: GpuContext,
    /// The fluid's room (`sph`, `liquid3d`), in the GPU's labels.
    name: &'static str,
    kernels: Kernels,
    container: GpuContainer,
    res: Option<Resources>,
    /// Counts the buffers made (a container's bind groups over them are made again after).
    generation: u64,
    sources: Sources,
    size: [f32; D],
    n: usize,
    /// The next serial number to give; the particles hold the `n` before it.
    births: u64,
    sort: Sort,
    timing: Timing,
    failure: Option<GpuError>,
}

impl<const D: usize> GpuParticles<D> {
    /// No particles on `ctx`'s device in a `container` of `size`, its pipelines built (a few
    /// ms); `name` labels its work.
    pub fn new(
        ctx: GpuContext,
        name: &'static str,
        (container, size): (GpuContainer, [f32; D]),
    ) -> Self {
        let passes: Vec<&'static str> = container.passes.iter().map(|(e, _)| *e).collect();
        let device = &ctx.device;
        let kernels = Kernels {
            step: StepKernels::new(device, D, &passes),
            cell_sort: CellSort::new(device),
            bitonic: Bitonic::new(device),
            reorder: Reorder::new(device, D),
            sources: SourceKernels::new(device, D),
        };
        Self {
            sources: Sources::new(device, name, D),
            kernels,
            container,
            ctx,
            name,
            res: None,
            generation: 0,
            size,
            n: 0,
            births: 0,
            sort: Sort::default(),
            timing: Timing::default(),
            failure: None,
        }
    }

    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    pub fn adapter_name(&self) -> String {
        self.ctx.adapter_name()
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The container's size.
    pub fn size(&self) -> [f32; D] {
        self.size
    }

    /// The next serial number it will give (see [`serial_from_f32`]).
    pub fn births(&self) -> u64 {
        self.births
    }

    /// Which buffers the container's bind groups were made over: a new number, new buffers.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The container's buffer at `binding`.
    pub fn container_buffer(&self, binding: Binding) -> Option<&wgpu::Buffer> {
        let found = self.container.buffers.iter().find(|(b, _)| *b == binding);
        found.map(|(_, buffer)| buffer)
    }

    /// The sort the steps use.
    pub fn sort(&self) -> Sort {
        self.sort
    }

    /// Use `sort` from the next step on.
    pub fn set_sort(&mut self, sort: Sort) {
        self.sort = sort;
    }

    /// Time each step with timestamp queries (when the adapter has them); the steps still run
    /// back to back, and [`GpuParticles::take_gpu_times`] reads the times.
    pub fn set_timing(&mut self, on: bool) {
        let label = format!("{}: step times", self.name);
        self.timing.set(&self.ctx, on, &label);
    }

    /// The GPU times of the steps timed since the last call, ms (none without timestamps).
    pub fn take_gpu_times(&mut self) -> Vec<f64> {
        self.timing.take(&self.ctx)
    }

    /// The particles' positions, velocities and colours (serial numbers in the fourth
    /// component), `len()` of each, in the last step's sorted order; `None` before any.
    pub fn buffers(&self) -> Option<(&wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer)> {
        let r = self.res.as_ref()?;
        Some((&r.motion.pos, &r.motion.vel, &r.motion.color))
    }

    /// Whether the device failed, as far as noted ([`GpuParticles::check`]).
    pub fn failed(&self) -> bool {
        self.failure.is_some()
    }

    /// The device's failure, if it failed (now or before).
    pub fn failure(&self) -> Option<GpuError> {
        self.failure.clone().or_else(|| self.ctx.check().err())
    }

    /// Note a failure of the device, once.
    pub fn check(&mut self) {
        if self.failure.is_none()
            && let Err(e) = self.ctx.check()
        {
            self.failure = Some(e);
        }
    }

    /// Wait for `submission` (or all the work queued) at most [`WAIT`]; a device that does not
    /// finish by then counts as failed. `false` if it failed (now or before).
    pub fn wait_for(&mut self, submission: Option<wgpu::SubmissionIndex>) -> bool {
        if self.failure.is_some() {
            return false;
        }
        let wait = wgpu::PollType::Wait {
            submission_index: submission,
            timeout: Some(WAIT),
        };
        match self.ctx.device.poll(wait) {
            Ok(_) => true,
            Err(e) => {
                nice_plug::nice_error!("Waiting for the GPU failed: {e}");
                self.failure.get_or_insert(GpuError::Failed {
                    adapter: self.ctx.adapter_name(),
                    message: format!("the {}'s work did not finish: {e}", self.name),
                });
                false
            }
        }
    }

    /// Buffers for `n` particles and `cells` cells (kept when large enough; the particles
    /// carried over).
    pub fn reserve(&mut self, n: usize, cells: usize) {
        let fits = |r: &Resources| r.capacity >= n && r.cells >= cells;
        if self.res.as_ref().is_some_and(fits) {
            return;
        }
        let (mut capacity, mut cells) = (padded(n).max(1024), cells.max(1));
        if let Some(r) = &self.res {
            (capacity, cells) = (capacity.max(r.capacity), cells.max(r.cells));
        }
        let (k, dim) = (&self.kernels, (self.name, D));
        let fresh = Resources::new(&self.ctx.device, k, dim, (capacity, cells), &self.container);
        if let Some(old) = &self.res
            && self.n > 0
        {
            let mut enc = self.ctx.device.create_command_encoder(&Default::default());
            fresh
                .motion
                .copy_from(&mut enc, &old.motion, self.n.min(old.capacity));
            self.ctx.queue.submit([enc.finish()]);
        }
        self.res = Some(fresh);
        self.generation += 1;
        self.sources.unbind();
    }

    /// Take `p`'s container size and particles (positions, velocities, colours, densities),
    /// their serial numbers made consecutive in the order of birth (see [`serials`]).
    pub fn upload(&mut self, p: &Particles<D>) {
        self.size = p.size();
        let n = p.len();
        let (birth, births) = serials(p);
        self.births = births;
        // Nothing to carry over into new buffers: the upload replaces it.
        self.n = 0;
        self.reserve(n, 1);
        self.n = n;
        let Some(r) = &self.res else { return };
        if n == 0 {
            return;
        }
        let q = &self.ctx.queue;
        let colors: Vec<[f32; 4]> = (p.color.iter().zip(birth))
            .map(|(c, b)| [c[0], c[1], c[2], serial_to_f32(b)])
            .collect();
        let density: Vec<[f32; 2]> = (0..n)
            .map(|i| p.density.get(i).copied().unwrap_or([0.0; 2]))
            .collect();
        q.write_buffer(&r.motion.pos, 0, bytemuck::cast_slice(&widen(&p.pos)));
        q.write_buffer(&r.motion.vel, 0, bytemuck::cast_slice(&widen(&p.vel)));
        q.write_buffer(&r.motion.color, 0, bytemuck::cast_slice(&colors));
        q.write_buffer(&r.motion.density, 0, bytemuck::cast_slice(&density));
    }

    /// Read the particles back (positions, velocities, colours, densities and serial numbers,
    /// in the GPU's sorted order) with the first bytes of the container's buffers `extra`
    /// asks for, in one bounded wait; `None` on a failed device.
    pub fn download(&mut self, extra: &[(Binding, usize)]) -> Option<(Particles<D>, Vec<u8>)> {
        let mut p = Particles::empty(self.size);
        p.births = self.births;
        let Some(r) = &self.res else {
            return Some((p, Vec::new()));
        };
        if self.failure.is_some() {
            return None;
        }
        let (n, w) = (self.n, stride::<D>());
        let mut parts: Vec<(&wgpu::Buffer, u64)> = vec![
            (&r.motion.pos, (n * w * 4) as u64),
            (&r.motion.vel, (n * w * 4) as u64),
            (&r.motion.color, (n * 16) as u64),
            (&r.motion.density, (n * 8) as u64),
        ];
        for (binding, bytes) in extra {
            let found = self.container.buffers.iter().find(|(b, _)| b == binding);
            parts.extend(found.map(|(_, buffer)| (buffer, *bytes as u64)));
        }
        let total: u64 = parts.iter().map(|(_, b)| b).sum();
        let staging = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(&format!("{}: readback", self.name)),
            size: total.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        let mut at = 0;
        for (buffer, bytes) in parts {
            if bytes > 0 {
                enc.copy_buffer_to_buffer(buffer, 0, &staging, at, bytes);
            }
            at += bytes;
        }
        let submission = self.ctx.queue.submit([enc.finish()]);
        let slice = staging.slice(..);
        slice.map_async(wgpu::MapMode::Read, |_| {});
        if !self.wait_for(Some(submission)) {
            return None;
        }
        self.check();
        if self.failure.is_some() {
            return None;
        }
        let bytes = slice.get_mapped_range().ok()?.to_vec();
        staging.unmap();
        let (pos, rest) = bytes.split_at(n * w * 4);
        let (vel, rest) = rest.split_at(n * w * 4);
        let (color, rest) = rest.split_at(n * 16);
        let (density, extra) = rest.split_at(n * 8);
        p.pos = narrow(&pod_vec(pos));
        p.vel = narrow(&pod_vec(vel));
        let colors: Vec<[f32; 4]> = pod_vec(color);
        p.color = colors.iter().map(|c| [c[0], c[1], c[2]]).collect();
        p.birth = colors
            .iter()
            .map(|c| serial_from_f32(c[3], self.births))
            .collect();
        p.density = pod_vec(density);
        Some((p, extra.to_vec()))
    }

    /// Remove the `k` oldest particles (all of them when `k >= len`), as
    /// [`Particles::remove_oldest`]. A round trip through the CPU: for a lowered budget, not
    /// for every frame (nothing on a failed device).
    pub fn remove_oldest(&mut self, k: usize) {
        if k == 0 || self.n == 0 {
            return;
        }
        if let Some((mut p, _)) = self.download(&[]) {
            p.remove_oldest(k);
            self.upload(&p);
        }
    }

    /// Put `impulses` on the particles, in order (as the CPU's `apply`, one after another).
    pub fn apply(&mut self, impulses: &[Impulse]) {
        let Some(r) = &self.res else { return };
        let m = &r.motion;
        let impulses: Vec<GpuImpulse> = impulses.iter().map(GpuImpulse::from).collect();
        let k = &self.kernels.sources;
        let buffers = (&m.pos, &m.vel, &m.color);
        self.sources.apply(&self.ctx, k, buffers, self.n, &impulses);
    }

    /// Add `new` particles, at most `budget` (at least 1) in all: past it the oldest give
    /// their places to the new ones, as the CPU's `remove_oldest` then `add` (non-finite
    /// positions become the container's centre, velocities rest; places are clamped into
    /// it). More new ones than the budget: the last of them. The budget only makes room for
    /// new ones: particles past it stay until then.
    pub fn add(&mut self, new: &[Fresh<D>], budget: usize) {
        let budget = budget.max(1);
        let new = &new[new.len().saturating_sub(budget)..];
        if new.is_empty() {
            return;
        }
        let free = budget.saturating_sub(self.n);
        let recycle = new.len().saturating_sub(free).min(self.n);
        let size = self.size;
        let finite = |a: &[f32; D]| a.iter().all(|x| x.is_finite());
        let mut fresh: Vec<f32> = Vec::with_capacity(new.len() * (2 * stride::<D>() + 4));
        for (j, (p, v, c)) in new.iter().enumerate() {
            let p = if finite(p) {
                std::array::from_fn(|k| p[k].clamp(0.0, size[k]))
            } else {
                size.map(|s| 0.5 * s)
            };
            let v = if finite(v) { *v } else { [0.0; D] };
            fresh.extend(fresh_row(p, v, *c, self.births + j as u64));
        }
        let total = self.n + new.len() - recycle;
        let cells = self.res.as_ref().map_or(1, |r| r.cells);
        self.reserve(total.max(budget), cells);
        let Some(r) = &self.res else { return };
        let oldest = (self.births - self.n as u64) as u32 & SERIAL_MASK;
        let m = &r.motion;
        self.sources.add(
            &self.ctx,
            &self.kernels.sources,
            (&m.pos, &m.vel, &m.color),
            (self.n, recycle, oldest),
            &fresh,
        );
        self.n = total;
        self.births += new.len() as u64;
    }

    /// Encode and submit one step of `dt` seconds (0 < dt <= 1/30) with `physics` over cells
    /// `radius` wide, the uniform finished by `fill` (the container's fields), the container's
    /// passes by `container`. Timed when timing is on.
    pub fn step(
        &mut self,
        physics: &Physics<D>,
        dt: f32,
        fill: impl FnOnce(&mut StepUniform),
        mut container: impl FnMut(After, &mut wgpu::ComputePass<'_>, &Hook<'_>),
    ) -> wgpu::SubmissionIndex {
        let grid = Grid::new(self.size, physics.radius);
        let cells = grid.cells();
        self.reserve(self.n, cells);
        let mut u = StepUniform::new(physics, &grid, self.size, self.n, dt);
        u.padded = padded(self.n) as u32;
        fill(&mut u);
        self.timing.before_step(&self.ctx);
        let (k, n, q) = (&self.kernels, self.n, &self.ctx.queue);
        let r = self.res.as_ref().expect("reserved above");
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
            Sort::Counting => k.cell_sort.encode(pass, &r.cell_sort, n, cells),
            Sort::Bitonic => k.bitonic.encode(pass, &r.bitonic, n),
        };
        let hook = Hook {
            device: &self.ctx.device,
            buffers: (&r.uniform, &r.motion.pos, &r.motion.vel),
            n,
            generation: self.generation,
            kernels: &k.step,
            groups: &r.step,
        };
        let step = Step {
            kernels: &k.step,
            groups: &r.step,
            reorder: (&k.reorder, &r.reorder),
            motion: &r.motion,
            n,
        };
        let passes = |after, pass: &mut wgpu::ComputePass<'_>| container(after, pass, &hook);
        step.encode(&mut enc, self.name, &self.timing, sort, passes);
        let submission = self.ctx.queue.submit([enc.finish()]);
        self.timing.after_step();
        submission
    }

    /// The order and the start table of the last sort (tests of the sort): `cells` + 1
    /// starts. Waits for the GPU.
    pub fn sorted(&mut self, cells: usize) -> Option<(Vec<u32>, Vec<u32>)> {
        let r = self.res.as_ref()?;
        let read = |b: &wgpu::Buffer, count: usize| -> Vec<u32> {
            let bytes = crate::gpu::frames::read_buffer(&self.ctx, b, (count * 4) as u64);
            pod_vec(&bytes[..count * 4])
        };
        let order = if self.n > 0 {
            read(&r.order, self.n)
        } else {
            Vec::new()
        };
        Some((order, read(&r.start, cells + 1)))
    }
}

/// Floats a particle's vector takes in a GPU buffer: 2 in 2D, 4 in 3D (a `vec4`, the fourth
/// component 0).
fn stride<const D: usize>() -> usize {
    if D == 2 { 2 } else { 4 }
}

/// `v` as the GPU stores it ([`stride`] floats each).
fn widen<const D: usize>(v: &[[f32; D]]) -> Vec<f32> {
    let w = stride::<D>();
    let at = |a: &[f32; D], c: usize| if c < D { a[c] } else { 0.0 };
    v.iter().flat_map(|a| (0..w).map(|c| at(a, c))).collect()
}

/// A new particle as particle_sources.wgsl's `Fresh` (position, velocity, colour with the
/// serial number).
fn fresh_row<const D: usize>(p: [f32; D], v: [f32; D], c: [f32; 3], serial: u64) -> Vec<f32> {
    let mut row = widen(&[p, v]);
    row.extend([c[0], c[1], c[2], serial_to_f32(serial)]);
    row
}

/// The GPU's vectors ([`stride`] floats each) back as `D`-vectors.
fn narrow<const D: usize>(floats: &[f32]) -> Vec<[f32; D]> {
    let w = stride::<D>();
    floats
        .chunks_exact(w)
        .map(|a| std::array::from_fn(|c| a[c]))
        .collect()
}

/// `p`'s serial numbers made consecutive in the order of birth (what the GPU's 23 bits of
/// serial number can tell apart), and the next one: the newest particle gets one less.
pub fn serials<const D: usize>(p: &Particles<D>) -> (Vec<u64>, u64) {
    let n = p.len();
    let mut by_birth: Vec<usize> = (0..n).collect();
    by_birth.sort_by_key(|&i| (p.birth.get(i).copied().unwrap_or(0), i));
    let latest = p.birth.iter().copied().max().map_or(0, |b| b + 1);
    let births = p.births.max(latest).max(n as u64);
    let oldest = births - n as u64;
    let mut birth = vec![0; n];
    for (rank, &i) in by_birth.iter().enumerate() {
        birth[i] = oldest + rank as u64;
    }
    (birth, births)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::particles::gpu::sources::{GpuFresh2, GpuFresh3};

    #[test]
    fn a_new_particle_is_laid_out_as_the_shaders_fresh() {
        let serial = serial_to_f32(7);
        let two = GpuFresh2 {
            pos: [1.0, 2.0],
            vel: [3.0, 4.0],
            color: [0.1, 0.2, 0.3, serial],
        };
        let row = fresh_row([1.0, 2.0], [3.0, 4.0], [0.1, 0.2, 0.3], 7);
        assert_eq!(row.as_slice(), bytemuck::cast_slice::<_, f32>(&[two]));
        let three = GpuFresh3 {
            pos: [1.0, 2.0, 5.0, 0.0],
            vel: [3.0, 4.0, 6.0, 0.0],
            color: [0.1, 0.2, 0.3, serial],
        };
        let row = fresh_row([1.0, 2.0, 5.0], [3.0, 4.0, 6.0], [0.1, 0.2, 0.3], 7);
        assert_eq!(row.as_slice(), bytemuck::cast_slice::<_, f32>(&[three]));
        let back: Vec<[f32; 3]> = narrow(&widen(&[[1.0, 2.0, 5.0]]));
        assert_eq!(back, [[1.0, 2.0, 5.0]]);
    }

    #[test]
    fn serial_numbers_become_consecutive_in_the_order_of_birth() {
        let mut p = Particles::<2>::empty([1.0, 1.0]);
        for _ in 0..3 {
            p.add([0.5, 0.5], [0.0; 2], [1.0; 3]);
        }
        p.birth = vec![40, 5, 900];
        p.births = 901;
        assert_eq!(serials(&p), (vec![899, 898, 900], 901));
        p.births = 0;
        assert_eq!(
            serials(&p).1,
            901,
            "past the newest, whatever the count said"
        );
    }
}
