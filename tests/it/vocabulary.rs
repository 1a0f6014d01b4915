//! One name per stage (docs/src/internals/stages.md): the page's tables are held against the
//! code, row by row. Each row names a stage once and where that name lives: the CPU function,
//! the GPU encoder (the grid's `encode_<stage>`; the particle core's entry in its stage table),
//! the WGSL entry points the stage dispatches, the labels of its passes (what the bench's
//! `passes` table prints). A stage renamed on one side only fails here, and so does a retired
//! name coming back.

use dyeflow::gpu::shaders;
use dyeflow::sim::Stage;
use std::path::Path;

/// A row of a stages table: stage, CPU, GPU, WGSL entry points by shader, labels.
#[derive(Debug)]
struct Row {
    stage: String,
    cpu: String,
    gpu: String,
    wgsl: Vec<(String, Vec<String>)>,
    labels: Vec<String>,
}

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The words between backticks in `cell`.
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The rows of the table under `## {heading}` in the stages page.
fn table(page: &str, heading: &str) -> Vec<Row> {
    let start = page
        .find(&format!("## {heading}\n"))
        .unwrap_or_else(|| panic!("stages.md has no section {heading}"));
    let section = &page[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
            assert_eq!(cells.len(), 5, "five columns: {line}");
            let one = |c: &str| {
                let words = ticked(c);
                assert_eq!(words.len(), 1, "one name in {c:?} ({line})");
                words[0].clone()
            };
            let wgsl = cells[3]
                .split("; ")
                .map(|part| {
                    let (shader, entries) = part
                        .split_once(": ")
                        .unwrap_or_else(|| panic!("`shader: entries` in {part:?} ({line})"));
                    (shader.trim().to_string(), ticked(entries))
                })
                .collect();
            Row {
                stage: one(cells[0]),
                cpu: one(cells[1]),
                gpu: one(cells[2]),
                wgsl,
                labels: ticked(cells[4]),
            }
        })
        .collect()
}

/// The compute entry points of shader `name` (a particle stage in both dimensions).
fn entry_points(name: &str) -> Vec<Vec<String>> {
    let sources = if shaders::PARTICLE_STAGES.iter().any(|(n, _)| *n == name) {
        vec![
            shaders::particle_source(name, 2),
            shaders::particle_source(name, 3),
        ]
    } else {
        vec![shaders::source(name)]
    };
    sources
        .iter()
        .map(|src| {
            let module = naga::front::wgsl::parse_str(src)
                .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
            module.entry_points.iter().map(|e| e.name.clone()).collect()
        })
        .collect()
}

/// `fn name(` or `fn name<` in `code`.
fn defines(code: &str, name: &str) -> bool {
    code.contains(&format!("fn {name}(")) || code.contains(&format!("fn {name}<"))
}

fn check_wgsl(row: &Row) {
    for (shader, entries) in &row.wgsl {
        for found in entry_points(shader) {
            for entry in entries {
                assert!(
                    found.contains(entry),
                    "{}: {shader}.wgsl has no entry point {entry} ({found:?})",
                    row.stage
                );
            }
        }
    }
}

#[test]
fn the_grid_stages_have_one_name() {
    let page = read("docs/src/internals/stages.md");
    let rows = table(&page, "The grid fluid");
    let names: Vec<&str> = Stage::ALL.iter().map(|s| s.name()).collect();
    let listed: Vec<&str> = rows.iter().map(|r| r.stage.as_str()).collect();
    assert_eq!(listed, names, "stages.md against Stage::ALL, in step order");
    let (cpu, gpu) = (
        read("src/sim/grid/cpu/mod.rs"),
        read("src/sim/grid/gpu/solver/encode.rs"),
    );
    for (row, stage) in rows.iter().zip(Stage::ALL) {
        assert_eq!(row.cpu, row.stage, "the CPU function is the stage's name");
        assert_eq!(row.gpu, format!("encode_{}", row.stage), "the GPU encoder");
        assert!(defines(&cpu, &row.cpu), "CpuSolver has no fn {}", row.cpu);
        assert!(defines(&gpu, &row.gpu), "GpuSolver has no fn {}", row.gpu);
        check_wgsl(row);
        assert_eq!(stage.label(), format!("grid.{}", row.stage));
        for label in &row.labels {
            let whole = *label == stage.label() && gpu.contains(&format!("{stage:?}.label()"));
            let part = label.starts_with(&format!("{}.", stage.label()))
                && gpu.contains(&format!("\"{label}\""));
            assert!(whole || part, "{}: no pass labelled {label}", row.stage);
        }
    }
}

#[test]
fn the_particle_stages_have_one_name() {
    let page = read("docs/src/internals/stages.md");
    let rows = table(&page, "The particle fluids");
    // Every kernel of the step is a stage's, or the 3D tank's own pass (particle_tank.wgsl).
    let stages: Vec<String> = rows.iter().map(|r| r.gpu.clone()).collect();
    let tank = ["floaters".to_string(), "floaters_keep".to_string()];
    let [two, three] = <[Vec<String>; 2]>::try_from(entry_points("particle_step")).unwrap();
    assert_eq!(two, stages, "particle_step.wgsl's entry points in 2D");
    assert_eq!(three, [stages.as_slice(), &tank].concat(), "and in 3D");
    let cpu = read("src/sim/particles/step.rs") + &read("src/sim/particles/state.rs");
    let gpu = read("src/sim/particles/gpu/step.rs");
    assert_eq!(
        rows.iter().map(|r| r.stage.as_str()).collect::<Vec<_>>(),
        ["predict_and_sort", "densities", "forces", "integrate"],
        "the core's stages, in step order"
    );
    for row in &rows {
        assert_eq!(row.cpu, row.stage, "the CPU function is the stage's name");
        assert!(
            defines(&cpu, &row.cpu),
            "the particle core has no fn {}",
            row.cpu
        );
        assert!(
            gpu.contains(&format!("(\"{}\", &[", row.gpu)),
            "the GPU step's stage table has no {}",
            row.gpu
        );
        let step_entries = row.wgsl.iter().find(|(s, _)| s == "particle_step");
        assert!(
            step_entries.is_some_and(|(_, e)| e.contains(&row.gpu)),
            "{}: its GPU stage is particle_step.wgsl's {}",
            row.stage,
            row.gpu
        );
        check_wgsl(row);
        for label in &row.labels {
            let pattern = label.replace("<room>", "{room}");
            assert!(
                pattern.split(['.', '+']).skip(1).any(|s| s == row.stage),
                "{label} does not name {}",
                row.stage
            );
            assert!(
                gpu.contains(&format!("\"{pattern}\"")),
                "no pass labelled {label}"
            );
        }
    }
}

/// The `pub` fields of `pub struct {name} {` in `code`.
fn fields(code: &str, name: &str) -> Vec<String> {
    let start = code
        .find(&format!("pub struct {name} {{"))
        .unwrap_or_else(|| panic!("no struct {name}"));
    let body = &code[start..];
    let body = &body[..body.find("\n}").expect("the struct ends")];
    body.lines()
        .filter_map(|l| l.trim().strip_prefix("pub "))
        .filter_map(|l| l.split_once(':').map(|(f, _)| f.to_string()))
        .collect()
}

/// The same physics has the same knob name in the 2D fluid and the 3D liquid (and in the
/// core's `Physics` and the GPU step's uniform); each fluid's own knobs are named here too, so
/// a new knob is named once for both or said to be one fluid's.
#[test]
fn the_same_physics_has_the_same_knob_name_in_2d_and_3d() {
    const BOTH: &[&str] = &[
        "gravity",
        "radius",
        "target_density",
        "pressure",
        "near_pressure",
        "viscosity",
        "wall_bounce",
    ];
    const ONLY_2D: &[&str] = &["gravity_dir", "drag"];
    const ONLY_3D: &[&str] = &["bulk_viscosity", "wall_slip"];
    let two = fields(&read("src/sim/sph/mod.rs"), "Knobs");
    let three = fields(&read("src/sim/liquid3d/mod.rs"), "Knobs");
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let named = |extra: &[&str]| sorted(BOTH.iter().chain(extra).map(|s| s.to_string()).collect());
    assert_eq!(sorted(two), named(ONLY_2D), "sph::Knobs");
    assert_eq!(sorted(three), named(ONLY_3D), "liquid3d::Knobs");
    let core = fields(
        &read("src/sim/particles/step.rs"),
        "Physics<const D: usize>",
    );
    let uniform = fields(&read("src/sim/particles/gpu/step.rs"), "StepUniform");
    for knob in ["pressure", "near_pressure", "viscosity", "bulk_viscosity"] {
        assert!(core.iter().any(|f| f == knob), "Physics has no {knob}");
        assert!(
            uniform.iter().any(|f| f == knob),
            "StepUniform has no {knob}"
        );
    }
}

/// Names retired when the stages got one name each do not come back (the plan pages that
/// record them excepted).
#[test]
fn retired_stage_names_stay_retired() {
    const RETIRED: &[&str] = &[
        "Pass: ",
        "density_pass",
        "move_pass",
        "floaters_pass",
        "encode_projection",
        "project_velocity",
        "sph_step",
        "liquid3d_step",
        "key_count",
        "encode_viscosity",
        "encode_compressibility",
        "Stage::Viscosity",
        "Stage::Splat,",
        "wall_damping",
        "near_stiffness",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "shaders", "docs/src", "tests"] {
        collect(&root.join(dir), &mut files);
    }
    let this = root.join("tests/it/vocabulary.rs");
    let plans = ["vocabulary.md", "particle-core.md"];
    for file in files {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if file == this || plans.contains(&name) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for word in RETIRED {
            assert!(
                !text.contains(word),
                "{}: the retired name {word:?}",
                file.display()
            );
        }
    }
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "rs" || e == "wgsl" || e == "md")
        {
            out.push(path);
        }
    }
}
