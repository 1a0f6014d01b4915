//! Standard MIDI Files for the render tests.

use midly::num::{u4, u7, u15, u24, u28};
use midly::{Format, Header, MetaMessage, MidiMessage, Smf, Timing, TrackEvent, TrackEventKind};

/// A MIDI file at 120 bpm (480 ticks per beat) with `notes` as (start s, length s, key), on
/// channel 1 at velocity 100. `Format::SingleTrack` (type 0) puts the tempo in the notes'
/// track; `Format::Parallel` (type 1) gives it a track of its own, before the notes'.
pub fn midi_file(format: Format, notes: &[(f64, f64, u8)]) -> Vec<u8> {
    let tick = |s: f64| (s * 960.0).round() as u64; // 120 bpm: 960 ticks per second
    let mut events: Vec<(u64, MidiMessage)> = Vec::new();
    for &(start, len, key) in notes {
        events.push((
            tick(start),
            MidiMessage::NoteOn {
                key: u7::new(key),
                vel: u7::new(100),
            },
        ));
        events.push((
            tick(start + len),
            MidiMessage::NoteOff {
                key: u7::new(key),
                vel: u7::new(0),
            },
        ));
    }
    events.sort_by_key(|e| e.0);
    let tempo = TrackEvent {
        delta: u28::new(0),
        kind: TrackEventKind::Meta(MetaMessage::Tempo(u24::new(500_000))),
    };
    let end = TrackEvent {
        delta: u28::new(0),
        kind: TrackEventKind::Meta(MetaMessage::EndOfTrack),
    };
    let single = format == Format::SingleTrack;
    let mut track = if single { vec![tempo] } else { Vec::new() };
    let mut now = 0;
    for (t, message) in events {
        track.push(TrackEvent {
            delta: u28::new((t - now) as u32),
            kind: TrackEventKind::Midi {
                channel: u4::new(0),
                message,
            },
        });
        now = t;
    }
    track.push(end);
    let tracks = if single {
        vec![track]
    } else {
        vec![vec![tempo, end], track]
    };
    let smf = Smf {
        header: Header::new(format, Timing::Metrical(u15::new(480))),
        tracks,
    };
    let mut bytes = Vec::new();
    smf.write_std(&mut bytes).unwrap();
    bytes
}
