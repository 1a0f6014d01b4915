//! What crosses threads, and the audio thread's side of it.
//!
//! [`Bridge`] runs inside `process()`: it turns the host's note events into fixed-size
//! [`events::SimEvent`]s, follows the input's envelope and detects onsets, full-band and in
//! three bands (low, mid, high: [`bands`]), and pushes all of it,
//! timestamped in audio time, into a lock-free queue for the simulation thread. It never
//! allocates, locks or waits; a full queue drops the event and counts it. It does not depend on
//! nice-plug's process context, so tests drive it directly. What it sends is also handed to
//! its listener ([`SentEvents`]): the plugin's capture recorder, wired above the bridge.

pub mod bands;
pub mod chroma;
pub mod envelope;
pub mod events;
pub mod onset;
pub mod passthrough;
pub mod queue;

use bands::{Band, Crossover};
use chroma::{ChromaAnalyzer, Decimator, Tap};
use envelope::EnvelopeFollower;
use events::{Expression, NoteId, SimEvent, TimedEvent};
use nice_plug::midi::{Channel, Key, NoteEvent, VoiceID};
use onset::OnsetDetector;
use queue::{EventSender, TapSender};

/// Envelope readings go out this often: fast enough to follow a beat, slow enough not to
/// flood the queue (200 events per second).
pub const READING_INTERVAL_MS: f32 = 5.0;

/// The host's transport at the start of a block, when it reports one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransportInfo {
    pub playing: bool,
    pub tempo_bpm: f64,
    /// Beat position (quarter notes) at the block's first sample.
    pub beat: f64,
}

/// Where the bridge sends its decimated input for the chroma analysis.
pub enum ChromaSink {
    /// Nowhere: no chroma.
    Off,
    /// To the chroma thread, through a lock-free queue (the plugin): a full queue drops the
    /// sample and counts it. The thread's weights reach the simulation on its own queue.
    Queue(TapSender),
    /// To an analyzer run right here, whose weights are sent as [`events::SimEvent::Chroma`] at
    /// their exact sample (the offline renderer: reproducible to the sample). Never on a
    /// host's audio thread: a hop takes a 4096-point FFT.
    Inline(Box<ChromaAnalyzer>),
}

/// Whoever also hears every event the bridge sends, as it sends it (on the audio thread: no
/// allocation, lock or wait). The plugin's capture recorder; `()` for no one.
pub trait SentEvents {
    fn sent(&mut self, event: &TimedEvent);
}

impl SentEvents for () {
    fn sent(&mut self, _: &TimedEvent) {}
}

impl<L: SentEvents> SentEvents for Option<L> {
    fn sent(&mut self, event: &TimedEvent) {
        if let Some(l) = self {
            l.sent(event);
        }
    }
}

/// The audio thread's bridge, telling `L` what it sends.
pub struct Bridge<L: SentEvents = ()> {
    sender: EventSender,
    sample_rate: f32,
    envelopes: [EnvelopeFollower; 2],
    onset: OnsetDetector,
    /// The channels' mean split into low, mid and high.
    crossover: Crossover,
    /// Envelope of each band (RMS; the envelope attack and release).
    band_envelopes: [EnvelopeFollower; 3],
    /// Onset detector of each band, on the band's energy.
    band_onsets: [OnsetDetector; 3],
    /// The channels' mean, reduced to about 11 kHz for the chroma analysis.
    decimator: Decimator,
    chroma: ChromaSink,
    attack_ms: f32,
    release_ms: f32,
    reading_samples: u32,
    until_reading: u32,
    /// Take silence at rest a stretch at a time (see [`Bridge::audio`]); off only in tests
    /// that hold it to the per-sample loop.
    skip_silence: bool,
    /// Audio time at the last sample-rate change, seconds.
    time_base_s: f64,
    /// Samples processed since then.
    samples: u64,
    /// The host's transport at the start of the current block.
    transport: Option<TransportInfo>,
    /// Bypass engaged: nothing is sent.
    bypassed: bool,
    /// Hears what is sent.
    listener: L,
}

fn note_id(key: Key, channel: Channel, voice: VoiceID) -> NoteId {
    NoteId {
        key: key.number().map_or(u8::MAX, |k| k.min(127)),
        channel: channel.number().map_or(u8::MAX, |c| c.min(15)),
        voice: voice.id().unwrap_or(-1),
    }
}

fn unit(x: f32) -> f32 {
    if x.is_finite() {
        x.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The fluid event for a host note event, if it has one.
pub fn translate<S>(event: &NoteEvent<S>) -> Option<SimEvent> {
    let expression = |voice_id: &VoiceID, channel: &Channel, key: &Key, kind, value: f32| {
        Some(SimEvent::NoteExpression {
            note: note_id(*key, *channel, *voice_id),
            kind,
            value: if value.is_finite() { value } else { 0.0 },
        })
    };
    match event {
        NoteEvent::NoteOn {
            voice_id,
            channel,
            key,
            velocity,
            ..
        } => (!key.is_wildcard()).then(|| SimEvent::NoteOn {
            note: note_id(*key, *channel, *voice_id),
            velocity: unit(*velocity),
        }),
        NoteEvent::NoteOff {
            voice_id,
            channel,
            key,
            ..
        } => Some(SimEvent::NoteOff {
            note: note_id(*key, *channel, *voice_id),
        }),
        NoteEvent::Choke {
            voice_id,
            channel,
            key,
            ..
        } => Some(SimEvent::Choke {
            note: note_id(*key, *channel, *voice_id),
        }),
        NoteEvent::PolyPressure {
            voice_id,
            channel,
            key,
            pressure,
            ..
        } => expression(
            voice_id,
            channel,
            key,
            Expression::Pressure,
            unit(*pressure),
        ),
        NoteEvent::PolyVolume {
            voice_id,
            channel,
            key,
            gain,
            ..
        } => expression(
            voice_id,
            channel,
            key,
            Expression::Volume,
            gain.clamp(0.0, 4.0),
        ),
        NoteEvent::PolyPan {
            voice_id,
            channel,
            key,
            pan,
            ..
        } => expression(
            voice_id,
            channel,
            key,
            Expression::Pan,
            pan.clamp(-1.0, 1.0),
        ),
        NoteEvent::PolyTuning {
            voice_id,
            channel,
            key,
            tuning,
            ..
        } => expression(
            voice_id,
            channel,
            key,
            Expression::Tuning,
            tuning.clamp(-128.0, 128.0),
        ),
        NoteEvent::PolyVibrato {
            voice_id,
            channel,
            key,
            vibrato,
            ..
        } => expression(voice_id, channel, key, Expression::Vibrato, unit(*vibrato)),
        NoteEvent::PolyExpression {
            voice_id,
            channel,
            key,
            expression: value,
            ..
        } => expression(voice_id, channel, key, Expression::Expression, unit(*value)),
        NoteEvent::PolyBrightness {
            voice_id,
            channel,
            key,
            brightness,
            ..
        } => expression(
            voice_id,
            channel,
            key,
            Expression::Brightness,
            unit(*brightness),
        ),
        NoteEvent::MidiChannelPressure {
            channel, pressure, ..
        } => Some(SimEvent::ChannelPressure {
            channel: (*channel).min(15),
            pressure: unit(*pressure),
        }),
        NoteEvent::MidiPitchBend { channel, value, .. } => Some(SimEvent::PitchBend {
            channel: (*channel).min(15),
            value: (unit(*value) - 0.5) * 2.0,
        }),
        NoteEvent::MidiCC {
            channel, cc, value, ..
        } => Some(SimEvent::ControlChange {
            channel: (*channel).min(15),
            cc: (*cc).min(127),
            value: unit(*value),
        }),
        _ => None,
    }
}

impl Bridge {
    /// A bridge pushing into `sender`. Allocation-free from here on.
    pub fn new(sender: EventSender, sample_rate: f32, attack_ms: f32, release_ms: f32) -> Self {
        Self::heard_by(sender, sample_rate, (attack_ms, release_ms), ())
    }
}

impl<L: SentEvents> Bridge<L> {
    /// [`Bridge::new`], telling `listener` what it sends.
    pub fn heard_by(
        sender: EventSender,
        sample_rate: f32,
        (attack_ms, release_ms): (f32, f32),
        listener: L,
    ) -> Self {
        let mut bridge = Self {
            sender,
            sample_rate: 48_000.0,
            envelopes: [EnvelopeFollower::new(48_000.0, attack_ms, release_ms); 2],
            onset: OnsetDetector::new(48_000.0),
            crossover: Crossover::new(48_000.0),
            band_envelopes: [EnvelopeFollower::new(48_000.0, attack_ms, release_ms); 3],
            band_onsets: [OnsetDetector::new(48_000.0); 3],
            decimator: Decimator::new(48_000.0),
            chroma: ChromaSink::Off,
            attack_ms,
            release_ms,
            reading_samples: 240,
            until_reading: 240,
            time_base_s: 0.0,
            samples: 0,
            transport: None,
            bypassed: false,
            listener,
            skip_silence: true,
        };
        bridge.set_sample_rate(sample_rate);
        bridge
    }

    /// Change the sample rate (at activation). Audio time runs on without a jump.
    pub fn set_sample_rate(&mut self, sample_rate: f32) {
        self.time_base_s = self.time_s(0);
        self.samples = 0;
        let fs = if sample_rate.is_finite() {
            sample_rate.clamp(1_000.0, 1_000_000.0)
        } else {
            48_000.0
        };
        self.sample_rate = fs;
        for e in self.envelopes.iter_mut().chain(&mut self.band_envelopes) {
            e.set_times(fs, self.attack_ms, self.release_ms);
        }
        self.onset = OnsetDetector::new(fs);
        self.crossover = Crossover::new(fs);
        self.band_onsets = [OnsetDetector::new(fs); 3];
        self.decimator = Decimator::new(fs);
        self.restart_chroma();
        self.reading_samples = ((READING_INTERVAL_MS * 1e-3 * fs) as u32).max(1);
        self.until_reading = self.reading_samples;
    }

    /// Follow the envelope with new attack and release times (cheap when unchanged).
    pub fn set_envelope_times(&mut self, attack_ms: f32, release_ms: f32) {
        if attack_ms != self.attack_ms || release_ms != self.release_ms {
            self.attack_ms = attack_ms;
            self.release_ms = release_ms;
            for e in self.envelopes.iter_mut().chain(&mut self.band_envelopes) {
                e.set_times(self.sample_rate, attack_ms, release_ms);
            }
        }
    }

    /// Pause or resume sending (the bypass parameter). Engaging stops every held note.
    pub fn set_bypassed(&mut self, bypassed: bool) {
        if bypassed && !self.bypassed {
            self.push(0, SimEvent::Silence);
        }
        self.bypassed = bypassed;
    }

    /// Back to rest (the host's reset): followers and detector cleared, audio time kept.
    pub fn reset(&mut self) {
        for e in self.envelopes.iter_mut().chain(&mut self.band_envelopes) {
            e.reset();
        }
        self.onset.reset();
        self.crossover.reset();
        for d in &mut self.band_onsets {
            d.reset();
        }
        self.decimator.reset();
        self.restart_chroma();
        self.until_reading = self.reading_samples;
    }

    /// Send the decimated input to `sink` from now on (the plugin's activation, the renderer).
    pub fn set_chroma_sink(&mut self, sink: ChromaSink) {
        self.chroma = sink;
        self.restart_chroma();
    }

    /// The chroma analysis starts over at the decimator's rate, from the current audio time.
    /// Never allocates.
    fn restart_chroma(&mut self) {
        let rate = self.decimator.rate();
        let time_s = self.time_s(0);
        match &mut self.chroma {
            ChromaSink::Off => {}
            ChromaSink::Queue(tx) => {
                tx.send(Tap::Start { rate, time_s });
            }
            ChromaSink::Inline(analyzer) => analyzer.set_rate(rate),
        }
    }

    /// Audio time in seconds of sample `offset` of the current block: seconds of audio
    /// processed since the bridge was made.
    pub fn time_s(&self, offset: usize) -> f64 {
        self.time_base_s + (self.samples + offset as u64) as f64 / f64::from(self.sample_rate)
    }

    #[inline]
    fn push(&mut self, offset: usize, event: SimEvent) {
        let event = TimedEvent {
            time_s: self.time_s(offset),
            event,
        };
        self.sender.send(event);
        self.listener.sent(&event);
    }

    /// The listener.
    pub fn listener(&mut self) -> &mut L {
        &mut self.listener
    }

    /// Swap the chroma sink for `sink`; the one it had.
    pub fn swap_chroma_sink(&mut self, sink: ChromaSink) -> ChromaSink {
        let old = std::mem::replace(&mut self.chroma, sink);
        self.restart_chroma();
        old
    }

    /// The sample rate its clock runs at (the host's, made safe).
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    /// Whether the chroma analysis runs inline (at exact samples).
    pub fn chroma_inline(&self) -> bool {
        matches!(self.chroma, ChromaSink::Inline(_))
    }

    /// Process one block: `channels` are the input samples (1 or 2 channels, equal lengths),
    /// `next_event` yields the host's note events in timing order. Sends every event at its
    /// place among the envelope readings, so the queue stays in time order.
    pub fn process<S>(
        &mut self,
        channels: &[&[f32]],
        transport: Option<TransportInfo>,
        mut next_event: impl FnMut() -> Option<NoteEvent<S>>,
    ) {
        let len = channels.first().map_or(0, |c| c.len());
        self.transport = transport;
        let mut pos = 0usize;
        while let Some(event) = next_event() {
            let at = (event.timing() as usize).min(len);
            self.audio(channels, pos, at);
            pos = pos.max(at);
            if !self.bypassed
                && let Some(e) = translate(&event)
            {
                self.push(at, e);
            }
        }
        self.audio(channels, pos, len);
        self.samples += len as u64;
    }

    /// Whether every follower, detector and filter rests exactly: silence then changes nothing
    /// but the readings' and the pitch-class analysis' clocks.
    fn at_rest(&self) -> bool {
        self.envelopes.iter().all(EnvelopeFollower::at_rest)
            && self.onset.at_rest()
            && self.crossover.at_rest()
            && self.band_envelopes.iter().all(EnvelopeFollower::at_rest)
            && self.band_onsets.iter().all(OnsetDetector::at_rest)
            && self.decimator.at_rest()
    }

    /// Follow samples `from..to` of the block, sending readings and onsets.
    fn audio(&mut self, channels: &[&[f32]], from: usize, to: usize) {
        let n = channels.len().clamp(1, 2);
        // Silence (zeros, or what counts as them) while everything rests: the same events,
        // without the per-sample work (a host feeding silence costs almost nothing).
        let silent = |c: usize| {
            channels
                .get(c)
                .and_then(|ch| ch.get(from..to))
                .is_none_or(|x| x.iter().all(|&x| x == 0.0 || !x.is_finite()))
        };
        if self.skip_silence && from < to && (0..n).all(silent) && self.at_rest() {
            self.silence(from, to, n);
            return;
        }
        for i in from..to {
            let mut energy = 0.0f32;
            let mut sum = 0.0f32;
            for (c, e) in self.envelopes.iter_mut().enumerate().take(n) {
                let x = channels
                    .get(c)
                    .and_then(|ch| ch.get(i))
                    .copied()
                    .unwrap_or(0.0);
                e.next(x);
                if x.is_finite() {
                    energy += x * x;
                    sum += x.clamp(-bands::INPUT_LIMIT, bands::INPUT_LIMIT);
                }
            }
            if let Some(strength) = self.onset.next(energy / n as f32)
                && !self.bypassed
            {
                self.push(i, SimEvent::Onset { strength });
            }
            let mono = sum / n as f32;
            if !self.bypassed {
                self.chroma_sample(i, mono);
            }
            let split = self.crossover.split(mono);
            for band in Band::ALL {
                let y = split[band.index()];
                self.band_envelopes[band.index()].next(y);
                if let Some(strength) = self.band_onsets[band.index()].next(y * y)
                    && !self.bypassed
                {
                    self.push(i, SimEvent::BandOnset { band, strength });
                }
            }
            self.until_reading -= 1;
            if self.until_reading == 0 {
                self.until_reading = self.reading_samples;
                self.reading(i, n);
            }
        }
    }

    /// Samples `from..to` of silence at rest (see [`Bridge::audio`]): exactly what the
    /// per-sample loop does then, a stretch at a time. Every follower, detector and filter
    /// stays at rest (they are fed zeros); only the readings fall due (zeros) and the
    /// decimator hands the pitch-class analysis its zeros.
    fn silence(&mut self, from: usize, to: usize, n: usize) {
        let chroma = !self.bypassed && !matches!(self.chroma, ChromaSink::Off);
        let mut i = from;
        while i < to {
            let mut step = (to - i).min(self.until_reading as usize);
            if chroma {
                step = step.min(self.decimator.until_output());
            }
            let last = i + step - 1;
            if chroma && self.decimator.skip_silence(step) {
                self.chroma_out(last, 0.0);
            }
            self.until_reading -= step as u32;
            if self.until_reading == 0 {
                self.until_reading = self.reading_samples;
                self.reading(last, n);
            }
            i += step;
        }
    }

    /// Feed sample `offset` (the channels' mean) to the chroma analysis.
    #[inline]
    fn chroma_sample(&mut self, offset: usize, x: f32) {
        if matches!(self.chroma, ChromaSink::Off) {
            return;
        }
        let Some(y) = self.decimator.next(x) else {
            return;
        };
        self.chroma_out(offset, y);
    }

    /// Hand reduced-rate sample `y` (at sample `offset`) to the chroma analysis.
    #[inline]
    fn chroma_out(&mut self, offset: usize, y: f32) {
        let weights = match &mut self.chroma {
            ChromaSink::Off => None,
            ChromaSink::Queue(tx) => {
                tx.send(Tap::Sample(y));
                None
            }
            ChromaSink::Inline(analyzer) => analyzer.push(y),
        };
        if let Some(weights) = weights {
            self.push(offset, SimEvent::Chroma { weights });
        }
    }

    fn reading(&mut self, offset: usize, n: usize) {
        if self.bypassed {
            return;
        }
        let second = if n > 1 { 1 } else { 0 };
        let rms = [self.envelopes[0].rms(), self.envelopes[second].rms()];
        let peak = [self.envelopes[0].peak(), self.envelopes[second].peak()];
        self.push(offset, SimEvent::Envelope { rms, peak });
        let rms = self.band_envelopes.map(|e| e.rms());
        self.push(offset, SimEvent::Bands { rms });
        if let Some(t) = self.transport
            && t.tempo_bpm.is_finite()
            && t.beat.is_finite()
            && t.tempo_bpm > 0.0
        {
            let beat = if t.playing {
                t.beat + offset as f64 / f64::from(self.sample_rate) * t.tempo_bpm / 60.0
            } else {
                t.beat
            };
            self.push(
                offset,
                SimEvent::Transport {
                    playing: t.playing,
                    tempo_bpm: t.tempo_bpm as f32,
                    beat,
                },
            );
        }
    }

    /// The queue's counters.
    pub fn stats(&self) -> &std::sync::Arc<queue::QueueStats> {
        self.sender.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note_on(timing: u32, key: u8) -> NoteEvent<()> {
        NoteEvent::NoteOn {
            timing,
            voice_id: VoiceID::ID(7),
            channel: Channel::Number(2),
            key: Key::Number(key),
            velocity: 0.5,
        }
    }

    /// Silence while everything rests is taken a stretch at a time: the same events (to the
    /// bit), the same samples to the pitch-class analysis (inline and on its thread) and the
    /// same state as the per-sample loop, through sound, long silences, NaN and subnormal
    /// blocks, bypass, notes inside silent blocks, blocks of 1 to 4096 frames and a change of
    /// rate.
    #[test]
    fn silence_at_rest_is_skipped_exactly() {
        use rand::{Rng, SeedableRng};
        for inline in [false, true] {
            let mut runs = [true, false].map(|skip| {
                let (tx, rx) = queue::channel(1 << 20);
                let mut b = Bridge::new(tx, 44_100.0, 5.0, 200.0);
                b.skip_silence = skip;
                let (tap_tx, tap_rx) = queue::tap_channel(1 << 20);
                b.set_chroma_sink(if inline {
                    ChromaSink::Inline(Box::new(ChromaAnalyzer::new(chroma::TARGET_RATE_HZ)))
                } else {
                    ChromaSink::Queue(tap_tx)
                });
                (b, rx, tap_rx)
            });
            let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
            let mut skipped = 0;
            for block in 0..3000 {
                // Cycles of 50 blocks of anything, then 250 of silence (about 18 s: the
                // followers reach rest some 9 s after a loud passage).
                let kind = if block % 300 < 50 {
                    rng.random_range(0..10)
                } else {
                    9
                };
                let len = if kind == 9 && rng.random_bool(0.7) {
                    4096
                } else {
                    [1, 7, 64, 512, 4096][rng.random_range(0..5)]
                };
                let samples: Vec<f32> = (0..len)
                    .map(|i| match kind {
                        0 => rng.random_range(-0.5..0.5),
                        1 => f32::NAN,
                        2 => 1e-40,
                        3 if i % 97 == 3 => 0.3,
                        _ => 0.0,
                    })
                    .collect();
                let note = rng.random_range(0..20) == 0;
                if block == 1500 {
                    runs.iter_mut().for_each(|r| r.0.set_sample_rate(48_000.0));
                }
                let bypass = (2000..2200).contains(&block);
                for (b, _, _) in &mut runs {
                    b.set_bypassed(bypass);
                    let mut events = note.then(|| note_on(len as u32 / 2, 60)).into_iter();
                    b.process(&[&samples, &samples], None, || events.next());
                }
                skipped += usize::from(kind >= 4 && runs[0].0.at_rest());
            }
            assert!(skipped > 1000, "silence at rest came {skipped} times");
            let [(a, mut rx_a, mut tap_a), (b, mut rx_b, mut tap_b)] = runs;
            let mut events = [Vec::new(), Vec::new()];
            rx_a.drain(|e| events[0].push(format!("{e:?}")));
            rx_b.drain(|e| events[1].push(format!("{e:?}")));
            assert!(events[0].len() > 10_000, "{} events", events[0].len());
            assert_eq!(events[0], events[1], "inline {inline}");
            let mut taps = [Vec::new(), Vec::new()];
            tap_a.drain(|t| taps[0].push(format!("{t:?}")));
            tap_b.drain(|t| taps[1].push(format!("{t:?}")));
            assert_eq!(taps[0], taps[1], "inline {inline}");
            assert_eq!(a.until_reading, b.until_reading);
            assert_eq!(a.decimator.until_output(), b.decimator.until_output());
            assert_eq!(a.time_s(0), b.time_s(0));
        }
    }

    #[test]
    fn events_and_readings_arrive_in_time_order() {
        let (tx, mut rx) = queue::channel(1024);
        let mut b = Bridge::new(tx, 48_000.0, 5.0, 200.0);
        let silence = vec![0.0f32; 1000];
        let mut events = vec![note_on(10, 60), note_on(500, 64)].into_iter();
        b.process(&[&silence, &silence], None, || events.next());
        let mut got = Vec::new();
        rx.drain(|e| got.push(e));
        // Readings (full band, then bands) at samples 239, 479, 719, 959; notes at 10 and 500.
        let samples: Vec<u64> = got
            .iter()
            .map(|e| (e.time_s * 48_000.0).round() as u64)
            .collect();
        assert_eq!(
            samples,
            vec![10, 239, 239, 479, 479, 500, 719, 719, 959, 959]
        );
        assert!(matches!(got[1].event, SimEvent::Envelope { .. }));
        assert!(matches!(got[2].event, SimEvent::Bands { .. }));
        assert!(
            matches!(got[0].event, SimEvent::NoteOn { note: NoteId { key: 60, channel: 2, voice: 7 }, velocity } if velocity == 0.5)
        );
    }

    #[test]
    fn translation_known_answers() {
        let bend: NoteEvent<()> = NoteEvent::MidiPitchBend {
            timing: 0,
            channel: 3,
            value: 0.75,
        };
        assert_eq!(
            translate(&bend),
            Some(SimEvent::PitchBend {
                channel: 3,
                value: 0.5
            })
        );
        let cc: NoteEvent<()> = NoteEvent::MidiCC {
            timing: 0,
            channel: 0,
            cc: 64,
            value: 1.0,
        };
        assert_eq!(
            translate(&cc),
            Some(SimEvent::ControlChange {
                channel: 0,
                cc: 64,
                value: 1.0
            })
        );
        let wild: NoteEvent<()> = NoteEvent::NoteOn {
            timing: 0,
            voice_id: VoiceID::Wildcard,
            channel: Channel::Wildcard,
            key: Key::Wildcard,
            velocity: 1.0,
        };
        assert_eq!(translate(&wild), None, "a note-on needs a key");
        let nan: NoteEvent<()> = NoteEvent::MidiChannelPressure {
            timing: 0,
            channel: 200,
            pressure: f32::NAN,
        };
        assert_eq!(
            translate(&nan),
            Some(SimEvent::ChannelPressure {
                channel: 15,
                pressure: 0.0
            })
        );
    }

    #[test]
    fn garbage_audio_never_sends_a_non_finite_value() {
        let (tx, mut rx) = queue::channel(1 << 14);
        let mut b = Bridge::new(tx, 44_100.0, 5.0, 200.0);
        for (k, v) in [f32::NAN, f32::INFINITY, 1.0e30, -3.0e38, 1.0e-40, 0.5]
            .into_iter()
            .enumerate()
        {
            let block: Vec<f32> = (0..4410)
                .map(|i| if i % 3 == k % 3 { v } else { -v })
                .collect();
            b.process(&[&block, &block], None, || None::<NoteEvent<()>>);
        }
        let mut n = 0;
        rx.drain(|e| {
            n += 1;
            let values: Vec<f32> = match e.event {
                SimEvent::Envelope { rms, peak } => rms.into_iter().chain(peak).collect(),
                SimEvent::Bands { rms } => rms.to_vec(),
                SimEvent::Onset { strength } | SimEvent::BandOnset { strength, .. } => {
                    vec![strength]
                }
                SimEvent::Chroma { weights } => weights.to_vec(),
                _ => Vec::new(),
            };
            assert!(values.iter().all(|v| v.is_finite()), "{e:?}");
        });
        assert!(n > 100, "{n} events");
    }

    #[test]
    fn bypass_sends_silence_then_nothing() {
        let (tx, mut rx) = queue::channel(1024);
        let mut b = Bridge::new(tx, 48_000.0, 5.0, 200.0);
        b.set_bypassed(true);
        let loud = vec![0.9f32; 4800];
        let mut events = vec![note_on(0, 60)].into_iter();
        b.process(&[&loud], None, || events.next());
        let mut got = Vec::new();
        rx.drain(|e| got.push(e.event));
        assert_eq!(got, vec![SimEvent::Silence]);
    }
}
