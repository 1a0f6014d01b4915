//! The plugin's handle on the engine: the thread is spawned in standby and simulates on first
//! need.

use super::*;

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
