//! Particles in the CPU solver: in a steady solid-body rotation they stay on their circles as
//! the midpoint rule predicts; they never enter a solid or leave the canvas; their number
//! changes only by their lives' ends; splats emit them and the flow carries them; and they
//! light the picture where they are.

use dyeflow::fluid::{Look, Splat, SplatShape, ToneMode};
use dyeflow::sim::grid::cpu::CpuSolver;
use dyeflow::sim::grid::particles::Particle;
use dyeflow::sim::obstacles::{Layout, Mask};
use dyeflow::sim::{PressureMethod, SimConfig, Solver, Stage, StepInput};

const DT: f32 = 1.0 / 60.0;

fn solver(w: usize, h: usize) -> CpuSolver {
    let mut cfg = SimConfig::new(w, h);
    cfg.pressure = PressureMethod::Multigrid;
    cfg.pressure_iterations = 2;
    cfg.dye_scale = 1;
    CpuSolver::new(&cfg, 2).unwrap()
}

fn particle(pos: [f32; 2], life: f32) -> Particle {
    Particle {
        pos,
        life,
        color: [1.0, 0.5, 0.25],
        ..Particle::default()
    }
}

/// Set the solver's velocity to a solid-body rotation at `omega` rad/s about `c` (exact on
/// every face: bilinear sampling of a linear field is exact).
fn rotate(s: &mut CpuSolver, c: [f32; 2], omega: f32) {
    let mut f = s.read_fields();
    let (w, h) = (f.width, f.height);
    let n = h as f32;
    for j in 0..h {
        for i in 0..=w {
            let y = (j as f32 + 0.5) / n;
            f.u[j * (w + 1) + i] = -omega * (y - c[1]);
        }
    }
    for j in 0..=h {
        for i in 0..w {
            let x = (i as f32 + 0.5) / n;
            f.v[j * w + i] = omega * (x - c[0]);
        }
    }
    s.write_fields(&f);
}

/// The midpoint rule on a rotation `A` (A² = -ω²) maps p to `(1 - θ²/2) p + θ J p` with
/// `θ = ω dt`, which scales the radius by `sqrt(1 + θ⁴/4)` a step: over 1 000 steps at θ =
/// 1/15 that is +0.25 %, and each particle's radius must match it within 1e-4 (f32
/// rounding); the angle turns by `atan2(θ, 1 - θ²/2)` a step. An Euler step would grow the
/// radius by `sqrt(1 + θ²)` a step (+ 122 % here), and a sampling half a cell off would bend
/// the circles into ellipses: both fail.
#[test]
fn particles_in_a_solid_body_rotation_stay_on_their_circles() {
    let (w, h) = (64, 64);
    let mut s = solver(w, h);
    let (c, omega) = ([0.5f32, 0.5f32], 4.0f32);
    rotate(&mut s, c, omega);
    let start: Vec<Particle> = (0..40)
        .map(|k| {
            let r = 0.05 + 0.35 * (k as f32 / 39.0);
            let a = k as f32 * 2.4;
            particle([c[0] + r * a.cos(), c[1] + r * a.sin()], 1.0e3)
        })
        .collect();
    s.set_particles(&start);
    let p = StepInput {
        dt: DT,
        ..StepInput::default()
    };
    let steps = 1000;
    for _ in 0..steps {
        s.run_stage(Stage::MoveParticles, &p);
    }
    let theta = f64::from(omega * DT);
    let growth = (1.0 + theta.powi(4) / 4.0).powf(steps as f64 / 2.0);
    let turn = steps as f64 * theta.atan2(1.0 - theta * theta / 2.0);
    for (a, b) in start.iter().zip(s.particles()) {
        let polar = |q: &Particle| {
            let (x, y) = (f64::from(q.pos[0] - c[0]), f64::from(q.pos[1] - c[1]));
            (x.hypot(y), y.atan2(x))
        };
        let ((r0, a0), (r1, a1)) = (polar(a), polar(b));
        let ratio = r1 / r0;
        assert!(
            (ratio - growth).abs() < 1e-4,
            "radius {r0}: grew {ratio}, the midpoint rule gives {growth}"
        );
        let turned = (a1 - a0 - turn).rem_euclid(std::f64::consts::TAU);
        let off = turned.min(std::f64::consts::TAU - turned);
        assert!(off < 1e-3, "radius {r0}: angle off by {off} rad");
        assert!((b.age - steps as f32 * DT).abs() < 1e-3);
    }
}

fn busy_splat(k: usize, particles: f32) -> Splat {
    let a = k as f32 * 0.7;
    Splat {
        pos: [
            0.9 + 0.6 * (k as f32 * 0.37).sin(),
            0.5 + 0.35 * (k as f32 * 0.53).cos(),
        ],
        radius: 0.05,
        color: [1.0, 0.3 + 0.5 * (a.sin() * 0.5 + 0.5), 0.2],
        amount: 0.5,
        force: [3.0 * a.cos(), 3.0 * a.sin()],
        shape: SplatShape::Gaussian,
        particles,
        ..Splat::default()
    }
}

fn lively() -> StepInput {
    StepInput {
        dt: DT,
        vorticity: 0.4,
        velocity_dissipation: 0.1,
        particle_life: 4.0,
        ..StepInput::default()
    }
}

/// Over 500 busy steps among the pillars (fast flow, new particles every step), no particle
/// is ever inside a solid or off the canvas; and a splat inside a solid emits none.
#[test]
fn particles_never_enter_solids_or_leave_the_canvas() {
    let (w, h) = (96, 54);
    for layout in [Layout::Pillars, Layout::Maze] {
        let mut s = solver(w, h);
        let mask = Mask::layout(layout, w, h);
        s.set_obstacles(Some(&mask));
        let aspect = w as f32 / h as f32;
        for k in 0..500 {
            s.inject(&[busy_splat(k, 40.0)]);
            s.step(&lively());
            for p in s.particles().iter().filter(|p| p.alive()) {
                let [x, y] = p.pos;
                assert!(
                    (0.0..=aspect).contains(&x) && (0.0..=1.0).contains(&y),
                    "{layout:?} step {k}: particle at {x}, {y} is off the canvas"
                );
                let i = ((x * h as f32) as usize).min(w - 1);
                let j = ((y * h as f32) as usize).min(h - 1);
                assert!(
                    !mask.is_solid(i, j),
                    "{layout:?} step {k}: particle at {x}, {y} is inside a solid"
                );
            }
        }
        let live = s.particles().iter().filter(|p| p.alive()).count();
        assert!(live > 5000, "{layout:?}: {live} particles live");
    }
    // A splat inside a solid (the disc's centre) emits nothing.
    let mut s = solver(w, h);
    s.set_obstacles(Some(&Mask::layout(Layout::Disc, w, h)));
    let inside = Splat {
        pos: [0.5 * w as f32 / h as f32, 0.5],
        radius: 0.02,
        particles: 200.0,
        color: [1.0; 3],
        ..Splat::default()
    };
    s.inject(&[inside]);
    s.step(&lively());
    assert_eq!(s.particles().iter().filter(|p| p.alive()).count(), 0);
}

/// Particles end only with their lives: after a burst, the number alive each step is exactly
/// the number whose life (as emitted) is longer than their age, through a busy flow with
/// walls to bounce off; none is recycled or lost.
#[test]
fn particle_counts_change_only_by_lifetime_expiry() {
    let (w, h) = (96, 54);
    let mut s = solver(w, h);
    s.set_obstacles(Some(&Mask::layout(Layout::Ring, w, h)));
    let p = StepInput {
        particle_life: 1.0,
        ..lively()
    };
    let burst: Vec<Splat> = (0..12).map(|k| busy_splat(k, 300.0)).collect();
    s.inject(&burst);
    s.step(&p);
    let born: Vec<Particle> = s
        .particles()
        .iter()
        .filter(|p| p.alive())
        .copied()
        .collect();
    assert!(born.len() > 3000, "{} emitted", born.len());
    let mut ages: Vec<f32> = born.iter().map(|p| p.age).collect();
    let mut last = born.len();
    for k in 0..90 {
        // Forces keep the flow busy; they emit nothing.
        s.inject(&[busy_splat(k, 0.0)]);
        s.step(&p);
        for a in &mut ages {
            *a += p.dt;
        }
        let want = born.iter().zip(&ages).filter(|(b, a)| **a < b.life).count();
        let got = s.particles().iter().filter(|p| p.alive()).count();
        assert_eq!(got, want, "step {k}");
        assert!(got <= last);
        last = got;
    }
    assert!(
        last < born.len() / 2,
        "lives ran out: {last} of {}",
        born.len()
    );
}

/// A splat emits its particles in its colour around it, and its push carries them along.
#[test]
fn splats_emit_particles_the_flow_carries() {
    let mut s = solver(64, 36);
    let push = Splat {
        pos: [0.5, 0.5],
        radius: 0.04,
        color: [0.2, 0.4, 1.0],
        amount: 0.5,
        force: [4.0, 0.0],
        shape: SplatShape::Gaussian,
        particles: 500.0,
        ..Splat::default()
    };
    s.inject(&[push]);
    s.step(&lively());
    let live: Vec<Particle> = s
        .particles()
        .iter()
        .filter(|p| p.alive())
        .copied()
        .collect();
    assert!((499..=501).contains(&live.len()), "{}", live.len());
    assert!(
        live.iter()
            .all(|p| p.color == [0.2f32, 0.4, 1.0].map(|c| c.mul_add(0.65, 0.35)))
    );
    let mean_x = |ps: &[Particle]| ps.iter().map(|p| p.pos[0]).sum::<f32>() / ps.len() as f32;
    let x0 = mean_x(&live);
    for _ in 0..20 {
        s.step(&lively());
    }
    let later: Vec<Particle> = s
        .particles()
        .iter()
        .filter(|p| p.alive())
        .copied()
        .collect();
    assert!(mean_x(&later) > x0 + 0.05, "{} -> {}", x0, mean_x(&later));
}

/// Particles add light where they are, in their colour, in both tone modes; glow 0 draws
/// none; a frame of a solver without particles is unchanged by the glow.
#[test]
fn particles_light_the_picture_where_they_are() {
    let (w, h) = (64, 36);
    let (fw, fh) = (128, 72);
    let aspect = w as f32 / h as f32;
    for tone in [ToneMode::Filmic, ToneMode::Legacy] {
        let look = Look {
            tone,
            ..Look::default()
        };
        let mut s = solver(w, h);
        let mut empty = vec![0u8; fw * fh * 4];
        s.render(&look, fw, fh, &mut empty);
        // A particle in mid-life at the centre of pixel (40, 20), tinted red.
        let pos = [(40.5 / fw as f32) * aspect, 1.0 - 20.5 / fh as f32];
        let mut p = particle(pos, 2.0);
        p.color = [1.0, 0.2, 0.0];
        p.age = 0.4;
        s.set_particles(&[p]);
        let mut lit = vec![0u8; fw * fh * 4];
        s.render(&look, fw, fh, &mut lit);
        let px = |f: &[u8], x: usize, y: usize| {
            let k = (y * fw + x) * 4;
            [f[k], f[k + 1], f[k + 2]]
        };
        let at = px(&lit, 40, 20);
        assert!(
            at[0] > 100 && at[0] > at[1] && at[2] == 0,
            "{tone:?}: {at:?}"
        );
        let changed = (0..fw * fh)
            .filter(|k| lit[k * 4..k * 4 + 3] != empty[k * 4..k * 4 + 3])
            .count();
        assert!(changed <= 4, "{tone:?}: {changed} pixels changed");
        let dark = Look {
            particle_glow: 0.0,
            ..look
        };
        let mut none = vec![0u8; fw * fh * 4];
        s.render(&dark, fw, fh, &mut none);
        assert_eq!(none, empty, "{tone:?}: glow 0 draws nothing");
        // Brighter glow, brighter point.
        let bright = Look {
            particle_glow: 3.0,
            ..look
        };
        let mut more = vec![0u8; fw * fh * 4];
        s.render(&bright, fw, fh, &mut more);
        assert!(px(&more, 40, 20)[1] > at[1], "{tone:?}");
    }
}
