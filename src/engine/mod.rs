//! The simulation thread: owns the fluid model (and with it the GPU device), steps the fluid at a
//! steady rate with real, clamped time, drains the event queues once per step, reads the
//! parameters, and publishes frames to whoever asks.
//!
//! [`Engine`] is an RAII handle: dropping it stops and joins the thread, which releases the
//! GPU device.

pub mod adaptive;
pub mod chroma;
mod driver;
mod knobs;
mod lazy;
pub mod modulation;
pub mod obstacles;
pub mod osc;
use crate::pin;
mod runner;
mod sim;

pub use chroma::ChromaThread;
pub use driver::Driver;
pub use knobs::{
    Discrete, KNOB_SMOOTHING_MS, Knobs, KnobsSmoother, MAPPED, mapped_params, mapping_config,
    mapping_config_modulated,
};
pub use lazy::LazyEngine;

use crate::bridge::events::{SimEvent, TimedEvent};
use crate::bridge::queue::EventReceiver;
use crate::fluid::{Look, Splat};
use crate::frame::FrameInput;
use crate::mapping::{MAX_VOICES, Mapper};
use crate::params::{DyeflowParams, Settings};
#[cfg(doc)]
use crate::sim::Activity;
use crate::sim::{Backend, GpuOptions, Model, ModelInfo, ModelSpec, StepInput, create_model};
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
/// Longest an [`Engine`]'s drop waits for its thread. A thread still busy then (a GPU hung in
/// a step, a device still being created) is left to end on its own, with the library pinned
/// in memory (see `pin.rs`): the host's thread never waits on a GPU.
pub const DROP_WAIT_MS: u64 = 100;
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
    /// Called on the simulation thread whenever it polls the project's settings (every
    /// 250 ms while it runs or rests): the output window follows the project through it, so a
    /// project loaded with the editor closed still opens or closes it.
    pub on_settings_poll: Option<SettingsHook>,
    /// Where OSC's splats are recorded while a capture is on (the editor records its own).
    pub input_tap: Option<Arc<crate::capture::InputTap>>,
    /// Times the path of a note through the simulation thread (`dyeflow bench --latency`).
    pub trace: Option<Arc<StageTrace>>,
}

/// When a note reached each stage of the simulation thread, for `dyeflow bench --latency`:
/// after [`StageTrace::arm`], the first note-on taken from a queue, the end of the step (or the
/// step of no time) that put it into the fluid, and the hand-over of the first frame started
/// after that. Atomics the simulation thread stores and the bench reads; the thread touches
/// them only when an engine was started with a trace.
#[derive(Debug)]
pub struct StageTrace {
    origin: Instant,
    /// Nanoseconds after `origin` (0: not yet) of each stage, in order.
    stamps: [std::sync::atomic::AtomicU64; 3],
    /// Raised by each [`StageTrace::arm`]: a stage of an earlier note, reached late, is not
    /// stamped on this one's.
    generation: std::sync::atomic::AtomicU64,
}

/// A stage of a note's path (see [`StageTrace`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteStage {
    /// A note-on was taken from its queue.
    Drained = 0,
    /// The step that put it into the fluid ended.
    Applied = 1,
    /// The first frame started after that was ready to hand over (the consumer may see it at
    /// once).
    Published = 2,
}

impl Default for StageTrace {
    fn default() -> Self {
        Self {
            origin: Instant::now(),
            stamps: Default::default(),
            generation: Default::default(),
        }
    }
}

impl StageTrace {
    /// Forget the last note's stages: the next note-on is traced.
    pub fn arm(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        for s in &self.stamps {
            s.store(0, Ordering::Release);
        }
    }

    /// The current arming (see [`StageTrace::arm`]).
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// When `stage` was reached, if it was.
    pub fn at(&self, stage: NoteStage) -> Option<Instant> {
        let ns = self.stamps[stage as usize].load(Ordering::Acquire);
        (ns > 0).then(|| self.origin + Duration::from_nanos(ns))
    }

    /// `stage` of the note traced since arming `generation` was reached `at`, if the stage
    /// before it was and it was not yet.
    fn reach(&self, stage: NoteStage, at: Instant, generation: u64) {
        if self.generation() != generation {
            return;
        }
        let i = stage as usize;
        let before = i
            .checked_sub(1)
            .is_none_or(|b| self.stamps[b].load(Ordering::Acquire) > 0);
        if before && self.stamps[i].load(Ordering::Acquire) == 0 {
            let ns = (at.saturating_duration_since(self.origin))
                .as_nanos()
                .max(1) as u64;
            self.stamps[i].store(ns, Ordering::Release);
        }
    }
}

/// A function the simulation thread calls at each settings poll; it must not block.
#[derive(Clone)]
pub struct SettingsHook(pub Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for SettingsHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SettingsHook")
    }
}

/// Faults the simulation thread injects into itself, to test how the engine recovers.
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Panic when the step counter reaches this value.
    pub panic_at_step: Option<u64>,
    /// Hang (sleep, as a GPU stuck in a step would) for this long when the step counter
    /// reaches the first value.
    pub hang_at_step: Option<(u64, Duration)>,
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
    /// Note-ons taken since the engine started (the editor's first-run hint goes away at
    /// the first).
    pub notes: u64,
    /// The fluid is frozen.
    pub paused: bool,
    /// The fluid is at rest (or no one feeds or watches it): no steps, no frames.
    pub resting: bool,
    /// OSC in: where it listens and what it took, or why it cannot (`None`: off).
    pub osc: Option<String>,
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
                .spawn(move || runner::supervise(&shared, &params, queues, frames, &options))?
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
    /// Stop the thread and wait for it, at most [`DROP_WAIT_MS`]: it ends after its current
    /// turn. A thread still busy then (a GPU hung in a step, a device still being created) is
    /// detached and ends on its own; it owns everything it uses, and the library it runs in is
    /// pinned first, so a host that unloads the plugin right after cannot pull the code from
    /// under it. Where pinning fails, the drop waits for the thread instead.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        let Some(thread) = self.thread.take() else {
            return;
        };
        thread.thread().unpark();
        pin::join_within(thread, DROP_WAIT_MS, "The simulation thread");
    }
}
