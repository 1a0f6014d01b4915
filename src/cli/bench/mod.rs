//! `dyeflow bench`: a fixed scene, timed. A centre block of dye and upward force for the
//! first 20 steps, then free flow; it reports the median step time and how well the pressure
//! solve projected (the divergence left after the final projection, relative to before).

mod latency;
pub mod liquid3d;
mod passes;
pub mod sph;

pub use latency::*;
pub use passes::PassTime;

use crate::fluid::{ColorMode, Look, Splat, SplatShape, ToneMode};
use crate::gpu::{GpuContext, GpuError, GpuOptions};
use crate::sim::grid::cpu::{CpuError, CpuSolver};
use crate::sim::grid::gpu::GpuSolver;
use crate::sim::{PressureMethod, SimConfig, Solver, StepInput};
use serde::Serialize;
use std::time::Instant;

/// Output size of the `frame_ms` measurement: step, colorize and readback of a 720p frame.
pub const FRAME_SIZE: (usize, usize) = (1280, 720);
/// Frames timed for `frame_ms`.
const FRAME_SAMPLES: usize = 20;
/// Mask rebuilds timed for `obstacles_ms`.
const OBSTACLE_SAMPLES: usize = 7;

/// Steps during which the scene injects dye and force.
pub const SCENE_FORCED_STEPS: usize = 20;
/// Simulated time per bench step: 60 steps per second.
pub const SCENE_DT_S: f32 = 1.0 / 60.0;

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Grid height and width in cells (square canvas).
    pub size: usize,
    /// Pressure iterations (sweeps, or V-cycles for multigrid).
    pub iters: u32,
    /// Pressure method.
    pub pressure: PressureMethod,
    /// Steps to time.
    pub steps: usize,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// Dye cells per simulation cell, per axis.
    pub dye_scale: usize,
    /// Built-in obstacles in the scene.
    pub obstacles: crate::sim::obstacles::Layout,
    /// Heat and buoyancy: the scene's block is hot and rises ([`scene_heat_params`]).
    pub heat: bool,
    /// Particles seeded over the canvas before the run (long-lived: all of them move every
    /// step and show in every frame); 0: none.
    pub particles: usize,
    /// Time a frame of the default streamlines alone (`streamlines_ms`).
    pub streamlines: bool,
    /// Output size of the colour stage's timings (`colour_ms`, `display_gpu_ms`).
    pub frame_size: (usize, usize),
}

/// What a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    pub backend: String,
    pub size: usize,
    pub dye_size: usize,
    pub iters: u32,
    pub pressure: String,
    pub threads: usize,
    pub steps: usize,
    /// Median wall time of one step.
    pub ms_per_step: f64,
    /// 90th percentile step time.
    pub ms_p90: f64,
    /// Mean step time (with the steps that run extra pressure iterations, which the median
    /// can hide).
    pub ms_mean: f64,
    /// Pressure cell updates per second: cells x iterations run / step time.
    pub cell_iters_per_s: f64,
    /// Pressure iterations (V-cycles or sweeps) a step ran, mean: `iters`, plus the extra ones
    /// after advection that left the flow compressible.
    pub iterations_per_step: f64,
    /// Median over steps of max |div| after the final projection / max |div| before it.
    pub residual_max: f64,
    /// Median over steps of RMS div after the final projection / RMS before it.
    pub residual_rms: f64,
    /// After the run and one more projection: the largest speed through a solid face over the
    /// largest speed of any face (0 without obstacles).
    pub solid_flux_max: f64,
    /// With `--obstacles`: median wall time of handing the solver the layout's mask again
    /// (`set_obstacles`: what a layout change, a brush stroke or a pillar note costs the
    /// simulation thread), ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub obstacles_ms: Option<f64>,
    /// Whether the scene ran with heat and buoyancy (`--heat`).
    pub heat: bool,
    /// Particles alive at the end of the run (`--particles` asks for them: at most the
    /// backend's slots, and none seeded inside a solid).
    pub particles: usize,
    /// Median wall time of the particles' step stage alone (their move through the flow),
    /// ms; on the GPU with the wait for it. (Their drawing is in `colour_ms`.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub particles_ms: Option<f64>,
    /// Streamlines drawn by `streamlines_ms` (`--streamlines`; 0: not timed).
    pub streamlines: usize,
    /// Median wall time of a `frame` frame of the default streamlines alone, ms: their trace,
    /// drawing and composite (and the obstacles' overlay over them, and on the GPU the
    /// readback); the picture under them is not rendered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streamlines_ms: Option<f64>,
    /// The GPU adapter (GPU runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// Median wall time of a step plus colorize (plus readback on the GPU) of a 1280x720
    /// frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_ms: Option<f64>,
    /// Median wall time of the colour stage alone (a render of the same fields, no step) of
    /// a `frame` frame: `[legacy, filmic]` tone (filmic: colorize plus the display pipeline
    /// with a new instance's effects; on the GPU with the readback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub colour_ms: Option<[f64; 2]>,
    /// The same for the filmic tone without effects (colorize plus the tone pass alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub colour_plain_ms: Option<f64>,
    /// The frame size of `colour_ms` and the GPU frame times.
    pub frame: String,
    /// CPU: wall time of the display pipeline alone at `frame` with a new instance's effects:
    /// the filmic render of `colour_ms` minus the colour stage alone (colorize's light, timed
    /// on its own), medians, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_ms: Option<f64>,
    /// GPU time (timestamp queries) of colorize alone at `frame`, median, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub colorize_gpu_ms: Option<f64>,
    /// GPU time (timestamp queries) of the display pipeline after colorize (bloom, sunrays,
    /// tone) with a new instance's effects at `frame`, median, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_gpu_ms: Option<f64>,
    /// How `ms_per_step` was timed: "wall" (CPU clock) or "timestamp" (GPU timestamp queries).
    pub timer: &'static str,
    /// GPU runs with timestamps: each compute pass of a step on its own (see [`passes`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passes: Option<Vec<PassTime>>,
    /// GPU runs with timestamps: each compute pass of a frame at `frame` in the show look on
    /// its own (the display pipeline's stages in a pass each).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_passes: Option<Vec<PassTime>>,
}

/// The scene's injection for step `n`: a block of white dye with an upward push.
pub fn scene_splats(n: usize) -> Option<Splat> {
    (n < SCENE_FORCED_STEPS).then_some(Splat {
        pos: [0.5, 0.5],
        radius: 1.0 / 16.0,
        color: [1.0, 1.0, 1.0],
        amount: 0.5,
        force: [0.0, 0.15],
        shape: SplatShape::Block,
        ..Splat::default()
    })
}

/// With `--heat`: the temperature the block adds per step while it is forced.
pub const SCENE_HEAT: f32 = 0.5;

/// With `--heat`: the scene's physics with the lift the hot block rises by.
pub fn scene_heat_params() -> StepInput {
    StepInput {
        buoyancy: 2.0,
        weight: 0.2,
        cooling: 0.5,
        ..scene_params()
    }
}

/// The scene's physics: the plugin's default knobs.
pub fn scene_params() -> StepInput {
    StepInput {
        dt: SCENE_DT_S,
        viscosity: 0.0,
        dye_diffusion: 0.0,
        velocity_dissipation: 0.2,
        dye_dissipation: 0.5,
        vorticity: 0.3,
        ..StepInput::default()
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

/// The `p` quantile of `v` (sorted in place; the nearest rank; 0 for none).
pub(super) fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        0.0
    } else {
        v[((v.len() - 1) as f64 * p).round() as usize]
    }
}

/// The looks the colour stage is timed with: legacy, filmic with a new instance's effects,
/// and plain filmic.
pub fn bench_looks() -> [Look; 3] {
    use crate::engine::{Discrete, Knobs};
    use crate::params::DyeflowParams;
    let p = DyeflowParams::default();
    let d = Discrete::from_params(&p);
    let show = Knobs::from_params(&p).look(ColorMode::Dye, ToneMode::Filmic, d.palette);
    [
        Look {
            tone: ToneMode::Legacy,
            ..Look::default()
        },
        show,
        Look::default(),
    ]
}

/// The streamlines `--streamlines` times: a new instance's, alone.
pub fn bench_streamlines() -> crate::display::streamlines::StreamlineLook {
    crate::display::streamlines::StreamlineLook {
        mode: crate::fluid::StreamlineMode::Alone,
        ..Default::default()
    }
}

/// Median time of the colour stage alone at `size` with `look` (on the GPU, with readback),
/// after one untimed render (the first at a new size pays for allocations); with
/// `gpu_ms`, also the medians of what it reports after each render.
fn colour_time<S: Solver>(
    solver: &mut S,
    look: &Look,
    (fw, fh): (usize, usize),
    gpu_ms: impl Fn(&S) -> Option<[f64; 2]>,
) -> (f64, Option<[f64; 2]>) {
    let mut pixels = vec![0u8; fw * fh * 4];
    solver.render(look, fw, fh, &mut pixels);
    let mut gpu = [Vec::new(), Vec::new()];
    let mut times: Vec<f64> = (0..FRAME_SAMPLES)
        .map(|_| {
            let t = Instant::now();
            solver.render(look, fw, fh, &mut pixels);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if let Some(g) = gpu_ms(solver) {
                gpu[0].push(g[0]);
                gpu[1].push(g[1]);
            }
            ms
        })
        .collect();
    let gpu = (!gpu[0].is_empty()).then(|| gpu.map(|mut v| median(&mut v)));
    (median(&mut times), gpu)
}

/// Median time of a displayed frame: a step, then colorize at 720p (and, on the GPU, the
/// readback), without statistics.
fn frame_time(solver: &mut dyn Solver, params: &StepInput) -> f64 {
    solver.set_measure(false);
    let (fw, fh) = FRAME_SIZE;
    let mut pixels = vec![0u8; fw * fh * 4];
    let look = Look {
        color_mode: ColorMode::Dye,
        ..Look::default()
    };
    median_ms(FRAME_SAMPLES, || {
        solver.step(params);
        solver.render(&look, fw, fh, &mut pixels);
    })
}

/// What running the scene measured, before it becomes a [`BenchResult`].
struct SceneRun {
    /// Reported time of each step, ms.
    times: Vec<f64>,
    res_max: Vec<f64>,
    res_rms: Vec<f64>,
    /// Pressure iterations over all steps.
    iterations: usize,
    frame_ms: f64,
    colour_ms: [f64; 2],
    colour_plain_ms: f64,
    frame: (usize, usize),
    /// GPU times of the show look: colorize, display pipeline.
    gpu_frame_ms: Option<[f64; 2]>,
    solid_flux_max: f64,
    obstacles_ms: Option<f64>,
    /// Particles alive after the run.
    particles: usize,
    particles_ms: Option<f64>,
    /// Lines drawn and their frame's time (`--streamlines`).
    streamlines: Option<(usize, f64)>,
}

/// Project the current flow once more and measure the largest speed through a solid face
/// relative to the largest speed of any face (0 without obstacles or without flow).
pub fn solid_flux_after_projection(solver: &mut dyn Solver) -> f64 {
    let Some(mask) = solver.obstacles().cloned() else {
        return 0.0;
    };
    solver.run_stage(crate::sim::Stage::Project, &scene_params());
    let f = solver.read_fields();
    let flux = mask.closed_face_speed(&f.u, &f.v);
    let scale = f.u.iter().chain(&f.v).fold(0.0f32, |m, x| m.max(x.abs()));
    if scale > 0.0 {
        f64::from(flux / scale)
    } else {
        0.0
    }
}

/// Run the scene on `solver`: `step_ms` turns a step's wall time into the time reported (the
/// GPU's timestamps when it has them). Stops with the solver's failure, if it fails.
fn run_scene<S: Solver>(
    solver: &mut S,
    opts: &BenchOptions,
    step_ms: impl Fn(&S, f64) -> f64,
) -> Result<SceneRun, GpuError> {
    let frame = opts.frame_size;
    let params = if opts.heat {
        scene_heat_params()
    } else {
        scene_params()
    };
    let mut run = SceneRun {
        times: Vec::with_capacity(opts.steps),
        res_max: Vec::with_capacity(opts.steps),
        res_rms: Vec::with_capacity(opts.steps),
        iterations: 0,
        frame_ms: 0.0,
        colour_ms: [0.0; 2],
        colour_plain_ms: 0.0,
        frame,
        gpu_frame_ms: None,
        solid_flux_max: 0.0,
        obstacles_ms: None,
        particles: 0,
        particles_ms: None,
        streamlines: None,
    };
    step_scene(solver, opts, &params, &step_ms, &mut run)?;
    run.solid_flux_max = solid_flux_after_projection(solver);
    if opts.particles > 0 {
        // What the solver took (its slots, less any seeded inside a solid) and kept.
        run.particles = solver.read_extras().particles.len();
    }
    if opts.particles > 0 {
        run.particles_ms = Some(particles_ms(solver, &params));
    }
    run.frame_ms = frame_time(solver, &params);
    let [legacy, show, plain] = bench_looks();
    let none = |_: &S| None;
    run.colour_ms = [
        colour_time(solver, &legacy, frame, none).0,
        colour_time(solver, &show, frame, none).0,
    ];
    run.colour_plain_ms = colour_time(solver, &plain, frame, none).0;
    if opts.streamlines {
        let look = Look {
            streamlines: bench_streamlines(),
            ..plain
        };
        let grid = (opts.size, opts.size);
        let lines = crate::display::streamlines::Lines::new(&look.streamlines, grid, frame)
            .map_or(0, |l| l.seeds());
        run.streamlines = Some((lines, colour_time(solver, &look, frame, none).0));
    }
    // Last: a new mask starts the pressure solve's warm start afresh, which the timings
    // above should not see.
    if let Some(mask) = solver.obstacles().cloned() {
        run.obstacles_ms = Some(median_ms(OBSTACLE_SAMPLES, || {
            solver.set_obstacles(Some(&mask));
        }));
    }
    Ok(run)
}

/// The scene's `opts.steps` steps on `solver`, each one's time, pressure iterations and
/// residuals into `run`. Stops with the solver's failure, if it fails.
fn step_scene<S: Solver>(
    solver: &mut S,
    opts: &BenchOptions,
    params: &StepInput,
    step_ms: &impl Fn(&S, f64) -> f64,
    run: &mut SceneRun,
) -> Result<(), GpuError> {
    for n in 0..opts.steps {
        if let Some(mut s) = scene_splats(n) {
            if opts.heat {
                s.heat = SCENE_HEAT;
            }
            solver.inject(&[s]);
        }
        let t = Instant::now();
        let stats = solver.step(params);
        let wall = t.elapsed().as_secs_f64() * 1e3;
        run.times.push(step_ms(solver, wall));
        run.iterations += stats.pressure_iterations as usize;
        if stats.div_rms_before > 0.0 {
            run.res_max.push(f64::from(stats.residual_max()));
            run.res_rms.push(f64::from(stats.residual_rms()));
        }
        if let Some(e) = solver.failure() {
            return Err(e);
        }
    }
    Ok(())
}

/// The particles' stage alone, median ms. The GPU's stage only queues its work: a one-pixel
/// frame without particles waits for it (on the CPU it costs next to nothing).
fn particles_ms(solver: &mut dyn Solver, params: &StepInput) -> f64 {
    let dark = Look {
        particle_glow: 0.0,
        ..Look::default()
    };
    let mut px = [0u8; 4];
    solver.render(&dark, 1, 1, &mut px);
    median_ms(FRAME_SAMPLES, || {
        solver.run_stage(crate::sim::Stage::MoveParticles, params);
        solver.render(&dark, 1, 1, &mut px);
    })
}

/// Median wall time of `samples` calls of `f`, ms.
fn median_ms(samples: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..samples)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    median(&mut times)
}

impl SceneRun {
    /// The figures for `opts`, run on `backend`.
    fn result(
        mut self,
        opts: &BenchOptions,
        backend: &str,
        threads: usize,
        adapter: Option<String>,
        timer: &'static str,
    ) -> BenchResult {
        let ms = median(&mut self.times);
        let cells = (opts.size * opts.size) as f64;
        let per_step_iters = self.iterations as f64 / opts.steps.max(1) as f64;
        BenchResult {
            backend: backend.into(),
            size: opts.size,
            dye_size: opts.size * opts.dye_scale,
            iters: opts.iters,
            pressure: opts.pressure.name().into(),
            threads,
            steps: opts.steps,
            ms_per_step: ms,
            ms_p90: percentile(&mut self.times, 0.9),
            ms_mean: self.times.iter().sum::<f64>() / self.times.len().max(1) as f64,
            cell_iters_per_s: if ms > 0.0 {
                cells * per_step_iters / (ms * 1e-3)
            } else {
                0.0
            },
            iterations_per_step: per_step_iters,
            residual_max: median(&mut self.res_max),
            residual_rms: median(&mut self.res_rms),
            solid_flux_max: self.solid_flux_max,
            obstacles_ms: self.obstacles_ms,
            heat: opts.heat,
            particles: self.particles,
            particles_ms: self.particles_ms,
            streamlines: self.streamlines.map_or(0, |s| s.0),
            streamlines_ms: self.streamlines.map(|s| s.1),
            adapter,
            frame_ms: Some(self.frame_ms),
            colour_ms: Some(self.colour_ms),
            colour_plain_ms: Some(self.colour_plain_ms),
            frame: format!("{}x{}", self.frame.0, self.frame.1),
            display_ms: None,
            colorize_gpu_ms: self.gpu_frame_ms.map(|g| g[0]),
            display_gpu_ms: self.gpu_frame_ms.map(|g| g[1]),
            timer,
            passes: None,
            frame_passes: None,
        }
    }
}

/// Run the scene on the CPU solver.
///
/// # Errors
/// [`CpuError`] when the solver's threads cannot be started.
pub fn run_cpu(opts: &BenchOptions) -> Result<BenchResult, CpuError> {
    let mut solver = CpuSolver::new(&config(opts), opts.threads)?;
    let mask = crate::sim::obstacles::Mask::layout(opts.obstacles, opts.size, opts.size);
    solver.set_obstacles(Some(&mask));
    if opts.particles > 0 {
        solver.set_particles(&seed_particles(opts.particles, &mask));
    }
    let threads = solver.threads();
    let mut result = match run_scene(&mut solver, opts, |_, wall| wall) {
        Ok(run) => run.result(opts, "cpu", threads, None, "wall"),
        Err(e) => unreachable!("the CPU solver reported a failure: {e}"),
    };
    // The colour stage alone, as the display pipeline's share of the filmic render.
    let [_, show, _] = bench_looks();
    let (fw, fh) = opts.frame_size;
    solver.colour_stage(&show, fw, fh);
    let colour = median_ms(FRAME_SAMPLES, || solver.colour_stage(&show, fw, fh));
    result.display_ms = result
        .colour_ms
        .map(|[_, filmic]| (filmic - colour).max(0.0));
    Ok(result)
}

/// `n` long-lived particles spread evenly over a `size x size` canvas, none inside a solid of
/// `mask`, for `--particles`: one per cell of a fine grid, jittered, in row order. Slots in
/// that order are neighbours in space, as the particles a splat emits are (a uniformly
/// shuffled cloud costs about twice as much on the CPU: every sample misses the caches).
pub fn seed_particles(
    n: usize,
    mask: &crate::sim::obstacles::Mask,
) -> Vec<crate::sim::grid::particles::Particle> {
    let (w, h) = (mask.width(), mask.height());
    let aspect = w as f32 / h as f32;
    let rows = ((n as f32 / aspect).sqrt().ceil() as usize).max(1);
    let cols = n.div_ceil(rows).max(1);
    (0..n)
        .map(|k| {
            let (r, c) = (k / cols, k % cols);
            let (a, b) = (
                (k as f64 * 0.754_877_666).fract() as f32,
                (k as f64 * 0.569_840_291).fract() as f32,
            );
            [
                (c as f32 + a) / cols as f32 * aspect,
                ((r as f32 + b) / rows as f32).min(1.0),
            ]
        })
        .filter(|&p| !crate::sim::grid::particles::solid_at(mask, p))
        .map(|pos| crate::sim::grid::particles::Particle {
            pos,
            age: 1.0,
            life: crate::sim::grid::particles::MAX_LIFE_S,
            color: [1.0, 0.8, 0.6],
            _pad: 0.0,
        })
        .collect()
}

/// The bench's solver configuration.
fn config(opts: &BenchOptions) -> SimConfig {
    let mut cfg = SimConfig::new(opts.size, opts.size);
    cfg.dye_scale = opts.dye_scale;
    cfg.pressure = opts.pressure;
    cfg.pressure_iterations = opts.iters;
    cfg
}

/// Run the scene on the GPU. Step times come from timestamp queries around the step's
/// passes when the adapter has them (wall time, including the wait for the step, otherwise).
pub fn run_gpu(opts: &BenchOptions, gpu: &GpuOptions) -> Result<BenchResult, GpuError> {
    let ctx = GpuContext::new(gpu)?;
    let adapter = ctx.adapter_name();
    let mut solver = GpuSolver::new(ctx, &config(opts))?;
    let mask = crate::sim::obstacles::Mask::layout(opts.obstacles, opts.size, opts.size);
    solver.set_obstacles(Some(&mask));
    if opts.particles > 0 {
        solver.set_particles(&seed_particles(opts.particles, &mask));
    }
    solver.set_measure(true);
    let mut run = run_scene(&mut solver, opts, |s, wall| s.last_gpu_ms().unwrap_or(wall))?;
    // The display pipeline alone, from timestamp queries around its compute pass (the
    // renders above ran without them: reading the stamps back waits for each frame).
    solver.set_time_frames(true);
    let [_, show, _] = bench_looks();
    let gpu_ms = |s: &GpuSolver| s.last_frame_gpu_ms();
    run.gpu_frame_ms = colour_time(&mut solver, &show, opts.frame_size, gpu_ms).1;
    solver.set_time_frames(false);
    let timer = if solver.last_gpu_ms().is_some() {
        "timestamp"
    } else {
        "wall"
    };
    let passes = passes::time(&mut solver, opts);
    let frame_passes = passes::time_frames(&mut solver, &show, opts.frame_size);
    let mut result = run.result(opts, "gpu", 0, Some(adapter), timer);
    result.passes = passes;
    result.frame_passes = frame_passes;
    Ok(result)
}
