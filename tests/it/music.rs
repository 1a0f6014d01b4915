//! Music in, fluid out, end to end on the CPU solver: notes become dye of their hue at their
//! mapped place in the next frame, all-notes-off releases a hanging note, and a note played
//! into the plugin's `process()` reaches the frames the editor would show.

use crate::common;

use common::mock::{Process, activate_48k, process_silence};
use common::xvfb::hue_value;
use dyeflow::Dyeflow;
use dyeflow::bridge::events::{NoteId, SimEvent, TimedEvent};
use dyeflow::engine::Driver;
use dyeflow::mapping::{KEYBOARD_MARGIN, KEYBOARD_Y};
use dyeflow::params::{Aspect, BackendChoice, DyeflowParams, Settings};
use dyeflow::sim::grid::cpu::CpuSolver;
use dyeflow::sim::{GridModel, Model, SimConfig};
use nice_plug::midi::{Channel, Key, VoiceID};
use nice_plug::prelude::*;
use std::time::{Duration, Instant};

const W: usize = 320;
const H: usize = 180;
const ASPECT: f32 = 16.0 / 9.0;

fn note_on(key: u8, velocity: f32) -> TimedEvent {
    TimedEvent {
        time_s: 0.0,
        event: SimEvent::NoteOn {
            note: NoteId {
                key,
                channel: 0,
                voice: -1,
            },
            velocity,
        },
    }
}

/// Parameters at their defaults but for keyboard mode (a state of this version that names
/// it), which the tests below place notes by.
fn keyboard_params() -> DyeflowParams {
    let params = DyeflowParams::default();
    keyboard(&params);
    params
}

fn keyboard(params: &DyeflowParams) {
    let json = format!(
        r#"{{"params": {{"mapping": "keyboard"}}, "fields": {{"state-version": "{}"}}}}"#,
        dyeflow::params::STATE_VERSION
    );
    dyeflow::preset::apply(json.as_bytes(), params).expect("keyboard mode");
}

fn hue_distance(a: f32, b: f32) -> f32 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

/// The pixel of a `W x H` frame at canvas point (x, y), canvas height 1, y up.
fn pixel_at(frame: &[u8], width: usize, height: usize, x: f32, y: f32) -> [u8; 4] {
    let px = ((x / ASPECT * width as f32) as usize).min(width - 1);
    let py = (((1.0 - y) * height as f32) as usize).min(height - 1);
    let i = (py * width + px) * 4;
    frame[i..i + 4].try_into().unwrap()
}

/// The grid fluid on the CPU solver, as the engine drives it.
fn solver() -> GridModel {
    let cpu = CpuSolver::new(&SimConfig::new(160, 90), 2).expect("solver threads");
    GridModel::new(Box::new(cpu))
}

fn total_dye(s: &mut GridModel) -> f64 {
    let f = s.solver().read_fields();
    f.dye.iter().flatten().map(|&x| f64::from(x)).sum()
}

/// A C, an E and a G in one step, keyboard mode: the next frame shows red at the C's place,
/// green at the E's and blue at the G's, on black elsewhere.
#[test]
fn notes_show_their_hues_at_their_mapped_places_in_the_next_frame() {
    let params = keyboard_params();
    let mut s = solver();
    let mut driver = Driver::new(&params);
    // C3 (red, 0 deg), E4 (pitch class 4: 120 deg), G5 (pitch class 7: 210 deg).
    for key in [48, 64, 79] {
        driver.event(&mut s, &note_on(key, 100.0 / 127.0));
    }
    driver.step(&mut s, &params, 1.0 / 60.0);
    let mut frame = vec![0u8; W * H * 4];
    // Where the dye lands, without the glow, rays and background that spread the light.
    let look = dyeflow::fluid::Look {
        effects: dyeflow::fluid::Effects::OFF,
        ..driver.look()
    };
    s.render(&look, W, H, &mut frame);

    // The range in use runs from 48 (left margin) to 79 (right margin).
    let span = ASPECT - 2.0 * KEYBOARD_MARGIN;
    let places = [
        (KEYBOARD_MARGIN, 0.0),
        (KEYBOARD_MARGIN + span * 16.0 / 31.0, 120.0),
        (ASPECT - KEYBOARD_MARGIN, 210.0),
    ];
    for (x, hue) in places {
        let (h, v) = hue_value(pixel_at(&frame, W, H, x, KEYBOARD_Y));
        assert!(v > 0.3, "no dye at x = {x}: value {v}");
        assert!(
            hue_distance(h, hue) < 15.0,
            "at x = {x}: hue {h}, expected {hue}"
        );
    }
    // Between the notes and high above them the canvas is still black.
    for (x, y) in [(0.5, KEYBOARD_Y), (1.3, KEYBOARD_Y), (ASPECT / 2.0, 0.8)] {
        let (_, v) = hue_value(pixel_at(&frame, W, H, x, y));
        assert!(v < 0.02, "dye at ({x}, {y}): value {v}");
    }
}

/// Rows mode (the default): a C on channel 1, an E on channel 2 and a G on channel 3 in one
/// step. Three rows, channel 1 on top: at 0.94 - (k + 0.5) / 3 x 0.88 = 0.793, 0.5 and 0.207,
/// each note alone on its row, so mid-width. The next frame shows each hue (pitch class, plus
/// 15 degrees a channel) on its own row, and black between the rows.
#[test]
fn rows_mode_gives_each_channel_its_own_row() {
    let params = DyeflowParams::default();
    let mut s = solver();
    let mut driver = Driver::new(&params);
    for (channel, key) in [(0u8, 48u8), (1, 64), (2, 79)] {
        let mut e = note_on(key, 100.0 / 127.0);
        if let SimEvent::NoteOn { note, .. } = &mut e.event {
            note.channel = channel;
        }
        driver.event(&mut s, &e);
    }
    driver.step(&mut s, &params, 1.0 / 60.0);
    let mut frame = vec![0u8; W * H * 4];
    // Where the dye lands, without the glow, rays and background that spread the light.
    let look = dyeflow::fluid::Look {
        effects: dyeflow::fluid::Effects::OFF,
        ..driver.look()
    };
    s.render(&look, W, H, &mut frame);
    let x = ASPECT / 2.0;
    for (y, hue) in [(0.7933, 0.0), (0.5, 135.0), (0.2067, 240.0)] {
        let (h, v) = hue_value(pixel_at(&frame, W, H, x, y));
        assert!(v > 0.3, "no dye at y = {y}: value {v}");
        assert!(
            hue_distance(h, hue) < 15.0,
            "at y = {y}: hue {h}, expected {hue}"
        );
    }
    for y in [0.65, 0.35, 0.05, 0.95] {
        let (_, v) = hue_value(pixel_at(&frame, W, H, x, y));
        assert!(v < 0.02, "dye between the rows at y = {y}: value {v}");
    }
}

/// A note whose note-off never comes keeps emitting; all-notes-off (CC 123) releases it, and
/// once the release has run out the dye only fades.
#[test]
fn all_notes_off_releases_a_hanging_note() {
    let params = DyeflowParams::default();
    let run = |send_all_notes_off: bool| {
        let mut s = solver();
        let mut driver = Driver::new(&params);
        driver.event(&mut s, &note_on(60, 1.0));
        for _ in 0..120 {
            driver.step(&mut s, &params, 1.0 / 60.0);
        }
        if send_all_notes_off {
            let cc = SimEvent::ControlChange {
                channel: 0,
                cc: 123,
                value: 0.0,
            };
            driver.event(
                &mut s,
                &TimedEvent {
                    time_s: 2.0,
                    event: cc,
                },
            );
        }
        // The release (0.8 s) runs out.
        for _ in 0..60 {
            driver.step(&mut s, &params, 1.0 / 60.0);
        }
        let voices = driver.mapper().active_voices();
        let mut totals = vec![total_dye(&mut s)];
        for _ in 0..30 {
            driver.step(&mut s, &params, 1.0 / 60.0);
            totals.push(total_dye(&mut s));
        }
        (voices, totals)
    };
    let (voices, totals) = run(false);
    assert_eq!(voices, 1, "without a note-off the note still sounds");
    assert!(
        totals[30] > totals[0] * 0.97,
        "a held note keeps feeding dye: {totals:?}"
    );
    let (voices, totals) = run(true);
    assert_eq!(voices, 0, "all-notes-off released the note");
    // Only dissipation (0.5 per second) is left: every step loses dye, about 0.83 %.
    for w in totals.windows(2) {
        assert!(w[1] < w[0], "dye grew after the release: {totals:?}");
        assert!(
            (w[1] / w[0] - (-0.5f64 / 60.0).exp()).abs() < 2e-3,
            "{} -> {}",
            w[0],
            w[1]
        );
    }
}

/// A note played into the plugin's `process()` shows up in the frames the engine publishes.
#[test]
fn a_note_into_the_plugin_reaches_the_frames() {
    common::private_captures();
    let mut plugin = Dyeflow::default();
    keyboard(&plugin.shared_params());
    plugin.shared_params().set_settings(Settings {
        sim_resolution: 90,
        dye_scale: 1,
        aspect: Aspect::Wide,
        backend: BackendChoice::Cpu,
        sim_rate_hz: 60,
        ..Settings::default()
    });
    let frames = plugin.frames();
    frames.lock().request(W, H);
    assert!(activate_48k(&mut plugin));
    let mut ctx = Process::new(48_000.0);
    // The simulation starts with the audio; give it time to build its solver.
    process_silence(&mut plugin, &mut ctx, 2, 512);
    let start = Instant::now();
    while frames.lock().latest().serial == 0 {
        assert!(start.elapsed() < Duration::from_secs(20), "no frames");
        std::thread::sleep(Duration::from_millis(5));
    }
    ctx.events.push_back(NoteEvent::NoteOn {
        timing: 100,
        voice_id: VoiceID::Wildcard,
        channel: Channel::Number(0),
        key: Key::Number(60),
        velocity: 100.0 / 127.0,
    });
    process_silence(&mut plugin, &mut ctx, 2, 512);
    let start = Instant::now();
    loop {
        let mut frames = frames.lock();
        let f = frames.latest();
        let (h, v) = hue_value(pixel_at(
            &f.pixels,
            f.width,
            f.height,
            ASPECT / 2.0,
            KEYBOARD_Y,
        ));
        if f.width == W && v > 0.3 {
            assert!(hue_distance(h, 0.0) < 15.0, "middle C is red: hue {h}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the note never showed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}
