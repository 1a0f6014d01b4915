//! Obstacles in the saved project, through the real CLAP entry point as a host saves and
//! restores one: a drawing comes back as it was saved, a project saved before obstacles
//! (state version 6, no field) opens with none and the pillar channel off, and a damaged
//! drawing opens with its layout.

use crate::common;

use common::clap_host::Instance;
use dyeflow::params::{OBSTACLES_KEY, ObstacleSettings, STATE_VERSION, STATE_VERSION_KEY};
use dyeflow::sim::obstacles::{Layout, Mask};

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

fn obstacles(state: &serde_json::Value) -> ObstacleSettings {
    let text = state["fields"][OBSTACLES_KEY]
        .as_str()
        .expect("the obstacles field is JSON text");
    serde_json::from_str(text).expect("it reads")
}

#[test]
fn a_drawing_round_trips_and_old_projects_open_without_obstacles() {
    let a = Instance::new();
    let fresh = state_json(&a.save_state());
    assert_eq!(obstacles(&fresh), ObstacleSettings::default());
    let pillar_ch = a.param_id("Pillar channel");
    assert_eq!(
        a.param_value(pillar_ch),
        0.0,
        "no pillar channel by default"
    );

    // A project with a layout and a drawing on it.
    let mut drawing = Mask::layout(Layout::Ring, 455, 256);
    drawing.paint_disc([0.3, 0.3], 0.1, true);
    let saved = ObstacleSettings {
        layout: Layout::Ring,
        mask: drawing.encode(),
    };
    let mut project = fresh.clone();
    project["fields"][OBSTACLES_KEY] = serde_json::to_string(&saved).unwrap().into();
    let mut b = Instance::new();
    assert!(b.load_state(&state_bytes(&project), 4096));
    let back = state_json(&b.save_state());
    assert_eq!(obstacles(&back), saved);
    // Saved again at the current version, whatever the project was saved with.
    assert_eq!(
        back["fields"][STATE_VERSION_KEY],
        STATE_VERSION.to_string().as_str()
    );

    // Saved before obstacles: no field (and no pillar channel), version 6.
    let mut old = fresh.clone();
    old["fields"].as_object_mut().unwrap().remove(OBSTACLES_KEY);
    old["params"].as_object_mut().unwrap().remove("pillar_ch");
    old["params"].as_object_mut().unwrap().remove("obst_look");
    old["fields"][STATE_VERSION_KEY] = "6".into();
    let mut c = Instance::new();
    assert!(c.load_state(&state_bytes(&project), 4096));
    assert!(c.load_state(&state_bytes(&old), 4096));
    assert_eq!(
        obstacles(&state_json(&c.save_state())),
        ObstacleSettings::default()
    );
    assert_eq!(c.param_value(pillar_ch), 0.0);

    // A damaged drawing: the layout stays.
    let mut damaged = project.clone();
    damaged["fields"][OBSTACLES_KEY] = r#"{"layout":"maze","mask":"455 256 1 2 3"}"#.into();
    let mut d = Instance::new();
    assert!(d.load_state(&state_bytes(&damaged), 4096));
    assert_eq!(
        obstacles(&state_json(&d.save_state())),
        ObstacleSettings::layout(Layout::Maze)
    );
}
