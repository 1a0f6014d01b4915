//! The obstacle overlay (obstacles drawn over the finished frame) on the CPU and the GPU: the
//! same pixels within one 8-bit level (both blend in f32 and round; the GPU may fuse a
//! multiply-add the CPU rounds twice), over the final picture in both tone modes. Runs on any
//! Vulkan/Metal/DX12 adapter; CI uses Mesa's lavapipe.

use crate::common;

use dyeflow::fluid::{
    ColorMode, Effects, Look, OBSTACLE_FILL_RGB8, OBSTACLE_OUTLINE_RGB8, ObstacleStyle, ToneMode,
};
use dyeflow::sim::grid::Fields;
use dyeflow::sim::grid::cpu::CpuSolver;
use dyeflow::sim::grid::gpu::GpuSolver;
use dyeflow::sim::obstacles::{Layout, Mask};
use dyeflow::sim::{SimConfig, Solver};

fn config() -> SimConfig {
    SimConfig {
        dye_scale: 2,
        ..SimConfig::new(48, 27)
    }
}

/// Pillars, a ring, and a brush stroke across the bottom: edges at every angle.
fn mask(cfg: &SimConfig) -> Mask {
    let (w, h) = (cfg.width, cfg.height);
    let mut m = Mask::layout(Layout::Pillars, w, h);
    let ring = Mask::layout(Layout::Ring, w, h);
    for j in 0..h {
        for i in 0..w {
            if ring.is_solid(i, j) {
                m.set(i, j, true);
            }
        }
    }
    for k in 0..20 {
        m.paint_disc([0.1 + 0.07 * k as f32, 0.12 + 0.02 * k as f32], 0.03, true);
    }
    m
}

/// Dye everywhere, so the overlay blends over colour.
fn fields(cfg: &SimConfig) -> Fields {
    let mut f = Fields::zeros(cfg);
    let (dw, dh) = (f.dye_width, f.dye_height);
    for (c, plane) in f.dye.iter_mut().enumerate() {
        for j in 0..dh {
            for i in 0..dw {
                let (x, y) = (i as f32 / dw as f32, j as f32 / dh as f32);
                plane[j * dw + i] = 0.6 * (1.0 + (5.0 * x + 4.0 * y + 2.0 * c as f32).sin());
            }
        }
    }
    f
}

/// The fields with the dye inside the solids cleared (as the CPU solver keeps them), so the
/// GPU (whose physics do not see obstacles yet) and the solvers without obstacles hold the
/// very same fluid.
fn cleared(cfg: &SimConfig) -> Fields {
    let mut cpu = CpuSolver::new(cfg, 1).unwrap();
    cpu.set_obstacles(Some(&mask(cfg)));
    cpu.write_fields(&fields(cfg));
    cpu.read_fields()
}

fn solvers(with_obstacles: bool) -> Option<(CpuSolver, GpuSolver)> {
    let ctx = common::gpu_context()?;
    let cfg = config();
    let mut cpu = CpuSolver::new(&cfg, 2).unwrap();
    let mut gpu = GpuSolver::new(ctx, &cfg).unwrap();
    let (m, f) = (mask(&cfg), cleared(&cfg));
    for s in [&mut cpu as &mut dyn Solver, &mut gpu] {
        if with_obstacles {
            s.set_obstacles(Some(&m));
        }
        s.write_fields(&f);
    }
    Some((cpu, gpu))
}

/// The default parameters' effects (bloom, rays, shading, background).
fn show() -> Effects {
    let params = dyeflow::params::DyeflowParams::default();
    let palette = dyeflow::engine::Discrete::from_params(&params).palette;
    dyeflow::engine::Knobs::from_params(&params)
        .look(ColorMode::Dye, ToneMode::Filmic, palette)
        .effects
}

fn looks() -> Vec<Look> {
    let mut out = Vec::new();
    for tone in [ToneMode::Legacy, ToneMode::Filmic] {
        for effects in [Effects::OFF, show()] {
            for obstacles in [
                ObstacleStyle::Fill,
                ObstacleStyle::Outline,
                ObstacleStyle::Hidden,
            ] {
                out.push(Look {
                    color_mode: ColorMode::Dye,
                    tone,
                    effects,
                    obstacles,
                    ..Look::default()
                });
            }
        }
    }
    out
}

fn worst(a: &[u8], b: &[u8]) -> u8 {
    a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).max().unwrap()
}

/// At sizes finer and coarser than the grid, and not multiples of it: the overlay adds at
/// most one level to what the two pictures already differ by, and where the CPU shows the
/// fill (or outline) colour fully, so does the GPU: the GPU draws it last, over the display
/// pass's frame.
#[test]
fn cpu_and_gpu_draw_the_same_obstacles() {
    let Some((mut cpu, mut gpu)) = solvers(true) else {
        return;
    };
    let Some((mut cpu_plain, mut gpu_plain)) = solvers(false) else {
        return;
    };
    for (w, h) in [(161, 91), (40, 23), (480, 270)] {
        for look in looks() {
            let frame = |s: &mut dyn Solver| {
                let mut out = vec![0u8; w * h * 4];
                s.render(&look, w, h, &mut out);
                out
            };
            let (a, b) = (frame(&mut cpu), frame(&mut gpu));
            let base = worst(&frame(&mut cpu_plain), &frame(&mut gpu_plain));
            let diff = worst(&a, &b);
            assert!(
                diff <= base + 1,
                "{w}x{h} {:?} {:?} {:?}: the overlay differs by {diff} levels (the picture \
                 without it by {base})",
                look.tone,
                look.obstacles,
                look.effects == Effects::OFF,
            );
            let colour = match look.obstacles {
                ObstacleStyle::Fill => OBSTACLE_FILL_RGB8,
                ObstacleStyle::Outline => OBSTACLE_OUTLINE_RGB8,
                ObstacleStyle::Hidden => continue,
            };
            let full = |f: &[u8], i: usize| f[4 * i..4 * i + 3] == colour;
            let drawn: Vec<usize> = (0..w * h).filter(|&i| full(&a, i)).collect();
            assert!(
                drawn.len() > 10,
                "{w}x{h} {:?}: only {} pixels show the obstacles",
                look.obstacles,
                drawn.len()
            );
            let missing = drawn.iter().filter(|&&i| !full(&b, i)).count();
            assert!(
                missing * 100 <= drawn.len(),
                "{w}x{h} {:?}: {missing} of {} fully drawn pixels differ on the GPU",
                look.obstacles,
                drawn.len()
            );
        }
    }
    // Hidden draws nothing: the picture is the one without obstacles (the fields are equal).
    let (w, h) = (161, 91);
    let hidden = Look {
        obstacles: ObstacleStyle::Hidden,
        tone: ToneMode::Legacy,
        ..Look::default()
    };
    let (mut a, mut b) = (vec![0u8; w * h * 4], vec![0u8; w * h * 4]);
    gpu.render(&hidden, w, h, &mut a);
    gpu_plain.render(&hidden, w, h, &mut b);
    assert!(a == b, "Hidden drew something");
}

/// Taking the obstacles away (or an empty mask) stops the drawing on the GPU too.
#[test]
fn clearing_the_obstacles_clears_the_overlay() {
    let Some((_, mut gpu)) = solvers(true) else {
        return;
    };
    let Some((_, mut plain)) = solvers(false) else {
        return;
    };
    let look = Look {
        tone: ToneMode::Legacy,
        ..Look::default()
    };
    let (w, h) = (96, 54);
    let render = |s: &mut GpuSolver| {
        let mut out = vec![0u8; w * h * 4];
        s.render(&look, w, h, &mut out);
        out
    };
    let with = render(&mut gpu);
    gpu.set_obstacles(Some(&Mask::empty(48, 27)));
    assert!(gpu.obstacles().is_none());
    let without = render(&mut gpu);
    assert!(with != without, "the obstacles never showed");
    assert!(without == render(&mut plain), "the obstacles still show");
}
