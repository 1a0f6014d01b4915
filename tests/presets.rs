//! Factory presets from the command line: `dyeflow render --preset NAME` picks a factory
//! preset by name (any case), a file of that name comes first, and a name that is neither is
//! one sentence listing the names, exit code 2, and no output.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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
    let mut args = vec![
        "render",
        "--backend",
        "cpu",
        "--size",
        "64x36",
        "--fps",
        "10",
        "--sim",
        "128",
        "--seconds",
        "0.3",
        "--quiet",
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    let o = Command::new(env!("CARGO_BIN_EXE_dyeflow"))
        .args(&args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run dyeflow");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
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
