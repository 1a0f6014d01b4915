//! `dyeflow render`: music in, video out, offline. MIDI and audio files (or the built-in demo)
//! drive the same bridge, mapping and simulation as the plugin, in simulation time.
//!
//! Why this file is long: it is the render's whole driver (options, the input feeds, the step
//! and frame loop, the outputs and the summary), one sequence read top to bottom; the parts
//! with their own job are beside it (`feed`, `files`, `midi`, `wav`, `replay`, `demo`).

pub mod demo;
pub mod error;
pub mod feed;
pub mod files;
pub mod midi;
pub mod obstacles;
pub mod progress;
pub mod replay;
pub mod stats;
pub mod wav;

use std::path::{Path, PathBuf};

pub use error::{FfmpegFailure, InputProblem, UsageError};

/// Why a render could not run. Every message is one sentence naming the file (if any) and
/// the problem.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// An input file is missing, unreadable, corrupt, or not what it claims to be.
    #[error("{}: {problem}", path.display())]
    Input {
        /// The input file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        problem: InputProblem,
    },
    /// An argument is out of range or inconsistent.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// The output could not be written.
    #[error("{}: {problem}", path.display())]
    Output { path: PathBuf, problem: String },
    /// ffmpeg is not on PATH.
    #[error(
        "ffmpeg was not found on PATH, so {} cannot be written; install ffmpeg (Debian: apt \
         install ffmpeg) or render PNG frames with --out DIR and encode them later.",
        path.display()
    )]
    FfmpegMissing {
        /// The video that cannot be written.
        path: PathBuf,
    },
    /// ffmpeg is there but could not be started.
    #[error("ffmpeg could not be started to write {}: {source}", path.display())]
    FfmpegStart {
        /// The video that cannot be written.
        path: PathBuf,
        /// Why the process could not be spawned.
        #[source]
        source: std::io::Error,
    },
    /// ffmpeg stopped taking frames or exited with an error.
    #[error(transparent)]
    Ffmpeg(#[from] FfmpegFailure),
    /// The temporary WAV file a video muxes in could not be written.
    #[error("could not write a temporary file for the audio: {0}")]
    TempAudio(#[source] std::io::Error),
    /// An output's encoder threads could not be started.
    #[error("{}: could not start the encoder threads: {source}", path.display())]
    EncoderThreads {
        /// The output.
        path: PathBuf,
        /// Why the threads could not be started.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The simulation could not be started (the system refused its threads).
    #[error(transparent)]
    Solver(#[from] crate::sim::CpuError),
    /// The GPU failed during the render (device lost, validation error).
    #[error("the GPU failed during the render: {0}")]
    Gpu(#[from] crate::sim::GpuError),
    /// The built-in demo's MIDI does not parse (a bug in Dyeflow).
    #[error("the built-in demo's MIDI is broken: {0}")]
    DemoMidi(#[source] midi::MidiError),
    /// The built-in demo's audio could not be encoded (a bug in Dyeflow).
    #[error("could not make the demo's audio: {0}")]
    DemoAudio(#[source] hound::Error),
}

impl RenderError {
    /// An input-file error.
    pub fn input(path: &Path, problem: impl Into<InputProblem>) -> Self {
        Self::Input {
            path: path.to_owned(),
            problem: problem.into(),
        }
    }

    /// An I/O error reading an input file: "file not found", "permission denied", or the
    /// error itself.
    pub fn input_io(path: &Path, e: std::io::Error) -> Self {
        Self::input(path, e)
    }

    /// An output error.
    pub fn output(path: &Path, problem: impl Into<String>) -> Self {
        Self::Output {
            path: path.to_owned(),
            problem: problem.into(),
        }
    }

    /// The process exit code: 2 for bad input or arguments, 1 for failures while writing.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Input { .. } | Self::Usage(_) => 2,
            Self::Output { .. }
            | Self::FfmpegMissing { .. }
            | Self::FfmpegStart { .. }
            | Self::Ffmpeg(_)
            | Self::TempAudio(_)
            | Self::EncoderThreads { .. }
            | Self::Gpu(_)
            | Self::Solver(_)
            | Self::DemoMidi(_)
            | Self::DemoAudio(_) => 1,
        }
    }
}

/// Open an input file (a regular file: not a directory, a FIFO or a device, refused without
/// waiting; see [`preset::open_regular`]); the file and its size.
fn open_input(path: &Path) -> Result<(std::fs::File, u64), RenderError> {
    let file = preset::open_regular(path).map_err(|e| RenderError::input_io(path, e))?;
    let meta = file
        .metadata()
        .map_err(|e| RenderError::input_io(path, e))?;
    Ok((file, meta.len()))
}

/// Read a whole input file of at most `max_bytes` (not empty, not a directory).
/// The preset `--preset` names: the file at that path or, when there is no such file and
/// the argument is a bare name (no directory, no extension), the factory preset of that name
/// (any case); a bare name that is neither says which names there are.
fn preset_bytes(path: &Path) -> Result<Vec<u8>, RenderError> {
    let text = path.to_string_lossy();
    let bare = path.components().count() == 1 && path.extension().is_none();
    if bare && !path.is_file() {
        return match preset::factory::find(&text) {
            Some(factory) => Ok(factory.json().into_bytes()),
            None => Err(RenderError::input(
                path,
                InputProblem::NoSuchPreset {
                    names: preset::factory::names(),
                },
            )),
        };
    }
    read_input(path, preset::MAX_PRESET_BYTES)
}

fn read_input(path: &Path, max_bytes: u64) -> Result<Vec<u8>, RenderError> {
    let bytes = read_input_until(path, max_bytes, &AtomicBool::new(false))?;
    Ok(bytes.expect("no stop to hear"))
}

/// Bytes read between looks at the stop flag: a read of a large file (a MIDI file may have
/// 256 MiB) from a slow disk still hears Ctrl-C within a fraction of a second.
const READ_CHUNK_BYTES: u64 = 4 << 20;

/// [`read_input`], giving up (`None`) when `stop` is set while the file is read.
fn read_input_until(
    path: &Path,
    max_bytes: u64,
    stop: &AtomicBool,
) -> Result<Option<Vec<u8>>, RenderError> {
    use std::io::Read;
    let (mut file, len) = open_input(path)?;
    let too_large = || {
        RenderError::input(
            path,
            InputProblem::TooLarge {
                max_mib: (max_bytes >> 20).max(1),
            },
        )
    };
    if len > max_bytes {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    // A chunk at a time; the limit also guards against a file that grows while it is read.
    loop {
        let n = (&mut file)
            .take(READ_CHUNK_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| RenderError::input_io(path, e))?;
        if bytes.len() as u64 > max_bytes {
            return Err(too_large());
        }
        if n == 0 {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
    }
    if bytes.is_empty() {
        return Err(RenderError::input(path, InputProblem::Empty));
    }
    Ok(Some(bytes))
}

use crate::engine::Driver;
use crate::fluid::Look;
use crate::params::{BackendChoice, DYE_SCALES, DyeflowParams, SIM_RESOLUTIONS_CELLS};
use crate::preset;
use crate::sim::{Model, ModelSpec, create_model};
use feed::{AudioSource, Feed, Player};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Allowed output sizes, pixels per side.
pub const SIZE_RANGE: (u32, u32) = (16, 7680);
/// Allowed frame rates.
pub const FPS_RANGE: (u32, u32) = (1, 240);
/// Longest render, seconds.
pub const MAX_SECONDS: f64 = 4.0 * 3600.0;
/// Seconds of music simulated (without frames) before `--start`, so the fluid there looks as
/// it would have: long enough for dye and motion to build up and settle.
pub const PREROLL_S: f64 = 8.0;
/// Seconds of music between two small frames the pre-roll draws for the adaptive dye.
const PREROLL_LOOK_S: f64 = 0.1;
/// The pre-roll's small frames, as a share of the render's width and height.
const PREROLL_LOOK_SCALE: u32 = 4;

/// Simulate the pre-roll's `steps` of `step_dt` before `--start`: unrendered, but with a
/// small frame every [`PREROLL_LOOK_S`] read by the adaptive dye, so the first frame is
/// drawn with the action it would have had in a render from the start. Whether it ran to
/// the end (not stopped).
fn preroll(
    player: &mut Feed,
    model: &mut dyn Model,
    driver: &mut Driver,
    params: &DyeflowParams,
    (steps, step_dt): (u64, f64),
    (width, height): (u32, u32),
    stop: &AtomicBool,
) -> Result<bool, RenderError> {
    let per_look = ((PREROLL_LOOK_S / step_dt).round() as u64).max(1);
    let (w, h) = (
        (width / PREROLL_LOOK_SCALE).max(16) as usize,
        (height / PREROLL_LOOK_SCALE).max(16) as usize,
    );
    let mut small = Vec::new();
    let mut done = 0;
    while done < steps {
        let n = per_look.min(steps - done);
        if !player.advance(model, driver, params, n, stop)? {
            return Ok(false);
        }
        done += n;
        if params.adaptive_dye.value() > 0.0 && model.dye_over_backdrop() {
            small.resize(w * h * 4, 0);
            model.render(&driver.look(), w, h, &mut small);
            driver.observe_frame(&small, (w, h), params, model);
        }
    }
    Ok(true)
}

/// Seconds rendered after the last MIDI event when only MIDI gives the length.
pub const TAIL_S: f64 = 2.0;
/// Most CPU solver threads per core `--threads` accepts: more only adds overhead (and a
/// thousand threads can exhaust a process limit).
pub const MAX_THREADS_PER_CORE: usize = 4;
/// Fewest and most cells along a side of the simulation grid.
pub const GRID_EDGE_CELLS: (usize, usize) = (8, 8192);

/// What to render and how; the `dyeflow render` options.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// Standard MIDI File; with no MIDI and no audio, the built-in demo.
    pub midi: Option<PathBuf>,
    /// WAV file: drives the envelope follower and onsets, and goes into a video.
    pub audio: Option<PathBuf>,
    /// A directory (PNG frames), `.gif`, `.mp4` or `.webm`.
    pub out: PathBuf,
    pub width: u32,
    pub height: u32,
    pub fps: u32,
    /// Length; by default the music's (plus a tail for MIDI).
    pub seconds: Option<f64>,
    /// Where in the music to start, seconds.
    pub start_s: f64,
    pub backend: BackendChoice,
    /// Simulation grid height in cells (one of [`SIM_RESOLUTIONS_CELLS`]).
    pub sim: Option<u32>,
    /// Dye grid refinement over the simulation grid (one of [`DYE_SCALES`]).
    pub dye: Option<u32>,
    /// A parameter set in the plugin's state format.
    pub preset: Option<PathBuf>,
    /// Obstacles: a built-in layout's name, or a PNG image (see [`obstacles`]); over the
    /// preset's.
    pub obstacles: Option<PathBuf>,
    /// Streamlines, over the preset's.
    pub streamlines: Option<crate::fluid::StreamlineMode>,
    /// Show progress on standard error: a bar in a terminal, else a line every few seconds.
    pub progress: bool,
    /// CPU solver threads; 0 for one per core. At most [`max_threads`].
    pub cpu_threads: usize,
    /// Measure the picture (see [`stats`]): [`RenderSummary::picture`].
    pub stats: bool,
    /// Which fluid, over the preset's.
    pub fluid: Option<crate::params::FluidChoice>,
    /// A bounce capture to replay (see [`crate::capture`]); `audio` then only goes into the
    /// video.
    pub capture: Option<PathBuf>,
    /// How a video is encoded (PNG frames and GIFs are the same at every quality).
    pub quality: files::Quality,
    /// The stops the user requested, counted (the command line's signal handlers add to it):
    /// a second one while a video is being finished abandons it (see
    /// [`files::StopRequests`]). The render itself ends on the `stop` flag it is given.
    pub stops: files::StopRequests,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            midi: None,
            audio: None,
            out: PathBuf::from(DEFAULT_OUT),
            width: 1280,
            height: 720,
            fps: 60,
            seconds: None,
            start_s: 0.0,
            backend: BackendChoice::Auto,
            sim: None,
            dye: None,
            preset: None,
            obstacles: None,
            streamlines: None,
            progress: true,
            cpu_threads: 0,
            stats: false,
            fluid: None,
            capture: None,
            quality: files::Quality::Good,
            stops: files::StopRequests::default(),
        }
    }
}

/// The default output: PNG frames, which need no external tool.
pub const DEFAULT_OUT: &str = "dyeflow-render";

/// What a finished (or interrupted) render did.
#[derive(Clone, Debug)]
pub struct RenderSummary {
    /// Frames rendered (and written, when `output` is some).
    pub frames: u64,
    pub width: u32,
    pub height: u32,
    pub fps: u32,
    /// The simulation grid, cells.
    pub grid: (usize, usize),
    /// Wall-clock seconds of the whole render: loading, pre-roll and frames.
    pub wall_s: f64,
    /// Of which loading the inputs, starting the solver and the pre-roll before `--start`.
    pub setup_s: f64,
    /// "cpu" or "gpu", and the device.
    pub backend: String,
    /// The writer's one-line account of the output; `None` when nothing was written (stopped
    /// before the first frame: an earlier output at the same place is untouched).
    pub output: Option<String>,
    /// Stopped (Ctrl-C or another signal) before the end.
    pub interrupted: bool,
    /// Events the bridge dropped (more than its queue holds in one step); 0 in any sane
    /// file, and in a capture's replay (the records a capture lost while it was recorded are
    /// told in [`RenderSummary::notes`]).
    pub dropped_events: u64,
    /// Lines worth telling the user (preset ids skipped, how to encode PNG frames...).
    pub notes: Vec<String>,
    /// With [`RenderOptions::stats`]: the picture's figures over the last three quarters of the
    /// frames rendered.
    pub picture: Option<stats::PictureStats>,
}

impl RenderSummary {
    /// Seconds spent rendering frames (after the set-up).
    pub fn render_s(&self) -> f64 {
        (self.wall_s - self.setup_s).max(0.0)
    }

    /// Frames per second achieved while rendering frames.
    pub fn achieved_fps(&self) -> f64 {
        self.frames as f64 / self.render_s().max(1e-9)
    }
}

/// The music: timed MIDI events and the audio.
struct Music {
    notes: Vec<midi::TimedNote>,
    /// The MIDI file's tempo map: the transport a host would report while playing it.
    tempo: Option<midi::TempoMap>,
    audio: AudioSource,
    /// Natural length, seconds.
    length_s: f64,
    /// What a video muxes in, and what goes next to PNG frames (the demo's audio).
    audio_out: Option<files::AudioOut>,
}

/// Load the inputs (or make the demo). `None` when `stop` was set meanwhile.
fn load_music(opts: &RenderOptions, stop: &AtomicBool) -> Result<Option<Music>, RenderError> {
    if opts.midi.is_none() && opts.audio.is_none() {
        let (notes, tempo) =
            midi::parse_with_tempo(&demo::midi_bytes()).map_err(RenderError::DemoMidi)?;
        let audio = wav::Audio {
            sample_rate: demo::DEMO_SAMPLE_RATE,
            channels: demo::audio(demo::DEMO_SAMPLE_RATE),
        };
        let bytes = wav_bytes(&audio)?;
        return Ok(Some(Music {
            notes,
            tempo,
            audio: AudioSource::Memory(audio),
            length_s: demo::DEMO_SECONDS,
            audio_out: Some(files::AudioOut::Generated {
                name: DEMO_AUDIO_NAME,
                bytes,
            }),
        }));
    }
    let (notes, tempo) = match &opts.midi {
        Some(p) => match midi::load(p, stop)? {
            Some(loaded) => loaded,
            None => return Ok(None),
        },
        None => (Vec::new(), None),
    };
    let audio = match &opts.audio {
        Some(p) => AudioSource::File {
            stream: wav::open(p)?,
            path: p.clone(),
        },
        None => AudioSource::Silent,
    };
    let midi_len = match &opts.midi {
        Some(path) => {
            let last = midi::duration_s(&notes);
            // Without --seconds the render runs to the end of the music: refuse a length no
            // render may have rather than quietly cutting it (or filling a disk).
            if opts.seconds.is_none() && last + TAIL_S > MAX_SECONDS {
                return Err(RenderError::input(
                    path,
                    InputProblem::MusicTooLong { last_s: last },
                ));
            }
            last + TAIL_S
        }
        None => 0.0,
    };
    let audio_len = audio.duration_s();
    Ok(Some(Music {
        notes,
        tempo,
        audio,
        length_s: midi_len.max(audio_len),
        audio_out: opts.audio.clone().map(files::AudioOut::File),
    }))
}

/// The name of the demo's audio next to its PNG frames.
pub const DEMO_AUDIO_NAME: &str = "audio.wav";

/// "3.2 s", "12.5 min", "5.1 hours".
pub fn duration_text(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.1} s")
    } else if seconds < 7200.0 {
        format!("{:.1} min", seconds / 60.0)
    } else {
        format!("{:.1} hours", seconds / 3600.0)
    }
}

/// A number for a message: plain when it is of everyday size, in exponent form otherwise (so
/// `1e300` never prints as 301 digits).
pub fn number_text(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || !x.is_finite() || (1e-3..1e7).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

fn check_range<T: PartialOrd + std::fmt::Display>(
    what: &'static str,
    value: T,
    lo: T,
    hi: T,
) -> Result<(), RenderError> {
    if value < lo || value > hi {
        return Err(UsageError::OutOfRange {
            what,
            value: value.to_string(),
            lo: lo.to_string(),
            hi: hi.to_string(),
        }
        .into());
    }
    Ok(())
}

/// The most CPU solver threads `--threads` accepts on this machine.
pub fn max_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()) * MAX_THREADS_PER_CORE
}

/// Check the options that need no file.
pub fn validate(opts: &RenderOptions) -> Result<(), RenderError> {
    if opts.capture.is_some() && opts.midi.is_some() {
        return Err(UsageError::CaptureWithMidi.into());
    }
    check_range("--size width", opts.width, SIZE_RANGE.0, SIZE_RANGE.1)?;
    check_range("--size height", opts.height, SIZE_RANGE.0, SIZE_RANGE.1)?;
    check_range("--fps", opts.fps, FPS_RANGE.0, FPS_RANGE.1)?;
    if let Some(s) = opts.seconds
        && !(s.is_finite() && s > 0.0 && s <= MAX_SECONDS)
    {
        return Err(UsageError::Seconds { seconds: s }.into());
    }
    if !(opts.start_s.is_finite() && opts.start_s >= 0.0 && opts.start_s <= MAX_SECONDS) {
        return Err(UsageError::Start {
            start_s: opts.start_s,
        }
        .into());
    }
    if let Some(n) = opts.sim
        && !SIM_RESOLUTIONS_CELLS.contains(&n)
    {
        return Err(UsageError::SimResolution(n).into());
    }
    if let Some(n) = opts.dye
        && !DYE_SCALES.contains(&n)
    {
        return Err(UsageError::DyeScale(n).into());
    }
    if opts.cpu_threads > max_threads() {
        return Err(UsageError::Threads {
            threads: opts.cpu_threads,
            max: max_threads(),
        }
        .into());
    }
    // Large frames at a high rate for hours would fill any disk: cap the pixel count.
    let pixels = f64::from(opts.width) * f64::from(opts.height);
    if pixels > 7680.0 * 4320.0 {
        return Err(UsageError::MorePixelsThan8k {
            width: opts.width,
            height: opts.height,
        }
        .into());
    }
    Ok(())
}

/// Refuses an output that would write over one of the inputs (see [`files::refuse_inputs`]),
/// before anything is read or written.
fn refuse_inputs_as_output(
    opts: &RenderOptions,
    kind: &files::OutputKind,
) -> Result<(), RenderError> {
    let inputs: Vec<(&'static str, &Path)> = [
        ("--midi", &opts.midi),
        ("--audio", &opts.audio),
        ("--preset", &opts.preset),
        ("--obstacles", &opts.obstacles),
        ("--capture", &opts.capture),
    ]
    .into_iter()
    .filter_map(|(option, path)| Some((option, path.as_deref()?)))
    .collect();
    let demo = opts.midi.is_none() && opts.audio.is_none() && opts.capture.is_none();
    let sidecar = demo.then_some(DEMO_AUDIO_NAME);
    files::refuse_inputs(kind, &opts.out, sidecar, &inputs)
}

/// The solver grid for an output of `width x height` at about `sim` cells tall. The canvas
/// takes the output's aspect with square cells, so nothing is stretched or cropped: a very
/// wide output gets fewer rows (and a very tall one more) so that each side stays within
/// [`GRID_EDGE_CELLS`].
pub fn grid_for(width: u32, height: u32, sim: u32) -> (usize, usize) {
    let (lo, hi) = (GRID_EDGE_CELLS.0 as f64, GRID_EDGE_CELLS.1 as f64);
    let aspect = f64::from(width.max(1)) / f64::from(height.max(1));
    let mut rows = f64::from(sim).clamp(lo, hi);
    if rows * aspect > hi {
        rows = hi / aspect;
    }
    if rows * aspect < lo {
        rows = lo / aspect;
    }
    // Rounding the rows down keeps the width within the limit after rounding.
    let h = (rows.floor() as usize).clamp(GRID_EDGE_CELLS.0, GRID_EDGE_CELLS.1);
    let w = ((h as f64 * aspect).round() as usize).clamp(GRID_EDGE_CELLS.0, GRID_EDGE_CELLS.1);
    (w, h)
}

/// Render `opts`. `stop` ends the render early (Ctrl-C or another signal): the frames so far
/// are finished into a valid output, or, before the first frame, nothing is written.
pub fn render(opts: &RenderOptions, stop: &AtomicBool) -> Result<RenderSummary, RenderError> {
    render_with(opts, stop, &mut || {})
}

/// [`render`], calling `ready` once the arguments and every input file are checked and the
/// output is open, before the simulation starts: what a command line prints about the render
/// (the demo's banner) waits for it, so bad input gets its one sentence and nothing else.
pub fn render_with(
    opts: &RenderOptions,
    stop: &AtomicBool,
    ready: &mut dyn FnMut(),
) -> Result<RenderSummary, RenderError> {
    let started = Instant::now();
    validate(opts)?;
    let kind = files::kind_for(&opts.out)?;
    refuse_inputs_as_output(opts, &kind)?;
    let params = Arc::new(DyeflowParams::default());
    let mut notes_out = Vec::new();
    if let Some(p) = &opts.preset {
        let bytes = preset_bytes(p)?;
        let report = preset::apply(&bytes, &params).map_err(|e| RenderError::input(p, e))?;
        if let Some(note) = report.version_note() {
            notes_out.push(format!("{}: {note}", p.display()));
        }
        if !report.unknown.is_empty() {
            notes_out.push(format!(
                "{}: skipped parameters this Dyeflow does not know: {}",
                p.display(),
                report.unknown.join(", ")
            ));
        }
        for note in &report.modulation_notes {
            notes_out.push(format!("{}: modulation: {note}", p.display()));
        }
    }
    if let Some(mode) = opts.streamlines {
        // Through the preset reader, as a one-parameter preset: one path sets parameters.
        let id = match mode {
            crate::fluid::StreamlineMode::Off => "off",
            crate::fluid::StreamlineMode::Overlay => "overlay",
            crate::fluid::StreamlineMode::Alone => "alone",
        };
        // Stamped with this version: no migration of older states applies to it.
        use crate::params::{STATE_VERSION, STATE_VERSION_KEY};
        let json = format!(
            r#"{{"params":{{"stream":"{id}"}},"fields":{{"{STATE_VERSION_KEY}":"{STATE_VERSION}"}}}}"#
        );
        preset::apply(json.as_bytes(), &params)
            .map_err(|e| RenderError::input(Path::new("--streamlines"), e))?;
    }
    // A capture brings its own state (parameters, settings, obstacles) and events: over the
    // preset's, under the command line's.
    let interrupted = |notes: Vec<String>, grid: (usize, usize)| RenderSummary {
        frames: 0,
        width: opts.width,
        height: opts.height,
        fps: opts.fps,
        grid,
        wall_s: started.elapsed().as_secs_f64(),
        setup_s: started.elapsed().as_secs_f64(),
        backend: String::new(),
        output: None,
        interrupted: true,
        dropped_events: 0,
        notes,
        picture: None,
    };
    let mut replay = None;
    if let Some(path) = &opts.capture {
        let Some((player, notes)) = replay::CapturePlayer::load(path, &params, stop)? else {
            return Ok(interrupted(notes_out, (0, 0)));
        };
        notes_out.extend(notes);
        let (dropped, limited) = player.losses();
        if dropped > 0 {
            notes_out.push(format!(
                "{}: the plugin could not keep {dropped} records while capturing (a full \
                 queue, or values a capture cannot hold), so this render may differ from what \
                 it showed",
                path.display()
            ));
        }
        if limited {
            notes_out.push(format!(
                "{}: the capture reached its size limit and ends early",
                path.display()
            ));
        }
        replay = Some(player);
    }
    // Settings: the preset's (or the defaults), then the command line.
    let mut settings = params.settings().sanitized();
    if let Some(n) = opts.sim {
        settings.sim_resolution = n;
    }
    if let Some(n) = opts.dye {
        settings.dye_scale = n;
    }
    let (gw, gh) = grid_for(opts.width, opts.height, settings.sim_resolution);
    if let Some(path) = &opts.obstacles {
        let Some(obstacles) = obstacles::obstacles_from(path, (gw, gh), stop)? else {
            return Ok(interrupted(notes_out, (gw, gh)));
        };
        if obstacles == Default::default() {
            notes_out.push(format!(
                "{}: nothing in it is solid (white, or opaque), so there are no obstacles",
                path.display()
            ));
        }
        params.obstacles.set(obstacles);
    }
    // A capture's audio is only muxed, but checked as any input (a WAV, a regular file)
    // before anything is written.
    if replay.is_some()
        && let Some(path) = &opts.audio
    {
        wav::open(path)?;
    }
    let music = match &replay {
        Some(player) => Music {
            notes: Vec::new(),
            // A capture carries the host's own transport.
            tempo: None,
            audio: AudioSource::Silent,
            length_s: player.duration_s(),
            audio_out: opts.audio.clone().map(files::AudioOut::File),
        },
        None => match load_music(opts, stop)? {
            Some(music) => music,
            None => return Ok(interrupted(notes_out, (gw, gh))),
        },
    };
    // Without --seconds the render runs to the end of the capture: refuse a length no render
    // may have, as for MIDI, rather than quietly cutting it.
    if let Some(path) = &opts.capture
        && opts.seconds.is_none()
        && music.length_s > MAX_SECONDS
    {
        return Err(RenderError::input(
            path,
            InputProblem::MusicTooLong {
                last_s: music.length_s,
            },
        ));
    }
    if opts.start_s >= music.length_s && opts.seconds.is_none() {
        // Only a capture can be 0 s long (MIDI has its tail, WAV some audio): that is the
        // file's matter, not --start's (which the user may not have given).
        if let Some(path) = &opts.capture
            && music.length_s <= 0.0
        {
            return Err(RenderError::input(path, InputProblem::NothingToRender));
        }
        return Err(UsageError::StartPastEnd {
            start_s: opts.start_s,
            length_s: music.length_s,
            what: if opts.capture.is_some() {
                "capture"
            } else {
                "music"
            },
        }
        .into());
    }
    let seconds = opts
        .seconds
        .unwrap_or(music.length_s - opts.start_s)
        .min(MAX_SECONDS);
    let frames_total = ((seconds * f64::from(opts.fps)).round() as u64).max(1);
    let backend = if opts.backend == BackendChoice::Auto {
        settings.backend
    } else {
        opts.backend
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu_threads = if opts.cpu_threads > 0 {
        opts.cpu_threads
    } else {
        cores
    };
    // The threads the simulation keeps busy: the CPU solver's, or the one that drives the GPU
    // (a GPU that is not there falls back to the CPU solver, whose threads then share the
    // cores with the encoders).
    let busy = if backend == BackendChoice::Cpu {
        cpu_threads
    } else {
        1
    };

    let out_opts = files::OutputOptions {
        path: opts.out.clone(),
        width: opts.width,
        height: opts.height,
        fps: opts.fps,
        audio: music.audio_out.clone(),
        audio_start_s: opts.start_s,
        max_frames: Some(frames_total),
        quality: opts.quality,
        threads: files::encoder_threads(cores, busy),
        stops: opts.stops.clone(),
        encoder_patience: files::ENCODER_PATIENCE,
        ffmpeg: PathBuf::from("ffmpeg"),
    };
    let mut writer = files::open(&kind, &out_opts)?;
    ready();
    // Simulation pacing: whole steps per frame at about the configured rate.
    let steps_per_frame =
        ((f64::from(settings.sim_rate_hz) / f64::from(opts.fps)).round() as u64).max(1);
    let step_dt = 1.0 / (f64::from(opts.fps) * steps_per_frame as f64);
    // A capture's pre-roll can reach back before its bounce's start (the host's own pre-roll),
    // to its first sample.
    let earliest = replay.as_ref().map_or(0.0, |p| -p.origin_s());
    let preroll_start = (opts.start_s - PREROLL_S).max(earliest);
    // The capture's parameters before its first step, so the driver starts from them.
    if let Some(player) = &mut replay
        && !player.set_steps(preroll_start, step_dt, stop)?
    {
        return Ok(interrupted(notes_out, (gw, gh)));
    }
    let mut driver = Driver::new(&params);
    if let Some(fluid) = opts.fluid {
        settings.fluid = fluid;
    }
    let spec = ModelSpec {
        kind: settings.fluid.into(),
        cells: (gw, gh),
        detail: settings.dye_scale as usize,
        effort_sweeps: driver.discrete().pressure_iterations,
        backend: backend.into(),
        gpu: Default::default(),
        cpu_threads,
    };
    let (mut model, info) = create_model(&spec).map_err(RenderError::Solver)?;
    if backend == BackendChoice::Gpu && info.backend != "gpu" {
        notes_out.push(format!(
            "no usable GPU ({}); rendered on the CPU",
            info.fallback.as_deref().unwrap_or("unknown reason")
        ));
    }
    // The obstacles are in the model from the first picture on: the driver would otherwise
    // hand them over with its first step, after frame 1 (which a render from the start draws
    // before any step) showed none. The first step then finds them in place, so every later
    // frame is as before.
    driver.sync_obstacles(model.as_mut(), &params);

    let preroll_steps = ((opts.start_s - preroll_start) / step_dt).round() as u64;
    let mut player = match replay {
        Some(player) => Feed::Capture(Box::new(player)),
        None => Feed::Music(Box::new(Player::new(
            music.notes,
            music.tempo,
            music.audio,
            &params,
            preroll_start,
            step_dt,
        ))),
    };
    let mut rgba = vec![0u8; opts.width as usize * opts.height as usize * 4];

    let mut progress = progress::Progress::new(opts.progress, frames_total, opts.fps);
    if preroll_steps > 0 {
        progress.note(&format!(
            "simulating the {:.1} s before --start {} (not rendered)",
            opts.start_s - preroll_start,
            number_text(opts.start_s)
        ));
    }
    let mut picture = stats::PictureStats::default();
    // The modulation's free LFOs and the adaptive dye's clock read the music's time, as in a
    // render from the start.
    driver.start_at(preroll_start);
    let mut stopped = !preroll(
        &mut player,
        model.as_mut(),
        &mut driver,
        &params,
        (preroll_steps, step_dt),
        (opts.width, opts.height),
        stop,
    )?;
    let setup_s = started.elapsed().as_secs_f64();
    // A frame goes to the writer (its buffer comes back for the next one), after the
    // adaptive dye and the statistics read it.
    let size = (opts.width as usize, opts.height as usize);
    let mut emit = {
        let (writer, picture, progress) = (&mut writer, &mut picture, &mut progress);
        let (params, stats_on) = (&params, opts.stats);
        move |(frame, look): (u64, Look),
              rgba: &mut Vec<u8>,
              driver: &mut Driver,
              model: &dyn Model| {
            driver.observe_drawn(rgba, size, params, model, &look);
            if stats_on && stats::measured(frame, frames_total) {
                picture.add_frame(rgba);
            }
            writer.write_swap(rgba)?;
            progress.frame();
            Ok::<(), RenderError>(())
        }
    };
    // On the GPU up to `in_flight` frames are drawn and read back while the next frames'
    // steps run, each waited for in order; the adaptive dye then reads a frame (against the
    // look it was drawn with) one frame later than a synchronous render does (the CPU renders
    // each frame at once).
    let in_flight = model.frames_in_flight();
    let mut queued: VecDeque<(u64, Look)> = VecDeque::with_capacity(in_flight);
    let adapter = info.device.clone();
    if !stopped {
        for frame in 0..frames_total {
            // Frame 1 comes before any step: a stop that came while loading (or making the
            // model) is heard here, before anything is drawn.
            let stepped = if frame == 0 {
                !stop.load(Ordering::Relaxed)
            } else {
                player.advance(model.as_mut(), &mut driver, &params, steps_per_frame, stop)?
            };
            if !stepped {
                stopped = true;
                break;
            }
            if let Some(reason) = model.failure() {
                return Err(RenderError::Gpu(reason));
            }
            let look = driver.look();
            if in_flight > 0 && model.submit_frame(&look, size.0, size.1) {
                queued.push_back((frame, look));
            } else {
                // Those in flight first, in order, then this one at once.
                while let Some(earlier) = queued.pop_front() {
                    wait_frame(model.as_mut(), &mut rgba, earlier.0, &adapter)?;
                    emit(earlier, &mut rgba, &mut driver, model.as_ref())?;
                }
                model.render(&look, size.0, size.1, &mut rgba);
                emit((frame, look), &mut rgba, &mut driver, model.as_ref())?;
            }
            while queued.len() >= in_flight.max(1) {
                let oldest = queued.pop_front().expect("a frame in flight");
                wait_frame(model.as_mut(), &mut rgba, oldest.0, &adapter)?;
                emit(oldest, &mut rgba, &mut driver, model.as_ref())?;
            }
            if stop.load(Ordering::Relaxed) && frame + 1 < frames_total {
                stopped = true;
                break;
            }
        }
        // The last frames in flight (after a stop too: they are drawn already).
        while let Some(frame) = queued.pop_front() {
            wait_frame(model.as_mut(), &mut rgba, frame.0, &adapter)?;
            emit(frame, &mut rgba, &mut driver, model.as_ref())?;
        }
    }
    progress.finish();
    let frames = writer.frames_written();
    let output = writer.finish()?;
    if kind == files::OutputKind::PngSequence && output.is_some() {
        notes_out.push(format!(
            "to make a video: {}",
            files::ffmpeg_command_hint(
                &opts.out,
                opts.fps,
                music
                    .audio_out
                    .as_ref()
                    .map(|a| match a {
                        files::AudioOut::File(p) => p.clone(),
                        files::AudioOut::Generated { name, .. } => opts.out.join(name),
                    })
                    .as_deref()
            )
        ));
    }
    Ok(RenderSummary {
        frames,
        width: opts.width,
        height: opts.height,
        fps: opts.fps,
        grid: model.resolution().cells,
        wall_s: started.elapsed().as_secs_f64(),
        setup_s,
        backend: format!("{} ({})", info.backend, info.device),
        output,
        interrupted: stopped,
        dropped_events: player.dropped_events(),
        notes: notes_out,
        picture: opts.stats.then_some(picture),
    })
}

/// The oldest frame in flight (`frame`, counted from 0) into `rgba`. One that does not come
/// back (the device failed, or hung past the wait) ends the render with the reason, rather
/// than leaving a black frame in the output.
fn wait_frame(
    model: &mut dyn Model,
    rgba: &mut [u8],
    frame: u64,
    adapter: &str,
) -> Result<(), RenderError> {
    if model.wait_frame(rgba) {
        return Ok(());
    }
    Err(RenderError::Gpu(model.failure().unwrap_or_else(|| {
        crate::sim::GpuError::Failed {
            adapter: adapter.to_owned(),
            message: format!("frame {} did not come back", frame + 1),
        }
    })))
}

/// `audio` as a 32-bit float WAV file's bytes.
fn wav_bytes(audio: &wav::Audio) -> Result<Vec<u8>, RenderError> {
    let spec = hound::WavSpec {
        channels: audio.channels.len().clamp(1, 2) as u16,
        sample_rate: audio.sample_rate,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let err = RenderError::DemoAudio;
    let mut bytes = Vec::new();
    let mut w = hound::WavWriter::new(std::io::Cursor::new(&mut bytes), spec).map_err(err)?;
    for i in 0..audio.frames() {
        for ch in audio.channels.iter().take(2) {
            w.write_sample(ch[i]).map_err(err)?;
        }
    }
    w.finalize().map_err(err)?;
    Ok(bytes)
}
