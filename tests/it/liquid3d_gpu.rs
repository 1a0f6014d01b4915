//! The 3D liquid on the GPU against the CPU reference (sim::liquid3d): a step moves the
//! particles as the CPU's does (to rounding, in the same sorted order), a dam break does the
//! same thing on both over a long run (centre of mass, energy, density), the sources' actions
//! land on the same particles, and the GPU model draws what the CPU model draws and hands its
//! liquid to a CPU model (the fallback after a GPU failure). Runs on any adapter; CI uses
//! lavapipe, so the counts stay small.

use crate::common;

use dyeflow::fluid::{Look, Splat};
use dyeflow::sim::liquid3d::backend::LiquidBackend;
use dyeflow::sim::liquid3d::gpu::GpuLiquid;
use dyeflow::sim::liquid3d::model::Liquid3dModel;
use dyeflow::sim::liquid3d::sources::{Action, Impulse};
use dyeflow::sim::liquid3d::{Knobs, Liquid, SUBSTEP_S};
use dyeflow::sim::model::Model;
use dyeflow::sim::{StepInput, liquid3d};

/// A seeded generator of numbers in -0.5..0.5.
fn noise(seed: u32) -> impl FnMut() -> f32 {
    let mut s = seed;
    move || {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    }
}

/// A block of `n` particles `spacing` apart from `corner`, jittered, with small random
/// velocities, each its own colour (so the order of the particles shows in their colours).
fn block(liquid: &mut Liquid, corner: [f32; 3], n: [usize; 3], spacing: f32) {
    let mut next = noise(12_345);
    for i in 0..n[0] {
        for j in 0..n[1] {
            for k in 0..n[2] {
                let p = [i, j, k].map(|a| a as f32 + 0.5);
                let p = [0, 1, 2].map(|c| corner[c] + (p[c] + 0.2 * next()) * spacing);
                let v = [0.2 * next(), 0.2 * next(), 0.2 * next()];
                let colour = [next() + 0.5, next() + 0.5, next() + 0.5];
                assert!(liquid.add(p, v, colour));
            }
        }
    }
}

/// The dam break of the CPU's test (sim/liquid3d/tests.rs): 896 particles against the left
/// wall of a 0.9 x 1.0 x 0.48 m tank.
fn dam_break() -> Liquid {
    let mut liquid = Liquid::new([0.9, 1.0, 0.48]);
    block(&mut liquid, [0.0; 3], [8, 14, 8], 0.06);
    liquid
}

fn gpu() -> Option<GpuLiquid> {
    let ctx = common::gpu_context()?;
    Some(GpuLiquid::new(ctx).expect("the 3D liquid's pipelines build"))
}

/// The largest differences of positions (m), velocities (over the largest speed) and
/// densities (over the target) between two liquids in the same order.
fn differences(cpu: &Liquid, gpu: &Liquid, target: f32) -> [f32; 3] {
    assert_eq!(cpu.len(), gpu.len());
    let max = |a: &[[f32; 3]], b: &[[f32; 3]]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (0..3).map(|c| (x[c] - y[c]).abs()).fold(0.0, f32::max))
            .fold(0.0f32, f32::max)
    };
    let speed = cpu
        .vel
        .iter()
        .map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
        .fold(0.0f32, f32::max);
    let density = cpu
        .density
        .iter()
        .zip(&gpu.density)
        .map(|(a, b)| (a[0] - b[0]).abs())
        .fold(0.0f32, f32::max);
    [
        max(&cpu.pos, &gpu.pos),
        max(&cpu.vel, &gpu.vel) / speed.max(1e-6),
        density / target,
    ]
}

/// A falling block (gravity, walls, pressure, near pressure, viscosity, bulk viscosity, drag
/// all at work), 10 steps on both: the same particles in the same order (their colours match
/// one for one, so the GPU's sort gave the CPU's order), positions within 2e-5 m (a 3000th of a
/// spacing), velocities within 1e-3 of the largest speed and densities within 1e-4 of the
/// target. The CPU and the GPU compute the same operations in the same order; what is left is
/// the GPU compiler's fused multiply-adds and its division and square root, each within a few
/// units in the last place, grown over 10 steps of a dense liquid.
#[test]
fn gpu_steps_match_the_cpu() {
    let Some(mut gpu) = gpu() else { return };
    let knobs = Knobs::default();
    let mut cpu = dam_break();
    *gpu.liquid_mut() = cpu.clone();
    let keep = 0.995;
    let mut worst = [0.0f32; 3];
    for step in 0..10 {
        LiquidBackend::step(&mut cpu, &knobs, SUBSTEP_S, keep, 1);
        gpu.step(&knobs, SUBSTEP_S, keep, 1);
        let back = gpu.liquid();
        assert_eq!(back.len(), cpu.len());
        if let Some(i) = (0..cpu.len()).find(|&i| back.color[i] != cpu.color[i]) {
            panic!("step {step}: the order differs first at {i}");
        }
        let d = differences(&cpu, back, knobs.target_density);
        worst = [0, 1, 2].map(|c| worst[c].max(d[c]));
    }
    eprintln!(
        "positions {:e} m, velocities {:e}, densities {:e}",
        worst[0], worst[1], worst[2]
    );
    assert!(worst[0] < 2e-5, "positions {worst:?}");
    assert!(worst[1] < 1e-3, "velocities {worst:?}");
    assert!(worst[2] < 1e-4, "densities {worst:?}");
    // It moved: the block fell and spread.
    assert!(cpu.kinetic_energy() > 1.0, "{}", cpu.kinetic_energy());
}

/// Floaters dropped onto a pool, 60 steps on both: the liquid and the balls move alike (each
/// particle, by serial number, within 1e-5 m; the balls' pushes are summed in fixed point on
/// the GPU, in another order than the CPU's: measured 1.3e-6 m), the balls within 1e-5 m and
/// 1e-4 m/s (measured 2e-7 m and 1.6e-6 m/s, 2026-11-28, lavapipe).
#[test]
fn gpu_floaters_match_the_cpu() {
    use dyeflow::sim::liquid3d::floaters::{Floater, RADIUS_H};
    let Some(mut gpu) = gpu() else { return };
    let knobs = Knobs::default();
    let mut cpu = Liquid::new([1.2, 1.0, 0.6]);
    block(&mut cpu, [0.0; 3], [20, 7, 10], 0.06);
    let r = RADIUS_H * knobs.radius;
    cpu.floaters
        .push(Floater::new([0.6, 0.42 + 0.5 * r, 0.3], r));
    cpu.floaters.push(Floater::new([0.3, 0.42 + r, 0.3], r));
    *gpu.liquid_mut() = cpu.clone();
    let mut worst = [0.0f32; 3];
    for step in 0..60 {
        LiquidBackend::step(&mut cpu, &knobs, SUBSTEP_S, 0.995, 1);
        gpu.step(&knobs, SUBSTEP_S, 0.995, 1);
        if step % 10 == 9 {
            let back = gpu.liquid();
            // By serial number: a particle on a cell's edge may sort into the next cell on
            // one and not the other.
            for (a, b) in by_birth(&cpu).iter().zip(&by_birth(back)) {
                assert_eq!(a.0, b.0);
                for c in 0..3 {
                    worst[0] = worst[0].max((a.1[c] - b.1[c]).abs());
                }
            }
            for (a, b) in cpu.floaters.iter().zip(&back.floaters) {
                for c in 0..3 {
                    worst[1] = worst[1].max((a.pos[c] - b.pos[c]).abs());
                    worst[2] = worst[2].max((a.vel[c] - b.vel[c]).abs());
                }
            }
        }
    }
    eprintln!(
        "particles {:e} m, floaters {:e} m and {:e} m/s",
        worst[0], worst[1], worst[2]
    );
    assert!(
        worst[0] < 1e-5 && worst[1] < 1e-5 && worst[2] < 1e-4,
        "{worst:?}"
    );
    assert!(
        cpu.floaters[0].vel[1].abs() > 0.05,
        "the ball moved: {:?}",
        cpu.floaters[0]
    );
}

/// The density's quartiles (25, 50 and 75 %).
fn quartiles(l: &Liquid) -> [f32; 3] {
    let mut d: Vec<f32> = l.density.iter().map(|d| d[0]).collect();
    d.sort_by(f32::total_cmp);
    [d[d.len() / 4], d[d.len() / 2], d[3 * d.len() / 4]]
}

fn centre_of_mass(l: &Liquid) -> [f64; 3] {
    let n = l.len() as f64;
    l.pos.iter().fold([0.0; 3], |c, p| {
        [0, 1, 2].map(|k| c[k] + f64::from(p[k]) / n)
    })
}

/// Over a long horizon (the dam break for 2 simulated seconds, 360 steps) the particles'
/// paths part (a liquid is chaotic: rounding grows), but the liquid does the same thing on
/// both: no particle lost or outside the tank, the centres of mass within 3 cm (a quarter of
/// the smoothing radius), the kinetic energies within 5 % of the energy the fall released, and
/// the density's quartiles within 2 % of the target of each other.
#[test]
fn gpu_long_runs_match_the_cpu_in_aggregate() {
    let Some(mut gpu) = gpu() else { return };
    let knobs = Knobs::default();
    let mut cpu = dam_break();
    let size = cpu.size();
    *gpu.liquid_mut() = cpu.clone();
    let start = cpu.potential_energy(knobs.gravity);
    for _ in 0..360 {
        LiquidBackend::step(&mut cpu, &knobs, SUBSTEP_S, 1.0, 1);
    }
    gpu.step(&knobs, SUBSTEP_S, 1.0, 360);
    let back = gpu.liquid().clone();
    assert_eq!(back.len(), cpu.len());
    assert!(
        back.pos
            .iter()
            .all(|p| (0..3).all(|c| p[c] >= 0.0 && p[c] <= size[c])),
        "a particle left the tank"
    );
    let released = start - cpu.potential_energy(knobs.gravity);
    let (a, b) = (centre_of_mass(&cpu), centre_of_mass(&back));
    let (ka, kb) = (cpu.kinetic_energy(), back.kinetic_energy());
    let (qa, qb) = (quartiles(&cpu), quartiles(&back));
    let apart = (0..3)
        .map(|i| (qa[i] - qb[i]).abs() / knobs.target_density)
        .fold(0.0f32, f32::max);
    let distance = (0..3).map(|c| (a[c] - b[c]).powi(2)).sum::<f64>().sqrt();
    eprintln!(
        "centres {a:.4?} and {b:.4?} ({distance:.4} m apart), kinetic energies {ka:.3} and \
         {kb:.3} J of {released:.2} released, density quartiles {qa:?} and {qb:?}"
    );
    assert!(released > 10.0, "the block fell: {released}");
    assert!(distance < 0.03, "centres {a:?} and {b:?}");
    assert!(
        (ka - kb).abs() < 0.05 * released,
        "{ka} and {kb} of {released}"
    );
    assert!(apart < 0.02, "{qa:?} and {qb:?}");
}

/// A particle: serial number, place, velocity, colour.
type Particle = (u64, [f32; 3], [f32; 3], [f32; 3]);

/// Each particle, by serial number.
fn by_birth(l: &Liquid) -> Vec<Particle> {
    let mut all: Vec<_> = (0..l.len())
        .map(|i| (l.birth[i], l.pos[i], l.vel[i], l.color[i]))
        .collect();
    all.sort_by_key(|x| x.0);
    all
}

/// Shocks, pulls, a slosh and bursts past the budget, in one list: the same particles survive on both
/// (the newest, by serial number), each with the same place, velocity and colour (to 1e-5).
#[test]
fn gpu_sources_match_the_cpu() {
    let Some(mut gpu) = gpu() else { return };
    let mut cpu = dam_break();
    *gpu.liquid_mut() = cpu.clone();
    let mut next = noise(99);
    let mut burst = |n: usize, colour: [f32; 3]| {
        Action::Burst(
            (0..n)
                .map(|_| {
                    let p = [0.45 + 0.1 * next(), 0.7 + 0.1 * next(), 0.24 + 0.1 * next()];
                    (p, [0.0, -1.0, 0.0], colour)
                })
                .collect(),
        )
    };
    let actions = [
        Action::Impulse(Impulse::Shock {
            centre: [0.2, 0.1],
            reach: 0.3,
            force: [2.0, 3.0],
        }),
        burst(200, [1.0, 0.0, 0.0]),
        Action::Impulse(Impulse::Pull {
            centre: [0.3, 0.4],
            reach: 0.25,
            pull: -0.4,
            calm: 0.0,
        }),
        burst(150, [0.0, 1.0, 0.0]),
        Action::Impulse(Impulse::Slosh { push: [0.7, -0.2] }),
        // Broken places land inside the tank (its centre).
        Action::Burst(vec![(
            [f32::NAN, 0.5, 0.5],
            [f32::INFINITY; 3],
            [0.0, 0.0, 1.0],
        )]),
        Action::Impulse(Impulse::Shock {
            centre: [0.45, 0.7],
            reach: 0.2,
            force: [-1.0, 0.5],
        }),
    ];
    // Room for 300 more than the 896 of the block: 51 of the oldest go.
    let budget = 896 + 300;
    cpu.act(&actions, budget);
    gpu.act(&actions, budget);
    let (a, b) = (by_birth(&cpu), by_birth(gpu.liquid()));
    assert_eq!(a.len(), budget);
    assert_eq!(b.len(), budget);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.0, y.0, "the same particles survive");
        for c in 0..3 {
            assert!((x.1[c] - y.1[c]).abs() < 1e-5, "{x:?} against {y:?}");
            assert!((x.2[c] - y.2[c]).abs() < 1e-5, "{x:?} against {y:?}");
        }
        assert_eq!(x.3, y.3);
    }
    // The shocks and the pull moved something.
    assert!(cpu.vel.iter().any(|v| v[0] > 1.0));
}

fn step_input(dt: f32) -> StepInput {
    StepInput {
        dt,
        ..StepInput::default()
    }
}

fn note(x: f32, colour: [f32; 3]) -> Splat {
    Splat {
        pos: [x, 0.5],
        radius: 0.15,
        amount: 4.0,
        color: colour,
        ..Splat::default()
    }
}

/// The GPU model and the CPU model from the same start and the same notes: after a second the
/// same number of particles, centres of mass within 3 cm, and pictures that agree (their mean
/// colours within 3 levels, 95 % of pixels within 40 levels: the liquid's surface moved by
/// rounding moves a few edges). Then the GPU model's snapshot restored into a CPU model (what
/// the engine does when the GPU fails) carries every particle over.
#[test]
fn the_gpu_model_draws_what_the_cpu_model_draws_and_hands_its_liquid_to_the_cpu() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let cells = (160, 90);
    let budget = 2000;
    let gpu = GpuLiquid::new(ctx).expect("pipelines");
    let mut g = Liquid3dModel::with_backend(Box::new(gpu), cells, 2, budget).expect("model");
    let mut c = Liquid3dModel::new(cells, 2, budget).expect("model");
    assert_eq!(g.backend(), "gpu");
    assert_eq!(c.backend(), "cpu");
    let input = StepInput {
        liquid: dyeflow::fluid::Liquid {
            budget: (budget as f32 * 6000.0 / liquid3d::model::DEFAULT_PARTICLES as f32).round()
                as u32,
            ..Default::default()
        },
        ..step_input(1.0 / 60.0)
    };
    for frame in 0..60 {
        for m in [&mut g as &mut dyn Model, &mut c] {
            if frame % 20 == 0 {
                m.inject(&[note(0.3 + 0.02 * frame as f32, [1.0, 0.2, 0.1])]);
            }
            m.advance(&input);
        }
    }
    let (lg, lc) = (g.liquid().clone(), c.liquid().clone());
    assert_eq!(lg.len(), lc.len());
    let (a, b) = (centre_of_mass(&lc), centre_of_mass(&lg));
    let distance = (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>().sqrt();
    assert!(distance < 0.03, "centres {a:?} and {b:?}");
    let (w, h) = (160, 90);
    let look = Look::default();
    let (mut fg, mut fc) = (vec![0u8; w * h * 4], vec![0u8; w * h * 4]);
    g.render(&look, w, h, &mut fg);
    c.render(&look, w, h, &mut fc);
    let mean = |f: &[u8]| f.iter().map(|&v| f64::from(v)).sum::<f64>() / f.len() as f64;
    let near = fg
        .chunks(4)
        .zip(fc.chunks(4))
        .filter(|(x, y)| (0..3).all(|k| x[k].abs_diff(y[k]) <= 40))
        .count();
    eprintln!(
        "{distance:.4} m apart, mean levels {:.2} and {:.2}, {near} of {} pixels within 40",
        mean(&fg),
        mean(&fc),
        w * h
    );
    assert!((mean(&fg) - mean(&fc)).abs() < 3.0);
    assert!(near * 100 >= 95 * w * h, "{near} of {}", w * h);
    // The red notes show (the water alone is a little blue).
    let red = fg
        .chunks(4)
        .filter(|p| i32::from(p[0]) > i32::from(p[2]) + 40 && p[0] > p[1])
        .count();
    assert!(red > 100, "{red} red pixels");
    // The fallback: the GPU model's liquid into a CPU model.
    // (Its tank sized by the same knobs first, so that the liquid is not scaled.)
    let mut fallback = Liquid3dModel::new(cells, 2, budget).expect("model");
    fallback.advance(&StepInput { dt: 0.0, ..input });
    fallback.restore(&g.snapshot());
    let mut moved = fallback.liquid().clone();
    assert_eq!(moved.len(), lg.len());
    let mut want = lg.clone();
    for l in [&mut moved, &mut want] {
        let mut order: Vec<usize> = (0..l.len()).collect();
        order.sort_by_key(|&i| l.birth[i]);
        l.pos = order.iter().map(|&i| l.pos[i]).collect();
    }
    assert_eq!(moved.pos, want.pos, "every particle carried over");
}

/// `create_model` puts the 3D liquid on the GPU when asked (software adapters included), and a
/// device that fails mid-run (here a validation error on its device, as a lost device reports
/// itself) makes the model say so; its snapshot then carries the liquid it last read back (the
/// frame's) into the CPU model the engine falls back to, every particle of it.
#[test]
fn a_failing_gpu_hands_the_last_liquid_it_read_to_the_cpu() {
    use dyeflow::gpu::GpuOptions;
    use dyeflow::sim::model::{Backend, Kind, ModelSpec};
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let spec = |backend| ModelSpec {
        kind: Kind::Liquid3d,
        cells: (64, 36),
        detail: 1,
        effort_sweeps: 20,
        backend,
        gpu: GpuOptions::default(),
        cpu_threads: 1,
    };
    let (model, info) = dyeflow::sim::create_model(&spec(Backend::Gpu)).expect("a model");
    assert_eq!((model.backend(), info.backend), ("gpu", "gpu"), "{info:?}");
    assert_eq!(info.fallback, None);
    drop(model);
    // The same on a device this test can break.
    let gpu = GpuLiquid::new(ctx.clone()).expect("pipelines");
    let mut g = Liquid3dModel::with_backend(Box::new(gpu), (64, 36), 1, 2000).expect("model");
    let input = step_input(1.0 / 60.0);
    g.inject(&[note(0.5, [0.2, 0.9, 0.3])]);
    g.advance(&input);
    let mut frame = vec![0u8; 64 * 36 * 4];
    g.render(&Look::default(), 64, 36, &mut frame);
    let seen = g.liquid().clone();
    assert!(g.failure().is_none());
    // Break it: a buffer larger than any device allows.
    let _ = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("too large"),
        size: u64::MAX / 2,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
    g.advance(&input);
    assert!(g.failure().is_some(), "the failure shows");
    let (mut cpu, info) = dyeflow::sim::create_model(&spec(Backend::Cpu)).expect("a model");
    assert_eq!(info.backend, "cpu");
    cpu.advance(&StepInput { dt: 0.0, ..input });
    assert!(
        cpu.restore(&g.snapshot()),
        "the GPU's snapshot restores on the CPU"
    );
    let (mut a, mut b) = (vec![0u8; 64 * 36 * 4], vec![0u8; 64 * 36 * 4]);
    cpu.render(&Look::default(), 64, 36, &mut a);
    let mut check = Liquid3dModel::new((64, 36), 1, 2000).expect("model");
    check.advance(&StepInput { dt: 0.0, ..input });
    check.set_liquid(seen.clone());
    check.render(&Look::default(), 64, 36, &mut b);
    assert_eq!(a, b, "the CPU draws the liquid the GPU last read back");
    assert!(a.chunks(4).any(|p| p[1] > p[0] + 30), "with its green note");
}

/// The picture's volume splatted on the GPU is the CPU's: a dam break that ran a while (a
/// surface, walls, some particles in the air) with a floater, splatted by both from the same
/// particles: the same grid, every voxel's density and dye within 2e-4 of the bulk's (the
/// GPU's fixed-point sums round each share to 1/65 536; the walls' sums are f32 there and f64
/// on the CPU).
#[test]
fn the_gpu_splat_is_the_cpus() {
    use dyeflow::sim::liquid3d::floaters::Floater;
    let Some(mut gpu) = gpu() else {
        return;
    };
    let mut liquid = dam_break();
    liquid.floaters.push(Floater::new([0.6, 0.5, 0.24], 0.08));
    *gpu.liquid_mut() = liquid;
    let knobs = Knobs::default();
    gpu.step(&knobs, SUBSTEP_S, 1.0, 60);
    let target = knobs.target_density;
    let voxel = 0.75 * liquid3d::spacing(target);
    let g = gpu.volume(voxel, target).expect("the GPU's volume");
    let mut c = dyeflow::display::volume::Volume::default();
    liquid3d::splat::splat(gpu.liquid(), target, voxel, &mut c);
    assert_eq!((g.dims, g.voxel), (c.dims, c.voxel));
    let mass: f32 = c.density.iter().sum();
    assert!(mass > 100.0, "a liquid to splat: {mass}");
    let mut worst = [0.0f32; 2];
    for i in 0..c.density.len() {
        worst[0] = worst[0].max((g.density[i] - c.density[i]).abs());
        for k in 0..3 {
            worst[1] = worst[1].max((g.dye[i][k] - c.dye[i][k]).abs());
        }
    }
    eprintln!(
        "largest differences: density {:.2e}, dye {:.2e}",
        worst[0], worst[1]
    );
    assert!(worst[0] < 2e-4 && worst[1] < 2e-4, "{worst:?}");
    // The bricks made from the GPU's density hold the liquid the CPU's do.
    assert_eq!(g.bricks.len(), c.bricks.len());
    for (a, b) in g.bricks.iter().zip(&c.bricks) {
        assert!((a - b).abs() < 2e-4);
    }
}

/// A scene of the ray march's: a pool with a dyed blob and a ball in a tilted tank, seen from
/// above and in front, the sun high on one side.
fn march_scene() -> (
    dyeflow::display::volume::Volume,
    dyeflow::display::volume::Scene,
    Vec<dyeflow::display::volume::Ball>,
) {
    use dyeflow::display::volume::{Ball, Camera, Scene, Tank, Volume, normalize_or};
    let size = [1.6, 0.9, 0.9];
    let voxel = 0.05;
    let mut vol = Volume::default();
    let dims = size.map(|s| (s / voxel) as usize);
    vol.clear(dims, voxel);
    for z in 0..dims[2] {
        for y in 0..dims[1] {
            for x in 0..dims[0] {
                let p = [x, y, z].map(|a| (a as f32 + 0.5) * voxel);
                // A pool 0.4 m deep with a wave, and a blob of red dye in it.
                let level = 0.4 + 0.06 * (p[0] * 5.0).sin();
                let d = ((level - p[1]) / voxel + 0.5).clamp(0.0, 1.0);
                let r2 = (p[0] - 0.5).powi(2) + (p[1] - 0.2).powi(2) + (p[2] - 0.45).powi(2);
                let dye = if r2 < 0.04 {
                    [1.0, 0.1, 0.05]
                } else {
                    [1.0, 1.0, 1.0]
                };
                let i = vol.index(x, y, z);
                vol.density[i] = d;
                vol.dye[i] = dye.map(|c| c * d);
            }
        }
    }
    vol.finish();
    let tank = Tank::standing(size, 8.0);
    let centre = tank.centre();
    let scene = Scene {
        camera: Camera::orbit(centre, 25.0, 28.0, 2.6, 45.0),
        tank,
        sun: normalize_or([0.5, 0.8, 0.3], [0.0, 1.0, 0.0]),
    };
    let balls = vec![Ball {
        centre: [1.15, 0.42, 0.45],
        radius: 0.1,
        color: [0.95, 0.8, 0.1],
    }];
    (vol, scene, balls)
}

/// The ray march on the GPU draws the CPU's light: the same volume, scene and balls marched by
/// both at 160 x 90 rays; the mean light within 1 % of each other, 97 % of the rays within
/// 3 % (plus 0.005) per colour (a ray grazing the surface or an edge may land a step apart),
/// and as many rays of the red dye and of the yellow ball on both (within a tenth).
#[test]
fn the_gpu_ray_march_draws_the_cpus_light() {
    use dyeflow::display::cpu::raymarch::{Quality, RayMarch};
    use dyeflow::display::gpu::raymarch::{GpuRayMarch, GpuVolume};
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let (vol, scene, balls) = march_scene();
    let quality = Quality {
        scale: 1.0,
        max_rays: 0,
        voxel: 0.75,
    };
    let size = (160, 90);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool");
    let mut cpu = RayMarch::default();
    cpu.draw(&vol, (&scene, &balls), size, quality, &pool);
    let mut gv = GpuVolume::new(&ctx.device);
    gv.upload(&ctx, &vol, &balls);
    let mut gpu = GpuRayMarch::new(&ctx.device);
    let (planes, got) = gpu.draw_planes(&ctx, &gv, &scene, size, quality);
    assert_eq!(got, cpu.size);
    let n = got.0 * got.1;
    let mean = |p: &[Vec<f32>; 3]| p.iter().map(|c| c.iter().sum::<f32>()).sum::<f32>() / n as f32;
    let (mg, mc) = (mean(&planes), mean(&cpu.planes));
    let close = (0..n)
        .filter(|&i| {
            (0..3).all(|k| {
                let (a, b) = (planes[k][i], cpu.planes[k][i]);
                (a - b).abs() <= 0.03 * a.abs().max(b.abs()) + 0.005
            })
        })
        .count();
    eprintln!("mean light {mg:.4} (GPU) and {mc:.4} (CPU); {close} of {n} rays within 3 %");
    assert!((mg - mc).abs() < 0.01 * mc, "{mg} against {mc}");
    assert!(close * 100 >= 97 * n, "{close} of {n}");
    // Red dye, the yellow ball: as many rays of each on both.
    let count = |p: &[Vec<f32>; 3], f: &dyn Fn(f32, f32, f32) -> bool| {
        (0..n).filter(|&i| f(p[0][i], p[1][i], p[2][i])).count()
    };
    let red = |r: f32, g: f32, b: f32| r > 2.0 * g && r > 2.0 * b && r > 0.05;
    let yellow = |r: f32, g: f32, b: f32| r > 0.2 && g > 0.6 * r && b < 0.4 * g;
    for (name, f) in [
        ("red", &red as &dyn Fn(f32, f32, f32) -> bool),
        ("yellow", &yellow),
    ] {
        let (a, b) = (count(&planes, f), count(&cpu.planes, f));
        eprintln!("{name}: {a} rays (GPU), {b} (CPU)");
        assert!(b > 20, "the scene shows {name}: {b}");
        assert!(a.abs_diff(b) <= b / 10 + 2, "{name}: {a} against {b}");
    }
}

/// The GPU's floaters' places reach the host without a read-back of the particles: after
/// steps that move a floater, `refresh_floaters` (once the copy has landed) gives the places
/// the GPU holds, which a full read-back then confirms.
#[test]
fn the_gpu_floaters_places_come_back_without_the_particles() {
    use dyeflow::sim::liquid3d::floaters::Floater;
    let Some(mut gpu) = gpu() else {
        return;
    };
    let mut liquid = dam_break();
    let start = [0.6, 0.8, 0.24];
    liquid.floaters.push(Floater::new(start, 0.06));
    *gpu.liquid_mut() = liquid;
    gpu.step(&Knobs::default(), SUBSTEP_S, 1.0, 30);
    LiquidBackend::wait(&mut gpu);
    gpu.refresh_floaters();
    let seen = gpu.floaters()[0].pos;
    assert!(start[1] - seen[1] > 0.01, "the floater fell: {seen:?}");
    let read = gpu.liquid().floaters[0].pos;
    for k in 0..3 {
        assert!(
            (seen[k] - read[k]).abs() < 1e-6,
            "{seen:?} against {read:?}"
        );
    }
}
