use super::*;

#[test]
fn nearest_snaps_and_breaks_ties_low() {
    assert_eq!(nearest(&SIM_RESOLUTIONS_CELLS, 0), 128);
    assert_eq!(nearest(&SIM_RESOLUTIONS_CELLS, 300), 256);
    assert_eq!(nearest(&SIM_RESOLUTIONS_CELLS, 384), 256);
    assert_eq!(nearest(&SIM_RESOLUTIONS_CELLS, u32::MAX), 2048);
}

#[test]
fn sim_grid_follows_aspect() {
    let s = Settings {
        sim_resolution: 256,
        aspect: Aspect::Wide,
        ..Settings::default()
    };
    // 256 * 16 / 9 = 455.1 -> 455.
    assert_eq!(s.sim_grid(), (455, 256));
}

#[test]
fn adaptive_formatter_round_trips_text() {
    let f = v2s_adaptive();
    let p = s2v_number();
    for v in [
        0.0, 0.000_123, 0.0456, 0.789, 4.56, 78.9, 789.0, 10_000.0, -0.000_01, 99.999_99,
        100.000_01, 0.999_999, 9.999_9, 0.099_999,
    ] {
        let s = f(v);
        let back = p(&s).expect("parses");
        assert_eq!(f(back), s, "{v} -> {s} -> {back}");
    }
    assert_eq!(f(99.999_99), "100");
    assert_eq!(f(0.999_999), "1.00");
    assert_eq!(f(0.000_001_23), "0.000001");
    assert_eq!(p(" 12.5 mm²/s"), Some(12.5));
    assert_eq!(p("80 %"), Some(80.0));
    assert_eq!(p("abc"), None);
    assert_eq!(p("inf"), None);
}

/// "Fluid: Grid / Particles" comes back with the project; a state from before it existed
/// (no field) and a broken value load as the grid, today's behaviour.
#[test]
fn the_fluid_choice_round_trips_and_defaults_to_the_grid() {
    let particles = Settings {
        fluid: FluidChoice::Particles,
        ..Settings::default()
    };
    let json = serde_json::to_string(&particles).expect("serialises");
    assert!(json.contains(r#""fluid":"particles""#), "{json}");
    assert_eq!(parse_lenient::<Settings>(Some(&json)), particles);
    let old = r#"{"sim_resolution": 256, "dye_scale": 2, "backend": "auto"}"#.to_owned();
    assert_eq!(
        parse_lenient::<Settings>(Some(&old)).fluid,
        FluidChoice::Grid
    );
    let broken = r#"{"sim_resolution": 256, "fluid": "plasma"}"#.to_owned();
    let s = parse_lenient::<Settings>(Some(&broken));
    assert_eq!((s.fluid, s.sim_resolution), (FluidChoice::Grid, 256));
}

#[test]
fn lenient_parse_keeps_good_fields() {
    let json = r#"{"sim_resolution": 512, "dye_scale": "four", "backend": "cpu"}"#.to_owned();
    let s: Settings = parse_lenient(Some(&json));
    assert_eq!(s.sim_resolution, 512);
    assert_eq!(s.dye_scale, Settings::default().dye_scale);
    assert_eq!(s.backend, BackendChoice::Cpu);
    let garbage = "not json".to_owned();
    assert_eq!(
        parse_lenient::<Settings>(Some(&garbage)),
        Settings::default()
    );
}

/// A state from before the drum channel (version 1, or no version at all) loads with drums
/// off, as it played; a new instance listens to channel 10.
#[test]
fn old_states_load_with_drums_off_new_instances_on_channel_10() {
    let fresh = DyeflowParams::default();
    assert_eq!(fresh.drum_channel.value(), 10);
    assert!(
        fresh
            .param_map()
            .iter()
            .any(|(id, ..)| id == DRUM_CHANNEL_ID)
    );
    let drum_channel = |s: &PluginState| match s.params.get(DRUM_CHANNEL_ID) {
        Some(ParamValue::I32(c)) => Some(*c),
        Some(other) => panic!("{other:?}"),
        None => None,
    };
    let state = |version: Option<u32>, drums: Option<i32>| {
        let mut params = std::collections::BTreeMap::new();
        params.insert("visc".to_owned(), ParamValue::F32(80.0));
        if let Some(c) = drums {
            params.insert(DRUM_CHANNEL_ID.to_owned(), ParamValue::I32(c));
        }
        let mut fields = std::collections::BTreeMap::new();
        if let Some(v) = version {
            fields.insert(STATE_VERSION_KEY.to_owned(), v.to_string());
        }
        PluginState {
            version: "0.1.0".to_owned(),
            params,
            fields,
        }
    };
    for version in [None, Some(1)] {
        let mut s = state(version, None);
        migrate_state(&mut s);
        assert_eq!(drum_channel(&s), Some(0), "version {version:?}: drums off");
        assert_eq!(s.fields[STATE_VERSION_KEY], STATE_VERSION.to_string());
        assert!(matches!(s.params["visc"], ParamValue::F32(v) if v == 80.0));
    }
    // A current state keeps the channel it names; one that names none keeps the default.
    let mut s = state(Some(STATE_VERSION), Some(4));
    migrate_state(&mut s);
    assert_eq!(drum_channel(&s), Some(4));
    let mut s = state(Some(STATE_VERSION), None);
    migrate_state(&mut s);
    assert_eq!(drum_channel(&s), None);
}

#[test]
fn drum_channel_text_round_trips() {
    for c in 0..=16 {
        let text = v2s_drum_channel(c);
        assert_eq!(s2v_drum_channel(&text), Some(c), "{text}");
    }
    assert_eq!(v2s_drum_channel(0), "Off");
    assert_eq!(v2s_drum_channel(10), "10");
    assert_eq!(s2v_drum_channel(" none "), Some(0));
    assert_eq!(s2v_drum_channel("Ch 10"), Some(10));
    assert_eq!(s2v_drum_channel("drums"), None);
}

fn state(version: Option<u32>, params: &[(&str, ParamValue)]) -> PluginState {
    PluginState {
        version: String::new(),
        params: params
            .iter()
            .map(|(id, v)| ((*id).to_owned(), v.clone()))
            .collect(),
        fields: version
            .map(|v| (STATE_VERSION_KEY.to_owned(), v.to_string()))
            .into_iter()
            .collect(),
    }
}

/// The tone mode's id in `state`, if it names one.
fn tone_of(state: &PluginState) -> Option<&str> {
    match state.params.get(TONE_MODE_ID) {
        Some(ParamValue::String(id)) => Some(id),
        _ => None,
    }
}

/// States from before rows mode (version 1, no version, or 3) that name no mapping load
/// with the keyboard they were made with; one that names a mapping keeps it; a current
/// state without one (and a new instance) gets rows.
#[test]
fn states_from_before_rows_mode_keep_the_keyboard() {
    let mapping_of = |s: &PluginState| match s.params.get(MAPPING_MODE_ID) {
        Some(ParamValue::String(id)) => Some(id.clone()),
        _ => None,
    };
    for version in [None, Some(1), Some(2), Some(3), Some(4)] {
        let mut s = state(version, &[("visc", ParamValue::F32(80.0))]);
        migrate_state(&mut s);
        assert_eq!(mapping_of(&s).as_deref(), Some("keyboard"), "{version:?}");
        assert_eq!(s.fields[STATE_VERSION_KEY], STATE_VERSION.to_string());
    }
    let circle = ParamValue::String("circle".to_owned());
    let mut s = state(Some(1), &[(MAPPING_MODE_ID, circle)]);
    migrate_state(&mut s);
    assert_eq!(mapping_of(&s).as_deref(), Some("circle"));
    let mut s = state(Some(STATE_VERSION), &[]);
    migrate_state(&mut s);
    assert_eq!(mapping_of(&s), None);
    let p = DyeflowParams::default();
    assert!(p.param_map().iter().any(|(id, ..)| id == MAPPING_MODE_ID));
    assert_eq!(p.mapping_mode.value(), MappingMode::Rows);
    assert_eq!(
        MappingMode::ids(),
        Some(["keyboard", "circle", "rows"].as_slice())
    );
}

#[test]
fn states_from_before_the_display_pipeline_load_the_legacy_tone() {
    // Version 1 (no version field) and version 2: the legacy tone, stamped current.
    for version in [None, Some(1), Some(2)] {
        let mut s = state(version, &[("bright", ParamValue::F32(1.5))]);
        migrate_state(&mut s);
        assert_eq!(tone_of(&s), Some("legacy"), "version {version:?}");
        assert!(matches!(s.params["bright"], ParamValue::F32(1.5)));
        assert_eq!(s.fields[STATE_VERSION_KEY], STATE_VERSION.to_string());
    }
    // An old state that names a tone keeps it; a current one without it gets the default.
    let filmic = ParamValue::String("filmic".to_owned());
    let mut s = state(Some(2), &[(TONE_MODE_ID, filmic)]);
    migrate_state(&mut s);
    assert_eq!(tone_of(&s), Some("filmic"));
    let mut s = state(Some(STATE_VERSION), &[]);
    migrate_state(&mut s);
    assert_eq!(tone_of(&s), None);
    // The id written is the parameter's, and a new instance starts filmic.
    let p = DyeflowParams::default();
    assert!(p.param_map().iter().any(|(id, ..)| id == TONE_MODE_ID));
    assert_eq!(p.tone_mode.value(), ToneMode::Filmic);
}
