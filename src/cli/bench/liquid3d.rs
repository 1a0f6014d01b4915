//! `dyeflow bench --model liquid3d`: the 3D liquid (sim::liquid3d) on a fixed scene, timed. A
//! dam break in the model's own tank for the particle count: the particles start as a block at
//! the target density's spacing against the tank's left wall, through its whole depth; after a
//! few untimed steps the run times each step and reports the median, then lets the liquid
//! settle to 5 simulated seconds and reports the mean neighbour count, the median particle's
//! density against the target and the kinetic energy left, and times the picture (splat and ray
//! march through the display pipeline) at the frame size.

use super::percentile;
use crate::cli::{Backend, BenchArgs, say, warn};
use crate::fluid::Look;
use crate::gpu::{GpuContext, GpuOptions};
use crate::sim::liquid3d::backend::LiquidBackend;
use crate::sim::liquid3d::gpu::GpuLiquid;
use crate::sim::liquid3d::model::{Liquid3dModel, tank_size};
use crate::sim::liquid3d::splat::splat;
use crate::sim::liquid3d::{Knobs, Liquid, SUBSTEP_S};
use crate::sim::model::Model;
use serde::Serialize;
use std::process::ExitCode;
use std::time::Instant;

/// Steps run before the timing starts (the block starts to fall).
const WARM_STEPS: usize = 10;
/// The settling runs at least this long, simulated seconds...
const SETTLE_S: f32 = 5.0;
/// ...and on until the kinetic energy is under this share of the released potential energy,
const SETTLED: f64 = 0.01;
/// ...for at most this long.
const SETTLE_MAX_S: f32 = 30.0;
/// Settling expected to take longer than this (seconds of wall time) is announced.
const SETTLE_NOTICE_S: f64 = 10.0;
/// Frames drawn for the picture's timing.
const FRAMES: usize = 20;

/// What to run.
#[derive(Clone, Debug)]
pub struct Liquid3dBenchOptions {
    pub particles: usize,
    /// Steps to time.
    pub steps: usize,
    /// CPU worker threads (0: one per core).
    pub threads: usize,
    /// The picture's size, width x height (0 x 0: no picture).
    pub frame_size: (usize, usize),
    /// Let the liquid settle and measure it (else the figures are of the timed steps' end).
    pub settle: bool,
}

/// What a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Liquid3dBenchResult {
    pub model: &'static str,
    pub backend: String,
    pub threads: usize,
    pub particles: usize,
    pub steps: usize,
    /// Simulated seconds per step.
    pub dt: f32,
    /// Median wall time of one step.
    pub ms_per_step: f64,
    pub ms_p90: f64,
    /// Mean number of neighbours (other particles within the smoothing radius) at the end.
    pub neighbours_mean: f64,
    /// The median particle's density against the target, (median - target) / target, once
    /// the dam break has settled: after 5 simulated seconds and once its kinetic energy is
    /// under 1 % of the released potential energy (at most 30 s).
    pub density_error: f64,
    /// The kinetic energy left then, as a share of the potential energy the fall released.
    pub kinetic_share: f64,
    /// Simulated seconds at which the figures above were taken.
    pub settled_s: f32,
    /// Median time of the picture (splat, ray march, display) at `frame_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub picture_ms: Option<f64>,
    /// Median time of the live picture (the editor's and the output window's, at most
    /// 320 x 180 rays) at `frame_size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live_ms: Option<f64>,
    /// Median time of its first part alone: the particles splatted into the volume (on the
    /// CPU; the GPU's passes are not timed apart).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume_ms: Option<f64>,
    /// The volume's voxels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume: Option<[usize; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_size: Option<(usize, usize)>,
    pub timer: &'static str,
}

/// The bench's liquid: `n` particles as a block against the left wall of the model's tank for
/// `n`, at the target density's spacing, through the whole depth.
pub fn scene(n: usize, knobs: &Knobs) -> Liquid {
    let n = n.clamp(1, crate::sim::liquid3d::MAX_PARTICLES);
    let size = tank_size(n, knobs.target_density);
    let mut liquid = Liquid::new(size);
    let spacing = crate::sim::liquid3d::spacing(knobs.target_density);
    let deep = ((size[2] / spacing) as usize).max(1);
    let tall = ((size[1] * 0.9 / spacing) as usize).max(1);
    let wide = n.div_ceil(deep * tall);
    let mut s = 0x2545_f491u32;
    let mut jitter = move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s as f32 / u32::MAX as f32 - 0.5) * 0.2 * spacing
    };
    'fill: for i in 0..wide {
        for j in 0..tall {
            for k in 0..deep {
                if liquid.len() >= n {
                    break 'fill;
                }
                let p = [i, j, k].map(|a| (a as f32 + 0.5) * spacing);
                let p = [p[0] + jitter(), p[1] + jitter(), p[2] + jitter()];
                let hue = i as f32 / wide.max(1) as f32;
                liquid.add(p, [0.0; 3], [hue, 0.5, 1.0 - hue]);
            }
        }
    }
    liquid
}

impl Liquid3dBenchResult {
    /// The result as one line for a person.
    pub fn line(&self) -> String {
        format!(
            "liquid3d {} ({} threads): {} particles, {:.3} ms/step (p90 {:.3}), {:.1} \
             neighbours; after {:.1} s density {:+.2} % of the target, kinetic {:.2} % of the \
             released{}",
            self.backend,
            self.threads,
            self.particles,
            self.ms_per_step,
            self.ms_p90,
            self.neighbours_mean,
            self.settled_s,
            100.0 * self.density_error,
            100.0 * self.kinetic_share,
            self.picture_ms
                .zip(self.frame_size)
                .map(|(ms, (w, h))| format!(
                    "; picture {ms:.2} ms at {w}x{h} ({}{:?} voxels), live {:.2} ms",
                    self.volume_ms
                        .map(|v| format!("volume {v:.2} ms, "))
                        .unwrap_or_default(),
                    self.volume.unwrap_or_default(),
                    self.live_ms.unwrap_or(0.0)
                ))
                .unwrap_or_default()
        )
    }
}

/// Run the scene on the CPU (rayon, `threads` workers), or on the GPU (`gpu`: the particles
/// and the picture; the picture's times are then wall times from the frame's encoding to its
/// pixels read back).
pub fn run(
    opts: &Liquid3dBenchOptions,
    gpu: Option<&GpuOptions>,
) -> Result<Liquid3dBenchResult, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| format!("cannot start {} threads: {e}", opts.threads))?;
    let knobs = Knobs::default();
    let scene = scene(opts.particles, &knobs);
    let start = scene.potential_energy(knobs.gravity);
    let (mut backend, name) = backend_for(gpu, scene.size())?;
    *backend.liquid_mut() = scene;
    let (mut times, timer) = pool.install(|| time_steps(&mut backend, &knobs, opts, gpu.is_some()));
    let released = |l: &Liquid| start - l.potential_energy(knobs.gravity);
    let mut done = WARM_STEPS + opts.steps;
    if opts.settle {
        let ms = percentile(&mut times.clone(), 0.5);
        pool.install(|| settle(&mut backend, &knobs, &mut done, ms, released));
    }
    if let Some(e) = backend.failure() {
        return Err(e.to_string());
    }
    let liquid = backend.liquid().clone();
    let released = released(&liquid);
    let (neighbours_mean, density_error) = pool.install(|| {
        (
            liquid.neighbours_mean(knobs.radius),
            liquid.density_error(knobs.target_density),
        )
    });
    let mut r = Liquid3dBenchResult {
        model: "liquid3d",
        backend: name,
        threads: pool.current_num_threads(),
        particles: liquid.len(),
        steps: times.len(),
        dt: SUBSTEP_S,
        ms_per_step: percentile(&mut times, 0.5),
        ms_p90: percentile(&mut times, 0.9),
        neighbours_mean,
        density_error,
        kinetic_share: if released > 0.0 {
            liquid.kinetic_energy() / released
        } else {
            0.0
        },
        settled_s: done as f32 * SUBSTEP_S,
        picture_ms: None,
        live_ms: None,
        volume_ms: None,
        volume: None,
        frame_size: None,
        timer,
    };
    let (fw, fh) = opts.frame_size;
    if fw > 0 && fh > 0 {
        let mut model = Liquid3dModel::with_backend(
            backend,
            ((256 * fw / fh).max(8), 256),
            opts.threads,
            liquid.len(),
        )
        .map_err(|e| e.to_string())?;
        time_picture(&mut r, &mut model, liquid, (fw, fh), &pool, gpu.is_none());
    }
    Ok(r)
}

/// The liquid's backend on the GPU (`gpu`) or the CPU, and its name for the table.
fn backend_for(
    gpu: Option<&GpuOptions>,
    size: [f32; 3],
) -> Result<(Box<dyn LiquidBackend>, String), String> {
    Ok(match gpu {
        Some(options) => {
            let gpu = GpuContext::new(options)
                .and_then(GpuLiquid::new)
                .map_err(|e| format!("cannot run on the GPU: {e}"))?;
            let name = format!("gpu ({})", gpu.adapter_name());
            (Box::new(gpu), name)
        }
        None => (Box::new(Liquid::new(size)), "cpu".into()),
    })
}

/// The step's times after [`WARM_STEPS`], ms each, and how they were taken: the device's
/// timestamps where it has them, else the wall clock (on the GPU, steps queued back to back:
/// the throughput).
fn time_steps(
    b: &mut Box<dyn LiquidBackend>,
    knobs: &Knobs,
    opts: &Liquid3dBenchOptions,
    on_gpu: bool,
) -> (Vec<f64>, &'static str) {
    b.step(knobs, SUBSTEP_S, 1.0, WARM_STEPS);
    b.wait();
    b.time_steps(true);
    let all = Instant::now();
    let mut times: Vec<f64> = (0..opts.steps)
        .map(|_| {
            let t = Instant::now();
            b.step(knobs, SUBSTEP_S, 1.0, 1);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    b.wait();
    let device = b.take_step_times();
    b.time_steps(false);
    if !device.is_empty() {
        (device, "timestamp")
    } else if on_gpu {
        let wall = all.elapsed().as_secs_f64() * 1e3 / opts.steps.max(1) as f64;
        times.fill(wall);
        (times, "wall")
    } else {
        (times, "wall")
    }
}

/// Steps on (`done` counts them) until the liquid has settled: at least [`SETTLE_S`] simulated
/// seconds, then until its kinetic energy is under [`SETTLED`] of the energy `released` so
/// far, at most [`SETTLE_MAX_S`]. Said on standard error first when, at `ms` a step, that
/// will take long.
fn settle(
    b: &mut Box<dyn LiquidBackend>,
    knobs: &Knobs,
    done: &mut usize,
    ms: f64,
    released: impl Fn(&Liquid) -> f64,
) {
    let [least, most] = [SETTLE_S, SETTLE_MAX_S].map(|s| (s / SUBSTEP_S).ceil() as usize);
    // Settling takes as many steps whatever --steps: say so when it will be long.
    let expected_s = least.saturating_sub(*done) as f64 * ms / 1e3;
    if expected_s > SETTLE_NOTICE_S {
        crate::cli::warn(&format!(
            "dyeflow bench: the liquid now settles for {SETTLE_S:.0} to {SETTLE_MAX_S:.0} \
             simulated seconds ({} to {} more steps, whatever --steps) before it is \
             measured: at {ms:.0} ms a step that is {} or more",
            least.saturating_sub(*done),
            most.saturating_sub(*done),
            crate::cli::render::duration_text(expected_s)
        ));
    }
    while *done < most {
        if *done >= least && done.is_multiple_of(30) {
            let l = b.liquid();
            let r = released(l);
            if r > 0.0 && l.kinetic_energy() < SETTLED * r {
                break;
            }
        }
        b.step(knobs, SUBSTEP_S, 1.0, 1);
        *done += 1;
    }
}

/// The picture's figures into `r`: the volume's splat (CPU only), a frame drawn at once and
/// one requested live, [`FRAMES`] of each, at `(fw, fh)`.
fn time_picture(
    r: &mut Liquid3dBenchResult,
    model: &mut Liquid3dModel,
    liquid: Liquid,
    (fw, fh): (usize, usize),
    pool: &rayon::ThreadPool,
    on_cpu: bool,
) {
    let knobs = Knobs::default();
    let mut vol = crate::display::volume::Volume::default();
    let voxel = model.voxel(crate::display::cpu::raymarch::Quality::RENDER.voxel);
    if on_cpu {
        let mut splats: Vec<f64> = pool.install(|| {
            (0..FRAMES)
                .map(|_| {
                    let t = Instant::now();
                    splat(&liquid, knobs.target_density, voxel, &mut vol);
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect()
        });
        r.volume_ms = Some(percentile(&mut splats, 0.5));
    }
    r.volume = Some(crate::sim::liquid3d::splat::grid(liquid.size(), voxel).0);
    model.set_liquid(liquid);
    let mut out = vec![0u8; fw * fh * 4];
    let look = Look::default();
    model.render(&look, fw, fh, &mut out);
    let mut frames: Vec<f64> = (0..FRAMES)
        .map(|_| {
            let t = Instant::now();
            model.render(&look, fw, fh, &mut out);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    r.picture_ms = Some(percentile(&mut frames, 0.5));
    let mut held = Vec::new();
    let mut live: Vec<f64> = (0..FRAMES)
        .map(|_| {
            let t = Instant::now();
            if model.request_frame(&look, fw, fh) {
                // The GPU's frame comes back later: wait for it (at most a few seconds).
                while model.take_frame(&mut held).is_none() && t.elapsed().as_secs() < 5 {
                    std::thread::yield_now();
                }
            }
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    r.live_ms = Some(percentile(&mut live, 0.5));
    r.frame_size = Some((fw, fh));
}

/// `dyeflow bench --model liquid3d`.
pub(in crate::cli) fn command(args: &BenchArgs) -> ExitCode {
    let opts = Liquid3dBenchOptions {
        particles: if args.particles == 0 {
            32_768
        } else {
            args.particles as usize
        },
        steps: args.steps as usize,
        threads: args.threads,
        frame_size: args.frame_size,
        settle: true,
    };
    let gpu = (args.backend == Backend::Gpu).then(|| GpuOptions {
        force_no_adapter: args.no_gpu,
        ..GpuOptions::default()
    });
    let r = match run(&opts, gpu.as_ref()) {
        Ok(r) => r,
        Err(e) => {
            warn(&format!("dyeflow bench: {e}."));
            return ExitCode::FAILURE;
        }
    };
    say(&if args.json {
        serde_json::to_string(&r).expect("plain struct")
    } else {
        r.line()
    });
    ExitCode::SUCCESS
}
