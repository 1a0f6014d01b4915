//! Dyeflow: an audio-visual fluid plugin.
//!
//! Put it on a track: the audio passes through untouched, and the notes and the sound's envelope
//! stir a 2D fluid shown live in the editor. This file holds the plugin type, its host-facing
//! descriptions and the export macros; everything else lives in the modules, one per stage of
//! the flow *audio thread -> ring buffer -> simulation thread -> frames -> editor / file*.

use nice_plug::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

// The `kernel!` macro is seen by textual scope: `kernels` comes before the modules using it.
#[macro_use]
pub mod kernels;

pub mod bridge;
pub mod capture;
#[cfg(feature = "cli")]
pub mod cli;
pub mod display;
pub mod editor;
pub mod engine;
pub mod fluid;
pub mod folders;
pub mod frame;
pub mod gpu;
pub mod mapping;
pub mod output_window;
pub mod params;
mod pin;
pub mod preset;
pub mod sim;

use bridge::queue;
use bridge::{Bridge, ChromaSink, TransportInfo};
use editor::EditorShared;
use engine::chroma::{CHROMA_QUEUE_EVENTS, CHROMA_TAP_SAMPLES};
use engine::{ChromaThread, EngineOptions, LazyEngine, Waker};
use frame::FrameOutput;
use params::DyeflowParams;
use parking_lot::Mutex;

/// Events the audio thread can queue for the simulation between two of its steps: a dense
/// passage (10 voices, expressions every block, envelope readings every 5 ms) stays far below.
pub const AUDIO_QUEUE_EVENTS: usize = 8192;

/// The plugin instance. Created by the host through [`Default`], which must stay cheap: hosts
/// create an instance for every plugin scan, so no thread, GPU device or big buffer is made
/// here.
pub struct Dyeflow {
    params: Arc<DyeflowParams>,
    /// The simulation, started on first need.
    engine: Arc<LazyEngine>,
    /// What the editor shares: the frames, its event queue to the simulation.
    editor: EditorShared,
    /// The audio thread's side of the event queue: MIDI translation, envelope follower and
    /// onset detector (made in the first `activate`, which may run several times).
    /// The audio thread's bridge, telling the capture's recorder (once made) what it sends.
    bridge: Option<Bridge<Option<capture::recorder::Recorder>>>,
    /// Raises the engine's "needed" flag (audio processed); made in `activate`.
    waker: Option<Waker>,
    /// The pitch-class analysis of the input, fed by the bridge through a lock-free queue and
    /// feeding the engine through another; made in the first `activate`, stopped on drop
    /// (waiting at most `engine::DROP_WAIT_MS`).
    chroma: Option<ChromaThread>,
    /// Bounce capture: the thread writing capture files (made at the first activation), and
    /// the chroma sink not in use (made at the first activation, so that switching between the
    /// analysis on its thread and inline, at exact samples for a capture, never allocates).
    capture: Option<capture::writer::CaptureThread>,
    parked_chroma: Option<ChromaSink>,
    /// The process mode the host gave at the last activation (for blocks the wrapper does not
    /// flag).
    activation_mode: ProcessMode,
    /// The host renders offline: it says so (at activation, or in the block), or the pace of
    /// its blocks shows a bounce. The same for the simulation thread.
    offline: bool,
    offline_flag: Arc<AtomicBool>,
    /// The input tap's queue, for the capture thread when it starts.
    input_records: Option<queue::Receiver<capture::Record>>,
}

impl Default for Dyeflow {
    fn default() -> Self {
        let params = Arc::new(DyeflowParams::default());
        // Two consumers of the frames: the editor and the output window.
        let (frame_input, mut outputs) = frame::frame_channels(2);
        let (frames, window_frames) = (outputs.remove(0), outputs.remove(0));
        let output = Arc::new(new_output_window(&params, window_frames));
        let offline = Arc::new(AtomicBool::new(false));
        // The editor's and OSC's events for captures (the queue's other end goes to the
        // capture thread when it starts).
        let (input_tap, input_records) = capture::InputTap::new();
        let options = EngineOptions {
            on_settings_poll: Some(follow_output(&params, &output, &offline)),
            input_tap: Some(input_tap.clone()),
            ..EngineOptions::default()
        };
        let engine = Arc::new(LazyEngine::new(params.clone(), frame_input, options));
        // The editor's queue exists from the start (a 64 kB buffer), so the engine drains it
        // whenever an editor sends something.
        let (editor_tx, editor_rx) = queue::channel(editor::EDITOR_QUEUE_EVENTS);
        engine.add_queue(editor_rx);
        Self {
            editor: EditorShared {
                params: params.clone(),
                engine: engine.clone(),
                frames: Arc::new(Mutex::new(frames)),
                events: Arc::new(Mutex::new(editor_tx)),
                capture: Arc::new(Mutex::new(capture::writer::CaptureStatus::new())),
                record: Arc::new(std::sync::atomic::AtomicBool::new(false)),
                output,
                input_tap,
            },
            engine,
            params,
            bridge: None,
            waker: None,
            chroma: None,
            capture: None,
            parked_chroma: None,
            activation_mode: ProcessMode::Realtime,
            offline: false,
            offline_flag: offline,
            input_records: Some(input_records),
        }
    }
}

/// The instance's output window (closed): frames no finer than the dye grid, and every change
/// it makes itself (Esc, a resize, a close by the window manager) kept in the project.
fn new_output_window(
    params: &Arc<DyeflowParams>,
    frames: FrameOutput,
) -> output_window::OutputWindow {
    let p = params.clone();
    let cap: output_window::FrameCap = Arc::new(move || p.settings().dye_grid());
    let p = params.clone();
    let on_change: output_window::OnChange =
        Arc::new(move |placement: &output_window::Placement, open| {
            p.set_output(params::OutputSettings {
                open,
                placement: placement.clone(),
            });
        });
    output_window::OutputWindow::new(frames, cap, on_change)
}

/// The simulation thread's settings poll makes the output window follow the project (not
/// during a bounce), so a project loaded while the editor is closed opens or closes it too.
/// Holds the window weakly: the window's owner is the plugin.
fn follow_output(
    params: &Arc<DyeflowParams>,
    output: &Arc<output_window::OutputWindow>,
    offline: &Arc<AtomicBool>,
) -> engine::SettingsHook {
    let (params, output, offline) = (params.clone(), Arc::downgrade(output), offline.clone());
    engine::SettingsHook(Arc::new(move || {
        if offline.load(Ordering::Relaxed) {
            return;
        }
        if let Some(output) = output.upgrade() {
            output.follow(|| {
                let s = params.output();
                (s.open, s.placement)
            });
        }
    }))
}

impl Drop for Dyeflow {
    /// The output window closes with the instance (the project keeps it open, to come back).
    fn drop(&mut self) {
        self.editor.output.shut_down();
    }
}

impl Dyeflow {
    /// The parameters, shared with the editor and the simulation thread.
    pub fn shared_params(&self) -> Arc<DyeflowParams> {
        self.params.clone()
    }

    /// The lazily started simulation.
    pub fn engine(&self) -> Arc<LazyEngine> {
        self.engine.clone()
    }

    /// The instance's output window.
    pub fn output(&self) -> Arc<output_window::OutputWindow> {
        self.editor.output.clone()
    }

    /// The consumer end of the engine's frames, shared with the editor.
    pub fn frames(&self) -> Arc<Mutex<FrameOutput>> {
        self.editor.frames.clone()
    }

    /// Render offline or in real time from now on (at activation; the audio thread does the
    /// same through [`follow_offline`]).
    fn set_offline(&mut self, offline: bool) {
        follow_offline(
            offline,
            (&mut self.offline, &self.offline_flag),
            self.bridge.as_mut(),
            &mut self.parked_chroma,
        );
    }

    /// The capture's queues, its writer started (`None`, and the reason in the capture status,
    /// when there is no capture folder or no thread).
    fn start_capture(&mut self) -> Option<(capture::recorder::Recorder, capture::CaptureTap)> {
        let Some(dir) = capture::capture_dir() else {
            let why = "no capture folder (no home directory and no DYEFLOW_CAPTURE_DIR)";
            nice_error!("Bounces are not captured: {why}");
            self.editor.capture.lock().error = Some(why.into());
            return None;
        };
        let (recorder, tap, (records, chroma)) =
            capture::queues(self.params.clone(), &self.editor.input_tap);
        let input = self
            .input_records
            .take()
            .unwrap_or_else(|| capture::InputTap::new().1);
        let receivers = (records, chroma, input);
        let status = self.editor.capture.clone();
        status.lock().folder = Some(dir.clone());
        let ids = capture::recorder::Recorder::param_ids(&*self.params);
        let params = self.params.clone();
        let state: capture::writer::StateFn = Box::new(move || preset::to_json(&params));
        match capture::writer::CaptureThread::spawn(receivers, (ids, state), dir, status) {
            Ok(thread) => {
                self.capture = Some(thread);
                Some((recorder, tap))
            }
            Err(e) => {
                nice_error!("Could not start the capture thread: {e}");
                self.editor.capture.lock().error = Some(format!("no capture thread: {e}"));
                None
            }
        }
    }
}

/// Render offline or in real time from now on: offline (a bounce) the pitch-class analysis runs
/// inline at exact samples, so the capture holds it; in real time it runs on its thread. Swaps
/// the bridge's sink with the `parked` one (both made at activation): never allocates, so the
/// audio thread calls it when a block's mode changes. `state` is the plugin's flag and the
/// simulation thread's.
fn follow_offline(
    offline: bool,
    state: (&mut bool, &AtomicBool),
    bridge: Option<&mut Bridge<Option<capture::recorder::Recorder>>>,
    parked: &mut Option<ChromaSink>,
) {
    if offline == *state.0 {
        return;
    }
    *state.0 = offline;
    state.1.store(offline, Ordering::Relaxed);
    if let Some(bridge) = bridge
        && bridge.chroma_inline() != offline
        && let Some(sink) = parked.take()
    {
        *parked = Some(bridge.swap_chroma_sink(sink));
    }
}

impl Plugin for Dyeflow {
    const NAME: &'static str = "Dyeflow";
    const VENDOR: &'static str = "Dyeflow";
    const URL: &'static str = "";
    const EMAIL: &'static str = "";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    const AUDIO_IO_LAYOUTS: &'static [AudioIOLayout] = &[
        AudioIOLayout {
            main_input_channels: NonZeroU32::new(2),
            main_output_channels: NonZeroU32::new(2),
            names: PortNames {
                layout: Some("Stereo"),
                ..PortNames::const_default()
            },
            ..AudioIOLayout::const_default()
        },
        AudioIOLayout {
            main_input_channels: NonZeroU32::new(1),
            main_output_channels: NonZeroU32::new(1),
            names: PortNames {
                layout: Some("Mono"),
                ..PortNames::const_default()
            },
            ..AudioIOLayout::const_default()
        },
    ];

    const MIDI_INPUT: MidiConfig = MidiConfig::MidiCCs;
    const SAMPLE_ACCURATE_AUTOMATION: bool = false;
    /// Preallocated room for one block's events. Dense MPE passages (10 voices, each with
    /// several expressions per block) pass the default 1024 at large block sizes; beyond this
    /// nice-plug must allocate on the audio thread.
    const INPUT_EVENT_CAPACITY: usize = 8192;

    type Editor = editor::DyeflowEditor;
    type SysExMessage = ();
    type BackgroundTask = ();

    fn params(&self) -> Arc<dyn Params> {
        self.params.clone()
    }

    fn editor(&mut self, _async_executor: AsyncExecutor<Self>) -> Option<Self::Editor> {
        editor::create(self.editor.clone())
    }

    fn activate(
        &mut self,
        _audio_io_layout: &AudioIOLayout,
        buffer_config: &BufferConfig,
        _context: &mut impl ActivateContext<Self>,
    ) -> bool {
        // The queue outlives re-activation: the engine keeps draining the same one.
        let sample_rate = buffer_config.sample_rate;
        match &mut self.bridge {
            Some(bridge) => bridge.set_sample_rate(sample_rate),
            None => {
                let (tx, rx) = queue::channel(AUDIO_QUEUE_EVENTS);
                self.engine.add_queue(rx);
                // Captures (a bounce, or the Record switch) need their queues and writer
                // before the first block: made now, idle until then.
                let (recorder, capture_tap) = self.start_capture().unzip();
                let times = (
                    self.params.envelope_attack.value(),
                    self.params.envelope_release.value(),
                );
                let mut bridge = Bridge::heard_by(tx, sample_rate, times, recorder);
                let (tap, taps) = queue::tap_channel(CHROMA_TAP_SAMPLES);
                let (chroma_tx, chroma_rx) = queue::channel(CHROMA_QUEUE_EVENTS);
                match ChromaThread::spawn(taps, chroma_tx, capture_tap) {
                    Ok(thread) => {
                        self.engine.add_queue(chroma_rx);
                        bridge.set_chroma_sink(ChromaSink::Queue(tap));
                        self.chroma = Some(thread);
                    }
                    // The fluid goes on without colours from the audio's pitch.
                    Err(e) => nice_error!("Could not start the chroma thread: {e}"),
                }
                self.bridge = Some(bridge);
            }
        }
        // The inline analysis, parked until a bounce needs it (allocated once, here).
        if self.parked_chroma.is_none()
            && let Some(bridge) = &self.bridge
            && !bridge.chroma_inline()
        {
            self.parked_chroma = Some(ChromaSink::Inline(Box::new(
                bridge::chroma::ChromaAnalyzer::new(bridge::chroma::TARGET_RATE_HZ),
            )));
        }
        self.activation_mode = buffer_config.process_mode;
        self.set_offline(self.activation_mode == ProcessMode::Offline);
        // A project saved with its output window open opens it again (not for a bounce).
        if !self.offline {
            self.editor.follow_output();
        }
        // The simulation thread waits in standby (no solver, no GPU device) until audio
        // actually flows or the editor opens.
        if self.waker.is_none() {
            self.waker = self.engine.standby();
        }
        self.engine.set_host_active(true);
        true
    }

    fn deactivate(&mut self) {
        // A capture ends with the processing (a reactivation offline starts the next).
        if let Some(bridge) = &mut self.bridge {
            let now = bridge.time_s(0);
            if let Some(r) = bridge.listener().as_mut() {
                r.stop(now);
            }
        }
        // Nothing feeds the fluid until the next activation: the simulation thread sleeps
        // (unless the editor is open).
        self.engine.set_host_active(false);
    }

    fn filter_state(state: &mut PluginState) {
        params::migrate_state(state);
    }

    fn process(
        &mut self,
        buffer: &mut Buffer,
        _aux: &mut AuxiliaryBuffers,
        context: &mut impl ProcessContext<Self>,
    ) -> ProcessStatus {
        // Audio flows: the simulation is needed and fed (atomics only; no lock, no system
        // call).
        if let Some(waker) = &self.waker {
            waker.wake();
        }
        // The host has already copied the input to the output. Leave it as it is, minus
        // subnormals, and flush those first: the bridge reads the audio there, and arithmetic
        // on subnormals is many times slower on x86 without flush-to-zero.
        bridge::passthrough::flush_subnormals(buffer.as_slice());
        // Offline as the host says for this block (VST3 hosts flag each block; some flag an
        // export only there), or as it said at activation where the wrapper does not tell.
        let host_offline = nice_plug::wrapper::block_process_mode().unwrap_or(self.activation_mode)
            == ProcessMode::Offline;
        if let Some(bridge) = &mut self.bridge {
            let p = &self.params;
            bridge.set_bypassed(p.bypass.value());
            bridge.set_envelope_times(p.envelope_attack.value(), p.envelope_release.value());
            let t = context.transport();
            let transport = t
                .tempo
                .zip(t.pos_beats())
                .map(|(tempo_bpm, beat)| TransportInfo {
                    playing: t.playing,
                    tempo_bpm,
                    beat,
                });
            // A capture runs while the host bounces (it says so, or the pace shows it), or while
            // the Record switch is on; otherwise the recorder watches (nothing is written).
            let want = if host_offline {
                Some(capture::Cause::Offline)
            } else if self.editor.record.load(Ordering::Relaxed) {
                Some(capture::Cause::Record)
            } else {
                None
            };
            let (now, rate) = (bridge.time_s(0), bridge.sample_rate());
            self.editor.input_tap.set_clock(now);
            let mut bouncing = false;
            if let Some(r) = bridge.listener().as_mut() {
                r.follow(want, now, rate);
                bouncing = r.bouncing();
                let samples = t.pos_samples().unwrap_or(0);
                let beat = t.pos_beats().unwrap_or(f64::NAN);
                let tempo = t.tempo.unwrap_or(f64::NAN);
                r.block(now, (samples, beat, tempo, t.playing));
            }
            // Before the block's audio: a capture's first block is analysed inline too.
            follow_offline(
                host_offline || bouncing,
                (&mut self.offline, &self.offline_flag),
                Some(&mut *bridge),
                &mut self.parked_chroma,
            );
            let channels = buffer.as_slice_immutable();
            let first: &[f32] = channels.first().map_or(&[], |c| &**c);
            let second: &[f32] = channels.get(1).map_or(&[], |c| &**c);
            let stereo = [first, second];
            let inputs = if channels.len() > 1 {
                &stereo[..]
            } else {
                &stereo[..1]
            };
            bridge.process(inputs, transport, || context.next_event());
        } else {
            // Not activated (a host bug): still drain the notes so the host's queue never
            // backs up.
            while context.next_event().is_some() {}
        }
        ProcessStatus::Normal
    }

    fn reset(&mut self) {
        if let Some(bridge) = &mut self.bridge {
            bridge.reset();
        }
    }
}

impl ClapPlugin for Dyeflow {
    /// Stable forever: hosts store projects by this id.
    const CLAP_ID: &'static str = "app.dyeflow.dyeflow";
    const CLAP_DESCRIPTION: Option<&'static str> = Some(env!("CARGO_PKG_DESCRIPTION"));
    const CLAP_MANUAL_URL: Option<&'static str> = None;
    const CLAP_SUPPORT_URL: Option<&'static str> = None;
    const CLAP_FEATURES: &'static [ClapFeature] = &[
        ClapFeature::AudioEffect,
        ClapFeature::Analyzer,
        ClapFeature::Stereo,
        ClapFeature::Mono,
    ];
}

impl Vst3Plugin for Dyeflow {
    /// Stable forever: hosts store projects by this id.
    const VST3_CLASS_ID: [u8; 16] = *b"DyeflowFluidVis1";
    const VST3_SUBCATEGORIES: &'static [Vst3SubCategory] =
        &[Vst3SubCategory::Fx, Vst3SubCategory::Analyzer];
}

nice_export_clap!(Dyeflow);
nice_export_vst3!(Dyeflow);
