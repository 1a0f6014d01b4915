//! The built-in demo for `dyeflow render` with no inputs: eight bars in A minor at 120 bpm
//! (16 s of music and a 1.5 s tail), made to show off the mappings.
//!
//! - MIDI (a type 1 file, 480 ticks per beat): a tempo track; a melody on channel 1 (index 0)
//!   in A minor pentatonic, from A3 (57) to C6 (84), single notes with velocities 64 to 120,
//!   so the dye lands at many x positions and hues, with one pitch bend (D5 up to E5); and
//!   sustained pads of 3 and 4 notes (48 to 64) on channel 2 (index 1), Am F C G Am F G Am,
//!   with the sustain pedal (CC64) in bars 5 and 6 and a mod wheel (CC1) swell in bar 7.
//! - Audio (stereo): a drum pulse, whose transients the onset detector fires on (a kick on
//!   every beat, a snare on 2 and a clap on 4, off-beat hats and, from bar 3, quiet
//!   sixteenth-note hats), over a soft bed of the same chords and a bass line, with slow
//!   attacks, so the level envelope breathes with the harmony. Normalised to a -3 dBFS peak.
//!
//! Everything is computed with plain `f64` arithmetic (and `sin`, `cos`, `exp`, `sqrt`) and a
//! xorshift noise generator, so the demo is the same on every run and every machine.

use crate::kernels::portable::Portable;
use midly::num::{u4, u7, u15, u24, u28};
use midly::{
    Format, Header, MetaMessage, MidiMessage, PitchBend, Smf, Timing, TrackEvent, TrackEventKind,
};

/// Length of the demo in seconds (music plus ~1.5 s of tail so the last notes fade).
pub const DEMO_SECONDS: f64 = MUSIC_SECONDS + 1.5;
/// Sample rate of the demo audio.
pub const DEMO_SAMPLE_RATE: u32 = 48_000;

/// Tempo in beats per minute.
const BPM: f64 = 120.0;
/// Seconds per beat.
const BEAT_S: f64 = 60.0 / BPM;
/// MIDI ticks per beat (quarter note).
const TICKS_PER_BEAT: u16 = 480;
/// Bars of 4/4 in the phrase.
const BARS: usize = 8;
/// Beats in the phrase.
const BEATS: usize = BARS * 4;
/// Length of the music (without the tail) in seconds.
const MUSIC_SECONDS: f64 = BEATS as f64 * BEAT_S;
/// Fraction of its written length a melody note sounds (a little detached).
const GATE: f64 = 0.9;
/// Peak level of the audio: -3 dBFS.
const PEAK: f64 = 0.707_945_784_384_138;

/// The melody: (start in beats, length in beats, key, velocity). A minor pentatonic, a hook
/// that climbs from A3 through two octaves to C6 and falls back.
#[rustfmt::skip]
const MELODY: &[(f64, f64, u8, u8)] = &[
    // Bar 1 (Am): the hook, low.
    (0.0, 0.5, 57, 100), (0.5, 0.5, 60, 72), (1.0, 0.5, 64, 84), (1.5, 0.5, 67, 70),
    (2.0, 1.0, 69, 112), (3.0, 0.5, 67, 76), (3.5, 0.5, 64, 68),
    // Bar 2 (F): the answer.
    (4.0, 0.5, 62, 96), (4.5, 0.5, 64, 70), (5.0, 1.0, 60, 88), (6.0, 1.5, 57, 80),
    // Bar 3 (C): the hook a third higher.
    (8.0, 0.5, 64, 98), (8.5, 0.5, 67, 72), (9.0, 0.5, 69, 86), (9.5, 0.5, 72, 78),
    (10.0, 1.0, 74, 114), (11.0, 0.5, 72, 80), (11.5, 0.5, 69, 70),
    // Bar 4 (G): a long D5 bent up to E5, then a pickup.
    (12.0, 2.0, 74, 106), (14.0, 0.5, 67, 74), (14.5, 0.5, 69, 82), (15.0, 1.0, 72, 92),
    // Bar 5 (Am): the hook an octave up.
    (16.0, 0.5, 76, 116), (16.5, 0.5, 79, 84), (17.0, 1.0, 81, 120), (18.0, 0.5, 79, 80),
    (18.5, 0.5, 76, 72), (19.0, 0.5, 74, 88), (19.5, 0.5, 76, 76),
    // Bar 6 (F): the top, C6.
    (20.0, 0.5, 81, 110), (20.5, 1.5, 84, 118), (22.0, 0.5, 81, 84), (22.5, 0.5, 79, 74),
    (23.0, 1.0, 76, 96),
    // Bar 7 (G): running down.
    (24.0, 0.5, 74, 100), (24.5, 0.5, 76, 78), (25.0, 0.5, 79, 90), (25.5, 0.5, 76, 70),
    (26.0, 0.5, 74, 92), (26.5, 0.5, 72, 68), (27.0, 0.5, 69, 86), (27.5, 0.5, 67, 64),
    // Bar 8 (Am): home to A3.
    (28.0, 0.5, 64, 94), (28.5, 0.5, 62, 72), (29.0, 1.0, 60, 84), (30.0, 2.0, 57, 104),
];

/// The pad chords, one per bar (Am F C G Am F G Am), voiced between C3 (48) and E4 (64).
const CHORDS: [&[u8]; BARS] = [
    &[52, 57, 60, 64], // Am
    &[48, 53, 57, 60], // F
    &[48, 52, 55],     // C
    &[50, 55, 59, 62], // G
    &[52, 57, 60, 64], // Am
    &[48, 53, 57, 60], // F
    &[50, 55, 59],     // G
    &[52, 57, 60, 64], // Am
];
/// Pad velocities per bar: a swell towards bars 5 and 6.
const CHORD_VELOCITY: [u8; BARS] = [64, 66, 70, 72, 80, 78, 72, 68];
/// The bass line in the audio, one root per bar (A2 F2 C2 G2 ...).
const BASS: [u8; BARS] = [45, 41, 36, 43, 45, 41, 43, 45];
/// Bars (0-based) whose chord is played short and held by the sustain pedal.
const PEDAL_BARS: [usize; 2] = [4, 5];
/// Bar (0-based) with the mod wheel swell.
const MOD_WHEEL_BAR: usize = 6;
/// The melody note (start beat) that gets the pitch bend.
const BEND_NOTE_BEAT: f64 = 12.0;

/// MIDI channel (0-based) of the melody.
const MELODY_CHANNEL: u8 = 0;
/// MIDI channel (0-based) of the chords.
const CHORD_CHANNEL: u8 = 1;

/// The demo phrase as a Standard MIDI File (type 1: a tempo track, a melody track on channel 1,
/// a chord track on channel 2), built with midly's writer. 480 ticks per beat.
pub fn midi_bytes() -> Vec<u8> {
    let end = beats_to_ticks(DEMO_SECONDS / BEAT_S);
    let smf = Smf {
        header: Header::new(Format::Parallel, Timing::Metrical(u15::new(TICKS_PER_BEAT))),
        tracks: vec![tempo_track(end), melody_track(end), chord_track(end)],
    };
    let mut bytes = Vec::new();
    smf.write_std(&mut bytes)
        .expect("the demo's MIDI is valid and a Vec cannot fail to grow");
    bytes
}

/// The beat times in seconds of the kick drums in the audio (for tests: onsets should fire
/// there).
pub fn kick_times_s() -> Vec<f64> {
    (0..BEATS).map(|beat| beat as f64 * BEAT_S).collect()
}

/// One line describing the demo for the CLI.
pub fn describe() -> String {
    format!(
        "the built-in demo: {:.0} s, {:.0} bpm in A minor, {BARS} bars of melody, chords and a \
         drum pulse",
        MUSIC_SECONDS, BPM
    )
}

/// A beat position in ticks.
fn beats_to_ticks(beats: f64) -> u32 {
    (beats * f64::from(TICKS_PER_BEAT)).round() as u32
}

/// One event of a track under construction: absolute tick, order among events on the same
/// tick (note-offs, then controllers, then note-ons), and the event.
type Timed = (u32, u8, TrackEventKind<'static>);

/// A channel message.
fn midi(channel: u8, message: MidiMessage) -> TrackEventKind<'static> {
    TrackEventKind::Midi {
        channel: u4::new(channel),
        message,
    }
}

/// A note-on at `tick`.
fn note_on(tick: u32, channel: u8, key: u8, vel: u8) -> Timed {
    let message = MidiMessage::NoteOn {
        key: u7::new(key),
        vel: u7::new(vel),
    };
    (tick, 2, midi(channel, message))
}

/// A note-off at `tick`.
fn note_off(tick: u32, channel: u8, key: u8) -> Timed {
    let message = MidiMessage::NoteOff {
        key: u7::new(key),
        vel: u7::new(64),
    };
    (tick, 0, midi(channel, message))
}

/// A controller change at `tick`.
fn controller(tick: u32, channel: u8, controller: u8, value: u8) -> Timed {
    let message = MidiMessage::Controller {
        controller: u7::new(controller),
        value: u7::new(value),
    };
    (tick, 1, midi(channel, message))
}

/// A pitch bend at `tick`, `bend` in -1..1 of the bend range.
fn pitch_bend(tick: u32, channel: u8, bend: f64) -> Timed {
    let message = MidiMessage::PitchBend {
        bend: PitchBend::from_f64(bend),
    };
    (tick, 1, midi(channel, message))
}

/// Sorts the events by time (stable, so same-tick events keep their order within a class),
/// converts them to delta times and ends the track with End of Track at `end`.
fn finish_track(mut events: Vec<Timed>, end: u32) -> Vec<TrackEvent<'static>> {
    events.sort_by_key(|&(tick, order, _)| (tick, order));
    let mut track = Vec::with_capacity(events.len() + 1);
    let mut last = 0;
    for (tick, _, kind) in events {
        track.push(TrackEvent {
            delta: u28::new(tick - last),
            kind,
        });
        last = tick;
    }
    track.push(TrackEvent {
        delta: u28::new(end.saturating_sub(last)),
        kind: TrackEventKind::Meta(MetaMessage::EndOfTrack),
    });
    track
}

/// Track 0: name, 4/4, tempo.
fn tempo_track(end: u32) -> Vec<TrackEvent<'static>> {
    let micros_per_beat = (BEAT_S * 1e6).round() as u32;
    let meta = |message| (0, 0, TrackEventKind::Meta(message));
    finish_track(
        vec![
            meta(MetaMessage::TrackName(b"Dyeflow demo")),
            meta(MetaMessage::TimeSignature(4, 2, 24, 8)),
            meta(MetaMessage::Tempo(u24::new(micros_per_beat))),
        ],
        end,
    )
}

/// Track 1: the melody on channel 1, with one pitch bend.
fn melody_track(end: u32) -> Vec<TrackEvent<'static>> {
    let ch = MELODY_CHANNEL;
    let mut events = vec![(
        0,
        0,
        TrackEventKind::Meta(MetaMessage::TrackName(b"Melody")),
    )];
    for &(start, length, key, vel) in MELODY {
        events.push(note_on(beats_to_ticks(start), ch, key, vel));
        events.push(note_off(beats_to_ticks(start + length * GATE), ch, key));
    }
    // The long D5: after half a beat, bend up a whole step (a full bend at the usual ±2
    // semitone range) over half a beat, hold, and return to centre once the note is off.
    const STEPS: u32 = 8;
    for step in 1..=STEPS {
        let beat = BEND_NOTE_BEAT + 0.5 + 0.5 * f64::from(step) / f64::from(STEPS);
        let amount = f64::from(step) / f64::from(STEPS);
        events.push(pitch_bend(beats_to_ticks(beat), ch, amount));
    }
    events.push(pitch_bend(beats_to_ticks(BEND_NOTE_BEAT + 1.9), ch, 0.0));
    finish_track(events, end)
}

/// Track 2: the chords on channel 2, with the sustain pedal and the mod wheel.
fn chord_track(end: u32) -> Vec<TrackEvent<'static>> {
    let ch = CHORD_CHANNEL;
    let bar_ticks = beats_to_ticks(4.0);
    let gap = beats_to_ticks(0.125);
    let mut events = vec![(
        0,
        0,
        TrackEventKind::Meta(MetaMessage::TrackName(b"Chords")),
    )];
    for (bar, chord) in CHORDS.iter().enumerate() {
        let start = bar as u32 * bar_ticks;
        let pedal = PEDAL_BARS.contains(&bar);
        // Pedalled chords are struck short (one beat) and held by the pedal to the bar's end.
        let off = if pedal {
            start + beats_to_ticks(1.0)
        } else {
            start + bar_ticks - gap
        };
        for &key in chord.iter() {
            events.push(note_on(start, ch, key, CHORD_VELOCITY[bar]));
            events.push(note_off(off, ch, key));
        }
        if pedal {
            events.push(controller(start + 1, ch, 64, 127));
            events.push(controller(start + bar_ticks - gap, ch, 64, 0));
        }
        if bar == MOD_WHEEL_BAR {
            // A swell from 0 to 112 over the bar, in sixteenth-note steps, then back to 0.
            for step in 0..16u32 {
                let value = (step * 112 / 15) as u8;
                events.push(controller(start + step * bar_ticks / 16, ch, 1, value));
            }
            events.push(controller(start + bar_ticks, ch, 1, 0));
        }
    }
    finish_track(events, end)
}

/// The demo's audio bed, stereo (2 channels, equal lengths, DEMO_SECONDS long), in -1..1.
pub fn audio(sample_rate: u32) -> Vec<Vec<f32>> {
    let sr = f64::from(sample_rate.max(1));
    let n = (DEMO_SECONDS * sr).round() as usize;
    let mut out = Stereo {
        left: vec![0.0; n],
        right: vec![0.0; n],
    };
    let mut rng = XorShift::new(0x9E37_79B9);
    add_bed(&mut out, sr);
    add_drums(&mut out, sr, &mut rng);
    // Normalise to the -3 dBFS peak.
    let peak = out
        .left
        .iter()
        .chain(&out.right)
        .fold(0.0f64, |m, &x| m.max(f64::from(x).abs()));
    if peak > 0.0 {
        let gain = (PEAK / peak) as f32;
        for x in out.left.iter_mut().chain(out.right.iter_mut()) {
            *x *= gain;
        }
    }
    vec![out.left, out.right]
}

/// Two channels being mixed.
struct Stereo {
    left: Vec<f32>,
    right: Vec<f32>,
}

impl Stereo {
    /// Adds `x` at sample `i` with the given channel gains.
    #[inline]
    fn add(&mut self, i: usize, x: f64, (gl, gr): (f64, f64)) {
        self.left[i] += (x * gl) as f32;
        self.right[i] += (x * gr) as f32;
    }

    fn len(&self) -> usize {
        self.left.len()
    }
}

/// Equal-power gains for a pan position in -1 (left) ..1 (right).
fn pan(position: f64) -> (f64, f64) {
    let p = 0.5 * (position.clamp(-1.0, 1.0) + 1.0);
    ((1.0 - p).sqrt(), p.sqrt())
}

/// A small deterministic noise source (xorshift32).
struct XorShift(u32);

impl XorShift {
    fn new(seed: u32) -> Self {
        Self(seed.max(1))
    }

    /// Uniform noise in -1..1.
    #[inline]
    fn noise(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        f64::from(x) * (2.0 / f64::from(u32::MAX)) - 1.0
    }
}

/// Frequency of a MIDI key in Hz.
fn key_hz(key: u8) -> f64 {
    440.0 * ((f64::from(key) - 69.0) / 12.0 * std::f64::consts::LN_2).pexp()
}

/// Sample index of a time, clamped to the buffer.
fn sample_at(t: f64, sr: f64, len: usize) -> usize {
    ((t * sr).round().max(0.0) as usize).min(len)
}

/// Most partials of one tone.
const MAX_PARTIALS: usize = 4;

/// A sustained tone: harmonics with amplitudes `partials` (the first is the fundamental),
/// a smooth `attack`, a gentle fall to 70 % over the held part, and a quadratic `release`
/// after `end`, all in seconds. Sines are advanced by rotating phasors (no `sin` per sample).
struct Tone<'a> {
    key: u8,
    start: f64,
    end: f64,
    attack: f64,
    release: f64,
    gain: f64,
    pan: f64,
    partials: &'a [f64],
}

impl Tone<'_> {
    fn add_to(&self, out: &mut Stereo, sr: f64) {
        let f0 = key_hz(self.key);
        let i0 = sample_at(self.start, sr, out.len());
        let held = ((self.end - self.start) * sr).max(1.0);
        let inv_held = 1.0 / held;
        let inv_attack = 1.0 / (self.attack * sr).max(1.0);
        let inv_release = 1.0 / (self.release * sr).max(1.0);
        let i1 = sample_at(self.end + self.release, sr, out.len());
        let gains = pan(self.pan);

        let count = self.partials.len().min(MAX_PARTIALS);
        let mut re = [1.0f64; MAX_PARTIALS];
        let mut im = [0.0f64; MAX_PARTIALS];
        let mut cr = [1.0f64; MAX_PARTIALS];
        let mut ci = [0.0f64; MAX_PARTIALS];
        let mut amp = [0.0f64; MAX_PARTIALS];
        for h in 0..count {
            let f = f0 * (h + 1) as f64;
            if f < 0.45 * sr {
                let w = std::f64::consts::TAU * f / sr;
                cr[h] = w.pcos();
                ci[h] = w.psin();
                amp[h] = self.partials[h] * self.gain;
            }
        }

        for (n, i) in (i0..i1).enumerate() {
            let n = n as f64;
            let rise = (n * inv_attack).min(1.0);
            let rise = rise * rise * (3.0 - 2.0 * rise);
            let env = if n < held {
                rise * (1.0 - 0.3 * n * inv_held)
            } else {
                let r = (1.0 - (n - held) * inv_release).max(0.0);
                rise * 0.7 * r * r
            };
            let mut s = 0.0;
            for h in 0..MAX_PARTIALS {
                s += amp[h] * im[h];
                let r = re[h] * cr[h] - im[h] * ci[h];
                im[h] = re[h] * ci[h] + im[h] * cr[h];
                re[h] = r;
            }
            out.add(i, s * env, gains);
            // Keep the phasors on the unit circle.
            if i & 4095 == 0 {
                for h in 0..MAX_PARTIALS {
                    let k = 1.5 - 0.5 * (re[h] * re[h] + im[h] * im[h]);
                    re[h] *= k;
                    im[h] *= k;
                }
            }
        }
    }
}

/// The soft bed: the chords (saw-like, four harmonics, spread across the stereo field) and a
/// bass line, with slow attacks, swelling towards bars 5 and 6.
fn add_bed(out: &mut Stereo, sr: f64) {
    const PAD_PARTIALS: [f64; 4] = [1.0, 0.45, 0.22, 0.1];
    const BASS_PARTIALS: [f64; 2] = [1.0, 0.35];
    const PANS: [f64; 4] = [-0.6, 0.6, -0.2, 0.2];
    const INTENSITY: [f64; BARS] = [0.7, 0.75, 0.8, 0.85, 1.0, 1.0, 0.9, 0.85];
    let bar_s = 4.0 * BEAT_S;
    for bar in 0..BARS {
        let start = bar as f64 * bar_s;
        let last = bar == BARS - 1;
        let end = start + bar_s;
        let release = if last { 1.4 } else { 0.5 };
        for (v, &key) in CHORDS[bar].iter().enumerate() {
            Tone {
                key,
                start,
                end,
                attack: 0.35,
                release,
                gain: 0.045 * INTENSITY[bar],
                pan: PANS[v],
                partials: &PAD_PARTIALS,
            }
            .add_to(out, sr);
        }
        Tone {
            key: BASS[bar],
            start,
            end,
            attack: 0.12,
            release: if last { 1.2 } else { 0.3 },
            gain: 0.1 * INTENSITY[bar],
            pan: 0.0,
            partials: &BASS_PARTIALS,
        }
        .add_to(out, sr);
    }
}

/// The drum pulse: kick on every beat, snare on 2, clap on 4, hats on the off-beats and,
/// from bar 3 to bar 7, a quiet hat on the last sixteenth of each beat.
fn add_drums(out: &mut Stereo, sr: f64, rng: &mut XorShift) {
    // The snare lands a hair after the kick, so the kick's attack rises cleanly and the
    // onset detector sees its full height.
    const SNARE_DELAY: f64 = 0.003;
    let kick = kick_sample(sr, rng);
    let len = out.len();
    for (beat, t) in kick_times_s().into_iter().enumerate() {
        let accent = if beat % 4 == 0 { 1.0 } else { 0.9 };
        let i0 = sample_at(t, sr, len);
        for (k, &x) in kick.iter().enumerate().take(len.saturating_sub(i0)) {
            out.add(i0 + k, f64::from(x) * accent, (1.0, 1.0));
        }
        match beat % 4 {
            1 => add_snare(out, sr, t + SNARE_DELAY, 0.55, false, rng),
            3 => add_snare(out, sr, t + SNARE_DELAY, 0.5, true, rng),
            _ => {}
        }
        add_hat(out, sr, t + 0.5 * BEAT_S, 0.3, rng);
        let bar = beat / 4;
        if (2..BARS - 1).contains(&bar) {
            add_hat(out, sr, t + 0.75 * BEAT_S, 0.12, rng);
        }
    }
}

/// One kick: a sine swept from 150 Hz down to 50 Hz (time constant 30 ms) under an
/// exponential decay (time constant 70 ms, so it is gone about 200 ms later). It starts at
/// the top of its first cycle (after a 0.3 ms rise) with a 1 ms click on top, so its energy
/// jumps in one clean step and the onset detector fires at the full height of the hit.
fn kick_sample(sr: f64, rng: &mut XorShift) -> Vec<f32> {
    const LENGTH: f64 = 0.3;
    const FADE: f64 = 0.05;
    const SWEEP_TAU: f64 = 0.03;
    const DECAY_TAU: f64 = 0.07;
    const RISE: f64 = 0.0003;
    let n = (LENGTH * sr).round() as usize;
    (0..n)
        .map(|k| {
            let t = k as f64 / sr;
            // Phase of f(t) = 50 + 100 e^(-t/τ), integrated exactly.
            let sweep = (-t / SWEEP_TAU).pexp();
            let phase = std::f64::consts::TAU * (50.0 * t + 100.0 * SWEEP_TAU * (1.0 - sweep));
            let fade = ((LENGTH - t) / FADE).min(1.0);
            let rise = (t / RISE).min(1.0);
            let body = 0.95 * phase.pcos() * (-t / DECAY_TAU).pexp();
            let click = (-t / 0.001).pexp() * (0.3 + 0.05 * rng.noise());
            ((body + click) * rise * fade) as f32
        })
        .collect()
}

/// One-pole low-pass coefficient (the feedback) for a cutoff in Hz.
fn one_pole(cutoff: f64, sr: f64) -> f64 {
    (-std::f64::consts::TAU * cutoff / sr).pexp()
}

/// A snare (band-passed noise, 120 ms, with a 185 Hz body) or a clap (three quick bursts of
/// the same noise and a tail) at `t` seconds.
fn add_snare(out: &mut Stereo, sr: f64, t: f64, gain: f64, clap: bool, rng: &mut XorShift) {
    const LENGTH: f64 = 0.12;
    let i0 = sample_at(t, sr, out.len());
    let i1 = sample_at(t + LENGTH, sr, out.len());
    let hp = one_pole(900.0, sr);
    let lp = one_pole(5500.0, sr);
    let decay = (-1.0 / (0.035 * sr)).pexp();
    let burst = (-1.0 / (0.004 * sr)).pexp();
    let w = std::f64::consts::TAU * 185.0 / sr;
    let (bc, bs) = (w.pcos(), w.psin());
    let (mut br, mut bi) = (1.0f64, 0.0f64);
    let (mut x_prev, mut high, mut low) = (0.0f64, 0.0f64, 0.0f64);
    let mut env = 1.0f64;
    let mut burst_env = 1.0f64;
    let fade_n = 0.01 * sr;
    let end_n = (i1 - i0) as f64;
    for (k, i) in (i0..i1).enumerate() {
        let x = rng.noise();
        high = hp * (high + x - x_prev);
        x_prev = x;
        low = high + lp * (low - high);
        let fade = ((end_n - k as f64) / fade_n).min(1.0);
        let s = if clap {
            // Bursts at 0, 10 and 20 ms, then the tail from 20 ms.
            let ms = k as f64 / sr * 1000.0;
            if ms < 30.0 && (k as f64) % (0.01 * sr) < 1.0 {
                burst_env = 1.0;
            }
            let tail = if ms >= 20.0 { env } else { 0.0 };
            2.2 * low * burst_env.max(0.6 * tail)
        } else {
            let body = 0.35 * bi;
            let r = br * bc - bi * bs;
            bi = br * bs + bi * bc;
            br = r;
            (2.0 * low + body) * env
        };
        env *= decay;
        burst_env *= burst;
        out.add(i, gain * s * fade, (1.0, 1.0));
    }
}

/// A hat: high-passed noise, 30 ms, decaying fast, a little to the right.
fn add_hat(out: &mut Stereo, sr: f64, t: f64, gain: f64, rng: &mut XorShift) {
    const LENGTH: f64 = 0.03;
    let i0 = sample_at(t, sr, out.len());
    let i1 = sample_at(t + LENGTH, sr, out.len());
    let hp = one_pole(7000.0, sr);
    let decay = (-1.0 / (0.007 * sr)).pexp();
    let gains = pan(0.3);
    let (mut x_prev, mut high, mut env) = (0.0f64, 0.0f64, 1.0f64);
    for i in i0..i1 {
        let x = rng.noise();
        high = hp * (high + x - x_prev);
        x_prev = x;
        out.add(i, gain * high * env, gains);
        env *= decay;
    }
}

#[cfg(test)]
mod tests;
