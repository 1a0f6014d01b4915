//! The simulation thread: owns the solver (and with it the GPU device), steps the fluid at a
//! steady rate with real, clamped time, drains the event queues once per step, reads the
//! parameters, and publishes frames to whoever asks.
//!
//! [`Engine`] is an RAII handle: dropping it stops and joins the thread, which releases the
//! GPU device.

mod backend;
mod knobs;

pub use backend::create_solver;
pub use knobs::{Discrete, KNOB_SMOOTHING_MS, Knobs, KnobsSmoother, mapping_config};

use crate::bridge::events::{SimEvent, TimedEvent};
use crate::bridge::queue::EventReceiver;
use crate::fluid::{Look, Splat};
use crate::frame::FrameInput;
use crate::mapping::{MAX_VOICES, Mapper};
use crate::params::{DyeflowParams, Settings};
#[cfg(doc)]
use crate::sim::Activity;
use crate::sim::gpu::GpuOptions;
use crate::sim::{SimConfig, Solver, SolverInfo, StepParams, iterations_for};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest wall-clock gap the simulation catches up on. A longer stall (a debugger pause, a
/// suspended laptop) is skipped rather than replayed, so the fluid never races to catch up.
pub const MAX_CATCH_UP_MS: u64 = 250;
/// Most steps run back to back before the thread publishes a frame and sleeps again. When the
/// solver cannot keep up, the backlog is dropped instead of growing (no spiral of death).
pub const MAX_STEPS_PER_WAKE: u32 = 4;
/// Longest real time one step covers when the solver is too slow for the step rate (a weak
/// GPU at a high resolution): past this the fluid slows down instead.
pub const MAX_SLOW_STEP_MS: u64 = 50;
/// How often the simulation thread looks for changed settings.
const SETTINGS_POLL_MS: u64 = 250;
/// How often the status figures are refreshed.
const STATUS_MS: u64 = 500;

/// How often the thread looks whether a started frame is ready to hand over.
const FRAME_POLL: Duration = Duration::from_micros(500);
/// How often a waiting thread looks for notes to show before the next step.
const EVENT_POLL: Duration = Duration::from_millis(1);

/// How often a thread in standby checks whether it is needed.
pub const STANDBY_POLL_MS: u64 = 20;

/// How long after the last `process()` call the host still counts as feeding the fluid. Hosts
/// call `process()` many times a second while playing, and most keep calling it while the
/// transport is stopped; one that has not called for this long has stopped.
pub const FED_TIMEOUT_MS: u64 = 1000;
/// How often a resting fluid looks for input while the host feeds it or the editor watches:
/// the extra delay of the first note after a rest is at most this (the note-to-screen target
/// is a step period, 16.7 ms at 60 Hz). One look drains the queues and reads a few atomics, a
/// few microseconds: at this rate about 0.1 % of a core.
pub const REST_POLL_MS: u64 = 4;
/// How often a fluid that no one feeds or watches looks whether that changed: the first
/// `process()` after the host stopped calling it is noticed within this.
pub const DORMANT_POLL_MS: u64 = 10;
/// How often a deactivated instance looks at all (activation and the editor also wake it at
/// once).
pub const INACTIVE_POLL_MS: u64 = 250;
/// How often a running fluid measures whether it has come to rest.
pub const ACTIVITY_PROBE_MS: u64 = 250;
/// Crashes (panics) of the simulation that the engine restarts from, on the CPU solver; after
/// that many it stops and says so.
pub const MAX_RESTARTS: u32 = 3;

/// Raises the engine's "needed" flag and counts processed blocks; cheap and realtime-safe.
#[derive(Clone)]
pub struct Waker(Arc<Shared>);

impl Waker {
    /// Audio was processed: the simulation is needed, and the host is feeding it. Two atomic
    /// operations, no lock and no system call.
    #[inline]
    pub fn wake(&self) {
        self.0.blocks.fetch_add(1, Ordering::Relaxed);
        if !self.0.needed.load(Ordering::Relaxed) {
            self.0.needed.store(true, Ordering::Release);
        }
    }
}

/// How the engine runs.
#[derive(Clone, Debug, Default)]
pub struct EngineOptions {
    /// GPU selection (tests force the CPU fallback here).
    pub gpu: GpuOptions,
    /// CPU solver threads (0: half the cores, at least one, leaving room for the host's audio).
    pub cpu_threads: usize,
    /// Faults to inject (tests of the engine's recovery only).
    #[doc(hidden)]
    pub faults: Faults,
}

/// Faults the simulation thread injects into itself, to test how the engine recovers.
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Panic when the step counter reaches this value.
    pub panic_at_step: Option<u64>,
}

/// What the engine reports to the UI.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineStatus {
    /// "gpu", "cpu", or "" before the solver exists.
    pub backend: String,
    /// The GPU adapter or the CPU thread count.
    pub device: String,
    /// Why the GPU is not in use, when it was wanted (or why no solver runs at all).
    pub fallback: Option<String>,
    /// Simulation grid and dye grid sizes.
    pub grid: (usize, usize),
    pub dye_grid: (usize, usize),
    /// Mean wall time of a step over the last status period, in ms.
    pub ms_per_step: f32,
    /// Steps, frames and events per second over the last status period.
    pub steps_per_s: f32,
    pub frames_per_s: f32,
    pub events_per_s: f32,
    /// Events dropped by full queues since the engine started.
    pub dropped_events: u64,
    /// Steps skipped because the solver could not keep up.
    pub skipped_steps: u64,
    /// The fluid is frozen.
    pub paused: bool,
    /// The fluid is at rest (or no one feeds or watches it): no steps, no frames.
    pub resting: bool,
}

/// State shared between the handle and the thread.
struct Shared {
    /// Set by the handle to stop the thread.
    stop: AtomicBool,
    /// Set when the simulation is needed; until then the thread waits without creating a
    /// solver (a host scanning the plugin never gets a GPU device made). An atomic so the
    /// audio thread can set it without locking or calling into the OS.
    needed: AtomicBool,
    /// Blocks the audio thread has processed (it adds one per `process()` call). The thread
    /// counts the host as feeding the fluid while this moves. An atomic: the audio thread
    /// writes it.
    blocks: AtomicU64,
    /// The host has the plugin activated. Written on the host's main thread (activate and
    /// deactivate); a deactivated instance sleeps whatever else happens.
    host_active: AtomicBool,
    /// Written by the simulation thread twice a second; read by the UI. A mutex is fine: the
    /// audio thread never touches it.
    status: parking_lot::Mutex<EngineStatus>,
    /// Steps taken, for tests and the status line.
    steps: AtomicU64,
    /// Frames published, for tests and the status line.
    frames: AtomicU64,
    /// Queues added after the thread started, picked up at its next wake (the lock is only
    /// tried, never waited on, by the simulation thread).
    incoming: parking_lot::Mutex<Vec<EventReceiver>>,
    /// The fluid stands still (events are still taken; frames are still drawn).
    paused: AtomicBool,
    /// The thread does no work: the fluid is at rest, or no one feeds or watches it. Written
    /// by the simulation thread.
    resting: AtomicBool,
    /// Times the simulation crashed and was restarted. Written by the simulation thread.
    restarts: AtomicU64,
}

/// The running simulation thread.
pub struct Engine {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Engine {
    /// Start the simulation thread. It creates the solver itself (the GPU device belongs to
    /// it), reads `params` every step, drains `queues` once per step and publishes to `frames`.
    pub fn start(
        params: Arc<DyeflowParams>,
        queues: Vec<EventReceiver>,
        frames: FrameInput,
        options: EngineOptions,
    ) -> std::io::Result<Self> {
        Self::spawn(params, queues, frames, options, true)
    }

    /// Start the thread in standby: it waits, creating nothing, until [`Engine::wake`].
    pub fn standby(
        params: Arc<DyeflowParams>,
        queues: Vec<EventReceiver>,
        frames: FrameInput,
        options: EngineOptions,
    ) -> std::io::Result<Self> {
        Self::spawn(params, queues, frames, options, false)
    }

    fn spawn(
        params: Arc<DyeflowParams>,
        queues: Vec<EventReceiver>,
        frames: FrameInput,
        options: EngineOptions,
        needed: bool,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            needed: AtomicBool::new(needed),
            blocks: AtomicU64::new(0),
            host_active: AtomicBool::new(true),
            status: parking_lot::Mutex::new(EngineStatus::default()),
            steps: AtomicU64::new(0),
            frames: AtomicU64::new(0),
            incoming: parking_lot::Mutex::new(Vec::new()),
            paused: AtomicBool::new(false),
            resting: AtomicBool::new(false),
            restarts: AtomicU64::new(0),
        });
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("dyeflow-sim".into())
                .spawn(move || supervise(&shared, &params, queues, frames, &options))?
        };
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// Leave standby now (from any thread but the audio thread, which uses
    /// [`Engine::waker`]).
    pub fn wake(&self) {
        self.shared.needed.store(true, Ordering::Release);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }

    /// What the audio thread calls on every `process()`: it leaves standby and tells the
    /// thread the host is feeding the fluid, with atomics only (no lock, no system call). The
    /// thread notices within [`STANDBY_POLL_MS`], or [`DORMANT_POLL_MS`] once running.
    pub fn waker(&self) -> Waker {
        Waker(self.shared.clone())
    }

    /// The host activated (`true`) or deactivated (`false`) the plugin. A deactivated
    /// instance does no work until it is activated again or its editor opens. Not for the
    /// audio thread (it wakes the simulation thread).
    pub fn set_host_active(&self, active: bool) {
        self.shared.host_active.store(active, Ordering::Release);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }

    /// Whether the fluid rests: no steps and no frames, because it is at rest and silent or
    /// because no one feeds or watches it.
    pub fn resting(&self) -> bool {
        self.shared.resting.load(Ordering::Acquire)
    }

    /// Frames published so far.
    pub fn frames_published(&self) -> u64 {
        self.shared.frames.load(Ordering::Acquire)
    }

    /// Whether the simulation runs (left standby).
    pub fn awake(&self) -> bool {
        self.shared.needed.load(Ordering::Acquire)
    }

    /// The latest status.
    pub fn status(&self) -> EngineStatus {
        self.shared.status.lock().clone()
    }

    /// Add an event queue to drain (any time; picked up at the thread's next wake).
    pub fn add_queue(&self, queue: EventReceiver) {
        self.shared.incoming.lock().push(queue);
    }

    /// Freeze or resume the fluid. While paused, events are still taken (so no queue fills up,
    /// and a note-off still ends its note) and frames are still drawn, but nothing moves and
    /// the notes emit nothing; direct splats (the mouse) still paint.
    pub fn set_paused(&self, paused: bool) {
        self.shared.paused.store(paused, Ordering::Release);
    }

    /// Whether the fluid is frozen.
    pub fn paused(&self) -> bool {
        self.shared.paused.load(Ordering::Acquire)
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u64 {
        self.shared.steps.load(Ordering::Acquire)
    }

    /// Whether the thread is still running (it only stops when told to, or after more than
    /// [`MAX_RESTARTS`] crashes).
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Times the simulation crashed and was restarted on the CPU solver.
    pub fn restarts(&self) -> u64 {
        self.shared.restarts.load(Ordering::Acquire)
    }
}

impl Drop for Engine {
    /// Stop the thread and wait for it: it ends after its current turn.
    ///
    /// NOTE: this waits for a GPU that hangs in a step. Leaving such a thread behind after a
    /// bounded wait was tried, and the host crashed: the thread was still creating its GPU
    /// device (over 100 ms on a software GPU) when clap-validator unloaded the library under
    /// it. A safe detach needs the library pinned in memory first.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            if thread.join().is_err() {
                nice_plug::nice_error!("The simulation thread panicked");
            }
        }
    }
}

fn cpu_threads(requested: usize) -> usize {
    if requested > 0 {
        return requested;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 2).max(1)
}

/// The solver configuration for `settings` and the discrete knobs.
fn sim_config(settings: &Settings, discrete: &Discrete) -> SimConfig {
    let (w, h) = settings.sim_grid();
    let mut cfg = SimConfig::new(w, h);
    cfg.dye_scale = settings.sanitized().dye_scale as usize;
    cfg.pressure_iterations = iterations_for(cfg.pressure, discrete.pressure_iterations);
    cfg.sanitized()
}

/// The solver and what it is running on.
struct Sim {
    solver: Box<dyn Solver>,
    info: SolverInfo,
    settings: Settings,
}

impl Sim {
    fn new(
        settings: Settings,
        discrete: &Discrete,
        options: &EngineOptions,
    ) -> Result<Self, crate::sim::cpu::CpuError> {
        let cfg = sim_config(&settings, discrete);
        let (mut solver, info) = create_solver(
            &cfg,
            settings.backend,
            &options.gpu,
            cpu_threads(options.cpu_threads),
        )?;
        solver.set_measure(false);
        Ok(Self {
            solver,
            info,
            settings,
        })
    }

    /// Rebuild for new settings, carrying the fluid over (resampled to the new grids). If the
    /// new solver cannot start, the old one runs on with the old settings.
    fn rebuild(&mut self, settings: Settings, discrete: &Discrete, options: &EngineOptions) {
        match Self::new(settings.clone(), discrete, options) {
            Ok(mut sim) => {
                let fields = self.solver.read_fields();
                sim.solver.write_fields(&fields);
                *self = sim;
            }
            Err(e) => {
                nice_plug::nice_error!("Keeping the current solver: {e}");
                // Do not retry every settings poll.
                self.settings = settings;
            }
        }
    }

    /// Switch to the CPU after a GPU failure, carrying the fields over where the GPU can still
    /// read them back.
    fn fall_back(&mut self, reason: String, discrete: &Discrete, options: &EngineOptions) {
        nice_plug::nice_error!("The GPU failed, switching to the CPU solver: {reason}");
        let fields = self.solver.read_fields();
        let cfg = sim_config(&self.settings, discrete);
        match crate::sim::cpu::CpuSolver::new(&cfg, cpu_threads(options.cpu_threads)) {
            Ok(cpu) => {
                self.info = SolverInfo {
                    backend: "cpu",
                    device: crate::sim::threads_label(cpu.threads()),
                    fallback: Some(reason),
                };
                self.solver = Box::new(cpu);
                self.solver.set_measure(false);
                self.solver.write_fields(&fields);
            }
            Err(e) => {
                nice_plug::nice_error!("No CPU solver either: {e}");
                self.info.fallback = Some(format!("{reason}; and {e}"));
            }
        }
    }
}

/// Everything between the event queue and the solver, shared by the engine and the offline
/// renderer so both drive the fluid identically: the mapping (notes and audio to splats),
/// the parameter smoothing and the discrete knobs.
pub struct Driver {
    mapper: Mapper,
    splats: Vec<Splat>,
    smoother: KnobsSmoother,
    discrete: Discrete,
    /// Seconds of simulation so far.
    sim_time: f64,
    /// Counts every change put into the fluid from outside (splats injected, resets), so the
    /// engine can tell whether anything happened since it last measured the fluid.
    changes: u64,
}

impl Driver {
    /// A driver starting from the current parameter values.
    pub fn new(params: &DyeflowParams) -> Self {
        Self {
            mapper: Mapper::new(),
            splats: Vec::with_capacity(2 * MAX_VOICES + 32),
            smoother: KnobsSmoother::new(Knobs::from_params(params)),
            discrete: Discrete::from_params(params),
            sim_time: 0.0,
            changes: 0,
        }
    }

    /// Take one event: notes and audio go to the mapping, splats and resets to the solver.
    pub fn event(&mut self, solver: &mut dyn Solver, event: &TimedEvent) {
        match event.event {
            SimEvent::Splat(s) => {
                solver.inject(&[s]);
                self.changes += 1;
            }
            SimEvent::Reset => {
                solver.reset();
                self.changes += 1;
                self.mapper.handle(&TimedEvent {
                    time_s: event.time_s,
                    event: SimEvent::Silence,
                });
            }
            _ => self.mapper.handle(event),
        }
    }

    /// Advance `real_dt` seconds of wall (or music) time: emit the mapping's splats, smooth the
    /// knobs and step the solver. Returns the step's simulated dt.
    pub fn step(&mut self, solver: &mut dyn Solver, params: &DyeflowParams, real_dt: f32) -> f32 {
        let d = Discrete::from_params(params);
        if d.pressure_iterations != self.discrete.pressure_iterations {
            let cfg = solver.config();
            solver.set_pressure_iterations(iterations_for(cfg.pressure, d.pressure_iterations));
        }
        self.discrete = d;
        let cfg = solver.config();
        let aspect = cfg.width as f32 / cfg.height.max(1) as f32;
        let mapping = mapping_config(params, aspect);
        let drive = self.mapper.emit(real_dt, &mapping, &mut self.splats);
        if !self.splats.is_empty() {
            solver.inject(&self.splats);
            self.changes += 1;
        }
        let knobs = self.smoother.advance(Knobs::from_params(params), real_dt);
        let mut step_params = knobs.step_params(real_dt);
        step_params.vorticity = (step_params.vorticity + drive.vorticity_boost)
            .min(crate::params::vorticity_range().unnormalize(1.0));
        solver.step(&step_params);
        self.sim_time += f64::from(step_params.dt);
        step_params.dt
    }

    /// A step's worth of waiting while paused: the events taken are kept (notes sound on, and
    /// a note-off still ends them) but the notes emit nothing and the fluid does not move;
    /// direct splats (the mouse) still paint, as in the original demo.
    pub fn idle(&mut self, solver: &mut dyn Solver) {
        solver.step(&StepParams {
            dt: 0.0,
            ..StepParams::default()
        });
    }

    /// Inject what the events taken since the last step ask for at once (note bursts, onset
    /// bursts, beat pulses) without advancing time, so they can be shown before the next step.
    /// Returns whether anything was injected.
    pub fn flush(&mut self, solver: &mut dyn Solver, params: &DyeflowParams) -> bool {
        let cfg = solver.config();
        let aspect = cfg.width as f32 / cfg.height.max(1) as f32;
        let mapping = mapping_config(params, aspect);
        self.mapper.emit(0.0, &mapping, &mut self.splats);
        if self.splats.is_empty() {
            return false;
        }
        solver.inject(&self.splats);
        self.changes += 1;
        // A step of no time applies the splats and nothing else.
        solver.step(&StepParams {
            dt: 0.0,
            ..StepParams::default()
        });
        true
    }

    /// Whether the mapping would put nothing into the fluid (see [`Mapper::quiet`]).
    pub fn quiet(&self, params: &DyeflowParams) -> bool {
        // The aspect does not matter for quietness.
        self.mapper.quiet(&mapping_config(params, 1.0))
    }

    /// Whether every knob has glided to its parameter's value and the discrete knobs are
    /// applied: nothing about the fluid's behaviour or look is still changing.
    pub fn settled(&self, params: &DyeflowParams) -> bool {
        self.smoother.settled(Knobs::from_params(params))
            && Discrete::from_params(params) == self.discrete
    }

    /// Changes put into the fluid from outside so far (splats, resets): a counter that moves
    /// whenever the fluid was stirred.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The look for frames, from the smoothed knobs.
    pub fn look(&self) -> Look {
        self.smoother.current().look(self.discrete.color_mode)
    }

    /// The smoothed knobs as of the last step.
    pub fn knobs(&self) -> Knobs {
        self.smoother.current()
    }

    /// The discrete knobs as of the last step.
    pub fn discrete(&self) -> &Discrete {
        &self.discrete
    }

    /// Simulated seconds so far.
    pub fn sim_time(&self) -> f64 {
        self.sim_time
    }

    /// The mapping (for tests and the status line).
    pub fn mapper(&self) -> &Mapper {
        &self.mapper
    }
}

/// The simulation thread: standby until needed, then the [`Runner`] until stopped.
/// The simulation thread: [`run`], restarted on the CPU solver when it crashes (a panic in a
/// solver or a driver), up to [`MAX_RESTARTS`] times. The queues and the frame output outlive
/// a crash, so the host's notes and the editor's picture carry on; the fluid starts afresh.
fn supervise(
    shared: &Shared,
    params: &DyeflowParams,
    mut queues: Vec<EventReceiver>,
    mut frames: FrameInput,
    options: &EngineOptions,
) {
    let mut crash: Option<String> = None;
    loop {
        let turn = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(
                shared,
                params,
                &mut queues,
                &mut frames,
                options,
                crash.as_deref(),
            )
        }));
        let Err(panic) = turn else {
            return;
        };
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        let restarts = shared.restarts.load(Ordering::Acquire);
        if restarts >= u64::from(MAX_RESTARTS) {
            let why = format!(
                "the simulation crashed {} times and was stopped (last: {what})",
                restarts + 1
            );
            nice_plug::nice_error!("{why}");
            shared.status.lock().fallback = Some(why);
            shared.resting.store(true, Ordering::Release);
            while !shared.stop.load(Ordering::Acquire) {
                std::thread::park_timeout(Duration::from_millis(INACTIVE_POLL_MS));
            }
            return;
        }
        shared.restarts.fetch_add(1, Ordering::AcqRel);
        let why = format!("the simulation crashed ({what}) and restarted on the CPU solver");
        nice_plug::nice_error!("{why}");
        shared.status.lock().fallback = Some(why.clone());
        crash = Some(why);
    }
}

/// Wait for the first need, create the solver (the CPU one after a `crash`, which the status
/// then names), and run until told to stop.
fn run(
    shared: &Shared,
    params: &DyeflowParams,
    queues: &mut Vec<EventReceiver>,
    frames: &mut FrameInput,
    options: &EngineOptions,
    crash: Option<&str>,
) {
    while !shared.needed.load(Ordering::Acquire) {
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        std::thread::park_timeout(Duration::from_millis(STANDBY_POLL_MS));
    }
    let driver = Driver::new(params);
    let mut sim = loop {
        let mut settings = params.settings().sanitized();
        if crash.is_some() {
            settings.backend = crate::params::BackendChoice::Cpu;
        }
        match Sim::new(settings, driver.discrete(), options) {
            Ok(sim) => break sim,
            Err(e) => {
                // The plugin passes audio through meanwhile; the editor shows why.
                nice_plug::nice_error!("The simulation cannot start: {e}");
                shared.status.lock().fallback = Some(format!("the simulation cannot start: {e}"));
                let retry = Instant::now() + Duration::from_secs(2);
                while Instant::now() < retry {
                    if shared.stop.load(Ordering::Acquire) {
                        return;
                    }
                    std::thread::park_timeout(Duration::from_millis(STANDBY_POLL_MS));
                }
            }
        }
    };
    if let Some(why) = crash {
        sim.info.fallback = Some(why.to_owned());
    }
    let now = Instant::now();
    let mut runner = Runner {
        shared,
        params,
        options,
        queues,
        frames,
        driver,
        sim,
        clock: now,
        backlog: Duration::ZERO,
        last_settings_poll: now,
        period: Period::new(now),
        skipped_steps: 0,
        frame_pending: false,
        step_cost: Duration::ZERO,
        blocks: shared.blocks.load(Ordering::Acquire),
        fed_until: now + Duration::from_millis(FED_TIMEOUT_MS),
        resting: false,
        shown: None,
        changes_shown: 0,
        last_probe: now,
    };
    runner.publish_status();
    runner.run();
}

/// The running simulation thread's state.
///
/// Each turn of [`Runner::run`] is in one of three states (see [`Activity::still`] for when
/// the fluid counts as still):
/// - **dormant**: no one feeds the fluid (the host deactivated the plugin, or has not called
///   `process()` for [`FED_TIMEOUT_MS`]) and no one watches it (no frames are wanted): no
///   steps, no frames; the thread wakes every [`DORMANT_POLL_MS`] (or [`INACTIVE_POLL_MS`]
///   when deactivated) only to look whether that changed;
/// - **resting**: fed or watched, but the fluid is still, nothing comes in that would move it
///   and every knob has settled: no steps; one frame per new frame size; a look for input
///   every [`REST_POLL_MS`];
/// - **running**: steps at the simulation rate, frames after each step, and a measurement of
///   the fluid every [`ACTIVITY_PROBE_MS`] to tell when it has come to rest.
struct Runner<'a> {
    shared: &'a Shared,
    params: &'a DyeflowParams,
    options: &'a EngineOptions,
    queues: &'a mut Vec<EventReceiver>,
    frames: &'a mut FrameInput,
    driver: Driver,
    sim: Sim,
    /// When the last turn started, and the simulated time owed since.
    clock: Instant,
    backlog: Duration,
    last_settings_poll: Instant,
    period: Period,
    skipped_steps: u64,
    /// A frame was started and not yet handed over.
    frame_pending: bool,
    /// Wall time of a step, smoothed.
    step_cost: Duration,
    /// The audio thread's block counter as last seen, and until when the host counts as
    /// feeding the fluid.
    blocks: u64,
    fed_until: Instant,
    /// Dormant or resting: no steps.
    resting: bool,
    /// The size of the last frame started (a new watcher or size gets a frame even at rest).
    shown: Option<(usize, usize)>,
    /// The driver's change counter when that frame was started.
    changes_shown: u64,
    /// When the fluid was last measured.
    last_probe: Instant,
}

impl Runner<'_> {
    fn run(&mut self) {
        while !self.shared.stop.load(Ordering::Acquire) {
            if let Some(mut incoming) = self.shared.incoming.try_lock() {
                self.queues.append(&mut incoming);
            }
            let now = Instant::now();
            let blocks = self.shared.blocks.load(Ordering::Acquire);
            if blocks != self.blocks {
                self.blocks = blocks;
                self.fed_until = now + Duration::from_millis(FED_TIMEOUT_MS);
            }
            let active = self.shared.host_active.load(Ordering::Acquire);
            let fed = active && now < self.fed_until;
            let watched = self.frames.wanted();
            if !fed && watched.is_none() {
                self.dormant(active);
            } else if !self.resting {
                self.running();
            } else if self.stirred() {
                self.set_resting(false);
                // A note (or a stroke) that wakes the fluid shows at once, as between steps;
                // the steps follow on the usual clock.
                self.show_at_once();
                self.running();
            } else {
                self.rest(watched);
            }
        }
    }

    /// The faults the tests asked for at step `steps`.
    fn inject_faults(&self, steps: u64) {
        let faults = &self.options.faults;
        if faults.panic_at_step == Some(steps) {
            panic!("an injected fault at step {steps}");
        }
    }

    fn set_resting(&mut self, resting: bool) {
        if resting != self.resting {
            self.resting = resting;
            self.shared.resting.store(resting, Ordering::Release);
            if !resting {
                // The steps start a period from now, and so do the measurements.
                let now = Instant::now();
                self.clock = now;
                self.backlog = Duration::ZERO;
                self.last_probe = now;
            }
        }
    }

    fn step_period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / f64::from(self.sim.settings.sim_rate_hz.max(1)))
    }

    /// Take every queued event; returns whether any came.
    fn drain(&mut self) -> bool {
        let mut n = 0;
        for queue in self.queues.iter_mut() {
            let solver = self.sim.solver.as_mut();
            let driver = &mut self.driver;
            n += queue.drain(|e| driver.event(solver, &e));
        }
        self.period.events += n as u64;
        n > 0
    }

    /// Sleep a little, then start the next turn with nothing owed.
    fn doze(&mut self, poll: Duration) {
        std::thread::park_timeout(poll);
        self.clock = Instant::now();
        self.backlog = Duration::ZERO;
    }

    /// No one feeds or watches: take the events (so no queue fills up), keep the status
    /// fresh, and sleep.
    fn dormant(&mut self, host_active: bool) {
        self.drain();
        self.set_resting(true);
        // Whoever watches next gets a fresh frame.
        self.shown = None;
        self.housekeeping();
        self.doze(Duration::from_millis(if host_active {
            DORMANT_POLL_MS
        } else {
            INACTIVE_POLL_MS
        }));
    }

    /// Resting: whether anything came in or changed that moves or changes the fluid.
    fn stirred(&mut self) -> bool {
        let before = self.driver.changes();
        self.drain();
        let paused = self.shared.paused.load(Ordering::Acquire);
        self.driver.changes() != before
            || !(paused || self.driver.quiet(self.params))
            || !self.driver.settled(self.params)
    }

    /// Resting and nothing stirs: hand over one frame per new watcher or size, then sleep.
    fn rest(&mut self, watched: Option<(usize, usize)>) {
        if self.frame_pending {
            self.publish_frame();
        } else if let Some((w, h)) = watched
            && self.shown != Some((w, h))
        {
            self.request_frame(w, h);
            self.publish_frame();
        }
        if self.housekeeping() {
            // New settings: show the fluid on its new grid.
            self.shown = None;
        }
        self.doze(if self.frame_pending {
            FRAME_POLL
        } else {
            Duration::from_millis(REST_POLL_MS)
        });
    }

    /// Inject what the events taken ask for at once (note and onset bursts, direct splats)
    /// without advancing time, and start a frame of it, when someone watches. Whether a frame
    /// was started.
    fn show_at_once(&mut self) -> bool {
        if !self.driver.flush(self.sim.solver.as_mut(), self.params)
            && self.driver.changes() != self.changes_shown
        {
            // Direct splats (the mouse) wait in the solver: a step of no time applies them.
            self.driver.idle(self.sim.solver.as_mut());
        }
        if !self.frame_pending
            && let Some((w, h)) = self.frames.wanted()
            && (self.driver.changes() != self.changes_shown || self.shown != Some((w, h)))
        {
            self.request_frame(w, h);
            self.publish_frame();
            return true;
        }
        false
    }

    /// Start a frame of `w x h` (the solver may refuse when its readback buffers are busy).
    fn request_frame(&mut self, w: usize, h: usize) {
        if self.sim.solver.request_frame(&self.driver.look(), w, h) {
            self.frame_pending = true;
            self.shown = Some((w, h));
            self.changes_shown = self.driver.changes();
        }
    }

    /// Hand over the pending frame if it is ready.
    fn publish_frame(&mut self) {
        let solver = &mut self.sim.solver;
        if self
            .frames
            .publish_from(self.driver.sim_time(), |pixels| solver.take_frame(pixels))
        {
            self.period.frames += 1;
            self.frame_pending = false;
            self.shared.frames.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// One turn of stepping: the steps owed, a frame, the wait for the next step (showing a
    /// note that arrives meanwhile at once), and now and then a look whether the fluid rests.
    fn running(&mut self) {
        let paused = self.shared.paused.load(Ordering::Acquire);
        let step = self.step_period();
        let now = Instant::now();
        self.backlog += (now - self.clock).min(Duration::from_millis(MAX_CATCH_UP_MS));
        self.clock = now;

        // A solver that needs more than half a period per step cannot catch up by stepping
        // more: it takes one longer step (real time, up to MAX_SLOW_STEP_MS) per wake, so the
        // fluid keeps real-time speed and every step still shows. Otherwise steps are fixed
        // and a short stall is caught up, a few steps at most.
        let slow = self.step_cost > step / 2;
        let mut ran = 0;
        while self.backlog >= step && ran < MAX_STEPS_PER_WAKE && !(slow && ran > 0) {
            let t0 = Instant::now();
            self.drain();
            let dt = if slow {
                self.backlog
                    .min(Duration::from_millis(MAX_SLOW_STEP_MS))
                    .max(step)
            } else {
                step
            };
            if paused {
                self.driver.idle(self.sim.solver.as_mut());
            } else {
                self.driver
                    .step(self.sim.solver.as_mut(), self.params, dt.as_secs_f32());
            }
            if let Some(reason) = self.sim.solver.failure() {
                self.sim
                    .fall_back(reason, self.driver.discrete(), self.options);
            }
            self.backlog = self.backlog.saturating_sub(dt);
            ran += 1;
            let cost = t0.elapsed();
            self.step_cost = (self.step_cost * 3 + cost) / 4;
            self.period.steps += 1;
            self.period.step_time += cost;
            let steps = self.shared.steps.fetch_add(1, Ordering::AcqRel) + 1;
            self.inject_faults(steps);
        }
        if self.backlog >= step {
            // Could not keep up: drop the backlog rather than chase it.
            self.skipped_steps += (self.backlog.as_secs_f64() / step.as_secs_f64()) as u64;
            self.backlog = Duration::ZERO;
        }

        // Frames: one is started after the steps, and handed over as soon as it is ready (at
        // once on the CPU; when the readback lands on the GPU), polling while waiting for the
        // next step, so a note shows within one step period plus the hand-off.
        if ran > 0
            && let Some((w, h)) = self.frames.wanted()
        {
            self.request_frame(w, h);
        }
        //
        // While waiting, a note-on or onset that arrives is shown at once: its burst is
        // injected and an extra frame rendered without a step (at most one per step period,
        // so dense playing never doubles the render load for long).
        let mut early_frame = false;
        loop {
            if self.frame_pending {
                self.publish_frame();
            }
            let wait = step
                .saturating_sub(self.backlog)
                .saturating_sub(self.clock.elapsed());
            if wait.is_zero() || self.shared.stop.load(Ordering::Acquire) {
                break;
            }
            if !early_frame
                && !paused
                && !self.frame_pending
                && self.frames.wanted().is_some()
                && self
                    .queues
                    .iter_mut()
                    .any(|q| q.any(|e| shows_at_once(&e.event)))
            {
                early_frame = true;
                self.drain();
                self.show_at_once();
                continue;
            }
            std::thread::park_timeout(wait.min(if self.frame_pending {
                FRAME_POLL
            } else {
                EVENT_POLL
            }));
        }

        if self.clock - self.last_probe >= Duration::from_millis(ACTIVITY_PROBE_MS) {
            self.last_probe = self.clock;
            if self.at_rest(paused) {
                self.set_resting(true);
            }
        }
        self.housekeeping();
    }

    /// Measure the fluid (without waiting): at rest when it is still, nothing was put into it
    /// since the measurement started, nothing is about to be (the mapping is quiet), and every
    /// knob has settled.
    fn at_rest(&mut self, paused: bool) -> bool {
        let changes = self.driver.changes();
        let measured = self.sim.solver.probe_activity(changes);
        let knobs = self.driver.knobs();
        // Frozen (paused, or speed 0): nothing moves whatever the velocity.
        let frozen = paused || knobs.speed <= 0.0;
        // Dye that fades or blurs still changes the picture while it shows.
        let fading = knobs.dye_dissipation > 0.0 || knobs.dye_diffusion > 0.0;
        let look = self.driver.look();
        let still =
            frozen || measured.is_some_and(|(tag, a)| tag == changes && a.still(&look, fading));
        still && (paused || self.driver.quiet(self.params)) && self.driver.settled(self.params)
    }

    /// New settings (polled) and the status line (refreshed). Returns whether the solver was
    /// rebuilt.
    fn housekeeping(&mut self) -> bool {
        let now = Instant::now();
        let mut rebuilt = false;
        if now - self.last_settings_poll >= Duration::from_millis(SETTINGS_POLL_MS) {
            self.last_settings_poll = now;
            let settings = self.params.settings().sanitized();
            if settings != self.sim.settings {
                self.sim
                    .rebuild(settings, self.driver.discrete(), self.options);
                rebuilt = true;
            }
        }
        if now - self.period.start >= Duration::from_millis(STATUS_MS) {
            self.publish_status();
            self.period = Period::new(now);
        }
        rebuilt
    }

    fn publish_status(&self) {
        let period = &self.period;
        let sim = &self.sim;
        let secs = period.start.elapsed().as_secs_f32().max(1e-3);
        let cfg = sim.solver.config();
        let status = EngineStatus {
            backend: sim.info.backend.to_owned(),
            device: sim.info.device.clone(),
            fallback: sim.info.fallback.clone(),
            grid: (cfg.width, cfg.height),
            dye_grid: (cfg.dye_width(), cfg.dye_height()),
            ms_per_step: if period.steps > 0 {
                period.step_time.as_secs_f32() * 1e3 / period.steps as f32
            } else {
                0.0
            },
            steps_per_s: period.steps as f32 / secs,
            frames_per_s: period.frames as f32 / secs,
            events_per_s: period.events as f32 / secs,
            dropped_events: self.queues.iter().map(|q| q.stats().dropped()).sum(),
            skipped_steps: self.skipped_steps,
            paused: self.shared.paused.load(Ordering::Acquire),
            resting: self.resting,
        };
        *self.shared.status.lock() = status;
    }
}

/// Events worth an extra frame before the next step: the ones that look like a hit.
fn shows_at_once(e: &SimEvent) -> bool {
    matches!(
        e,
        SimEvent::NoteOn { .. } | SimEvent::Onset { .. } | SimEvent::Splat(_)
    )
}

/// Counters of one status period.
struct Period {
    start: Instant,
    steps: u64,
    frames: u64,
    events: u64,
    step_time: Duration,
}

impl Period {
    fn new(start: Instant) -> Self {
        Self {
            start,
            steps: 0,
            frames: 0,
            events: 0,
            step_time: Duration::ZERO,
        }
    }
}

/// The plugin's engine: its thread waits in standby from activation on and starts simulating
/// on first need (audio processed, or the editor opened), never while a host merely scans the
/// plugin. Shared by the plugin and the editor; a mutex is fine here because the audio thread
/// only ever uses the [`Waker`].
pub struct LazyEngine {
    params: Arc<DyeflowParams>,
    options: EngineOptions,
    inner: parking_lot::Mutex<LazyInner>,
}

struct LazyInner {
    engine: Option<Engine>,
    /// Queues and the frame producer waiting for the thread.
    queues: Vec<EventReceiver>,
    frames: Option<FrameInput>,
    paused: bool,
    host_active: bool,
}

impl LazyEngine {
    /// A handle that will run the engine with `frames` as its output.
    pub fn new(params: Arc<DyeflowParams>, frames: FrameInput, options: EngineOptions) -> Self {
        Self {
            params,
            options,
            inner: parking_lot::Mutex::new(LazyInner {
                engine: None,
                queues: Vec::new(),
                frames: Some(frames),
                paused: false,
                host_active: true,
            }),
        }
    }

    /// Give the engine an event queue to drain (before or after its thread starts).
    pub fn add_queue(&self, queue: EventReceiver) {
        let mut inner = self.inner.lock();
        match &inner.engine {
            Some(engine) => engine.add_queue(queue),
            None => inner.queues.push(queue),
        }
    }

    /// Freeze or resume the fluid (see [`Engine::set_paused`]); remembered until the thread
    /// exists.
    pub fn set_paused(&self, paused: bool) {
        let mut inner = self.inner.lock();
        inner.paused = paused;
        if let Some(engine) = &inner.engine {
            engine.set_paused(paused);
        }
    }

    /// Whether the fluid is frozen.
    pub fn paused(&self) -> bool {
        self.inner.lock().paused
    }

    /// The host activated or deactivated the plugin (see [`Engine::set_host_active`]);
    /// remembered until the thread exists. Host main thread only.
    pub fn set_host_active(&self, active: bool) {
        let mut inner = self.inner.lock();
        inner.host_active = active;
        if let Some(engine) = &inner.engine {
            engine.set_host_active(active);
        }
    }

    /// Whether the simulation rests (see [`Engine::resting`]); `false` before it runs.
    pub fn resting(&self) -> bool {
        self.inner
            .lock()
            .engine
            .as_ref()
            .is_some_and(Engine::resting)
    }

    /// Spawn the thread in standby (idempotent) and return the waker the audio thread uses.
    /// `None` if no thread could be spawned (logged; the plugin keeps passing audio through).
    pub fn standby(&self) -> Option<Waker> {
        let mut inner = self.inner.lock();
        if let Some(engine) = &inner.engine {
            return Some(engine.waker());
        }
        let frames = inner.frames.take()?;
        let queues = std::mem::take(&mut inner.queues);
        match Engine::standby(self.params.clone(), queues, frames, self.options.clone()) {
            Ok(engine) => {
                let waker = engine.waker();
                engine.set_paused(inner.paused);
                engine.set_host_active(inner.host_active);
                inner.engine = Some(engine);
                Some(waker)
            }
            Err(e) => {
                nice_plug::nice_error!("Could not start the simulation thread: {e}");
                None
            }
        }
    }

    /// Make sure the simulation runs now (the editor opened). Never on the audio thread.
    pub fn ensure_running(&self) -> bool {
        self.standby();
        match &self.inner.lock().engine {
            Some(engine) => {
                engine.wake();
                true
            }
            None => false,
        }
    }

    /// Whether the simulation runs (out of standby).
    pub fn running(&self) -> bool {
        self.inner.lock().engine.as_ref().is_some_and(Engine::awake)
    }

    /// The engine's status, once its thread exists.
    pub fn status(&self) -> Option<EngineStatus> {
        self.inner.lock().engine.as_ref().map(Engine::status)
    }

    /// Stop the engine (also done on drop).
    pub fn stop(&self) {
        let engine = self.inner.lock().engine.take();
        drop(engine);
    }
}
