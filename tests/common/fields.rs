//! Fields for parity tests: a lively starting state and a relative difference.

use dyeflow::sim::grid::Fields;
use dyeflow::sim::grid::physics::extra_iterations;
use dyeflow::sim::{SimConfig, Solver, Stage, StepInput, StepStats};
use rand::Rng;

/// A `w x h` grid with two multigrid V-cycles and dye at the grid's resolution: the parity
/// tests' small, fast solver.
pub fn multigrid_config(w: usize, h: usize) -> SimConfig {
    SimConfig {
        pressure: dyeflow::sim::PressureMethod::Multigrid,
        pressure_iterations: 2,
        dye_scale: 1,
        ..SimConfig::new(w, h)
    }
}

/// A smooth, lively starting state.
pub fn start(cfg: &SimConfig) -> Fields {
    let mut f = Fields::zeros(cfg);
    let (w, h) = (f.width, f.height);
    let mut rng = super::rng(21);
    let phase: f32 = rng.random_range(0.0..6.0);
    for j in 0..h {
        for i in 1..w {
            let (x, y) = (i as f32 / w as f32, (j as f32 + 0.5) / h as f32);
            f.u[j * (w + 1) + i] = 0.8 * (6.0 * y + phase).sin() * (3.0 * x).sin();
        }
    }
    for j in 1..h {
        for i in 0..w {
            let (x, y) = ((i as f32 + 0.5) / w as f32, j as f32 / h as f32);
            f.v[j * w + i] = 0.6 * (5.0 * x + phase).cos() * (2.0 * y).sin();
        }
    }
    let (dw, dh) = (f.dye_width, f.dye_height);
    for (c, plane) in f.dye.iter_mut().enumerate() {
        for j in 0..dh {
            for i in 0..dw {
                let (x, y) = (i as f32 / dw as f32, j as f32 / dh as f32);
                plane[j * dw + i] = (1.0 + (7.0 * x + 3.0 * y + c as f32).sin()).max(0.0);
            }
        }
    }
    f
}

/// Largest difference relative to the larger field's largest magnitude (0 for equal fields).
pub fn rel_max(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    let scale = a
        .iter()
        .chain(b)
        .fold(0.0f32, |m, x| m.max(x.abs()))
        .max(1e-12);
    a.iter()
        .zip(b)
        .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

/// The parameters the stage-by-stage parity tests run `stage` with, from `p`: the
/// compressibility check chooses extra iterations only after a long trace through a
/// compressible flow (a step of 0.1 s at these speeds traces 2.5 cells); the lift gets heavy
/// dye and an ambient temperature above the fluid's (no heat: the heat passes have their own
/// tests), lifting up and to the right.
pub fn stage_params(stage: Stage, p: StepInput) -> StepInput {
    match stage {
        Stage::CheckCompressibility => StepInput { dt: 0.1, ..p },
        Stage::AddBuoyancy => StepInput {
            buoyancy: 1.0,
            weight: 0.8,
            ambient: 0.3,
            up: [0.6, 0.8],
            ..p
        },
        _ => p,
    }
}

/// Before the stage-by-stage parity tests run `stage` on both solvers: the compressibility
/// check's decision reads the last velocity advection, so for it the CPU advects the velocity
/// and both solvers start from its result.
pub fn prepare_stage(cpu: &mut impl Solver, gpu: &mut impl Solver, stage: Stage, p: &StepInput) {
    if stage == Stage::CheckCompressibility {
        cpu.run_stage(Stage::AdvectVelocity, p);
        let f = cpu.read_fields();
        cpu.write_fields(&f);
        gpu.write_fields(&f);
    }
}

/// Run `stage` with `p` on both solvers and return what each measured. The compressibility
/// check moves nothing itself, so after it the projection runs too, with the extra iterations
/// the check chose (`p` makes the flow compressible: see [`stage_params`]), and the CPU must
/// count them; its statistics are returned.
pub fn run_stage_on_both(
    cpu: &mut impl Solver,
    gpu: &mut impl Solver,
    stage: Stage,
    p: &StepInput,
    what: &str,
) -> (StepStats, StepStats) {
    let before = (stage == Stage::CheckCompressibility).then(|| cpu.read_fields());
    let (a, b) = (cpu.run_stage(stage, p), gpu.run_stage(stage, p));
    let Some(before) = before else {
        return (a, b);
    };
    assert!(
        cpu.read_fields() == before,
        "{what}: the check moved the flow"
    );
    let (a, b) = (
        cpu.run_stage(Stage::Project, p),
        gpu.run_stage(Stage::Project, p),
    );
    let cfg = cpu.config();
    let iters = cfg.pressure_iterations;
    assert_eq!(
        a.pressure_iterations,
        iters + extra_iterations(cfg.pressure, iters),
        "{what}: no extra iterations after a compressible advection"
    );
    (a, b)
}
