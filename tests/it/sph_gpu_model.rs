//! The particle fluid's GPU model behind the engine against its CPU model: the same particles
//! draw the same frames (the light splatted on the GPU, through the GPU's display pipeline),
//! the same events make the same liquid, a lowered budget keeps the newest particles, the rest
//! probe reads back without waiting, and snapshots carry the liquid between the two. Runs on
//! any adapter; CI uses lavapipe, so the counts stay small.

use crate::common;

use dyeflow::fluid::{
    ColorMode, Liquid, LiquidStyle, Look, Splat, SplatShape, StreamlineLook, StreamlineMode,
};
use dyeflow::sim::create_model;
use dyeflow::sim::model::{Backend, Kind, Model, ModelSpec};
use dyeflow::sim::obstacles::{Layout, Mask};
use dyeflow::sim::sph::Fluid;
use dyeflow::sim::sph::model::SphModel;
use dyeflow::sim::{GpuOptions, StepInput};

const CELLS: (usize, usize) = (64, 36);

fn gpu_model(budget: usize) -> Option<SphModel> {
    let ctx = common::gpu_context()?;
    Some(SphModel::on_gpu(ctx, CELLS, budget).expect("a GPU particle model"))
}

fn cpu_model(budget: usize) -> SphModel {
    SphModel::new(CELLS, 1, budget).expect("a CPU particle model")
}

fn params(dt: f32, budget: u32) -> StepInput {
    StepInput {
        dt,
        liquid: Liquid {
            budget,
            ..Liquid::default()
        },
        ..StepInput::default()
    }
}

fn note(x: f32, y: f32, color: [f32; 3]) -> Splat {
    Splat {
        pos: [x, y],
        radius: 0.06,
        color,
        amount: 1.0,
        force: [0.3, 0.5],
        ..Splat::default()
    }
}

/// A pool of 1 200 particles in three colours, some moving: the same on both models.
fn pool() -> Fluid {
    let mut f = Fluid::new(CELLS.0 as f32 / CELLS.1 as f32);
    let colours = [[1.0, 0.2, 0.1], [0.1, 0.9, 0.3], [0.2, 0.3, 1.0]];
    for k in 0..1200 {
        let (i, j) = (k % 60, k / 60);
        let p = [1.0 + 0.14 * i as f32, 0.5 + 0.14 * j as f32];
        let v = [((k * 7) % 13) as f32 - 6.0, ((k * 5) % 11) as f32 - 5.0];
        f.add(p, v, colours[k / 400]);
    }
    f
}

/// Channel differences between two RGBA8 frames: the largest, and the pixels that differ.
fn compare(a: &[u8], b: &[u8]) -> (u8, usize) {
    let worst = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0);
    let differing = a.chunks(4).zip(b.chunks(4)).filter(|(x, y)| x != y).count();
    (worst, differing)
}

/// The same particles make the same frames in both looks and both colourings, at two sizes
/// (the discs follow the frame's height). The light's sums are fixed point on the GPU (1/16 384
/// a particle's share) and the display pipelines agree to 1 level in 1 % of pixels
/// (tests/it/gpu_parity.rs): at most 2 levels apart, in at most 2 % of the pixels.
#[test]
fn gpu_frames_match_the_cpu_frames() {
    let Some(mut gpu) = gpu_model(5000) else {
        return;
    };
    let mut cpu = cpu_model(5000);
    cpu.set_fluid(pool());
    assert!(
        gpu.restore(&cpu.snapshot()),
        "a CPU snapshot restores on the GPU"
    );
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for style in [LiquidStyle::Surface, LiquidStyle::Discs] {
        for color_mode in [ColorMode::Dye, ColorMode::VelocityHue] {
            for (w, h) in [(160, 90), (96, 54)] {
                let look = Look {
                    liquid: style,
                    color_mode,
                    ..Look::default()
                };
                a.resize(w * h * 4, 0);
                b.resize(w * h * 4, 0);
                cpu.render(&look, w, h, &mut a);
                gpu.render(&look, w, h, &mut b);
                let (worst, differing) = compare(&a, &b);
                let what = format!("{style:?} {color_mode:?} {w}x{h}");
                eprintln!("{what}: worst {worst}, {differing} pixels differ");
                let lit = a
                    .chunks(4)
                    .filter(|p| p[..3].iter().any(|&c| c > 40))
                    .count();
                assert!(
                    lit * 10 > w * h,
                    "{what}: the pool lights the frame ({lit})"
                );
                assert!(worst <= 2, "{what}: a channel differs by {worst}");
                assert!(
                    differing * 50 <= w * h,
                    "{what}: {differing} of {} pixels differ",
                    w * h
                );
            }
        }
    }
    // With obstacles (a ring), drawn over the frame from the model's mask on both.
    let ring = Mask::layout(Layout::Ring, 4 * CELLS.0, 4 * CELLS.1);
    cpu.set_obstacles(Some(&ring));
    gpu.set_obstacles(Some(&ring));
    for style in [LiquidStyle::Surface, LiquidStyle::Discs] {
        let look = Look {
            liquid: style,
            ..Look::default()
        };
        let (w, h) = (320, 180);
        a.resize(w * h * 4, 0);
        b.resize(w * h * 4, 0);
        cpu.render(&look, w, h, &mut a);
        gpu.render(&look, w, h, &mut b);
        let (worst, differing) = compare(&a, &b);
        eprintln!("{style:?} with a ring: worst {worst}, {differing} pixels differ");
        assert!(
            worst <= 2 && differing * 50 <= w * h,
            "{style:?} with a ring"
        );
    }
    cpu.set_obstacles(None);
    gpu.set_obstacles(None);
    // The particle fluid has no streamlines to trace: a look asking for them shows the liquid
    // as without (as the CPU model does; not a black frame under lines alone).
    let (w, h) = (96, 54);
    a.resize(w * h * 4, 0);
    b.resize(w * h * 4, 0);
    gpu.render(&Look::default(), w, h, &mut a);
    for mode in [StreamlineMode::Overlay, StreamlineMode::Alone] {
        let look = Look {
            streamlines: StreamlineLook {
                mode,
                ..StreamlineLook::default()
            },
            ..Look::default()
        };
        gpu.render(&look, w, h, &mut b);
        assert!(a == b, "streamlines {mode:?} changed the liquid's frame");
    }
    // Switching looks remakes the light field: the frames after a switch back are the first
    // ones again, bit for bit.
    let discs = Look {
        liquid: LiquidStyle::Discs,
        ..Look::default()
    };
    let mut c = vec![0; w * h * 4];
    gpu.render(&discs, w, h, &mut c);
    for _ in 0..3 {
        gpu.render(&Look::default(), w, h, &mut b);
        assert!(a == b, "the surface after the discs");
        gpu.render(&discs, w, h, &mut b);
        assert!(b == c, "the discs after the surface");
    }
    // Frames without waiting, as the editor asks for them.
    let look = Look::default();
    assert!(gpu.request_frame(&look, 96, 54));
    let mut got = None;
    for _ in 0..200 {
        got = gpu.take_frame(&mut b);
        if got.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(got, Some((96, 54)), "a requested frame arrives");
    a.resize(96 * 54 * 4, 0);
    cpu.render(&look, 96, 54, &mut a);
    assert!(
        compare(&a, &b).0 <= 2,
        "the requested frame is the rendered one"
    );
}

/// The same notes, shocks and pulls into both models over 10 frames: the same particles
/// (counts, colours and serial numbers exactly), in about the same places (centre of mass
/// within 1 % of the box height: rounding grows over 30 sub-steps of a splashing liquid).
#[test]
fn the_gpu_model_follows_the_cpu_model() {
    let Some(mut gpu) = gpu_model(600) else {
        return;
    };
    let mut cpu = cpu_model(600);
    let events = [
        note(0.3, 0.6, [1.0, 0.0, 0.0]),
        note(1.2, 0.5, [0.0, 1.0, 0.0]),
        Splat {
            pos: [0.5, 0.3],
            radius: 0.1,
            force: [2.0, 1.0],
            ..Splat::default()
        },
        Splat {
            pos: [1.0, 0.4],
            radius: 0.3,
            force: [3.0, 0.0],
            shape: SplatShape::Radial,
            amount: 0.0,
            ..Splat::default()
        },
    ];
    for frame in 0..10 {
        if frame % 3 == 0 {
            for m in [&mut cpu as &mut dyn Model, &mut gpu] {
                m.inject(&events);
            }
        }
        cpu.advance(&params(1.0 / 60.0, 600));
        gpu.advance(&params(1.0 / 60.0, 600));
    }
    assert!(gpu.failure().is_none(), "{:?}", gpu.failure());
    let (c, g) = (cpu.fluid().clone(), gpu.fluid().clone());
    assert_eq!(g.len(), c.len(), "particle counts");
    assert!(c.len() > 100, "the notes made particles: {}", c.len());
    let key = |f: &Fluid| {
        let mut k: Vec<(u64, [u32; 3])> = f
            .birth
            .iter()
            .zip(&f.color)
            .map(|(b, c)| (*b, c.map(f32::to_bits)))
            .collect();
        k.sort_unstable();
        k
    };
    assert_eq!(key(&g), key(&c), "the same particles, by serial and colour");
    let centre = |f: &Fluid| {
        let n = f.len() as f32;
        let s = f
            .pos
            .iter()
            .fold([0.0f32; 2], |a, p| [a[0] + p[0], a[1] + p[1]]);
        [s[0] / n, s[1] / n]
    };
    let (cc, gc) = (centre(&c), centre(&g));
    let off = (cc[0] - gc[0]).hypot(cc[1] - gc[1]);
    assert!(off < 0.1, "centres of mass {cc:?} and {gc:?}: {off} apart");
    assert!(g.pos.iter().flatten().all(|x| x.is_finite()));
}

/// A lowered budget keeps the newest particles at once, without new ones, as on the CPU.
#[test]
fn a_lowered_budget_keeps_the_newest_particles() {
    let Some(mut gpu) = gpu_model(2000) else {
        return;
    };
    gpu.inject(&[note(0.4, 0.5, [1.0, 0.0, 0.0])]);
    gpu.advance(&params(0.0, 2000));
    gpu.inject(&[note(1.2, 0.5, [0.0, 1.0, 0.0])]);
    gpu.advance(&params(0.0, 2000));
    let before = gpu.fluid().clone();
    let greens = before.color.iter().filter(|c| c[1] == 1.0).count();
    assert!(greens > 10 && before.len() > greens, "{}", before.len());
    gpu.advance(&params(1.0 / 60.0, greens as u32));
    let after = gpu.fluid().clone();
    assert_eq!(after.len(), greens, "the budget holds");
    assert!(
        after.color.iter().all(|c| *c == [0.0, 1.0, 0.0]),
        "the oldest (red) went first"
    );
}

/// A model restored from a snapshot keeps every particle until a step gives it its budget
/// (the engine rebuilds models with the default budget), and the serial numbers carry over.
#[test]
fn a_restored_liquid_keeps_its_particles_until_the_budget_says() {
    let Some(mut gpu) = gpu_model(1000) else {
        return;
    };
    let mut big = cpu_model(3000);
    let mut f = pool();
    for k in 0..1200 {
        f.add(
            [2.0 + 0.1 * (k % 80) as f32, 5.0 + 0.1 * (k / 80) as f32],
            [0.0; 2],
            [1.0; 3],
        );
    }
    big.set_fluid(f);
    assert_eq!(big.fluid().len(), 2400);
    assert!(gpu.restore(&big.snapshot()));
    let got = gpu.fluid().clone();
    assert_eq!(got.len(), 2400, "all carried over");
    let serials = |f: &Fluid| {
        let mut s = f.birth.clone();
        s.sort_unstable();
        s
    };
    assert_eq!(serials(&got), serials(big.fluid()), "serial numbers kept");
    let mut back = cpu_model(1000);
    assert!(back.restore(&gpu.snapshot()));
    assert_eq!(back.fluid().len(), 2400);
    assert_eq!(serials(back.fluid()), serials(big.fluid()));
    gpu.advance(&params(1.0 / 60.0, 1000));
    assert_eq!(
        gpu.fluid().clone().len(),
        1000,
        "the step's budget trims it"
    );
}

/// The rest probe answers without waiting (a later call returns an earlier call's tag), says
/// still for an empty box and for particles that do not move (no gravity, far apart), and
/// moving for particles that do.
#[test]
fn the_rest_probe_reads_back_without_waiting() {
    let Some(mut gpu) = gpu_model(100) else {
        return;
    };
    let (_, empty) = gpu.probe_activity(1).expect("an empty box answers at once");
    assert_eq!(empty.max_speed, 0.0);
    let still = StepInput {
        liquid: Liquid {
            gravity: [0.0, 0.0],
            budget: 100,
            ..Liquid::default()
        },
        ..params(1.0 / 60.0, 100)
    };
    let probe = |gpu: &mut SphModel, moving: bool| {
        let mut f = Fluid::new(CELLS.0 as f32 / CELLS.1 as f32);
        for k in 0..40 {
            let v = if moving { [3.0, 0.0] } else { [0.0, 0.0] };
            f.add(
                [1.0 + 0.4 * (k % 10) as f32, 2.0 + 2.0 * (k / 10) as f32],
                v,
                [1.0; 3],
            );
        }
        let mut cpu = cpu_model(100);
        cpu.set_fluid(f);
        gpu.restore(&cpu.snapshot());
        let mut answers = Vec::new();
        for tag in 10..400u64 {
            gpu.advance(&still);
            if let Some((t, a)) = gpu.probe_activity(tag)
                && t > 10
                && t < tag
            {
                answers.push(a.max_speed);
                if answers.len() == 3 {
                    break;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert_eq!(answers.len(), 3, "measurements come back: {answers:?}");
        answers
    };
    let speeds = probe(&mut gpu, false);
    assert!(speeds.iter().all(|&s| s == 0.0), "still: {speeds:?}");
    let speeds = probe(&mut gpu, true);
    // 3 box units a second is 0.3 canvas heights a second.
    assert!(
        speeds.iter().all(|&s| (s - 0.3).abs() < 0.05),
        "moving: {speeds:?}"
    );
}

/// `create_model` puts the particle fluid on the GPU when asked (software adapters included)
/// and on the CPU otherwise; a snapshot carries the liquid from one to the other, as the
/// engine does on a backend change or when the GPU fails.
#[test]
fn the_engine_runs_the_particle_fluid_on_the_gpu() {
    if common::gpu_context().is_none() {
        return;
    }
    let spec = |backend| ModelSpec {
        kind: Kind::Particles,
        cells: CELLS,
        detail: 1,
        effort_sweeps: 20,
        backend,
        gpu: GpuOptions::default(),
        cpu_threads: 1,
    };
    let (mut gpu, info) = create_model(&spec(Backend::Gpu)).expect("a model");
    assert_eq!((gpu.backend(), info.backend), ("gpu", "gpu"), "{info:?}");
    assert_eq!(info.fallback, None);
    let (mut cpu, info) = create_model(&spec(Backend::Cpu)).expect("a model");
    assert_eq!((cpu.backend(), info.backend), ("cpu", "cpu"));
    gpu.inject(&[note(0.5, 0.5, [1.0, 0.5, 0.0])]);
    gpu.advance(&params(1.0 / 60.0, 6000));
    assert!(
        cpu.restore(&gpu.snapshot()),
        "the GPU's snapshot restores on the CPU"
    );
    let look = Look::default();
    let (mut a, mut b) = (vec![0; 64 * 36 * 4], vec![0; 64 * 36 * 4]);
    gpu.render(&look, 64, 36, &mut a);
    cpu.render(&look, 64, 36, &mut b);
    assert!(a.iter().any(|&x| x > 40), "the GPU draws the liquid");
    assert!(compare(&a, &b).0 <= 2, "the CPU took the GPU's liquid");
    // And back, after a reset on the GPU.
    gpu.reset();
    gpu.render(&look, 64, 36, &mut a);
    let background = a[..4].to_vec();
    assert!(
        a.chunks(4)
            .all(|p| p.iter().zip(&background).all(|(x, y)| x.abs_diff(*y) <= 2)),
        "a reset empties the box"
    );
    assert!(gpu.restore(&cpu.snapshot()));
    gpu.render(&look, 64, 36, &mut a);
    assert!(compare(&a, &b).0 <= 2, "the GPU took the CPU's liquid back");
}
