//! The simulation thread: owns the solver (and with it the GPU device), steps the fluid at a
//! steady rate with real, clamped time, drains the event queues once per step, reads the
//! parameters, and publishes frames to whoever asks.
//!
//! [`Engine`] is an RAII handle: dropping it stops and joins the thread, which releases the
//! GPU device.

use crate::bridge::events::{SimEvent, TimedEvent};
use crate::bridge::queue::EventReceiver;
use crate::frame::FrameInput;
use crate::mapping::{MAX_VOICES, Mapper, MappingConfig};
use crate::params::{DyeflowParams, Settings};
use crate::sim::gpu::GpuOptions;
use crate::sim::{
    Discrete, Knobs, KnobsSmoother, Look, SimConfig, Solver, SolverInfo, Splat, StepParams,
    create_solver, iterations_for,
};
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

/// Raises the engine's "needed" flag; cheap and realtime-safe.
#[derive(Clone)]
pub struct Waker(Arc<Shared>);

impl Waker {
    /// Ask the engine to run.
    #[inline]
    pub fn wake(&self) {
        self.0.needed.store(true, Ordering::Release);
    }
}

/// How the engine runs.
#[derive(Clone, Debug, Default)]
pub struct EngineOptions {
    /// GPU selection (tests force the CPU fallback here).
    pub gpu: GpuOptions,
    /// CPU solver threads (0: half the cores, at least one, leaving room for the host's audio).
    pub cpu_threads: usize,
}

/// What the engine reports to the UI.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineStatus {
    /// "gpu", "cpu", or "" before the solver exists.
    pub backend: String,
    /// The GPU adapter or the CPU thread count.
    pub device: String,
    /// Why the GPU is not in use, when it was wanted.
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
}

/// State shared between the handle and the thread.
struct Shared {
    /// Set by the handle to stop the thread.
    stop: AtomicBool,
    /// Set when the simulation is needed; until then the thread waits without creating a
    /// solver (a host scanning the plugin never gets a GPU device made). An atomic so the
    /// audio thread can set it without locking or calling into the OS.
    needed: AtomicBool,
    /// Written by the simulation thread twice a second; read by the UI. A mutex is fine: the
    /// audio thread never touches it.
    status: parking_lot::Mutex<EngineStatus>,
    /// Steps taken, for tests and the status line.
    steps: AtomicU64,
    /// Queues added after the thread started, picked up at its next wake (the lock is only
    /// tried, never waited on, by the simulation thread).
    incoming: parking_lot::Mutex<Vec<EventReceiver>>,
    /// The fluid stands still (events are still taken; frames are still drawn).
    paused: AtomicBool,
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
            status: parking_lot::Mutex::new(EngineStatus::default()),
            steps: AtomicU64::new(0),
            incoming: parking_lot::Mutex::new(Vec::new()),
            paused: AtomicBool::new(false),
        });
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("dyeflow-sim".into())
                .spawn(move || run(&shared, &params, queues, frames, &options))?
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

    /// A flag the audio thread can raise to leave standby: a plain atomic store, no lock, no
    /// system call. The thread notices within [`STANDBY_POLL_MS`].
    pub fn waker(&self) -> Waker {
        Waker(self.shared.clone())
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

    /// Whether the thread is still running (it only stops when told to, or if it panicked).
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for Engine {
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
    fn new(settings: Settings, discrete: &Discrete, options: &EngineOptions) -> Self {
        let cfg = sim_config(&settings, discrete);
        let (mut solver, info) = create_solver(
            &cfg,
            settings.backend,
            &options.gpu,
            cpu_threads(options.cpu_threads),
        );
        solver.set_measure(false);
        Self {
            solver,
            info,
            settings,
        }
    }

    /// Rebuild for new settings, carrying the fluid over (resampled to the new grids).
    fn rebuild(&mut self, settings: Settings, discrete: &Discrete, options: &EngineOptions) {
        let fields = self.solver.read_fields();
        *self = Self::new(settings, discrete, options);
        self.solver.write_fields(&fields);
    }

    /// Switch to the CPU after a GPU failure, carrying the fields over where the GPU can still
    /// read them back.
    fn fall_back(&mut self, reason: String, discrete: &Discrete, options: &EngineOptions) {
        nice_plug::nice_error!("The GPU failed, switching to the CPU solver: {reason}");
        let fields = self.solver.read_fields();
        let cfg = sim_config(&self.settings, discrete);
        let cpu = crate::sim::cpu::CpuSolver::new(&cfg, cpu_threads(options.cpu_threads));
        self.info = SolverInfo {
            backend: "cpu",
            device: crate::sim::threads_label(cpu.threads()),
            fallback: Some(reason),
        };
        self.solver = Box::new(cpu);
        self.solver.set_measure(false);
        self.solver.write_fields(&fields);
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
        }
    }

    /// Take one event: notes and audio go to the mapping, splats and resets to the solver.
    pub fn event(&mut self, solver: &mut dyn Solver, event: &TimedEvent) {
        match event.event {
            SimEvent::Splat(s) => solver.inject(&[s]),
            SimEvent::Reset => {
                solver.reset();
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
        let mapping = MappingConfig::from_params(params, aspect);
        let drive = self.mapper.emit(real_dt, &mapping, &mut self.splats);
        if !self.splats.is_empty() {
            solver.inject(&self.splats);
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
        let mapping = MappingConfig::from_params(params, aspect);
        self.mapper.emit(0.0, &mapping, &mut self.splats);
        if self.splats.is_empty() {
            return false;
        }
        solver.inject(&self.splats);
        // A step of no time applies the splats and nothing else.
        solver.step(&StepParams {
            dt: 0.0,
            ..StepParams::default()
        });
        true
    }

    /// The look for frames, from the smoothed knobs.
    pub fn look(&self) -> Look {
        self.smoother.current().look(self.discrete.color_mode)
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

fn run(
    shared: &Shared,
    params: &DyeflowParams,
    mut queues: Vec<EventReceiver>,
    mut frames: FrameInput,
    options: &EngineOptions,
) {
    while !shared.needed.load(Ordering::Acquire) {
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        std::thread::park_timeout(Duration::from_millis(STANDBY_POLL_MS));
    }
    let mut driver = Driver::new(params);
    let mut sim = Sim::new(params.settings().sanitized(), driver.discrete(), options);
    let mut clock = Instant::now();
    let mut backlog = Duration::ZERO;
    let mut last_settings_poll = clock;
    let mut period = Period::new(clock);
    let mut skipped_steps = 0u64;
    let mut frame_pending = false;
    // Wall time of a step, smoothed.
    let mut step_cost = Duration::ZERO;
    publish_status(shared, &sim, &period, &queues, skipped_steps);

    while !shared.stop.load(Ordering::Acquire) {
        if let Some(mut incoming) = shared.incoming.try_lock() {
            queues.append(&mut incoming);
        }
        let paused = shared.paused.load(Ordering::Acquire);
        let step = Duration::from_secs_f64(1.0 / f64::from(sim.settings.sim_rate_hz.max(1)));
        let now = Instant::now();
        backlog += (now - clock).min(Duration::from_millis(MAX_CATCH_UP_MS));
        clock = now;

        // A solver that needs more than half a period per step cannot catch up by stepping
        // more: it takes one longer step (real time, up to MAX_SLOW_STEP_MS) per wake, so the
        // fluid keeps real-time speed and every step still shows. Otherwise steps are fixed
        // and a short stall is caught up, a few steps at most.
        let slow = step_cost > step / 2;
        let mut ran = 0;
        while backlog >= step && ran < MAX_STEPS_PER_WAKE && !(slow && ran > 0) {
            let t0 = Instant::now();
            for queue in &mut queues {
                let solver = sim.solver.as_mut();
                period.events += queue.drain(|e| driver.event(solver, &e)) as u64;
            }
            let dt = if slow {
                backlog
                    .min(Duration::from_millis(MAX_SLOW_STEP_MS))
                    .max(step)
            } else {
                step
            };
            if paused {
                driver.idle(sim.solver.as_mut());
            } else {
                driver.step(sim.solver.as_mut(), params, dt.as_secs_f32());
            }
            if let Some(reason) = sim.solver.failure() {
                sim.fall_back(reason, driver.discrete(), options);
            }
            backlog = backlog.saturating_sub(dt);
            ran += 1;
            let cost = t0.elapsed();
            step_cost = (step_cost * 3 + cost) / 4;
            period.steps += 1;
            period.step_time += cost;
            shared.steps.fetch_add(1, Ordering::AcqRel);
        }
        if backlog >= step {
            // Could not keep up: drop the backlog rather than chase it.
            skipped_steps += (backlog.as_secs_f64() / step.as_secs_f64()) as u64;
            backlog = Duration::ZERO;
        }

        // Frames: one is started after the steps, and handed over as soon as it is ready (at
        // once on the CPU; when the readback lands on the GPU), polling while waiting for the
        // next step, so a note shows within one step period plus the hand-off.
        if ran > 0
            && let Some((w, h)) = frames.wanted()
            && sim.solver.request_frame(&driver.look(), w, h)
        {
            frame_pending = true;
        }
        //
        // While waiting, a note-on or onset that arrives is shown at once: its burst is
        // injected and an extra frame rendered without a step (at most one per step period,
        // so dense playing never doubles the render load for long).
        let mut early_frame = false;
        loop {
            if frame_pending {
                let solver = &mut sim.solver;
                if frames.publish_from(driver.sim_time(), |pixels| solver.take_frame(pixels)) {
                    period.frames += 1;
                    frame_pending = false;
                }
            }
            let wait = step.saturating_sub(backlog).saturating_sub(clock.elapsed());
            if wait.is_zero() || shared.stop.load(Ordering::Acquire) {
                break;
            }
            if !early_frame
                && !paused
                && !frame_pending
                && frames.wanted().is_some()
                && queues
                    .iter_mut()
                    .any(|q| q.any(|e| shows_at_once(&e.event)))
            {
                early_frame = true;
                for queue in &mut queues {
                    let solver = sim.solver.as_mut();
                    period.events += queue.drain(|e| driver.event(solver, &e)) as u64;
                }
                if driver.flush(sim.solver.as_mut(), params)
                    && let Some((w, h)) = frames.wanted()
                    && sim.solver.request_frame(&driver.look(), w, h)
                {
                    frame_pending = true;
                }
                continue;
            }
            std::thread::park_timeout(wait.min(if frame_pending {
                FRAME_POLL
            } else {
                EVENT_POLL
            }));
        }

        if clock - last_settings_poll >= Duration::from_millis(SETTINGS_POLL_MS) {
            last_settings_poll = clock;
            let settings = params.settings().sanitized();
            if settings != sim.settings {
                sim.rebuild(settings, driver.discrete(), options);
            }
        }
        if clock - period.start >= Duration::from_millis(STATUS_MS) {
            publish_status(shared, &sim, &period, &queues, skipped_steps);
            period = Period::new(clock);
        }
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

fn publish_status(
    shared: &Shared,
    sim: &Sim,
    period: &Period,
    queues: &[EventReceiver],
    skipped_steps: u64,
) {
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
        dropped_events: queues.iter().map(|q| q.stats().dropped()).sum(),
        skipped_steps,
        paused: shared.paused.load(Ordering::Acquire),
    };
    *shared.status.lock() = status;
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
