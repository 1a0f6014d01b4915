//! Tests of the MIDI reader: timing, merging, and every malformed file an error.

use super::*;
use midly::num::{u4, u7, u15, u24, u28};
use midly::{Format, Fps, Header, Smf, Timing, TrackEvent};
use nice_plug::midi::{Channel, Key};

fn ev(delta: u32, kind: TrackEventKind<'static>) -> TrackEvent<'static> {
    TrackEvent {
        delta: u28::new(delta),
        kind,
    }
}

fn midi(delta: u32, channel: u8, message: MidiMessage) -> TrackEvent<'static> {
    ev(
        delta,
        TrackEventKind::Midi {
            channel: u4::new(channel),
            message,
        },
    )
}

fn on(delta: u32, channel: u8, key: u8, vel: u8) -> TrackEvent<'static> {
    midi(
        delta,
        channel,
        MidiMessage::NoteOn {
            key: u7::new(key),
            vel: u7::new(vel),
        },
    )
}

fn tempo(delta: u32, micros: u32) -> TrackEvent<'static> {
    ev(
        delta,
        TrackEventKind::Meta(MetaMessage::Tempo(u24::new(micros))),
    )
}

fn eot(delta: u32) -> TrackEvent<'static> {
    ev(delta, TrackEventKind::Meta(MetaMessage::EndOfTrack))
}

fn write(format: Format, timing: Timing, tracks: Vec<Vec<TrackEvent<'static>>>) -> Vec<u8> {
    let mut smf = Smf::new(Header::new(format, timing));
    smf.tracks = tracks;
    let mut bytes = Vec::new();
    smf.write_std(&mut bytes).expect("write SMF");
    bytes
}

fn metrical(ticks: u16) -> Timing {
    Timing::Metrical(u15::new(ticks))
}

fn key_of(event: &NoteEvent<()>) -> Option<(u8, u8)> {
    match *event {
        NoteEvent::NoteOn {
            channel: Channel::Number(c),
            key: Key::Number(k),
            ..
        }
        | NoteEvent::NoteOff {
            channel: Channel::Number(c),
            key: Key::Number(k),
            ..
        } => Some((c, k)),
        _ => None,
    }
}

/// (time, (channel, key) of a note event, whether it is a note on), per event.
type Summary = (f64, Option<(u8, u8)>, bool);

fn summary(notes: &[TimedNote]) -> Vec<Summary> {
    notes
        .iter()
        .map(|n| (n.time_s, key_of(&n.event), is_on(&n.event)))
        .collect()
}

fn is_on(event: &NoteEvent<()>) -> bool {
    matches!(event, NoteEvent::NoteOn { .. })
}

fn is_off(event: &NoteEvent<()>) -> bool {
    matches!(event, NoteEvent::NoteOff { .. })
}

/// A type-1 file: a tempo track (120 bpm, then 60 bpm from tick 480) and a note track.
fn type1_with_tempo_change() -> Vec<u8> {
    write(
        Format::Parallel,
        metrical(480),
        vec![
            vec![tempo(0, 500_000), tempo(480, 1_000_000), eot(0)],
            vec![
                on(0, 0, 60, 100),
                on(480, 0, 60, 0),
                on(480, 0, 64, 90),
                eot(0),
            ],
        ],
    )
}

#[test]
fn type0_default_tempo_is_120_bpm() {
    let bytes = write(
        Format::SingleTrack,
        metrical(96),
        vec![vec![
            on(0, 0, 60, 127),
            on(96, 0, 60, 0),
            on(48, 0, 62, 64),
            eot(0),
        ]],
    );
    let notes = parse(&bytes).expect("parse");
    let times: Vec<f64> = notes.iter().map(|n| n.time_s).collect();
    assert_eq!(times, vec![0.0, 0.5, 0.75]);
    assert!(is_on(&notes[0].event));
    assert!(is_off(&notes[1].event));
    assert_eq!(key_of(&notes[2].event), Some((0, 62)));
    match notes[0].event {
        NoteEvent::NoteOn {
            timing, velocity, ..
        } => {
            assert_eq!(timing, 0);
            assert_eq!(velocity, 1.0);
        }
        ref other => panic!("expected NoteOn, got {other:?}"),
    }
    assert_eq!(duration_s(&notes), 0.75);
}

#[test]
fn type1_tempo_change_applies_to_all_tracks() {
    let notes = parse(&type1_with_tempo_change()).expect("parse");
    let times: Vec<f64> = notes.iter().map(|n| n.time_s).collect();
    // Tick 480 at 120 bpm = 0.5 s; tick 960 = 0.5 + 480 ticks at 60 bpm = 1.5 s.
    assert_eq!(times, vec![0.0, 0.5, 1.5]);
    assert_eq!(duration_s(&notes), 1.5);
}

/// The tempo map gives the tempo and the beat at any time: 120 bpm for the first beat (0.5
/// s), then 60; before 0 the first tempo runs back; SMPTE timing has none; no tempo event at
/// all is 120 bpm throughout.
#[test]
fn the_tempo_map_gives_the_beat_at_any_time() {
    let (_, map) = parse_with_tempo(&type1_with_tempo_change()).expect("parse");
    let map = map.expect("a metrical file has a tempo map");
    let near = |(bpm, beat): (f64, f64), want: (f64, f64)| {
        (bpm - want.0).abs() < 1e-9 && (beat - want.1).abs() < 1e-9
    };
    assert!(near(map.at(0.25), (120.0, 0.5)), "{:?}", map.at(0.25));
    assert!(near(map.at(0.5), (60.0, 1.0)), "{:?}", map.at(0.5));
    assert!(near(map.at(1.5), (60.0, 2.0)), "{:?}", map.at(1.5));
    assert!(near(map.at(-0.5), (120.0, -1.0)), "{:?}", map.at(-0.5));
    let bytes = write(
        Format::SingleTrack,
        Timing::Timecode(Fps::Fps25, 40),
        vec![vec![on(0, 0, 60, 100), eot(0)]],
    );
    assert_eq!(parse_with_tempo(&bytes).expect("parse").1, None);
    let bytes = write(
        Format::SingleTrack,
        metrical(96),
        vec![vec![on(0, 0, 60, 100), eot(0)]],
    );
    let map = parse_with_tempo(&bytes).expect("parse").1.expect("a map");
    assert!(near(map.at(3.0), (120.0, 6.0)));
}

#[test]
fn tempo_in_a_later_track_applies_to_earlier_tracks() {
    let bytes = write(
        Format::Parallel,
        metrical(480),
        vec![
            vec![on(0, 0, 60, 100), on(960, 0, 60, 0), eot(0)],
            vec![tempo(480, 250_000), eot(0)],
        ],
    );
    let notes = parse(&bytes).expect("parse");
    // 480 ticks at 120 bpm (0.5 s), then 480 ticks at 240 bpm (0.25 s).
    assert_eq!(notes[1].time_s, 0.75);
}

#[test]
fn velocity_zero_note_on_is_note_off() {
    let bytes = write(
        Format::SingleTrack,
        metrical(480),
        vec![vec![on(0, 3, 70, 0), eot(0)]],
    );
    let notes = parse(&bytes).expect("parse");
    assert_eq!(notes.len(), 1);
    match notes[0].event {
        NoteEvent::NoteOff {
            channel,
            key,
            velocity,
            ..
        } => {
            assert_eq!(channel, Channel::Number(3));
            assert_eq!(key, Key::Number(70));
            assert_eq!(velocity, 0.0);
        }
        ref other => panic!("expected NoteOff, got {other:?}"),
    }
}

/// Two tracks of events on several channels: notes, a CC, a program change, a pitch bend,
/// channel and key pressure.
fn multi_channel_file() -> Vec<u8> {
    write(
        Format::Parallel,
        metrical(480),
        vec![
            vec![
                on(0, 0, 60, 100),
                midi(
                    0,
                    9,
                    MidiMessage::Controller {
                        controller: u7::new(1),
                        value: u7::new(127),
                    },
                ),
                midi(
                    0,
                    4,
                    MidiMessage::ProgramChange {
                        program: u7::new(5),
                    },
                ),
                eot(0),
            ],
            vec![
                on(0, 15, 61, 100),
                midi(
                    0,
                    7,
                    MidiMessage::PitchBend {
                        bend: midly::PitchBend::max_raw_value(),
                    },
                ),
                midi(0, 2, MidiMessage::ChannelAftertouch { vel: u7::new(127) }),
                midi(
                    0,
                    11,
                    MidiMessage::Aftertouch {
                        key: u7::new(61),
                        vel: u7::new(0),
                    },
                ),
                midi(
                    0,
                    5,
                    MidiMessage::NoteOff {
                        key: u7::new(61),
                        vel: u7::new(127),
                    },
                ),
                eot(0),
            ],
        ],
    )
}

#[test]
fn multi_channel_events_keep_channels_and_kinds() {
    let bytes = multi_channel_file();
    let notes = parse(&bytes).expect("parse");
    // The program change is dropped; everything else keeps file order (track 1, track 2).
    assert_eq!(notes.len(), 7);
    assert_eq!(key_of(&notes[0].event), Some((0, 60)));
    assert!(matches!(
        notes[1].event,
        NoteEvent::MidiCC { channel: 9, cc: 1, value, .. } if value == 1.0
    ));
    assert_eq!(key_of(&notes[2].event), Some((15, 61)));
    assert!(matches!(
        notes[3].event,
        NoteEvent::MidiPitchBend { channel: 7, value, .. } if value == 1.0
    ));
    assert!(matches!(
        notes[4].event,
        NoteEvent::MidiChannelPressure { channel: 2, pressure, .. } if pressure == 1.0
    ));
    assert!(matches!(
        notes[5].event,
        NoteEvent::PolyPressure {
            channel: Channel::Number(11),
            key: Key::Number(61),
            ..
        }
    ));
    assert!(is_off(&notes[6].event));
    assert_eq!(key_of(&notes[6].event), Some((5, 61)));
    assert!(
        notes
            .iter()
            .all(|n| n.time_s == 0.0 && n.event.timing() == 0)
    );
}

#[test]
fn merge_is_sorted_and_stable() {
    let bytes = write(
        Format::Parallel,
        metrical(480),
        vec![
            vec![on(0, 0, 60, 100), on(480, 0, 60, 0), eot(0)],
            vec![
                on(240, 1, 62, 100),
                on(240, 1, 62, 0),
                on(0, 1, 64, 100),
                eot(0),
            ],
        ],
    );
    let notes = parse(&bytes).expect("parse");
    let order = summary(&notes);
    assert_eq!(
        order,
        vec![
            (0.0, Some((0, 60)), true),
            (0.25, Some((1, 62)), true),
            // Tick 480: track 1's event first, then track 2's in their file order.
            (0.5, Some((0, 60)), false),
            (0.5, Some((1, 62)), false),
            (0.5, Some((1, 64)), true),
        ]
    );
}

/// MThd + one MTrk with the given event bytes.
fn hand_made(format: u16, division: [u8; 2], track: &[u8]) -> Vec<u8> {
    let mut bytes = b"MThd\0\0\0\x06".to_vec();
    bytes.extend_from_slice(&format.to_be_bytes());
    bytes.extend_from_slice(&1u16.to_be_bytes());
    bytes.extend_from_slice(&division);
    bytes.extend_from_slice(b"MTrk");
    bytes.extend_from_slice(&(track.len() as u32).to_be_bytes());
    bytes.extend_from_slice(track);
    bytes
}

#[test]
fn running_status_hand_assembled() {
    // 96 ticks per beat; note on, then three more events without a status byte.
    let track = [
        0x00, 0x91, 60, 100, // on ch 1, key 60
        0x60, 64, 90, // +96 ticks: running-status note on, key 64
        0x60, 60, 0, // +96: running-status on with velocity 0 = off, key 60
        0x00, 64, 0, // +0: off key 64
        0x00, 0xFF, 0x2F, 0x00, // End of Track
    ];
    let notes = parse(&hand_made(0, [0, 96], &track)).expect("parse");
    let got = summary(&notes);
    assert_eq!(
        got,
        vec![
            (0.0, Some((1, 60)), true),
            (0.5, Some((1, 64)), true),
            (1.0, Some((1, 60)), false),
            (1.0, Some((1, 64)), false),
        ]
    );
}

/// A meta or SysEx event whose declared length runs past the end of its track would, in
/// midly's lenient mode, swallow the notes after it: an error instead.
#[test]
fn events_longer_than_their_track_are_errors() {
    let note = [0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0];
    for (what, event) in [
        ("meta", &[0x00, 0xFF, 0x01, 0x40, b'h', b'i'][..]),
        ("SysEx", &[0x00, 0xF0, 0x40, 0x7E, 0xF7][..]),
        ("SysEx", &[0x00, 0xF7, 0x7F, 0x01][..]),
    ] {
        let mut track = event.to_vec();
        track.extend_from_slice(&note);
        let err = parse(&hand_made(0, [0, 96], &track))
            .expect_err(what)
            .to_string();
        assert!(
            err.contains(what) && err.contains("past the end of the track"),
            "{what}: {err}"
        );
    }
    // The same events with their true lengths read fine, and the notes after them stay.
    let mut track = vec![0x00, 0xFF, 0x01, 0x02, b'h', b'i', 0x00, 0xF0, 0x01, 0xF7];
    track.extend_from_slice(&note);
    assert_eq!(parse(&hand_made(0, [0, 96], &track)).expect("ok").len(), 2);
}

#[test]
fn tempo_events_must_be_three_bytes_and_not_zero() {
    let note = [0x00, 0x90, 60, 100];
    let mut short = vec![0x00, 0xFF, 0x51, 0x02, 0x07, 0xA1];
    short.extend_from_slice(&note);
    let err = parse(&hand_made(0, [0, 96], &short))
        .expect_err("2-byte tempo")
        .to_string();
    assert!(
        err.contains("tempo") && err.contains("2 data bytes"),
        "{err}"
    );
    let mut zero = vec![0x00, 0xFF, 0x51, 0x03, 0, 0, 0];
    zero.extend_from_slice(&note);
    let err = parse(&hand_made(0, [0, 96], &zero))
        .expect_err("tempo 0")
        .to_string();
    assert!(err.contains("tempo of 0"), "{err}");
}

#[test]
fn parsing_stops_when_asked() {
    let bytes = type1_with_tempo_change();
    assert_eq!(parse_until(&bytes, &|| true), Ok(None));
    assert_eq!(parse_until(&bytes, &|| false), parse(&bytes).map(Some));
}

#[test]
fn missing_end_of_track_is_accepted() {
    let track = [0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0];
    let notes = parse(&hand_made(0, [0, 96], &track)).expect("parse");
    assert_eq!(notes.len(), 2);
    assert_eq!(notes[1].time_s, 0.5);
}

#[test]
fn event_cut_inside_its_chunk_is_an_error() {
    // The chunk length is right, but the last note-on lacks its velocity byte.
    let track = [0x00, 0x90, 60, 100, 0x60, 0x90, 60];
    let err = parse(&hand_made(0, [0, 96], &track))
        .expect_err("must fail")
        .to_string();
    assert!(err.contains("track 1"), "{err}");
}

#[test]
fn truncated_files_are_errors() {
    let bytes = type1_with_tempo_change();
    // Every cut, from inside the header to one byte short, is an error.
    for len in 0..bytes.len() {
        let err = parse(&bytes[..len])
            .expect_err("truncated file must fail")
            .to_string();
        assert!(
            err.contains("truncated") || err.contains("not a MIDI file"),
            "cut at {len}: {err}"
        );
    }
    let err = parse(&bytes[..bytes.len() - 3])
        .expect_err("must fail")
        .to_string();
    assert_eq!(err, "truncated MIDI file (track 2 ends early)");
}

#[test]
fn garbage_is_not_a_midi_file() {
    for garbage in [
        &b"hello, this is not music"[..],
        &[][..],
        &[0xFF; 64][..],
        &b"RIFF\x24\0\0\0WAVEfmt "[..],
    ] {
        let err = parse(garbage).expect_err("must fail").to_string();
        assert!(
            err.contains("not a MIDI file") && err.contains("MThd"),
            "{err}"
        );
    }
}

#[test]
fn format_2_is_rejected() {
    let bytes = write(
        Format::Sequential,
        metrical(480),
        vec![vec![on(0, 0, 60, 100), eot(0)]],
    );
    assert_eq!(
        parse(&bytes).expect_err("must fail").to_string(),
        "MIDI format 2 (sequential tracks) is not supported"
    );
}

#[test]
fn timecode_timing_ignores_tempo() {
    // 25 fps x 40 subframes = 1000 ticks per second.
    let bytes = write(
        Format::SingleTrack,
        Timing::Timecode(Fps::Fps25, 40),
        vec![vec![
            tempo(0, 1_000_000),
            on(500, 0, 60, 100),
            on(1500, 0, 60, 0),
            eot(0),
        ]],
    );
    let notes = parse(&bytes).expect("parse");
    let times: Vec<f64> = notes.iter().map(|n| n.time_s).collect();
    assert_eq!(times, vec![0.5, 2.0]);
}

#[test]
fn corrupt_headers_are_errors() {
    // Zero ticks per beat.
    let err = parse(&hand_made(0, [0, 0], &[0x00, 0xFF, 0x2F, 0x00]))
        .expect_err("0 tpb")
        .to_string();
    assert!(err.contains("ticks per beat"), "{err}");
    // Unknown format number.
    let err = parse(&hand_made(7, [0, 96], &[0x00, 0xFF, 0x2F, 0x00]))
        .expect_err("format")
        .to_string();
    assert!(err.contains("format 7"), "{err}");
    // More tracks declared than present.
    let mut bytes = hand_made(1, [0, 96], &[0x00, 0xFF, 0x2F, 0x00]);
    bytes[11] = 3;
    let err = parse(&bytes).expect_err("missing tracks").to_string();
    assert!(err.contains("declares 3 tracks, found 1"), "{err}");
}

#[test]
fn rmid_container_is_unwrapped() {
    let smf = type1_with_tempo_change();
    let mut riff = b"RIFF".to_vec();
    riff.extend_from_slice(&((4 + 8 + smf.len()) as u32).to_le_bytes());
    riff.extend_from_slice(b"RMIDdata");
    riff.extend_from_slice(&(smf.len() as u32).to_le_bytes());
    riff.extend_from_slice(&smf);
    assert_eq!(parse(&riff), parse(&smf));
}

#[test]
fn mutated_files_never_panic() {
    let mut bytes = type1_with_tempo_change();
    bytes.extend_from_slice(&hand_made(0, [0xE7, 40], &[0x00, 0x90, 60, 100])[14..]);
    for at in 0..bytes.len() {
        for value in [0x00, 0x01, 0x7F, 0x80, 0xE7, 0xF0, 0xFF] {
            let mut mutated = bytes.clone();
            mutated[at] = value;
            let _ = parse(&mutated);
            let _ = parse(&mutated[..at]);
        }
    }
}

#[test]
fn load_reports_missing_and_empty_files() {
    let dir = std::env::temp_dir().join(format!("dyeflow-midi-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let missing = dir.join("missing.mid");
    let err = load(&missing, &AtomicBool::new(false)).expect_err("missing");
    assert_eq!(
        err.to_string(),
        format!("{}: file not found", missing.display())
    );
    assert_eq!(err.exit_code(), 2);

    let empty = dir.join("empty.mid");
    std::fs::write(&empty, b"").expect("write");
    let err = load(&empty, &AtomicBool::new(false)).expect_err("empty");
    assert_eq!(err.to_string(), format!("{}: empty file", empty.display()));

    let good = dir.join("good.mid");
    std::fs::write(&good, type1_with_tempo_change()).expect("write");
    assert_eq!(
        load(&good, &AtomicBool::new(false))
            .expect("load")
            .map(|(n, _)| n.len()),
        Some(3)
    );
    // A stop heard while a large file is read (between its chunks): nothing more is read.
    let large = dir.join("large.mid");
    let mut bytes = type1_with_tempo_change();
    bytes.resize(10 << 20, 0);
    std::fs::write(&large, bytes).expect("write");
    assert!(
        load(&large, &AtomicBool::new(true))
            .expect("stopped")
            .is_none()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
