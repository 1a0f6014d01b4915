//! `dyeflow bench --latency`: a note's way from the audio thread to the screen, through the
//! real engine, stage by stage.

use super::percentile;
use crate::gpu::GpuOptions;
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What `dyeflow bench --latency` runs.
#[derive(Clone, Debug)]
pub struct LatencyOptions {
    /// Simulation grid height (16:9 canvas).
    pub size: usize,
    /// Solver backend wanted (falls back to the CPU like the plugin does).
    pub backend: crate::params::BackendChoice,
    /// Notes timed.
    pub trials: usize,
    /// GPU selection.
    pub gpu: GpuOptions,
    /// Play each note into a resting engine (one that stopped stepping because the fluid was
    /// still), to time the wake-up as well.
    pub from_rest: bool,
}

/// What the latency run measured: from a note-on entering the audio thread's bridge (as in
/// `process()`) to the first published frame that shows its dye, as the consumer sees it.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyResult {
    pub backend: String,
    pub device: String,
    pub size: usize,
    pub frame: String,
    pub sim_rate_hz: u32,
    pub trials: usize,
    /// Whether each note woke a resting engine.
    pub from_rest: bool,
    /// Notes whose dye never showed within a second (counted, not timed).
    pub missed: usize,
    pub latency_p50_ms: f64,
    pub latency_p99_ms: f64,
    pub latency_min_ms: f64,
    pub latency_max_ms: f64,
    /// Where the time goes, stage by stage (each note's stages add up to its latency):
    /// `inject` from the note entering the bridge to the simulation thread taking it from its
    /// queue, `step` to the end of the step (or the step of no time) that put it into the
    /// fluid, `picture` to the hand-over of the first frame started after that, `publish` to
    /// the consumer seeing that frame.
    pub stages: StageTimes,
}

/// A stage's time over the notes, ms.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StageTime {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// The stages of [`LatencyResult::stages`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct StageTimes {
    pub inject: StageTime,
    pub step: StageTime,
    pub picture: StageTime,
    pub publish: StageTime,
    /// Notes whose stages the trace could not follow (a frame shown before the trace saw a
    /// stage): left out of the stages, still in the latency.
    pub untraced: usize,
}

impl StageTime {
    fn of(mut v: Vec<f64>) -> Self {
        Self {
            p50_ms: percentile(&mut v, 0.5),
            p99_ms: percentile(&mut v, 0.99),
            max_ms: v.last().copied().unwrap_or(0.0),
        }
    }
}

/// Frame size the latency run asks for.
pub const LATENCY_FRAME: (usize, usize) = (640, 360);

/// Time notes from the audio thread to the screen through the real engine: the note goes into
/// a [`crate::bridge::Bridge`] at the start of a block, the engine drains, maps, steps and
/// renders on its own clock, and this thread polls the frames (every 100 µs) for dye at the
/// note's place. Between notes the fluid is reset and the spot checked dark again, and each
/// note waits a pseudo-random 0-20 ms so notes land at every phase of the step clock.
pub fn run_latency(opts: &LatencyOptions) -> LatencyResult {
    use crate::bridge::events::{SimEvent, TimedEvent};
    use crate::bridge::{Bridge, queue};
    use crate::engine::{Engine, EngineOptions};

    let (params, sim_rate_hz) = latency_params(opts);
    let (audio_tx, audio_rx) = queue::channel(1024);
    let (mut control_tx, control_rx) = queue::channel(16);
    let (input, frames) = crate::frame::frame_channel();
    let trace = Arc::new(crate::engine::StageTrace::default());
    let options = EngineOptions {
        gpu: opts.gpu.clone(),
        cpu_threads: 0,
        trace: Some(trace.clone()),
        ..Default::default()
    };
    let engine = Engine::start(params, vec![audio_rx, control_rx], input, options)
        .expect("spawn the simulation thread");
    let mut spot = Spot::new(frames);
    let mut bridge = Bridge::new(audio_tx, 48_000.0, 5.0, 200.0);
    // The first frame may take a while (solver and GPU start-up).
    let _ = spot.wait_for(&|_| true, Duration::from_secs(30));
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut latencies = Vec::with_capacity(opts.trials);
    let mut stages: [Vec<f64>; 4] = Default::default();
    let (mut untraced, mut missed) = (0, 0);
    for _ in 0..opts.trials {
        control_tx.send(TimedEvent {
            time_s: 0.0,
            event: SimEvent::Reset,
        });
        let _ = spot.wait_for(&|v| v < 8, Duration::from_secs(2));
        wait_before_a_note(&engine, opts.from_rest, &mut seed);
        trace.arm();
        let t0 = Instant::now();
        play(&mut bridge, true);
        match spot.wait_for(&|v| v > 60, Duration::from_secs(1)) {
            Some(seen) => {
                latencies.push((seen - t0).as_secs_f64() * 1e3);
                match stage_times(&trace, t0, seen) {
                    Some(times) => stages.iter_mut().zip(times).for_each(|(s, t)| s.push(t)),
                    None => untraced += 1,
                }
            }
            None => missed += 1,
        }
        play(&mut bridge, false);
    }
    let status = engine.status();
    drop(engine);
    let mut sorted = latencies.clone();
    let (fw, fh) = LATENCY_FRAME;
    LatencyResult {
        backend: status.backend,
        device: status.device,
        size: opts.size,
        frame: format!("{fw}x{fh}"),
        sim_rate_hz,
        trials: opts.trials,
        from_rest: opts.from_rest,
        missed,
        latency_p50_ms: percentile(&mut sorted, 0.5),
        latency_p99_ms: percentile(&mut sorted, 0.99),
        latency_min_ms: sorted.first().copied().unwrap_or(0.0),
        latency_max_ms: sorted.last().copied().unwrap_or(0.0),
        stages: {
            let [inject, step, picture, publish] = stages.map(StageTime::of);
            StageTimes {
                inject,
                step,
                picture,
                publish,
                untraced,
            }
        },
    }
}

/// The latency run's parameters: the grid at `opts.size` on `opts.backend`, 60 steps a
/// second, the keyboard mapping (a lone note stays at one spot: rows mode sways it); and the
/// step rate.
fn latency_params(opts: &LatencyOptions) -> (Arc<crate::params::DyeflowParams>, u32) {
    use crate::params::{Aspect, DyeflowParams, Settings};
    let params = DyeflowParams::default();
    let keyboard = format!(
        r#"{{"params": {{"mapping": "keyboard"}}, "fields": {{"state-version": "{}"}}}}"#,
        crate::params::STATE_VERSION
    );
    crate::preset::apply(keyboard.as_bytes(), &params).expect("a valid preset");
    params.set_settings(Settings {
        sim_resolution: opts.size as u32,
        dye_scale: 1,
        aspect: Aspect::Wide,
        backend: opts.backend,
        sim_rate_hz: 60,
        fluid: crate::params::FluidChoice::Grid,
    });
    let rate = params.settings().sim_rate_hz;
    (Arc::new(params), rate)
}

/// Before a note: the engine at rest (with `from_rest`, at most 5 s), then a pseudo-random
/// 0-20 ms (`seed`, a xorshift), so notes land at every phase of the step clock.
fn wait_before_a_note(engine: &crate::engine::Engine, from_rest: bool, seed: &mut u64) {
    if from_rest {
        let start = Instant::now();
        while !engine.resting() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    std::thread::sleep(Duration::from_micros(*seed % 20_000));
}

/// Middle C on, or off, in one block of silence through the bridge.
fn play(bridge: &mut crate::bridge::Bridge, on: bool) {
    use nice_plug::midi::{Channel, Key, NoteEvent, VoiceID};
    let silence = [0.0f32; 64];
    let (voice_id, channel, key) = (VoiceID::Wildcard, Channel::Number(0), Key::Number(60));
    let mut note = Some(if on {
        NoteEvent::<()>::NoteOn {
            timing: 0,
            voice_id,
            channel,
            key,
            velocity: 100.0 / 127.0,
        }
    } else {
        NoteEvent::<()>::NoteOff {
            timing: 0,
            voice_id,
            channel,
            key,
            velocity: 0.0,
        }
    });
    bridge.process(&[&silence], None, || note.take());
}

/// A note's way in ms, from `t0` (sent) to `seen`: into the engine, applied and stepped,
/// drawn and published, shown. `None` unless the trace marked each stage in between.
fn stage_times(trace: &crate::engine::StageTrace, t0: Instant, seen: Instant) -> Option<[f64; 4]> {
    use crate::engine::NoteStage;
    let marks = [NoteStage::Drained, NoteStage::Applied, NoteStage::Published].map(|s| trace.at(s));
    let ms = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1e3;
    match marks {
        [Some(d), Some(a), Some(p)] if t0 <= d && p <= seen => {
            Some([ms(t0, d), ms(d, a), ms(a, p), ms(p, seen)])
        }
        _ => None,
    }
}

/// The note's spot in the engine's frames: mid-canvas at the keyboard's emitter height.
struct Spot {
    frames: crate::frame::FrameOutput,
    at: (usize, usize),
}

impl Spot {
    fn new(frames: crate::frame::FrameOutput) -> Self {
        let (fw, fh) = LATENCY_FRAME;
        frames.request(fw, fh);
        let y = ((1.0 - crate::mapping::KEYBOARD_Y) * fh as f32) as usize;
        Self {
            frames,
            at: (fw / 2, y),
        }
    }

    /// The brightest channel at `(x, y)` of a frame of the asked size.
    fn value((x, y): (usize, usize), f: &crate::frame::Frame) -> Option<u8> {
        let (fw, fh) = LATENCY_FRAME;
        (f.width == fw && f.height == fh).then(|| {
            let i = (y * fw + x) * 4;
            f.pixels[i..i + 3].iter().copied().max().unwrap_or(0)
        })
    }

    /// When a new frame with a value at the spot that is `ok` came, within `limit`.
    fn wait_for(&mut self, ok: &dyn Fn(u8) -> bool, limit: Duration) -> Option<Instant> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.frames.has_new() {
                let seen = Instant::now();
                if Self::value(self.at, self.frames.latest()).is_some_and(ok) {
                    return Some(seen);
                }
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        None
    }
}
