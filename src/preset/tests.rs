//! The preset reader's tests: every key, every bad value (a child of `preset`, so that
//! `preset.rs` holds the reader alone).

use super::*;
use crate::params::BackendChoice;

#[test]
fn a_preset_sets_parameters_and_settings() {
    let params = DyeflowParams::default();
    // The plugin's own format for two entries, plain values for the others.
    let json = br#"{"version":"0.1.0","params":{"visc":{"f32":120.0},"mapping":{"string":"circle"},
        "bypass":false,"p_iters":40,"from_the_future":1.0},
        "fields":{"settings":"{\"sim_resolution\":512,\"dye_scale\":1,\"aspect\":\"4:3\",\"backend\":\"cpu\",\"sim_rate_hz\":120}"}}"#;
    let report = apply(json, &params).unwrap();
    assert_eq!(report.unknown, vec!["from_the_future".to_owned()]);
    assert!((params.viscosity.value() - 120.0).abs() < 1e-3);
    assert_eq!(
        params.mapping_mode.value(),
        crate::mapping::MappingMode::Circle
    );
    assert_eq!(params.pressure_iterations.value(), 40);
    let s = params.settings();
    assert_eq!(
        (s.sim_resolution, s.dye_scale, s.backend),
        (512, 1, BackendChoice::Cpu)
    );
}

/// A preset can choose the fluid ("Fluid: Grid / Particles"); an unknown fluid is an error
/// that names the allowed ones.
#[test]
fn a_preset_chooses_the_fluid() {
    let params = DyeflowParams::default();
    for fluid in FluidChoice::ALL {
        let name = names_of(&[fluid]).remove(0);
        let json = format!(r#"{{"params":{{}},"fields":{{"settings":{{"fluid":"{name}"}}}}}}"#);
        assert!(apply(json.as_bytes(), &params).unwrap().unknown.is_empty());
        assert_eq!(params.settings().fluid, fluid, "{name}");
    }
    let bad = br#"{"params":{},"fields":{"settings":"{\"fluid\":\"plasma\"}"}}"#;
    let e = apply(bad, &params).unwrap_err().to_string();
    assert!(e.contains("grid, particles, liquid3d"), "{e}");
}

/// A preset's settings name only what they change: the rest stay as they were (the
/// grid, canvas and solver a user chose survive a preset that picks the fluid), through
/// `apply` and through `load` alike.
#[test]
fn a_preset_changes_only_the_settings_it_names() {
    let tuned = || {
        let params = DyeflowParams::default();
        let mut s = params.settings();
        s.sim_resolution = 512;
        s.aspect = Aspect::Square;
        s.backend = BackendChoice::Cpu;
        params.set_settings(s);
        params
    };
    let json = br#"{"params":{},"fields":{"settings":"{\"fluid\":\"liquid3d\"}"}}"#;
    let params = tuned();
    apply(json, &params).unwrap();
    let s = params.settings();
    assert_eq!(s.fluid, FluidChoice::Liquid3d);
    assert_eq!(
        (s.sim_resolution, s.aspect, s.backend),
        (512, Aspect::Square, BackendChoice::Cpu)
    );
    let params = tuned();
    load(json, &params).unwrap();
    let s = params.settings();
    assert_eq!(s.fluid, FluidChoice::Liquid3d);
    assert_eq!((s.sim_resolution, s.aspect), (512, Aspect::Square));
}

/// Every settings enum lists every variant, each named as projects write it.
#[test]
fn the_settings_enums_list_every_choice() {
    for (i, f) in FluidChoice::ALL.into_iter().enumerate() {
        assert_eq!(f.index(), i);
    }
    for (i, a) in Aspect::ALL.into_iter().enumerate() {
        assert_eq!(a.index(), i);
    }
    for (i, b) in BackendChoice::ALL.into_iter().enumerate() {
        assert_eq!(b.index(), i);
    }
    assert_eq!(
        names_of(&FluidChoice::ALL),
        ["grid", "particles", "liquid3d"]
    );
    assert_eq!(
        names_of(&Aspect::ALL),
        ["1:1", "4:3", "16:9", "9:16", "21:9"]
    );
    assert_eq!(names_of(&BackendChoice::ALL), ["auto", "gpu", "cpu"]);
}

#[test]
fn every_choice_of_every_enum_parameter_can_be_named() {
    let params = DyeflowParams::default();
    let mut enums = 0;
    for (id, ptr, _) in params.param_map() {
        if let ParamPtr::EnumParam(p) = ptr {
            enums += 1;
            // SAFETY: the pointer comes from `params`, alive for this test.
            let (inner, count) = unsafe { (&*p, (*p).len()) };
            let saved = inner.unmodulated_plain_id().expect("stable ids");
            assert!(enum_index(&id, saved).is_some(), "{id}: '{saved}'");
            assert!(count > 1, "{id}");
        }
    }
    assert_eq!(enums, 6, "a new enum parameter needs a line in enum_index");
}

#[test]
fn a_saved_preset_loads_back_the_same_values() {
    let a = DyeflowParams::default();
    let tuned = br#"{"params": {"visc": 350.0, "mapping": "circle", "colour": "velocity",
        "p_iters": 60, "pulse": true, "hue": 0.25}}"#;
    apply(tuned, &a).unwrap();
    let json = to_json(&a);
    let b = DyeflowParams::default();
    assert!(apply(json.as_bytes(), &b).unwrap().unknown.is_empty());
    let values = |p: &DyeflowParams| -> Vec<(String, f32)> {
        p.param_map()
            .into_iter()
            // SAFETY: the pointers come from `p`, alive for this closure.
            .map(|(id, ptr, _)| (id, unsafe { ptr.unmodulated_normalized_value() }))
            .collect()
    };
    for ((id, x), (_, y)) in values(&a).into_iter().zip(values(&b)) {
        // A plain value goes through one unnormalize/normalize round trip: an ulp or so.
        assert!((x - y).abs() < 1e-5, "{id}: {x} then {y}");
    }
    assert!(json.contains(r#""string": "circle""#), "{json}");
}

#[test]
fn bad_presets_say_why_and_change_nothing() {
    let params = DyeflowParams::default();
    let visc = params.viscosity.value();
    for (json, needle) in [
        (&b"{not json"[..], "invalid JSON"),
        (br#"[1, 2]"#, "not a Dyeflow preset"),
        (br#"{"version":"1"}"#, "no \"params\""),
        (
            br#"{"version":"1","params":{"visc":1e9},"fields":{}}"#,
            "outside its range",
        ),
        (
            br#"{"version":"1","params":{"visc":5.0,"mapping":"spiral"},"fields":{}}"#,
            "no choice 'spiral'",
        ),
        (
            br#"{"version":"1","params":{"bypass":3.0},"fields":{}}"#,
            "wrong type",
        ),
        (
            br#"{"params":{"p_iters":1000000000000}}"#,
            "'p_iters' is 1000000000000, outside its range 2 to 200",
        ),
        // Finite, only too large for a parameter's f32: out of range, not "not finite".
        (
            br#"{"params":{"visc":1e308}}"#,
            "'visc' is 1e+308, outside its range 0 to 10000",
        ),
        (
            br#"{"params":{"visc":{"f32":-1e308}}}"#,
            "'visc' is -1e+308, outside its range 0 to 10000",
        ),
        (
            br#"{"params":{},"fields":{"settings":{"sim_resolution":99999}}}"#,
            "settings field 'sim_resolution' is 99999; use one of 128, 256, 512, 1024, 2048",
        ),
        (
            br#"{"params":{},"fields":{"settings":"{\"dye_scale\":99}"}}"#,
            "settings field 'dye_scale' is 99; use one of 1, 2, 4",
        ),
        (
            br#"{"params":{},"fields":{"settings":{"sim_rate_hz":100000}}}"#,
            "'sim_rate_hz' is 100000; use one of 30, 60, 120, 144",
        ),
        (
            br#"{"params":{},"fields":{"settings":{"sim_resolution":"big"}}}"#,
            "'sim_resolution' is \"big\"",
        ),
        (
            br#"{"params":{},"fields":{"settings":{"backend":"tpu"}}}"#,
            "'backend' is \"tpu\"; use one of auto, gpu, cpu",
        ),
        (
            br#"{"params":{},"fields":{"settings":[1,2]}}"#,
            "\"settings\" are not a JSON object",
        ),
    ] {
        let err = apply(json, &params).unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
        assert_eq!(
            params.viscosity.value(),
            visc,
            "changed by a bad preset: {err}"
        );
    }
    assert_eq!(
        params.mapping_mode.value(),
        crate::mapping::MappingMode::Rows,
        "the default, unchanged"
    );
    assert_eq!(params.settings(), Settings::default(), "settings changed");
}

/// A preset carries the layout and the drawing; one without obstacles leaves them; a bad
/// one says why and changes nothing.
#[test]
fn presets_carry_the_obstacles() {
    let a = DyeflowParams::default();
    let mut drawn = Mask::layout(Layout::Ring, 48, 27);
    drawn.paint_disc([0.4, 0.6], 0.08, true);
    let saved = ObstacleSettings {
        layout: Layout::Ring,
        mask: drawn.encode(),
    };
    apply(br#"{"params": {"obst_look": "outline"}}"#, &a).unwrap();
    a.obstacles.set(saved.clone());
    let json = to_json(&a);
    let b = DyeflowParams::default();
    let report = apply(json.as_bytes(), &b).unwrap();
    assert!(report.obstacles && report.unknown.is_empty(), "{report:?}");
    assert_eq!(b.obstacles.get().0, saved);
    assert_eq!(b.obstacle_style.value(), ObstacleStyle::Outline);
    assert_eq!(
        resolve(json.as_bytes()).unwrap().obstacles,
        Some(saved.clone())
    );

    // Written by hand, inline; a preset without obstacles (a factory one) leaves them.
    let c = DyeflowParams::default();
    let hand = br#"{"params": {}, "fields": {"obstacles": {"layout": "Maze", "glow": 1}}}"#;
    let report = apply(hand, &c).unwrap();
    assert_eq!(report.unknown, vec!["obstacles.glow".to_owned()]);
    assert_eq!(c.obstacles.get().0, ObstacleSettings::layout(Layout::Maze));
    load(crate::preset::FACTORY_PRESETS[0].json().as_bytes(), &c).unwrap();
    assert_eq!(c.obstacles.get().0.layout, Layout::Maze);
    assert_eq!(resolve(br#"{"params": {}}"#).unwrap().obstacles, None);

    for (json, needle) in [
        (
            &br#"{"params":{},"fields":{"obstacles":{"layout":"spiral"}}}"#[..],
            "'obstacles.layout' is \"spiral\"; use one of none, disc, pillars, maze, ring",
        ),
        (
            br#"{"params":{},"fields":{"obstacles":{"mask":"4 2 3"}}}"#,
            "obstacle \"mask\" does not read",
        ),
        (
            br#"{"params":{},"fields":{"obstacles":[1]}}"#,
            "\"obstacles\" are not a JSON object",
        ),
    ] {
        let err = apply(json, &c).unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
        assert_eq!(c.obstacles.get().0.layout, Layout::Maze, "changed by {err}");
    }
}

/// A saved preset says which layout it is written in, so its drawing (here of another
/// shape than its grid) reads back as saved, not migrated as an old one.
#[test]
fn a_saved_preset_is_stamped_and_keeps_its_drawing() {
    let a = DyeflowParams::default();
    let mut square = Mask::empty(64, 64);
    square.paint_disc([0.5, 0.5], 0.3, true);
    a.obstacles.set(ObstacleSettings {
        layout: Layout::None,
        mask: square.encode(),
    });
    let json = to_json(&a);
    assert!(
        json.contains(&format!(r#""state-version": "{STATE_VERSION}""#)),
        "{json}"
    );
    let b = DyeflowParams::default();
    let report = apply(json.as_bytes(), &b).unwrap();
    assert_eq!(report.newer, None);
    assert_eq!(b.obstacles.get().0.mask, square.encode());
}

/// A state version that is no whole number from 1 is refused, saying what it is; a newer
/// one than this Dyeflow knows loads with a note; none, or a known one, without.
#[test]
fn state_versions_are_read_or_refused_and_newer_ones_noted() {
    let preset = |version: &str| {
        format!(r#"{{"params": {{"visc": 12.0}}, "fields": {{"state-version": {version}}}}}"#)
    };
    let p = DyeflowParams::default();
    for bad in ["\"-1e99\"", "\"9.5\"", "\"0\"", "\"nine\"", "-3", "[9]"] {
        let e = apply(preset(bad).as_bytes(), &p).unwrap_err().to_string();
        let shown = bad.trim_matches('"');
        assert!(
            e.contains(&format!("\"state-version\" is {shown}"))
                && e.contains("not a state version"),
            "{bad}: {e}"
        );
    }
    assert_eq!(
        p.viscosity.value(),
        DyeflowParams::default().viscosity.value()
    );
    let report = apply(preset("\"999\"").as_bytes(), &p).unwrap();
    assert_eq!(report.newer, Some(999));
    let note = report.version_note().unwrap();
    assert!(
        note.starts_with("made by a newer Dyeflow: its state version is 999"),
        "{note}"
    );
    assert!(
        (p.viscosity.value() - 12.0).abs() < 1e-3,
        "loaded all the same"
    );
    for fine in ["\"1\"", "7", &format!("\"{STATE_VERSION}\"")] {
        let report = apply(preset(fine).as_bytes(), &p).unwrap();
        assert_eq!(report.version_note(), None, "{fine}");
    }
    let report = apply(br#"{"params": {}}"#, &p).unwrap();
    assert_eq!(report.newer, None);
}

/// A preset from before state version 10 with a drawing of another shape than its grid
/// gets it redrawn as it showed (stretched over the preset's grid); a current one keeps it
/// (fitted wherever it shows).
#[test]
fn an_older_presets_drawing_looks_as_it_did() {
    let mut square = Mask::empty(64, 64);
    square.paint_disc([0.5, 0.5], 0.3, true);
    let preset = |version: &str| {
        serde_json::json!({
            "params": {},
            "fields": {
                "state-version": version,
                "obstacles": {"layout": "Disc", "mask": square.encode()},
            }
        })
        .to_string()
    };
    let p = DyeflowParams::default();
    apply(preset("9").as_bytes(), &p).unwrap();
    let (w, h) = Settings::default().sim_grid();
    let got = p.obstacles.get().0;
    assert_eq!(got.layout, Layout::Disc);
    assert_eq!(Mask::decode(&got.mask).unwrap(), square.stretched(w, h));
    apply(preset(&STATE_VERSION.to_string()).as_bytes(), &p).unwrap();
    assert_eq!(p.obstacles.get().0.mask, square.encode());
}

/// A FIFO is refused without waiting for a writer (its plain open would block), and so is
/// a directory; a regular file opens.
#[cfg(unix)]
#[test]
fn only_regular_files_open() {
    use std::os::unix::ffi::OsStrExt;
    let dir = std::env::temp_dir().join(format!("dyeflow-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("pipe.json");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid, NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (tx, rx) = std::sync::mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(read_file(&path).map_err(|e| (e.kind(), e.to_string())));
    });
    let answer = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("opening a FIFO blocked");
    let (kind, text) = answer.expect_err("a FIFO is not a preset");
    assert_eq!(kind, std::io::ErrorKind::InvalidInput);
    assert!(text.contains("not a regular file"), "{text}");
    assert_eq!(
        open_regular(&dir).map(drop).unwrap_err().kind(),
        std::io::ErrorKind::IsADirectory
    );
    let file = dir.join("p.json");
    std::fs::write(&file, b"{}").unwrap();
    assert_eq!(read_file(&file).unwrap(), b"{}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_byte_order_mark_and_unknown_settings_are_fine() {
    let params = DyeflowParams::default();
    let json = b"\xEF\xBB\xBF{\"params\": {\"visc\": 12.0}, \"fields\": {\"settings\": {\"sim_resolution\": 512, \"glow\": 3}}}";
    let report = apply(json, &params).unwrap();
    assert_eq!(report.unknown, vec!["settings.glow".to_owned()]);
    assert!((params.viscosity.value() - 12.0).abs() < 1e-3);
    assert_eq!(params.settings().sim_resolution, 512);
}

/// A preset carries its modulation: written with the rest, read back into the
/// parameters, kept as it was through a load as a whole (and cleared by a whole preset
/// without any); one that does not read is
/// refused and changes nothing; a project's state keeps it through the migration, with bad
/// values brought within bounds.
#[test]
fn modulation_travels_in_presets_and_states() {
    use crate::params::modulation::{Route, Source};
    let p = DyeflowParams::default();
    *p.modulation.write() = Modulation {
        routes: vec![Route {
            source: Source::Lfo(1),
            target: "hue".into(),
            depth: -0.4,
        }],
        ..Default::default()
    };
    let json = to_json(&p);
    assert!(json.contains("lfo2"), "{json}");
    let q = DyeflowParams::default();
    let report = apply(json.as_bytes(), &q).expect("applies");
    assert!(report.modulation);
    assert_eq!(*q.modulation.read(), *p.modulation.read());
    let r = DyeflowParams::default();
    load(json.as_bytes(), &r).expect("loads");
    assert_eq!(*r.modulation.read(), *p.modulation.read());
    // A preset without modulation: applied as a patch it leaves the routes; loaded as a
    // whole (every other parameter at its default) it leaves none.
    let plain = br#"{"params": {"vort": 0.5}}"#;
    apply(plain, &r).expect("applies");
    assert_eq!(*r.modulation.read(), *p.modulation.read());
    r.modulation.write().learn(21, "vort");
    load(plain, &r).expect("loads");
    assert!(r.modulation.read().routes.is_empty());
    assert_eq!(
        r.modulation.read().learned_cc("vort"),
        Some(21),
        "a preset does not erase the controller's mapping"
    );
    r.modulation.write().forget("vort");
    load(json.as_bytes(), &r).expect("loads");
    let bad = br#"{"params": {}, "fields": {"modulation": "{\"routes\": [{\"source\": \"tempo\", \"target\": \"hue\", \"depth\": 1}]}"}}"#;
    let before = r.modulation.read().clone();
    assert!(matches!(apply(bad, &r), Err(PresetError::BadModulation(_))));
    assert_eq!(*r.modulation.read(), before, "nothing changed");
    // A project's state: kept, sanitised.
    let mut state = nice_plug::plugin::PluginState {
        version: String::new(),
        params: Default::default(),
        fields: [(
            MODULATION_KEY.to_owned(),
            r#"{"routes": [{"source": "cc7", "target": "vort", "depth": 5}]}"#.to_owned(),
        )]
        .into_iter()
        .collect(),
    };
    crate::params::migrate_state(&mut state);
    let m: Modulation = serde_json::from_str(&state.fields[MODULATION_KEY]).unwrap();
    assert_eq!(m.routes.len(), 1);
    assert_eq!(
        (m.routes[0].source, m.routes[0].depth),
        (Source::Cc(7), 1.0)
    );
}

/// A preset's modulation out of range loads clamped, with a note per value changed or item
/// dropped (the check a project's state goes through): a depth of 1e39 saturates at 1
/// rather than dropping its route. One that is within range loads without notes.
#[test]
fn a_presets_modulation_is_clamped_with_notes() {
    let modulation = r#"{"lfos": [{"sync": false, "hz": -5}, {"beats": 1e9}],
        "routes": [{"source": "lfo1", "target": "vort", "depth": 1e39},
            {"source": "lfo2", "target": "no_such", "depth": 0.5}],
        "learned": [{"cc": 120, "target": "hue"}, {"cc": 21, "target": "bloom"}]}"#;
    let preset = serde_json::json!({"params": {}, "fields": {MODULATION_KEY: modulation}});
    let p = DyeflowParams::default();
    let report = apply(preset.to_string().as_bytes(), &p).expect("loads, clamped");
    assert!(report.modulation);
    assert_eq!(
        report.modulation_notes,
        [
            "LFO 1: hz -5 clamped to 0.01",
            "LFO 2: beats 1e9 clamped to 64",
            "route 1: depth 1e39 clamped to 1",
            "route 2: \"no_such\" is not a parameter a route can move; dropped",
            "learned CC 1: cc 120 cannot be learned (0 to 119; 120 to 127 are MIDI's channel \
             mode messages); dropped",
        ]
    );
    let m = p.modulation.read().clone();
    assert_eq!(m.lfos[0].hz, crate::params::modulation::HZ.0);
    assert_eq!(m.lfos[1].beats, crate::params::modulation::BEATS.1);
    assert_eq!(m.routes.len(), 1);
    assert_eq!(
        (m.routes[0].target.as_str(), m.routes[0].depth),
        ("vort", 1.0)
    );
    assert_eq!(m.learned_cc("bloom"), Some(21));
    assert_eq!(m.learned.len(), 1);
    // Loaded as a whole, the same; saved and loaded again, nothing left to note.
    let q = DyeflowParams::default();
    let report = load(preset.to_string().as_bytes(), &q).expect("loads");
    assert_eq!(report.modulation_notes.len(), 5);
    assert_eq!(*q.modulation.read(), m);
    let report = apply(to_json(&q).as_bytes(), &p).expect("applies");
    assert_eq!(report.modulation_notes, Vec::<String>::new());
    assert_eq!(*p.modulation.read(), m);
}
