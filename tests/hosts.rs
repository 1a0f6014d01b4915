//! The VST3 in real hosts from PyPI: pedalboard and DawDreamer load the plugin (this build's
//! debug library, so nice-plug's allocation check aborts the host on any allocation in
//! `process()`), and `tests/hosts/vst3_hosts.py` checks unity passthrough, state round trips,
//! a 200-note burst, every parameter at its extremes while audio runs, and a 60 s offline
//! render.
//!
//! It needs a Python with `pedalboard`, `dawdreamer` and `numpy`, named by
//! `DYEFLOW_HOSTS_PYTHON` (`.ci/run` makes a virtual environment and sets it, and sets
//! `DYEFLOW_REQUIRE_HOSTS=1` so that a missing host fails instead of skipping).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python to run the hosts with, or `None` (with a note) when there is none.
fn python() -> Option<PathBuf> {
    let required = std::env::var("DYEFLOW_REQUIRE_HOSTS").as_deref() == Ok("1");
    let Some(python) = std::env::var_os("DYEFLOW_HOSTS_PYTHON").map(PathBuf::from) else {
        assert!(
            !required,
            "DYEFLOW_REQUIRE_HOSTS=1 but DYEFLOW_HOSTS_PYTHON is not set"
        );
        eprintln!(
            "SKIPPED: set DYEFLOW_HOSTS_PYTHON to a Python with pedalboard, dawdreamer and numpy"
        );
        return None;
    };
    let ok = Command::new(&python)
        .args(["-c", "import pedalboard, dawdreamer, numpy"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok || !required,
        "{} cannot import pedalboard, dawdreamer and numpy",
        python.display()
    );
    ok.then_some(python)
}

/// A VST3 bundle around this build's plugin library (built here if need be).
fn vst3_bundle() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The tests link the library as an rlib; the hosts need the shared library. Building it
    // here reuses every dependency the tests were built with.
    let status = Command::new(env!("CARGO"))
        .args(["build", "--lib", "--all-features", "--quiet"])
        .current_dir(root)
        .status()
        .expect("run cargo");
    assert!(status.success(), "cargo build --lib failed");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let library = target.join("debug").join("libdyeflow.so");
    assert!(library.is_file(), "{} is missing", library.display());
    let bundle = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hosts/Dyeflow.vst3");
    let arch = bundle.join("Contents/x86_64-linux");
    let _ = std::fs::remove_dir_all(&bundle);
    std::fs::create_dir_all(&arch).unwrap();
    std::fs::copy(&library, arch.join("Dyeflow.so")).unwrap();
    bundle
}

/// The names of the plugin's parameters that a host lists (not the hidden ones), in order.
fn parameter_names() -> Vec<String> {
    use nice_plug::prelude::{ParamFlags, Params};
    let params = dyeflow::params::DyeflowParams::default();
    params
        .param_map()
        .into_iter()
        // SAFETY: `params` outlives every pointer its map hands out (all used in this loop).
        .filter(|(_, ptr, _)| unsafe { !ptr.flags().contains(ParamFlags::HIDDEN) })
        // SAFETY: as above.
        .map(|(_, ptr, _)| unsafe { ptr.name() }.to_owned())
        .collect()
}

#[test]
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn the_vst3_in_pedalboard_and_dawdreamer() {
    let Some(python) = python() else {
        return;
    };
    let bundle = vst3_bundle();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/vst3_hosts.py");
    // The idle-CPU probe (two more pedalboard loads of ~30 s each) is left to manual runs.
    let output = Command::new(&python)
        .arg(&script)
        .arg(&bundle)
        .env("DYEFLOW_EXPECTED_PARAMETERS", parameter_names().join("\n"))
        .args(["--idle-seconds", "0"])
        .output()
        .expect("run the hosts script");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stdout}");
    assert!(
        output.status.success(),
        "the hosts script failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains(" 0 failed") && stdout.contains("2 host(s)"),
        "both hosts must run every check: {stdout}"
    );
    for check in [
        "passthrough stereo",
        "state round trip",
        "parameter extremes",
    ] {
        for host in ["pedalboard", "dawdreamer"] {
            assert!(
                stdout
                    .lines()
                    .any(|l| l.starts_with("[PASS]") && l.contains(host) && l.contains(check)),
                "{host} did not pass '{check}': {stdout}"
            );
        }
    }
}
