//! CPU/GPU parity on the same inputs: stage by stage, over 100 steps, and the colorize output.
//! Runs on any Vulkan/Metal/DX12 adapter; CI uses Mesa's lavapipe.

use crate::common;

use common::fields::{prepare_stage, rel_max, run_stage_on_both, stage_params, start};

use dyeflow::fluid::{ColorMode, Look, Splat, SplatShape, ToneMode};
use dyeflow::sim::grid::Fields;
use dyeflow::sim::grid::cpu::CpuSolver;
use dyeflow::sim::grid::gpu::GpuSolver;
use dyeflow::sim::grid::physics::extra_iterations;
use dyeflow::sim::{PressureMethod, SimConfig, Solver, Stage, StepInput};

fn config(method: PressureMethod) -> SimConfig {
    SimConfig {
        pressure: method,
        pressure_iterations: if method == PressureMethod::Multigrid {
            2
        } else {
            20
        },
        dye_scale: 2,
        ..SimConfig::new(48, 32)
    }
}

fn lively() -> StepInput {
    StepInput {
        dt: 1.0 / 60.0,
        viscosity: 2e-5,
        dye_diffusion: 1e-6,
        velocity_dissipation: 0.2,
        dye_dissipation: 0.5,
        vorticity: 0.4,
        ..StepInput::default()
    }
}

fn splats(n: usize) -> Vec<Splat> {
    let color = [[1.0, 0.3, 0.1], [0.1, 0.5, 1.0], [0.7, 1.0, 0.2]][n % 3];
    vec![Splat {
        pos: [0.2 + 0.05 * (n % 20) as f32, 0.3 + 0.02 * (n % 17) as f32],
        radius: 0.08,
        color,
        amount: 0.8,
        force: [1.5 - 0.15 * (n % 20) as f32, 0.8],
        shape: if n.is_multiple_of(7) {
            SplatShape::Block
        } else if n % 5 == 3 {
            SplatShape::Radial
        } else {
            SplatShape::Gaussian
        },
        heat: 0.0,
        particles: 0.0,
        depth: 0.0,
        drum: Default::default(),
    }]
}

fn compare(what: &str, cpu: &Fields, gpu: &Fields, tol: f32) -> [f32; 4] {
    let d = [
        rel_max(&cpu.u, &gpu.u),
        rel_max(&cpu.v, &gpu.v),
        rel_max(&cpu.pressure, &gpu.pressure),
        (0..3)
            .map(|c| rel_max(&cpu.dye[c], &gpu.dye[c]))
            .fold(0.0, f32::max),
    ];
    eprintln!(
        "{what}: u {:.2e} v {:.2e} q {:.2e} dye {:.2e}",
        d[0], d[1], d[2], d[3]
    );
    for (name, x) in ["u", "v", "pressure", "dye"].iter().zip(d) {
        assert!(
            x <= tol,
            "{what}: {name} differs by {x:e} (tolerance {tol:e})"
        );
    }
    d
}

/// Each stage from identical inputs. Tolerance: 2e-5 of each field's largest value. The GPU
/// runs the CPU's arithmetic operation for operation; what differs is that a GPU may fuse a
/// multiply and an add the CPU rounds separately, its sqrt and division are not always
/// correctly rounded, and the reductions (means) sum in another order. Measured on lavapipe
/// (2026-11): at most 3e-7 for every stage but the multigrid projections (3.1e-6, compounding
/// the reductions' order through 2 V-cycles); viscosity, dye diffusion and the relaxation
/// solves agree bit for bit. The bound is 6x the worst.
#[test]
fn stage_by_stage() {
    for method in [
        PressureMethod::Multigrid,
        PressureMethod::Jacobi,
        PressureMethod::RbGs,
    ] {
        let Some(ctx) = common::gpu_context() else {
            return;
        };
        let cfg = config(method);
        let mut cpu = CpuSolver::new(&cfg, 2).expect("solver threads");
        let mut gpu = GpuSolver::new(ctx, &cfg).unwrap_or_else(|e| panic!("GPU solver: {e}"));
        let base = start(&cfg);
        let p = lively();
        // (The particles' stage moves no field: tests/it/particles_gpu.rs compares it.)
        for stage in Stage::ALL
            .into_iter()
            .filter(|&s| s != Stage::MoveParticles)
        {
            cpu.write_fields(&base);
            gpu.write_fields(&base);
            if stage == Stage::ApplySplats {
                cpu.inject(&splats(3));
                gpu.inject(&splats(3));
            }
            // (The heat passes are compared in `heat_and_buoyancy_over_a_hundred_steps`.)
            let p = stage_params(stage, p);
            prepare_stage(&mut cpu, &mut gpu, stage, &p);
            let input = cpu.read_fields();
            let what = format!("{method:?} {stage:?}");
            let (a, b) = run_stage_on_both(&mut cpu, &mut gpu, stage, &p, &what);
            let (fc, fg) = (cpu.read_fields(), gpu.read_fields());
            // Every stage changes something here, or the comparison would prove nothing.
            assert!(fc != input, "{method:?} {stage:?} changed nothing");
            compare(&format!("{method:?} {stage:?}"), &fc, &fg, 2e-5);
            assert_eq!(
                a.pressure_iterations, b.pressure_iterations,
                "{method:?} {stage:?}: pressure iterations"
            );
            if stage == Stage::Project {
                let r = (a.residual_rms() - b.residual_rms()).abs();
                assert!(
                    r < 1e-3,
                    "{method:?}: residual {} vs {}",
                    a.residual_rms(),
                    b.residual_rms()
                );
            }
        }
    }
}

/// The projection on grids whose multigrid takes every path of the GPU's V-cycle: several
/// smoothing tiles and levels above the one-workgroup tail (130x77: the tail starts at 33x20;
/// a flat 200x48), a tail that starts at the first coarse level (12x10), and no coarse levels
/// at all (7x4: the coarsest solve on the grid itself); red-black sweeps and Jacobi iterations
/// an odd number of times (the last of the two-a-dispatch blocks does one, and the result is
/// copied back). The bound is `stage_by_stage`'s.
#[test]
fn the_projection_matches_on_every_level_layout() {
    for (w, h) in [(130, 77), (200, 48), (12, 10), (7, 4)] {
        for (method, iterations) in [
            (PressureMethod::Multigrid, 2),
            (PressureMethod::RbGs, 7),
            (PressureMethod::Jacobi, 5),
        ] {
            let Some(ctx) = common::gpu_context() else {
                return;
            };
            let cfg = SimConfig {
                pressure: method,
                pressure_iterations: iterations,
                dye_scale: 1,
                ..SimConfig::new(w, h)
            };
            let mut cpu = CpuSolver::new(&cfg, 2).expect("solver threads");
            let mut gpu = GpuSolver::new(ctx, &cfg).unwrap_or_else(|e| panic!("GPU solver: {e}"));
            // A lively start with a source: divergence for the solve to remove.
            let mut base = start(&cfg);
            for j in 0..h {
                let y = (j as f32 + 0.5) / h as f32;
                for i in 1..w {
                    let x = i as f32 / w as f32;
                    base.u[j * (w + 1) + i] += 0.6 * (x - 0.5) * (3.0 * y).sin();
                }
            }
            // A smooth pressure to start from (the warm start).
            for (c, q) in base.pressure.iter_mut().enumerate() {
                *q = 0.01 * ((c % w) as f32 * 0.1).cos() * ((c / w) as f32 * 0.07).sin();
            }
            cpu.write_fields(&base);
            gpu.write_fields(&base);
            let what = format!("{method:?} {iterations} at {w}x{h}");
            let (a, b) = run_stage_on_both(&mut cpu, &mut gpu, Stage::Project, &lively(), &what);
            eprintln!(
                "{what}: divergence left {:.3e} (CPU) {:.3e} (GPU)",
                a.residual_rms(),
                b.residual_rms()
            );
            let bound = if method == PressureMethod::Multigrid {
                0.01
            } else {
                0.9
            };
            assert!(
                a.residual_rms() < bound,
                "{what}: the projection left {} of the divergence",
                a.residual_rms()
            );
            let r = (a.residual_rms() - b.residual_rms()).abs();
            assert!(
                r <= 1e-3 * a.residual_rms() + 1e-6,
                "{what}: residual {} vs {}",
                a.residual_rms(),
                b.residual_rms()
            );
            let (fc, fg) = (cpu.read_fields(), gpu.read_fields());
            assert!(fc.pressure.iter().any(|&q| q != 0.0), "{what}: no pressure");
            compare(&what, &fc, &fg, 2e-5);
        }
    }
}

/// Heat and buoyancy: 100 steps of hot and cold splats rising and sinking, on both backends;
/// the fields and the temperature agree within the bound of `hundred_steps_with_the_same_events`
/// (2e-3 of each field's peak: rounding grows in a swirling flow). Splat, advection, cooling
/// and lift run the CPU's arithmetic operation for operation; measured on lavapipe
/// (2026-11-25): temperature 2.1e-6, fields at most 1.4e-5.
#[test]
fn heat_and_buoyancy_over_a_hundred_steps() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let cfg = config(PressureMethod::Multigrid);
    let mut cpu = CpuSolver::new(&cfg, 2).expect("solver threads");
    let mut gpu = GpuSolver::new(ctx, &cfg).unwrap_or_else(|e| panic!("GPU solver: {e}"));
    let p = StepInput {
        buoyancy: 2.0,
        weight: 0.3,
        cooling: 0.4,
        ambient: 0.05,
        ..lively()
    };
    for n in 0..100 {
        if n % 4 == 0 {
            let s: Vec<Splat> = splats(n)
                .into_iter()
                .map(|s| Splat {
                    force: s.force.map(|f| f * 0.3),
                    heat: if n % 12 == 0 { -0.6 } else { 1.0 },
                    ..s
                })
                .collect();
            cpu.inject(&s);
            gpu.inject(&s);
        }
        cpu.step(&p);
        gpu.step(&p);
    }
    let (hc, hg) = (cpu.heat().to_vec(), gpu.read_heat());
    assert!(hc.iter().any(|&t| t > 0.05), "no heat left to compare");
    let dh = rel_max(&hc, &hg);
    eprintln!("heat {dh:.2e}");
    let d = compare("heat scene", &cpu.read_fields(), &gpu.read_fields(), 2e-3);
    assert!(dh <= 2e-3, "heat differs by {dh:e} (fields {d:?})");
}

/// Run 100 steps on both backends with the same splats every 4 steps; returns the relative
/// field differences and the pressure iterations each ran.
fn hundred_steps(method: PressureMethod, force_scale: f32) -> Option<([f32; 4], u32, u32)> {
    let ctx = common::gpu_context()?;
    let cfg = config(method);
    let mut cpu = CpuSolver::new(&cfg, 2).expect("solver threads");
    let mut gpu = GpuSolver::new(ctx, &cfg).unwrap_or_else(|e| panic!("GPU solver: {e}"));
    let base = start(&cfg);
    cpu.write_fields(&base);
    gpu.write_fields(&base);
    let p = lively();
    let (mut pc, mut pg) = (0, 0);
    for n in 0..100 {
        if n % 4 == 0 {
            let s: Vec<Splat> = splats(n)
                .into_iter()
                .map(|s| Splat {
                    force: s.force.map(|f| f * force_scale),
                    ..s
                })
                .collect();
            cpu.inject(&s);
            gpu.inject(&s);
        }
        pc += cpu.step(&p).pressure_iterations;
        pg += gpu.step(&p).pressure_iterations;
    }
    let what = format!("{method:?} x{force_scale} after 100 steps (iterations {pc} / {pg})");
    Some((
        compare(&what, &cpu.read_fields(), &gpu.read_fields(), 1.0),
        pc,
        pg,
    ))
}

/// 100 steps in a flow that never needs extra iterations, so both backends take the
/// same decisions and only rounding separates them. Rounding differences grow in a swirling
/// flow; measured on lavapipe (2026-11), worst field relative to its peak: multigrid 4.2e-4,
/// red-black Gauss-Seidel 1.0e-4, Jacobi 5.3e-5. Bound: 2e-3, about 5x the worst.
#[test]
fn hundred_steps_with_the_same_events() {
    for method in [
        PressureMethod::Multigrid,
        PressureMethod::Jacobi,
        PressureMethod::RbGs,
    ] {
        let Some((d, pc, pg)) = hundred_steps(method, 0.5) else {
            return;
        };
        let plain = 100 * config(method).pressure_iterations;
        assert_eq!((pc, pg), (plain, plain), "{method:?}: extra iterations ran");
        for (name, x) in ["u", "v", "pressure", "dye"].iter().zip(d) {
            assert!(
                x <= 2e-3,
                "{method:?}: {name} differs by {x:e} after 100 steps"
            );
        }
    }
}

/// The same with forceful splats, where advection leaves the flow compressible in some steps
/// and the next projections run extra iterations. Near the threshold the two backends can
/// decide differently on a step (their compressibility sums round differently), which changes
/// the flow more than rounding does; measured with multigrid on lavapipe (2026-11-26): an
/// extra V-cycle in 13 and 10 steps, fields within 6.0e-4. Bound: decisions differ on at most
/// 5 steps, fields within 1e-2.
#[test]
fn hundred_lively_steps_stay_close() {
    let method = PressureMethod::Multigrid;
    let Some((d, pc, pg)) = hundred_steps(method, 1.0) else {
        return;
    };
    let iters = config(method).pressure_iterations;
    let (plain, extra) = (100 * iters, extra_iterations(method, iters));
    assert!(
        pc > plain && pg > plain,
        "extra iterations should run: {pc}, {pg}"
    );
    assert!(
        pc.abs_diff(pg) <= 5 * extra,
        "decisions differ on {} steps",
        pc.abs_diff(pg) / extra
    );
    for (name, x) in ["u", "v", "pressure", "dye"].iter().zip(d) {
        assert!(x <= 1e-2, "{name} differs by {x:e} after 100 lively steps");
    }
}

/// The same fields render to the same picture: every colour mode and both tone modes (the
/// filmic one through the tone pass, a dim exposure too, where the sRGB curve is
/// steepest), an odd output size, a hue shift and reduced saturation. Tolerance: 1 of 255 per
/// channel (the exposure curve's exp, the CPU's sRGB table against the GPU's `pow`, and a
/// GPU's fused multiply-adds can move a value across a rounding boundary; the dither is the
/// same integer hash on both), on at most 1 % of the pixels.
#[test]
fn colorize_matches() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let cfg = config(PressureMethod::Multigrid);
    let mut cpu = CpuSolver::new(&cfg, 2).expect("solver threads");
    let mut gpu = GpuSolver::new(ctx, &cfg).unwrap_or_else(|e| panic!("GPU solver: {e}"));
    let base = start(&cfg);
    cpu.write_fields(&base);
    gpu.write_fields(&base);
    // Some heat for the Temperature mode: a hot blob and a cold one.
    let heat = [(0.4, 0.15, 1.5), (1.1, 0.1, -0.8)].map(|(x, r, t)| Splat {
        pos: [x, 0.45],
        radius: r,
        heat: t,
        ..Splat::default()
    });
    for s in [&mut cpu as &mut dyn Solver, &mut gpu] {
        s.inject(&heat);
        s.run_stage(Stage::ApplySplats, &lively());
    }
    let (w, h) = (97, 61);
    for mode in [
        ColorMode::Dye,
        ColorMode::DensityHue,
        ColorMode::VelocityHue,
        ColorMode::Temperature,
    ] {
        for (tone, brightness, saturation, hue_shift) in [
            (ToneMode::Legacy, 1.0, 1.0, 0.0),
            (ToneMode::Legacy, 1.7, 0.6, 75.0),
            (ToneMode::Filmic, 1.0, 1.0, 0.0),
            (ToneMode::Filmic, 1.7, 0.6, 75.0),
            (ToneMode::Filmic, 0.05, 1.0, 0.0),
        ] {
            let look = Look {
                color_mode: mode,
                tone,
                brightness,
                saturation,
                hue_shift,
                ..Look::default()
            };
            let (mut a, mut b) = (vec![0u8; w * h * 4], vec![0u8; w * h * 4]);
            cpu.render(&look, w, h, &mut a);
            gpu.render(&look, w, h, &mut b);
            let worst = a.iter().zip(&b).map(|(x, y)| x.abs_diff(*y)).max().unwrap();
            let differing = a.chunks(4).zip(b.chunks(4)).filter(|(x, y)| x != y).count();
            eprintln!(
                "{mode:?} {tone:?} b{brightness} s{saturation} h{hue_shift}: worst {worst}, {differing} pixels differ"
            );
            assert!(worst <= 1, "{mode:?}: a channel differs by {worst}");
            assert!(
                differing * 100 <= w * h,
                "{mode:?}: {differing} of {} pixels differ",
                w * h
            );
            assert!(
                a.chunks(4).any(|p| p[..3] != [0, 0, 0]),
                "{mode:?}: the picture is black"
            );
        }
    }
}

/// The picture effects of the filmic tone (bloom, sunrays, shading, palettes, vibrance, background)
/// agree, each alone and all together, at an odd size, a 16:9 size and tiny ones (1x1, 3x2).
/// Tolerance: 1 of 255 per channel on at most 1 % of the pixels, as for colorize (lavapipe,
/// 2026-05: at most 10 of 14 400 pixels differ, by 1). The effects add hundreds of float
/// operations per pixel (a 16-sample ray march, a mip chain), done in the same order
/// with the same fused multiply-adds on both sides, but a GPU may round a division or a
/// square root differently (Vulkan allows 2.5 ulp for `/`), which can move a value across
/// a rounding boundary; an error in the algorithm moves whole regions by far more.
#[test]
fn picture_effects_match() {
    use dyeflow::fluid::{Effects, Palette, light_for_display};
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let cfg = config(PressureMethod::Multigrid);
    let mut cpu = CpuSolver::new(&cfg, 2).expect("solver threads");
    let mut gpu = GpuSolver::new(ctx, &cfg).unwrap_or_else(|e| panic!("GPU solver: {e}"));
    let base = start(&cfg);
    cpu.write_fields(&base);
    gpu.write_fields(&base);
    let bg = light_for_display(0.08);
    let bloom = Effects {
        bloom: 0.9,
        bloom_threshold: 0.6,
        bloom_knee: 0.5,
        bloom_radius: 0.75,
        ..Effects::OFF
    };
    let cases = [
        ("bloom", bloom),
        (
            "rays",
            Effects {
                rays: 1.5,
                bloom_threshold: 0.5,
                ..Effects::OFF
            },
        ),
        (
            "shading",
            Effects {
                shading: 0.8,
                light_angle: 120.0,
                ..Effects::OFF
            },
        ),
        (
            "palette",
            Effects {
                palette: Palette::Sunset,
                ..Effects::OFF
            },
        ),
        (
            "background",
            Effects {
                background: [bg * 0.3, bg * 0.5, bg],
                ..Effects::OFF
            },
        ),
        (
            "vibrance",
            Effects {
                vibrance: 1.0,
                ..Effects::OFF
            },
        ),
        (
            "all",
            Effects {
                rays: 0.6,
                shading: 0.5,
                palette: Palette::Neon,
                background: [bg, 0.0, bg],
                vibrance: 0.75,
                ..bloom
            },
        ),
    ];
    for (w, h) in [(97, 61), (160, 90), (1, 1), (3, 2)] {
        for (name, effects) in cases {
            let look = Look {
                color_mode: ColorMode::Dye,
                brightness: 1.5,
                effects,
                ..Look::default()
            };
            let plain = Look {
                effects: Effects::OFF,
                ..look
            };
            let (mut a, mut b) = (vec![0u8; w * h * 4], vec![0u8; w * h * 4]);
            cpu.render(&look, w, h, &mut a);
            gpu.render(&look, w, h, &mut b);
            let worst = a.iter().zip(&b).map(|(x, y)| x.abs_diff(*y)).max().unwrap();
            let differing = a.chunks(4).zip(b.chunks(4)).filter(|(x, y)| x != y).count();
            eprintln!("{name} {w}x{h}: worst {worst}, {differing} pixels differ");
            assert!(worst <= 1, "{name} {w}x{h}: a channel differs by {worst}");
            assert!(
                differing * 100 <= w * h,
                "{name} {w}x{h}: {differing} of {} pixels differ",
                w * h
            );
            // The effect shows (on frames big enough to see it).
            if w * h > 100 {
                let mut c = vec![0u8; w * h * 4];
                cpu.render(&plain, w, h, &mut c);
                assert_ne!(a, c, "{name} {w}x{h}: the effect changes nothing");
            }
        }
    }
}

/// Two GPU solvers of the multigrid `config`, each on its own device, and whether the devices
/// have timestamps; `None` without a GPU.
fn two_gpu_solvers() -> Option<(GpuSolver, GpuSolver, bool)> {
    let cfg = config(PressureMethod::Multigrid);
    let (a, b) = (common::gpu_context()?, common::gpu_context()?);
    let stamps = a.timestamps;
    let solver = |ctx| GpuSolver::new(ctx, &cfg).unwrap_or_else(|e| panic!("GPU solver: {e}"));
    Some((solver(a), solver(b), stamps))
}

/// The GPU step is its stages in [`Stage::ALL`]'s order: the same busy scene (heat, weight,
/// vorticity, viscosity, dye diffusion, particles) encoded as one step and stage by stage ends
/// with the same bits, so `encode_step`'s one-line-per-pass list cannot drift from the stages.
#[test]
fn a_gpu_step_is_its_stages_in_order() {
    let Some((mut whole, mut staged, _)) = two_gpu_solvers() else {
        return;
    };
    let p = StepInput {
        buoyancy: 3.0,
        weight: 0.5,
        cooling: 0.2,
        particle_life: 2.0,
        ..lively()
    };
    for n in 0..30 {
        if n % 3 == 0 {
            let mut s = splats(n);
            s[0].heat = 2.0;
            s[0].particles = 100.0;
            whole.inject(&s);
            staged.inject(&s);
        }
        whole.step(&p);
        for stage in Stage::ALL {
            staged.run_stage(stage, &p);
        }
    }
    let (x, y) = (whole.read_fields(), staged.read_fields());
    assert!(x.dye[0].iter().any(|&d| d > 0.01), "the scene has dye");
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&x.u), bits(&y.u), "u");
    assert_eq!(bits(&x.v), bits(&y.v), "v");
    for c in 0..3 {
        assert_eq!(bits(&x.dye[c]), bits(&y.dye[c]), "dye {c}");
    }
    let (hx, hy) = (whole.read_heat(), staged.read_heat());
    assert!(hx.iter().any(|&t| t > 0.01), "the scene has heat");
    assert_eq!(bits(&hx), bits(&hy), "heat");
    let (px, py) = (whole.read_particles(), staged.read_particles());
    assert!(!px.is_empty(), "the scene has particles");
    assert_eq!(px, py, "particles");
}

/// Timing each pass on its own (the bench's `passes` table) changes nothing the step computes,
/// and covers the step's stages: every pass of every timed step has a time.
#[test]
fn timing_each_pass_changes_nothing() {
    let Some((mut plain, mut timed, stamps)) = two_gpu_solvers() else {
        return;
    };
    timed.set_time_passes(true);
    let p = StepInput {
        buoyancy: 3.0,
        cooling: 0.2,
        ..lively()
    };
    const STEPS: usize = 12;
    for n in 0..STEPS {
        if n % 3 == 0 {
            let mut s = splats(n);
            s[0].heat = 2.0;
            plain.inject(&s);
            timed.inject(&s);
        }
        plain.step(&p);
        timed.step(&p);
    }
    let (x, y) = (plain.read_fields(), timed.read_fields());
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&x.u), bits(&y.u), "u");
    assert_eq!(bits(&x.v), bits(&y.v), "v");
    assert_eq!(bits(&x.dye[0]), bits(&y.dye[0]), "dye");
    let passes = timed.pass_samples();
    if !stamps {
        assert!(passes.is_empty(), "no timestamps, yet times: {passes:?}");
        eprintln!("SKIPPED the times: the adapter has no timestamps");
        return;
    }
    eprintln!("{passes:?}");
    for stage in [
        "grid.apply_splats",
        "grid.project.divergence",
        "grid.project.solve",
        "grid.advect_dye",
    ] {
        assert!(
            passes.iter().any(|(label, _)| label == stage),
            "{stage} missing from {passes:?}"
        );
    }
    for (label, times) in passes {
        let every = label != "grid.apply_splats";
        assert!(
            !every || times.len() == STEPS,
            "{label}: {} times for {STEPS} steps",
            times.len()
        );
        assert!(
            times.iter().all(|t| t.ms.is_finite() && t.ms >= 0.0),
            "{label}: {times:?}"
        );
        assert!(
            times.iter().all(|t| t.dispatches > 0),
            "{label}: a pass without dispatches: {times:?}"
        );
    }
    let solve = passes
        .iter()
        .find(|(l, _)| l == "grid.project.solve")
        .map(|(_, t)| t)
        .unwrap();
    assert!(
        solve.iter().map(|t| t.ms).sum::<f64>() > 0.0,
        "the pressure solve took no time"
    );
    // 48x32, 2 V-cycles: each is the finest level's 4 dispatches (smoothing, the residual
    // restricted, the correction added, smoothing) and the tail's 1.
    assert!(
        solve.iter().all(|t| t.dispatches == 10),
        "the pressure solve's dispatches: {solve:?}"
    );
}

/// An offline render's frames in flight ([`Solver::submit_frame`], [`Solver::wait_frame`])
/// are the frames rendered at once, in order: two solvers take the same steps, one renders
/// each frame with `render`, the other keeps `frames_in_flight` of them in flight and waits
/// for each in turn while the next steps run.
#[test]
fn frames_in_flight_are_the_frames_rendered_at_once() {
    let Some((mut at_once, mut piped, _)) = two_gpu_solvers() else {
        return;
    };
    let depth = piped.frames_in_flight();
    assert!(depth >= 2, "the GPU keeps {depth} frames in flight");
    let look = Look::default();
    let (w, h) = (64, 40);
    let p = lively();
    let (mut want, mut got) = (Vec::new(), Vec::new());
    let mut queued = 0;
    let mut frame = vec![0u8; w * h * 4];
    for n in 0..12 {
        if n % 4 == 0 {
            at_once.inject(&splats(n));
            piped.inject(&splats(n));
        }
        at_once.step(&p);
        piped.step(&p);
        at_once.render(&look, w, h, &mut frame);
        want.push(frame.clone());
        assert!(piped.submit_frame(&look, w, h), "frame {n} not started");
        queued += 1;
        if queued == depth {
            assert!(
                !piped.submit_frame(&look, w, h),
                "more than {depth} frames in flight"
            );
            assert!(piped.wait_frame(&mut frame), "frame {} not back", got.len());
            got.push(frame.clone());
            queued -= 1;
        }
    }
    while queued > 0 {
        assert!(piped.wait_frame(&mut frame), "frame {} not back", got.len());
        got.push(frame.clone());
        queued -= 1;
    }
    assert!(!piped.wait_frame(&mut frame), "a frame more than submitted");
    assert_eq!(got.len(), want.len());
    for (n, (x, y)) in want.iter().zip(&got).enumerate() {
        assert!(x.iter().any(|&c| c > 0), "frame {n} is black");
        assert!(x == y, "frame {n} differs");
    }
    assert!(
        want[0] != want[11],
        "the frames change over time (order matters)"
    );
}

/// Timing each pass of a frame on its own (the bench's `frame_passes`: the display
/// pipeline's stages then run in a pass each) draws the same pixels, and lists colorize, the
/// bloom, the sunrays, the glow and the tone with their dispatches.
#[test]
fn timing_each_frame_pass_changes_no_pixel() {
    use dyeflow::fluid::Effects;
    let Some((mut plain, mut timed, stamps)) = two_gpu_solvers() else {
        return;
    };
    timed.set_time_frame_passes(true);
    let look = Look {
        tone: ToneMode::Filmic,
        effects: Effects {
            bloom: 1.0,
            bloom_threshold: 0.3,
            bloom_knee: 0.5,
            bloom_radius: 0.75,
            rays: 0.6,
            ..Effects::OFF
        },
        ..Look::default()
    };
    let (w, h) = (96, 54);
    let (mut x, mut y) = (vec![0u8; w * h * 4], vec![0u8; w * h * 4]);
    for n in 0..3 {
        plain.inject(&splats(n));
        timed.inject(&splats(n));
        plain.step(&lively());
        timed.step(&lively());
        plain.render(&look, w, h, &mut x);
        timed.render(&look, w, h, &mut y);
        assert!(
            x.chunks(4).any(|p| p[..3] != [0, 0, 0]),
            "frame {n} is black"
        );
        assert!(x == y, "frame {n} differs");
    }
    let passes = timed.frame_pass_samples();
    if !stamps {
        assert!(passes.is_empty(), "no timestamps, yet times: {passes:?}");
        return;
    }
    let labels: Vec<&str> = passes.iter().map(|(l, _)| l.as_str()).collect();
    let want = [
        "display.colorize",
        "display.bloom",
        "display.sunrays",
        "display.glow",
        "display.tone",
    ];
    assert_eq!(labels, want, "the frame's passes");
    for (label, samples) in passes {
        assert_eq!(samples.len(), 3, "{label}: {samples:?}");
        assert!(
            samples
                .iter()
                .all(|s| s.dispatches > 0 && s.ms.is_finite() && s.ms >= 0.0),
            "{label}: {samples:?}"
        );
    }
}
