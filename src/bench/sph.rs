//! `dyeflow bench --model sph`: the particle fluid (sim::sph) on a fixed scene, timed. A dam
//! break: the particles start as a block at the target density's spacing in the lower left of
//! a 16:9 box sized so that they fill its left half to 80 % of its height; after a few
//! untimed steps the run times each step (sort, densities, forces, move) and reports the median,
//! the mean neighbour count and how far the bulk density is from the target at the end.

use crate::sim::gpu::{GpuContext, GpuError, GpuOptions};
use crate::sim::sph::gpu::{GpuFluid, Sort};
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
}

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

fn percentile(times: &mut [f64], q: f64) -> f64 {
    times.sort_by(f64::total_cmp);
    times
        .get(((times.len() as f64 - 1.0) * q).round() as usize)
        .copied()
        .unwrap_or(0.0)
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
    Ok(pool.install(|| result(opts, "cpu", threads, &fluid, times)))
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
