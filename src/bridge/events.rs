//! Events that cross from the audio thread (and the editor) to the simulation thread: small,
//! fixed-size, `Copy`, so the ring buffer never allocates.

use super::bands::Band;
use crate::fluid::Splat;
use serde::{Deserialize, Serialize};

/// A per-note expression (CLAP note expressions and their MIDI equivalents).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Expression {
    /// Gain, 1 = unity.
    Volume,
    /// -1 (left) to 1 (right).
    Pan,
    /// Semitones, -128 to 128.
    Tuning,
    /// 0 to 1.
    Vibrato,
    /// 0 to 1.
    Expression,
    /// 0 to 1.
    Brightness,
    /// Polyphonic key pressure, 0 to 1.
    Pressure,
}

/// Which note an event is about. `voice` is the host's voice (note) id, or -1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteId {
    /// MIDI key, 0 to 127.
    pub key: u8,
    /// MIDI channel, 0 to 15.
    pub channel: u8,
    /// Host voice id, -1 when none.
    pub voice: i32,
}

/// A stroke of the obstacle brush (the editor's Draw and Erase): every cell within `radius`
/// of the segment from `from` to `to` becomes solid (`solid`) or fluid. Canvas units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Brush {
    pub from: [f32; 2],
    pub to: [f32; 2],
    pub radius: f32,
    pub solid: bool,
}

/// Something that should happen to the fluid.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum SimEvent {
    /// A key went down; velocity 0 to 1.
    NoteOn { note: NoteId, velocity: f32 },
    /// A key came up.
    NoteOff { note: NoteId },
    /// A note must stop at once (CLAP choke).
    Choke { note: NoteId },
    /// A note's expression changed.
    NoteExpression {
        note: NoteId,
        kind: Expression,
        value: f32,
    },
    /// A MIDI control change, value 0 to 1.
    ControlChange { channel: u8, cc: u8, value: f32 },
    /// Pitch bend, -1 to 1 (0: centre).
    PitchBend { channel: u8, value: f32 },
    /// Channel pressure (aftertouch), 0 to 1.
    ChannelPressure { channel: u8, pressure: f32 },
    /// The host's transport, when it gives it: beat position in quarter notes.
    Transport {
        playing: bool,
        tempo_bpm: f32,
        beat: f64,
    },
    /// Envelope reading of the input, per channel (mono input: both the same), linear.
    Envelope { rms: [f32; 2], peak: [f32; 2] },
    /// A transient in the input (drum hit, pluck); strength 0 to 1.
    Onset { strength: f32 },
    /// Envelope reading of the input's low, mid and high bands (the channels' mean), RMS,
    /// linear; sent with every [`SimEvent::Envelope`].
    Bands { rms: [f32; 3] },
    /// A transient in one band (a kick in the low band, a snare in the mid or high band);
    /// strength 0 to 1.
    BandOnset { band: Band, strength: f32 },
    /// The input's pitch classes (C first, then C#, ... B), each 0 to 1: how strongly that
    /// class sounds, scaled by loudness (silence: all 0). From the chroma analysis.
    Chroma { weights: [f32; 12] },
    /// Stop every note now (bypass engaged, all sound off).
    Silence,
    /// Paint directly: dye and momentum at a point (the editor's mouse, tests).
    Splat(Splat),
    /// Draw or erase obstacles (the editor's brush).
    Brush(Brush),
    /// Clear the fluid to rest.
    Reset,
}

/// An event with the time it happened, in seconds on the producer's clock (audio time for the
/// audio thread: samples processed since activation divided by the sample rate).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimedEvent {
    /// When the event happened, in seconds.
    pub time_s: f64,
    /// What happened.
    pub event: SimEvent,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_stay_small() {
        // Copy and fixed size: a ring buffer slot. Splat is the largest variant.
        assert!(
            std::mem::size_of::<TimedEvent>() <= 64,
            "{}",
            std::mem::size_of::<TimedEvent>()
        );
    }
}
