//! The particle core on the GPU: each stage written once in WGSL over the dimension's vector
//! (`shaders/particle_<stage>.wgsl` after `particle_dim2.wgsl` or `particle_dim3.wgsl`, see
//! [`crate::gpu::kernel::particle_module`]) and driven from here.

pub mod bitonic;
pub mod driver;
pub mod reorder;
pub mod sources;
pub mod step;

use crate::gpu::GpuContext;
use crate::gpu::timestamps::StepTimes;
use crate::sim::particles::hash::gpu::SW;

/// Steps timed between two readbacks of their timestamps.
const TIMED_STEPS: u32 = 256;

/// A particle driver's step timing: timestamp queries around each step, when it is on and the
/// adapter has them (the steps still run back to back).
#[derive(Default)]
pub struct Timing(Option<StepTimes>);

impl Timing {
    /// Time each step from now on (`on`), its queries named `label`; or stop.
    pub fn set(&mut self, ctx: &GpuContext, on: bool, label: &str) {
        self.0 = on
            .then(|| StepTimes::new(ctx, label, TIMED_STEPS))
            .flatten();
    }

    /// The GPU times of the steps timed since the last call, ms (none without timestamps).
    pub fn take(&mut self, ctx: &GpuContext) -> Vec<f64> {
        self.0.as_mut().map(|t| t.take(ctx)).unwrap_or_default()
    }

    /// Before encoding a step (reads the stamps back when their slots are full).
    pub fn before_step(&mut self, ctx: &GpuContext) {
        if let Some(t) = &mut self.0 {
            t.make_room(ctx);
        }
    }

    /// After submitting a step.
    pub fn after_step(&mut self) {
        if let Some(t) = &mut self.0 {
            t.step_done();
        }
    }

    /// The timestamp writes of a step's first pass, or of its `last`.
    pub fn writes(&self, last: bool) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        self.0.as_ref().map(|t| t.writes(last))
    }
}

/// Workgroups for `n` particles, one thread each (at least one).
pub fn groups(n: usize) -> u32 {
    (n as u32).div_ceil(SW).max(1)
}
