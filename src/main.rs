//! The `dyeflow` command line.

use clap::{Args, Parser, Subcommand, ValueEnum};
use dyeflow::bench::{self, BenchOptions, BenchResult};
use dyeflow::params::BackendChoice;
use dyeflow::render;
use dyeflow::sim::PressureMethod;
use dyeflow::sim::gpu::GpuOptions;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Parser)]
#[command(name = "dyeflow", version, about = "Dyeflow: music in, fluid out")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Backend {
    Cpu,
    Gpu,
}

#[derive(Clone, Copy, ValueEnum)]
enum Pressure {
    /// Jacobi iterations.
    Jacobi,
    /// Red-black Gauss-Seidel sweeps.
    Rbgs,
    /// Multigrid V-cycles.
    Mg,
}

impl From<Pressure> for PressureMethod {
    fn from(p: Pressure) -> Self {
        match p {
            Pressure::Jacobi => PressureMethod::Jacobi,
            Pressure::Rbgs => PressureMethod::RbGs,
            Pressure::Mg => PressureMethod::Multigrid,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Render music to a fluid video, offline and deterministically: a Standard MIDI File
    /// and/or a WAV drive the same mapping and simulation as the plugin. With neither, the
    /// built-in demo.
    Render(RenderArgs),
    /// Time the solver on a fixed scene (a centre block of dye and force for 20 steps, then
    /// free flow) and report ms/step and the divergence left after projection.
    Bench(BenchArgs),
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RenderBackend {
    /// The GPU if one works, else the CPU.
    Auto,
    Gpu,
    Cpu,
}

#[derive(Args)]
struct RenderArgs {
    /// Standard MIDI File (type 0 or 1) to play into the fluid.
    #[arg(long, value_name = "FILE.mid")]
    midi: Option<PathBuf>,
    /// WAV file (16/24-bit integer or 32-bit float, mono or stereo) whose level and onsets
    /// stir the fluid; muxed into .mp4/.webm output.
    #[arg(long, value_name = "FILE.wav")]
    audio: Option<PathBuf>,
    /// Output: a directory (PNG frames; needs no other tool), .gif, or .mp4/.webm (via
    /// ffmpeg).
    #[arg(long, value_name = "PATH", default_value = render::DEFAULT_OUT)]
    out: PathBuf,
    /// Frame size in pixels, 16 to 7680 per side.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size)]
    size: (u32, u32),
    /// Frames per second, 1 to 240.
    #[arg(long, value_name = "N", default_value_t = 60)]
    fps: u32,
    /// Seconds to render (default: to the end of the music).
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    seconds: Option<f64>,
    /// Where in the music to start, in seconds (the fluid before it is simulated, not shown).
    #[arg(
        long,
        value_name = "S",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    start: f64,
    /// Solver backend.
    #[arg(long, value_enum, default_value = "auto")]
    backend: RenderBackend,
    /// Simulation grid height in cells: 128, 256, 512, 1024 or 2048 (default: the preset's,
    /// else 256).
    #[arg(long, value_name = "N")]
    sim: Option<u32>,
    /// Dye grid refinement over the simulation grid: 1, 2 or 4 (default: the preset's, else 2).
    #[arg(long, value_name = "N")]
    dye: Option<u32>,
    /// Parameter set in the plugin's state format (JSON).
    #[arg(long, value_name = "FILE")]
    preset: Option<PathBuf>,
    /// CPU solver threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("'{s}' is not a size; write WIDTHxHEIGHT, e.g. 1280x720"))?;
    let side = |v: &str| -> Result<u32, String> {
        let n: u32 = v
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a size; write WIDTHxHEIGHT, e.g. 1280x720"))?;
        let (lo, hi) = render::SIZE_RANGE;
        if !(lo..=hi).contains(&n) {
            return Err(format!(
                "{n} pixels is out of range; each side must be {lo} to {hi}"
            ));
        }
        Ok(n)
    };
    Ok((side(w)?, side(h)?))
}

fn render_command(args: RenderArgs) -> ExitCode {
    let opts = render::RenderOptions {
        midi: args.midi,
        audio: args.audio,
        out: args.out,
        width: args.size.0,
        height: args.size.1,
        fps: args.fps,
        seconds: args.seconds,
        start_s: args.start,
        backend: match args.backend {
            RenderBackend::Auto => BackendChoice::Auto,
            RenderBackend::Gpu => BackendChoice::Gpu,
            RenderBackend::Cpu => BackendChoice::Cpu,
        },
        sim: args.sim,
        dye: args.dye,
        preset: args.preset,
        progress: !args.quiet,
        cpu_threads: args.threads,
    };
    // Ctrl-C ends the render cleanly: the frames so far stay, and a GIF or video is closed
    // properly. A second Ctrl-C is not caught twice: the handler only sets the flag.
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::Relaxed));
    }
    if opts.midi.is_none() && opts.audio.is_none() {
        eprintln!("Rendering {}.", render::demo::describe());
    }
    match render::render(&opts, &stop) {
        Ok(s) => {
            let video_s = s.frames as f64 / f64::from(s.fps);
            println!(
                "{} {} frames ({video_s:.2} s at {} fps, {}x{}) in {:.2} s on {}: {:.1} fps, \
                 {:.2}x real time.",
                if s.interrupted {
                    "Interrupted after"
                } else {
                    "Rendered"
                },
                s.frames,
                s.fps,
                s.width,
                s.height,
                s.wall_s,
                s.backend,
                s.achieved_fps(),
                video_s / s.wall_s.max(1e-9),
            );
            println!("Wrote {}", s.output);
            if s.dropped_events > 0 {
                println!(
                    "Note: {} events were dropped (more than 65 536 in one step).",
                    s.dropped_events
                );
            }
            for note in &s.notes {
                println!("Note: {note}");
            }
            if s.interrupted {
                ExitCode::from(130)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("dyeflow render: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

#[derive(Args)]
struct BenchArgs {
    /// Solver backend.
    #[arg(long, value_enum, default_value = "cpu")]
    backend: Backend,
    /// Grid size N (N x N cells; with --latency, the height of a 16:9 grid); a
    /// comma-separated list runs each. Default: 512, or 256 with --latency.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=8192))]
    size: Vec<u32>,
    /// Pressure iterations: sweeps for jacobi and rbgs, V-cycles for mg; a list runs each.
    #[arg(long, value_delimiter = ',', default_value = "20",
          value_parser = clap::value_parser!(u32).range(1..=10000))]
    iters: Vec<u32>,
    /// Pressure solver.
    #[arg(long, value_enum, default_value = "rbgs")]
    pressure: Pressure,
    /// Steps to time.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    steps: u32,
    /// CPU worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Dye cells per simulation cell, per axis.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4))]
    dye_scale: u32,
    /// Behave as if there were no GPU (checks the error path).
    #[arg(long, hide = true)]
    no_gpu: bool,
    /// Print one JSON object per run instead of a table row.
    #[arg(long)]
    json: bool,
    /// Measure instead the latency from a note-on entering the audio thread to the first
    /// published frame showing its dye, through the real simulation thread.
    #[arg(long)]
    latency: bool,
    /// With --latency: play each note into a resting engine (the fluid still, no steps),
    /// timing its wake-up too.
    #[arg(long, requires = "latency")]
    from_rest: bool,
    /// Notes timed by --latency.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    trials: u32,
}

fn print_row(r: &BenchResult) {
    let frame = r.frame_ms.map_or("-".to_owned(), |f| format!("{f:.3}"));
    println!(
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
    );
    if let Some(a) = &r.adapter {
        println!("         on {a}; step timed by {}", r.timer);
    }
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
        if args.json {
            println!("{}", serde_json::to_string(&r).expect("plain struct"));
        } else {
            println!(
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
            );
        }
        if r.missed > 0 {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

fn bench(args: BenchArgs) -> ExitCode {
    if args.latency {
        return latency(&args);
    }
    let sizes = if args.size.is_empty() {
        vec![512]
    } else {
        args.size.clone()
    };
    if !args.json {
        println!(
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
        );
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
            };
            let r = match args.backend {
                Backend::Cpu => match bench::run_cpu(&opts) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("dyeflow bench: {e}.");
                        return ExitCode::FAILURE;
                    }
                },
                Backend::Gpu => match bench::run_gpu(&opts, &gpu) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("dyeflow bench: cannot run on the GPU: {e}.");
                        return ExitCode::from(2);
                    }
                },
            };
            if args.json {
                println!("{}", serde_json::to_string(&r).expect("plain struct"));
            } else {
                print_row(&r);
            }
        }
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Bench(args) => bench(args),
        Command::Render(args) => render_command(args),
    }
}
