//! The seam between the engine and the fluids: the [`Model`] trait the engine, the editor and
//! the renderer drive (`super::create::create_model` makes one and picks the backend).
//!
//! A model takes model-neutral sources and forces ([`Splat`]s, in canvas units), advances by
//! [`StepInput`], renders frames through a [`Look`], and reports its status. Three fluids
//! implement it, each a model over a CPU or a GPU backend: the grid fluid
//! (`grid::model::GridModel`, over either grid `Solver`), the particle fluid
//! (`sph::model::SphModel`, over either `FluidBackend`) and the 3D liquid
//! (`liquid3d::model::Liquid3dModel`, over either `LiquidBackend`).

use super::obstacles::Mask;
use super::{Activity, StepInput};
use crate::fluid::{Look, Splat};
use crate::gpu::{GpuError, GpuOptions};
use std::any::Any;

/// Why a model could not be made on the CPU.
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// The operating system refused the worker threads (a process or memory limit).
    #[error("could not start {threads} solver thread(s): {source}")]
    Threads {
        threads: usize,
        #[source]
        source: rayon::ThreadPoolBuildError,
    },
}

/// A fluid the engine runs: sources and forces in, frames out.
///
/// Every method returns promptly except [`Model::render`], which waits for its frame (the
/// offline renderer's path); the real-time path is [`Model::request_frame`] and
/// [`Model::take_frame`].
pub trait Model: Send {
    /// Short backend name ("cpu", "gpu").
    fn backend(&self) -> &'static str;

    /// The model's working resolution, for the status line and the mapping's canvas.
    fn resolution(&self) -> Resolution;

    /// Queue sources and forces; they act at the start of the next [`Model::advance`].
    fn inject(&mut self, sources: &[Splat]);

    /// Advance the fluid by `params.dt` simulated seconds (only apply the queued sources
    /// when dt is 0).
    fn advance(&mut self, params: &StepInput);

    /// Set the solver effort, in red-black sweeps of work per step (the plugin's "pressure
    /// iterations" knob). A model maps it onto its own iterations.
    fn set_effort(&mut self, sweeps: u32);

    /// Clear the fluid to rest.
    fn reset(&mut self);

    /// Whether the frames draw the dye over a plain backdrop (the look's background), which
    /// the adaptive dye reads them against ([`crate::engine::adaptive`]). A model that draws
    /// a lit scene instead (the 3D liquid's sky, floor and glass) says no, and the adaptive
    /// dye leaves it alone.
    fn dye_over_backdrop(&self) -> bool {
        true
    }

    /// Render the fluid into `out` as RGBA8 rows, top row first, at any size, waiting for
    /// the result. `out.len()` must be `width * height * 4`.
    fn render(&mut self, look: &Look, width: usize, height: usize, out: &mut [u8]);

    /// Start rendering a frame of `width x height` without waiting for it; `false` when it
    /// cannot be started now (all readback buffers busy). See [`Model::take_frame`].
    fn request_frame(&mut self, look: &Look, width: usize, height: usize) -> bool;

    /// The newest finished frame, if any, into `out` (RGBA8, top row first); returns its size.
    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)>;

    /// Frames an offline render may keep in flight with [`Model::submit_frame`] and
    /// [`Model::wait_frame`] while the next frames' steps run; 0 (the default): it renders
    /// each with [`Model::render`].
    fn frames_in_flight(&self) -> usize {
        0
    }

    /// Start rendering the next frame of an offline render without waiting for it (at most
    /// [`Model::frames_in_flight`] of them); `false` when it cannot (render it with
    /// [`Model::render`] instead, after waiting for those in flight).
    fn submit_frame(&mut self, _look: &Look, _width: usize, _height: usize) -> bool {
        false
    }

    /// Wait for the oldest frame [`Model::submit_frame`] started and copy it into `out` (its
    /// size, RGBA8, top row first); `false` when there is none or it did not come back.
    fn wait_frame(&mut self, _out: &mut [u8]) -> bool {
        false
    }

    /// Start measuring the fluid's [`Activity`] without waiting, and return the newest
    /// finished measurement with the `tag` its call passed (`None` until one is ready).
    fn probe_activity(&mut self, tag: u64) -> Option<(u64, Activity)>;

    /// A failure that makes this model unusable (GPU device lost, validation error): the
    /// engine then replaces it with one on the CPU.
    fn failure(&self) -> Option<GpuError>;

    /// Put solid obstacles in the fluid (`None` or an empty mask: none), resampled to the
    /// model's resolution: nothing flows through them and no dye lives inside them.
    fn set_obstacles(&mut self, mask: Option<&Mask>);

    /// The obstacles at the model's resolution, if any.
    fn obstacles(&self) -> Option<&Mask>;

    /// The fluid's state (its obstacles, temperature and particles included), to carry over
    /// into a rebuilt model (new resolution or backend).
    fn snapshot(&mut self) -> Snapshot;

    /// Take over the state of a [`Snapshot`], resampled to this model's resolution. Returns
    /// `false` (and changes nothing) for a snapshot of another kind of model.
    fn restore(&mut self, snapshot: &Snapshot) -> bool;
}

/// A model's working resolution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resolution {
    /// The simulation's cells across and up (the grid fluid's velocity grid).
    pub cells: (usize, usize),
    /// The finest detail it draws, across and up (the grid fluid's dye grid).
    pub detail: (usize, usize),
}

impl Resolution {
    /// Canvas width over height.
    pub fn aspect(&self) -> f32 {
        self.cells.0 as f32 / self.cells.1.max(1) as f32
    }
}

/// A model's state, opaque to everyone but models of its own kind.
pub struct Snapshot(Box<dyn Any + Send>);

impl Snapshot {
    /// A snapshot holding `state`.
    pub fn new<T: Any + Send>(state: T) -> Self {
        Self(Box::new(state))
    }

    /// The state, when it is a `T`.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

/// Which backend a model runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A hardware GPU when one works, else the CPU (software GPUs are slower than the CPU).
    Auto,
    /// The GPU, software ones included, else the CPU.
    Gpu,
    /// The CPU.
    Cpu,
}

/// Which fluid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    /// The grid fluid: dye in air (stable fluids).
    #[default]
    Grid,
    /// The particle fluid: a liquid (SPH).
    Particles,
    /// The 3D liquid in a tank (SPH in 3D, ray-marched).
    Liquid3d,
}

/// What to build: the model-neutral description the engine and the renderer hand over.
#[derive(Clone, Debug)]
pub struct ModelSpec {
    /// Which fluid.
    pub kind: Kind,
    /// Simulation cells across and up.
    pub cells: (usize, usize),
    /// Finer detail cells per simulation cell, per axis (the grid fluid's dye scale).
    pub detail: usize,
    /// Solver effort in red-black sweeps per step (see [`Model::set_effort`]).
    pub effort_sweeps: u32,
    /// Where it runs.
    pub backend: Backend,
    /// GPU options.
    pub gpu: GpuOptions,
    /// CPU worker threads (at least 1).
    pub cpu_threads: usize,
}

/// Which model runs, on what, and why (for the status line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelInfo {
    /// "gpu" or "cpu".
    pub backend: &'static str,
    /// The GPU adapter, or the CPU solver's thread count.
    pub device: String,
    /// Why the GPU is not used, when it was wanted.
    pub fallback: Option<String>,
}
