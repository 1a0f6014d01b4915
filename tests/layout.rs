//! The direction of dependencies between the crate's modules, checked on the source: a test
//! fails when a forbidden import comes back.
//!
//! - `fluid` (the shared words: splats, look, colour mode, colour maths, obstacles' layouts and
//!   masks) imports nothing of ours.
//! - The editor, the parameters and presets know no model (`sim`).
//! - The models (`sim`) know no plugin, host or UI: not the parameters, the audio side, the
//!   mapping, the engine, the editor, presets or the command line.
//! - The audio side (`bridge`) and the mapping know no model.
//! - The GPU solver does not reach into the CPU solver: what both need lives in `sim`.
//! - The engine, the editor and the renderer drive the fluid through the model seam
//!   (`sim::Model`), never the grid solvers themselves.
//! - Only the plugin (`lib`), the engine, the editor, presets and the command line read the
//!   plugin's parameters.
//! - Nothing of the plugin imports the command line (`cli`: `render`, `bench`).

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, as (path relative to `src/`, source without comments).
fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let code: String = text
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            out.push((rel, code));
        }
    }
}

fn all_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    sources(&root, &root, &mut out);
    assert!(out.len() > 20, "found only {} source files", out.len());
    out
}

/// The top-level module a path (relative to `src/`) belongs to: `sim/grid/gpu/solver.rs` -> `sim`.
fn module_of(rel: &str) -> &str {
    let first = rel.split('/').next().unwrap();
    first.strip_suffix(".rs").unwrap_or(first)
}

/// Whether `code` names `crate::<module>` (as a whole path segment).
fn names(code: &str, module: &str) -> bool {
    let needle = format!("crate::{module}");
    code.match_indices(&needle).any(|(i, _)| {
        let next = code[i + needle.len()..].chars().next();
        !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Each (file, forbidden module) pair that `rule` flags.
fn violations(rule: impl Fn(&str, &str) -> Option<&'static [&'static str]>) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, code) in all_sources() {
        if let Some(forbidden) = rule(&rel, module_of(&rel)) {
            for module in forbidden {
                if names(&code, module) {
                    found.push(format!("src/{rel} imports crate::{module}"));
                }
            }
        }
    }
    found
}

const CLI: &[&str] = &["cli"];

#[test]
fn fluid_is_a_leaf() {
    let files: Vec<_> = all_sources()
        .into_iter()
        .filter(|(rel, _)| module_of(rel) == "fluid")
        .collect();
    assert!(files.len() >= 2, "src/fluid/: {files:?}");
    for (rel, code) in files {
        let outside_tests = code.split("mod tests").next().unwrap();
        let ours = outside_tests
            .match_indices("crate::")
            .any(|(i, _)| !outside_tests[i..].starts_with("crate::fluid"));
        assert!(!ours, "src/{rel} imports something of ours outside fluid");
    }
}

/// The editor and the parameters (and presets, which are parameters on disk) speak the shared
/// words: obstacles' layouts and masks, the look. They never reach into a model.
#[test]
fn the_editor_and_the_parameters_know_no_model() {
    let found = violations(|_, module| {
        matches!(module, "editor" | "params" | "preset").then_some(&["sim"])
    });
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_models_know_no_plugin_host_or_ui() {
    let found = violations(|_, module| {
        (module == "sim").then_some(&[
            "params", "bridge", "mapping", "engine", "editor", "preset", "cli", "frame",
        ])
    });
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_audio_side_and_the_mapping_know_no_model() {
    let found = violations(|_, module| {
        matches!(module, "bridge" | "mapping").then_some(&[
            "sim", "params", "engine", "editor", "preset", "cli", "frame",
        ])
    });
    assert!(found.is_empty(), "{found:#?}");
}

/// What `code` takes from `crate::sim` by name: `crate::sim::X` and each name of
/// `crate::sim::{X, y::Z}` (the first segment of each).
fn sim_names(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (i, m) in code.match_indices("crate::sim::") {
        let rest = &code[i + m.len()..];
        let list = match rest.strip_prefix('{') {
            Some(group) => &group[..group.find('}').unwrap_or(group.len())],
            None => rest,
        };
        let items: Vec<&str> = if rest.starts_with('{') {
            list.split(',').collect()
        } else {
            vec![list]
        };
        for item in items {
            let first: String = item
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !first.is_empty() {
                names.push(first);
            }
        }
    }
    names
}

/// The engine, the editor, the renderer and the plugin drive a fluid through the model seam
/// (`sim::Model`): none of them reaches for what only the grid fluid has, so a particle model
/// plugs in behind the same trait.
#[test]
fn the_engine_editor_and_renderer_drive_a_model_not_a_grid() {
    let grid_only = [
        "cpu",
        "gpu",
        "grid",
        "multigrid",
        "physics",
        "Solver",
        "SimConfig",
        "Stage",
        "GridModel",
        "iterations_for",
    ];
    let mut found = Vec::new();
    for (rel, code) in all_sources() {
        let module = module_of(&rel);
        // `dyeflow bench` (and the command line's parsing of its options) measures the grid
        // solvers themselves; `dyeflow render` drives a model like the plugin.
        if matches!(module, "engine" | "editor" | "lib" | "frame" | "preset")
            || rel.starts_with("cli/render")
        {
            let code = code.split("mod tests").next().unwrap();
            for name in sim_names(code) {
                if grid_only.contains(&name.as_str()) {
                    found.push(format!("src/{rel} uses crate::sim::{name}"));
                }
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_gpu_solver_does_not_reach_into_the_cpu_solver() {
    let mut found = Vec::new();
    for (rel, code) in all_sources() {
        if rel.starts_with("sim/grid/gpu/")
            && (code.contains("sim::grid::cpu") || code.contains("super::super::cpu"))
        {
            found.push(format!("src/{rel} uses the CPU solver"));
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn only_the_plugin_engine_editor_presets_and_cli_read_the_parameters() {
    let allowed = [
        "lib", "params", "engine", "editor", "preset", "cli", "main", "bin",
    ];
    let found = violations(|_, module| (!allowed.contains(&module)).then_some(&["params"]));
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn nothing_of_the_plugin_imports_the_command_line() {
    let found = violations(|_, module| (!CLI.contains(&module) && module != "main").then_some(CLI));
    assert!(found.is_empty(), "{found:#?}");
}

/// The rules themselves: each flags what it should.
#[test]
fn the_rules_catch_an_import() {
    assert!(names("use crate::params::Settings;", "params"));
    assert!(names("x = crate::sim::MAX_SPEED;", "sim"));
    assert!(!names("use crate::simulation::X;", "sim"));
    assert!(!names("use crate::fluid::Splat;", "sim"));
    assert_eq!(module_of("sim/grid/gpu/solver.rs"), "sim");
    assert_eq!(module_of("mapping.rs"), "mapping");
    assert_eq!(sim_names("use crate::sim::grid::gpu::GpuSolver;"), ["grid"]);
    assert_eq!(
        sim_names("use crate::sim::{Model, grid::Fields,\n Solver};"),
        ["Model", "grid", "Solver"]
    );
    assert!(sim_names("use crate::simulation::X;").is_empty());
}
