//! The seam between the engine and the fluids: the [`Model`] trait the engine, the editor and
//! the renderer drive, and [`create_model`], which picks the backend.
//!
//! A model takes model-neutral sources and forces ([`Splat`]s, in canvas units), advances by
//! [`StepInput`], renders frames through a [`Look`], and reports its status. Two fluids
//! implement it, each on the CPU and the GPU: the grid fluid ([`GridModel`], over either
//! [`Solver`]) and the particle fluid (`sph::cpu::model::SphModel`, `sph::gpu::model::GpuSphModel`).

use super::device::{GpuContext, GpuError, GpuOptions};
use super::grid::Fields;
use super::grid::cpu::{CpuError, CpuSolver};
use super::grid::gpu::GpuSolver;
use super::obstacles::Mask;
use super::{Activity, Extras, SimConfig, Solver, StepInput, iterations_for, threads_label};
use crate::fluid::{Look, Splat};
use std::any::Any;

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

    /// Render the fluid into `out` as RGBA8 rows, top row first, at any size, waiting for
    /// the result. `out.len()` must be `width * height * 4`.
    fn render(&mut self, look: &Look, width: usize, height: usize, out: &mut [u8]);

    /// Start rendering a frame of `width x height` without waiting for it; `false` when it
    /// cannot be started now (all readback buffers busy). See [`Model::take_frame`].
    fn request_frame(&mut self, look: &Look, width: usize, height: usize) -> bool;

    /// The newest finished frame, if any, into `out` (RGBA8, top row first); returns its size.
    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)>;

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

/// A frame rendered at once by a `request_frame` that does not need to wait (the CPU's), held
/// until `take_frame` hands it over.
#[derive(Default)]
pub struct HeldFrame {
    pixels: Vec<u8>,
    size: Option<(usize, usize)>,
}

impl HeldFrame {
    /// Render a `width x height` frame with `render` (RGBA8 rows into the buffer it is given)
    /// and hold it.
    pub fn fill(&mut self, width: usize, height: usize, render: impl FnOnce(&mut [u8])) {
        self.pixels.resize(width * height * 4, 0);
        render(&mut self.pixels);
        self.size = Some((width, height));
    }

    /// The held frame into `out` (swapped, no copy) and its size, once.
    pub fn take(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        let size = self.size.take()?;
        std::mem::swap(out, &mut self.pixels);
        Some(size)
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

/// Create the model for `spec`: on the GPU when `spec.backend` allows and one works, else on
/// the CPU (and say why). `Auto` takes a hardware GPU only: on a software adapter (Mesa's
/// lavapipe, WARP, SwiftShader) the CPU solver is several times faster. Blocks while a GPU
/// device is created; call it on the simulation (or render) thread.
///
/// # Errors
/// [`CpuError`] when not even the CPU solver can start (its threads were refused).
pub fn create_model(spec: &ModelSpec) -> Result<(Box<dyn Model>, ModelInfo), CpuError> {
    if spec.kind == Kind::Particles {
        return create_particles(spec);
    }
    let cfg = grid_config(spec);
    let mut fallback = None;
    if spec.backend != Backend::Cpu {
        match GpuContext::new(&gpu_options(spec)).and_then(|ctx| {
            let device = ctx.adapter_name();
            GpuSolver::new(ctx, &cfg).map(|s| (s, device))
        }) {
            Ok((solver, device)) => {
                let info = ModelInfo {
                    backend: "gpu",
                    device,
                    fallback: None,
                };
                return Ok((Box::new(GridModel::new(Box::new(solver))), info));
            }
            Err(e) => {
                nice_plug::nice_warn!("Using the CPU solver: {e}");
                fallback = Some(e.to_string());
            }
        }
    }
    let solver = CpuSolver::new(&cfg, spec.cpu_threads)?;
    let info = ModelInfo {
        backend: "cpu",
        device: threads_label(solver.threads()),
        fallback,
    };
    Ok((Box::new(GridModel::new(Box::new(solver))), info))
}

/// The particle fluid for `spec`: on the GPU when `spec.backend` allows and one works, else
/// on the CPU.
fn create_particles(spec: &ModelSpec) -> Result<(Box<dyn Model>, ModelInfo), CpuError> {
    use super::sph::cpu::model::{DEFAULT_BUDGET, SphModel};
    use super::sph::gpu::model::GpuSphModel;
    let mut fallback = None;
    if spec.backend != Backend::Cpu {
        match GpuContext::new(&gpu_options(spec))
            .and_then(|ctx| GpuSphModel::new(ctx, spec.cells, DEFAULT_BUDGET))
        {
            Ok(model) => {
                let info = ModelInfo {
                    backend: "gpu",
                    device: model.adapter_name(),
                    fallback: None,
                };
                return Ok((Box::new(model), info));
            }
            Err(e) => {
                nice_plug::nice_warn!("Using the CPU for the particle fluid: {e}");
                fallback = Some(e.to_string());
            }
        }
    }
    let model = SphModel::new(spec.cells, spec.cpu_threads, DEFAULT_BUDGET)?;
    let info = ModelInfo {
        backend: "cpu",
        device: threads_label(model.threads()),
        fallback,
    };
    Ok((Box::new(model), info))
}

/// The GPU options for `spec`: `Auto` takes a hardware GPU only.
fn gpu_options(spec: &ModelSpec) -> GpuOptions {
    GpuOptions {
        hardware_only: spec.gpu.hardware_only || spec.backend == Backend::Auto,
        ..spec.gpu.clone()
    }
}

/// The grid solvers' configuration for `spec` (sanitised).
pub fn grid_config(spec: &ModelSpec) -> SimConfig {
    let mut cfg = SimConfig::new(spec.cells.0, spec.cells.1);
    cfg.dye_scale = spec.detail;
    cfg.pressure_iterations = iterations_for(cfg.pressure, spec.effort_sweeps);
    cfg.sanitized()
}

/// What a [`GridModel`]'s [`Snapshot`] holds: the grid's fields, its obstacles, its
/// temperature and its living particles.
struct GridSnapshot {
    fields: Fields,
    obstacles: Option<Mask>,
    extras: Extras,
}

/// The grid fluid (stable fluids on a MAC grid with RGB dye) as a [`Model`], over the CPU or
/// the GPU [`Solver`]. Its [`Snapshot`] holds the grid's [`Fields`] and obstacle mask.
pub struct GridModel {
    solver: Box<dyn Solver>,
}

impl GridModel {
    /// The model over `solver`. Divergence measuring is switched off: the model's callers never
    /// read it, and on the GPU it costs a readback per step.
    pub fn new(mut solver: Box<dyn Solver>) -> Self {
        solver.set_measure(false);
        Self { solver }
    }

    /// The grid solver, for what only grids have (fields, stages, divergence).
    pub fn solver(&mut self) -> &mut dyn Solver {
        self.solver.as_mut()
    }
}

impl Model for GridModel {
    fn backend(&self) -> &'static str {
        self.solver.backend()
    }

    fn resolution(&self) -> Resolution {
        let cfg = self.solver.config();
        Resolution {
            cells: (cfg.width, cfg.height),
            detail: (cfg.dye_width(), cfg.dye_height()),
        }
    }

    fn inject(&mut self, sources: &[Splat]) {
        self.solver.inject(sources);
    }

    fn advance(&mut self, params: &StepInput) {
        self.solver.step(params);
    }

    fn set_effort(&mut self, sweeps: u32) {
        let method = self.solver.config().pressure;
        self.solver
            .set_pressure_iterations(iterations_for(method, sweeps));
    }

    fn reset(&mut self) {
        self.solver.reset();
    }

    fn render(&mut self, look: &Look, width: usize, height: usize, out: &mut [u8]) {
        self.solver.render(look, width, height, out);
    }

    fn request_frame(&mut self, look: &Look, width: usize, height: usize) -> bool {
        self.solver.request_frame(look, width, height)
    }

    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        self.solver.take_frame(out)
    }

    fn probe_activity(&mut self, tag: u64) -> Option<(u64, Activity)> {
        self.solver.probe_activity(tag)
    }

    fn failure(&self) -> Option<GpuError> {
        self.solver.failure()
    }

    fn set_obstacles(&mut self, mask: Option<&Mask>) {
        self.solver.set_obstacles(mask);
    }

    fn obstacles(&self) -> Option<&Mask> {
        self.solver.obstacles()
    }

    fn snapshot(&mut self) -> Snapshot {
        Snapshot(Box::new(GridSnapshot {
            fields: self.solver.read_fields(),
            obstacles: self.solver.obstacles().cloned(),
            extras: self.solver.read_extras(),
        }))
    }

    fn restore(&mut self, snapshot: &Snapshot) -> bool {
        match snapshot.get::<GridSnapshot>() {
            Some(s) => {
                // The obstacles first, so the fields written are cleared inside them.
                self.solver.set_obstacles(s.obstacles.as_ref());
                self.solver.write_fields(&s.fields);
                self.solver.write_extras(&s.extras);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `w x h` CPU model's spec: dye twice as fine, one thread.
    fn cpu_spec(w: usize, h: usize) -> ModelSpec {
        ModelSpec {
            kind: Kind::Grid,
            cells: (w, h),
            detail: 2,
            effort_sweeps: 20,
            backend: Backend::Cpu,
            gpu: GpuOptions::default(),
            cpu_threads: 1,
        }
    }

    fn cpu_model(w: usize, h: usize) -> Box<dyn Model> {
        create_model(&cpu_spec(w, h)).expect("CPU model").0
    }

    fn splat() -> Splat {
        Splat {
            pos: [0.8, 0.5],
            radius: 0.08,
            force: [0.0, 2.0],
            color: [1.0, 0.5, 0.25],
            amount: 1.0,
            ..Splat::default()
        }
    }

    #[test]
    fn resolution_follows_the_spec() {
        let m = cpu_model(32, 18);
        let r = m.resolution();
        assert_eq!(r.cells, (32, 18));
        assert_eq!(r.detail, (64, 36));
        assert!((r.aspect() - 32.0 / 18.0).abs() < 1e-6);
        assert_eq!(m.backend(), "cpu");
    }

    /// A snapshot carries the dye into a model of another resolution, and a model refuses a
    /// snapshot of another kind.
    #[test]
    fn snapshots_carry_the_fluid_over() {
        let mut a = cpu_model(32, 18);
        a.inject(&[splat()]);
        a.advance(&StepInput::default());
        let mut b = cpu_model(64, 36);
        assert!(b.restore(&a.snapshot()));
        let (mut before, mut after) = (vec![0u8; 64 * 36 * 4], vec![0u8; 64 * 36 * 4]);
        let look = Look::default();
        a.render(&look, 64, 36, &mut before);
        b.render(&look, 64, 36, &mut after);
        let lit = |f: &[u8]| f.chunks(4).filter(|p| p[0] > 20).count();
        assert!(lit(&before) > 10, "the splat shows: {}", lit(&before));
        let diff = lit(&before).abs_diff(lit(&after));
        assert!(
            diff * 5 < lit(&before),
            "{} vs {}",
            lit(&before),
            lit(&after)
        );

        let other = Snapshot(Box::new(42u32));
        assert!(!b.restore(&other));
    }

    /// A snapshot carries the obstacles over (resampled to the new grid), and a reset keeps
    /// them.
    #[test]
    fn snapshots_and_resets_keep_the_obstacles() {
        use crate::sim::obstacles::Layout;
        let mut a = cpu_model(32, 18);
        assert!(a.obstacles().is_none());
        let mask = Mask::layout(Layout::Disc, 32, 18);
        a.set_obstacles(Some(&mask));
        assert_eq!(a.obstacles(), Some(&mask));
        let mut b = cpu_model(64, 36);
        assert!(b.restore(&a.snapshot()));
        let carried = b.obstacles().expect("the mask came along");
        assert_eq!((carried.width(), carried.height()), (64, 36));
        assert_eq!(carried, &mask.resampled(64, 36));
        b.reset();
        assert!(
            b.obstacles().is_some(),
            "a reset clears the fluid, not the walls"
        );
        // A snapshot without obstacles clears them.
        assert!(b.restore(&cpu_model(16, 9).snapshot()));
        assert!(b.obstacles().is_none());
        // An empty mask is no mask.
        a.set_obstacles(Some(&Mask::empty(32, 18)));
        assert!(a.obstacles().is_none());
    }

    /// A snapshot carries the heat and the living sparks into a model of another resolution
    /// (the heat resampled, about the same in total over the canvas; every spark, in its
    /// place), and a model without either takes none.
    #[test]
    fn snapshots_carry_the_heat_and_the_particles() {
        let mut a = grid_model(32, 18);
        a.inject(&[Splat {
            heat: 2.0,
            particles: 300.0,
            ..splat()
        }]);
        let p = StepInput {
            buoyancy: 1.0,
            ..StepInput::default()
        };
        a.advance(&p);
        let mut b = grid_model(64, 36);
        assert!(b.restore(&a.snapshot()));
        let (ea, eb) = (a.solver().read_extras(), b.solver().read_extras());
        assert_eq!(ea.heat_size, (32, 18));
        assert_eq!(eb.heat_size, (64, 36));
        let total = |e: &Extras| {
            e.heat.iter().map(|&t| f64::from(t)).sum::<f64>()
                / (e.heat_size.0 * e.heat_size.1) as f64
        };
        assert!(total(&ea) > 1e-3, "heated: {}", total(&ea));
        let ratio = total(&eb) / total(&ea);
        assert!((0.8..1.25).contains(&ratio), "mean heat {ratio} of before");
        assert!(ea.particles.len() > 200, "{}", ea.particles.len());
        assert_eq!(eb.particles.len(), ea.particles.len());
        let (pa, pb) = (&ea.particles[0], &eb.particles[0]);
        assert_eq!((pa.pos, pa.age), (pb.pos, pb.age));
        // A fresh model has neither, and restoring its snapshot leaves neither: no heat, no
        // sparks.
        let fresh = cpu_model(16, 9).snapshot();
        assert!(b.restore(&fresh));
        let e = b.solver().read_extras();
        assert!(e.particles.is_empty() && e.heat.is_empty(), "{e:?}");
        let cold = b.probe_activity(1).expect("CPU measures").1;
        assert!(!cold.particles);
    }

    fn grid_model(w: usize, h: usize) -> GridModel {
        let cfg = grid_config(&cpu_spec(w, h));
        GridModel::new(Box::new(CpuSolver::new(&cfg, 1).expect("CPU solver")))
    }

    #[test]
    fn reset_clears_the_fluid() {
        let mut m = cpu_model(32, 18);
        m.inject(&[splat()]);
        m.advance(&StepInput::default());
        let activity = |m: &mut Box<dyn Model>| m.probe_activity(1).expect("CPU measures").1;
        assert!(activity(&mut m).max_dye > 0.1);
        m.reset();
        assert_eq!(activity(&mut m).max_dye, 0.0);
    }
}
