//! `dyeflow render`: music in, video out, offline. MIDI and audio files (or the built-in demo)
//! drive the same bridge, mapping and simulation as the plugin, in simulation time.

pub mod demo;
pub mod midi;
pub mod output;
pub mod preset;
pub mod wav;

use std::path::{Path, PathBuf};

/// Why a render could not run. Every message is one sentence naming the file (if any) and
/// the problem.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// An input file is missing, unreadable, corrupt, or not what it claims to be.
    #[error("{}: {problem}", path.display())]
    Input { path: PathBuf, problem: String },
    /// An argument is out of range or inconsistent.
    #[error("{0}")]
    Usage(String),
    /// The output could not be written.
    #[error("{}: {problem}", path.display())]
    Output { path: PathBuf, problem: String },
    /// An external tool (ffmpeg) is missing or failed.
    #[error("{0}")]
    Tool(String),
    /// The system refused what the render needs (threads, memory).
    #[error("{0}")]
    System(String),
}

impl RenderError {
    /// An input-file error.
    pub fn input(path: &Path, problem: impl Into<String>) -> Self {
        Self::Input {
            path: path.to_owned(),
            problem: problem.into(),
        }
    }

    /// An I/O error reading an input file: "file not found", "permission denied", or the
    /// error's own text.
    pub fn input_io(path: &Path, e: &std::io::Error) -> Self {
        Self::input(path, io_problem(e))
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
            Self::Output { .. } | Self::Tool(_) | Self::System(_) => 1,
        }
    }
}

/// A short phrase for an I/O error.
fn io_problem(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "file not found".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Open an input file (not a directory); the file and its size.
fn open_input(path: &Path) -> Result<(std::fs::File, u64), RenderError> {
    let file = std::fs::File::open(path).map_err(|e| RenderError::input_io(path, &e))?;
    let meta = file
        .metadata()
        .map_err(|e| RenderError::input_io(path, &e))?;
    if meta.is_dir() {
        return Err(RenderError::input(path, "is a directory, not a file"));
    }
    Ok((file, meta.len()))
}

/// Read a whole input file of at most `max_bytes` (not empty, not a directory).
fn read_input(path: &Path, max_bytes: u64) -> Result<Vec<u8>, RenderError> {
    use std::io::Read;
    let (file, len) = open_input(path)?;
    let too_large = || {
        RenderError::input(
            path,
            format!("file too large (at most {} MiB)", (max_bytes >> 20).max(1)),
        )
    };
    if len > max_bytes {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    // `take` guards against a file that grows while it is read.
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| RenderError::input_io(path, &e))?;
    if bytes.is_empty() {
        return Err(RenderError::input(path, "empty file"));
    }
    if bytes.len() as u64 > max_bytes {
        return Err(too_large());
    }
    Ok(bytes)
}

use crate::bridge::Bridge;
use crate::bridge::queue;
use crate::engine::Driver;
use crate::params::{BackendChoice, DYE_SCALES, DyeflowParams, SIM_RESOLUTIONS_CELLS};
use crate::sim::{SimConfig, Solver, create_solver, iterations_for};
use nice_plug::midi::NoteEvent;
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
/// Seconds rendered after the last MIDI event when only MIDI gives the length.
pub const TAIL_S: f64 = 2.0;
/// Sample rate of the silence the bridge follows when there is no audio file.
const SILENT_RATE: u32 = 48_000;

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
    /// Show a progress bar (when standard error is a terminal).
    pub progress: bool,
    /// CPU solver threads; 0 for all cores.
    pub cpu_threads: usize,
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
            progress: true,
            cpu_threads: 0,
        }
    }
}

/// The default output: PNG frames, which need no external tool.
pub const DEFAULT_OUT: &str = "dyeflow-render";

/// What a finished (or interrupted) render did.
#[derive(Clone, Debug)]
pub struct RenderSummary {
    pub frames: u64,
    pub width: u32,
    pub height: u32,
    pub fps: u32,
    /// Wall-clock seconds the render took.
    pub wall_s: f64,
    /// "cpu" or "gpu", and the device.
    pub backend: String,
    /// The writer's one-line account of the output.
    pub output: String,
    /// Stopped by Ctrl-C before the end.
    pub interrupted: bool,
    /// Events the bridge dropped (a full queue); 0 in any sane file.
    pub dropped_events: u64,
    /// Lines worth telling the user (preset ids skipped, how to encode PNG frames...).
    pub notes: Vec<String>,
}

impl RenderSummary {
    /// Frames per second achieved.
    pub fn achieved_fps(&self) -> f64 {
        self.frames as f64 / self.wall_s.max(1e-9)
    }
}

/// The music: timed MIDI events and audio channels.
struct Music {
    notes: Vec<midi::TimedNote>,
    audio: Option<wav::Audio>,
    /// Natural length, seconds.
    length_s: f64,
    /// A WAV of the audio to mux or keep next to the frames (the demo's, written on demand).
    audio_path: Option<PathBuf>,
    demo: bool,
}

fn load_music(opts: &RenderOptions) -> Result<Music, RenderError> {
    if opts.midi.is_none() && opts.audio.is_none() {
        let notes = midi::parse(&demo::midi_bytes())
            .map_err(|p| RenderError::Usage(format!("the built-in demo's MIDI is broken: {p}")))?;
        let audio = wav::Audio {
            sample_rate: demo::DEMO_SAMPLE_RATE,
            channels: demo::audio(demo::DEMO_SAMPLE_RATE),
        };
        return Ok(Music {
            notes,
            audio: Some(audio),
            length_s: demo::DEMO_SECONDS,
            audio_path: None,
            demo: true,
        });
    }
    let notes = match &opts.midi {
        Some(p) => midi::load(p)?,
        None => Vec::new(),
    };
    let audio = match &opts.audio {
        Some(p) => Some(wav::load(p)?),
        None => None,
    };
    let midi_len = if opts.midi.is_some() {
        midi::duration_s(&notes) + TAIL_S
    } else {
        0.0
    };
    let audio_len = audio.as_ref().map_or(0.0, wav::Audio::duration_s);
    Ok(Music {
        notes,
        audio,
        length_s: midi_len.max(audio_len),
        audio_path: opts.audio.clone(),
        demo: false,
    })
}

fn check_range<T: PartialOrd + std::fmt::Display>(
    what: &str,
    value: T,
    lo: T,
    hi: T,
) -> Result<(), RenderError> {
    if value < lo || value > hi {
        return Err(RenderError::Usage(format!(
            "{what} {value} is out of range; use {lo} to {hi}"
        )));
    }
    Ok(())
}

/// Check the options that need no file.
pub fn validate(opts: &RenderOptions) -> Result<(), RenderError> {
    check_range("--size width", opts.width, SIZE_RANGE.0, SIZE_RANGE.1)?;
    check_range("--size height", opts.height, SIZE_RANGE.0, SIZE_RANGE.1)?;
    check_range("--fps", opts.fps, FPS_RANGE.0, FPS_RANGE.1)?;
    if let Some(s) = opts.seconds
        && !(s.is_finite() && s > 0.0 && s <= MAX_SECONDS)
    {
        return Err(RenderError::Usage(format!(
            "--seconds {s} is out of range; use more than 0 and at most {MAX_SECONDS}"
        )));
    }
    if !(opts.start_s.is_finite() && opts.start_s >= 0.0 && opts.start_s <= MAX_SECONDS) {
        return Err(RenderError::Usage(format!(
            "--start {} is out of range; use 0 to {MAX_SECONDS}",
            opts.start_s
        )));
    }
    if let Some(n) = opts.sim
        && !SIM_RESOLUTIONS_CELLS.contains(&n)
    {
        return Err(RenderError::Usage(format!(
            "--sim {n} is not a simulation resolution; use one of {SIM_RESOLUTIONS_CELLS:?}"
        )));
    }
    if let Some(n) = opts.dye
        && !DYE_SCALES.contains(&n)
    {
        return Err(RenderError::Usage(format!(
            "--dye {n} is not a dye refinement; use one of {DYE_SCALES:?}"
        )));
    }
    // Large frames at a high rate for hours would fill any disk: cap the pixel count.
    let pixels = f64::from(opts.width) * f64::from(opts.height);
    if pixels > 7680.0 * 4320.0 {
        return Err(RenderError::Usage(format!(
            "--size {}x{} has more pixels than 8K (7680x4320)",
            opts.width, opts.height
        )));
    }
    Ok(())
}

/// The solver grid for an output of `width x height` at `sim` cells tall: the canvas takes
/// the output's aspect, so nothing is stretched or cropped.
fn grid_for(width: u32, height: u32, sim: u32) -> (usize, usize) {
    let aspect = f64::from(width) / f64::from(height);
    let h = sim as usize;
    let w = ((h as f64 * aspect).round() as usize).clamp(8, 8192);
    (w, h)
}

/// The sample rate, channels and timing of the audio the bridge follows.
struct Feed<'a> {
    rate: u32,
    channels: Vec<&'a [f32]>,
}

impl<'a> Feed<'a> {
    fn new(audio: Option<&'a wav::Audio>) -> Self {
        match audio {
            Some(a) => Self {
                rate: a.sample_rate,
                channels: a.channels.iter().map(Vec::as_slice).collect(),
            },
            None => Self {
                rate: SILENT_RATE,
                channels: Vec::new(),
            },
        }
    }

    /// Samples `from..to` of each channel (zeros past the end of the audio).
    fn block(&self, from: usize, to: usize, out: &mut Vec<Vec<f32>>) {
        let n = self.channels.len().max(1);
        out.resize_with(n, Vec::new);
        for (c, buf) in out.iter_mut().enumerate() {
            buf.clear();
            if let Some(ch) = self.channels.get(c) {
                buf.extend_from_slice(&ch[from.min(ch.len())..to.min(ch.len())]);
            }
            // Silence past the end of the audio, or all of it without a file.
            buf.resize(to - from, 0.0);
        }
    }
}

/// A note event re-timed to sample `offset` of a block.
fn at_offset(event: &NoteEvent<()>, offset: u32) -> Option<NoteEvent<()>> {
    match event.as_midi()? {
        nice_plug::midi::MidiResult::Basic(bytes) => NoteEvent::from_midi(offset, &bytes).ok(),
        nice_plug::midi::MidiResult::SysEx(..) => None,
    }
}

/// Render `opts`. `stop` ends the render early (Ctrl-C): the frames so far are finished
/// into a valid output.
pub fn render(opts: &RenderOptions, stop: &AtomicBool) -> Result<RenderSummary, RenderError> {
    validate(opts)?;
    let kind = output::kind_for(&opts.out)?;
    let params = Arc::new(DyeflowParams::default());
    let mut notes_out = Vec::new();
    if let Some(p) = &opts.preset {
        let report = preset::load(p, &params)?;
        if !report.unknown.is_empty() {
            notes_out.push(format!(
                "{}: skipped parameters this Dyeflow does not know: {}",
                p.display(),
                report.unknown.join(", ")
            ));
        }
    }
    let mut music = load_music(opts)?;
    if opts.start_s >= music.length_s && opts.seconds.is_none() {
        return Err(RenderError::Usage(format!(
            "--start {} is past the end of the music ({:.2} s)",
            opts.start_s, music.length_s
        )));
    }
    let seconds = opts
        .seconds
        .unwrap_or(music.length_s - opts.start_s)
        .min(MAX_SECONDS);
    let frames_total = ((seconds * f64::from(opts.fps)).round() as u64).max(1);

    // Settings: the preset's (or the defaults), then the command line.
    let mut settings = params.settings().sanitized();
    if let Some(n) = opts.sim {
        settings.sim_resolution = n;
    }
    if let Some(n) = opts.dye {
        settings.dye_scale = n;
    }
    let backend = if opts.backend == BackendChoice::Auto {
        settings.backend
    } else {
        opts.backend
    };
    // The demo's audio goes next to PNG frames, or into a temporary file to mux into video.
    let mut temp_audio = None;
    if music.demo {
        let path = match kind {
            output::OutputKind::PngSequence => {
                std::fs::create_dir_all(&opts.out)
                    .map_err(|e| RenderError::output(&opts.out, io_problem(&e)))?;
                Some(opts.out.join("audio.wav"))
            }
            output::OutputKind::Video { .. } => {
                let p =
                    std::env::temp_dir().join(format!("dyeflow-demo-{}.wav", std::process::id()));
                temp_audio = Some(p.clone());
                Some(p)
            }
            output::OutputKind::Gif => None,
        };
        if let (Some(path), Some(audio)) = (path, &music.audio) {
            write_wav(&path, audio)?;
            music.audio_path = Some(path);
        }
    }

    let out_opts = output::OutputOptions {
        path: opts.out.clone(),
        width: opts.width,
        height: opts.height,
        fps: opts.fps,
        audio: music.audio_path.clone(),
        audio_start_s: opts.start_s,
    };
    let mut writer = match output::open(&kind, &out_opts) {
        Ok(w) => w,
        Err(e) => {
            if let Some(p) = &temp_audio {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
    };
    let (gw, gh) = grid_for(opts.width, opts.height, settings.sim_resolution);
    let mut driver = Driver::new(&params);
    let mut cfg = SimConfig::new(gw, gh);
    cfg.dye_scale = settings.dye_scale as usize;
    cfg.pressure_iterations = iterations_for(cfg.pressure, driver.discrete().pressure_iterations);
    let cfg = cfg.sanitized();
    let threads = if opts.cpu_threads > 0 {
        opts.cpu_threads
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    };
    let (mut solver, info) = create_solver(&cfg, backend, &Default::default(), threads)
        .map_err(|e| RenderError::System(e.to_string()))?;
    solver.set_measure(false);
    if backend == BackendChoice::Gpu && info.backend != "gpu" {
        notes_out.push(format!(
            "no usable GPU ({}); rendered on the CPU",
            info.fallback.as_deref().unwrap_or("unknown reason")
        ));
    }

    // Simulation pacing: whole steps per frame at about the configured rate.
    let steps_per_frame =
        ((f64::from(settings.sim_rate_hz) / f64::from(opts.fps)).round() as u64).max(1);
    let step_dt = 1.0 / (f64::from(opts.fps) * steps_per_frame as f64);
    let preroll_start = (opts.start_s - PREROLL_S).max(0.0);
    let preroll_steps = ((opts.start_s - preroll_start) / step_dt).round() as u64;

    let feed = Feed::new(music.audio.as_ref());
    let rate = feed.rate;
    let (sender, mut receiver) = queue::channel(1 << 16);
    let attack = params.envelope_attack.value();
    let release = params.envelope_release.value();
    let mut bridge = Bridge::new(sender, rate as f32, attack, release);
    let stats = bridge.stats().clone();
    // Audio time starts at the pre-roll; MIDI is shifted to match.
    let first_sample = (preroll_start * f64::from(rate)).round() as usize;
    let mut next_note = music.notes.partition_point(|n| n.time_s < preroll_start);
    let mut step_index: u64 = 0;
    let mut block: Vec<Vec<f32>> = Vec::new();
    let mut block_events: Vec<NoteEvent<()>> = Vec::new();
    let mut rgba = vec![0u8; opts.width as usize * opts.height as usize * 4];

    let mut advance =
        |solver: &mut dyn Solver, driver: &mut Driver, steps: u64, step_index: &mut u64| {
            for _ in 0..steps {
                let t0 = preroll_start + *step_index as f64 * step_dt;
                let t1 = preroll_start + (*step_index + 1) as f64 * step_dt;
                let s0 = first_sample + ((t0 - preroll_start) * f64::from(rate)).round() as usize;
                let s1 = first_sample + ((t1 - preroll_start) * f64::from(rate)).round() as usize;
                feed.block(s0, s1, &mut block);
                block_events.clear();
                while let Some(n) = music.notes.get(next_note) {
                    if n.time_s >= t1 {
                        break;
                    }
                    let offset = (((n.time_s - t0).max(0.0) * f64::from(rate)).round() as usize)
                        .min((s1 - s0).saturating_sub(1)) as u32;
                    if let Some(e) = at_offset(&n.event, offset) {
                        block_events.push(e);
                    }
                    next_note += 1;
                }
                let channels: Vec<&[f32]> = block.iter().map(Vec::as_slice).collect();
                let mut events = block_events.drain(..);
                bridge.process(&channels, None, || events.next());
                drop(events);
                receiver.drain(|e| driver.event(solver, &e));
                driver.step(solver, &params, step_dt as f32);
                *step_index += 1;
            }
        };

    let started = Instant::now();
    advance(solver.as_mut(), &mut driver, preroll_steps, &mut step_index);
    let progress = progress_bar(opts.progress, frames_total);
    let mut interrupted = false;
    for frame in 0..frames_total {
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        if frame > 0 {
            advance(
                solver.as_mut(),
                &mut driver,
                steps_per_frame,
                &mut step_index,
            );
        }
        if let Some(reason) = solver.failure() {
            return Err(RenderError::Tool(format!(
                "the GPU failed during the render: {reason}"
            )));
        }
        solver.render(
            &driver.look(),
            opts.width as usize,
            opts.height as usize,
            &mut rgba,
        );
        writer.write(&rgba)?;
        if let Some(bar) = &progress {
            bar.inc(1);
        }
    }
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    let frames = writer.frames_written();
    let output = writer.finish()?;
    if let Some(p) = temp_audio {
        let _ = std::fs::remove_file(p);
    }
    if kind == output::OutputKind::PngSequence {
        notes_out.push(format!(
            "to make a video: {}",
            output::ffmpeg_command_hint(&opts.out, opts.fps, music.audio_path.as_deref())
        ));
    }
    let dropped = stats.dropped();
    Ok(RenderSummary {
        frames,
        width: opts.width,
        height: opts.height,
        fps: opts.fps,
        wall_s: started.elapsed().as_secs_f64(),
        backend: format!("{} ({})", info.backend, info.device),
        output,
        interrupted,
        dropped_events: dropped,
        notes: notes_out,
    })
}

fn progress_bar(wanted: bool, total: u64) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !wanted || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} frames  {per_sec}  ETA {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(bar)
}

/// Write `audio` as a 32-bit float WAV.
fn write_wav(path: &Path, audio: &wav::Audio) -> Result<(), RenderError> {
    let spec = hound::WavSpec {
        channels: audio.channels.len().clamp(1, 2) as u16,
        sample_rate: audio.sample_rate,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let err = |e: hound::Error| RenderError::output(path, e.to_string());
    let mut w = hound::WavWriter::create(path, spec).map_err(err)?;
    for i in 0..audio.frames() {
        for ch in audio.channels.iter().take(2) {
            w.write_sample(ch[i]).map_err(err)?;
        }
    }
    w.finalize().map_err(err)
}
