//! Music to fluid: turns the bridge's events into splats and forces, step by step.
//!
//! Pure and deterministic: no threads, no clocks, no randomness (the same events and steps
//! give the same splats), so the plugin, the offline renderer and the tests agree.
//!
//! - A note injects a burst of dye and momentum at its key-down, then keeps emitting while it
//!   sounds, shaped by an attack-decay-sustain-release envelope: chords and pads glow and
//!   stream, staccato notes flash.
//! - Rows mode (the default): each pitched channel in use gets its own row, spread over the
//!   height in track order (channel 1 at the top), swaying slowly; along its row pitch runs
//!   left to right across the range that channel plays (see [`rows`]).
//! - Keyboard mode: pitch runs left to right across the range of notes in use; pitch class
//!   picks the hue on a 12-step wheel (C red, then every semitone 30 degrees on); velocity
//!   scales the dye, the push and the size; the channel can shift the hue.
//! - Circle mode: pitch class picks the angle around the centre (C at the top, clockwise),
//!   the octave the distance from it.
//! - Expressions: pitch bend (and per-note tuning) moves a note and turns its push; the mod
//!   wheel (CC1) raises the vorticity; channel and poly pressure raise the emission; the
//!   sustain pedal (CC64) holds notes; all-notes-off (CC123) releases and all-sound-off (CC120)
//!   silences.
//! - Audio: the low, mid and high bands each paint their own place (lows swell from the
//!   bottom, mids swirl in the middle, highs sparkle at the top), coloured by the pitch classes
//!   sounding (the chroma analysis), which also stream dye in MIDI notes' hues (see [`audio`]).
//!   With the band amounts at 0 (projects from before them), the full-band path of old: the
//!   level drives a slow, swaying upward push from the bottom ("breathing"); onsets fire
//!   bursts placed along a low-discrepancy sequence, so successive hits spread across the
//!   canvas. Silence adds nothing.
//! - Tempo: with the beat pulse on and the host playing, a push on every beat, phase-locked to
//!   the host's beat position.
//! - Drums: the notes of the drum channel ([`MappingConfig::drum_channel`], channel 10 by
//!   default, as in General MIDI) are instruments, not pitches: one-shot bursts placed, sized
//!   and coloured by family (see [`drums`]): the kick a wide low band of orange-red pushing up
//!   from the bottom; snare, clap and rimshot an electric-blue pair bursting sideways half way
//!   up; hi-hats and cymbals small pale-gold sparkles near the top (hi-hats left, rides right);
//!   toms magenta radial bursts along a low row, low tom left, high tom right; other
//!   percussion small green bursts along a high row, by key. The note-off does nothing. With
//!   no drum channel every channel plays pitched notes.
//! - Pillars: the notes of the pillar channel ([`MappingConfig::pillar_channel`], none by
//!   default) paint nothing; each raises a pillar (a solid disc on the middle line, placed by
//!   pitch, sized by velocity) while its key is down (see [`pillars`]). The mapping says what
//!   to raise and lower ([`Mapper::pillar_edits`]); the engine builds the walls.
//!
//! Why this file is long: `Mapper` is one state machine (held voices, channels, transport, the
//! beat) that every event kind reads and writes, so its `impl` stays whole; the parts that need no
//! shared state already live beside it (`audio`, `drums`, `pillars`, `rows`) and its tests in
//! `mapping/tests.rs`.

use crate::bridge::events::{Expression, NoteId, SimEvent, TimedEvent};
use crate::fluid::{Drum, Splat, SplatShape, hsv_to_rgb};
use crate::kernels::portable::Portable;
use nice_plug::prelude::Enum;
use serde::{Deserialize, Serialize};

pub mod audio;
pub mod drums;
pub mod pillars;
pub mod rows;
pub use drums::{DrumFamily, GM_DRUM_CHANNEL, gm_drum_family};
pub use pillars::{MAX_PILLAR_EDITS, ObstacleEdit, Pillar};

/// Voices sounding at once; the oldest released (else the oldest) is reused beyond this.
pub const MAX_VOICES: usize = 64;
/// Note envelope: attack time (linear rise to 1).
pub const NOTE_ATTACK_S: f32 = 0.02;
/// Note envelope: decay time (linear fall to the sustain level).
pub const NOTE_DECAY_S: f32 = 0.35;
/// Note envelope: sustain level while the key (or the pedal) is held.
pub const NOTE_SUSTAIN: f32 = 0.5;
/// Note envelope: release time (linear fall to 0 after the key is up).
pub const NOTE_RELEASE_S: f32 = 0.8;
/// Height of the keyboard-mode emitters, canvas heights above the bottom.
pub const KEYBOARD_Y: f32 = 0.15;
/// Left and right margin of the keyboard-mode range, in canvas heights.
pub const KEYBOARD_MARGIN: f32 = 0.1;
/// The keyboard range spans at least this many semitones (a lone note sits in the middle).
pub const MIN_RANGE_SEMITONES: f32 = 12.0;
/// The keyboard range shrinks back towards the notes in use at this rate (semitones per
/// second) when its edges go unused.
pub const RANGE_RELAX_PER_S: f32 = 0.5;
/// Hue shift per MIDI channel, in turns (channel 0: none).
pub const CHANNEL_HUE_TURNS: f32 = 1.0 / 24.0;
/// Saturation of note colours.
pub const NOTE_SATURATION: f32 = 0.85;
/// Pitch bend range, in semitones either way.
pub const BEND_SEMITONES: f32 = 2.0;
/// How far a full bend turns a note's push, in degrees.
pub const BEND_TURN_DEGREES: f32 = 30.0;
/// Dye of a key-down burst at full velocity (times the dye amount knob).
pub const NOTE_DYE: f32 = 1.0;
/// Push of a key-down burst at full velocity, canvas heights per second (times the force
/// knob).
pub const NOTE_KICK: f32 = 1.2;
/// Dye a held note emits per second at envelope level 1.
pub const HOLD_DYE_PER_S: f32 = 6.0;
/// Temperature a note's onset adds at its emitter's centre at full velocity (with heat on; a
/// soft note adds 30 % of it).
pub const NOTE_HEAT: f32 = 1.0;
/// Temperature per second a held note keeps adding at full level and velocity: with the
/// default cooling (0.5 /s) a held note's plume stays about as hot as its onset.
pub const HOLD_HEAT_PER_S: f32 = 2.0;
/// Particles a held note emits per second at envelope level 1, as a share of its onset's
/// (the particle knob's count): a held note keeps a thin stream flowing from its emitter.
pub const HOLD_PARTICLES_PER_S: f32 = 0.5;
/// Particles an onset of strength 1 emits, as a share of a note's.
pub const ONSET_PARTICLES: f32 = 0.5;
/// Push a held note gives per second at envelope level 1, canvas heights per second squared.
pub const HOLD_ACCEL: f32 = 1.5;
/// Vorticity added by a full mod wheel.
pub const MOD_WHEEL_VORTICITY: f32 = 0.6;
/// Audio below this RMS level (about -60 dBFS) counts as silence.
pub const SILENCE_RMS: f32 = 1.0e-3;
/// Breathing push per unit RMS level, canvas heights per second squared (times reactivity).
pub const BREATH_ACCEL: f32 = 6.0;
/// Breathing sway period, seconds.
pub const BREATH_SWAY_S: f32 = 8.0;
/// Onset burst push at full strength, canvas heights per second (times reactivity).
pub const ONSET_KICK: f32 = 1.5;
/// Onset burst dye at full strength (times reactivity and the dye amount knob).
pub const ONSET_DYE: f32 = 1.2;
/// Beat pulse push, canvas heights per second.
pub const BEAT_KICK: f32 = 0.8;
/// The swing's full size at this input RMS (times the reactivity): loud music swings the
/// liquid's gravity by its whole sway.
pub const SWING_PER_RMS: f32 = 4.0;
/// One swing there and back, seconds, when the host's transport does not play.
pub const SWING_FREE_S: f32 = 2.0;
/// Time constant of the swing's glide, seconds: when the transport starts or stops and the
/// swing's phase jumps, gravity glides to it instead of jumping (a swing over two beats at
/// 120 BPM lags it by about 10 degrees).
pub const SWING_GLIDE_S: f32 = 0.03;

/// How a note's pitch picks the position of its splat.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MappingMode {
    /// Pitch runs left to right across the range of notes in use, like a keyboard.
    #[id = "keyboard"]
    #[name = "Keyboard"]
    Keyboard,
    /// Pitch class picks the angle around the centre and the octave the radius.
    #[id = "circle"]
    #[name = "Circle of pitch"]
    Circle,
    /// A row per channel over the whole height, pitch left to right along it (see [`rows`]).
    /// Last, so the indices of the older choices (a preset may name them by number) stay.
    #[id = "rows"]
    #[name = "Rows by channel"]
    Rows,
}

/// The knobs the mapping reads, in plain values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MappingConfig {
    pub mode: MappingMode,
    /// Canvas width over height.
    pub aspect: f32,
    /// Splat radius, fraction of the canvas height.
    pub splat_radius: f32,
    /// Force multiplier.
    pub splat_force: f32,
    /// Dye multiplier.
    pub dye_amount: f32,
    /// Audio reactivity multiplier.
    pub reactivity: f32,
    /// Beat pulse on.
    pub beat_pulse: bool,
    /// The channel (0-based: 9 is MIDI channel 10) whose notes are General MIDI drums, or
    /// none (every channel plays pitched notes).
    pub drum_channel: Option<u8>,
    /// Amount of the low, mid and high bands' painting (1 = 100 %). The full-band path of old
    /// (breathing and pale onset bursts) fades out as the largest of them goes from 0 to 1.
    pub bands: [f32; 3],
    /// Amount of colour by pitch: the pitch classes' streams, and whether they colour the
    /// bands (1 = 100 %; 0: the bands keep their own colours).
    pub chroma: f32,
    /// The channel (0-based) whose notes raise and lower pillars instead of painting, or none.
    pub pillar_channel: Option<u8>,
    /// Whether notes heat the fluid (buoyancy is on): each note's splats carry heat, more
    /// with a harder velocity, so held notes rise as plumes.
    pub heat: bool,
    /// Particles a note at full velocity emits as it starts (softer notes fewer; held notes,
    /// onsets and drums emit too; 0: none).
    pub particles: f32,
}

impl Default for MappingConfig {
    /// The parameters' defaults (the engine's tests check that they agree) on a 16:9 canvas.
    fn default() -> Self {
        Self {
            mode: MappingMode::Rows,
            aspect: 16.0 / 9.0,
            splat_radius: 0.03,
            splat_force: 1.0,
            dye_amount: 1.0,
            reactivity: 1.0,
            beat_pulse: false,
            drum_channel: Some(GM_DRUM_CHANNEL),
            bands: [1.0; 3],
            chroma: 1.0,
            pillar_channel: None,
            heat: false,
            particles: 0.0,
        }
    }
}

impl MappingConfig {
    /// How much of the full-band path of old still plays: 1 with every band amount at 0, none
    /// once one reaches 100 %.
    pub fn legacy_audio(&self) -> f32 {
        (1.0 - self.bands.iter().fold(0.0f32, |m, &b| m.max(b))).clamp(0.0, 1.0)
    }
}

/// What the mapping asks of the solver besides splats.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Drive {
    /// Added to the vorticity knob (mod wheel).
    pub vorticity_boost: f32,
    /// The music's swing, -1 to 1: the audio's level, swinging one way on one beat and the
    /// other way on the next while the host plays (slowly, every [`SWING_FREE_S`], when it
    /// does not). The liquid's gravity turns by it times its sway.
    pub swing: f32,
}

/// Envelope stage of a voice.
#[derive(Clone, Copy, Debug, PartialEq)]
enum VoiceStage {
    /// Free slot.
    Off,
    /// Held (attack, decay, sustain by `age`).
    Held,
    /// Key up but the pedal holds it.
    Pedal,
    /// Releasing from `from` over `NOTE_RELEASE_S`.
    Release { from: f32, age: f32 },
}

#[derive(Clone, Copy, Debug)]
struct Voice {
    note: NoteId,
    velocity: f32,
    stage: VoiceStage,
    /// Seconds since key-down.
    age: f32,
    /// Key-down burst not yet emitted.
    burst: bool,
    /// Order of key-down (for stealing).
    serial: u64,
    pressure: f32,
    tuning: f32,
    pan: f32,
    volume: f32,
    vibrato: f32,
    expression: f32,
    brightness: f32,
}

impl Default for Voice {
    fn default() -> Self {
        Self {
            note: NoteId {
                key: 0,
                channel: 0,
                voice: -1,
            },
            velocity: 0.0,
            stage: VoiceStage::Off,
            age: 0.0,
            burst: false,
            serial: 0,
            pressure: 0.0,
            tuning: 0.0,
            pan: 0.0,
            volume: 1.0,
            vibrato: 0.0,
            expression: 0.5,
            brightness: 0.0,
        }
    }
}

/// The note envelope at `age` seconds after key-down, while held.
pub fn held_level(age: f32) -> f32 {
    if age < NOTE_ATTACK_S {
        age / NOTE_ATTACK_S
    } else if age < NOTE_ATTACK_S + NOTE_DECAY_S {
        1.0 - (1.0 - NOTE_SUSTAIN) * (age - NOTE_ATTACK_S) / NOTE_DECAY_S
    } else {
        NOTE_SUSTAIN
    }
}

/// The note envelope `age` seconds into a release that started at level `from`.
pub fn release_level(from: f32, age: f32) -> f32 {
    (from * (1.0 - age / NOTE_RELEASE_S)).max(0.0)
}

impl Voice {
    fn level(&self) -> f32 {
        match self.stage {
            VoiceStage::Off => 0.0,
            VoiceStage::Held | VoiceStage::Pedal => held_level(self.age),
            VoiceStage::Release { from, age } => release_level(from, age),
        }
    }

    fn matches(&self, n: &NoteId) -> bool {
        self.stage != VoiceStage::Off
            && (n.voice < 0 || self.note.voice < 0 || n.voice == self.note.voice)
            && (n.key == u8::MAX || n.key == self.note.key)
            && (n.channel == u8::MAX || n.channel == self.note.channel)
    }

    fn release(&mut self) {
        if matches!(self.stage, VoiceStage::Held | VoiceStage::Pedal) {
            self.stage = VoiceStage::Release {
                from: held_level(self.age),
                age: 0.0,
            };
        }
    }
}

/// Per-channel controller state.
#[derive(Clone, Copy, Debug, Default)]
struct ChannelState {
    bend: f32,
    pressure: f32,
    mod_wheel: f32,
    sustain: bool,
}

/// The host transport as last reported.
#[derive(Clone, Copy, Debug)]
struct TransportState {
    playing: bool,
    tempo_bpm: f32,
    beat: f64,
    at_s: f64,
}

/// The mapping's state.
pub struct Mapper {
    voices: [Voice; MAX_VOICES],
    channels: [ChannelState; 16],
    /// Lowest and highest key played (their edges relax towards the notes in use).
    span: Option<(f32, f32)>,
    /// Rows mode's per-channel ranges and row places (kept up in every mode, so switching
    /// modes mid-song finds them ready).
    rows: rows::Rows,
    serial: u64,
    /// RMS level of the input, from the latest reading.
    level: f32,
    /// Onset strengths waiting for the next step.
    onsets: [f32; 16],
    pending_onsets: usize,
    /// Onsets fired so far (drives their placement).
    onset_count: u32,
    /// Drum hits so far (drives the cymbals' jitter).
    drum_hits: u32,
    /// Latest audio time seen in an event.
    audio_now: f64,
    transport: Option<TransportState>,
    /// Beat index of the last pulse.
    last_beat: Option<i64>,
    /// Seconds of emission so far (breathing sway, vibrato).
    time: f32,
    /// The free swing's phase, 0 to 1, and the swing as it glides (see [`Drive::swing`]).
    swing_phase: f32,
    swing: f32,
    /// The bands and pitch classes' painting.
    audio: audio::AudioPaint,
    /// The keys down on every channel and the pillars standing.
    pillars: pillars::PillarNotes,
}

impl Default for Mapper {
    fn default() -> Self {
        Self::new()
    }
}

/// Where a channel's notes land in the 3D liquid's depth: channels 1 to 4 (and again 5 to 8,
/// ...) from the front of the tank to its back, so parts played on different channels keep
/// their own layers of the water.
pub fn channel_depth(channel: u8) -> f32 {
    -0.75 + 0.5 * f32::from(channel % 4)
}

/// Canvas position of a key in keyboard mode.
fn keyboard_x(key: f32, range: (f32, f32), aspect: f32) -> f32 {
    let (lo, hi) = range;
    let frac = ((key - lo) / (hi - lo)).clamp(0.0, 1.0);
    let width = (aspect - 2.0 * KEYBOARD_MARGIN).max(0.0);
    KEYBOARD_MARGIN.min(aspect / 2.0) + frac * width
}

/// `x` clamped to `[lo, hi]`; NaN counts as 0 (clamped too).
fn finite_in(x: f32, lo: f32, hi: f32) -> f32 {
    if x.is_nan() {
        0.0f32.clamp(lo, hi)
    } else {
        x.clamp(lo, hi)
    }
}

/// Point `n` of the R2 low-discrepancy sequence in [0, 1)^2 (Roberts 2018): consecutive
/// points land far apart and the sequence fills the square evenly.
fn r2(n: u32) -> (f32, f32) {
    let n = f64::from(n);
    let a = (0.5 + n * 0.754_877_666_246_692_7).fract();
    let b = (0.5 + n * 0.569_840_290_998_053_3).fract();
    (a as f32, b as f32)
}

impl Mapper {
    /// A mapping with no notes, silence, and no transport.
    pub fn new() -> Self {
        Self {
            voices: [Voice::default(); MAX_VOICES],
            channels: [ChannelState::default(); 16],
            span: None,
            rows: rows::Rows::default(),
            serial: 0,
            level: 0.0,
            onsets: [0.0; 16],
            pending_onsets: 0,
            onset_count: 0,
            drum_hits: 0,
            audio_now: 0.0,
            transport: None,
            last_beat: None,
            time: 0.0,
            swing_phase: 0.0,
            swing: 0.0,
            audio: audio::AudioPaint::default(),
            pillars: pillars::PillarNotes::default(),
        }
    }

    /// The bands and pitch classes' painting state.
    pub fn audio(&self) -> &audio::AudioPaint {
        &self.audio
    }

    /// Voices sounding (including releasing ones).
    pub fn active_voices(&self) -> usize {
        self.voices
            .iter()
            .filter(|v| v.stage != VoiceStage::Off)
            .count()
    }

    /// Whether the next [`Mapper::emit`] would emit nothing, whatever its `dt`: no note
    /// sounds (or releases), no onset waits, the audio is below [`SILENCE_RMS`] (or reactivity
    /// is off), no beat pulse runs (the host stopped, or Beat pulse is off), and no pillar
    /// waits to be raised or lowered. The engine lets the fluid rest only then.
    pub fn quiet(&self, cfg: &MappingConfig) -> bool {
        self.active_voices() == 0
            && self.pending_onsets == 0
            && (self.level <= SILENCE_RMS || cfg.reactivity <= 0.0 || cfg.legacy_audio() <= 0.0)
            && self.audio.quiet(cfg)
            && !(cfg.beat_pulse && self.transport.is_some_and(|t| t.playing))
            && !self.pillars.pending(cfg.pillar_channel)
    }

    /// The keyboard range in use (lowest, highest key), once a pitched note has been emitted.
    /// The span, widened about its middle to at least [`MIN_RANGE_SEMITONES`].
    pub fn range(&self) -> Option<(f32, f32)> {
        self.span.map(rows::padded)
    }

    /// Rows mode's state: each channel's range and row.
    pub fn rows(&self) -> &rows::Rows {
        &self.rows
    }

    fn widen_span(&mut self, key: f32) {
        let (lo, hi) = self.span.unwrap_or((key, key));
        self.span = Some((lo.min(key), hi.max(key)));
    }

    fn channel(&mut self, c: u8) -> &mut ChannelState {
        &mut self.channels[usize::from(c.min(15))]
    }

    /// Take one event.
    pub fn handle(&mut self, e: &TimedEvent) {
        if e.time_s.is_finite() {
            self.audio_now = self.audio_now.max(e.time_s);
        }
        match e.event {
            SimEvent::NoteOn { note, velocity } => {
                self.pillars.note_on(note.channel, note.key, velocity);
                self.note_on(note, velocity);
            }
            SimEvent::NoteOff { note } => {
                self.pillars.note_off(note.channel, note.key);
                let sustain = note.channel != u8::MAX && self.channel(note.channel).sustain;
                for v in self.voices.iter_mut().filter(|v| v.matches(&note)) {
                    if sustain {
                        if v.stage == VoiceStage::Held {
                            v.stage = VoiceStage::Pedal;
                        }
                    } else {
                        v.release();
                    }
                }
            }
            SimEvent::Choke { note } => {
                self.pillars.note_off(note.channel, note.key);
                for v in self.voices.iter_mut().filter(|v| v.matches(&note)) {
                    v.stage = VoiceStage::Off;
                }
            }
            SimEvent::NoteExpression { note, kind, value } => {
                let value = finite_in(value, -128.0, 128.0);
                for v in self.voices.iter_mut().filter(|v| v.matches(&note)) {
                    match kind {
                        Expression::Volume => v.volume = value.clamp(0.0, 4.0),
                        Expression::Pan => v.pan = value.clamp(-1.0, 1.0),
                        Expression::Tuning => v.tuning = value,
                        Expression::Vibrato => v.vibrato = value.clamp(0.0, 1.0),
                        Expression::Expression => v.expression = value.clamp(0.0, 1.0),
                        Expression::Brightness => v.brightness = value.clamp(0.0, 1.0),
                        Expression::Pressure => v.pressure = value.clamp(0.0, 1.0),
                    }
                }
            }
            SimEvent::ControlChange { channel, cc, value } => {
                self.control(channel.min(15), cc, finite_in(value, 0.0, 1.0));
            }
            SimEvent::PitchBend { channel, value } => {
                self.channel(channel).bend = finite_in(value, -1.0, 1.0);
            }
            SimEvent::ChannelPressure { channel, pressure } => {
                self.channel(channel).pressure = finite_in(pressure, 0.0, 1.0);
            }
            SimEvent::Transport {
                playing,
                tempo_bpm,
                beat,
            } => {
                self.transport = Some(TransportState {
                    playing,
                    tempo_bpm: finite_in(tempo_bpm, 0.0, 1000.0),
                    beat: if beat.is_finite() { beat } else { 0.0 },
                    at_s: if e.time_s.is_finite() {
                        e.time_s
                    } else {
                        self.audio_now
                    },
                });
            }
            SimEvent::Envelope { rms, .. } => {
                let level = rms[0].max(rms[1]);
                self.level = if level.is_finite() {
                    level.clamp(0.0, 4.0)
                } else {
                    0.0
                };
            }
            SimEvent::Onset { strength } => {
                if self.pending_onsets < self.onsets.len() {
                    self.onsets[self.pending_onsets] = finite_in(strength, 0.0, 1.0);
                    self.pending_onsets += 1;
                }
            }
            SimEvent::Silence => {
                for v in &mut self.voices {
                    v.stage = VoiceStage::Off;
                }
                self.level = 0.0;
                self.pending_onsets = 0;
                self.audio.handle(&SimEvent::Silence);
                self.pillars.silence();
            }
            SimEvent::Bands { .. } | SimEvent::BandOnset { .. } | SimEvent::Chroma { .. } => {
                self.audio.handle(&e.event);
            }
            SimEvent::Splat(_) | SimEvent::Brush(_) | SimEvent::Reset => {}
        }
    }

    fn control(&mut self, channel: u8, cc: u8, value: f32) {
        match cc {
            1 => self.channel(channel).mod_wheel = value,
            64 => {
                let down = value >= 0.5;
                self.channel(channel).sustain = down;
                if !down {
                    for v in self.voices.iter_mut() {
                        if v.note.channel == channel && v.stage == VoiceStage::Pedal {
                            v.release();
                        }
                    }
                }
            }
            // All sound off: silence the channel at once.
            120 => {
                self.pillars.note_off(channel, u8::MAX);
                for v in self.voices.iter_mut().filter(|v| v.note.channel == channel) {
                    v.stage = VoiceStage::Off;
                }
            }
            // All notes off: release the channel's notes, pedal or not.
            123 => {
                self.pillars.note_off(channel, u8::MAX);
                for v in self.voices.iter_mut().filter(|v| v.note.channel == channel) {
                    v.release();
                }
            }
            _ => {}
        }
    }

    fn note_on(&mut self, note: NoteId, velocity: f32) {
        if note.key > 127 {
            return;
        }
        // NOTE: the keyboard span widens at the first emit, where the drum channel is known
        // (see `strike_drums`): a drum note must not stretch the pitched notes' keyboard.
        self.serial += 1;
        // A free slot, else the oldest releasing voice, else the oldest.
        let slot = (0..MAX_VOICES)
            .find(|&i| self.voices[i].stage == VoiceStage::Off)
            .or_else(|| {
                (0..MAX_VOICES)
                    .filter(|&i| matches!(self.voices[i].stage, VoiceStage::Release { .. }))
                    .min_by_key(|&i| self.voices[i].serial)
            })
            .unwrap_or_else(|| {
                (0..MAX_VOICES)
                    .min_by_key(|&i| self.voices[i].serial)
                    .expect("MAX_VOICES > 0")
            });
        self.voices[slot] = Voice {
            note,
            velocity: finite_in(velocity, 0.0, 1.0),
            stage: VoiceStage::Held,
            age: 0.0,
            burst: true,
            serial: self.serial,
            ..Voice::default()
        };
    }

    /// Where and how a voice emits: position, push direction (unit), colour.
    fn emitter(&self, v: &Voice, cfg: &MappingConfig) -> ([f32; 2], [f32; 2], [f32; 3]) {
        let ch = self.channels[usize::from(v.note.channel.min(15))];
        let bend = ch.bend * BEND_SEMITONES + v.tuning;
        let vibrato = v.vibrato * 0.3 * (self.time * std::f32::consts::TAU * 6.0).psin();
        let key = f32::from(v.note.key) + bend + vibrato;
        let pc = f32::from(v.note.key % 12);
        let hue = pc / 12.0 + f32::from(v.note.channel.min(15)) * CHANNEL_HUE_TURNS;
        let saturation = NOTE_SATURATION * (1.0 - 0.6 * v.brightness.clamp(0.0, 1.0));
        let color = hsv_to_rgb(hue, saturation, 1.0);
        let turn = (ch.bend * BEND_TURN_DEGREES).to_radians();
        match cfg.mode {
            MappingMode::Keyboard => {
                let range = self.range().unwrap_or((key - 6.0, key + 6.0));
                let x = keyboard_x(key, range, cfg.aspect) + v.pan * 0.1 * cfg.aspect;
                // Up, turned by the bend.
                (
                    [x.clamp(0.0, cfg.aspect), KEYBOARD_Y],
                    [turn.psin(), turn.pcos()],
                    color,
                )
            }
            MappingMode::Rows => {
                let place = self
                    .rows
                    .place(v.note.channel, key, v.serial, self.time, cfg.aspect);
                let [x, y] = place.pos;
                let [dx, dy] = place.dir;
                let (s, c) = turn.psin_cos();
                (
                    [(x + v.pan * 0.1 * cfg.aspect).clamp(0.0, cfg.aspect), y],
                    // Turned by the bend.
                    [dx * c + dy * s, dy * c - dx * s],
                    color,
                )
            }
            MappingMode::Circle => {
                // C at the top, clockwise; the bend moves along the circle.
                let angle = std::f32::consts::FRAC_PI_2
                    - (pc + bend + vibrato) / 12.0 * std::f32::consts::TAU;
                let octave = (f32::from(v.note.key) / 12.0).floor();
                let radius = 0.06 + 0.04 * octave.clamp(0.0, 10.0);
                let (s, c) = angle.psin_cos();
                let centre = [cfg.aspect / 2.0, 0.5];
                let pos = [
                    centre[0] + radius * c + v.pan * 0.05,
                    centre[1] + radius * s,
                ];
                // Outwards, turned by the bend.
                let dir = [
                    c * turn.pcos() - s * turn.psin(),
                    s * turn.pcos() + c * turn.psin(),
                ];
                (pos, dir, color)
            }
        }
    }

    /// Advance `dt` seconds of real time: emit this step's splats into `out` (cleared first)
    /// and return what else the solver should do.
    pub fn emit(&mut self, dt: f32, cfg: &MappingConfig, out: &mut Vec<Splat>) -> Drive {
        out.clear();
        let dt = if dt.is_finite() {
            dt.clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.time += dt;
        // Kept in 0..1, so it swings as smoothly after a week as in the first minute.
        self.swing_phase = (self.swing_phase + dt / SWING_FREE_S).fract();
        self.strike_drums(cfg, out);
        self.relax_span(dt);
        self.advance_rows(dt);
        // How strongly MIDI notes sound (the drums struck above are gone): the pitch-class
        // streams give way to them.
        let midi = self
            .voices
            .iter()
            .fold(0.0f32, |m, v| m.max(v.level()))
            .min(1.0);
        let radius = cfg.splat_radius;
        for i in 0..MAX_VOICES {
            let v = self.voices[i];
            if v.stage == VoiceStage::Off {
                continue;
            }
            let (pos, dir, color) = self.emitter(&v, cfg);
            let depth = channel_depth(v.note.channel);
            let ch = self.channels[usize::from(v.note.channel.min(15))];
            let vel = v.velocity;
            let size = radius * (0.7 + 0.6 * vel);
            let touch = v.volume.max(0.0)
                * (0.5 + v.expression)
                * (1.0 + 2.0 * v.pressure.max(ch.pressure));
            if v.burst {
                let kick = NOTE_KICK * cfg.splat_force * (0.4 + 0.6 * vel);
                out.push(Splat {
                    pos,
                    radius: size,
                    color,
                    amount: NOTE_DYE * cfg.dye_amount * (0.35 + 0.65 * vel) * touch,
                    force: [dir[0] * kick, dir[1] * kick],
                    shape: SplatShape::Gaussian,
                    heat: if cfg.heat {
                        NOTE_HEAT * (0.3 + 0.7 * vel)
                    } else {
                        0.0
                    },
                    particles: cfg.particles.max(0.0) * (0.2 + 0.8 * vel),
                    depth,
                    drum: Drum::None,
                });
            }
            let level = v.level();
            if level > 0.0 && dt > 0.0 {
                let push = HOLD_ACCEL * cfg.splat_force * level * dt * touch;
                out.push(Splat {
                    pos,
                    radius: size * 0.8,
                    color,
                    amount: HOLD_DYE_PER_S
                        * cfg.dye_amount
                        * level
                        * (0.5 + 0.5 * vel)
                        * dt
                        * touch,
                    force: [dir[0] * push, dir[1] * push],
                    shape: SplatShape::Gaussian,
                    heat: if cfg.heat {
                        HOLD_HEAT_PER_S * level * (0.5 + 0.5 * vel) * dt * touch
                    } else {
                        0.0
                    },
                    particles: HOLD_PARTICLES_PER_S * cfg.particles.max(0.0) * level * dt * touch,
                    depth,
                    drum: Drum::None,
                });
            }
            // Advance the envelope.
            let voice = &mut self.voices[i];
            voice.burst = false;
            voice.age += dt;
            if let VoiceStage::Release { from, age } = voice.stage {
                let age = age + dt;
                voice.stage = if age >= NOTE_RELEASE_S {
                    VoiceStage::Off
                } else {
                    VoiceStage::Release { from, age }
                };
            }
        }
        self.emit_audio(dt, cfg, out);
        self.audio.emit(dt, cfg, midi, out);
        self.emit_beat(cfg, out);
        Drive {
            vorticity_boost: self.channels.iter().fold(0.0f32, |m, c| m.max(c.mod_wheel))
                * MOD_WHEEL_VORTICITY,
            swing: {
                let target = self.swing(cfg);
                let glide = 1.0 - (-dt / SWING_GLIDE_S).pexp();
                self.swing += (target - self.swing) * glide;
                self.swing
            },
        }
    }

    /// The music's swing now (see [`Drive::swing`]): one swing over two beats, so the liquid
    /// leans one way on a beat and the other way on the next.
    fn swing(&self, cfg: &MappingConfig) -> f32 {
        let size = (self.level * SWING_PER_RMS * cfg.reactivity.max(0.0)).min(1.0);
        if size <= 0.0 {
            return 0.0;
        }
        let phase = match self.beat_now() {
            Some(beat) => (beat.rem_euclid(2.0) * 0.5) as f32,
            None => self.swing_phase,
        };
        size * (phase * std::f32::consts::TAU).psin()
    }

    /// The new notes' first emission: a pillar note (on the pillar channel) ends at once
    /// without painting (its pillar is [`Mapper::pillar_edits`]'); a drum note (on the drum
    /// channel) fires its one-shot burst and ends at once, so its note-off finds nothing; a
    /// pitched note widens the keyboard span.
    fn strike_drums(&mut self, cfg: &MappingConfig, out: &mut Vec<Splat>) {
        for i in 0..MAX_VOICES {
            let v = self.voices[i];
            if v.stage == VoiceStage::Off || !v.burst {
                continue;
            }
            if cfg.pillar_channel == Some(v.note.channel) {
                self.voices[i].stage = VoiceStage::Off;
            } else if cfg.drum_channel == Some(v.note.channel) {
                drums::strike(v.note.key, v.velocity, self.drum_hits, cfg, out);
                self.drum_hits = self.drum_hits.wrapping_add(1);
                self.voices[i].stage = VoiceStage::Off;
            } else {
                self.widen_span(f32::from(v.note.key));
                self.rows.widen(v.note.channel, f32::from(v.note.key));
            }
        }
    }

    fn relax_span(&mut self, dt: f32) {
        let Some((lo, hi)) = self.span else { return };
        let keys = self
            .voices
            .iter()
            .filter(|v| v.stage != VoiceStage::Off)
            .map(|v| f32::from(v.note.key));
        let (min, max) = keys.fold((f32::MAX, f32::MIN), |(a, b), k| (a.min(k), b.max(k)));
        if min > max {
            return;
        }
        let step = RANGE_RELAX_PER_S * dt;
        let lo = if min > lo { (lo + step).min(min) } else { lo };
        let hi = if max < hi { (hi - step).max(max) } else { hi };
        self.span = Some((lo, hi));
    }

    /// Rows mode: place new rows, glide the others, relax each channel's range.
    fn advance_rows(&mut self, dt: f32) {
        let mut in_use = [None::<(f32, f32)>; 16];
        for v in self.voices.iter().filter(|v| v.stage != VoiceStage::Off) {
            let key = f32::from(v.note.key);
            let slot = &mut in_use[usize::from(v.note.channel.min(15))];
            let (lo, hi) = slot.unwrap_or((key, key));
            *slot = Some((lo.min(key), hi.max(key)));
        }
        self.rows.advance(dt, &in_use);
    }

    /// The full-band path of old, faded out by the band amounts.
    fn emit_audio(&mut self, dt: f32, cfg: &MappingConfig, out: &mut Vec<Splat>) {
        let react = cfg.reactivity.max(0.0) * cfg.legacy_audio();
        if self.level > SILENCE_RMS && dt > 0.0 && react > 0.0 {
            let sway = (self.time / BREATH_SWAY_S * std::f32::consts::TAU).psin();
            let push = BREATH_ACCEL * self.level * react * dt;
            out.push(Splat {
                pos: [cfg.aspect * (0.5 + 0.15 * sway), 0.05],
                radius: 0.15,
                color: [0.0; 3],
                amount: 0.0,
                force: [0.0, push],
                shape: SplatShape::Gaussian,
                heat: 0.0,
                particles: 0.0,
                depth: 0.0,
                drum: Default::default(),
            });
        }
        for k in 0..self.pending_onsets {
            let strength = self.onsets[k];
            let n = self.onset_count;
            self.onset_count = self.onset_count.wrapping_add(1);
            if react <= 0.0 {
                continue;
            }
            let (a, b) = r2(n);
            let pos = [
                KEYBOARD_MARGIN + a * (cfg.aspect - 2.0 * KEYBOARD_MARGIN).max(0.0),
                0.15 + b * 0.7,
            ];
            let angle = (n as f32 * 0.618_034).fract() * std::f32::consts::TAU;
            let kick = ONSET_KICK * strength * react * cfg.splat_force;
            let color = hsv_to_rgb((n as f32 * 0.381_966).fract(), 0.5, 1.0);
            out.push(Splat {
                pos,
                radius: cfg.splat_radius * (1.2 + 1.5 * strength),
                color,
                amount: ONSET_DYE * strength * react * cfg.dye_amount,
                force: [angle.pcos() * kick, angle.psin() * kick],
                shape: SplatShape::Gaussian,
                heat: 0.0,
                particles: ONSET_PARTICLES * cfg.particles.max(0.0) * strength * react,
                depth: 0.0,
                drum: Default::default(),
            });
        }
        self.pending_onsets = 0;
    }

    /// The pillar changes the keys down on the pillar channel ask for since the last call,
    /// into `out` (cleared first; at most [`MAX_PILLAR_EDITS`]: a vector of that capacity
    /// never grows). Call once per step, after [`Mapper::emit`].
    pub fn pillar_edits(&mut self, cfg: &MappingConfig, out: &mut Vec<ObstacleEdit>) {
        self.pillars.edits(cfg.pillar_channel, cfg.aspect, out);
    }

    /// The host's beat position now, extrapolated from its last report.
    pub fn beat_now(&self) -> Option<f64> {
        let t = self.transport?;
        (t.playing && t.tempo_bpm > 0.0)
            .then(|| t.beat + (self.audio_now - t.at_s).max(0.0) * f64::from(t.tempo_bpm) / 60.0)
    }

    fn emit_beat(&mut self, cfg: &MappingConfig, out: &mut Vec<Splat>) {
        let Some(beat) = self.beat_now().filter(|_| cfg.beat_pulse) else {
            self.last_beat = None;
            return;
        };
        let index = beat.floor() as i64;
        let fire = self.last_beat.is_some_and(|last| index > last);
        self.last_beat = Some(index);
        if !fire {
            return;
        }
        // Downbeats push up from the centre, the others sideways, alternating.
        let dir = match index.rem_euclid(4) {
            0 => [0.0, 1.0],
            1 | 3 => [if index.rem_euclid(8) < 4 { 1.0 } else { -1.0 }, 0.0],
            _ => [0.0, -1.0],
        };
        let kick = BEAT_KICK * cfg.splat_force;
        out.push(Splat {
            pos: [cfg.aspect / 2.0, 0.5],
            radius: 0.12,
            color: [0.0; 3],
            amount: 0.0,
            force: [dir[0] * kick, dir[1] * kick],
            shape: SplatShape::Gaussian,
            heat: 0.0,
            particles: 0.0,
            depth: 0.0,
            drum: Default::default(),
        });
    }
}

#[cfg(test)]
mod tests;
