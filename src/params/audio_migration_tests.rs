//! The audio bands and colour by pitch (state version 6) and adaptive dye (12): older states
//! load with the full-band audio path of old and without adaptive dye; new instances paint
//! with bands and pitch, and adapt their dye.

use super::*;

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

fn amount(state: &PluginState, id: &str) -> Option<f32> {
    match state.params.get(id) {
        Some(ParamValue::F32(v)) => Some(*v),
        Some(other) => panic!("{id}: {other:?}"),
        None => None,
    }
}

#[test]
fn states_from_before_the_bands_load_with_the_full_band_audio_of_old() {
    // Every older version (no version field: 1) gets all four amounts at 0, keeps its other
    // values, and is stamped current.
    for version in [None, Some(1), Some(2), Some(3), Some(4), Some(5)] {
        let mut s = state(version, &[("react", ParamValue::F32(1.5))]);
        migrate_state(&mut s);
        for id in AUDIO_AMOUNT_IDS {
            assert_eq!(amount(&s, id), Some(0.0), "version {version:?}: {id}");
        }
        assert!(matches!(s.params["react"], ParamValue::F32(v) if v == 1.5));
        assert_eq!(s.fields[STATE_VERSION_KEY], STATE_VERSION.to_string());
    }
    // An old state that names an amount keeps it; a current one without them gets defaults.
    let mut s = state(Some(5), &[("mid_amt", ParamValue::F32(0.7))]);
    migrate_state(&mut s);
    assert_eq!(amount(&s, "mid_amt"), Some(0.7));
    assert_eq!(amount(&s, "low_amt"), Some(0.0));
    let mut s = state(Some(STATE_VERSION), &[]);
    migrate_state(&mut s);
    assert!(AUDIO_AMOUNT_IDS.iter().all(|id| amount(&s, id).is_none()));
}

#[test]
fn new_instances_paint_with_bands_and_pitch_under_stable_ids() {
    let p = DyeflowParams::default();
    let ids: Vec<String> = p.param_map().into_iter().map(|(id, ..)| id).collect();
    for id in AUDIO_AMOUNT_IDS {
        assert!(ids.iter().any(|i| i == id), "{id} is a parameter");
    }
    for (param, name) in [
        (&p.low_amount, "Low band"),
        (&p.mid_amount, "Mid band"),
        (&p.high_amount, "High band"),
        (&p.chroma_amount, "Pitch colour"),
    ] {
        assert_eq!(param.value(), 1.0, "{name}");
        assert_eq!(param.name(), name);
    }
    // The migrated amounts of 0 put the mapping on the full-band path of old.
    let cfg = crate::mapping::MappingConfig {
        bands: [0.0; 3],
        chroma: 0.0,
        ..Default::default()
    };
    assert_eq!(cfg.legacy_audio(), 1.0);
    assert_eq!(crate::mapping::MappingConfig::default().legacy_audio(), 0.0);
}

/// Adaptive dye (state version 12): an older state loads with it off and keeps its look; a
/// value it names is kept; a current state without it gets the default, on.
#[test]
fn states_from_before_adaptive_dye_load_without_it() {
    for version in [None, Some(1), Some(8), Some(11)] {
        let mut s = state(version, &[]);
        migrate_state(&mut s);
        assert_eq!(
            amount(&s, ADAPTIVE_DYE_ID),
            Some(0.0),
            "version {version:?}"
        );
    }
    let mut s = state(Some(11), &[(ADAPTIVE_DYE_ID, ParamValue::F32(0.4))]);
    migrate_state(&mut s);
    assert_eq!(amount(&s, ADAPTIVE_DYE_ID), Some(0.4));
    let mut s = state(Some(STATE_VERSION), &[]);
    migrate_state(&mut s);
    assert_eq!(amount(&s, ADAPTIVE_DYE_ID), None);
    let p = DyeflowParams::default();
    assert!(p.param_map().iter().any(|(id, ..)| id == ADAPTIVE_DYE_ID));
    assert_eq!(p.adaptive_dye.default_plain_value(), 1.0);
}
