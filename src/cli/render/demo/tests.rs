//! Tests of the built-in demo.

use super::*;
use std::collections::HashMap;

/// All channel messages of the demo: (absolute tick, channel, message), per track.
fn messages() -> Vec<(u32, u8, MidiMessage)> {
    let bytes = midi_bytes();
    let smf = Smf::parse(&bytes).expect("the demo parses");
    let mut out = Vec::new();
    for track in &smf.tracks {
        let mut tick = 0u32;
        for ev in track {
            tick += ev.delta.as_int();
            if let TrackEventKind::Midi { channel, message } = ev.kind {
                out.push((tick, channel.as_int(), message));
            }
        }
    }
    out
}

#[test]
fn midi_is_type_1_with_three_tracks_at_480_tpb() {
    let bytes = midi_bytes();
    let smf = Smf::parse(&bytes).expect("the demo parses");
    assert_eq!(smf.header.format, Format::Parallel);
    assert_eq!(smf.header.timing, Timing::Metrical(u15::new(480)));
    assert_eq!(smf.tracks.len(), 3);
    let tempo = smf.tracks[0].iter().find_map(|ev| match ev.kind {
        TrackEventKind::Meta(MetaMessage::Tempo(t)) => Some(t.as_int()),
        _ => None,
    });
    assert_eq!(tempo, Some(500_000));
    for track in &smf.tracks {
        let last = track.last().expect("tracks are not empty");
        assert_eq!(last.kind, TrackEventKind::Meta(MetaMessage::EndOfTrack));
        let ticks: u32 = track.iter().map(|ev| ev.delta.as_int()).sum();
        let seconds = f64::from(ticks) / 480.0 * BEAT_S;
        assert!((seconds - DEMO_SECONDS).abs() < 1e-9, "{seconds}");
        // Exactly one End of Track.
        assert_eq!(
            track
                .iter()
                .filter(|ev| ev.kind == TrackEventKind::Meta(MetaMessage::EndOfTrack))
                .count(),
            1
        );
    }
}

#[test]
fn midi_has_melody_chords_pedal_bend_and_mod_wheel() {
    let msgs = messages();
    let on_channel = |c: u8| {
        msgs.iter()
            .any(|&(_, ch, m)| ch == c && matches!(m, MidiMessage::NoteOn { vel, .. } if vel > 0))
    };
    assert!(on_channel(0), "melody note-ons on channel 1");
    assert!(on_channel(1), "chord note-ons on channel 2");
    let cc = |n: u8| {
        msgs.iter().any(
            |&(_, _, m)| matches!(m, MidiMessage::Controller { controller, .. } if controller == n),
        )
    };
    assert!(cc(64), "sustain pedal");
    assert!(cc(1), "mod wheel");
    assert!(
        msgs.iter()
            .any(|&(_, _, m)| matches!(m, MidiMessage::PitchBend { .. }))
    );
    // Pedal goes down and comes back up.
    let pedal: Vec<u8> = msgs
        .iter()
        .filter_map(|&(_, _, m)| match m {
            MidiMessage::Controller { controller, value } if controller == 64 => {
                Some(value.as_int())
            }
            _ => None,
        })
        .collect();
    assert_eq!(pedal.first(), Some(&127));
    assert_eq!(pedal.last(), Some(&0));
}

#[test]
fn notes_are_matched_in_range_and_end_before_the_tail() {
    let msgs = messages();
    let mut open: HashMap<(u8, u8), u32> = HashMap::new();
    let (mut lo, mut hi) = (127u8, 0u8);
    let (mut chord_lo, mut chord_hi) = (127u8, 0u8);
    let mut notes = 0;
    let last_tick = beats_to_ticks((DEMO_SECONDS - 1.5) / BEAT_S);
    for &(tick, ch, m) in &msgs {
        match m {
            MidiMessage::NoteOn { key, vel } if vel > 0 => {
                let (key, vel) = (key.as_int(), vel.as_int());
                assert!((60..=120).contains(&vel), "velocity {vel}");
                assert!(
                    open.insert((ch, key), tick).is_none(),
                    "overlapping note {key} on channel {ch}"
                );
                lo = lo.min(key);
                hi = hi.max(key);
                if ch == 1 {
                    chord_lo = chord_lo.min(key);
                    chord_hi = chord_hi.max(key);
                }
                notes += 1;
            }
            MidiMessage::NoteOn { key, .. } | MidiMessage::NoteOff { key, .. } => {
                let on = open.remove(&(ch, key.as_int()));
                assert!(on.is_some_and(|on| on < tick), "unmatched note-off {key}");
                assert!(tick < last_tick, "note ends at tick {tick}");
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "notes left on: {open:?}");
    assert!(notes > 40);
    assert!(hi - lo >= 24, "range {lo}..{hi}");
    assert!(
        chord_lo >= 48 && chord_hi <= 64,
        "chords {chord_lo}..{chord_hi}"
    );
    // Chords have 3 or 4 notes.
    for chord in CHORDS {
        assert!((3..=4).contains(&chord.len()));
    }
}

#[test]
fn audio_is_stereo_bounded_and_deterministic() {
    let a = audio(DEMO_SAMPLE_RATE);
    assert_eq!(a.len(), 2);
    let n = (DEMO_SECONDS * f64::from(DEMO_SAMPLE_RATE)).round() as usize;
    assert_eq!(a[0].len(), n);
    assert_eq!(a[1].len(), n);
    assert!(a.iter().flatten().all(|x| x.is_finite()));
    let peak = a.iter().flatten().fold(0.0f32, |m, x| m.max(x.abs()));
    assert!((0.5..1.0).contains(&peak), "peak {peak}");
    assert_eq!(a, audio(DEMO_SAMPLE_RATE), "the demo is deterministic");
    // Other rates work too.
    let b = audio(44_100);
    assert_eq!(b[0].len(), (DEMO_SECONDS * 44_100.0).round() as usize);
    assert_eq!(b[0].len(), b[1].len());
}

#[test]
fn kicks_are_on_the_beat() {
    let kicks = kick_times_s();
    assert_eq!(kicks.len(), BEATS);
    assert_eq!(kicks[0], 0.0);
    for w in kicks.windows(2) {
        assert!((w[1] - w[0] - 60.0 / BPM).abs() < 1e-12);
    }
    assert!(*kicks.last().unwrap() < DEMO_SECONDS - 1.5);
}

/// RMS of the mono mix over samples `a..b`.
fn rms(a: &[Vec<f32>], from: usize, to: usize) -> f64 {
    let sum: f64 = (from..to)
        .map(|i| {
            let m = 0.5 * (f64::from(a[0][i]) + f64::from(a[1][i]));
            m * m
        })
        .sum();
    (sum / (to - from) as f64).sqrt()
}

#[test]
fn kicks_stand_out_from_what_precedes_them() {
    let sr = DEMO_SAMPLE_RATE as usize;
    let a = audio(DEMO_SAMPLE_RATE);
    let w = sr / 20;
    let mut worst = f64::INFINITY;
    for t in kick_times_s() {
        let i = (t * sr as f64).round() as usize;
        if i < w {
            continue;
        }
        let ratio = rms(&a, i, i + w) / rms(&a, i - w, i);
        worst = worst.min(ratio);
        assert!(ratio >= 4.0, "kick at {t} s: after/before RMS {ratio}");
    }
    println!("worst kick after/before RMS ratio: {worst:.1}");
    // The bed is there between the hits.
    let bed = rms(&a, (1.4 * sr as f64) as usize, (1.45 * sr as f64) as usize);
    assert!(bed > 0.005, "bed RMS {bed}");
}

#[test]
fn the_onset_detector_fires_on_every_kick() {
    use crate::bridge::onset::OnsetDetector;
    let fs = DEMO_SAMPLE_RATE as f32;
    let a = audio(DEMO_SAMPLE_RATE);
    let mut detector = OnsetDetector::new(fs);
    let onsets: Vec<f64> = (0..a[0].len())
        .filter_map(|i| {
            let e = 0.5 * (a[0][i] * a[0][i] + a[1][i] * a[1][i]);
            detector.next(e).map(|_| i as f64 / f64::from(fs))
        })
        .collect();
    for t in kick_times_s() {
        assert!(
            onsets.iter().any(|&o| o >= t && o < t + 0.01),
            "no onset within 10 ms of the kick at {t} s"
        );
    }
}

#[test]
fn describe_names_the_demo() {
    let d = describe();
    assert!(d.contains("demo") && d.contains("120 bpm"), "{d}");
}

#[test]
fn audio_timing() {
    // Best of three, to see past other work on the machine. Only printed: the budget
    // (well under 100 ms in a release build) is not asserted, as unoptimised builds and
    // loaded machines are slower.
    let mut best = f64::INFINITY;
    let mut samples = 0;
    for _ in 0..3 {
        let started = std::time::Instant::now();
        let a = audio(DEMO_SAMPLE_RATE);
        best = best.min(started.elapsed().as_secs_f64());
        samples = a[0].len();
    }
    println!(
        "audio({DEMO_SAMPLE_RATE}) took {:.1} ms (best of 3) for {samples} samples x 2",
        best * 1e3
    );
}
