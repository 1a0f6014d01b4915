//! Where the particle fluid's particles live, step and are drawn: on the CPU
//! ([`super::cpu::CpuFluid`]) or on the GPU ([`super::gpu::backend::GpuBackend`]). The model
//! ([`super::model::SphModel`]) drives either through [`FluidBackend`]: every frame's sources as
//! [`Action`]s, its steps, its frames and its rest probe go to the backend; what is seldom (a
//! snapshot, a restored liquid) goes through [`FluidBackend::fluid`] and
//! [`FluidBackend::set_fluid`].

use super::solids::Solids;
use super::sources::Action;
use super::{Fluid, Knobs};
use crate::fluid::Look;
use crate::gpu::GpuError;
use crate::sim::Activity;

/// What a frame shows: its look and size, and what its light is measured against.
#[derive(Clone, Copy)]
pub struct FrameJob<'a> {
    pub look: &'a Look,
    pub width: usize,
    pub height: usize,
    /// The particles per unit of area at rest (the light's scale).
    pub target_density: f32,
    /// The model's rows (the surface light's grid is at most these).
    pub model_rows: usize,
}

/// The particles' home (see the module's header).
pub trait FluidBackend: Send {
    /// Particles now.
    fn len(&self) -> usize;

    /// No particles.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The particles as they are now (the GPU reads them back, waiting for it; a failed device
    /// gives the last ones read, or none).
    fn fluid(&mut self) -> &Fluid;

    /// Take `fluid`'s particles instead (the serial numbers of particles added later go on
    /// from the larger of its next one and this backend's: they never repeat).
    fn set_fluid(&mut self, fluid: Fluid);

    /// Carry out `actions` in order, keeping at most `budget` particles (the newest; those
    /// past a lowered budget go too).
    fn act(&mut self, actions: &[Action], budget: usize);

    /// `steps` steps of `dt` seconds with `knobs`, each followed by the obstacles'
    /// collisions.
    fn step(&mut self, knobs: &Knobs, dt: f32, steps: usize);

    /// The obstacles the particles collide with from now on.
    fn set_solids(&mut self, solids: Option<Solids>);

    /// Draw a frame into `out` (RGBA8, rows top first), waiting for it.
    fn render(&mut self, job: &FrameJob, out: &mut [u8]);

    /// Start a frame without waiting for it (collected by [`FluidBackend::take_frame`]);
    /// `false` when it was skipped. A backend that draws at once has the model render it.
    fn request_frame(&mut self, _job: &FrameJob) -> Option<bool> {
        None
    }

    /// The newest frame finished since [`FluidBackend::request_frame`], without waiting.
    fn take_frame(&mut self, _out: &mut Vec<u8>) -> Option<(usize, usize)> {
        None
    }

    /// How fast the liquid moves (see [`super::shared::rest_speed`]), measured over the
    /// `seconds` simulated since the last measurement (taken and zeroed when a measurement
    /// starts); `None` while the first one is under way.
    fn probe(&mut self, tag: u64, seconds: &mut f32) -> Option<(u64, Activity)>;

    /// What made the backend unusable, once something did.
    fn failure(&self) -> Option<GpuError> {
        None
    }
}
