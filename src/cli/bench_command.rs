//! `dyeflow bench`: its arguments, and the grid's, the particle fluid's and the latency's
//! tables (the 3D liquid's is `bench::liquid3d`).

use super::bench::{self, BenchOptions, BenchResult};
use super::{Backend, ModelArg, Obstacles, Pressure, SortArg, render, say, warn};
use crate::gpu::GpuOptions;
use crate::params::BackendChoice;
use clap::Args;
use std::process::ExitCode;

#[derive(Args)]
pub(super) struct BenchArgs {
    /// Solver backend.
    #[arg(long, value_enum, default_value = "cpu")]
    pub(super) backend: Backend,
    /// The fluid to time: the grid, the particle fluid (sph: a dam break of --particles
    /// particles, 16384 unless given; the JSON reports ms_per_step, particles,
    /// neighbours_mean and density_error), or the 3D liquid (liquid3d: a dam break of
    /// --particles, 32768 unless given; after the timed steps it settles for 5 to 30
    /// simulated seconds, 300 to 1800 more steps whatever --steps, before it measures; also
    /// kinetic_share and picture_ms, the picture at --frame-size).
    #[arg(long, value_enum, default_value = "grid")]
    pub(super) model: ModelArg,
    /// The particle fluid's sort on the GPU (--model sph).
    #[arg(long, value_enum, default_value = "counting")]
    pub(super) sort: SortArg,
    /// Grid size N (N x N cells; with --latency, the height of a 16:9 grid); a
    /// comma-separated list runs each. Default: 512, or 256 with --latency.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=8192))]
    pub(super) size: Vec<u32>,
    /// Pressure iterations: sweeps for jacobi and rbgs, V-cycles for mg; a list runs each.
    #[arg(long, value_delimiter = ',', default_value = "20",
          value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub(super) iters: Vec<u32>,
    /// Pressure solver.
    #[arg(long, value_enum, default_value = "rbgs")]
    pub(super) pressure: Pressure,
    /// Steps to time.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(super) steps: u32,
    /// CPU worker threads, up to 4 per core (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub(super) threads: usize,
    /// Dye cells per simulation cell, per axis.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4))]
    pub(super) dye_scale: u32,
    /// Solid obstacles in the flow (the JSON reports solid_flux_max, and obstacles_ms: what
    /// handing the solver the mask again costs).
    #[arg(long, value_enum, default_value = "none")]
    pub(super) obstacles: Obstacles,
    /// Heat and buoyancy: the scene's block is hot and keeps rising after its push (the
    /// temperature's splat, advection and cooling, and the lift, join every step).
    #[arg(long)]
    pub(super) heat: bool,
    /// Particles seeded over the canvas, living through the run: they move every step and
    /// draw into every frame (the JSON reports particles and particles_ms, their stage alone;
    /// at most 131072 on the CPU, 1048576 on the GPU).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1_048_576))]
    pub(super) particles: u32,
    /// Streamlines: times the frame with the lines alone (the default lines: 32 per height,
    /// 16 steps; the JSON reports streamlines, their number, and streamlines_ms).
    #[arg(long)]
    pub(super) streamlines: bool,
    /// Output size WxH of the colour stage's timings (colour_ms; on the CPU also display_ms,
    /// the display pipeline's share; on the GPU colorize_gpu_ms and display_gpu_ms, from
    /// timestamp queries). With --model sph on the CPU: the frame the particles are drawn
    /// into (frame_ms: the Surface and the Discs looks); with --model liquid3d, the picture's
    /// (picture_ms).
    #[arg(long, default_value = "1280x720", value_parser = parse_frame_size)]
    pub(super) frame_size: (usize, usize),
    /// Behave as if there were no GPU (checks the error path).
    #[arg(long, hide = true)]
    pub(super) no_gpu: bool,
    /// Print one JSON object per run instead of a table row.
    #[arg(long)]
    pub(super) json: bool,
    /// Measure instead the latency from a note-on entering the audio thread to the first
    /// published frame showing its dye, through the real simulation thread.
    #[arg(long)]
    pub(super) latency: bool,
    /// With --latency: play each note into a resting engine (the fluid still, no steps),
    /// timing its wake-up too.
    #[arg(long, requires = "latency")]
    pub(super) from_rest: bool,
    /// Notes timed by --latency.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(super) trials: u32,
}

/// `WxH` (each 1 to 8192) as a frame size.
fn parse_frame_size(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("'{text}' is not a frame size; use WxH, e.g. 1920x1080 (1 to 8192 each)");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let side = |s: &str| {
        s.trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=8192).contains(n))
    };
    Ok((side(w).ok_or_else(bad)?, side(h).ok_or_else(bad)?))
}

/// A row of the bench table; `false` when standard output is gone.
fn print_row(r: &BenchResult) -> bool {
    let frame = r.frame_ms.map_or("-".to_owned(), |f| format!("{f:.3}"));
    say(&format!(
        "{:>8} {:>6} {:>7} {:>5} {:>7} {:>10.3} {:>9.3} {:>14.3e} {:>12.4} {:>12.4} {:>9}",
        r.backend,
        r.size,
        r.pressure,
        r.iters,
        r.threads,
        r.ms_per_step,
        r.ms_p90,
        r.cell_iters_per_s,
        r.residual_max,
        r.residual_rms,
        frame
    )) && r
        .adapter
        .as_ref()
        .is_none_or(|a| say(&format!("         on {a}; step timed by {}", r.timer)))
        && r.colour_ms.is_none_or(|[legacy, filmic]| {
            let gpu = match (r.colorize_gpu_ms, r.display_gpu_ms) {
                (Some(c), Some(d)) => {
                    format!("; GPU timestamps: colorize {c:.3} ms, display pipeline {d:.3} ms")
                }
                _ => String::new(),
            };
            let display = r.display_ms.map_or(String::new(), |d| {
                format!("; display pipeline {d:.3} ms of it")
            });
            say(&format!(
                "         colour stage at {}: legacy {legacy:.3} ms, filmic {filmic:.3} ms \
                 (without effects {:.3} ms){display}{gpu}",
                r.frame,
                r.colour_plain_ms.unwrap_or(0.0)
            ))
        })
        && r.particles_ms.is_none_or(|ms| {
            say(&format!(
                "         {} particles: their step stage {ms:.3} ms",
                r.particles
            ))
        })
        && r.streamlines_ms.is_none_or(|ms| {
            say(&format!(
                "         {} streamlines alone at {}: {ms:.3} ms a frame",
                r.streamlines, r.frame
            ))
        })
        && r.obstacles_ms.is_none_or(|ms| {
            say(&format!(
                "         obstacles: solid flux {:.1e}, a new mask costs {ms:.1} ms",
                r.solid_flux_max
            ))
        })
}

/// A latency stage as `p50 / p99 (max)`.
fn stage(t: &bench::StageTime) -> String {
    format!("{:.2} / {:.2} ({:.2})", t.p50_ms, t.p99_ms, t.max_ms)
}

fn latency(args: &BenchArgs) -> ExitCode {
    let gpu = GpuOptions {
        force_no_adapter: args.no_gpu,
        ..GpuOptions::default()
    };
    let sizes = if args.size.is_empty() {
        vec![256]
    } else {
        args.size.clone()
    };
    for size in sizes {
        let opts = bench::LatencyOptions {
            size: size as usize,
            backend: match args.backend {
                Backend::Cpu => BackendChoice::Cpu,
                Backend::Gpu => BackendChoice::Gpu,
            },
            trials: args.trials as usize,
            gpu: gpu.clone(),
            from_rest: args.from_rest,
        };
        let r = bench::run_latency(&opts);
        let printed = if args.json {
            say(&serde_json::to_string(&r).expect("plain struct"))
        } else {
            say(&format!(
                "{} ({}), {}x{} grid at {} Hz, {} frames{}: note to screen p50 {:.2} ms, \
                 p99 {:.2} ms (min {:.2}, max {:.2}) over {} notes, {} missed",
                r.backend,
                r.device,
                size * 16 / 9,
                size,
                r.sim_rate_hz,
                r.frame,
                if r.from_rest { ", from rest" } else { "" },
                r.latency_p50_ms,
                r.latency_p99_ms,
                r.latency_min_ms,
                r.latency_max_ms,
                r.trials,
                r.missed
            )) && say(&format!(
                "  stages p50 / p99 (max) ms: inject {}, step {}, picture {}, publish {}{}",
                stage(&r.stages.inject),
                stage(&r.stages.step),
                stage(&r.stages.picture),
                stage(&r.stages.publish),
                if r.stages.untraced > 0 {
                    format!(" ({} notes not traced)", r.stages.untraced)
                } else {
                    String::new()
                }
            ))
        };
        if !printed {
            // The reader went away (`| head -1`): stop quietly, as Unix tools do.
            return ExitCode::SUCCESS;
        }
        if r.missed > 0 {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

pub(super) fn bench(args: BenchArgs) -> ExitCode {
    if args.threads > render::max_threads() {
        warn(&format!(
            "dyeflow bench: --threads {} is out of range; use 1 to {} ({} per core), or 0 for one \
             per core",
            args.threads,
            render::max_threads(),
            render::MAX_THREADS_PER_CORE
        ));
        return ExitCode::from(2);
    }
    if args.latency {
        return latency(&args);
    }
    match args.model {
        ModelArg::Sph => bench_sph(&args),
        ModelArg::Liquid3d => bench::liquid3d::command(&args),
        ModelArg::Grid => bench_grid(&args),
    }
}

/// `dyeflow bench` on the grid: a row (or a line of JSON) per size and iteration count.
fn bench_grid(args: &BenchArgs) -> ExitCode {
    let sizes = if args.size.is_empty() {
        vec![512]
    } else {
        args.size.clone()
    };
    if !args.json
        && !say(&format!(
            "{:>8} {:>6} {:>7} {:>5} {:>7} {:>10} {:>9} {:>14} {:>12} {:>12} {:>9}",
            "backend",
            "size",
            "method",
            "iters",
            "threads",
            "ms/step",
            "p90 ms",
            "cell-iter/s",
            "resid max",
            "resid rms",
            "frame ms"
        ))
    {
        return ExitCode::SUCCESS;
    }
    let gpu = GpuOptions {
        force_no_adapter: args.no_gpu,
        ..GpuOptions::default()
    };
    for &size in &sizes {
        for &iters in &args.iters {
            let opts = BenchOptions {
                size: size as usize,
                iters,
                pressure: args.pressure.into(),
                steps: args.steps as usize,
                threads: args.threads,
                dye_scale: args.dye_scale as usize,
                obstacles: args.obstacles.into(),
                heat: args.heat,
                particles: args.particles as usize,
                streamlines: args.streamlines,
                frame_size: args.frame_size,
            };
            let r = match args.backend {
                Backend::Cpu => bench::run_cpu(&opts).map_err(|e| {
                    warn(&format!("dyeflow bench: {e}."));
                    ExitCode::FAILURE
                }),
                Backend::Gpu => bench::run_gpu(&opts, &gpu).map_err(|e| {
                    warn(&format!("dyeflow bench: cannot run on the GPU: {e}."));
                    ExitCode::from(2)
                }),
            };
            let r = match r {
                Ok(r) => r,
                Err(code) => return code,
            };
            let printed = if args.json {
                say(&serde_json::to_string(&r).expect("plain struct"))
            } else {
                print_row(&r)
            };
            if !printed {
                // The reader went away (`| head -1`): stop quietly, as Unix tools do.
                return ExitCode::SUCCESS;
            }
        }
    }
    ExitCode::SUCCESS
}

/// `dyeflow bench --model sph`.
fn bench_sph(args: &BenchArgs) -> ExitCode {
    use crate::cli::bench::sph::{self, SphBenchOptions};
    let opts = SphBenchOptions {
        particles: if args.particles == 0 {
            16_384
        } else {
            args.particles as usize
        },
        steps: args.steps as usize,
        threads: args.threads,
        sort: args.sort.into(),
        frame_size: args.frame_size,
    };
    let r = match args.backend {
        Backend::Cpu => match sph::run_cpu(&opts) {
            Ok(r) => r,
            Err(e) => {
                warn(&format!("dyeflow bench: {e}."));
                return ExitCode::FAILURE;
            }
        },
        Backend::Gpu => {
            let gpu = GpuOptions {
                force_no_adapter: args.no_gpu,
                ..GpuOptions::default()
            };
            match sph::run_gpu(&opts, &gpu) {
                Ok(r) => r,
                Err(e) => {
                    warn(&format!("dyeflow bench: cannot run on the GPU: {e}."));
                    return ExitCode::from(2);
                }
            }
        }
    };
    let line = if args.json {
        serde_json::to_string(&r).expect("plain struct")
    } else {
        format!(
            "sph {} ({} sort, {} threads): {} particles, {:.3} ms/step (p90 {:.3}{}), {:.1} \
             neighbours, density {:+.1} % of the target",
            r.backend,
            r.sort,
            r.threads,
            r.particles,
            r.ms_per_step,
            r.ms_p90,
            r.wall_ms_per_step
                .map(|w| format!(", {w:.3} back to back"))
                .unwrap_or_default(),
            r.neighbours_mean,
            100.0 * r.density_error
        )
    };
    say(&line);
    ExitCode::SUCCESS
}
