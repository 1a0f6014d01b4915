//! Dyeflow as a host sees it, driven through its real CLAP entry point: passthrough, the
//! lifecycle at every rate and block size, parameters over CLAP, and state save/load.
//!
//! Debug builds run `process()` under nice-plug's `assert_process_allocs`, so any allocation on
//! the audio thread during these tests aborts the test binary.

use crate::common;

use common::clap_host::{Event, Instance};
use common::{expected_passthrough, hostile_audio, rng};
use rand::Rng;
use rand::rngs::SmallRng;

const STEREO: u32 = 0;
const MONO: u32 = 1;

/// A dense mix of everything a host may send in one block of `frames` samples.
fn dense_events(rng: &mut SmallRng, frames: u32, params: &[(u32, f64, f64)]) -> Vec<Event> {
    let n = rng.random_range(0..200);
    let mut events: Vec<Event> = (0..n)
        .map(|_| {
            let time = rng.random_range(0..frames);
            let key = rng.random_range(0..128);
            let channel = rng.random_range(0..16);
            match rng.random_range(0..6) {
                0 => Event::note(
                    time,
                    true,
                    channel,
                    key,
                    rng.random(),
                    rng.random_range(-1..1000),
                ),
                1 => Event::note(time, false, channel, key, rng.random(), -1),
                2 => Event::expression(time, rng.random_range(0..7), channel, key, rng.random()),
                3 => Event::midi(
                    time,
                    [
                        0xb0 | channel as u8,
                        rng.random_range(0..128),
                        rng.random_range(0..128),
                    ],
                ),
                4 => Event::midi(
                    time,
                    [
                        0xe0 | channel as u8,
                        rng.random_range(0..128),
                        rng.random_range(0..128),
                    ],
                ),
                _ => {
                    let (id, min, max) = params[rng.random_range(0..params.len())];
                    Event::param(time, id, rng.random_range(min..=max))
                }
            }
        })
        .collect();
    events.sort_by_key(|e| e.time());
    events
}

fn param_ranges(instance: &Instance) -> Vec<(u32, f64, f64)> {
    instance
        .param_infos()
        .iter()
        .map(|i| (i.id, i.min_value, i.max_value))
        .collect()
}

fn check_passthrough(layout: u32, channels: usize, in_place: bool, seed: u64) {
    let mut rng = rng(seed);
    let mut plugin = Instance::new();
    assert!(plugin.select_audio_config(layout));
    assert!(plugin.activate(48_000.0, 1, 8192));
    assert!(plugin.start_processing());
    let params = param_ranges(&plugin);

    let mut checked = 0usize;
    for block in 0..60 {
        let frames = match block {
            0 => 1,
            1 => 8192,
            _ => rng.random_range(1..=2048),
        };
        let inputs: Vec<Vec<f32>> = (0..channels)
            .map(|_| hostile_audio(&mut rng, frames))
            .collect();
        let mut outputs = vec![vec![f32::from_bits(0x7fc0_dead); frames]; channels];
        let events = dense_events(&mut rng, frames as u32, &params);
        plugin.process(&inputs, &mut outputs, &events, in_place);

        for (c, (i, o)) in inputs.iter().zip(&outputs).enumerate() {
            for (s, (x, y)) in i.iter().zip(o).enumerate() {
                assert_eq!(
                    y.to_bits(),
                    expected_passthrough(*x),
                    "channel {c} sample {s} of block {block}: in {x:e} ({:#010x}), out {y:e} ({:#010x})",
                    x.to_bits(),
                    y.to_bits()
                );
                assert!(!y.is_subnormal());
                checked += 1;
            }
        }
    }
    assert!(checked > 50_000, "only {checked} samples checked");
}

#[test]
fn passthrough_is_bit_exact_stereo_out_of_place() {
    check_passthrough(STEREO, 2, false, 1);
}

#[test]
fn passthrough_is_bit_exact_stereo_in_place() {
    check_passthrough(STEREO, 2, true, 2);
}

#[test]
fn passthrough_is_bit_exact_mono_out_of_place() {
    check_passthrough(MONO, 1, false, 3);
}

#[test]
fn passthrough_is_bit_exact_mono_in_place() {
    check_passthrough(MONO, 1, true, 4);
}

#[test]
fn lifecycle_survives_changing_rates_block_sizes_and_layouts() {
    let mut rng = rng(5);
    let mut plugin = Instance::new();
    let params = param_ranges(&plugin);
    let rates = [
        22_050.0, 44_100.0, 48_000.0, 88_200.0, 96_000.0, 176_400.0, 192_000.0,
    ];
    let max_blocks = [1u32, 7, 64, 512, 4096, 8192];
    for (round, &rate) in rates.iter().cycle().take(14).enumerate() {
        let layout = if round % 2 == 0 { STEREO } else { MONO };
        let channels = if layout == STEREO { 2 } else { 1 };
        let max_block = max_blocks[round % max_blocks.len()];
        plugin.deactivate();
        assert!(plugin.select_audio_config(layout));
        // Some hosts activate twice in a row (state loads); that must be harmless.
        assert!(plugin.activate(rate, 1, max_block));
        plugin.deactivate();
        assert!(plugin.activate(rate, 1, max_block));
        assert!(plugin.start_processing());
        for block in 0..12 {
            let frames = match block {
                0 => 1,
                1 => max_block as usize,
                _ => rng.random_range(1..=max_block as usize),
            };
            let inputs: Vec<Vec<f32>> = (0..channels)
                .map(|_| (0..frames).map(|_| rng.random_range(-1.0..1.0)).collect())
                .collect();
            let mut outputs = vec![vec![0.0; frames]; channels];
            let events = dense_events(&mut rng, frames as u32, &params);
            plugin.process(&inputs, &mut outputs, &events, block % 3 == 0);
            assert_eq!(inputs, outputs);
            if block == 6 {
                plugin.reset();
            }
        }
        plugin.stop_processing();
    }
}

#[test]
fn event_flood_is_drained_without_trouble() {
    let mut rng = rng(6);
    let mut plugin = Instance::new();
    assert!(plugin.activate(44_100.0, 1, 8192));
    assert!(plugin.start_processing());
    // A block with one event on every sample: 8192 events, the preallocated capacity.
    let events: Vec<Event> = (0..8192u32)
        .map(|t| Event::midi(t, [0x90, (t % 128) as u8, 100]))
        .collect();
    let inputs = vec![
        (0..8192)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect::<Vec<f32>>();
        2
    ];
    let mut outputs = vec![vec![0.0; 8192]; 2];
    for _ in 0..5 {
        plugin.process(&inputs, &mut outputs, &events, false);
        assert_eq!(inputs, outputs);
    }
}

/// CLAP value -> text -> value -> text must give the same text twice, for every parameter and
/// across its whole range (the check hosts and clap-validator make).
#[test]
fn parameter_text_round_trips_over_clap() {
    let plugin = Instance::new();
    let infos = plugin.param_infos();
    assert!(infos.len() >= 18, "only {} parameters", infos.len());
    let mut rng = rng(9);
    for info in &infos {
        let span = info.max_value - info.min_value;
        let mut values: Vec<f64> = (0..=1000)
            .map(|i| info.min_value + span * f64::from(i) / 1000.0)
            .collect();
        values.extend((0..2000).map(|_| rng.random_range(info.min_value..=info.max_value)));
        // Just either side of each decade, where the number of printed decimals changes.
        for decade in [
            "0.0001", "0.001", "0.01", "0.1", "1", "10", "100", "1000", "10000",
        ] {
            if let Some(v) = plugin.param_from_text(info.id, decade) {
                for eps in [-1e-6, -1e-7, 0.0, 1e-7, 1e-6] {
                    values.push((v + eps * span).clamp(info.min_value, info.max_value));
                }
            }
        }
        for v in values {
            let text = plugin.param_text(info.id, v);
            let back = plugin
                .param_from_text(info.id, &text)
                .unwrap_or_else(|| panic!("param {} cannot parse its own text {text:?}", info.id));
            let again = plugin.param_text(info.id, back);
            assert_eq!(
                text, again,
                "param {} at {v}: {text:?} -> {back} -> {again:?}",
                info.id
            );
        }
        assert!(plugin.param_from_text(info.id, "not a number").is_none() || info.max_value <= 1.0);
    }
}

/// nice-plug's CLAP state: a little-endian u64 length, then that many bytes of JSON.
fn state_json(bytes: &[u8]) -> serde_json::Value {
    let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    assert_eq!(bytes.len(), 8 + len, "length prefix does not match");
    serde_json::from_slice(&bytes[8..]).expect("the state is JSON")
}

fn state_bytes(json: &serde_json::Value) -> Vec<u8> {
    let body = serde_json::to_vec(json).unwrap();
    let mut bytes = (body.len() as u64).to_le_bytes().to_vec();
    bytes.extend(body);
    bytes
}

fn randomise_params(plugin: &mut Instance, rng: &mut SmallRng) {
    let events: Vec<Event> = param_ranges(plugin)
        .into_iter()
        .map(|(id, min, max)| Event::param(0, id, rng.random_range(min..=max)))
        .collect();
    plugin.flush_params(&events);
}

#[test]
fn state_save_then_load_gives_an_equal_state() {
    let mut rng = rng(7);
    for round in 0..10 {
        let mut a = Instance::new();
        randomise_params(&mut a, &mut rng);
        if round % 2 == 0 {
            // Also while active: hosts save and load during playback.
            assert!(a.activate(48_000.0, 1, 512));
        }
        let saved = a.save_state();

        let mut b = Instance::new();
        if round % 3 == 0 {
            assert!(b.activate(96_000.0, 32, 1024));
        }
        // Hand the state over in awkward short reads, as some hosts do.
        assert!(b.load_state(&saved, 1 + round * 7));
        for info in a.param_infos() {
            assert_eq!(
                a.param_value(info.id),
                b.param_value(info.id),
                "parameter {} differs after reload",
                info.id
            );
        }
        assert_eq!(
            b.save_state(),
            saved,
            "saving the reloaded state gives other bytes"
        );
    }
}

#[test]
fn settings_and_editor_size_come_back_with_the_project() {
    let a = Instance::new();
    let mut state = state_json(&a.save_state());
    let settings = serde_json::json!({
        "sim_resolution": 512, "dye_scale": 4, "aspect": "4:3", "backend": "cpu",
        "sim_rate_hz": 120, "fluid": "particles"
    });
    let editor = serde_json::json!({
        "width": 1280, "height": 720, "panel_open": true, "brush_radius": 0.125,
        "wall_radius": 0.05
    });
    state["fields"]["settings"] = settings.to_string().into();
    state["fields"]["editor"] = editor.to_string().into();
    let custom = state_bytes(&state);

    let mut b = Instance::new();
    assert!(b.load_state(&custom, 4096));
    let reloaded = state_json(&b.save_state());
    let field = |name: &str| -> serde_json::Value {
        serde_json::from_str(reloaded["fields"][name].as_str().unwrap()).unwrap()
    };
    assert_eq!(field("settings"), settings);
    assert_eq!(field("editor"), editor);

    // A project saved before the fluid choice existed loads with the grid fluid.
    let mut before_fluid = settings.clone();
    before_fluid.as_object_mut().unwrap().remove("fluid");
    state["fields"]["settings"] = before_fluid.to_string().into();
    let mut d = Instance::new();
    assert!(d.load_state(&state_bytes(&state), 4096));
    let reloaded = state_json(&d.save_state());
    let loaded: serde_json::Value =
        serde_json::from_str(reloaded["fields"]["settings"].as_str().unwrap()).unwrap();
    let mut want = before_fluid.clone();
    want["fluid"] = "grid".into();
    assert_eq!(loaded, want);
    state["fields"]["settings"] = settings.to_string().into();

    // A project saved before the brush radius (and the obstacle brush) existed loads with
    // the default brushes.
    let older = serde_json::json!({ "width": 800, "height": 600, "panel_open": false });
    state["fields"]["editor"] = older.to_string().into();
    let mut c = Instance::new();
    assert!(c.load_state(&state_bytes(&state), 4096));
    let reloaded = state_json(&c.save_state());
    let editor: serde_json::Value =
        serde_json::from_str(reloaded["fields"]["editor"].as_str().unwrap()).unwrap();
    assert_eq!(editor["width"], 800);
    assert_eq!(editor["panel_open"], false);
    assert_eq!(editor["brush_radius"], 0.04);
    assert_eq!(editor["wall_radius"], 0.02);
}

#[test]
fn state_carries_its_version() {
    let state = state_json(&Instance::new().save_state());
    assert_eq!(state["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        state["fields"]["state-version"],
        dyeflow::params::STATE_VERSION.to_string()
    );
}

#[test]
fn damaged_settings_are_clamped_not_trusted() {
    let a = Instance::new();
    let mut state = state_json(&a.save_state());
    state["fields"]["settings"] =
        r#"{"sim_resolution": 99999999, "dye_scale": 0, "sim_rate_hz": -5, "aspect": "7:1"}"#
            .into();
    state["fields"]["editor"] = r#"{"width": 0, "height": 4000000000}"#.into();
    // An older state, from before the version field existed.
    state["fields"]
        .as_object_mut()
        .unwrap()
        .remove("state-version");
    let mut b = Instance::new();
    assert!(b.load_state(&state_bytes(&state), 4096));
    let reloaded = state_json(&b.save_state());
    let settings: serde_json::Value =
        serde_json::from_str(reloaded["fields"]["settings"].as_str().unwrap()).unwrap();
    assert_eq!(settings["sim_resolution"], 2048);
    assert_eq!(settings["dye_scale"], 1);
    assert_eq!(
        settings["sim_rate_hz"], 60,
        "an unreadable rate keeps the default"
    );
    assert_eq!(
        settings["aspect"], "16:9",
        "an unknown aspect keeps the default"
    );
    let editor: serde_json::Value =
        serde_json::from_str(reloaded["fields"]["editor"].as_str().unwrap()).unwrap();
    assert_eq!(editor["width"], 320);
    assert_eq!(editor["height"], 4320);
    // Migrated on load, so stamped with this version.
    assert_eq!(
        reloaded["fields"]["state-version"],
        dyeflow::params::STATE_VERSION.to_string()
    );
}

#[test]
fn a_corrupt_state_is_refused_and_loses_nothing() {
    let mut rng = rng(8);
    let mut plugin = Instance::new();
    randomise_params(&mut plugin, &mut rng);
    let before = plugin.save_state();
    let mut junk = before.clone();
    junk.truncate(before.len() / 2);
    let wrong_shape = state_bytes(&serde_json::json!({"params": 5}));
    let mut bad_length = before.clone();
    bad_length[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    for bad in [
        Vec::new(),
        b"\xff\xfe garbage".to_vec(),
        junk,
        wrong_shape,
        bad_length,
    ] {
        assert!(!plugin.load_state(&bad, 4096), "accepted a corrupt state");
        assert_eq!(
            plugin.save_state(),
            before,
            "a refused load changed the state"
        );
    }
}

#[test]
fn note_expressions_and_midi_reach_the_plugin_over_clap() {
    // The note port must accept CLAP notes and MIDI: a plugin without a note port would make
    // hosts drop these events before they reach it.
    use clap_sys::ext::note_ports::{CLAP_NOTE_DIALECT_CLAP, CLAP_NOTE_DIALECT_MIDI};
    let plugin = Instance::new();
    let ports = plugin.note_input_dialects();
    assert_eq!(ports.len(), 1, "one note input port");
    assert_ne!(ports[0] & CLAP_NOTE_DIALECT_CLAP, 0);
    assert_ne!(ports[0] & CLAP_NOTE_DIALECT_MIDI, 0);
}

#[test]
fn descriptor_has_the_stable_id_and_features() {
    let (id, features) = Instance::new().descriptor();
    assert_eq!(id, "app.dyeflow.dyeflow");
    for wanted in ["audio-effect", "analyzer", "stereo", "mono"] {
        assert!(
            features.iter().any(|f| f == wanted),
            "missing feature {wanted}: {features:?}"
        );
    }
}
