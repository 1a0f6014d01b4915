//! The `dyeflow` command line (the `cli` feature): argument parsing, `dyeflow render`
//! ([`render`]: music, captures and the demo to frames, GIF or video) and `dyeflow bench`
//! ([`bench`]). `src/main.rs` only calls [`main`]; hosts never load any of it.

pub mod bench;
pub mod render;

use crate::gpu::GpuOptions;
use crate::params::BackendChoice;
use crate::sim::PressureMethod;
use bench::{BenchOptions, BenchResult};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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

/// How streamlines show (`fluid::StreamlineMode`).
#[derive(Clone, Copy, ValueEnum)]
enum StreamlinesArg {
    Off,
    Overlay,
    Alone,
}

impl From<StreamlinesArg> for crate::fluid::StreamlineMode {
    fn from(a: StreamlinesArg) -> Self {
        match a {
            StreamlinesArg::Off => Self::Off,
            StreamlinesArg::Overlay => Self::Overlay,
            StreamlinesArg::Alone => Self::Alone,
        }
    }
}

/// Which fluid `dyeflow bench` times.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ModelArg {
    /// The grid fluid (stable fluids).
    Grid,
    /// The particle fluid (SPH).
    Sph,
    /// The 3D liquid (SPH in 3D in a tank, ray-marched).
    Liquid3d,
}

/// The particle fluid's GPU sort (`sim::sph::gpu::Sort`).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SortArg {
    /// Counting sort: cell counts, a prefix sum, a scatter.
    Counting,
    /// Bitonic merge sort (as in Lague's source).
    Bitonic,
}

impl From<SortArg> for crate::sim::sph::gpu::Sort {
    fn from(a: SortArg) -> Self {
        match a {
            SortArg::Counting => Self::Counting,
            SortArg::Bitonic => Self::Bitonic,
        }
    }
}

/// A built-in obstacle layout (`sim::obstacles::Layout`).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Obstacles {
    /// No obstacles.
    None,
    /// A disc in the centre.
    Disc,
    /// Five pillars across the middle.
    Pillars,
    /// Three walls with alternating gaps.
    Maze,
    /// A ring with two openings.
    Ring,
}

impl From<Obstacles> for crate::sim::obstacles::Layout {
    fn from(o: Obstacles) -> Self {
        use crate::sim::obstacles::Layout;
        match o {
            Obstacles::None => Layout::None,
            Obstacles::Disc => Layout::Disc,
            Obstacles::Pillars => Layout::Pillars,
            Obstacles::Maze => Layout::Maze,
            Obstacles::Ring => Layout::Ring,
        }
    }
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
    /// Render music to a fluid video, offline and deterministically.
    ///
    /// A Standard MIDI File and/or a WAV drive the same mapping and simulation as the plugin;
    /// with neither, the built-in demo. Bad input stops with one sentence and exit code 2
    /// before any output is written; Ctrl-C (or SIGTERM, SIGHUP) stops cleanly.
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
    /// WAV file (8/16/24/32-bit integer or 32-bit float, mono or stereo, 1000 to 768000 Hz,
    /// any length) whose
    /// level and onsets stir the fluid; muxed into .mp4/.webm output. With --capture, the
    /// bounced audio: only muxed, starting at the capture's first sample.
    #[arg(long, value_name = "FILE.wav")]
    audio: Option<PathBuf>,
    /// A bounce capture the plugin recorded while the host rendered offline (in
    /// ~/Dyeflow/captures, on Windows and macOS Documents/Dyeflow/captures, or
    /// DYEFLOW_CAPTURE_DIR): replays exactly the fluid the plugin
    /// computed, its parameters and automation included, at any size and frame rate.
    #[arg(long, value_name = "FILE.dyeflow-capture")]
    capture: Option<PathBuf>,
    /// Output: a directory (PNG frames; needs no other tool), .gif, or .mp4/.webm (via
    /// ffmpeg).
    #[arg(long, value_name = "PATH", default_value = render::DEFAULT_OUT)]
    out: PathBuf,
    /// Frame size in pixels, 16 to 7680 per side.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size,
          allow_hyphen_values = true)]
    size: (u32, u32),
    /// Frames per second, 1 to 240.
    #[arg(long, value_name = "N", default_value = "60", value_parser = parse_fps,
          allow_hyphen_values = true)]
    fps: u32,
    /// Seconds to render (default: to the end of the music).
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    seconds: Option<f64>,
    /// Where in the music to start, in seconds (the fluid before it is simulated, not shown).
    #[arg(
        long,
        value_name = "S",
        default_value_t = 0.0,
        allow_hyphen_values = true
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
    #[arg(long, value_name = "FILE|NAME", help = preset_help())]
    preset: Option<PathBuf>,
    /// Obstacles: a built-in layout (none, disc, pillars, maze, ring) or a PNG image scaled
    /// to the simulation grid (white, or opaque where it has transparency, is solid). Over
    /// the preset's.
    #[arg(long, value_name = "LAYOUT|MASK.png")]
    obstacles: Option<PathBuf>,
    /// Streamlines (the flow's lines, coloured by speed): off, overlay (over the picture) or
    /// alone (on black). Over the preset's.
    #[arg(long, value_enum, value_name = "MODE")]
    streamlines: Option<StreamlinesArg>,
    /// CPU solver threads, up to 4 per core (default: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// No progress (a bar in a terminal, else a line every few seconds on standard error).
    #[arg(long)]
    quiet: bool,
    /// Print figures of the picture (mean luma, bright, clipped and lit shares, saturation)
    /// over the last three quarters of the frames.
    #[arg(long)]
    stats: bool,
    /// The fluid, over the preset's: the grid (dye in air), sph (a liquid of particles) or
    /// liquid3d (a 3D liquid in a tank).
    #[arg(long, value_enum)]
    model: Option<ModelArg>,
    /// How a video is encoded. PNG frames and GIFs are the same at every quality.
    #[arg(long, value_enum, default_value = "good")]
    quality: render::files::Quality,
}

/// `--preset`'s help, naming every factory preset.
fn preset_help() -> String {
    format!(
        "Parameter set: a preset file in the plugin's state format (JSON), or the name of a \
         factory preset: {}",
        crate::preset::factory::names()
    )
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("'{s}' is not a size; write WIDTHxHEIGHT, e.g. 1280x720"))?;
    let side = |v: &str| -> Result<u32, String> {
        let n: i64 = v
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a size; write WIDTHxHEIGHT, e.g. 1280x720"))?;
        let (lo, hi) = render::SIZE_RANGE;
        if !(i64::from(lo)..=i64::from(hi)).contains(&n) {
            return Err(format!(
                "{n} pixels is out of range; each side must be {lo} to {hi}"
            ));
        }
        Ok(n as u32)
    };
    Ok((side(w)?, side(h)?))
}

fn parse_fps(s: &str) -> Result<u32, String> {
    let (lo, hi) = render::FPS_RANGE;
    let out_of_range = || format!("{s} is out of range; use {lo} to {hi} frames per second");
    let n: i64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a whole number of frames per second"))?;
    if !(i64::from(lo)..=i64::from(hi)).contains(&n) {
        return Err(out_of_range());
    }
    Ok(n as u32)
}

/// A line on standard output. A reader that went away (`dyeflow ... | head -1`) is not an
/// error: the work is done (render) or no longer wanted (bench), and nothing panics.
fn say(text: &str) -> bool {
    use std::io::Write;
    writeln!(std::io::stdout().lock(), "{text}").is_ok()
}

/// A line on standard error, where a closed stream is ignored too.
fn warn(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// The signal that stopped a render (0: none), for its exit code.
static SIGNAL: AtomicUsize = AtomicUsize::new(0);

/// Ctrl-C (SIGINT), SIGTERM and SIGHUP end a render cleanly: the handler only raises `stop`,
/// counts the request in `stops` and records which signal came; the render notices within a
/// step, finishes what it has into a valid output, removes its temporary files, and exits with
/// 128 + the signal. A second one while a video is being finished abandons it.
fn install_stop_signals(stop: &Arc<AtomicBool>, stops: &render::files::StopRequests) {
    #[cfg(unix)]
    let signals = [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ];
    #[cfg(not(unix))]
    let signals = [signal_hook::consts::SIGINT];
    for signal in signals {
        let _ = signal_hook::flag::register(signal, stop.clone());
        let stops = stops.clone();
        // SAFETY: the action only adds to and stores into atomics, which is
        // async-signal-safe, and allocates nothing.
        let _ = unsafe {
            signal_hook::low_level::register(signal, move || {
                stops.request();
                SIGNAL.store(signal as usize, Ordering::Relaxed);
            })
        };
    }
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
        obstacles: args.obstacles,
        streamlines: args.streamlines.map(Into::into),
        progress: !args.quiet,
        cpu_threads: args.threads,
        stats: args.stats,
        fluid: args.model.map(|m| match m {
            ModelArg::Grid => crate::params::FluidChoice::Grid,
            ModelArg::Sph => crate::params::FluidChoice::Particles,
            ModelArg::Liquid3d => crate::params::FluidChoice::Liquid3d,
        }),
        capture: args.capture,
        quality: args.quality,
        stops: render::files::StopRequests::default(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    install_stop_signals(&stop, &opts.stops);
    let demo = opts.midi.is_none() && opts.audio.is_none() && opts.capture.is_none();
    // Only once the arguments and inputs are checked: bad input gets one sentence, alone.
    let mut banner = || {
        if demo && !args.quiet {
            warn(&format!("Rendering {}.", render::demo::describe()));
        }
    };
    match render::render_with(&opts, &stop, &mut banner) {
        Ok(s) => {
            let video_s = s.frames as f64 / f64::from(s.fps);
            match &s.output {
                Some(output) => {
                    say(&format!(
                        "{} {} frame{} ({video_s:.2} s at {} fps, {}x{}) in {:.2} s on {}: {:.2} \
                         s loading and pre-roll, then {:.1} fps, {:.2}x real time.",
                        if s.interrupted {
                            "Interrupted after"
                        } else {
                            "Rendered"
                        },
                        s.frames,
                        if s.frames == 1 { "" } else { "s" },
                        s.fps,
                        s.width,
                        s.height,
                        s.wall_s,
                        s.backend,
                        s.setup_s,
                        s.achieved_fps(),
                        video_s / s.render_s().max(1e-9),
                    ));
                    say(&format!("Wrote {output}"));
                }
                None => {
                    say(&format!(
                        "Interrupted after {:.2} s, before the first frame: nothing was written \
                         (an earlier output at {} is unchanged).",
                        s.wall_s,
                        opts.out.display()
                    ));
                }
            }
            if s.dropped_events > 0 {
                say(&format!(
                    "Note: {} events were dropped (more than 65 536 in one step).",
                    s.dropped_events
                ));
            }
            for note in &s.notes {
                say(&format!("Note: {note}"));
            }
            if let Some(p) = &s.picture {
                say(&format!(
                    "Picture ({} of {} frames, the last three quarters): {}",
                    p.frames,
                    s.frames,
                    p.line()
                ));
            }
            if s.interrupted {
                interrupted_code()
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            warn(&format!("dyeflow render: {e}"));
            // Abandoned on a second stop: the signal's code, as for any interrupted render.
            if matches!(
                e,
                render::RenderError::Ffmpeg(render::FfmpegFailure::Interrupted { .. })
            ) {
                return interrupted_code();
            }
            ExitCode::from(e.exit_code())
        }
    }
}

/// The exit code of a render a signal stopped: 128 + the signal (SIGINT when none was
/// recorded).
fn interrupted_code() -> ExitCode {
    let signal = SIGNAL.load(Ordering::Relaxed);
    ExitCode::from(128 + if signal > 0 { signal as u8 } else { 2 })
}

#[derive(Args)]
struct BenchArgs {
    /// Solver backend.
    #[arg(long, value_enum, default_value = "cpu")]
    backend: Backend,
    /// The fluid to time: the grid, the particle fluid (sph: a dam break of --particles
    /// particles, 16384 unless given; the JSON reports ms_per_step, particles,
    /// neighbours_mean and density_error), or the 3D liquid (liquid3d: a dam break of
    /// --particles, 32768 unless given; after the timed steps it settles for 5 to 30
    /// simulated seconds, 300 to 1800 more steps whatever --steps, before it measures; also
    /// kinetic_share and picture_ms, the picture at --frame-size).
    #[arg(long, value_enum, default_value = "grid")]
    model: ModelArg,
    /// The particle fluid's sort on the GPU (--model sph).
    #[arg(long, value_enum, default_value = "counting")]
    sort: SortArg,
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
    /// CPU worker threads, up to 4 per core (default: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Dye cells per simulation cell, per axis.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4))]
    dye_scale: u32,
    /// Solid obstacles in the flow (the JSON reports solid_flux_max, and obstacles_ms: what
    /// handing the solver the mask again costs).
    #[arg(long, value_enum, default_value = "none")]
    obstacles: Obstacles,
    /// Heat and buoyancy: the scene's block is hot and keeps rising after its push (the
    /// temperature's splat, advection and cooling, and the lift, join every step).
    #[arg(long)]
    heat: bool,
    /// Particles seeded over the canvas, living through the run: they move every step and
    /// draw into every frame (the JSON reports particles and particles_ms, their stage alone;
    /// at most 131072 on the CPU, 1048576 on the GPU).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1_048_576))]
    particles: u32,
    /// Streamlines: times the frame with the lines alone (the default lines: 32 per height,
    /// 16 steps; the JSON reports streamlines, their number, and streamlines_ms).
    #[arg(long)]
    streamlines: bool,
    /// Output size WxH of the colour stage's timings (colour_ms; on the CPU also display_ms,
    /// the display pipeline's share; on the GPU colorize_gpu_ms and display_gpu_ms, from
    /// timestamp queries). With --model sph on the CPU: the frame the particles are drawn
    /// into (frame_ms: the Surface and the Discs looks); with --model liquid3d, the picture's
    /// (picture_ms).
    #[arg(long, default_value = "1280x720", value_parser = parse_frame_size)]
    frame_size: (usize, usize),
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

fn bench(args: BenchArgs) -> ExitCode {
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
        ModelArg::Sph => return bench_sph(&args),
        ModelArg::Liquid3d => return bench::liquid3d::command(&args),
        ModelArg::Grid => {}
    }
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
                Backend::Cpu => match bench::run_cpu(&opts) {
                    Ok(r) => r,
                    Err(e) => {
                        warn(&format!("dyeflow bench: {e}."));
                        return ExitCode::FAILURE;
                    }
                },
                Backend::Gpu => match bench::run_gpu(&opts, &gpu) {
                    Ok(r) => r,
                    Err(e) => {
                        warn(&format!("dyeflow bench: cannot run on the GPU: {e}."));
                        return ExitCode::from(2);
                    }
                },
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

/// Mesa's Vulkan and EGL drivers print "XDG_RUNTIME_DIR is invalid or not set" while the
/// solver probes for a GPU in an environment without one (ssh, cron, CI): give this process a
/// private one (0700), made only once the arguments are read (help, the version and usage
/// errors exit without one) and removed on every way out: when the command returns, and on a
/// signal that ends the process (a bench stopped by Ctrl-C; a render ends itself and returns).
fn private_runtime_dir() -> Option<tempfile::TempDir> {
    let valid = std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| Path::new(&d).is_dir());
    if valid || !cfg!(unix) {
        return None;
    }
    let mut builder = tempfile::Builder::new();
    builder.prefix("dyeflow-runtime-");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
    let dir = builder.tempdir().ok()?;
    // SAFETY: called before any thread of ours exists that could read the environment at the
    // same time (the arguments are parsed on this thread alone).
    unsafe { std::env::set_var("XDG_RUNTIME_DIR", dir.path()) };
    Some(dir)
}

/// For a command without signal handling of its own (bench): a signal that would end the
/// process removes the runtime directory first, then ends it as the signal would have (exit
/// 128 + the signal).
#[cfg(unix)]
fn remove_on_signal(dir: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return;
    };
    let path = Arc::new(path);
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let path = Arc::clone(&path);
        // SAFETY: rmdir and _exit are async-signal-safe system calls; the path was made
        // before, and nothing is allocated or locked here.
        let _ = unsafe {
            signal_hook::low_level::register(signal, move || {
                libc::rmdir(path.as_ptr());
                libc::_exit(128 + signal);
            })
        };
    }
}

/// Run the command line: parse the arguments, run the command, return its exit code.
pub fn main() -> ExitCode {
    let command = Cli::parse().command;
    let runtime_dir = private_runtime_dir();
    let code = match command {
        Command::Bench(args) => {
            #[cfg(unix)]
            if let Some(dir) = &runtime_dir {
                remove_on_signal(dir.path());
            }
            bench(args)
        }
        Command::Render(args) => render_command(args),
    };
    drop(runtime_dir);
    code
}
