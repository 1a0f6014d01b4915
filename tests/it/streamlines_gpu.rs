//! Streamlines on the GPU solver against the CPU solver (the reference): the same flow (the
//! CPU's fields written into both), the same lines, pixel for pixel, alone and over the
//! picture, among pillars. Runs on any adapter; CI uses lavapipe, so the grids stay small.

use crate::common;

use dyeflow::display::streamlines::StreamlineLook;
use dyeflow::fluid::{Look, StreamlineMode};
use dyeflow::sim::grid::cpu::CpuSolver;
use dyeflow::sim::grid::gpu::GpuSolver;
use dyeflow::sim::obstacles::{Layout, Mask};
use dyeflow::sim::{Solver, StepInput};

/// Pixels of `a` and `b` (RGBA8) whose largest channel difference is above `by`.
fn differing(a: &[u8], b: &[u8], by: u8) -> usize {
    a.chunks(4)
        .zip(b.chunks(4))
        .filter(|(p, q)| p.iter().zip(*q).any(|(x, y)| x.abs_diff(*y) > by))
        .count()
}

/// A busy flow among pillars, 40 steps on the CPU, then both solvers hold its fields and draw
/// its streamlines at 240x160. Alone (only the lines), 99.5 % of the pixels are identical and
/// 99.9 % within 2 levels (lavapipe, 2026-11: 2 of 38 400 pixels differ alone, 13 over the
/// picture, none by more than 2 levels; a vertex that lands on
/// a wall or a solid face in one and just off it in the other ends a line a step early, and a
/// quantised code may round the other way). Over the picture, the same bound: the picture's
/// own difference (a level on a few pixels) adds to it.
#[test]
fn gpu_streamlines_match_the_cpu() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let (w, h) = (48, 32);
    let cfg = common::fields::multigrid_config(w, h);
    let mut gpu = GpuSolver::new(ctx, &cfg).unwrap_or_else(|e| panic!("GPU solver: {e}"));
    let mut cpu = CpuSolver::new(&cfg, 2).unwrap();
    let mask = Mask::layout(Layout::Pillars, w, h);
    cpu.set_obstacles(Some(&mask));
    gpu.set_obstacles(Some(&mask));
    let p = StepInput {
        dt: 1.0 / 60.0,
        vorticity: 0.3,
        ..StepInput::default()
    };
    for k in 0..40 {
        cpu.inject(&[common::busy_splat(k)]);
        cpu.step(&p);
    }
    gpu.write_fields(&cpu.read_fields());
    let (fw, fh) = (240, 160);
    for mode in [StreamlineMode::Alone, StreamlineMode::Overlay] {
        let look = Look {
            streamlines: StreamlineLook {
                mode,
                density: 24,
                steps: 12,
                length: 0.3,
            },
            ..Look::default()
        };
        let (mut a, mut b) = (vec![0u8; fw * fh * 4], vec![0u8; fw * fh * 4]);
        cpu.render(&look, fw, fh, &mut a);
        gpu.render(&look, fw, fh, &mut b);
        let lit = a
            .chunks(4)
            .filter(|p| p[..3] != [0, 0, 0] && p[..3] != [88, 96, 112])
            .count();
        let (exact, within2) = (differing(&a, &b, 0), differing(&a, &b, 2));
        eprintln!("{mode:?}: {lit} lit pixels, {exact} differ, {within2} by more than 2 levels");
        assert!(lit > fw * fh / 10, "the lines show: {lit}");
        assert!(exact * 200 <= fw * fh, "{exact} pixels differ");
        assert!(
            within2 * 1000 <= fw * fh,
            "{within2} pixels differ by more than 2"
        );
    }
    // Off: no pass, the frame is the picture's.
    let (mut a, mut b) = (vec![0u8; fw * fh * 4], vec![0u8; fw * fh * 4]);
    gpu.render(&Look::default(), fw, fh, &mut a);
    cpu.render(&Look::default(), fw, fh, &mut b);
    assert!(differing(&a, &b, 1) * 1000 <= fw * fh);
}
