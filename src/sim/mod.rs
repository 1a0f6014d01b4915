//! The fluid simulation: the [`Model`] seam the engine drives, and the grid fluid behind it:
//! configuration, the [`Solver`] trait and the grid types shared by the CPU solver (the
//! reference) and the GPU solver.
//!
//! # Model
//! Jos Stam's stable fluids on a staggered (MAC) grid, extended as GPU Gems ch. 38 and PixelFlow
//! do: RGB dye, dissipation and vorticity confinement.
//!
//! - The canvas is 1 unit tall and `aspect` units wide; the simulation grid has `width x height`
//!   square cells of size `h = 1 / height`. y points up: row 0 is the bottom.
//! - Velocity is in canvas heights per second. `u` lives on the vertical faces
//!   (`(width + 1) x height`), `v` on the horizontal faces (`width x (height + 1)`). The outer
//!   faces are solid walls and stay exactly 0, so nothing flows through the walls.
//! - Pressure lives at cell centres and is stored pre-scaled as `q = p * dt / (rho * h)`, in
//!   velocity units, so projecting is `u_face -= q_right - q_left`.
//! - Dye is RGB at cell centres of a grid `dye_scale` times finer per axis (two resolutions, as
//!   in the best web fluids: fine colour detail costs no pressure work).

use crate::kernels::portable::Portable;

pub mod create;
pub mod grid;
pub mod liquid3d;
pub mod model;
#[cfg(test)]
pub(crate) mod model_tests;
pub mod multigrid;
pub mod obstacles;
pub mod particles;
#[cfg(test)]
mod shader_tests;
pub mod sph;

pub use crate::gpu::{GpuError, GpuOptions};
pub use create::create_model;
pub use grid::model::GridModel;
pub use model::{Backend, CpuError, Model, ModelInfo, ModelSpec, Resolution, Snapshot};

use crate::fluid::{ColorMode, Look, Splat, StreamlineMode, ToneMode, VELOCITY_VALUE_SCALE};
use grid::Fields;

/// "1 thread", "4 threads": the CPU solver's device line.
pub fn threads_label(n: usize) -> String {
    format!("{n} thread{}", if n == 1 { "" } else { "s" })
}

/// Largest simulated time one step will advance, in seconds. A longer `dt` (a host hiccup, a
/// debugger pause) is clamped: the fluid slows for that step instead of blowing up.
pub const MAX_STEP_DT_S: f32 = 0.25;

/// Most sources a particle model queues between steps.
pub const MAX_PENDING: usize = 4096;

/// Queue `sources` after `pending`, at most [`MAX_PENDING`] in all: a flood of events keeps
/// the newest. (The particle models' queue; the grid solvers count their own.)
pub(crate) fn queue_sources(
    pending: &mut Vec<crate::fluid::Splat>,
    sources: &[crate::fluid::Splat],
) {
    pending.extend_from_slice(sources);
    if pending.len() > MAX_PENDING {
        let extra = pending.len() - MAX_PENDING;
        pending.drain(..extra);
    }
}
/// Speed limit in canvas heights per second. Crossing the canvas 50 times a second is far past
/// anything visible; the limit keeps hostile input (forces of 1e6) bounded.
pub const MAX_SPEED: f32 = 50.0;
/// Largest temperature (either sign) a splat adds and the heat field holds, in the units of
/// [`StepInput::buoyancy`]: a note's heat is at most 1, so this only bounds hostile input.
pub const MAX_HEAT: f32 = 100.0;
/// Largest dye grid edge. 4096 x 2304 RGBA float dye is 150 MB per buffer on the GPU (two
/// plus a diffusion scratch); finer grids than that outgrow GPU buffer limits and show no more
/// detail at any display size.
pub const MAX_DYE_EDGE_CELLS: usize = 4096;
/// Dye limit per channel. Tone mapping saturates long before this; the limit keeps endlessly
/// held notes bounded.
pub const MAX_DYE: f32 = 64.0;

/// The work of one multigrid V(2,2)-cycle in red-black sweeps of the finest grid: at 512² on
/// the dev machine (2026-11), one cycle cost about as much as 10 sweeps. The plugin's "pressure
/// iterations" knob counts sweeps of work; multigrid runs `iterations / 10` cycles (at least 1).
pub const MG_CYCLE_IN_SWEEPS: u32 = 10;

/// How the pressure Poisson equation is solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PressureMethod {
    /// Jacobi iterations, warm-started from the last step's pressure (scaled so it never
    /// hurts). The GPU baseline.
    Jacobi,
    /// Red-black Gauss-Seidel sweeps, warm-started.
    RbGs,
    /// Multigrid V-cycles (red-black Gauss-Seidel smoothing), warm-started. `iterations` counts
    /// V-cycles.
    Multigrid,
}

impl PressureMethod {
    /// Parse a command-line name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "jacobi" => Some(Self::Jacobi),
            "rbgs" => Some(Self::RbGs),
            "mg" | "multigrid" => Some(Self::Multigrid),
            _ => None,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Jacobi => "jacobi",
            Self::RbGs => "rbgs",
            Self::Multigrid => "mg",
        }
    }
}

/// Everything a solver needs to know that does not change every step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimConfig {
    /// Simulation grid width in cells.
    pub width: usize,
    /// Simulation grid height in cells.
    pub height: usize,
    /// Dye cells per simulation cell, per axis (1, 2 or 4).
    pub dye_scale: usize,
    /// Pressure solve method.
    pub pressure: PressureMethod,
    /// Iterations per pressure solve: sweeps for Jacobi and SOR, V-cycles for multigrid.
    pub pressure_iterations: u32,
    /// Jacobi iterations for the implicit viscosity and dye diffusion solves.
    pub diffusion_iterations: u32,
}

impl SimConfig {
    /// A grid of `width x height` with the default solver choices.
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            dye_scale: 1,
            pressure: PressureMethod::Multigrid,
            pressure_iterations: 2,
            diffusion_iterations: 20,
        }
    }

    /// The same configuration with sizes clamped to what solvers accept (1..=8192 cells per
    /// axis; dye scale 1..=4, lowered until the dye grid is at most [`MAX_DYE_EDGE_CELLS`] per
    /// axis) and at least one iteration of each solve.
    pub fn sanitized(&self) -> Self {
        let width = self.width.clamp(1, 8192);
        let height = self.height.clamp(1, 8192);
        let mut dye_scale = self.dye_scale.clamp(1, 4);
        while dye_scale > 1 && width.max(height) * dye_scale > MAX_DYE_EDGE_CELLS {
            dye_scale -= 1;
        }
        Self {
            width,
            height,
            dye_scale,
            pressure: self.pressure,
            pressure_iterations: self.pressure_iterations.clamp(1, 10_000),
            diffusion_iterations: self.diffusion_iterations.clamp(1, 10_000),
        }
    }

    /// Dye grid width in cells.
    pub fn dye_width(&self) -> usize {
        self.width * self.dye_scale
    }

    /// Dye grid height in cells.
    pub fn dye_height(&self) -> usize {
        self.height * self.dye_scale
    }
}

/// The physics of one step, in solver units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepInput {
    /// Simulated seconds to advance (clamped to [0, `MAX_STEP_DT_S`]).
    pub dt: f32,
    /// Kinematic viscosity, canvas^2/s.
    pub viscosity: f32,
    /// Dye diffusivity, canvas^2/s.
    pub dye_diffusion: f32,
    /// Velocity decay rate, 1/s.
    pub velocity_dissipation: f32,
    /// Dye decay rate, 1/s.
    pub dye_dissipation: f32,
    /// Vorticity confinement epsilon.
    pub vorticity: f32,
    /// Buoyancy `sigma`: upward acceleration per unit of temperature above the ambient, canvas
    /// heights/s^2 (the smoke model of GPU Gems ch. 38 and PixelFlow).
    pub buoyancy: f32,
    /// Weight `kappa`: downward acceleration per unit of dye density (the mean of its three
    /// channels), canvas heights/s^2.
    pub weight: f32,
    /// Cooling rate of the temperature towards 0, 1/s.
    pub cooling: f32,
    /// Ambient temperature: fluid at it neither rises nor sinks.
    pub ambient: f32,
    /// The direction buoyancy lifts towards (x right, y up; made a unit vector, straight up
    /// when zero or not finite).
    pub up: [f32; 2],
    /// How long the particles emitted this step live, seconds (each jittered +-25 %; see
    /// [`grid::particles`]).
    pub particle_life: f32,
    /// The particle fluid's knobs (the grid ignores them; the particle model sanitises them).
    pub liquid: crate::fluid::Liquid,
}

impl Default for StepInput {
    fn default() -> Self {
        Self {
            dt: 1.0 / 60.0,
            viscosity: 0.0,
            dye_diffusion: 0.0,
            velocity_dissipation: 0.0,
            dye_dissipation: 0.0,
            vorticity: 0.0,
            buoyancy: 0.0,
            weight: 0.0,
            cooling: 0.0,
            ambient: 0.0,
            up: [0.0, 1.0],
            particle_life: 3.0,
            liquid: crate::fluid::Liquid::default(),
        }
    }
}

impl StepInput {
    /// The same parameters with every value finite and in range: NaN becomes 0, negatives 0,
    /// and dt at most [`MAX_STEP_DT_S`].
    pub fn sanitized(&self) -> Self {
        let clean = |x: f32, max: f32| {
            if x.is_finite() {
                x.clamp(0.0, max)
            } else {
                0.0
            }
        };
        Self {
            dt: clean(self.dt, MAX_STEP_DT_S),
            viscosity: clean(self.viscosity, 1.0),
            dye_diffusion: clean(self.dye_diffusion, 1.0),
            velocity_dissipation: clean(self.velocity_dissipation, 1.0e3),
            dye_dissipation: clean(self.dye_dissipation, 1.0e3),
            vorticity: clean(self.vorticity, 10.0),
            buoyancy: clean(self.buoyancy, 100.0),
            weight: clean(self.weight, 100.0),
            cooling: clean(self.cooling, 1.0e3),
            ambient: if self.ambient.is_finite() {
                self.ambient.clamp(-MAX_HEAT, MAX_HEAT)
            } else {
                0.0
            },
            up: {
                let [x, y] = self.up;
                let n = x.phypot(y);
                if n.is_finite() && n > 1.0e-6 {
                    [x / n, y / n]
                } else {
                    [0.0, 1.0]
                }
            },
            particle_life: clean(self.particle_life, grid::particles::MAX_LIFE_S),
            liquid: self.liquid,
        }
    }

    /// Whether buoyancy or weight can move the fluid.
    pub fn lifts(&self) -> bool {
        self.buoyancy > 0.0 || self.weight > 0.0
    }
}

/// What a solver holds besides its [`Fields`]: the temperature and the living particles, to
/// carry into a rebuilt solver (a new resolution or backend), so a change of settings in the
/// middle of a show keeps the plumes and the sparks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extras {
    /// The temperature, a value per cell of a `heat_size` grid, row-major from the bottom row
    /// (empty: nothing was ever heated).
    pub heat: Vec<f32>,
    pub heat_size: (usize, usize),
    /// The living particles (positions in canvas units).
    pub particles: Vec<grid::particles::Particle>,
}

impl Extras {
    /// The temperature resampled (bilinear, cell centres) to a `w x h` grid, 0 in the solid
    /// cells of `mask` and where it is not finite; `None` when there is none.
    pub fn heat_on(
        &self,
        (w, h): (usize, usize),
        mask: Option<&obstacles::Mask>,
    ) -> Option<Vec<f32>> {
        let (sw, sh) = self.heat_size;
        if self.heat.is_empty() || sw * sh != self.heat.len() || w * h == 0 {
            return None;
        }
        let (sx, sy) = (sw as f32 / w as f32, sh as f32 / h as f32);
        let heat = (0..w * h)
            .map(|k| {
                let (i, j) = (k % w, k / w);
                if mask.is_some_and(|m| m.is_solid(i, j)) {
                    return 0.0;
                }
                let t = if (sw, sh) == (w, h) {
                    // The same grid (a change of backend): exactly the values.
                    self.heat[k]
                } else {
                    let x = (i as f32 + 0.5) * sx - 0.5;
                    let y = (j as f32 + 0.5) * sy - 0.5;
                    grid::sample(&self.heat, sw, sh, x, y)
                };
                if t.is_finite() { t } else { 0.0 }
            })
            .collect();
        Some(heat)
    }

    /// The particles a canvas `aspect` wide with the solids of `mask` can take, at most
    /// `capacity`: the living ones on the canvas and out of its solids, the youngest first
    /// when there are too many.
    pub fn particles_for(
        &self,
        aspect: f32,
        mask: Option<&obstacles::Mask>,
        capacity: usize,
    ) -> Vec<grid::particles::Particle> {
        let mut kept: Vec<grid::particles::Particle> = self
            .particles
            .iter()
            .filter(|p| p.alive())
            .filter(|p| (0.0..=aspect).contains(&p.pos[0]) && (0.0..=1.0).contains(&p.pos[1]))
            .filter(|p| !mask.is_some_and(|m| grid::particles::solid_at(m, p.pos)))
            .copied()
            .collect();
        if kept.len() > capacity {
            kept.sort_by(|a, b| a.age.total_cmp(&b.age));
            kept.truncate(capacity);
        }
        kept
    }
}

/// What a step measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// RMS of the divergence (per cell, in velocity units) before the last projection.
    pub div_rms_before: f32,
    /// RMS of the divergence after the last projection.
    pub div_rms_after: f32,
    /// Max |divergence| before the last projection.
    pub div_max_before: f32,
    /// Max |divergence| after the last projection.
    pub div_max_after: f32,
    /// Pressure iterations (V-cycles or sweeps) this step's projection ran: the configured
    /// ones, plus [`grid::physics::extra_iterations`] after an advection that left the flow
    /// compressible.
    pub pressure_iterations: u32,
}

impl StepStats {
    /// RMS divergence after projection relative to before (0 = perfectly projected).
    pub fn residual_rms(&self) -> f32 {
        relative(self.div_rms_after, self.div_rms_before)
    }

    /// Max divergence after projection relative to before.
    pub fn residual_max(&self) -> f32 {
        relative(self.div_max_after, self.div_max_before)
    }
}

fn relative(after: f32, before: f32) -> f32 {
    if before > 0.0 { after / before } else { 0.0 }
}

/// How much is going on in the fluid, for the engine to tell whether it has come to rest.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Activity {
    /// Largest |u| or |v| of any face, in canvas heights per second.
    pub max_speed: f32,
    /// Largest dye value of any channel of any dye cell.
    pub max_dye: f32,
    /// Whether particles may still be alive (their longest life since the last emission has
    /// not run out).
    pub particles: bool,
    /// Whether the picture keeps its colours whatever the dye's dissipation and diffusion
    /// (the liquid's particles keep theirs): then a still fluid is a still picture.
    pub keeps_colour: bool,
}

/// Exposure below which nothing shows: the colour stage maps an exposure `x` to `1 - e^-x`,
/// which stays under half an 8-bit level (0.5 / 255) below this.
pub const INVISIBLE_EXPOSURE: f32 = 1.9e-3;
/// The same for the filmic tone mode: near black the curve has slope 0.214 and sRGB 12.92,
/// so an exposure `x` shows as 255 * 2.77 x levels, under half a level below this. (The
/// dither lights that fraction of the pixels one level: 1 in 2 at most, at level 1.)
pub const INVISIBLE_EXPOSURE_FILMIC: f32 = 7.0e-4;
/// Below this speed the dye counts as still: 1 pixel per second on a picture 1000 pixels
/// tall (speeds are in canvas heights per second).
pub const STILL_SPEED: f32 = 1.0e-3;

impl Activity {
    /// Whether the picture of a fluid this active, drawn with `look`, has stopped changing:
    /// nothing visible moves or fades. `fading`: the dye decays or diffuses (dissipation or
    /// diffusion above 0).
    ///
    /// A flow can swirl on unseen (vorticity confinement keeps feeding it) once its dye has
    /// faded: in the dye colour modes that counts as still, since nothing shows it.
    pub fn still(&self, look: &Look, fading: bool) -> bool {
        let brightness = if look.brightness.is_finite() {
            look.brightness.max(0.0)
        } else {
            1.0
        };
        let invisible = match look.tone {
            ToneMode::Legacy => INVISIBLE_EXPOSURE,
            ToneMode::Filmic => INVISIBLE_EXPOSURE_FILMIC,
        };
        let shows = |exposure: f32| exposure * brightness >= invisible;
        if self.particles && look.particle_glow > 0.0 {
            // Living particles move and fade.
            return false;
        }
        if look.streamlines.mode != StreamlineMode::Off
            && self.max_speed >= crate::display::streamlines::INVISIBLE_SPEED
        {
            // The lines follow the flow, seen or not in the dye, until they fade out.
            return false;
        }
        match look.color_mode {
            ColorMode::VelocityHue => !shows(self.max_speed * VELOCITY_VALUE_SCALE),
            // Heat exists only while buoyancy lifts it (notes heat the fluid then), so a
            // still fluid has none left to show changing.
            ColorMode::Temperature => self.max_speed < STILL_SPEED && !fading,
            ColorMode::Dye | ColorMode::DensityHue => {
                // Density hue shows the sum of the three channels.
                let dye = if look.color_mode == ColorMode::DensityHue {
                    3.0 * self.max_dye
                } else {
                    self.max_dye
                };
                !shows(dye) || (self.max_speed < STILL_SPEED && !fading)
            }
        }
    }
}

/// The stages of a step, in order. Each solver runs them all in [`Solver::step`]; running one
/// at a time ([`Solver::run_stage`]) lets tests compare the backends stage by stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Apply the queued splats (runs even when dt is 0).
    ApplySplats,
    /// Buoyancy and weight: `(sigma (T - T_ambient) - kappa d)` along the up direction (when
    /// buoyancy or weight > 0).
    AddBuoyancy,
    /// Vorticity confinement (when vorticity > 0).
    ConfineVorticity,
    /// Implicit viscous diffusion of velocity (when viscosity > 0).
    DiffuseVelocity,
    /// Projection: divergence, pressure solve, gradient subtraction.
    Project,
    /// Semi-Lagrangian dye advection through the projected velocity, with dye dissipation;
    /// the temperature is advected with it and cools.
    AdvectDye,
    /// The particles move through the same velocity (midpoint rule), bounce off walls and
    /// obstacles, and age (when any may be alive).
    MoveParticles,
    /// Implicit dye diffusion (when dye diffusion > 0).
    DiffuseDye,
    /// Semi-Lagrangian self-advection of velocity, with velocity dissipation.
    AdvectVelocity,
    /// The compressibility check after the velocity's advection: a flow it left compressible
    /// gets extra iterations in the next step's projection.
    CheckCompressibility,
}

impl Stage {
    /// The stage's one name: its CPU function's (`CpuSolver`), its GPU encoder's after
    /// `encode_` (`GpuSolver`), its pass labels' after `grid.`, its row in
    /// docs/src/internals/stages.md (tests/it/vocabulary.rs holds them together).
    pub const fn name(self) -> &'static str {
        match self {
            Stage::ApplySplats => "apply_splats",
            Stage::AddBuoyancy => "add_buoyancy",
            Stage::ConfineVorticity => "confine_vorticity",
            Stage::DiffuseVelocity => "diffuse_velocity",
            Stage::Project => "project",
            Stage::AdvectDye => "advect_dye",
            Stage::MoveParticles => "move_particles",
            Stage::DiffuseDye => "diffuse_dye",
            Stage::AdvectVelocity => "advect_velocity",
            Stage::CheckCompressibility => "check_compressibility",
        }
    }

    /// The label of the stage's GPU pass (one pass), as the bench's `passes` table and a GPU
    /// debugger show it; a stage of several passes labels each `grid.<name>.<part>`.
    pub const fn label(self) -> &'static str {
        match self {
            Stage::ApplySplats => "grid.apply_splats",
            Stage::AddBuoyancy => "grid.add_buoyancy",
            Stage::ConfineVorticity => "grid.confine_vorticity",
            Stage::DiffuseVelocity => "grid.diffuse_velocity",
            Stage::Project => "grid.project",
            Stage::AdvectDye => "grid.advect_dye",
            Stage::MoveParticles => "grid.move_particles",
            Stage::DiffuseDye => "grid.diffuse_dye",
            Stage::AdvectVelocity => "grid.advect_velocity",
            Stage::CheckCompressibility => "grid.check_compressibility",
        }
    }

    /// Every stage, in step order.
    pub const ALL: [Stage; 10] = [
        Stage::ApplySplats,
        Stage::AddBuoyancy,
        Stage::ConfineVorticity,
        Stage::DiffuseVelocity,
        Stage::Project,
        Stage::AdvectDye,
        Stage::MoveParticles,
        Stage::DiffuseDye,
        Stage::AdvectVelocity,
        Stage::CheckCompressibility,
    ];
}

/// A fluid solver: the CPU reference and the GPU solver implement the same physics.
pub trait Solver: Send {
    /// The configuration the solver runs with (sanitised).
    fn config(&self) -> SimConfig;

    /// Short backend name ("cpu", "gpu").
    fn backend(&self) -> &'static str;

    /// Queue splats; they are applied at the start of the next [`Solver::step`].
    fn inject(&mut self, splats: &[Splat]);

    /// Advance the fluid by `params.dt` simulated seconds: every [`Stage`] in order (only the
    /// splats when dt is 0).
    fn step(&mut self, params: &StepInput) -> StepStats;

    /// Run a single stage of a step (diagnostics and stage-by-stage parity tests).
    fn run_stage(&mut self, stage: Stage, params: &StepInput) -> StepStats;

    /// Render the current dye (or velocity) into `out` as RGBA8 rows, top row first, at any
    /// size. `out.len()` must be `width * height * 4`.
    fn render(&mut self, look: &Look, width: usize, height: usize, out: &mut [u8]);

    /// Copy the current fields out (for tests, parity checks and backend fallback).
    fn read_fields(&mut self) -> Fields;

    /// Replace the fields (carry-over when switching backends). Fields of another size are
    /// resampled.
    fn write_fields(&mut self, fields: &Fields);

    /// The temperature and the living particles (blocking on the GPU); see [`Extras`].
    fn read_extras(&mut self) -> Extras;

    /// Take over `extras` (after the obstacles and fields): the temperature resampled to this
    /// grid, the particles that fit this canvas ([`Extras::heat_on`],
    /// [`Extras::particles_for`]). What `extras` lacks is cleared (no heat, no particles).
    fn write_extras(&mut self, extras: &Extras);

    /// Clear every field to rest.
    fn reset(&mut self);

    /// Measure the divergence before and after the projection each step (off, the stats are
    /// zeros and the GPU never waits for a readback).
    fn set_measure(&mut self, on: bool);

    /// Change the pressure solve's iterations (sweeps, or V-cycles for multigrid).
    fn set_pressure_iterations(&mut self, iterations: u32);

    /// Put solid obstacles in the flow (`None` or an empty mask: none), resampled to this
    /// solver's grid. Velocity through solid faces and dye inside solids are cleared at once,
    /// and the pressure's warm start restarts from 0. Built once per call, never per step.
    fn set_obstacles(&mut self, mask: Option<&crate::sim::obstacles::Mask>);

    /// The obstacles on this solver's grid (resampled), if any.
    fn obstacles(&self) -> Option<&crate::sim::obstacles::Mask>;

    /// A failure that makes this solver unusable (GPU device lost, validation error).
    fn failure(&self) -> Option<crate::gpu::GpuError> {
        None
    }

    /// Start rendering a frame of `width x height` without waiting for it; `false` when it
    /// cannot be started now (all readback buffers busy). See [`Solver::take_frame`].
    fn request_frame(&mut self, look: &Look, width: usize, height: usize) -> bool;

    /// The newest finished frame, if any, into `out` (RGBA8, top row first); returns its size.
    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)>;

    /// Frames an offline render may keep in flight with [`Solver::submit_frame`] and
    /// [`Solver::wait_frame`] while the next frames' steps run; 0 (the default): it renders
    /// each with [`Solver::render`].
    fn frames_in_flight(&self) -> usize {
        0
    }

    /// Start rendering the next frame of an offline render without waiting for it (at most
    /// [`Solver::frames_in_flight`] of them); `false` when it cannot (render it with
    /// [`Solver::render`] instead, after waiting for those in flight).
    fn submit_frame(&mut self, _look: &Look, _width: usize, _height: usize) -> bool {
        false
    }

    /// Wait for the oldest frame [`Solver::submit_frame`] started and copy it into `out` (its
    /// size, RGBA8, top row first); `false` when there is none or it did not come back.
    fn wait_frame(&mut self, _out: &mut [u8]) -> bool {
        false
    }

    /// Start measuring the fluid's [`Activity`] without waiting for it, and return the newest
    /// finished measurement with the `tag` its call passed: on the CPU the one just made (with
    /// this call's tag); on the GPU one started by an earlier call (`None` until the first has
    /// been read back). The tag lets the caller tell how old the measurement is. Never
    /// blocks.
    fn probe_activity(&mut self, tag: u64) -> Option<(u64, Activity)>;
}

/// The solver iterations for the plugin's "pressure iterations" knob, which counts red-black
/// sweeps of work: multigrid runs one V-cycle per [`MG_CYCLE_IN_SWEEPS`] (at least one).
pub fn iterations_for(method: PressureMethod, sweeps: u32) -> u32 {
    match method {
        PressureMethod::Multigrid => {
            ((sweeps + MG_CYCLE_IN_SWEEPS / 2) / MG_CYCLE_IN_SWEEPS).max(1)
        }
        _ => sweeps.max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow whose dye has faded still moves its lines: with streamlines on the picture is
    /// not still while anything flows, and it is once the flow stops.
    #[test]
    fn lines_keep_a_flowing_picture_alive() {
        use crate::fluid::Look;
        let flowing = Activity {
            max_speed: 0.2,
            max_dye: 0.0,
            particles: false,
            keeps_colour: false,
        };
        let plain = Look::default();
        assert!(
            flowing.still(&plain, false),
            "no dye, no lines: nothing shows"
        );
        let lines = Look {
            streamlines: crate::display::streamlines::overlay(32),
            ..plain
        };
        assert!(!flowing.still(&lines, false));
        let rest = Activity {
            max_speed: 0.0,
            ..flowing
        };
        assert!(rest.still(&lines, false));
    }
}
