//! Factory presets from the command line: `dyeflow render --preset NAME` picks a factory
//! preset by name (any case), a file of that name comes first, and a name that is neither is
//! one sentence listing the names, exit code 2, and no output. A preset's modulation out of
//! range renders clamped, with a note per value.

use crate::support::{dyeflow, small_demo, summary};
use std::path::{Path, PathBuf};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("preset-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `dyeflow render` of 0.3 s of the demo at 64x36 on the CPU into `out`, run in `dir`, with
/// `extra` arguments; (exit code, stdout, stderr).
fn render(dir: &Path, out: &str, extra: &[&str]) -> (i32, String, String) {
    let args = small_demo(out, &[&["--seconds", "0.3"], extra].concat());
    let o = dyeflow()
        .args(&args)
        .current_dir(dir)
        .output()
        .expect("run dyeflow");
    summary(&o)
}

fn frames(dir: &Path) -> Vec<Vec<u8>> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    names.sort();
    names.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

#[test]
fn render_knows_the_factory_presets_by_name() {
    let dir = scratch("by-name");
    let (code, _, err) = render(&dir, "out-neon", &["--preset", "Neon"]);
    assert_eq!(code, 0, "{err}");
    let neon = frames(&dir.join("out-neon"));
    assert_eq!(neon.len(), 3);
    // Any case; and a look of its own (Honey's frames differ from Neon's).
    let (code, _, err) = render(&dir, "out-neon-lower", &["--preset", "neon"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(frames(&dir.join("out-neon-lower")), neon);
    let (code, _, err) = render(&dir, "out-honey", &["--preset", "HONEY"]);
    assert_eq!(code, 0, "{err}");
    assert_ne!(frames(&dir.join("out-honey")), neon);

    // A file of that name in the working directory comes first. (The renders' folders are
    // named apart from it: Windows and macOS file names ignore case.)
    std::fs::write(dir.join("Neon"), br#"{"params": {"visc": 1e9}}"#).unwrap();
    let (code, _, err) = render(&dir, "file", &["--preset", "Neon"]);
    assert_eq!(code, 2, "the file, not the factory preset: {err}");
    assert!(err.contains("outside its range"), "{err}");
}

#[test]
fn a_wrong_preset_name_lists_the_names_and_exits_2() {
    let dir = scratch("wrong");
    for (name, needle) in [
        ("Lava", "no such preset file or factory preset"),
        ("missing.json", "file not found"),
        ("sub/Neon", "file not found"),
    ] {
        let (code, _, err) = render(&dir, "out", &["--preset", name]);
        assert_eq!(code, 2, "{name}: exit {code}, {err}");
        let first = err.trim().lines().next().unwrap_or_default();
        assert!(
            first.contains(name) && first.contains(needle),
            "{name}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{name}: one sentence: {err}");
        assert!(!dir.join("out").exists(), "{name} left output behind");
    }
    let (_, _, err) = render(&dir, "out", &["--preset", "Lava"]);
    assert!(
        err.contains("Ink, Neon, Smoke, Fire, Honey, Currents"),
        "the names: {err}"
    );
}

/// A preset file whose `modulation` field holds `modulation` (JSON), at `dir/name`; its path.
fn modulation_preset(dir: &Path, name: &str, modulation: &str) -> String {
    let path = dir.join(name);
    let escaped = serde_json::to_string(modulation).unwrap();
    std::fs::write(
        &path,
        format!(r#"{{"params": {{}}, "fields": {{"modulation": {escaped}}}}}"#),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

/// Hostile modulation in a preset (a rate of -5 Hz, 1e9 beats, a depth of 1e39, an unknown
/// target, CC 255 learned) renders (exit 0) as the clamped values do, with a note naming each
/// value: the depth saturates at 1 rather than dropping its route.
#[test]
fn a_presets_hostile_modulation_renders_clamped_with_notes() {
    let dir = scratch("hostile-modulation");
    // LFO 1, a square wave at its slowest, is +1 for the whole render: the background at its
    // brightest.
    let hostile = modulation_preset(
        &dir,
        "hostile.json",
        r#"{"lfos": [{"shape": "square", "sync": false, "hz": -5}, {"beats": 1e9}],
            "routes": [{"source": "lfo1", "target": "bg_bright", "depth": 1e39},
                {"source": "lfo1", "target": "no_such", "depth": 0.5}],
            "learned": [{"cc": 255, "target": "vort"}]}"#,
    );
    let clamped = modulation_preset(
        &dir,
        "clamped.json",
        r#"{"lfos": [{"shape": "square", "sync": false, "hz": 0.01}, {"beats": 64}],
            "routes": [{"source": "lfo1", "target": "bg_bright", "depth": 1}]}"#,
    );
    let (code, out, err) = render(&dir, "hostile", &["--preset", &hostile]);
    assert_eq!(code, 0, "{err}");
    let said = format!("{out}{err}");
    for note in [
        "LFO 1: hz -5 clamped to 0.01",
        "LFO 2: beats 1e9 clamped to 64",
        "route 1: depth 1e39 clamped to 1",
        "route 2: \"no_such\" is not a parameter a route can move; dropped",
        "learned CC 1: cc 255 cannot be learned",
    ] {
        assert!(
            said.contains(&format!("Note: {hostile}: modulation: {note}")),
            "{note}: {said}"
        );
    }
    let (code, out, err) = render(&dir, "clamped", &["--preset", &clamped]);
    assert_eq!(code, 0, "{err}");
    assert!(!format!("{out}{err}").contains("modulation:"), "{out}{err}");
    let (code, _, err) = render(&dir, "plain", &[]);
    assert_eq!(code, 0, "{err}");
    let frames_of = |name: &str| frames(&dir.join(name));
    assert_eq!(frames_of("hostile").len(), 3);
    assert_eq!(frames_of("hostile"), frames_of("clamped"));
    assert_ne!(
        frames_of("hostile"),
        frames_of("plain"),
        "the route of depth 1e39 moves the background"
    );
}
