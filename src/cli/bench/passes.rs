//! The `passes` table of `dyeflow bench --backend gpu --json`: each compute pass of a grid
//! step timed on its own with timestamp queries, so that every claim about where a step's time
//! goes (and what fusing passes saves) can be read off a run.

use super::{BenchOptions, median, scene_heat_params, scene_params};
use crate::sim::Solver;
use crate::sim::grid::gpu::GpuSolver;
use crate::sim::grid::gpu::solver::PassSample;
use serde::Serialize;

/// Steps timed pass by pass (after the scene's steps, in its free flow).
pub const PASS_STEPS: usize = 20;

/// One row of the table: a compute pass (its label, the stage it belongs to) and its GPU time.
#[derive(Clone, Debug, Serialize)]
pub struct PassTime {
    /// The pass's label, as a GPU debugger shows it ("grid.project.solve", ...).
    pub pass: String,
    /// Median GPU time of the pass over the steps it ran in, ms (when a step runs a label in
    /// more than one pass, their sum).
    pub ms: f64,
    /// Steps of the [`PASS_STEPS`] (frames of the [`PASS_FRAMES`]) it ran in.
    pub steps: usize,
    /// Median dispatches of the pass in a step (indirect ones of size zero too: each still
    /// costs a barrier).
    pub dispatches: u32,
    /// Its share of the sum of the medians, in per cent.
    pub share: f64,
}

/// Time [`PASS_STEPS`] more steps of the scene pass by pass; `None` when the adapter has no
/// timestamps.
pub fn time(solver: &mut GpuSolver, opts: &BenchOptions) -> Option<Vec<PassTime>> {
    let params = if opts.heat {
        scene_heat_params()
    } else {
        scene_params()
    };
    solver.set_time_passes(true);
    for _ in 0..PASS_STEPS {
        solver.step(&params);
    }
    let rows = rows(solver.pass_samples());
    solver.set_time_passes(false);
    (!rows.is_empty()).then_some(rows)
}

/// Frames drawn pass by pass for the `frame_passes` table.
pub const PASS_FRAMES: usize = 20;

/// Draw [`PASS_FRAMES`] frames of `size` in `look` pass by pass (the display pipeline's
/// stages in a pass each); `None` when the adapter has no timestamps.
pub fn time_frames(
    solver: &mut GpuSolver,
    look: &crate::fluid::Look,
    (w, h): (usize, usize),
) -> Option<Vec<PassTime>> {
    let mut frame = vec![0u8; w * h * 4];
    solver.set_time_frame_passes(true);
    for _ in 0..PASS_FRAMES {
        solver.render(look, w, h, &mut frame);
    }
    let rows = rows(solver.frame_pass_samples());
    solver.set_time_frame_passes(false);
    (!rows.is_empty()).then_some(rows)
}

/// The table of `samples`: each label's median time and dispatches, and its share.
fn rows(samples: &[(String, Vec<PassSample>)]) -> Vec<PassTime> {
    let mut rows: Vec<PassTime> = samples
        .iter()
        .map(|(pass, samples)| {
            let mut ms: Vec<f64> = samples.iter().map(|s| s.ms).collect();
            let mut dispatches: Vec<f64> =
                samples.iter().map(|s| f64::from(s.dispatches)).collect();
            PassTime {
                pass: pass.clone(),
                ms: median(&mut ms),
                steps: samples.len(),
                dispatches: median(&mut dispatches).round() as u32,
                share: 0.0,
            }
        })
        .collect();
    let total: f64 = rows.iter().map(|r| r.ms).sum();
    for r in &mut rows {
        r.share = 100.0 * r.ms / total.max(1e-12);
    }
    rows
}
