//! `dyeflow bench`: a fixed scene, timed. A centre block of dye and upward force for the
//! first 20 steps, then free flow; it reports the median step time and how well the pressure
//! solve projected (the divergence left after the final projection, relative to before).

use crate::params::ColorMode;
use crate::sim::cpu::CpuSolver;
use crate::sim::gpu::{GpuContext, GpuError, GpuOptions, GpuSolver};
use crate::sim::{Look, PressureMethod, SimConfig, Solver, Splat, SplatShape, StepParams};
use serde::Serialize;
use std::time::Instant;

/// Output size of the `frame_ms` measurement: step, colorize and readback of a 720p frame.
pub const FRAME_SIZE: (usize, usize) = (1280, 720);
/// Frames timed for `frame_ms`.
const FRAME_SAMPLES: usize = 20;

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
    /// Pressure cell updates per second: cells x iterations x projections / step time.
    pub cell_iters_per_s: f64,
    /// Median over steps of max |div| after the final projection / max |div| before it.
    pub residual_max: f64,
    /// Median over steps of RMS div after the final projection / RMS before it.
    pub residual_rms: f64,
    /// The GPU adapter (GPU runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// Median wall time of a step plus colorize plus readback of a 1280x720 frame (GPU runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_ms: Option<f64>,
    /// How `ms_per_step` was timed: "wall" (CPU clock) or "timestamp" (GPU timestamp queries).
    pub timer: &'static str,
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
    })
}

/// The scene's physics: the plugin's default knobs.
pub fn scene_params() -> StepParams {
    StepParams {
        dt: SCENE_DT_S,
        viscosity: 0.0,
        dye_diffusion: 0.0,
        velocity_dissipation: 0.2,
        dye_dissipation: 0.5,
        vorticity: 0.3,
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        0.0
    } else {
        v[((v.len() - 1) as f64 * p).round() as usize]
    }
}

/// Run the scene on the CPU solver.
pub fn run_cpu(opts: &BenchOptions) -> BenchResult {
    let cfg = config(opts);
    let mut solver = CpuSolver::new(&cfg, opts.threads);
    let threads = solver.threads();
    let params = scene_params();
    let mut times = Vec::with_capacity(opts.steps);
    let mut res_max = Vec::with_capacity(opts.steps);
    let mut res_rms = Vec::with_capacity(opts.steps);
    let mut projections = 0usize;
    for n in 0..opts.steps {
        if let Some(s) = scene_splats(n) {
            solver.inject(&[s]);
        }
        let t = Instant::now();
        let stats = solver.step(&params);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        projections += stats.projections as usize;
        if stats.div_rms_before > 0.0 {
            res_max.push(f64::from(stats.residual_max()));
            res_rms.push(f64::from(stats.residual_rms()));
        }
    }
    let ms = median(&mut times);
    let p90 = percentile(&mut times, 0.9);
    let cells = (cfg.width * cfg.height) as f64;
    let per_step_iters = projections as f64 / opts.steps.max(1) as f64 * f64::from(opts.iters);
    BenchResult {
        backend: "cpu".into(),
        size: opts.size,
        dye_size: opts.size * opts.dye_scale,
        iters: opts.iters,
        pressure: opts.pressure.name().into(),
        threads,
        steps: opts.steps,
        ms_per_step: ms,
        ms_p90: p90,
        cell_iters_per_s: if ms > 0.0 {
            cells * per_step_iters / (ms * 1e-3)
        } else {
            0.0
        },
        residual_max: median(&mut res_max),
        residual_rms: median(&mut res_rms),
        adapter: None,
        frame_ms: None,
        timer: "wall",
    }
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
    let cfg = config(opts);
    let ctx = GpuContext::new(gpu)?;
    let adapter = ctx.adapter_name();
    let mut solver = GpuSolver::new(ctx, &cfg)?;
    solver.set_measure(true);
    let params = scene_params();
    let mut times = Vec::with_capacity(opts.steps);
    let mut res_max = Vec::with_capacity(opts.steps);
    let mut res_rms = Vec::with_capacity(opts.steps);
    let mut projections = 0usize;
    for n in 0..opts.steps {
        if let Some(s) = scene_splats(n) {
            solver.inject(&[s]);
        }
        let t = Instant::now();
        let stats = solver.step(&params);
        let wall = t.elapsed().as_secs_f64() * 1e3;
        times.push(solver.last_gpu_ms().unwrap_or(wall));
        projections += stats.projections as usize;
        if stats.div_rms_before > 0.0 {
            res_max.push(f64::from(stats.residual_max()));
            res_rms.push(f64::from(stats.residual_rms()));
        }
        if let Some(e) = solver.failure() {
            return Err(GpuError::Failed {
                adapter,
                message: e,
            });
        }
    }
    // A displayed frame: step, colorize at 720p, read back (no statistics readback).
    solver.set_measure(false);
    let (fw, fh) = FRAME_SIZE;
    let mut pixels = vec![0u8; fw * fh * 4];
    let look = Look {
        color_mode: ColorMode::Dye,
        ..Look::default()
    };
    let mut frames = Vec::with_capacity(FRAME_SAMPLES);
    for _ in 0..FRAME_SAMPLES {
        let t = Instant::now();
        solver.step(&params);
        solver.render(&look, fw, fh, &mut pixels);
        frames.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let timer = if solver.last_gpu_ms().is_some() {
        "timestamp"
    } else {
        "wall"
    };
    let ms = median(&mut times);
    let cells = (cfg.width * cfg.height) as f64;
    let per_step_iters = projections as f64 / opts.steps.max(1) as f64 * f64::from(opts.iters);
    Ok(BenchResult {
        backend: "gpu".into(),
        size: opts.size,
        dye_size: opts.size * opts.dye_scale,
        iters: opts.iters,
        pressure: opts.pressure.name().into(),
        threads: 0,
        steps: opts.steps,
        ms_per_step: ms,
        ms_p90: percentile(&mut times, 0.9),
        cell_iters_per_s: if ms > 0.0 {
            cells * per_step_iters / (ms * 1e-3)
        } else {
            0.0
        },
        residual_max: median(&mut res_max),
        residual_rms: median(&mut res_rms),
        adapter: Some(adapter),
        frame_ms: Some(median(&mut frames)),
        timer,
    })
}
