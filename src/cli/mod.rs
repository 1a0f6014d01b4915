//! The `dyeflow` command line (the `cli` feature): argument parsing, `dyeflow render`
//! ([`render`]: music, captures and the demo to frames, GIF or video) and `dyeflow bench`
//! ([`bench`]). `src/main.rs` only calls [`main`]; hosts never load any of it.

pub mod bench;
mod bench_command;
pub mod render;

use bench_command::{BenchArgs, bench};

use crate::params::BackendChoice;
use crate::sim::PressureMethod;
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
    let quiet = args.quiet;
    let opts = render_options(args);
    let stop = Arc::new(AtomicBool::new(false));
    install_stop_signals(&stop, &opts.stops);
    let demo = opts.midi.is_none() && opts.audio.is_none() && opts.capture.is_none();
    // Only once the arguments and inputs are checked: bad input gets one sentence, alone.
    let mut banner = || {
        if demo && !quiet {
            warn(&format!("Rendering {}.", render::demo::describe()));
        }
    };
    match render::render_with(&opts, &stop, &mut banner) {
        Ok(s) => {
            tell_rendered(&s, &opts.out);
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

/// The render's options from the command line's.
fn render_options(args: RenderArgs) -> render::RenderOptions {
    render::RenderOptions {
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
    }
}

/// What a render did, on standard output: its frames and speed, what it wrote (or that it
/// wrote nothing, and `out` is unchanged), then its notes.
fn tell_rendered(s: &render::RenderSummary, out: &std::path::Path) {
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
                "Interrupted after {:.2} s, before the first frame: nothing was written (an \
                 earlier output at {} is unchanged).",
                s.wall_s,
                out.display()
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
}

/// The exit code of a render a signal stopped: 128 + the signal (SIGINT when none was
/// recorded).
fn interrupted_code() -> ExitCode {
    let signal = SIGNAL.load(Ordering::Relaxed);
    ExitCode::from(128 + if signal > 0 { signal as u8 } else { 2 })
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
