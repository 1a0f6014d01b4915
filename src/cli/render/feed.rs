//! Playing the music into the fluid, as a host would: the audio, block by block, and the MIDI
//! events at their sample in each block go through the plugin's own [`Bridge`], and the
//! [`Driver`] maps and steps, all in simulation time.

use super::RenderError;
use super::midi::TimedNote;
use super::wav::{Audio, WavStream};
use crate::bridge::chroma::ChromaAnalyzer;
use crate::bridge::queue::{self, EventReceiver};
use crate::bridge::{Bridge, ChromaSink};
use crate::engine::Driver;
use crate::params::DyeflowParams;
use crate::sim::Model;
use nice_plug::midi::NoteEvent;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Sample rate of the silence the bridge follows when there is no audio.
pub const SILENT_RATE: u32 = 48_000;

/// Events the bridge may queue for one step: far more than any sane file produces.
const STEP_EVENTS: usize = 1 << 16;

/// The audio the bridge follows.
pub enum AudioSource {
    /// None: silence at [`SILENT_RATE`].
    Silent,
    /// Audio made in memory (the demo's).
    Memory(Audio),
    /// A WAV file, decoded a block at a time.
    File { stream: WavStream, path: PathBuf },
}

impl AudioSource {
    /// Frames per second.
    pub fn rate(&self) -> u32 {
        match self {
            Self::Silent => SILENT_RATE,
            Self::Memory(a) => a.sample_rate,
            Self::File { stream, .. } => stream.sample_rate,
        }
    }

    /// The length in seconds (0 for silence).
    pub fn duration_s(&self) -> f64 {
        match self {
            Self::Silent => 0.0,
            Self::Memory(a) => a.duration_s(),
            Self::File { stream, .. } => stream.duration_s(),
        }
    }

    /// Channels the bridge sees (1 for silence).
    fn channels(&self) -> usize {
        match self {
            Self::Silent => 1,
            Self::Memory(a) => a.channels.len().clamp(1, 2),
            Self::File { stream, .. } => stream.channels,
        }
    }

    /// Samples `from..to` of each channel into `out` (cleared first; zeros past the end).
    fn block(&mut self, from: u64, to: u64, out: &mut Vec<Vec<f32>>) -> Result<(), RenderError> {
        out.resize_with(self.channels(), Vec::new);
        for channel in out.iter_mut() {
            channel.clear();
        }
        let len = (to - from) as usize;
        match self {
            Self::Silent => out[0].resize(len, 0.0),
            Self::Memory(audio) => {
                for (buf, ch) in out.iter_mut().zip(&audio.channels) {
                    let n = ch.len() as u64;
                    buf.extend_from_slice(&ch[from.min(n) as usize..to.min(n) as usize]);
                    buf.resize(len, 0.0);
                }
            }
            Self::File { stream, path } => stream
                .block(from, to, out)
                .map_err(|problem| RenderError::input(path, problem))?,
        }
        Ok(())
    }
}

/// The music's events and audio, fed step by step from a start time on.
pub struct Player {
    notes: Vec<TimedNote>,
    /// The MIDI file's tempo: the host's transport while it plays (none: no transport, as in
    /// a host that reports none).
    tempo: Option<super::midi::TempoMap>,
    next_note: usize,
    audio: AudioSource,
    bridge: Bridge,
    events: EventReceiver,
    /// Music time of step 0, seconds.
    start_s: f64,
    /// Simulated (and music) seconds per step.
    step_s: f64,
    steps: u64,
    block: Vec<Vec<f32>>,
    block_events: Vec<NoteEvent<()>>,
}

impl Player {
    /// A player from `start_s` into the music, `step_s` seconds a step.
    pub fn new(
        notes: Vec<TimedNote>,
        tempo: Option<super::midi::TempoMap>,
        audio: AudioSource,
        params: &DyeflowParams,
        start_s: f64,
        step_s: f64,
    ) -> Self {
        let (sender, events) = queue::channel(STEP_EVENTS);
        let mut bridge = Bridge::new(
            sender,
            audio.rate() as f32,
            params.envelope_attack.value(),
            params.envelope_release.value(),
        );
        // The chroma analysis runs inline, at exact sample positions: the plugin runs the same
        // analysis on its own thread, which a render must not (its timing would leak into the
        // pixels).
        bridge.set_chroma_sink(ChromaSink::Inline(Box::new(ChromaAnalyzer::new(
            crate::bridge::chroma::TARGET_RATE_HZ,
        ))));
        let next_note = notes.partition_point(|n| n.time_s < start_s);
        Self {
            notes,
            tempo,
            next_note,
            audio,
            bridge,
            events,
            start_s,
            step_s,
            steps: 0,
            block: Vec::new(),
            block_events: Vec::new(),
        }
    }

    /// Events the bridge dropped on a full queue (none in any sane file).
    pub fn dropped_events(&self) -> u64 {
        self.bridge.stats().dropped()
    }

    /// Run `steps` steps: each plays its block of audio and its MIDI events into the bridge,
    /// hands the events to the driver and advances the model. Stops early (returning `false`)
    /// when `stop` is set.
    pub fn advance(
        &mut self,
        model: &mut dyn Model,
        driver: &mut Driver,
        params: &DyeflowParams,
        steps: u64,
        stop: &AtomicBool,
    ) -> Result<bool, RenderError> {
        let rate = f64::from(self.audio.rate());
        let first_sample = (self.start_s * rate).round() as u64;
        for _ in 0..steps {
            if stop.load(Ordering::Relaxed) {
                return Ok(false);
            }
            let t0 = self.start_s + self.steps as f64 * self.step_s;
            let t1 = self.start_s + (self.steps + 1) as f64 * self.step_s;
            let s0 = first_sample + ((t0 - self.start_s) * rate).round() as u64;
            let s1 = first_sample + ((t1 - self.start_s) * rate).round() as u64;
            self.audio.block(s0, s1, &mut self.block)?;
            self.block_events.clear();
            while let Some(n) = self.notes.get(self.next_note) {
                if n.time_s >= t1 {
                    break;
                }
                let offset = (((n.time_s - t0).max(0.0) * rate).round() as u64)
                    .min((s1 - s0).saturating_sub(1)) as u32;
                if let Some(e) = at_offset(&n.event, offset) {
                    self.block_events.push(e);
                }
                self.next_note += 1;
            }
            let channels: Vec<&[f32]> = self.block.iter().map(Vec::as_slice).collect();
            let mut events = self.block_events.drain(..);
            // Playing, at the file's tempo and beat at the block's start.
            let transport = self.tempo.as_ref().map(|m| {
                let (tempo_bpm, beat) = m.at(t0);
                crate::bridge::TransportInfo {
                    playing: true,
                    tempo_bpm,
                    beat,
                }
            });
            self.bridge.process(&channels, transport, || events.next());
            drop(events);
            self.events.drain(|e| driver.event(model, &e));
            driver.step(model, params, self.step_s as f32);
            self.steps += 1;
        }
        Ok(true)
    }
}

/// What plays into the fluid: the music (MIDI and audio through the bridge) or a capture.
pub(super) enum Feed {
    Music(Box<Player>),
    Capture(Box<super::replay::CapturePlayer>),
}

impl Feed {
    pub(super) fn advance(
        &mut self,
        model: &mut dyn Model,
        driver: &mut Driver,
        params: &DyeflowParams,
        steps: u64,
        stop: &AtomicBool,
    ) -> Result<bool, RenderError> {
        match self {
            Self::Music(p) => p.advance(model, driver, params, steps, stop),
            Self::Capture(p) => p.advance(model, driver, params, steps, stop),
        }
    }

    /// Events the bridge dropped on a full queue (more than it holds in one step). A
    /// capture's records lost while it was recorded are another matter, told by a note of
    /// their own when it is loaded: none are dropped here.
    pub(super) fn dropped_events(&self) -> u64 {
        match self {
            Self::Music(p) => p.dropped_events(),
            Self::Capture(_) => 0,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::modulation::{Lfo, Modulation, Route, Shape, Source};
    use crate::sim::sph::model::SphModel;

    /// The seconds between a tempo-synced one-beat saw's restarts in what the simulation is
    /// told, played from a file with `tempo` (none: no transport).
    fn saw_period(tempo: Option<super::super::midi::TempoMap>) -> Vec<f64> {
        let p = DyeflowParams::default();
        *p.modulation.write() = Modulation {
            lfos: [Lfo {
                shape: Shape::Saw,
                sync: true,
                beats: 1.0,
                ..Lfo::default()
            }; 4],
            routes: vec![Route {
                source: Source::Lfo(0),
                target: "dye_diss".into(),
                depth: 0.5,
            }],
            ..Default::default()
        };
        let step = 1.0 / 120.0;
        let mut player = Player::new(Vec::new(), tempo, AudioSource::Silent, &p, 0.0, step);
        let mut driver = Driver::new(&p);
        let mut model = SphModel::new((32, 18), 1, 200).expect("a model");
        let stop = AtomicBool::new(false);
        let mut last = f32::NAN;
        let mut was_dropping = false;
        let mut drops = Vec::new();
        for i in 0..480 {
            assert!(
                player
                    .advance(&mut model, &mut driver, &p, 1, &stop)
                    .unwrap()
            );
            // The knob glides (30 ms), so its drop at a restart is large but not instant.
            let now = driver.last_input().dye_dissipation;
            let dropping = now < last - 0.5;
            if dropping && !was_dropping {
                drops.push(i as f64 * step);
            }
            was_dropping = dropping;
            last = now;
        }
        drops.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Synced LFOs follow the MIDI file's tempo in a render, as they follow the host's in the
    /// plugin: a one-beat saw restarts every 2/3 s at 90 bpm, every 0.5 s without a tempo
    /// (120 bpm, as in a host that reports none).
    #[test]
    fn synced_lfos_follow_the_file_s_tempo() {
        // 90 bpm from the start: 666 667 microseconds a beat.
        let at_90 = super::super::midi::TempoMap::new(&[(0, 666_667)], 480);
        let periods = saw_period(Some(at_90));
        assert!(periods.len() >= 4, "{periods:?}");
        assert!(
            periods.iter().all(|d| (d - 2.0 / 3.0).abs() < 0.02),
            "{periods:?}"
        );
        let periods = saw_period(None);
        assert!(periods.len() >= 6, "{periods:?}");
        assert!(
            periods.iter().all(|d| (d - 0.5).abs() < 0.02),
            "{periods:?}"
        );
    }
}
