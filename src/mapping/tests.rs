//! Tests of the mapping: events in, splats and forces out.

use super::*;

fn at(time_s: f64, event: SimEvent) -> TimedEvent {
    TimedEvent { time_s, event }
}

fn note(key: u8, channel: u8) -> NoteId {
    NoteId {
        key,
        channel,
        voice: -1,
    }
}

/// The parameters' defaults on a 16:9 canvas, in keyboard mode (the known answers below
/// assume them; rows mode has its own tests in `rows_tests`).
fn cfg() -> MappingConfig {
    MappingConfig {
        mode: MappingMode::Keyboard,
        ..MappingConfig::default()
    }
}

/// The README's known answer: note 60 (middle C) at velocity 100 on channel 0, the first
/// note played, in keyboard mode on a 16:9 canvas.
#[test]
fn middle_c_known_answer() {
    let mut m = Mapper::new();
    m.handle(&at(
        0.0,
        SimEvent::NoteOn {
            note: note(60, 0),
            velocity: 100.0 / 127.0,
        },
    ));
    let mut out = Vec::new();
    m.emit(1.0 / 60.0, &cfg(), &mut out);
    let burst = out[0];
    // A lone note sits mid-range: x = aspect / 2 = 0.8889, at the emitter height 0.15.
    assert!((burst.pos[0] - 8.0 / 9.0).abs() < 1e-6, "{:?}", burst.pos);
    assert_eq!(burst.pos[1], KEYBOARD_Y);
    // Pitch class 0: hue 0, red at saturation 0.85: rgb (1, 0.15, 0.15).
    for (got, want) in burst.color.iter().zip([1.0, 0.15, 0.15]) {
        assert!((got - want).abs() < 1e-6, "{:?}", burst.color);
    }
    // Velocity 100/127 = 0.787: dye 0.35 + 0.65 v = 0.8618; push 1.2 (0.4 + 0.6 v) = 1.0469
    // straight up; radius 0.03 (0.7 + 0.6 v) = 0.03517.
    let v = 100.0f32 / 127.0;
    assert!(
        (burst.amount - (0.35 + 0.65 * v) * 1.0).abs() < 1e-6,
        "{}",
        burst.amount
    );
    assert!((burst.amount - 0.8618).abs() < 1e-4);
    assert!((burst.force[1] - 1.0469).abs() < 1e-4 && burst.force[0].abs() < 1e-6);
    assert!((burst.radius - 0.035_17).abs() < 1e-5);
}

#[test]
fn pitch_runs_across_the_range_in_use_and_hue_follows_pitch_class() {
    let mut m = Mapper::new();
    for (k, key) in [36u8, 96].into_iter().enumerate() {
        m.handle(&at(
            k as f64,
            SimEvent::NoteOn {
                note: note(key, 0),
                velocity: 1.0,
            },
        ));
    }
    m.handle(&at(
        2.0,
        SimEvent::NoteOn {
            note: note(66, 0),
            velocity: 1.0,
        },
    ));
    let mut out = Vec::new();
    m.emit(0.01, &cfg(), &mut out);
    let xs: Vec<f32> = out
        .iter()
        .filter(|s| s.force[1] > 0.5)
        .map(|s| s.pos[0])
        .collect();
    let aspect = 16.0f32 / 9.0;
    // 36 at the left margin, 96 at the right, 66 half way.
    assert_eq!(xs.len(), 3);
    assert!((xs[0] - KEYBOARD_MARGIN).abs() < 1e-6);
    assert!((xs[1] - (aspect - KEYBOARD_MARGIN)).abs() < 1e-5);
    assert!((xs[2] - aspect / 2.0).abs() < 1e-5);
    // 66 is F#: hue 0.5, cyan.
    let c = out
        .iter()
        .find(|s| (s.pos[0] - aspect / 2.0).abs() < 1e-5)
        .unwrap()
        .color;
    assert!(c[0] < 0.2 && c[1] > 0.99 && c[2] > 0.99, "{c:?}");
}

#[test]
fn circle_mode_places_pitch_class_by_angle_and_octave_by_radius() {
    let c = MappingConfig {
        mode: MappingMode::Circle,
        ..cfg()
    };
    let pos = |key: u8| {
        let mut m = Mapper::new();
        m.handle(&at(
            0.0,
            SimEvent::NoteOn {
                note: note(key, 0),
                velocity: 1.0,
            },
        ));
        let mut out = Vec::new();
        m.emit(0.0, &c, &mut out);
        let p = out[0].pos;
        (p[0] - c.aspect / 2.0, p[1] - 0.5)
    };
    // C4 (60, octave 5): straight up at radius 0.06 + 0.2 = 0.26.
    let (x, y) = pos(60);
    assert!(x.abs() < 1e-6 && (y - 0.26).abs() < 1e-6, "{x} {y}");
    // F#4 (66): straight down, same radius. C5 (72): up, farther out.
    let (x, y) = pos(66);
    assert!(x.abs() < 1e-5 && (y + 0.26).abs() < 1e-6);
    let (_, y) = pos(72);
    assert!((y - 0.30).abs() < 1e-6);
    // D (62): a sixth of a turn clockwise from the top.
    let (x, y) = pos(62);
    assert!(x > 0.0 && (x.atan2(y).to_degrees() - 60.0).abs() < 1e-3);
}

/// Emission follows attack, decay, sustain and release: sample the held emission of a note
/// every 10 ms and compare with the curve.
#[test]
fn emission_follows_the_note_envelope() {
    let mut m = Mapper::new();
    m.handle(&at(
        0.0,
        SimEvent::NoteOn {
            note: note(60, 0),
            velocity: 1.0,
        },
    ));
    let dt = 0.01;
    let mut out = Vec::new();
    let rate = |out: &Vec<Splat>| {
        out.iter()
            .find(|s| s.amount < 0.5)
            .map_or(0.0, |s| s.amount / (HOLD_DYE_PER_S * dt))
    };
    let mut t = 0.0f32;
    for _ in 0..100 {
        m.emit(dt, &cfg(), &mut out);
        assert!(
            (rate(&out) - held_level(t)).abs() < 1e-5,
            "t {t}: {} vs {}",
            rate(&out),
            held_level(t)
        );
        t += dt;
    }
    // One second in: sustain.
    assert!((held_level(t) - NOTE_SUSTAIN).abs() < 1e-6);
    m.handle(&at(1.0, SimEvent::NoteOff { note: note(60, 0) }));
    let mut r = 0.0f32;
    while r < NOTE_RELEASE_S {
        m.emit(dt, &cfg(), &mut out);
        let want = release_level(NOTE_SUSTAIN, r);
        assert!(
            (rate(&out) - want).abs() < 1e-5,
            "release {r}: {} vs {want}",
            rate(&out)
        );
        r += dt;
    }
    m.emit(dt, &cfg(), &mut out);
    assert!(out.is_empty(), "silent after the release");
    assert_eq!(m.active_voices(), 0);
    // Curve points: attack half way at 10 ms, decay end at 370 ms.
    assert!((held_level(0.01) - 0.5).abs() < 1e-6);
    assert!((held_level(0.37) - NOTE_SUSTAIN).abs() < 1e-6);
}

#[test]
fn sustain_pedal_holds_and_all_notes_off_releases() {
    let mut m = Mapper::new();
    let mut out = Vec::new();
    m.handle(&at(
        0.0,
        SimEvent::ControlChange {
            channel: 0,
            cc: 64,
            value: 1.0,
        },
    ));
    m.handle(&at(
        0.0,
        SimEvent::NoteOn {
            note: note(60, 0),
            velocity: 1.0,
        },
    ));
    m.handle(&at(0.1, SimEvent::NoteOff { note: note(60, 0) }));
    for _ in 0..200 {
        m.emit(0.01, &cfg(), &mut out);
    }
    assert_eq!(m.active_voices(), 1, "the pedal holds the note");
    m.handle(&at(
        2.0,
        SimEvent::ControlChange {
            channel: 0,
            cc: 64,
            value: 0.0,
        },
    ));
    for _ in 0..100 {
        m.emit(0.01, &cfg(), &mut out);
    }
    assert_eq!(m.active_voices(), 0, "pedal up releases it");
    // All notes off releases held notes even with the pedal down.
    m.handle(&at(
        3.0,
        SimEvent::ControlChange {
            channel: 0,
            cc: 64,
            value: 1.0,
        },
    ));
    m.handle(&at(
        3.0,
        SimEvent::NoteOn {
            note: note(64, 0),
            velocity: 1.0,
        },
    ));
    m.handle(&at(
        3.0,
        SimEvent::ControlChange {
            channel: 0,
            cc: 123,
            value: 0.0,
        },
    ));
    for _ in 0..100 {
        m.emit(0.01, &cfg(), &mut out);
    }
    assert_eq!(m.active_voices(), 0);
    // All sound off is immediate.
    m.handle(&at(
        4.0,
        SimEvent::NoteOn {
            note: note(64, 0),
            velocity: 1.0,
        },
    ));
    m.handle(&at(
        4.0,
        SimEvent::ControlChange {
            channel: 0,
            cc: 120,
            value: 0.0,
        },
    ));
    m.emit(0.01, &cfg(), &mut out);
    assert!(out.is_empty());
}

#[test]
fn expressions_bend_boost_and_stir() {
    let mut m = Mapper::new();
    let mut out = Vec::new();
    m.handle(&at(
        0.0,
        SimEvent::NoteOn {
            note: note(60, 0),
            velocity: 1.0,
        },
    ));
    // Into the sustain, so both readings see the same envelope level.
    for _ in 0..100 {
        m.emit(0.01, &cfg(), &mut out);
    }
    let plain = out[0];
    m.handle(&at(
        0.0,
        SimEvent::PitchBend {
            channel: 0,
            value: 1.0,
        },
    ));
    m.handle(&at(
        0.0,
        SimEvent::ChannelPressure {
            channel: 0,
            pressure: 1.0,
        },
    ));
    m.handle(&at(
        0.0,
        SimEvent::ControlChange {
            channel: 0,
            cc: 1,
            value: 1.0,
        },
    ));
    let drive = m.emit(0.01, &cfg(), &mut out);
    let bent = out[0];
    // Two semitones right, push turned 30 degrees right, three times the emission.
    assert!(bent.pos[0] > plain.pos[0]);
    assert!((bent.force[0].atan2(bent.force[1]).to_degrees() - 30.0).abs() < 1e-3);
    assert!((bent.amount / plain.amount - 3.0).abs() < 1e-4);
    assert!((drive.vorticity_boost - MOD_WHEEL_VORTICITY).abs() < 1e-6);
}

/// The full-band audio path of old: every band and pitch amount at 0 (projects from before
/// them).
fn legacy() -> MappingConfig {
    MappingConfig {
        bands: [0.0; 3],
        chroma: 0.0,
        ..cfg()
    }
}

#[test]
fn audio_level_breathes_onsets_spread_and_silence_is_calm() {
    let cfg = legacy;
    let mut m = Mapper::new();
    let mut out = Vec::new();
    m.handle(&at(
        0.0,
        SimEvent::Envelope {
            rms: [0.0; 2],
            peak: [0.0; 2],
        },
    ));
    m.emit(0.01, &cfg(), &mut out);
    assert!(out.is_empty(), "silence adds nothing");
    m.handle(&at(
        0.0,
        SimEvent::Envelope {
            rms: [0.5, 0.2],
            peak: [0.9, 0.4],
        },
    ));
    m.emit(0.01, &cfg(), &mut out);
    assert_eq!(out.len(), 1);
    assert!((out[0].force[1] - BREATH_ACCEL * 0.5 * 0.01).abs() < 1e-6);
    // Onsets land far apart: no two of the first eight closer than 0.15 canvas heights.
    m.handle(&at(
        0.0,
        SimEvent::Envelope {
            rms: [0.0; 2],
            peak: [0.0; 2],
        },
    ));
    let mut spots = Vec::new();
    for k in 0..8 {
        m.handle(&at(k as f64, SimEvent::Onset { strength: 0.7 }));
        m.emit(0.01, &cfg(), &mut out);
        spots.push(out[0].pos);
    }
    for i in 0..8 {
        for j in 0..i {
            let d = (spots[i][0] - spots[j][0]).hypot(spots[i][1] - spots[j][1]);
            assert!(
                d > 0.15,
                "onsets {i} and {j} at {:?} and {:?}",
                spots[i],
                spots[j]
            );
        }
    }
}

#[test]
fn beat_pulse_is_phase_locked_to_the_host() {
    let c = MappingConfig {
        beat_pulse: true,
        ..cfg()
    };
    let mut m = Mapper::new();
    let mut out = Vec::new();
    let mut pulses = Vec::new();
    // 120 BPM from beat 3.9 at t = 0: beats land at t = 0.05, 0.55, 1.05, ...
    for step in 0..240 {
        let t = step as f64 / 120.0;
        m.handle(&at(
            t,
            SimEvent::Transport {
                playing: true,
                tempo_bpm: 120.0,
                beat: 3.9 + t * 2.0,
            },
        ));
        m.emit(1.0 / 120.0, &c, &mut out);
        if !out.is_empty() {
            pulses.push(t);
        }
    }
    assert_eq!(pulses.len(), 4);
    for (k, t) in pulses.iter().enumerate() {
        let want = 0.05 + 0.5 * k as f64;
        assert!(
            (t - want).abs() <= 1.0 / 120.0,
            "pulse {k} at {t}, beat at {want}"
        );
    }
    // Stopped: no pulses.
    m.handle(&at(
        3.0,
        SimEvent::Transport {
            playing: false,
            tempo_bpm: 120.0,
            beat: 10.0,
        },
    ));
    m.emit(1.0, &c, &mut out);
    assert!(out.is_empty());
}

#[test]
fn hostile_events_are_absorbed() {
    let mut m = Mapper::new();
    let mut out = Vec::new();
    for k in 0..300u32 {
        m.handle(&at(
            f64::NAN,
            SimEvent::NoteOn {
                note: note((k % 200) as u8, 200),
                velocity: f32::NAN,
            },
        ));
        m.handle(&at(
            1e300,
            SimEvent::Envelope {
                rms: [f32::INFINITY, f32::NAN],
                peak: [0.0; 2],
            },
        ));
        m.handle(&at(0.0, SimEvent::Onset { strength: f32::NAN }));
    }
    m.emit(f32::INFINITY, &cfg(), &mut out);
    assert!(m.active_voices() <= MAX_VOICES);
    for s in &out {
        assert!(
            s.pos
                .iter()
                .chain(&s.color)
                .chain(&s.force)
                .all(|x| x.is_finite()),
            "{s:?}"
        );
        assert!(s.amount.is_finite() && s.radius.is_finite());
    }
}

// Drums: the General MIDI kit on the drum channel.

/// A fresh mapper after `key` on `channel` at `velocity`, alone, and the splats of that
/// onset's step of `c`.
fn strike(key: u8, channel: u8, velocity: f32, c: &MappingConfig) -> (Mapper, Vec<Splat>) {
    let mut m = Mapper::new();
    m.handle(&at(
        0.0,
        SimEvent::NoteOn {
            note: note(key, channel),
            velocity,
        },
    ));
    let mut out = Vec::new();
    m.emit(1.0 / 60.0, c, &mut out);
    (m, out)
}

/// The splats of one drum hit: `key` on `channel` at `velocity`, alone, in one step of `c`.
fn hit(key: u8, channel: u8, velocity: f32, c: &MappingConfig) -> Vec<Splat> {
    strike(key, channel, velocity, c).1
}

/// The box around a hit's splats, one radius out: (left, bottom, right, top).
fn footprint(splats: &[Splat]) -> (f32, f32, f32, f32) {
    splats.iter().fold(
        (f32::MAX, f32::MAX, f32::MIN, f32::MIN),
        |(l, b, r, t), s| {
            (
                l.min(s.pos[0] - s.radius),
                b.min(s.pos[1] - s.radius),
                r.max(s.pos[0] + s.radius),
                t.max(s.pos[1] + s.radius),
            )
        },
    )
}

const DRUMS: u8 = GM_DRUM_CHANNEL;

#[test]
fn the_default_drum_channel_is_general_midis_channel_10() {
    assert_eq!(GM_DRUM_CHANNEL, 9, "0-based: MIDI channel 10");
    assert_eq!(cfg().drum_channel, Some(9));
}

#[test]
fn the_general_midi_key_map_picks_the_family() {
    for k in [35, 36] {
        assert_eq!(gm_drum_family(k), DrumFamily::Kick, "{k}");
    }
    for k in [37, 38, 39, 40] {
        assert_eq!(gm_drum_family(k), DrumFamily::Snare, "{k}");
    }
    for k in [42, 44, 46, 49, 51, 52, 53, 55, 57, 59] {
        assert_eq!(gm_drum_family(k), DrumFamily::Cymbal, "{k}");
    }
    for (i, k) in [41, 43, 45, 47, 48, 50].into_iter().enumerate() {
        assert_eq!(gm_drum_family(k), DrumFamily::Tom(i as u8), "{k}");
    }
    for k in [0, 27, 34, 54, 56, 58, 60, 81, 127] {
        assert_eq!(gm_drum_family(k), DrumFamily::Other, "{k}");
    }
}

#[test]
fn a_kick_lands_low_and_wide_a_hat_high_and_small() {
    let kick = hit(36, DRUMS, 1.0, &cfg());
    let hat = hit(42, DRUMS, 1.0, &cfg());
    let (kl, kb, kr, kt) = footprint(&kick);
    let (hl, hb, hr, ht) = footprint(&hat);
    // Kick: three splats of 3 x 0.03 x 1.3 = 0.117, centres 1.5 radii apart: a band
    // 2 x 1.5 x 0.117 + 2 x 0.117 = 0.585 wide, centred at the bottom, pushing up.
    assert_eq!(kick.len(), 3);
    assert!(kick.iter().all(|s| s.pos[1] <= 0.1), "{kick:?}");
    assert!((kr - kl - 0.585).abs() < 1e-3, "kick width {}", kr - kl);
    assert!((kl + kr) / 2.0 - cfg().aspect / 2.0 < 1e-5, "centred");
    assert!(kt < 0.2 && kb < 0.0, "low: {kb}..{kt}");
    assert!(kick.iter().all(|s| s.force[1] > 2.0 && s.force[0] == 0.0));
    // Hat: one splat of 0.5 x 0.03 x 1.3 = 0.0195, near the top.
    assert_eq!(hat.len(), 1);
    assert!(hat[0].pos[1] > 0.8, "{:?}", hat[0].pos);
    assert!((hr - hl - 0.039).abs() < 1e-4 && hb > 0.75 && ht < 1.0);
    assert!((kr - kl) > 10.0 * (hr - hl), "the kick is far wider");
    // Hi-hats left of the rides.
    let ride = hit(51, DRUMS, 1.0, &cfg());
    assert!(hat[0].pos[0] < 0.5 && ride[0].pos[0] > cfg().aspect - 0.5);
}

#[test]
fn a_snare_bursts_sideways_half_way_up() {
    for key in [37, 38, 39, 40] {
        let snare = hit(key, DRUMS, 1.0, &cfg());
        assert_eq!(snare.len(), 2, "{key}");
        // One pushing left, one right, nothing up or down.
        let (left, right): (Vec<&Splat>, Vec<&Splat>) =
            snare.iter().partition(|s| s.force[0] < 0.0);
        assert_eq!((left.len(), right.len()), (1, 1));
        for s in &snare {
            assert!(s.force[0].abs() >= drums::SNARE_PUSH - 1e-6 && s.force[1] == 0.0);
            assert!((s.pos[1] - 0.5).abs() < 1e-6);
        }
        assert!(
            left[0].pos[0] < right[0].pos[0],
            "each pushes away from the other"
        );
    }
}

#[test]
fn toms_run_left_to_right_by_pitch() {
    // Played high to low, after a pitched note far up: the place is the tom's, whatever
    // came before.
    let mut m = Mapper::new();
    m.handle(&at(
        0.0,
        SimEvent::NoteOn {
            note: note(100, 0),
            velocity: 1.0,
        },
    ));
    for key in [50, 48, 47, 45, 43, 41] {
        m.handle(&at(
            0.0,
            SimEvent::NoteOn {
                note: note(key, DRUMS),
                velocity: 1.0,
            },
        ));
    }
    let mut out = Vec::new();
    m.emit(0.0, &cfg(), &mut out);
    let tom_x = |key: u8| {
        let s = hit(key, DRUMS, 1.0, &cfg());
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].shape, SplatShape::Radial, "a burst outwards");
        assert!(s[0].force[0] < 0.0, "negative radial strength: pushes away");
        assert_eq!(s[0].pos[1], drums::TOM_Y);
        s[0].pos[0]
    };
    let xs: Vec<f32> = drums::TOM_KEYS.iter().map(|&k| tom_x(k)).collect();
    for pair in xs.windows(2) {
        assert!(pair[1] > pair[0] + 0.1, "{xs:?}");
    }
    // The same places when played together with a pitched note.
    let together: Vec<f32> = out
        .iter()
        .filter(|s| s.shape == SplatShape::Radial)
        .map(|s| s.pos[0])
        .collect();
    let mut sorted = together.clone();
    sorted.sort_by(f32::total_cmp);
    assert_eq!(sorted, xs);
}

#[test]
fn other_percussion_is_small_mid_height_bursts() {
    let cowbell = hit(56, DRUMS, 1.0, &cfg());
    let conga = hit(63, DRUMS, 1.0, &cfg());
    for s in cowbell.iter().chain(&conga) {
        assert!(s.pos[1] > 0.55 && s.pos[1] < 0.75, "{s:?}");
        assert!(s.radius < cfg().splat_radius * 1.3 && s.radius > 0.02);
    }
    assert!(conga[0].pos[0] > cowbell[0].pos[0], "by key along the row");
}

/// Every splat of a drum hit says which family struck it (the 3D liquid plays each its own
/// way); a note's splats say none.
#[test]
fn drum_splats_carry_their_family() {
    let c = MappingConfig::default();
    for (key, drum) in [
        (36, Drum::Kick),
        (38, Drum::Snare),
        (42, Drum::Cymbal),
        (45, Drum::Tom),
        (70, Drum::Other),
    ] {
        let splats = hit(key, DRUMS, 0.8, &c);
        assert!(!splats.is_empty());
        assert!(splats.iter().all(|s| s.drum == drum), "{key}: {splats:?}");
    }
    assert!(hit(60, 0, 0.8, &c).iter().all(|s| s.drum == Drum::None));
}

#[test]
fn drum_families_have_distinct_vivid_colours() {
    let families = [
        DrumFamily::Kick,
        DrumFamily::Snare,
        DrumFamily::Cymbal,
        DrumFamily::Tom(0),
        DrumFamily::Other,
    ];
    for (i, a) in families.iter().enumerate() {
        let ca = a.color();
        assert!(
            ca.iter().cloned().fold(0.0, f32::max) > 0.99,
            "bright: {a:?}"
        );
        for b in &families[i + 1..] {
            let cb = b.color();
            let d: f32 = ca.iter().zip(cb).map(|(x, y)| (x - y).powi(2)).sum();
            assert!(d.sqrt() > 0.4, "{a:?} {ca:?} vs {b:?} {cb:?}");
        }
    }
    // The hit carries its family's colour.
    assert_eq!(
        hit(36, DRUMS, 1.0, &cfg())[0].color,
        DrumFamily::Kick.color()
    );
}

#[test]
fn drums_are_one_shots_scaled_by_velocity() {
    let mut m = Mapper::new();
    let mut out = Vec::new();
    let kick = note(36, DRUMS);
    m.handle(&at(
        0.0,
        SimEvent::NoteOn {
            note: kick,
            velocity: 1.0,
        },
    ));
    assert!(!m.quiet(&cfg()), "a hit waits for the next step");
    m.emit(0.01, &cfg(), &mut out);
    assert_eq!(out.len(), 3);
    // Held or not, nothing more: no hold, no release.
    assert_eq!(m.active_voices(), 0);
    assert!(m.quiet(&cfg()));
    m.emit(0.01, &cfg(), &mut out);
    assert!(out.is_empty());
    m.handle(&at(0.5, SimEvent::NoteOff { note: kick }));
    m.emit(0.01, &cfg(), &mut out);
    assert!(out.is_empty(), "the note-off does nothing");
    // A note-on and its note-off in the same block still make the burst.
    m.handle(&at(
        1.0,
        SimEvent::NoteOn {
            note: kick,
            velocity: 1.0,
        },
    ));
    m.handle(&at(1.001, SimEvent::NoteOff { note: kick }));
    m.emit(0.01, &cfg(), &mut out);
    assert_eq!(out.len(), 3);
    // Velocity: a ghost note is smaller, paler and softer.
    let loud = hit(38, DRUMS, 1.0, &cfg());
    let soft = hit(38, DRUMS, 0.2, &cfg());
    // Dye 0.3 + 0.7 v: 1.0 vs 0.44; radius 0.7 + 0.6 v: 1.3 vs 0.82.
    assert!((soft[0].amount / loud[0].amount - 0.44).abs() < 1e-5);
    assert!((soft[0].force[0] / loud[0].force[0] - 0.44).abs() < 1e-5);
    assert!((soft[0].radius / loud[0].radius - 0.82 / 1.3).abs() < 1e-5);
}

#[test]
fn with_no_drum_channel_channel_10_plays_pitched_notes() {
    let no_drums = MappingConfig {
        drum_channel: None,
        ..cfg()
    };
    let out = hit(36, DRUMS, 1.0, &no_drums);
    // A lone pitched note's key-down burst (its envelope starts at 0), mid-range at the
    // keyboard height, pushing up; C with channel 10's hue shift of 9/24 turn.
    assert_eq!(out.len(), 1);
    let burst = out[0];
    assert!((burst.pos[0] - cfg().aspect / 2.0).abs() < 1e-6);
    assert_eq!(burst.pos[1], KEYBOARD_Y);
    assert_eq!(burst.shape, SplatShape::Gaussian);
    assert!(burst.force[0].abs() < 1e-6 && burst.force[1] > 1.0);
    assert_eq!(
        burst.color,
        hsv_to_rgb(9.0 * CHANNEL_HUE_TURNS, NOTE_SATURATION, 1.0)
    );
    // The same as a note on channel 10 when another channel holds the drums.
    let elsewhere = MappingConfig {
        drum_channel: Some(3),
        ..cfg()
    };
    assert_eq!(hit(36, DRUMS, 1.0, &elsewhere), out);
    // And it holds like a note.
    let mut m = Mapper::new();
    m.handle(&at(
        0.0,
        SimEvent::NoteOn {
            note: note(36, DRUMS),
            velocity: 1.0,
        },
    ));
    let mut buf = Vec::new();
    for _ in 0..10 {
        m.emit(0.01, &no_drums, &mut buf);
    }
    assert_eq!(m.active_voices(), 1);
    assert_eq!(buf.len(), 1, "held emission");
}

#[test]
fn pitched_notes_on_other_channels_are_unaffected_by_the_kit() {
    // Two pitched notes on channel 1 over a second, with and without a busy kit beside them.
    let run = |with_kit: bool| {
        let mut m = Mapper::new();
        let mut pitched = Vec::new();
        let mut out = Vec::new();
        for step in 0..60u32 {
            let t = f64::from(step) / 60.0;
            if step == 0 || step == 30 {
                let key = if step == 0 { 48 } else { 72 };
                m.handle(&at(
                    t,
                    SimEvent::NoteOn {
                        note: note(key, 0),
                        velocity: 0.8,
                    },
                ));
            }
            if with_kit && step % 5 == 0 {
                for key in [36, 38, 42, 45, 56, 20, 100] {
                    m.handle(&at(
                        t,
                        SimEvent::NoteOn {
                            note: note(key, DRUMS),
                            velocity: 0.9,
                        },
                    ));
                    m.handle(&at(
                        t,
                        SimEvent::NoteOff {
                            note: note(key, DRUMS),
                        },
                    ));
                }
            }
            m.emit(1.0 / 60.0, &cfg(), &mut out);
            // No drum hit sits at the keyboard height.
            pitched.extend(out.iter().filter(|s| s.pos[1] == KEYBOARD_Y).copied());
        }
        (pitched, m.range(), m.active_voices())
    };
    let (alone, range_alone, voices_alone) = run(false);
    let (beside, range_beside, voices_beside) = run(true);
    assert!(!alone.is_empty());
    assert_eq!(alone, beside);
    assert_eq!(range_alone, Some((48.0, 72.0)));
    assert_eq!(
        range_beside, range_alone,
        "drum keys do not stretch the keyboard"
    );
    assert_eq!(voices_beside, voices_alone);
}

/// Play `key` on `channel` at `velocity` into a fresh mapper: the splats of the onset's step,
/// and those of the 30th step it is held.
fn play(key: u8, channel: u8, velocity: f32, c: &MappingConfig) -> (Vec<Splat>, Vec<Splat>) {
    let (mut m, out) = strike(key, channel, velocity, c);
    let mut held = Vec::new();
    for _ in 0..30 {
        held.clear();
        m.emit(1.0 / 60.0, c, &mut held);
    }
    (out, held)
}

/// With heat on, a note's onset carries heat at its emitter, more for a harder velocity, and
/// a held note keeps heating (so it rises as a plume); with heat off no splat carries any.
#[test]
fn notes_heat_the_fluid_by_velocity_when_heat_is_on() {
    let hot = MappingConfig {
        heat: true,
        ..cfg()
    };
    let (soft, _) = play(60, 0, 0.2, &hot);
    let (hard, held) = play(60, 0, 1.0, &hot);
    assert!((hard[0].heat - NOTE_HEAT).abs() < 1e-6, "{}", hard[0].heat);
    assert!((soft[0].heat - NOTE_HEAT * (0.3 + 0.7 * 0.2)).abs() < 1e-6);
    assert!(
        held.iter().any(|s| s.heat > 0.0),
        "a held note keeps heating"
    );
    assert!(
        held.iter().all(|s| s.heat < hard[0].heat),
        "one step's heat is a trickle"
    );
    let (cold, cold_held) = play(60, 0, 1.0, &cfg());
    assert!(cold.iter().chain(&cold_held).all(|s| s.heat == 0.0));
}

/// With particles on, a note's onset emits more of them for a harder velocity (all of the
/// knob's count at full velocity), a held note keeps a thin stream going, a drum hit and an
/// audio onset emit too; with the knob at 0 (the default) no splat carries any.
#[test]
fn notes_drums_and_onsets_emit_particles_when_the_knob_is_up() {
    let on = MappingConfig {
        particles: 200.0,
        ..cfg()
    };
    let (soft, _) = play(60, 0, 0.2, &on);
    let (hard, held) = play(60, 0, 1.0, &on);
    assert!(
        (hard[0].particles - 200.0).abs() < 1e-3,
        "{}",
        hard[0].particles
    );
    assert!((soft[0].particles - 200.0 * (0.2 + 0.8 * 0.2)).abs() < 1e-3);
    let stream: f32 = held.iter().map(|s| s.particles).sum();
    assert!(
        stream > 0.0 && stream < 0.05 * hard[0].particles,
        "a held note trickles: {stream} a step"
    );
    let (drum, _) = play(36, DRUMS, 1.0, &on);
    assert!(drum.iter().all(|s| s.particles > 0.0), "{drum:?}");
    let mut m = Mapper::new();
    m.handle(&at(0.0, SimEvent::Onset { strength: 1.0 }));
    let mut out = Vec::new();
    m.emit(
        0.01,
        &MappingConfig {
            particles: 200.0,
            ..legacy()
        },
        &mut out,
    );
    assert!(out.iter().any(|s| s.particles > 0.0), "{out:?}");
    let (off, off_held) = play(60, 0, 1.0, &cfg());
    assert!(off.iter().chain(&off_held).all(|s| s.particles == 0.0));
}

/// The liquid's swing: none in silence; with music, its size follows the level (all of it
/// from an RMS of 1 / SWING_PER_RMS) and, while the host plays, its sign follows the beats:
/// one way half way through beat 0, the other half way through beat 1. Without a transport
/// it swings on its own, once every SWING_FREE_S. A jump glides (SWING_GLIDE_S).
#[test]
fn the_swing_follows_the_level_and_the_beat() {
    let mut m = Mapper::new();
    let mut out = Vec::new();
    let c = cfg();
    assert_eq!(m.emit(0.01, &c, &mut out).swing, 0.0, "silence");
    let level = |m: &mut Mapper, rms: f32| {
        m.handle(&at(
            0.0,
            SimEvent::Envelope {
                rms: [rms; 2],
                peak: [rms; 2],
            },
        ))
    };
    let beat = |m: &mut Mapper, beat: f64, playing: bool| {
        m.handle(&at(
            0.0,
            SimEvent::Transport {
                playing,
                tempo_bpm: 120.0,
                beat,
            },
        ))
    };
    level(&mut m, 0.5);
    beat(&mut m, 0.5, true);
    let one = m.emit(0.5, &c, &mut out).swing;
    assert!((one - 1.0).abs() < 1e-4, "{one}");
    beat(&mut m, 1.5, true);
    let two = m.emit(0.5, &c, &mut out).swing;
    assert!((two + 1.0).abs() < 1e-4, "{two}");
    level(&mut m, 0.05);
    beat(&mut m, 4.5, true);
    let quiet = m.emit(0.5, &c, &mut out).swing;
    assert!((quiet - 0.05 * SWING_PER_RMS).abs() < 1e-4, "{quiet}");
    // Stopped: a free swing, a quarter of the way round after a quarter of its period.
    beat(&mut m, 0.0, false);
    let now = m.emit(0.5, &c, &mut out).swing;
    let later = m.emit(SWING_FREE_S / 4.0, &c, &mut out).swing;
    // A jump of its target glides: a step of 1 ms covers 1 - exp(-1 / 30) of it.
    beat(&mut m, 1.5, true);
    level(&mut m, 0.5);
    let before = m.emit(0.5, &c, &mut out).swing;
    beat(&mut m, 0.5, true);
    let step = m.emit(0.001, &c, &mut out).swing;
    let share = (step - before) / (1.0 - before);
    assert!(
        (share - (1.0 - (-1.0f32 / 30.0).exp())).abs() < 1e-3,
        "{before} -> {step}"
    );
    level(&mut m, 0.05);
    beat(&mut m, 0.0, false);
    assert!((later - now).abs() > 0.05, "{now} -> {later}");
    assert!(later.abs() <= 0.05 * SWING_PER_RMS + 1e-6);
    // No reactivity, no swing (after its glide).
    let off = MappingConfig {
        reactivity: 0.0,
        ..c
    };
    assert!(m.emit(1.0, &off, &mut out).swing.abs() < 1e-9);
}
