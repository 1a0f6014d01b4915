//! The simulation thread itself: its supervisor (restarts after a crash), its start, and the
//! [`Runner`] loop (dormant, resting, running).

use super::osc::OscServer;
use super::sim::Sim;
use super::*;
use crate::params::OscSettings;

/// Splats the OSC thread can queue between two turns of the simulation thread.
const OSC_QUEUE_EVENTS: usize = 1024;

/// The simulation thread: [`run`], restarted on the CPU solver when it crashes (a panic in a
/// solver or a driver), up to [`MAX_RESTARTS`] times. The queues and the frame output outlive
/// a crash, so the host's notes and the editor's picture carry on; the fluid starts afresh.
pub(super) fn supervise(
    shared: &Shared,
    params: &Arc<DyeflowParams>,
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
    params: &Arc<DyeflowParams>,
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
    let sim = loop {
        let settings = params.settings().sanitized();
        match Sim::new(
            settings,
            driver.discrete(),
            options,
            crash.map(str::to_owned),
        ) {
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
        notes: 0,
        frame_pending: false,
        trace_next_frame: false,
        traced_frame: false,
        trace_generation: 0,
        step_cost: Duration::ZERO,
        blocks: shared.blocks.load(Ordering::Acquire),
        fed_until: now + Duration::from_millis(FED_TIMEOUT_MS),
        resting: false,
        shown: None,
        watchers: 0,
        changes_shown: 0,
        last_probe: now,
        osc_settings: OscSettings::default(),
        osc: None,
        osc_error: None,
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
    params: &'a Arc<DyeflowParams>,
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
    /// Note-ons taken so far (for the status).
    notes: u64,
    /// A frame was started and not yet handed over.
    frame_pending: bool,
    /// The trace's note went in: the next frame started shows it; that frame is pending; the
    /// trace's arming they belong to.
    trace_next_frame: bool,
    traced_frame: bool,
    trace_generation: u64,
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
    /// Which consumers watched when it was started (see [`FrameInput::watchers`]).
    watchers: u32,
    /// The driver's change counter when that frame was started.
    changes_shown: u64,
    /// When the fluid was last measured.
    last_probe: Instant,
    /// OSC in: the settings followed, the server and the place of its queue in `queues`, or
    /// why it could not start.
    osc_settings: OscSettings,
    osc: Option<(OscServer, usize)>,
    osc_error: Option<String>,
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
            let watchers = self.frames.watchers();
            if watchers != self.watchers {
                // A consumer came (or went): it gets a frame even at rest.
                self.watchers = watchers;
                self.shown = None;
            }
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
        if let Some((at, hang)) = faults.hang_at_step
            && at == steps
        {
            std::thread::sleep(hang);
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

    /// Take every queued event; returns whether any came. OSC's splats are recorded into a
    /// capture that is on.
    fn drain(&mut self) -> bool {
        let mut n = 0;
        let mut drained_note = false;
        let osc = self.osc.as_ref().map(|(_, at)| *at);
        for (k, queue) in self.queues.iter_mut().enumerate() {
            let model = self.sim.model.as_mut();
            let driver = &mut self.driver;
            let notes = &mut self.notes;
            let tap = self.options.input_tap.as_deref().filter(|_| osc == Some(k));
            let drained_note = &mut drained_note;
            n += queue.drain(|e| {
                let note_on = matches!(e.event, SimEvent::NoteOn { .. });
                *notes += u64::from(note_on);
                *drained_note |= note_on;
                if let Some(tap) = tap {
                    tap.record(&e.event);
                }
                driver.event(model, &e);
            });
        }
        self.period.events += n as u64;
        if drained_note {
            self.traced(NoteStage::Drained, None);
        }
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
        self.driver
            .sync_obstacles(self.sim.model.as_mut(), self.params);
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
        if !self.driver.flush(self.sim.model.as_mut(), self.params)
            && self.driver.changes() != self.changes_shown
        {
            // Direct splats (the mouse) wait in the model: a step of no time applies them.
            self.driver.idle(self.sim.model.as_mut(), self.params);
        }
        self.traced(NoteStage::Applied, None);
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

    /// Start a frame of `w x h` (the model may refuse when its readback buffers are busy).
    fn request_frame(&mut self, w: usize, h: usize) {
        if self.sim.model.request_frame(&self.driver.look(), w, h) {
            self.traced_frame |= std::mem::take(&mut self.trace_next_frame);
            self.frame_pending = true;
            self.shown = Some((w, h));
            self.changes_shown = self.driver.changes();
        }
    }

    /// Hand over the pending frame if it is ready.
    fn publish_frame(&mut self) {
        let model = &mut self.sim.model;
        let (driver, params) = (&mut self.driver, &self.params);
        // Before the hand-over: the consumer may see the frame as soon as it is handed over.
        let ready = self.traced_frame.then(Instant::now);
        if self.frames.publish_from(driver.sim_time(), |pixels| {
            let size = model.take_frame(pixels)?;
            // How full the frame is sets the adaptive dye's action.
            driver.observe_frame(pixels, size, params, model.as_ref());
            Some(size)
        }) {
            self.period.frames += 1;
            self.frame_pending = false;
            self.shared.frames.fetch_add(1, Ordering::AcqRel);
            if self.traced_frame {
                self.traced_frame = false;
                self.traced(NoteStage::Published, ready);
            }
        }
    }

    /// Mark `stage`, reached `at` (`None`: now), in the trace, if the engine has one.
    fn traced(&mut self, stage: NoteStage, at: Option<Instant>) {
        let Some(t) = &self.options.trace else {
            return;
        };
        if stage == NoteStage::Drained {
            let generation = t.generation();
            if generation != self.trace_generation {
                // A new note is traced: forget the frame marks of the last.
                self.trace_generation = generation;
                self.trace_next_frame = false;
                self.traced_frame = false;
            }
        }
        // The frame that shows the note is the first one started after it went in.
        if stage == NoteStage::Applied && t.at(NoteStage::Applied).is_none() {
            self.trace_next_frame = t.at(NoteStage::Drained).is_some();
        }
        t.reach(
            stage,
            at.unwrap_or_else(Instant::now),
            self.trace_generation,
        );
    }

    /// One turn of stepping: the steps owed, a frame, the wait for the next step (showing a
    /// note that arrives meanwhile at once), and now and then a look whether the fluid rests.
    fn running(&mut self) {
        let paused = self.shared.paused.load(Ordering::Acquire);
        // The project's obstacles (and the brush's strokes) take effect even while paused.
        self.driver
            .sync_obstacles(self.sim.model.as_mut(), self.params);
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
                self.driver.idle(self.sim.model.as_mut(), self.params);
            } else {
                self.driver
                    .step(self.sim.model.as_mut(), self.params, dt.as_secs_f32());
            }
            if let Some(reason) = self.sim.model.failure() {
                self.sim
                    .fall_back(reason, self.driver.discrete(), self.options);
                self.driver
                    .obstacles_rebuilt(self.sim.model.as_mut(), self.params);
            }
            self.backlog = self.backlog.saturating_sub(dt);
            self.traced(NoteStage::Applied, None);
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
        let measured = self.sim.model.probe_activity(changes);
        let knobs = self.driver.knobs();
        // Frozen (paused, or speed 0): nothing moves whatever the velocity.
        let frozen = paused || knobs.speed <= 0.0;
        // Dye that fades or blurs still changes the picture while it shows.
        let fading = knobs.dye_dissipation > 0.0 || knobs.dye_diffusion > 0.0;
        let look = self.driver.look();
        let still = frozen
            || measured.is_some_and(|(tag, a)| {
                tag == changes && a.still(&look, fading && !a.keeps_colour)
            });
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
                self.driver
                    .obstacles_rebuilt(self.sim.model.as_mut(), self.params);
                rebuilt = true;
            }
            // What the brush drew goes into the project, to be saved with it.
            self.driver.write_back_obstacles(self.params);
            self.follow_osc();
            if let Some(hook) = &self.options.on_settings_poll {
                (hook.0)();
            }
        }
        if now - self.period.start >= Duration::from_millis(STATUS_MS) {
            self.publish_status();
            self.period = Period::new(now);
        }
        rebuilt
    }

    /// Start, stop or move the OSC server to follow its settings.
    fn follow_osc(&mut self) {
        let want = self.params.osc();
        if want == self.osc_settings {
            return;
        }
        self.osc_settings = want;
        if let Some((server, queue)) = self.osc.take() {
            // Its queue goes with it (queues only ever join at the end, so its place held).
            drop(server);
            self.queues.remove(queue);
        }
        self.osc_error = None;
        if want.enabled {
            let (tx, rx) = crate::bridge::queue::channel(OSC_QUEUE_EVENTS);
            match OscServer::start(want.port, self.params.clone(), tx) {
                Ok(server) => {
                    self.queues.push(rx);
                    self.osc = Some((server, self.queues.len() - 1));
                }
                Err(e) => {
                    nice_plug::nice_error!("OSC cannot listen on port {}: {e}", want.port);
                    self.osc_error = Some(format!("port {}: {e}", want.port));
                }
            }
        }
    }

    fn publish_status(&self) {
        let period = &self.period;
        let sim = &self.sim;
        let secs = period.start.elapsed().as_secs_f32().max(1e-3);
        let resolution = sim.model.resolution();
        let status = EngineStatus {
            backend: sim.info.backend.to_owned(),
            device: sim.info.device.clone(),
            fallback: sim.info.fallback.clone(),
            grid: resolution.cells,
            dye_grid: resolution.detail,
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
            notes: self.notes,
            paused: self.shared.paused.load(Ordering::Acquire),
            resting: self.resting,
            osc: match (&self.osc, &self.osc_error) {
                (Some((server, _)), _) => {
                    let (taken, malformed, unknown) = server.counts();
                    Some(format!(
                        "listening on port {} · {taken} taken, {malformed} malformed, \
                         {unknown} unknown",
                        server.port()
                    ))
                }
                (None, Some(e)) => Some(format!("not listening: {e}")),
                (None, None) => None,
            },
        };
        *self.shared.status.lock() = status;
    }
}

/// Events worth an extra frame before the next step: the ones that look like a hit.
fn shows_at_once(e: &SimEvent) -> bool {
    matches!(
        e,
        SimEvent::NoteOn { .. }
            | SimEvent::Onset { .. }
            | SimEvent::BandOnset { .. }
            | SimEvent::Splat(_)
            | SimEvent::Brush(_)
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
