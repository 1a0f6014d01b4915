//! A render in its stages, read top to bottom in [`render_with`]: open the inputs (the
//! arguments, a preset, a capture, obstacles, the music), plan the render (its length, pacing
//! and threads), open the output and the model, pre-roll the music before `--start`, step and
//! draw each frame into the writer, and finish (the output verified, the summary).

use super::feed::{Feed, Player};
use super::files::{self, FrameWriter, OutputKind};
use super::{InputProblem, UsageError};
use super::{
    MAX_SECONDS, Music, PREROLL_LOOK_S, PREROLL_LOOK_SCALE, PREROLL_S, RenderError, RenderOptions,
    RenderSummary, grid_for, load_music, number_text, obstacles, preset_bytes, progress,
    refuse_inputs_as_output, replay, stats, validate, wav,
};
use crate::engine::Driver;
use crate::fluid::Look;
use crate::params::{BackendChoice, DyeflowParams, Settings};
use crate::preset;
use crate::sim::{Model, ModelInfo, ModelSpec, create_model};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// [`super::render`], calling `ready` once the arguments and every input file are checked and
/// the output is open, before the simulation starts: what a command line prints about the
/// render (the demo's banner) waits for it, so bad input gets its one sentence and nothing
/// else.
pub fn render_with(
    opts: &RenderOptions,
    stop: &AtomicBool,
    ready: &mut dyn FnMut(),
) -> Result<RenderSummary, RenderError> {
    let started = Instant::now();
    let mut notes = Vec::new();
    let inputs = match Inputs::open(opts, stop, &mut notes)? {
        Open::Ready(inputs) => inputs,
        Open::Stopped(grid) => return Ok(RenderSummary::stopped(opts, started, notes, grid)),
    };
    let plan = Plan::new(opts, &inputs);
    let writer = files::open(&inputs.kind, &plan.output(opts, &inputs.music))?;
    ready();
    let mut render = match Renderer::start(opts, stop, inputs, plan, writer, notes)? {
        Open::Ready(render) => render,
        Open::Stopped((notes, grid)) => {
            return Ok(RenderSummary::stopped(opts, started, notes, grid));
        }
    };
    let stopped = !render.preroll()?;
    let setup_s = started.elapsed().as_secs_f64();
    let stopped = stopped || !render.step_and_draw()?;
    render.finish(stopped, started, setup_s)
}

/// A render stopped before its model ran: its notes so far and its grid.
type Stopped = (Vec<String>, (usize, usize));

/// What a stage gives: its result, or the grid (and whatever else) when a stop came first.
enum Open<T, S = (usize, usize)> {
    Ready(T),
    Stopped(S),
}

impl RenderSummary {
    /// A render stopped before its first frame: nothing written.
    fn stopped(
        opts: &RenderOptions,
        started: Instant,
        notes: Vec<String>,
        grid: (usize, usize),
    ) -> Self {
        Self {
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
        }
    }
}

/// The inputs, opened and checked: nothing is written before all of them are.
struct Inputs {
    kind: OutputKind,
    /// The preset's parameters (or the defaults), under a capture's state.
    params: Arc<DyeflowParams>,
    replay: Option<replay::CapturePlayer>,
    /// The preset's settings (or the defaults) and the command line's.
    settings: Settings,
    grid: (usize, usize),
    music: Music,
}

impl Inputs {
    /// The arguments checked, then each input read in turn; `notes` gets what is worth
    /// telling about them.
    fn open(
        opts: &RenderOptions,
        stop: &AtomicBool,
        notes: &mut Vec<String>,
    ) -> Result<Open<Self>, RenderError> {
        validate(opts)?;
        let kind = files::kind_for(&opts.out)?;
        refuse_inputs_as_output(opts, &kind)?;
        let params = Arc::new(DyeflowParams::default());
        apply_preset(opts, &params, notes)?;
        apply_streamlines(opts, &params)?;
        // A capture brings its own state (parameters, settings, obstacles) and events: over
        // the preset's, under the command line's.
        let replay = match opts.capture.as_deref() {
            None => None,
            Some(path) => match load_capture(path, &params, stop, notes)? {
                Some(player) => Some(player),
                None => return Ok(Open::Stopped((0, 0))),
            },
        };
        // Settings: the preset's (or the defaults), then the command line.
        let mut settings = params.settings().sanitized();
        if let Some(n) = opts.sim {
            settings.sim_resolution = n;
        }
        if let Some(n) = opts.dye {
            settings.dye_scale = n;
        }
        let grid = grid_for(opts.width, opts.height, settings.sim_resolution);
        if let Some(path) = &opts.obstacles
            && !load_obstacles(path, grid, &params, stop, notes)?
        {
            return Ok(Open::Stopped(grid));
        }
        let Some(music) = music_for(opts, replay.as_ref(), stop)? else {
            return Ok(Open::Stopped(grid));
        };
        check_length(opts, &music)?;
        Ok(Open::Ready(Self {
            kind,
            params,
            replay,
            settings,
            grid,
            music,
        }))
    }
}

/// The preset's parameters into `params`, with its notes.
fn apply_preset(
    opts: &RenderOptions,
    params: &DyeflowParams,
    notes: &mut Vec<String>,
) -> Result<(), RenderError> {
    let Some(p) = &opts.preset else {
        return Ok(());
    };
    let bytes = preset_bytes(p)?;
    let report = preset::apply(&bytes, params).map_err(|e| RenderError::input(p, e))?;
    if let Some(note) = report.version_note() {
        notes.push(format!("{}: {note}", p.display()));
    }
    if !report.unknown.is_empty() {
        notes.push(format!(
            "{}: skipped parameters this Dyeflow does not know: {}",
            p.display(),
            report.unknown.join(", ")
        ));
    }
    for note in &report.modulation_notes {
        notes.push(format!("{}: modulation: {note}", p.display()));
    }
    Ok(())
}

/// `--streamlines` into `params`, through the preset reader as a one-parameter preset: one
/// path sets parameters.
fn apply_streamlines(opts: &RenderOptions, params: &DyeflowParams) -> Result<(), RenderError> {
    let Some(mode) = opts.streamlines else {
        return Ok(());
    };
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
    preset::apply(json.as_bytes(), params)
        .map_err(|e| RenderError::input(Path::new("--streamlines"), e))?;
    Ok(())
}

/// The capture at `path`, its state set in `params`, with what it lost while it was recorded
/// in `notes`. `None` when stopped meanwhile.
fn load_capture(
    path: &Path,
    params: &DyeflowParams,
    stop: &AtomicBool,
    notes: &mut Vec<String>,
) -> Result<Option<replay::CapturePlayer>, RenderError> {
    let Some((player, loaded)) = replay::CapturePlayer::load(path, params, stop)? else {
        return Ok(None);
    };
    notes.extend(loaded);
    let (dropped, limited) = player.losses();
    if dropped > 0 {
        notes.push(format!(
            "{}: the plugin could not keep {dropped} records while capturing (a full \
             queue, or values a capture cannot hold), so this render may differ from what \
             it showed",
            path.display()
        ));
    }
    if limited {
        notes.push(format!(
            "{}: the capture reached its size limit and ends early",
            path.display()
        ));
    }
    Ok(Some(player))
}

/// The obstacles image at `path` into `params` for a `grid`. False when stopped meanwhile.
fn load_obstacles(
    path: &Path,
    grid: (usize, usize),
    params: &DyeflowParams,
    stop: &AtomicBool,
    notes: &mut Vec<String>,
) -> Result<bool, RenderError> {
    let Some(obstacles) = obstacles::obstacles_from(path, grid, stop)? else {
        return Ok(false);
    };
    if obstacles == Default::default() {
        notes.push(format!(
            "{}: nothing in it is solid (white, or opaque), so there are no obstacles",
            path.display()
        ));
    }
    params.obstacles.set(obstacles);
    Ok(true)
}

/// The music: a capture's (its events are its own; its audio, if any, only muxed), or the
/// MIDI and audio files' (or the demo's). `None` when stopped meanwhile.
fn music_for(
    opts: &RenderOptions,
    replay: Option<&replay::CapturePlayer>,
    stop: &AtomicBool,
) -> Result<Option<Music>, RenderError> {
    let Some(player) = replay else {
        return load_music(opts, stop);
    };
    // A capture's audio is only muxed, but checked as any input (a WAV, a regular file)
    // before anything is written.
    if let Some(path) = &opts.audio {
        wav::open(path)?;
    }
    Ok(Some(Music {
        notes: Vec::new(),
        // A capture carries the host's own transport.
        tempo: None,
        audio: super::feed::AudioSource::Silent,
        length_s: player.duration_s(),
        audio_out: opts.audio.clone().map(files::AudioOut::File),
    }))
}

/// A length no render may have, or a start past the end, refused.
fn check_length(opts: &RenderOptions, music: &Music) -> Result<(), RenderError> {
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
    if opts.start_s < music.length_s || opts.seconds.is_some() {
        return Ok(());
    }
    // Only a capture can be 0 s long (MIDI has its tail, WAV some audio): that is the
    // file's matter, not --start's (which the user may not have given).
    if let Some(path) = &opts.capture
        && music.length_s <= 0.0
    {
        return Err(RenderError::input(path, InputProblem::NothingToRender));
    }
    Err(UsageError::StartPastEnd {
        start_s: opts.start_s,
        length_s: music.length_s,
        what: if opts.capture.is_some() {
            "capture"
        } else {
            "music"
        },
    }
    .into())
}

/// The render's length, pacing and threads.
struct Plan {
    frames_total: u64,
    backend: BackendChoice,
    cores: usize,
    /// The CPU solver's threads.
    cpu_threads: usize,
    /// Whole simulation steps per frame, of `step_dt` seconds.
    steps_per_frame: u64,
    step_dt: f64,
    /// Where the pre-roll starts, seconds of music.
    preroll_start: f64,
}

impl Plan {
    fn new(opts: &RenderOptions, inputs: &Inputs) -> Self {
        let seconds = opts
            .seconds
            .unwrap_or(inputs.music.length_s - opts.start_s)
            .min(MAX_SECONDS);
        let frames_total = ((seconds * f64::from(opts.fps)).round() as u64).max(1);
        let backend = if opts.backend == BackendChoice::Auto {
            inputs.settings.backend
        } else {
            opts.backend
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Simulation pacing: whole steps per frame at about the configured rate.
        let steps_per_frame =
            ((f64::from(inputs.settings.sim_rate_hz) / f64::from(opts.fps)).round() as u64).max(1);
        // A capture's pre-roll can reach back before its bounce's start (the host's own
        // pre-roll), to its first sample.
        let earliest = inputs.replay.as_ref().map_or(0.0, |p| -p.origin_s());
        Self {
            frames_total,
            backend,
            cores,
            cpu_threads: if opts.cpu_threads > 0 {
                opts.cpu_threads
            } else {
                cores
            },
            steps_per_frame,
            step_dt: 1.0 / (f64::from(opts.fps) * steps_per_frame as f64),
            preroll_start: (opts.start_s - PREROLL_S).max(earliest),
        }
    }

    /// The output's options: the encoders get the cores the simulation leaves.
    fn output(&self, opts: &RenderOptions, music: &Music) -> files::OutputOptions {
        // The threads the simulation keeps busy: the CPU solver's, or the one that drives the
        // GPU (a GPU that is not there falls back to the CPU solver, whose threads then share
        // the cores with the encoders).
        let busy = if self.backend == BackendChoice::Cpu {
            self.cpu_threads
        } else {
            1
        };
        files::OutputOptions {
            path: opts.out.clone(),
            width: opts.width,
            height: opts.height,
            fps: opts.fps,
            audio: music.audio_out.clone(),
            audio_start_s: opts.start_s,
            max_frames: Some(self.frames_total),
            quality: opts.quality,
            threads: files::encoder_threads(self.cores, busy),
            stops: opts.stops.clone(),
            encoder_patience: files::ENCODER_PATIENCE,
            ffmpeg: PathBuf::from("ffmpeg"),
        }
    }
}

/// A render under way: the model, its driver, the music's feed and the output.
struct Renderer<'a> {
    opts: &'a RenderOptions,
    stop: &'a AtomicBool,
    plan: Plan,
    params: Arc<DyeflowParams>,
    notes: Vec<String>,
    kind: OutputKind,
    audio_out: Option<files::AudioOut>,
    writer: Box<dyn FrameWriter>,
    model: Box<dyn Model>,
    info: ModelInfo,
    driver: Driver,
    feed: Feed,
    progress: progress::Progress,
    picture: stats::PictureStats,
    /// The frame being written.
    rgba: Vec<u8>,
}

impl<'a> Renderer<'a> {
    /// The model made and the music's feed set at the pre-roll's start.
    fn start(
        opts: &'a RenderOptions,
        stop: &'a AtomicBool,
        inputs: Inputs,
        plan: Plan,
        writer: Box<dyn FrameWriter>,
        mut notes: Vec<String>,
    ) -> Result<Open<Self, Stopped>, RenderError> {
        let Inputs {
            kind,
            params,
            mut replay,
            mut settings,
            grid,
            music,
        } = inputs;
        // The capture's parameters before its first step, so the driver starts from them.
        if let Some(player) = &mut replay
            && !player.set_steps(plan.preroll_start, plan.step_dt, stop)?
        {
            return Ok(Open::Stopped((notes, grid)));
        }
        let mut driver = Driver::new(&params);
        if let Some(fluid) = opts.fluid {
            settings.fluid = fluid;
        }
        let (mut model, info) = make_model(&settings, grid, &plan, &driver, &mut notes)?;
        // The obstacles are in the model from the first picture on: the driver would
        // otherwise hand them over with its first step, after frame 1 (which a render from the
        // start draws before any step) showed none. The first step then finds them in place,
        // so every later frame is as before.
        driver.sync_obstacles(model.as_mut(), &params);
        let feed = match replay {
            Some(player) => Feed::Capture(Box::new(player)),
            None => Feed::Music(Box::new(Player::new(
                music.notes,
                music.tempo,
                music.audio,
                &params,
                plan.preroll_start,
                plan.step_dt,
            ))),
        };
        // The modulation's free LFOs and the adaptive dye's clock read the music's time, as
        // in a render from the start.
        driver.start_at(plan.preroll_start);
        let progress = progress::Progress::new(opts.progress, plan.frames_total, opts.fps);
        Ok(Open::Ready(Self {
            opts,
            stop,
            params,
            notes,
            kind,
            audio_out: music.audio_out,
            writer,
            model,
            info,
            driver,
            feed,
            progress,
            picture: stats::PictureStats::default(),
            rgba: vec![0u8; opts.width as usize * opts.height as usize * 4],
            plan,
        }))
    }

    /// Simulate the music before `--start`: unrendered, but with a small frame every
    /// [`PREROLL_LOOK_S`] read by the adaptive dye, so the first frame is drawn with the
    /// action it would have had in a render from the start. Whether it ran to the end (not
    /// stopped).
    fn preroll(&mut self) -> Result<bool, RenderError> {
        let (opts, plan) = (self.opts, &self.plan);
        let steps = ((opts.start_s - plan.preroll_start) / plan.step_dt).round() as u64;
        if steps == 0 {
            return Ok(true);
        }
        self.progress.note(&format!(
            "simulating the {:.1} s before --start {} (not rendered)",
            opts.start_s - plan.preroll_start,
            number_text(opts.start_s)
        ));
        let per_look = ((PREROLL_LOOK_S / plan.step_dt).round() as u64).max(1);
        let (w, h) = (
            (opts.width / PREROLL_LOOK_SCALE).max(16) as usize,
            (opts.height / PREROLL_LOOK_SCALE).max(16) as usize,
        );
        let (model, driver, params) = (self.model.as_mut(), &mut self.driver, &self.params);
        let mut small = Vec::new();
        let mut done = 0;
        while done < steps {
            let n = per_look.min(steps - done);
            if !self.feed.advance(model, driver, params, n, self.stop)? {
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

    /// Every frame: the steps before it, then drawn and written. On the GPU up to
    /// `frames_in_flight` frames are drawn and read back while the next frames' steps run,
    /// each waited for in order; the adaptive dye then reads a frame (against the look it was
    /// drawn with) one frame later than a synchronous render does (the CPU renders each frame
    /// at once). Whether it ran to the end (not stopped).
    fn step_and_draw(&mut self) -> Result<bool, RenderError> {
        let (frames_total, size) = (self.plan.frames_total, self.size());
        let in_flight = self.model.frames_in_flight();
        let mut queued: VecDeque<(u64, Look)> = VecDeque::with_capacity(in_flight);
        let mut stopped = false;
        for frame in 0..frames_total {
            // Frame 1 comes before any step: a stop that came while loading (or making the
            // model) is heard here, before anything is drawn.
            let stepped = if frame == 0 {
                !self.stop.load(Ordering::Relaxed)
            } else {
                let (model, steps) = (self.model.as_mut(), self.plan.steps_per_frame);
                let (driver, params) = (&mut self.driver, &self.params);
                self.feed.advance(model, driver, params, steps, self.stop)?
            };
            if !stepped {
                stopped = true;
                break;
            }
            if let Some(reason) = self.model.failure() {
                return Err(RenderError::Gpu(reason));
            }
            let look = self.driver.look();
            if in_flight > 0 && self.model.submit_frame(&look, size.0, size.1) {
                queued.push_back((frame, look));
            } else {
                // Those in flight first, in order, then this one at once.
                while let Some(earlier) = queued.pop_front() {
                    self.collect(earlier)?;
                }
                self.model.render(&look, size.0, size.1, &mut self.rgba);
                self.emit((frame, look))?;
            }
            while queued.len() >= in_flight.max(1) {
                let oldest = queued.pop_front().expect("a frame in flight");
                self.collect(oldest)?;
            }
            if self.stop.load(Ordering::Relaxed) && frame + 1 < frames_total {
                stopped = true;
                break;
            }
        }
        // The last frames in flight (after a stop too: they are drawn already).
        while let Some(frame) = queued.pop_front() {
            self.collect(frame)?;
        }
        Ok(!stopped)
    }

    fn size(&self) -> (usize, usize) {
        (self.opts.width as usize, self.opts.height as usize)
    }

    /// The oldest frame in flight (`frame`, counted from 0), waited for and written. One that
    /// does not come back (the device failed, or hung past the wait) ends the render with the
    /// reason, rather than leaving a black frame in the output.
    fn collect(&mut self, (frame, look): (u64, Look)) -> Result<(), RenderError> {
        if !self.model.wait_frame(&mut self.rgba) {
            return Err(RenderError::Gpu(self.model.failure().unwrap_or_else(
                || crate::sim::GpuError::Failed {
                    adapter: self.info.device.clone(),
                    message: format!("frame {} did not come back", frame + 1),
                },
            )));
        }
        self.emit((frame, look))
    }

    /// A drawn frame to the writer (its buffer comes back for the next one), after the
    /// adaptive dye and the statistics read it.
    fn emit(&mut self, (frame, look): (u64, Look)) -> Result<(), RenderError> {
        let size = self.size();
        let (rgba, params) = (&mut self.rgba, &self.params);
        self.driver
            .observe_drawn(rgba, size, params, self.model.as_ref(), &look);
        if self.opts.stats && stats::measured(frame, self.plan.frames_total) {
            self.picture.add_frame(rgba);
        }
        self.writer.write_swap(rgba)?;
        self.progress.frame();
        Ok(())
    }

    /// The output finished (verified before it replaces anything) and the render's summary.
    fn finish(
        mut self,
        stopped: bool,
        started: Instant,
        setup_s: f64,
    ) -> Result<RenderSummary, RenderError> {
        self.progress.finish();
        let frames = self.writer.frames_written();
        let output = self.writer.finish()?;
        let opts = self.opts;
        if self.kind == OutputKind::PngSequence && output.is_some() {
            let audio = self.audio_out.as_ref().map(|a| match a {
                files::AudioOut::File(p) => p.clone(),
                files::AudioOut::Generated { name, .. } => opts.out.join(name),
            });
            self.notes.push(format!(
                "to make a video: {}",
                files::ffmpeg_command_hint(&opts.out, opts.fps, audio.as_deref())
            ));
        }
        Ok(RenderSummary {
            frames,
            width: opts.width,
            height: opts.height,
            fps: opts.fps,
            grid: self.model.resolution().cells,
            wall_s: started.elapsed().as_secs_f64(),
            setup_s,
            backend: format!("{} ({})", self.info.backend, self.info.device),
            output,
            interrupted: stopped,
            dropped_events: self.feed.dropped_events(),
            notes: self.notes,
            picture: opts.stats.then_some(self.picture),
        })
    }
}

/// The model for `settings` on `grid`, on the planned backend (a GPU that is not there: the
/// CPU, with a note), with the obstacles in place from the first picture on.
fn make_model(
    settings: &Settings,
    grid: (usize, usize),
    plan: &Plan,
    driver: &Driver,
    notes: &mut Vec<String>,
) -> Result<(Box<dyn Model>, ModelInfo), RenderError> {
    let spec = ModelSpec {
        kind: settings.fluid.into(),
        cells: grid,
        detail: settings.dye_scale as usize,
        effort_sweeps: driver.discrete().pressure_iterations,
        backend: plan.backend.into(),
        gpu: Default::default(),
        cpu_threads: plan.cpu_threads,
    };
    let (model, info) = create_model(&spec).map_err(RenderError::Solver)?;
    if plan.backend == BackendChoice::Gpu && info.backend != "gpu" {
        notes.push(format!(
            "no usable GPU ({}); rendered on the CPU",
            info.fallback.as_deref().unwrap_or("unknown reason")
        ));
    }
    Ok((model, info))
}
