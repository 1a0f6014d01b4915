//! `dyeflow render`: music in, video out, offline. MIDI and audio files (or the built-in demo)
//! drive the same bridge, mapping and simulation as the plugin, in simulation time.
//!
//! This file holds the render's options, their checks, the inputs' reading and the summary;
//! the render itself, stage by stage, is `renderer.rs`, and the parts with their own job are
//! beside it (`feed`, `files`, `midi`, `wav`, `replay`, `demo`).

pub mod demo;
pub mod error;
pub mod feed;
pub mod files;
pub mod midi;
pub mod obstacles;
pub mod progress;
mod renderer;
pub mod replay;
pub mod stats;
pub mod wav;

use std::path::{Path, PathBuf};

pub use error::{FfmpegFailure, InputProblem, UsageError};
pub use renderer::render_with;

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

use crate::params::{BackendChoice, DYE_SCALES, SIM_RESOLUTIONS_CELLS};
use crate::preset;
use feed::AudioSource;
use std::sync::atomic::{AtomicBool, Ordering};

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
