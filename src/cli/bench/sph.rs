//! `dyeflow bench --model sph`: the particle fluid (sim::sph) on a fixed scene, timed. A dam
//! break: the particles start as a block at the target density's spacing in the lower left of
//! a 16:9 box sized so that they fill its left half to 80 % of its height; after a few
//! untimed steps the run times each step (sort, densities, forces, move) and reports the median,
//! the mean neighbour count and how far the bulk density is from the target at the end. On the
//! CPU it then times drawing the particles into a frame, in both looks.

use super::percentile;
use crate::fluid::{LiquidStyle, Look};
use crate::gpu::{GpuContext, GpuError, GpuOptions};
use crate::sim::model::Model;
use crate::sim::sph::gpu::{GpuFluid, Sort};
use crate::sim::sph::model::SphModel;
use crate::sim::sph::{Fluid, Knobs, SUBSTEP_S};
use serde::Serialize;
use std::time::Instant;

/// Steps run before the timing starts (pipelines warm, the block starts to fall).
const WARM_STEPS: usize = 10;

/// What to run.
#[derive(Clone, Debug)]
pub struct SphBenchOptions {
    pub particles: usize,
    /// Steps to time.
    pub steps: usize,
    /// CPU worker threads (0: one per core).
    pub threads: usize,
    /// The GPU's sort.
    pub sort: Sort,
    /// The frame the CPU times drawing the liquid into (both looks), width x height.
    pub frame_size: (usize, usize),
}

/// What a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct SphBenchResult {
    pub model: &'static str,
    pub backend: String,
    /// The GPU's sort ("counting" or "bitonic"; the CPU always counts).
    pub sort: &'static str,
    pub threads: usize,
    pub particles: usize,
    pub steps: usize,
    /// Simulated seconds per step.
    pub dt: f32,
    /// Median time of one step: wall time on the CPU; on the GPU from timestamp queries when
    /// the adapter has them (otherwise `wall_ms_per_step`).
    pub ms_per_step: f64,
    pub ms_p90: f64,
    /// GPU: wall time per step of the timed steps, submitted back to back and waited for
    /// once (what a frame's sub-steps cost, submission included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_ms_per_step: Option<f64>,
    /// Mean number of neighbours (other particles within the smoothing radius) at the end.
    pub neighbours_mean: f64,
    /// The median particle's density at the end against the target: (median - target) /
    /// target (the median leaves out the thin surface layer, whose density is lower).
    pub density_error: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    pub timer: &'static str,
    /// CPU: median time to draw the particles at the end into a `frame_size` frame through
    /// the display pipeline, the Surface look and the Discs look (the model's render with the
    /// plain look).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_ms: Option<[f64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_size: Option<(usize, usize)>,
}

/// Frames drawn for each look's timing.
const FRAMES: usize = 20;

/// The bench's fluid: the dam break for `n` particles.
pub fn scene(n: usize, knobs: &Knobs) -> Fluid {
    let n = n.min(crate::sim::sph::MAX_PARTICLES);
    let spacing = 1.0 / knobs.target_density.max(1.0).sqrt();
    // The block is half the box wide and 80 % of it tall: 0.4 of a 16:9 box.
    let area = n as f32 * spacing * spacing / 0.4;
    let height = (area / (16.0 / 9.0)).sqrt();
    let width = height * 16.0 / 9.0;
    let mut fluid = Fluid::with_size(width, height);
    let rows = (0.8 * height / spacing).floor().max(1.0) as usize;
    let cols = n.div_ceil(rows);
    let mut s = 0x2545_f491u32;
    let mut jitter = move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s as f32 / u32::MAX as f32 - 0.5) * 0.2 * spacing
    };
    for k in 0..n {
        let (i, j) = (k / rows, k % rows);
        let p = [
            (i as f32 + 0.5) * spacing + jitter(),
            (j as f32 + 0.5) * spacing + jitter(),
        ];
        let hue = i as f32 / cols.max(1) as f32;
        fluid.add(p, [0.0; 2], [hue, 0.5, 1.0 - hue]);
    }
    fluid
}

fn result(
    opts: &SphBenchOptions,
    backend: &str,
    threads: usize,
    fluid: &Fluid,
    mut times: Vec<f64>,
) -> SphBenchResult {
    let knobs = Knobs::default();
    SphBenchResult {
        model: "sph",
        backend: backend.into(),
        sort: match (backend, opts.sort) {
            ("gpu", Sort::Bitonic) => "bitonic",
            _ => "counting",
        },
        threads,
        particles: fluid.len(),
        steps: times.len(),
        dt: SUBSTEP_S,
        ms_per_step: percentile(&mut times, 0.5),
        ms_p90: percentile(&mut times, 0.9),
        wall_ms_per_step: None,
        neighbours_mean: fluid.neighbours_mean(knobs.radius),
        density_error: fluid.density_error(knobs.target_density),
        adapter: None,
        timer: "wall",
        frame_ms: None,
        frame_size: None,
    }
}

/// Run the scene on the CPU reference (rayon, `threads` workers).
pub fn run_cpu(opts: &SphBenchOptions) -> Result<SphBenchResult, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| format!("cannot start {} threads: {e}", opts.threads))?;
    let knobs = Knobs::default();
    let mut fluid = scene(opts.particles, &knobs);
    let times = pool.install(|| {
        for _ in 0..WARM_STEPS {
            fluid.step(&knobs, SUBSTEP_S);
        }
        (0..opts.steps)
            .map(|_| {
                let t = Instant::now();
                fluid.step(&knobs, SUBSTEP_S);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect::<Vec<_>>()
    });
    let threads = pool.current_num_threads();
    let mut r = pool.install(|| result(opts, "cpu", threads, &fluid, times));
    let (fw, fh) = opts.frame_size;
    if fw > 0 && fh > 0 {
        // The model's picture grid: the frame's shape, 256 rows (the editor's default).
        let cells = ((256 * fw / fh).max(8), 256);
        let mut model = SphModel::new(cells, opts.threads, crate::sim::sph::MAX_PARTICLES)
            .map_err(|e| e.to_string())?;
        model.set_fluid(fluid);
        let mut out = vec![0u8; fw * fh * 4];
        let mut time = |liquid: LiquidStyle| {
            let look = Look {
                liquid,
                ..Look::default()
            };
            model.render(&look, fw, fh, &mut out);
            let mut times: Vec<f64> = (0..FRAMES)
                .map(|_| {
                    let t = Instant::now();
                    model.render(&look, fw, fh, &mut out);
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            percentile(&mut times, 0.5)
        };
        r.frame_ms = Some([time(LiquidStyle::Surface), time(LiquidStyle::Discs)]);
        r.frame_size = Some((fw, fh));
    }
    Ok(r)
}

/// Run the scene on the GPU.
pub fn run_gpu(opts: &SphBenchOptions, gpu: &GpuOptions) -> Result<SphBenchResult, GpuError> {
    let ctx = GpuContext::new(gpu)?;
    let adapter = ctx.adapter_name();
    let knobs = Knobs::default();
    let mut gpu = GpuFluid::new(ctx);
    gpu.set_sort(opts.sort);
    gpu.upload(&scene(opts.particles, &knobs));
    for _ in 0..WARM_STEPS {
        gpu.step(&knobs, SUBSTEP_S)?;
    }
    gpu.wait();
    // Back to back, one wait: the throughput; each step's own time from its timestamps.
    gpu.set_timing(true);
    let t = Instant::now();
    for _ in 0..opts.steps {
        gpu.step(&knobs, SUBSTEP_S)?;
    }
    gpu.wait();
    let wall = t.elapsed().as_secs_f64() * 1e3 / opts.steps.max(1) as f64;
    let mut times = gpu.take_gpu_times();
    let timer = if times.is_empty() {
        times = vec![wall; opts.steps];
        "wall"
    } else {
        "timestamp"
    };
    let mut fluid = Fluid::default();
    gpu.download(&mut fluid);
    let mut r = result(opts, "gpu", 0, &fluid, times);
    r.wall_ms_per_step = Some(wall);
    r.adapter = Some(adapter);
    r.timer = timer;
    Ok(r)
}
