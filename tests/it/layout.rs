//! The house's plan, checked on the source: a test fails when a forbidden import comes back.
//!
//! Rooms (the top-level modules of `src/`) and which way their imports may point:
//! - `fluid` (the shared words: splats, look, colour mode, colour maths, obstacles' layouts and
//!   masks) imports nothing of ours.
//! - The editor, the parameters and presets know no model (`sim`).
//! - The models (`sim`) know no plugin, host or UI: not the parameters, the audio side, the
//!   mapping, the engine, the editor, presets or the command line.
//! - The picture (`display`) imports no model; models hand it their light. What both need
//!   (`kernels`: numeric helpers, band-parallel loops, the multiversioned `kernel!`) imports
//!   nothing of ours but `fluid`.
//! - The GPU device (`gpu`: context, kernels, shaders, frames read back) serves the models and
//!   the picture alike and imports neither.
//! - The audio side (`bridge`) and the mapping know no model.
//! - Only the plugin (`lib`), the engine, the editor, presets and the command line read the
//!   plugin's parameters.
//! - Nothing of the plugin imports the command line (`cli`: `render`, `bench`).
//!
//! And inside the models:
//! - The engine, the editor and the renderer drive a fluid through the model seam
//!   (`sim::Model`), never the grid solvers themselves.
//! - A fluid's GPU side does not reach into its CPU side: what both need lives beside them.
//! - No fluid reaches into another's folder (`sim/grid/`, `sim/sph/`): what they share lives in
//!   `sim/` itself, and both draw through `display`.
//! - No import loop between `sim`'s rooms (each folder, and each file beside `sim/mod.rs`).
//!
//! Each rule is also run on a planted import, so a rule that could never fail is caught too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A source file: its path relative to `src/` and its code without comments.
pub(crate) type Source = (String, String);

/// Every `.rs` file under `dir`, as (path relative to `root`, source without comments).
fn sources(dir: &Path, root: &Path, out: &mut Vec<Source>) {
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
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let code = normalized(&rel, &without_comments(&text));
            out.push((rel, code));
        }
    }
}

fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module path of a file relative to `src/`: `params/effects.rs` -> `params::effects`,
/// `sim/grid/mod.rs` -> `sim::grid`, `lib.rs`, `main.rs` and `bin/*` -> the crate root.
fn module_path(rel: &str) -> Vec<String> {
    if rel == "lib.rs" || rel == "main.rs" || rel.starts_with("bin/") {
        return Vec::new();
    }
    let stem = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// `code` with every path written from the crate root, so a rule reads one form: `super::`
/// and `self::` chains resolved from the file's module (a file is its module; `mod.rs` its
/// folder's), `dyeflow::` (the binaries' name for the library) as `crate::`, and each
/// `{a::X, b::{Y, Z}}` group of a path spelled out as whole paths (`P::a::X P::b::Y P::b::Z`).
fn normalized(rel: &str, code: &str) -> String {
    let module = module_path(rel);
    // Groups first, so a `super::` inside one (`use super::{super::cpu::X}`) continues its
    // group's path.
    let code = expand_groups(code);
    let mut out = String::with_capacity(code.len());
    let mut rest = code.as_str();
    while !rest.is_empty() {
        let at_word = out
            .chars()
            .last()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
        if at_word && (rest.starts_with("super::") || rest.starts_with("self::")) {
            let mut up = 0;
            if let Some(r) = rest.strip_prefix("self::") {
                rest = r;
            }
            while let Some(r) = rest.strip_prefix("super::") {
                up += 1;
                rest = r;
            }
            let keep = module.len().saturating_sub(up);
            out.push_str("crate::");
            for part in &module[..keep] {
                out.push_str(part);
                out.push_str("::");
            }
            continue;
        }
        if at_word && rest.starts_with("dyeflow::") {
            out.push_str("crate::");
            rest = &rest["dyeflow::".len()..];
            continue;
        }
        let c = rest.chars().next().unwrap();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Each `path::{...}` group written out as the whole paths it names (see [`normalized`]).
fn expand_groups(code: &str) -> String {
    let Some(open) = code.find("::{") else {
        return code.to_string();
    };
    // The path before the group.
    let start = code[..open]
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .map_or(0, |i| i + 1);
    let prefix = &code[start..open];
    // The group's matching brace.
    let mut depth = 0;
    let mut close = code.len();
    for (i, c) in code[open + 2..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = open + 2 + i;
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = &code[(open + 3).min(close)..close];
    // Its items, split at the commas outside nested groups.
    let mut items = Vec::new();
    let (mut depth, mut from) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[from..]);
    let spelled: Vec<String> = items
        .iter()
        .map(|item| item.trim())
        .filter(|item| !item.is_empty())
        .map(|item| format!("{prefix}::{item}"))
        .collect();
    let tail = code.get(close + 1..).unwrap_or("");
    format!(
        "{}{}{}",
        &code[..start],
        expand_groups(&spelled.join(" ")),
        expand_groups(tail)
    )
}

pub(crate) fn all_sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    sources(&root, &root, &mut out);
    assert!(out.len() > 20, "found only {} source files", out.len());
    out
}

/// The code of a file before its inline `mod tests { ... }` (tests may reach anywhere; a
/// `mod tests;` declaration is no test code, and a tests file is left out by its name).
fn outside_tests(code: &str) -> &str {
    code.split("mod tests {").next().unwrap()
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

/// A rule: files of the rooms it applies to must not name the forbidden rooms.
struct Rule {
    what: &'static str,
    /// Whether the rule applies to a file (its path relative to `src/`, its room).
    applies: fn(&str, &str) -> bool,
    forbidden: &'static [&'static str],
    /// A path the rule applies to, for the planted check.
    sample: &'static str,
}

const RULES: &[Rule] = &[
    Rule {
        what: "the particle core names no fluid: the particle fluids configure it",
        applies: |rel, _| rel.starts_with("sim/particles/"),
        forbidden: &["sim::sph", "sim::liquid3d", "sim::grid"],
        sample: "sim/particles/hash.rs",
    },
    Rule {
        what: "the editor, the parameters and presets know no model",
        applies: |_, room| matches!(room, "editor" | "params" | "preset"),
        forbidden: &["sim"],
        sample: "editor/panel.rs",
    },
    Rule {
        what: "the models know no plugin, host or UI",
        applies: |_, room| room == "sim",
        forbidden: &[
            "params",
            "bridge",
            "mapping",
            "engine",
            "editor",
            "preset",
            "cli",
            "frame",
            "capture",
            "output_window",
        ],
        sample: "sim/grid/cpu/advect.rs",
    },
    Rule {
        what: "the picture imports no model",
        applies: |_, room| room == "display",
        forbidden: &[
            "sim",
            "params",
            "bridge",
            "mapping",
            "engine",
            "editor",
            "preset",
            "cli",
            "frame",
            "capture",
            "output_window",
        ],
        sample: "display/cpu/picture.rs",
    },
    Rule {
        what: "the kernels' building blocks import nothing of ours but the shared words",
        applies: |_, room| room == "kernels",
        forbidden: &[
            "sim",
            "display",
            "gpu",
            "params",
            "bridge",
            "mapping",
            "engine",
            "editor",
            "preset",
            "cli",
            "frame",
            "output_window",
            "capture",
        ],
        sample: "kernels/math.rs",
    },
    Rule {
        what: "the GPU device imports no model and no picture",
        applies: |_, room| room == "gpu",
        forbidden: &[
            "sim",
            "display",
            "kernels",
            "params",
            "bridge",
            "mapping",
            "engine",
            "editor",
            "preset",
            "cli",
            "frame",
            "output_window",
            "capture",
        ],
        sample: "gpu/frames.rs",
    },
    Rule {
        what: "the audio side and the mapping know no model, and no capture (the plugin wires \
               the recorder above the bridge)",
        applies: |_, room| matches!(room, "bridge" | "mapping"),
        forbidden: &[
            "sim", "display", "params", "engine", "editor", "preset", "cli", "frame", "capture",
        ],
        sample: "bridge/mod.rs",
    },
    Rule {
        what: "only the plugin, the engine, the editor, presets and the command line read the \
               parameters",
        applies: |_, room| {
            !matches!(
                room,
                "lib" | "params" | "engine" | "editor" | "preset" | "cli" | "main" | "bin"
            )
        },
        forbidden: &["params"],
        sample: "mapping.rs",
    },
    Rule {
        what: "nothing of the plugin imports the command line",
        applies: |_, room| !matches!(room, "cli" | "main"),
        forbidden: &["cli"],
        sample: "engine/mod.rs",
    },
];

/// A planted file, read as the real ones are.
fn plant(rel: &str, code: &str) -> Source {
    (rel.to_string(), normalized(rel, code))
}

/// What `rule` finds in `files`.
fn violations(rule: &Rule, files: &[Source]) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, code) in files {
        if (rule.applies)(rel, module_of(rel)) {
            for module in rule.forbidden {
                if names(code, module) {
                    found.push(format!("src/{rel} imports crate::{module}"));
                }
            }
        }
    }
    found
}

#[test]
fn every_rule_holds() {
    let files = all_sources();
    for rule in RULES {
        let found = violations(rule, &files);
        assert!(found.is_empty(), "{}: {found:#?}", rule.what);
    }
}

/// Each rule flags each of its forbidden rooms imported into a file it applies to, whichever
/// way the import is written: from the crate, in a group, or up through `super::`.
#[test]
fn every_rule_catches_a_planted_import() {
    for rule in RULES {
        assert!(
            (rule.applies)(rule.sample, module_of(rule.sample)),
            "{}",
            rule.what
        );
        let up = "super::".repeat(module_path(rule.sample).len());
        for module in rule.forbidden {
            for code in [
                format!("use crate::{module}::Something;"),
                format!("use crate::{{fluid::Look, {module}::{{Something, Other}}}};"),
                format!("use {up}{module}::Something;"),
                format!("fn f() {{ let x = {up}{module}::something(); }}"),
            ] {
                let planted = vec![plant(rule.sample, &code)];
                assert_eq!(
                    violations(rule, &planted).len(),
                    1,
                    "{} misses crate::{module} in `{code}`",
                    rule.what
                );
            }
        }
    }
}

#[test]
fn fluid_is_a_leaf() {
    let files = all_sources();
    assert!(
        fluid_imports(&files).is_empty(),
        "{:#?}",
        fluid_imports(&files)
    );
    assert!(
        files
            .iter()
            .filter(|(r, _)| module_of(r) == "fluid")
            .count()
            >= 2
    );
    for (rel, code) in [
        ("fluid/mask.rs", "use super::super::sim::obstacles::Mask;"),
        ("fluid/mod.rs", "use super::sim::MAX_SPEED;"),
        ("fluid/mod.rs", "use crate::{fluid::Look, kernels::math};"),
    ] {
        let planted = vec![plant(rel, code)];
        assert_eq!(fluid_imports(&planted).len(), 1, "misses `{code}` in {rel}");
    }
    let own = vec![plant(
        "fluid/mask.rs",
        "use super::Look; use crate::fluid::blend;",
    )];
    assert!(
        fluid_imports(&own).is_empty(),
        "fluid's own paths are no import"
    );
}

/// The files of `fluid` that name something of ours outside `fluid`.
fn fluid_imports(files: &[Source]) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, code) in files.iter().filter(|(r, _)| module_of(r) == "fluid") {
        let code = outside_tests(code);
        let ours = code
            .match_indices("crate::")
            .any(|(i, _)| !code[i..].starts_with("crate::fluid"));
        if ours {
            found.push(format!("src/{rel}"));
        }
    }
    found
}

/// What `code` takes from `crate::sim` by name: `crate::sim::X` and each name of
/// `crate::sim::{X, y::Z}` (the first segment of each).
fn sim_names(code: &str) -> Vec<String> {
    segments_after(code, "crate::sim::")
}

/// What `crate::sim` holds or re-exports for the grid fluid alone.
const GRID_ONLY: [&str; 9] = [
    "grid",
    "multigrid",
    "Solver",
    "SimConfig",
    "Stage",
    "GridModel",
    "iterations_for",
    "PressureMethod",
    "Extras",
];

/// Whether `code` imports `crate::sim` whole (so anything of it can follow unnamed).
fn imports_sim_whole(code: &str) -> bool {
    [
        "crate::sim;",
        "crate::sim::*",
        "crate::sim as ",
        "crate::sim::self",
    ]
    .iter()
    .any(|w| code.contains(w))
}

/// The engine, the editor, the renderer and the plugin drive a fluid through the model seam
/// (`sim::Model`): none of them reaches for what only the grid fluid has, so a particle model
/// plugs in behind the same trait.
fn grid_reaches(files: &[Source]) -> Vec<String> {
    let grid_only = GRID_ONLY;
    let mut found = Vec::new();
    for (rel, code) in files {
        // `dyeflow bench` (and the command line's parsing of its options) measures the grid
        // solvers themselves; `dyeflow render` drives a model like the plugin.
        if matches!(
            module_of(rel),
            "engine" | "editor" | "lib" | "frame" | "preset"
        ) || rel.starts_with("cli/render")
        {
            let code = outside_tests(code);
            if imports_sim_whole(code) {
                found.push(format!("src/{rel} imports crate::sim whole"));
            }
            for name in sim_names(code) {
                if grid_only.contains(&name.as_str()) {
                    found.push(format!("src/{rel} uses crate::sim::{name}"));
                }
            }
        }
    }
    found
}

#[test]
fn the_engine_editor_and_renderer_drive_a_model_not_a_grid() {
    let found = grid_reaches(&all_sources());
    assert!(found.is_empty(), "{found:#?}");
    for code in [
        "use crate::sim::grid::cpu::CpuSolver;",
        "use crate::sim::{Model, SimConfig};",
        "use crate::sim::{model::{Model, Snapshot}, SimConfig};",
        "use super::super::sim::Stage;",
        "use crate::sim::*;",
        "use crate::sim;",
    ] {
        let planted = vec![plant("engine/sim.rs", code)];
        assert_eq!(grid_reaches(&planted).len(), 1, "misses `{code}`");
    }
    let declared = plant(
        "cli/render/files/mod.rs",
        "mod tests;\nfn f(c: crate::sim::SimConfig) {}",
    );
    assert_eq!(
        grid_reaches(&[declared]).len(),
        1,
        "a `mod tests;` hides the rest"
    );
}

/// The fluids, by their folders in `sim/`.
const FLUIDS: [&str; 3] = ["grid", "sph", "liquid3d"];

/// The fluids' GPU files that reach into their CPU side (`sim/grid/gpu/` into `sim/grid/cpu/`,
/// `sim/sph/gpu/` into `sim/sph/cpu/`).
fn gpu_into_cpu(files: &[Source]) -> Vec<String> {
    let mut found = Vec::new();
    for fluid in FLUIDS {
        for (rel, code) in files {
            if rel.starts_with(&format!("sim/{fluid}/gpu/"))
                && names(outside_tests(code), &format!("sim::{fluid}::cpu"))
            {
                found.push(format!("src/{rel} uses the CPU side"));
            }
        }
    }
    found
}

#[test]
fn a_fluids_gpu_side_does_not_reach_into_its_cpu_side() {
    let found = gpu_into_cpu(&all_sources());
    assert!(found.is_empty(), "{found:#?}");
    for (rel, code) in [
        (
            "sim/grid/gpu/solver.rs",
            "use crate::sim::grid::cpu::advect;",
        ),
        ("sim/grid/gpu/mod.rs", "use super::cpu::advect;"),
        (
            "sim/grid/gpu/passes/advect.rs",
            "use crate::sim::grid::{cpu::advect, Fields};",
        ),
        (
            "sim/sph/gpu/light.rs",
            "use crate::sim::sph::cpu::light::Footprint;",
        ),
        ("sim/sph/gpu/mod.rs", "use super::cpu::CpuFluid;"),
        (
            "sim/sph/gpu/light.rs",
            "use super::{super::cpu::light::Light};",
        ),
    ] {
        let planted = vec![plant(rel, code)];
        assert_eq!(gpu_into_cpu(&planted).len(), 1, "misses `{code}` in {rel}");
    }
}

/// The fluids' folders (`sim/grid/`, `sim/sph/`) whose files reach into another fluid's: what
/// two fluids share lives beside them in `sim/` (the model seam, obstacles, multigrid), and
/// both draw through `display`.
fn fluid_into_fluid(files: &[Source]) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, code) in files {
        let Some(own) = FLUIDS
            .iter()
            .find(|f| rel.starts_with(&format!("sim/{f}/")))
        else {
            continue;
        };
        let code = outside_tests(code);
        for other in FLUIDS.iter().filter(|f| *f != own) {
            if names(code, &format!("sim::{other}")) {
                found.push(format!("src/{rel} reaches into sim/{other}/"));
            }
        }
        if imports_sim_whole(code) {
            found.push(format!("src/{rel} imports crate::sim whole"));
        }
        if *own != "grid" {
            // The grid's words that `sim/mod.rs` holds or re-exports.
            for name in sim_names(code) {
                // (`grid` itself is the folder, caught above.)
                if name != "grid" && GRID_ONLY.contains(&name.as_str()) {
                    found.push(format!("src/{rel} uses the grid's crate::sim::{name}"));
                }
            }
        }
    }
    found
}

#[test]
fn no_fluid_reaches_into_another() {
    let found = fluid_into_fluid(&all_sources());
    assert!(found.is_empty(), "{found:#?}");
    for (rel, code) in [
        (
            "sim/sph/gpu/model.rs",
            "use crate::sim::grid::gpu::GpuSolver;",
        ),
        (
            "sim/sph/cpu/model.rs",
            "use crate::sim::{Model, grid::cpu::picture};",
        ),
        ("sim/sph/mod.rs", "use super::grid::particles::Particle;"),
        ("sim/grid/model.rs", "use super::super::sph::Fluid;"),
        (
            "sim/sph/gpu/model.rs",
            "use crate::sim::{Activity, SimConfig};",
        ),
        (
            "sim/sph/cpu/model.rs",
            "use super::super::super::GridModel;",
        ),
        ("sim/sph/gpu/model.rs", "use crate::sim;"),
        ("sim/sph/gpu/model.rs", "use crate::sim::{self, Activity};"),
    ] {
        let planted = vec![plant(rel, code)];
        assert_eq!(
            fluid_into_fluid(&planted).len(),
            1,
            "misses `{code}` in {rel}"
        );
    }
}

/// `sim`'s rooms: each folder and each file beside `sim/mod.rs`, by name (`grid`, `sph`,
/// `model`, `create`, ...). `sim/mod.rs` itself is the door: it declares the rooms and
/// re-exports their names, and its own items are the words every model shares, so naming it
/// is no edge.
fn sim_room(rel: &str) -> Option<&str> {
    let inner = rel.strip_prefix("sim/")?;
    if inner == "mod.rs" {
        return None;
    }
    let first = inner.split('/').next().unwrap();
    Some(first.strip_suffix(".rs").unwrap_or(first))
}

/// Names `sim/mod.rs` re-exports, with the room that defines them, from its normalised code
/// (`pub use room::...::A room::...::B;`, `pub use room::X as Y;`).
fn reexports(door: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for statement in door.split(';') {
        let Some(paths) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let words: Vec<&str> = paths.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            let path = words[i].trim_end_matches(',');
            let room = path.split("::").next().unwrap_or("").to_string();
            let mut name = path.rsplit("::").next().unwrap_or("").to_string();
            if words.get(i + 1) == Some(&"as") {
                name = words
                    .get(i + 2)
                    .unwrap_or(&"")
                    .trim_end_matches(',')
                    .to_string();
                i += 2;
            }
            if !room.is_empty() && !name.is_empty() && name != "*" {
                out.insert(name, room);
            }
            i += 1;
        }
    }
    out
}

/// The first path segments `code` names after `prefix` (`crate::sim::X`, each of
/// `crate::sim::{X, y::Z}`).
fn segments_after(code: &str, prefix: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (i, m) in code.match_indices(prefix) {
        if i > 0 && code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[i + m.len()..];
        let items: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())]
                .split(',')
                .collect(),
            None => vec![rest],
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

/// The graph of imports between `sim`'s rooms (tests left out: `tests.rs`, `*_tests.rs`, and
/// a file's inline `mod tests { ... }`).
fn sim_graph(files: &[Source]) -> BTreeMap<String, BTreeSet<String>> {
    let door = files
        .iter()
        .find(|(rel, _)| rel == "sim/mod.rs")
        .map(|(_, code)| reexports(code))
        .unwrap_or_default();
    let rooms: BTreeSet<String> = files
        .iter()
        .filter_map(|(rel, _)| sim_room(rel).map(str::to_string))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, code) in files {
        let Some(room) = sim_room(rel) else {
            continue;
        };
        if rel.ends_with("tests.rs") {
            continue;
        }
        let code = outside_tests(code);
        for name in segments_after(code, "crate::sim::") {
            let target = if rooms.contains(&name) {
                Some(name)
            } else {
                door.get(&name).cloned()
            };
            if let Some(target) = target.filter(|t| t != room) {
                graph.entry(room.to_string()).or_default().insert(target);
            }
        }
    }
    graph
}

/// A loop in `graph`, as the rooms along it, if there is one.
fn find_loop(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_import_loop_between_the_rooms_of_sim() {
    let graph = sim_graph(&all_sources());
    assert!(
        graph.contains_key("grid") && graph.contains_key("sph"),
        "{graph:#?}"
    );
    assert_eq!(find_loop(&graph), None, "{graph:#?}");
}

/// The loop check sees a loop through a re-exported name and through `super::`, and none in
/// a chain.
#[test]
fn the_loop_check_catches_a_planted_loop() {
    let file = plant;
    let door = file(
        "sim/mod.rs",
        "pub use model::{Model, Snapshot};\npub use grid::cpu::CpuSolver;",
    );
    let chain = vec![
        door.clone(),
        file("sim/model.rs", "use crate::fluid::Look;"),
        file("sim/grid/model.rs", "use crate::sim::Model;"),
        file("sim/grid/cpu/mod.rs", "use crate::sim::model::Snapshot;"),
        file(
            "sim/create.rs",
            "use super::grid::cpu::CpuSolver; use super::model::Model;",
        ),
    ];
    assert_eq!(find_loop(&sim_graph(&chain)), None);
    let mut planted = chain.clone();
    planted.push(file("sim/model.rs", "fn f(s: &crate::sim::CpuSolver) {}"));
    let cycle = find_loop(&sim_graph(&planted)).expect("a loop through a re-export");
    assert!(cycle.contains(&"grid".to_string()) && cycle.contains(&"model".to_string()));
    for (rel, code) in [
        ("sim/model.rs", "use super::create::make;"),
        ("sim/grid/mod.rs", "use super::create::make;"),
        ("sim/grid/cpu/mod.rs", "use super::super::create::make;"),
        (
            "sim/model.rs",
            "use crate::{fluid::Look, sim::{create::make, obstacles}};",
        ),
    ] {
        let mut planted = chain.clone();
        planted.push(file(rel, code));
        assert!(
            find_loop(&sim_graph(&planted)).is_some(),
            "misses `{code}` in {rel}"
        );
    }
}

/// The rules' helpers themselves.
#[test]
fn the_helpers_read_imports() {
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
    assert_eq!(sim_room("sim/grid/gpu/solver.rs"), Some("grid"));
    assert_eq!(sim_room("sim/model.rs"), Some("model"));
    assert_eq!(sim_room("sim/mod.rs"), None);
    assert_eq!(
        reexports(&normalized(
            "sim/mod.rs",
            "pub use create::create_model;\npub use model::{Backend, Model as M};"
        )),
        BTreeMap::from([
            ("create_model".to_string(), "create".to_string()),
            ("Backend".to_string(), "model".to_string()),
            ("M".to_string(), "model".to_string()),
        ])
    );
}

/// The platform C library's transcendental functions, called as methods (`x.exp()`,
/// `a.sin_cos()`, `b.powf(e)`, ...): their last bits differ between glibc, macOS and Windows,
/// and the flow grows a last bit into a different video. Outside the editor's and the output
/// window's drawing code (and tests), every one goes through `kernels::portable` (`x.pexp()`)
/// or the `libm` crate.
fn platform_maths(files: &[Source]) -> Vec<String> {
    const CALLS: [&str; 22] = [
        "exp", "exp2", "exp_m1", "ln", "ln_1p", "log", "log2", "log10", "sin", "cos", "tan",
        "sin_cos", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "powf", "hypot",
        "cbrt",
    ];
    let mut found = Vec::new();
    for (rel, code) in files {
        if matches!(module_of(rel), "editor" | "output_window") || rel.ends_with("tests.rs") {
            continue;
        }
        let code = outside_tests(code);
        for call in CALLS {
            let needle = format!(".{call}(");
            if code.contains(&needle) {
                found.push(format!("src/{rel} calls the platform's .{call}()"));
            }
        }
    }
    found
}

#[test]
fn the_render_path_calls_no_platform_maths() {
    let found = platform_maths(&all_sources());
    assert!(found.is_empty(), "{found:#?}");
    for (rel, code) in [
        ("sim/grid/physics.rs", "let d = (-rate * dt).exp();"),
        ("mapping.rs", "let (s, c) = turn.sin_cos();"),
        ("display/cpu/tone.rs", "let v = x.powf(1.0 / 2.4);"),
        ("bridge/bands.rs", "let n = x.hypot(y);"),
    ] {
        assert_eq!(
            platform_maths(&[plant(rel, code)]).len(),
            1,
            "misses `{code}` in {rel}"
        );
    }
    let fine = [
        plant("sim/grid/physics.rs", "let d = (-rate * dt).pexp();"),
        plant("editor/panel.rs", "let s = t.sin();"),
        plant("fluid/mod.rs", "let v = libm::powf(x, 2.4);"),
    ];
    assert!(platform_maths(&fine).is_empty());
}

/// A parameter's plain value comes from its range (presets, automation, saved projects): the
/// vendored nice-plug-core's ranges call no platform maths either
/// (vendor/nice-plug-core/DYEFLOW-PATCH.md).
#[test]
fn the_parameters_ranges_call_no_platform_maths() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("vendor/nice-plug-core/src/params/range.rs");
    let code = std::fs::read_to_string(&path).unwrap();
    let found = platform_maths(&[plant("params/range.rs", &code)]);
    assert!(found.is_empty(), "{found:#?}");
    assert!(
        code.contains("libm::powf"),
        "{}: no libm::powf",
        path.display()
    );
}
