//! Obstacles in the saved state (version 7): old states load with none, current ones keep
//! theirs, damaged ones open with what reads, and the field round-trips through nice-plug's
//! persisted fields.

use super::*;
use crate::fluid::mask::{Layout, Mask};

fn state(version: Option<u32>, obstacles: Option<&str>) -> PluginState {
    let mut fields = std::collections::BTreeMap::new();
    if let Some(v) = version {
        fields.insert(STATE_VERSION_KEY.to_owned(), v.to_string());
    }
    if let Some(o) = obstacles {
        fields.insert(OBSTACLES_KEY.to_owned(), o.to_owned());
    }
    PluginState {
        version: String::new(),
        params: std::collections::BTreeMap::new(),
        fields,
    }
}

fn obstacles_of(s: &PluginState) -> ObstacleSettings {
    serde_json::from_str(&s.fields[OBSTACLES_KEY]).expect("migrate_state writes valid JSON")
}

fn drawing() -> String {
    let mut m = Mask::layout(Layout::Pillars, 40, 24);
    m.paint_disc([0.3, 0.3], 0.1, true);
    m.encode()
}

#[test]
fn old_states_load_with_no_obstacles() {
    for version in [None, Some(1), Some(5), Some(6)] {
        let mut s = state(version, None);
        migrate_state(&mut s);
        assert_eq!(obstacles_of(&s), ObstacleSettings::default(), "{version:?}");
        assert_eq!(s.fields[STATE_VERSION_KEY], STATE_VERSION.to_string());
    }
    // One that names obstacles anyway (a preset written by hand, with no version) keeps them.
    let mut s = state(None, Some(r#"{"layout":"pillars"}"#));
    migrate_state(&mut s);
    assert_eq!(obstacles_of(&s), ObstacleSettings::layout(Layout::Pillars));
    // Nor a pillar channel: the parameter's default is off, so a state that names none
    // plays every channel as before.
    let p = DyeflowParams::default();
    assert_eq!(p.pillar_channel.value(), 0);
    assert_eq!(p.obstacle_style.value(), ObstacleStyle::Fill);
    assert!(
        p.param_map()
            .iter()
            .any(|(id, ..)| id == "pillar_ch" || id == "obst_look")
    );
}

#[test]
fn current_states_keep_their_obstacles_and_damage_is_dropped() {
    let drawn = drawing();
    let json = serde_json::to_string(&ObstacleSettings {
        layout: Layout::Pillars,
        mask: drawn.clone(),
    })
    .unwrap();
    let mut s = state(Some(STATE_VERSION), Some(&json));
    migrate_state(&mut s);
    assert_eq!(obstacles_of(&s).mask, drawn);
    assert_eq!(obstacles_of(&s).layout, Layout::Pillars);

    // A drawing that does not decode: the layout stays, the drawing goes.
    let bad = r#"{"layout":"ring","mask":"40 24 5 5"}"#;
    let mut s = state(Some(STATE_VERSION), Some(bad));
    migrate_state(&mut s);
    assert_eq!(obstacles_of(&s), ObstacleSettings::layout(Layout::Ring));

    // An unknown layout keeps the drawing; garbage gives none.
    let unknown = format!(r#"{{"layout":"spiral","mask":"{drawn}"}}"#);
    let mut s = state(Some(STATE_VERSION), Some(&unknown));
    migrate_state(&mut s);
    assert_eq!(obstacles_of(&s).layout, Layout::None);
    assert_eq!(obstacles_of(&s).mask, drawn);
    for garbage in ["not json", "[1,2]", r#"{"mask": 7}"#, ""] {
        let mut s = state(Some(STATE_VERSION), Some(garbage));
        migrate_state(&mut s);
        assert_eq!(obstacles_of(&s), ObstacleSettings::default(), "{garbage}");
    }
    // A state without the field gets none.
    let mut s = state(Some(STATE_VERSION), None);
    migrate_state(&mut s);
    assert_eq!(obstacles_of(&s), ObstacleSettings::default());
}

/// State version 10: a drawing on a grid of another shape is fitted, no longer stretched. An
/// older project's drawing of another shape than its grid is redrawn there as it showed
/// (stretched), so it looks as it did; one of its grid's shape, and every current one, is
/// kept as saved.
#[test]
fn older_drawings_of_another_shape_are_redrawn_as_they_showed() {
    let mut square = Mask::empty(64, 64);
    square.paint_disc([0.5, 0.5], 0.3, true);
    let json = |mask: &Mask| {
        serde_json::to_string(&ObstacleSettings {
            layout: Layout::None,
            mask: mask.encode(),
        })
        .unwrap()
    };
    // The default settings: 16:9 at 256 rows.
    let (w, h) = Settings::default().sim_grid();
    for version in [None, Some(7), Some(9)] {
        let mut s = state(version, Some(&json(&square)));
        migrate_state(&mut s);
        let migrated = Mask::decode(&obstacles_of(&s).mask).unwrap();
        assert_eq!(migrated, square.stretched(w, h), "{version:?}");
        // And it shows on the project's grid as the old version showed it.
        assert_eq!(migrated.resampled(w, h), square.stretched(w, h));
    }
    // Its settings' grid: 1:1 at 128 rows, where the square drawing fits as it is.
    let mut s = state(Some(9), Some(&json(&square)));
    s.fields.insert(
        SETTINGS_KEY.to_owned(),
        r#"{"aspect":"1:1","sim_resolution":128}"#.to_owned(),
    );
    migrate_state(&mut s);
    assert_eq!(obstacles_of(&s).mask, square.encode());
    // Of the grid's shape at another resolution: kept.
    let wide = Mask::layout(Layout::Ring, 910, 512);
    let mut s = state(Some(9), Some(&json(&wide)));
    migrate_state(&mut s);
    assert_eq!(obstacles_of(&s).mask, wide.encode());
    // A current state keeps its square drawing, fitted wherever it shows.
    let mut s = state(Some(STATE_VERSION), Some(&json(&square)));
    migrate_state(&mut s);
    assert_eq!(obstacles_of(&s).mask, square.encode());
}

/// Through nice-plug's persisted fields, as a host saves and restores a project: the
/// drawing comes back bit for bit, and the load moves the serial the engine watches.
#[test]
fn obstacles_round_trip_through_the_persisted_fields() {
    let a = DyeflowParams::default();
    let saved = ObstacleSettings {
        layout: Layout::Maze,
        mask: drawing(),
    };
    a.obstacles.set(saved.clone());
    let fields = a.serialize_fields();
    assert!(fields.contains_key(OBSTACLES_KEY));
    let mut s = PluginState {
        version: String::new(),
        params: Default::default(),
        fields,
    };
    migrate_state(&mut s);
    let b = DyeflowParams::default();
    let before = b.obstacles.serial();
    b.deserialize_fields(&s.fields);
    let (got, serial) = b.obstacles.get();
    assert_eq!(got, saved);
    assert_ne!(serial, before);
}
