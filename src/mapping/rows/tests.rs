//! Tests of rows mode: known places, every emitter inside the canvas, one distinct row per
//! channel.

use super::super::{Mapper, MappingConfig, MappingMode};
use super::*;
use crate::bridge::events::{NoteId, SimEvent, TimedEvent};
use crate::fluid::Splat;

const ASPECT: f32 = 16.0 / 9.0;

fn cfg() -> MappingConfig {
    MappingConfig {
        mode: MappingMode::Rows,
        ..MappingConfig::default()
    }
}

fn on(m: &mut Mapper, key: u8, channel: u8) {
    m.handle(&TimedEvent {
        time_s: 0.0,
        event: SimEvent::NoteOn {
            note: NoteId {
                key,
                channel,
                voice: -1,
            },
            velocity: 1.0,
        },
    });
}

fn close(a: [f32; 2], b: [f32; 2]) -> bool {
    (a[0] - b[0]).abs() < 1e-4 && (a[1] - b[1]).abs() < 1e-4
}

/// Rows mode is what a new instance plays.
#[test]
fn rows_are_the_default() {
    assert_eq!(MappingConfig::default().mode, MappingMode::Rows);
}

/// Middle C alone on channel 1, then (on a fresh mapping) a chord over two channels: the
/// places and pushes worked out by hand.
#[test]
fn known_places_and_pushes() {
    let mut out: Vec<Splat> = Vec::new();
    // One channel: one row, centred in the band (0.06 + 0.94) / 2 = 0.5; a lone note sits
    // mid-range, x = aspect / 2 = 0.8889. The first key-down pushes straight up at 1.2.
    let mut m = Mapper::new();
    on(&mut m, 60, 0);
    m.emit(0.0, &cfg(), &mut out);
    assert_eq!(out.len(), 1);
    assert!(close(out[0].pos, [ASPECT / 2.0, 0.5]), "{:?}", out[0].pos);
    assert!(close(out[0].force, [0.0, 1.2]), "{:?}", out[0].force);

    // Channel 1 plays C4 (60); channel 4 (index 3) plays E2 (40) and E3 (52), in that order.
    // Two rows: channel 1 on top at 0.94 - 0.25 x 0.88 = 0.72, channel 4 at
    // 0.94 - 0.75 x 0.88 = 0.28 (at time 0 no row has swayed yet).
    // Channel 4's range is exactly an octave (40 to 52): E2 at the left margin (0.1), E3 at
    // the right one (aspect - 0.1 = 1.67778). Key-downs 1, 2, 3 push up, down, up; the ends
    // of a row fan out by 30 degrees: E2 down-left (-0.5, -0.866) x 1.2, E3 up-right
    // (0.5, 0.866) x 1.2.
    let mut m = Mapper::new();
    on(&mut m, 60, 0);
    on(&mut m, 40, 3);
    on(&mut m, 52, 3);
    m.emit(0.0, &cfg(), &mut out);
    assert_eq!(out.len(), 3);
    let want = [
        ([ASPECT / 2.0, 0.72], [0.0, 1.2]),
        ([0.1, 0.28], [-0.6, -1.039_23]),
        ([ASPECT - 0.1, 0.28], [0.6, 1.039_23]),
    ];
    for (s, (pos, force)) in out.iter().zip(want) {
        assert!(close(s.pos, pos), "at {:?}, expected {pos:?}", s.pos);
        assert!(
            close(s.force, force),
            "push {:?}, expected {force:?}",
            s.force
        );
    }
    assert_eq!(m.rows().range(3), Some((40.0, 52.0)));
    assert_eq!(m.rows().count(), 2);

    // 4.25 s later (a quarter of channel 1's 17 s period) channel 1's row is at the top of
    // its sway, 0.132 up: 0.852. Channel 4's period is 17 x 1.27 = 21.59 s: a phase of
    // 4.25 / 21.59 = 0.19685 turn, sin = 0.94478, 0.12471 up: 0.40471.
    let up = |c: u8| m.rows().place(c, 60.0, 1, 4.25, ASPECT).pos[1];
    assert!((up(0) - 0.852).abs() < 1e-4, "{}", up(0));
    assert!((up(3) - 0.404_71).abs() < 1e-4, "{}", up(3));
}

/// Each channel spans the width with its own notes: a bass that walks an octave low down
/// reaches both margins, as does a melody two octaves up.
#[test]
fn each_channel_spans_the_width_with_its_own_range() {
    let mut m = Mapper::new();
    let mut out = Vec::new();
    for (key, ch) in [(28, 1), (40, 1), (72, 0), (96, 0)] {
        on(&mut m, key, ch);
    }
    m.emit(0.0, &cfg(), &mut out);
    let xs: Vec<f32> = out.iter().map(|s| s.pos[0]).collect();
    for (x, want) in xs.iter().zip([0.1, ASPECT - 0.1, 0.1, ASPECT - 0.1]) {
        assert!((x - want).abs() < 1e-5, "{xs:?}");
    }
}

/// For every number of channels in use (1 to 16), every key, every canvas shape and times
/// over a whole sway period: every emitter lies inside the canvas, within the rows' band.
#[test]
fn every_emitter_is_inside_the_canvas() {
    for aspect in [9.0 / 16.0, 1.0, ASPECT, 21.0 / 9.0] {
        for count in 1..=16u8 {
            let mut rows = Rows::default();
            for c in 0..count {
                // Ranges from one key to the whole keyboard.
                rows.widen(c, f32::from(c) * 4.0);
                rows.widen(c, 127.0 - f32::from(c) * 3.0);
            }
            rows.advance(0.0, &[None; 16]);
            for step in 0..=68 {
                let t = step as f32 * ROW_SWAY_S / 68.0;
                for c in 0..count {
                    for key in 0..=127u8 {
                        for serial in [1, 2] {
                            let p = rows.place(c, f32::from(key), serial, t, aspect);
                            let [x, y] = p.pos;
                            assert!(
                                (0.0..=aspect).contains(&x)
                                    && (ROWS_BAND.0..=ROWS_BAND.1).contains(&y),
                                "{count} rows, channel {c}, key {key}, t {t}: {:?}",
                                p.pos
                            );
                            let len = (p.dir[0].powi(2) + p.dir[1].powi(2)).sqrt();
                            assert!((len - 1.0).abs() < 1e-5);
                        }
                    }
                }
            }
        }
    }
}

/// One row per channel in use, in channel order from the top, and they stay apart (at least
/// 40 % of a row spacing) however they sway; the drum channel gets none.
#[test]
fn rows_are_distinct_per_channel() {
    for channels in [
        vec![0u8, 1],
        vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12],
        (0..16).collect(),
    ] {
        let cfg = MappingConfig {
            drum_channel: (!channels.contains(&9)).then_some(9),
            ..cfg()
        };
        let mut m = Mapper::new();
        let mut out = Vec::new();
        for &c in &channels {
            on(&mut m, 60, c);
        }
        on(&mut m, 36, 9); // a kick (or, with 16 channels, channel 10's pitched note)
        m.emit(0.0, &cfg, &mut out);
        let n = channels.len();
        assert_eq!(m.rows().count(), n);
        let spacing = (ROWS_BAND.1 - ROWS_BAND.0) / n as f32;
        for step in 0..200 {
            let t = step as f32 * 0.37;
            let ys: Vec<f32> = channels
                .iter()
                .map(|&c| m.rows().place(c, 60.0, 1, t, ASPECT).pos[1])
                .collect();
            for pair in ys.windows(2) {
                assert!(
                    pair[0] - pair[1] >= 0.4 * spacing - 1e-5,
                    "{n} rows at t {t}: {ys:?}"
                );
            }
        }
    }
}

/// A channel that joins later takes its place at once; the rows already there glide to their
/// new places (no jump), within 1 % after 5 time constants.
#[test]
fn rows_glide_when_a_channel_joins() {
    let mut m = Mapper::new();
    let mut out = Vec::new();
    on(&mut m, 60, 0);
    m.emit(0.0, &cfg(), &mut out);
    let y = |m: &Mapper, c: u8| m.rows().place(c, 60.0, 1, 0.0, ASPECT).pos[1];
    assert!((y(&m, 0) - 0.5).abs() < 1e-6);
    on(&mut m, 60, 1);
    m.emit(0.0, &cfg(), &mut out);
    // Channel 2 is at its place (0.28) at once; channel 1 has not moved yet.
    assert!((y(&m, 1) - 0.28).abs() < 1e-6);
    assert!((y(&m, 0) - 0.5).abs() < 1e-6);
    let mut rows = m.rows().clone();
    let mut last = 0.5;
    for _ in 0..300 {
        rows.advance(1.0 / 60.0, &[None; 16]);
        let now = rows.place(0, 60.0, 1, 0.0, ASPECT).pos[1];
        assert!(
            now >= last && now - last < 0.01,
            "a jump from {last} to {now}"
        );
        last = now;
    }
    assert!((last - 0.72).abs() < 0.22 * 0.01, "{last}");
}
