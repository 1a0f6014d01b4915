//! The output window in the saved state: it round-trips through nice-plug's persisted fields,
//! a project without it (saved before it existed) loads with it closed even into an instance
//! that had it open, and a damaged one loads what reads.

use super::*;

fn state_with(output: Option<&str>) -> PluginState {
    let mut fields = std::collections::BTreeMap::new();
    fields.insert(STATE_VERSION_KEY.to_owned(), STATE_VERSION.to_string());
    if let Some(o) = output {
        fields.insert(OUTPUT_KEY.to_owned(), o.to_owned());
    }
    PluginState {
        version: String::new(),
        params: std::collections::BTreeMap::new(),
        fields,
    }
}

fn open_on_b() -> OutputSettings {
    OutputSettings {
        open: true,
        placement: Placement {
            monitor: "HDMI-1".into(),
            fullscreen: true,
            width: 1024,
            height: 600,
        },
    }
}

#[test]
fn the_output_window_round_trips_through_the_persisted_fields() {
    let a = DyeflowParams::default();
    a.set_output(open_on_b());
    let mut s = PluginState {
        version: String::new(),
        params: Default::default(),
        fields: a.serialize_fields(),
    };
    migrate_state(&mut s);
    let b = DyeflowParams::default();
    b.deserialize_fields(&s.fields);
    assert_eq!(b.output(), open_on_b());
}

#[test]
fn a_project_without_it_loads_with_it_closed() {
    let mut s = state_with(None);
    migrate_state(&mut s);
    // Loaded into an instance that shows its window: the project's (none) wins.
    let p = DyeflowParams::default();
    p.set_output(open_on_b());
    p.deserialize_fields(&s.fields);
    assert_eq!(p.output(), OutputSettings::default());
    assert!(!p.output().open);
}

#[test]
fn a_damaged_one_loads_what_reads_and_clamps_sizes() {
    let mut s = state_with(Some(
        r#"{"open": "yes", "placement": {"monitor": "DP-2", "fullscreen": false, "width": 1, "height": 99999}}"#,
    ));
    migrate_state(&mut s);
    let p = DyeflowParams::default();
    p.deserialize_fields(&s.fields);
    let o = p.output();
    assert!(!o.open, "an unreadable flag stays closed");
    assert_eq!(o.placement.monitor, "DP-2");
    assert_eq!(
        (o.placement.width, o.placement.height),
        (
            crate::output_window::MIN_EDGE,
            crate::output_window::MAX_EDGE
        )
    );
}
