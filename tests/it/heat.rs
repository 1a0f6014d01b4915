//! Heat and buoyancy in the CPU solver: a hot blob rises and a cold one sinks at the rate the
//! force gives, heavy dye sinks, buoyancy 0 moves nothing, the temperature cools at its rate,
//! and no heat enters a solid.

use dyeflow::fluid::{Splat, SplatShape};
use dyeflow::sim::grid::cpu::CpuSolver;
use dyeflow::sim::obstacles::{Layout, Mask};
use dyeflow::sim::{PressureMethod, SimConfig, Solver, Stage, StepInput};

const N: usize = 128;
const DT: f32 = 1.0 / 60.0;

fn solver(w: usize, h: usize) -> CpuSolver {
    let mut cfg = SimConfig::new(w, h);
    cfg.pressure = PressureMethod::Multigrid;
    cfg.pressure_iterations = 12;
    cfg.dye_scale = 1;
    CpuSolver::new(&cfg, 2).unwrap()
}

/// A Gaussian blob of `heat` (and dye `amount`) at `pos`, radius `r` canvas heights.
fn blob(pos: [f32; 2], r: f32, heat: f32, amount: f32) -> Splat {
    Splat {
        pos,
        radius: r,
        color: [1.0; 3],
        amount,
        shape: SplatShape::Gaussian,
        heat,
        ..Splat::default()
    }
}

/// The mean of the two `v` faces either side of the canvas centre of an `N x N` grid.
fn v_at_centre(s: &mut CpuSolver) -> f32 {
    let f = s.read_fields();
    let (i, j) = (N / 2, N / 2);
    0.5 * (f.v[j * N + i - 1] + f.v[j * N + i])
}

/// The temperature-weighted height of the heat, in cells.
fn heat_height(s: &CpuSolver, w: usize) -> f32 {
    let (mut m, mut my) = (0.0f64, 0.0f64);
    for (k, &t) in s.heat().iter().enumerate() {
        let t = f64::from(t.abs());
        m += t;
        my += t * ((k / w) as f64 + 0.5);
    }
    (my / m) as f32
}

/// In two dimensions the projection keeps exactly half of a round (isotropic) vertical force
/// at its centre: the solenoidal part of `F(r) y` is, in Fourier space, `F^(k) (1 - ky^2 /
/// k^2)`, whose mean over directions is `F^(k) / 2` (a cylinder's added mass equals its own).
/// So after one step from rest the centre moves at `sigma T0 dt / 2` (times the Gaussian's
/// `e^(-1/4 / r^2)` on faces half a cell off its centre). The box's walls, 8 radii away, and
/// the grid's discretisation change that by a few per cent: the tolerance is 10 %.
#[test]
fn a_hot_blob_rises_and_a_cold_one_sinks_at_the_rate_of_the_force() {
    let (sigma, r) = (2.0f32, 0.06f32);
    let params = StepInput {
        dt: DT,
        buoyancy: sigma,
        ..StepInput::default()
    };
    for t0 in [1.0f32, -1.0] {
        let mut s = solver(N, N);
        s.inject(&[blob([0.5, 0.5], r, t0, 0.0)]);
        s.step(&params);
        let rc = r * N as f32;
        let want = 0.5 * sigma * t0 * DT * (-0.25 / (rc * rc)).exp();
        let got = v_at_centre(&mut s);
        assert!(
            (got - want).abs() < 0.1 * want.abs(),
            "T0 {t0}: centre speed {got}, the force gives {want}"
        );
        // Over a second it keeps going the same way.
        let start = heat_height(&s, N);
        let mut last = start;
        for step in 0..60 {
            s.step(&params);
            let y = heat_height(&s, N);
            assert!(
                (y - last) * t0 >= 0.0,
                "T0 {t0}, step {step}: {last} -> {y}"
            );
            last = y;
        }
        assert!(
            (last - start) * t0 > 2.0,
            "T0 {t0}: moved {} cells",
            last - start
        );
    }
}

/// The up direction turns the lift: with `up` to the right a hot blob drifts right.
#[test]
fn the_up_direction_turns_the_lift() {
    let params = StepInput {
        dt: DT,
        buoyancy: 2.0,
        up: [1.0, 0.0],
        ..StepInput::default()
    };
    let mut s = solver(N, N);
    s.inject(&[blob([0.5, 0.5], 0.06, 1.0, 0.0)]);
    s.step(&params);
    let f = s.read_fields();
    let (i, j) = (N / 2, N / 2);
    let u = 0.5 * (f.u[(j - 1) * (N + 1) + i] + f.u[j * (N + 1) + i]);
    assert!(u > 0.01, "u at the centre {u}");
    assert!(v_at_centre(&mut s).abs() < 1e-3 * u);
}

/// Heavy dye sinks at `kappa d dt / 2`, `d` the mean of its channels (white dye of amount 1:
/// 1 at the centre).
#[test]
fn heavy_dye_sinks_at_the_rate_of_its_weight() {
    let (kappa, r) = (3.0f32, 0.06f32);
    let params = StepInput {
        dt: DT,
        weight: kappa,
        ..StepInput::default()
    };
    let mut s = solver(N, N);
    s.inject(&[blob([0.5, 0.5], r, 0.0, 1.0)]);
    s.step(&params);
    let rc = r * N as f32;
    let want = -0.5 * kappa * DT * (-0.25 / (rc * rc)).exp();
    let got = v_at_centre(&mut s);
    assert!((got - want).abs() < 0.1 * want.abs(), "{got} vs {want}");
}

/// Without buoyancy and weight, heat (and dye) move nothing, and with no flow the temperature
/// stays where it is and cools as `e^(-rate t)`.
#[test]
fn without_buoyancy_heat_moves_nothing_and_cools_at_its_rate() {
    let (w, h) = (64, 36);
    let cooling = 0.8f32;
    let params = StepInput {
        dt: DT,
        cooling,
        ..StepInput::default()
    };
    let mut s = solver(w, h);
    s.inject(&[
        blob([0.4, 0.5], 0.1, 5.0, 1.0),
        blob([1.2, 0.3], 0.05, -3.0, 0.0),
    ]);
    s.run_stage(Stage::ApplySplats, &params);
    let start: Vec<f32> = s.heat().to_vec();
    assert!(start.iter().any(|&t| t > 4.0) && start.iter().any(|&t| t < -2.0));
    let steps = 90;
    for _ in 0..steps {
        s.step(&params);
    }
    let f = s.read_fields();
    assert!(f.u.iter().chain(&f.v).all(|&x| x == 0.0), "the fluid moved");
    let k = (-cooling * DT * steps as f32).exp();
    for (a, b) in start.iter().zip(s.heat()) {
        assert!(
            (a * k - b).abs() <= 1e-4 * a.abs().max(1e-3),
            "{a} -> {b}, want {}",
            a * k
        );
    }
}

/// Heat never enters a solid: over 500 steps of a busy, buoyant scene the solid cells stay at
/// exactly 0, and a heat splat inside a solid changes nothing.
#[test]
fn heat_stays_out_of_solids() {
    let (w, h) = (96, 54);
    let mut s = solver(w, h);
    let mask = Mask::layout(Layout::Pillars, w, h);
    s.set_obstacles(Some(&mask));
    let params = StepInput {
        dt: DT,
        buoyancy: 3.0,
        weight: 0.5,
        cooling: 0.2,
        vorticity: 0.3,
        ..StepInput::default()
    };
    let aspect = w as f32 / h as f32;
    for n in 0..500 {
        if n % 5 == 0 {
            let x = (n as f32 * 0.137).fract() * aspect;
            let y = (n as f32 * 0.071).fract();
            let heat = if n % 15 == 0 { -2.0 } else { 2.0 };
            s.inject(&[blob([x, y], 0.05, heat, 0.5)]);
        }
        s.step(&params);
        for (k, (&t, &solid)) in s.heat().iter().zip(mask.cells()).enumerate() {
            assert!(!solid || t == 0.0, "step {n}: heat {t} in solid cell {k}");
        }
    }
    assert!(
        s.heat().iter().any(|&t| t.abs() > 0.05),
        "the scene had no heat"
    );
    // A splat wholly inside a solid (its reach, 3.5 radii = 1.75 cells, all solid), on the
    // disc layout, after some heat has flowed around it.
    let mask = Mask::layout(Layout::Disc, w, h);
    s.set_obstacles(Some(&mask));
    for _ in 0..20 {
        s.step(&params);
    }
    let (i, j) = (0..w * h)
        .map(|k| (k % w, k / w))
        .find(|&(i, j)| {
            i >= 2 && j >= 2 && (0..25).all(|d| mask.is_solid(i + d % 5 - 2, j + d / 5 - 2))
        })
        .expect("a solid five cells wide");
    let before = s.heat().to_vec();
    let centre = [(i as f32 + 0.5) / h as f32, (j as f32 + 0.5) / h as f32];
    s.inject(&[blob(centre, 0.5 / h as f32, 10.0, 0.0)]);
    s.run_stage(Stage::ApplySplats, &params);
    assert_eq!(s.heat(), &before[..]);
}
