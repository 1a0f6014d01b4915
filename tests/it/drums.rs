//! Drums end to end on the CPU solver: a General MIDI kick, snare and hi-hat on channel 10,
//! each played alone into a fresh fluid, land in different places of the next frame with
//! different footprints; and a project or preset from before the drum channel plays them as
//! notes, as it did.

use crate::common;

use common::clap_host::{Event, Instance};
use dyeflow::bridge::events::{NoteId, SimEvent, TimedEvent};
use dyeflow::engine::Driver;
use dyeflow::mapping::GM_DRUM_CHANNEL;
use dyeflow::params::DyeflowParams;
use dyeflow::sim::grid::cpu::CpuSolver;
use dyeflow::sim::{GridModel, Model, SimConfig};

const W: usize = 320;
const H: usize = 180;
const ASPECT: f32 = 16.0 / 9.0;
/// A pixel counts as lit above this value (max of R, G, B, 0 to 1): well above the black
/// background, well below a splat's centre.
const LIT: f32 = 0.15;

/// The lit part of a frame: its area (canvas heights squared), centroid and bounding box
/// (left, bottom, right, top), in canvas units, y up.
#[derive(Debug)]
struct Lit {
    area: f32,
    centre: [f32; 2],
    bounds: [f32; 4],
}

impl Lit {
    fn width(&self) -> f32 {
        self.bounds[2] - self.bounds[0]
    }
}

fn lit(frame: &[u8]) -> Lit {
    let (mut n, mut sx, mut sy) = (0usize, 0.0f64, 0.0f64);
    let mut bounds = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
    for py in 0..H {
        for px in 0..W {
            let i = (py * W + px) * 4;
            let value = frame[i..i + 3].iter().copied().max().unwrap_or(0);
            if f32::from(value) / 255.0 <= LIT {
                continue;
            }
            let x = (px as f32 + 0.5) / W as f32 * ASPECT;
            let y = 1.0 - (py as f32 + 0.5) / H as f32;
            n += 1;
            sx += f64::from(x);
            sy += f64::from(y);
            bounds = [
                bounds[0].min(x),
                bounds[1].min(y),
                bounds[2].max(x),
                bounds[3].max(y),
            ];
        }
    }
    assert!(n > 0, "nothing lit");
    Lit {
        area: n as f32 * (ASPECT / W as f32) * (1.0 / H as f32),
        centre: [(sx / n as f64) as f32, (sy / n as f64) as f32],
        bounds,
    }
}

/// Drum `key` on MIDI channel 10 at velocity 100, alone in a fresh fluid: the lit part of the
/// frame after one step.
fn play(params: &DyeflowParams, key: u8) -> Lit {
    let cpu = CpuSolver::new(&SimConfig::new(160, 90), 2).expect("solver threads");
    let mut s = GridModel::new(Box::new(cpu));
    let mut driver = Driver::new(params);
    let note = NoteId {
        key,
        channel: GM_DRUM_CHANNEL,
        voice: -1,
    };
    for (time_s, event) in [
        (
            0.0,
            SimEvent::NoteOn {
                note,
                velocity: 100.0 / 127.0,
            },
        ),
        // A drum's note-off follows at once; it must not cut the hit short.
        (0.001, SimEvent::NoteOff { note }),
    ] {
        driver.event(&mut s, &TimedEvent { time_s, event });
    }
    driver.step(&mut s, params, 1.0 / 60.0);
    let mut frame = vec![0u8; W * H * 4];
    // Where the dye lands, without the glow, rays and background that spread the light.
    let look = dyeflow::fluid::Look {
        effects: dyeflow::fluid::Effects::OFF,
        ..driver.look()
    };
    s.render(&look, W, H, &mut frame);
    lit(&frame)
}

fn distance(a: [f32; 2], b: [f32; 2]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

#[test]
fn kick_snare_and_hat_land_apart_with_different_footprints() {
    let params = DyeflowParams::default();
    let kick = play(&params, 36);
    let snare = play(&params, 38);
    let hat = play(&params, 42);
    let all = format!("kick {kick:?}\nsnare {snare:?}\nhat {hat:?}");

    // Where: the kick at the bottom, the snare half way up, the hat near the top.
    assert!(kick.centre[1] < 0.15, "{all}");
    assert!(snare.centre[1] > 0.35 && snare.centre[1] < 0.65, "{all}");
    assert!(hat.centre[1] > 0.75, "{all}");
    for (a, b) in [(&kick, &snare), (&snare, &hat), (&kick, &hat)] {
        assert!(distance(a.centre, b.centre) > 0.25, "{all}");
    }
    // How big: a wide band, a mid-sized burst, a small sparkle.
    assert!(kick.width() > 0.4, "{all}");
    assert!(hat.width() < 0.1, "{all}");
    assert!(kick.area > 2.0 * snare.area, "{all}");
    assert!(snare.area > 3.0 * hat.area, "{all}");
    // The snare is wider than tall: it bursts sideways.
    let snare_height = snare.bounds[3] - snare.bounds[1];
    assert!(snare.width() > snare_height, "{all}");
}

/// A preset (or project) saved before the drum channel names none and has no state version:
/// it loads with drums off, so channel 10 plays a pitched note at the keyboard's height, as it
/// did; a new instance plays the kit.
#[test]
fn an_old_preset_loads_with_drums_off() {
    let params = DyeflowParams::default();
    assert_eq!(params.drum_channel.value(), 10);
    let kit = play(&params, 36);

    let old = br#"{"version": "0.1.0", "params": {"visc": 10.0}}"#;
    dyeflow::preset::apply(old, &params).expect("an old preset loads");
    assert_eq!(params.drum_channel.value(), 0);
    let note = play(&params, 36);
    // The note's burst sits at the keyboard height (0.15), mid-canvas; the kick's band is
    // far wider.
    let keyboard_y = dyeflow::mapping::KEYBOARD_Y;
    assert!((note.centre[1] - keyboard_y).abs() < 0.05, "{note:?}");
    assert!((note.centre[0] - ASPECT / 2.0).abs() < 0.05, "{note:?}");
    assert!(
        kit.width() > 3.0 * note.width(),
        "kit {kit:?}\nnote {note:?}"
    );

    // A preset saved now carries the channel.
    let new = br#"{"version": "0.1.0", "params": {"drum_ch": 10}}"#;
    dyeflow::preset::apply(new, &params).expect("a preset loads");
    assert_eq!(params.drum_channel.value(), 10);
}

/// nice-plug's CLAP state: a little-endian u64 length, then that many bytes of JSON.
fn state_json(bytes: &[u8]) -> serde_json::Value {
    let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    serde_json::from_slice(&bytes[8..8 + len]).expect("the state is JSON")
}

fn state_bytes(json: &serde_json::Value) -> Vec<u8> {
    let body = serde_json::to_vec(json).unwrap();
    let mut bytes = (body.len() as u64).to_le_bytes().to_vec();
    bytes.extend(body);
    bytes
}

/// Through the real CLAP entry point, as a host restores a project: one saved before the drum
/// channel (no `drum_ch`; version 1 or no version field) comes back with drums off; one saved
/// now keeps its channel; a new instance listens to channel 10.
#[test]
fn an_old_project_loads_over_clap_with_drums_off() {
    let mut a = Instance::new();
    let id = a.param_id("Drum channel");
    assert_eq!(a.param_value(id), 10.0, "a new instance: channel 10");
    let saved = state_json(&a.save_state());
    assert!(saved["params"].get("drum_ch").is_some(), "{saved}");
    for version in [None, Some("1")] {
        let mut old = saved.clone();
        old["params"].as_object_mut().unwrap().remove("drum_ch");
        let fields = old["fields"].as_object_mut().unwrap();
        match version {
            Some(v) => fields.insert("state-version".into(), v.into()),
            None => fields.remove("state-version"),
        };
        let mut b = Instance::new();
        assert!(b.load_state(&state_bytes(&old), 4096));
        assert_eq!(b.param_value(id), 0.0, "version {version:?}: drums off");
    }
    a.flush_params(&vec![Event::param(0, id, 5.0)]);
    let mut c = Instance::new();
    assert!(c.load_state(&a.save_state(), 4096));
    assert_eq!(
        c.param_value(id),
        5.0,
        "a current project keeps its channel"
    );
}
