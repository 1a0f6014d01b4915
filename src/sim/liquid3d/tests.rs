//! The 3D liquid's core: its kernels, momentum, a dam break that settles, broken inputs.

use super::*;

/// A block of `n` particles `spacing` apart from `corner`, jittered a little (a seeded
/// generator), at rest or with small random velocities.
fn block(liquid: &mut Liquid, corner: [f32; 3], n: [usize; 3], spacing: f32, speed: f32) {
    let mut seed = 12_345u32;
    let mut next = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    };
    for i in 0..n[0] {
        for j in 0..n[1] {
            for k in 0..n[2] {
                let p = [
                    corner[0] + (i as f32 + 0.5 + 0.2 * next()) * spacing,
                    corner[1] + (j as f32 + 0.5 + 0.2 * next()) * spacing,
                    corner[2] + (k as f32 + 0.5 + 0.2 * next()) * spacing,
                ];
                let v = [speed * next(), speed * next(), speed * next()];
                assert!(liquid.add(p, v, [1.0; 3]));
            }
        }
    }
}

/// Each density kernel integrates to 1 over its ball (a midpoint sum on a fine lattice):
/// the normalisations of the header are right.
#[test]
fn the_kernels_integrate_to_one() {
    let h = 0.7f32;
    let kern = Kernels::new(h);
    let n = 120;
    let cell = 2.0 * h / n as f32;
    let mut sums = [0.0f64; 3];
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let at = |m: usize| -h + (m as f32 + 0.5) * cell;
                let r2 = at(i) * at(i) + at(j) * at(j) + at(k) * at(k);
                let [w2, w3] = kern.densities(r2);
                sums[0] += f64::from(w2);
                sums[1] += f64::from(w3);
                if r2 < h * h {
                    sums[2] += f64::from(kern.poly6(r2));
                }
            }
        }
    }
    let volume = f64::from(cell).powi(3);
    for (name, sum) in ["density", "near density", "viscosity"].iter().zip(sums) {
        let integral = sum * volume;
        assert!((integral - 1.0).abs() < 0.01, "{name}: {integral}");
    }
    // The slopes are the derivatives: a central difference at r = 0.3 h.
    let r = 0.3 * h;
    let e = 1e-3 * h;
    let diff = |f: usize| {
        (kern.densities((r + e) * (r + e))[f] - kern.densities((r - e) * (r - e))[f]) / (2.0 * e)
    };
    for (f, slope) in kern.slopes(r).into_iter().enumerate() {
        assert!(
            (diff(f) - slope).abs() < 1e-3 * slope.abs(),
            "slope {f}: {} against {slope}",
            diff(f)
        );
    }
}

/// A cubic lattice 6 cm apart has the default target density inside: the target means
/// "particles 6 cm apart" (the kernel sum on a lattice, self included, is 1.098 times 1/0.06³).
#[test]
fn a_lattice_at_rest_is_at_the_target_density() {
    let knobs = Knobs::default();
    let spacing = 0.06;
    let mut liquid = Liquid::new([1.0, 1.0, 1.0]);
    let n = (1.0 / spacing) as usize;
    block(&mut liquid, [0.0; 3], [n, n, n], spacing, 0.0);
    let knobs = Knobs {
        gravity: [0.0; 3],
        ..knobs
    };
    liquid.step(&knobs, 1e-6);
    // Particles well inside (two radii from every wall).
    let inside: Vec<f32> = liquid
        .pos
        .iter()
        .zip(&liquid.density)
        .filter(|(p, _)| {
            p.iter()
                .all(|&x| x > 2.0 * knobs.radius && x < 1.0 - 2.0 * knobs.radius)
        })
        .map(|(_, d)| d[0])
        .collect();
    assert!(inside.len() > 100, "{}", inside.len());
    let mean = inside.iter().sum::<f32>() / inside.len() as f32;
    let error = (mean - knobs.target_density) / knobs.target_density;
    eprintln!(
        "lattice density {mean} against {}: {error:+.4}",
        knobs.target_density
    );
    assert!(error.abs() < 0.005, "{error}");
    let neighbours = liquid.neighbours_mean(knobs.radius);
    assert!((20.0..40.0).contains(&neighbours), "{neighbours}");
}

/// Without gravity and far from the walls, the pairs' pushes cancel: the total momentum only
/// moves by rounding over 300 steps, while the particles do move.
#[test]
fn momentum_is_conserved_without_gravity_and_walls() {
    let knobs = Knobs {
        gravity: [0.0; 3],
        ..Knobs::default()
    };
    let mut liquid = Liquid::new([3.0, 3.0, 3.0]);
    block(&mut liquid, [1.2, 1.2, 1.2], [10, 10, 10], 0.06, 0.4);
    let before = liquid.momentum();
    let speeds: f64 = liquid
        .vel
        .iter()
        .map(|v| f64::from((v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()))
        .sum();
    let mut drift = 0.0f64;
    for _ in 0..300 {
        liquid.step(&knobs, SUBSTEP_S);
        let m = liquid.momentum();
        let d = (0..3)
            .map(|c| (m[c] - before[c]).powi(2))
            .sum::<f64>()
            .sqrt();
        drift = drift.max(d);
        assert!(
            liquid
                .pos
                .iter()
                .all(|p| p.iter().all(|&x| x > 0.2 && x < 2.8)),
            "a particle reached a wall"
        );
    }
    eprintln!("momentum drift {drift:e} against speeds {speeds:e}");
    assert!(drift < 1e-5 * speeds, "drift {drift} against {speeds}");
    assert!(liquid.kinetic_energy() > 0.0);
}

/// The 3D dam break: a block of liquid against one end of the tank falls and spreads. After 5
/// simulated seconds the median particle's density is within 3 % of the target, the kinetic
/// energy is under 1 % of the potential energy released, every particle is in the tank and
/// none was lost.
#[test]
fn a_dam_break_settles() {
    let knobs = Knobs::default();
    let size = [0.9, 1.0, 0.48];
    let mut liquid = Liquid::new(size);
    block(&mut liquid, [0.0; 3], [8, 14, 8], 0.06, 0.0);
    let count = liquid.len();
    let start_energy = liquid.potential_energy(knobs.gravity);
    let steps = (5.0 / SUBSTEP_S) as usize;
    for _ in 0..steps {
        liquid.step(&knobs, SUBSTEP_S);
    }
    assert_eq!(liquid.len(), count);
    assert!(
        liquid
            .pos
            .iter()
            .all(|p| (0..3).all(|c| p[c] >= 0.0 && p[c] <= size[c])),
        "a particle left the tank"
    );
    let released = start_energy - liquid.potential_energy(knobs.gravity);
    let kinetic = liquid.kinetic_energy();
    let error = liquid.density_error(knobs.target_density);
    let top = liquid.pos.iter().map(|p| p[1]).fold(0.0f32, f32::max);
    eprintln!(
        "{count} particles: density error {error:+.4}, kinetic {kinetic:.4} J of {released:.2} J \
         released, surface at {top:.3} m"
    );
    assert!(released > 0.0);
    assert!(
        error.abs() < 0.03,
        "median density {error:+.4} from the target"
    );
    assert!(
        kinetic < 0.01 * released,
        "kinetic {kinetic} of {released} released"
    );
    // It spread over the floor and kept its volume: 896 particles 6 cm apart over 0.9 x 0.48 m
    // make a pool 0.45 m deep (the top particles a little below the surface).
    assert!((0.40..0.50).contains(&top), "surface at {top}");
    // Nothing sticks to the walls: the walls push and never pull, so no layer of particles
    // lies on them (without the walls' terms a tenth of the particles lay on the floor).
    let on_walls = liquid
        .pos
        .iter()
        .filter(|p| (0..3).any(|c| p[c] < 0.005 || p[c] > size[c] - 0.005))
        .count();
    assert!(
        on_walls * 100 < count,
        "{on_walls} of {count} particles on the walls"
    );
}

#[test]
fn broken_inputs_stay_finite_and_inside() {
    let mut empty = Liquid::new([f32::NAN, -1.0, f32::INFINITY]);
    empty.step(&Knobs::default(), SUBSTEP_S);
    assert!(empty.is_empty());
    let mut liquid = Liquid::new([1.0, 1.0, 1.0]);
    for _ in 0..50 {
        liquid.add([0.5, 0.5, 0.5], [0.0; 3], [1.0; 3]);
    }
    liquid.add([f32::NAN, 0.1, 0.1], [f32::INFINITY, 0.0, 0.0], [1.0; 3]);
    liquid.add([1e30, -1e30, 0.0], [1e30, 1e30, 1e30], [1.0; 3]);
    let broken = [
        Knobs::default(),
        Knobs {
            gravity: [f32::NAN, f32::INFINITY, 1e30],
            radius: f32::INFINITY,
            stiffness: f32::MAX,
            ..Knobs::default()
        },
        Knobs {
            target_density: f32::NEG_INFINITY,
            near_stiffness: f32::NAN,
            viscosity: -1.0,
            wall_bounce: 7.0,
            ..Knobs::default()
        },
    ];
    for knobs in broken {
        for dt in [SUBSTEP_S, f32::NAN, 1e9, -1.0] {
            liquid.step(&knobs, dt);
        }
    }
    let size = liquid.size();
    for (p, v) in liquid.pos.iter().zip(&liquid.vel) {
        assert!(p.iter().chain(v).all(|x| x.is_finite()), "{p:?} {v:?}");
        assert!((0..3).all(|c| p[c] >= 0.0 && p[c] <= size[c]), "{p:?}");
    }
}

/// The walls' closed forms are the kernels' integrals over the half-space beyond a wall (a
/// midpoint sum), half of each at the wall, and their slopes the derivatives.
#[test]
fn the_walls_are_the_kernels_beyond_them() {
    let h = 0.5f32;
    let kern = Kernels::new(h);
    let [f2, f3, _, _] = kern.wall(0.0).unwrap();
    assert!(
        (f2 - 0.5).abs() < 1e-6 && (f3 - 0.5).abs() < 1e-6,
        "{f2} {f3}"
    );
    assert!(kern.wall(h).is_none() && kern.wall(f32::NAN).is_none());
    let n = 100;
    let cell = 2.0 * h / n as f32;
    for d in [0.1 * h, 0.45 * h, 0.8 * h] {
        let mut sums = [0.0f64; 2];
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    let at = |m: usize| -h + (m as f32 + 0.5) * cell;
                    // Beyond a wall at x = d.
                    if at(i) > d {
                        let w = kern.densities(at(i) * at(i) + at(j) * at(j) + at(k) * at(k));
                        sums[0] += f64::from(w[0]);
                        sums[1] += f64::from(w[1]);
                    }
                }
            }
        }
        let volume = f64::from(cell).powi(3);
        let wall = kern.wall(d).unwrap();
        for f in 0..2 {
            let integral = sums[f] * volume;
            assert!(
                (integral - f64::from(wall[f])).abs() < 0.01,
                "kernel {f} at {d}: {integral} against {}",
                wall[f]
            );
        }
        let e = 1e-3 * h;
        let (near, far) = (kern.wall(d - e).unwrap(), kern.wall(d + e).unwrap());
        for f in 0..2 {
            let slope = (near[f] - far[f]) / (2.0 * e);
            assert!(
                (slope - wall[f + 2]).abs() < 2e-3 * wall[f + 2].abs(),
                "slope {f} at {d}: {slope} against {}",
                wall[f + 2]
            );
        }
    }
}

/// A pile of particles in one place (what a broken input is reset to) keeps a bounded number
/// of neighbours each: the step's lists stay at most `MAX_NEIGHBOURS` a particle, and the pile
/// spreads apart.
#[test]
fn a_pile_in_one_place_keeps_bounded_neighbours() {
    let mut liquid = Liquid::new([1.0, 1.0, 1.0]);
    for _ in 0..3000 {
        liquid.add([0.5, 0.5, 0.5], [0.0; 3], [1.0; 3]);
    }
    let knobs = Knobs {
        gravity: [0.0; 3],
        ..Knobs::default()
    };
    liquid.step(&knobs, SUBSTEP_S);
    let kept: usize = liquid.pairs.iter().map(|p| p.list.len()).sum();
    assert_eq!(kept, 3000 * MAX_NEIGHBOURS, "pairs kept");
    for _ in 0..200 {
        liquid.step(&knobs, SUBSTEP_S);
    }
    let spread = liquid
        .pos
        .iter()
        .map(|p| dist2(*p, [0.5, 0.5, 0.5]).sqrt())
        .fold(0.0f32, f32::max);
    assert!(spread > 0.1, "the pile stayed within {spread} m");
    assert!(liquid.pos.iter().flatten().all(|x| x.is_finite()));
}

/// A calm pool 0.42 m deep (7 layers 6 cm apart over a 1.2 x 0.6 m floor).
fn pool() -> Liquid {
    let mut liquid = Liquid::new([1.2, 1.0, 0.6]);
    block(&mut liquid, [0.0; 3], [20, 7, 10], 0.06, 0.0);
    liquid
}

/// A floater dropped onto a calm pool splashes in (the liquid moves: the coupling goes both
/// ways), then floats with its centre near the surface (half under: within a third of its
/// radius of the surface, which its volume raises by 2 cm), inside the tank; pushed under, it
/// comes back up. The same on one thread and on several.
#[test]
fn a_floater_floats_half_under_and_comes_back_up() {
    use floaters::{DENSITY, Floater, RADIUS_H};
    let knobs = Knobs::default();
    let run = |threads: usize| {
        let pool_ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool_.install(|| {
            let mut liquid = pool();
            let surface = 7.0 * 0.06;
            let r = RADIUS_H * knobs.radius;
            liquid
                .floaters
                .push(Floater::new([0.6, surface + 2.0 * r, 0.3], r));
            let mut stirred = 0.0f64;
            for step in 0..(4.0 / SUBSTEP_S) as usize {
                liquid.step(&knobs, SUBSTEP_S);
                if step == 60 {
                    stirred = liquid.kinetic_energy();
                }
            }
            (liquid, surface, r, stirred)
        })
    };
    let (mut liquid, surface, r, stirred) = run(1);
    let f = liquid.floaters[0];
    eprintln!(
        "floater at {:?} (surface {surface}, radius {r}), moving {:?}; the splash stirred {stirred} J",
        f.pos, f.vel
    );
    assert!(stirred > 0.5, "the liquid felt the ball: {stirred} J");
    assert!(
        (f.pos[1] - surface).abs() < r / 3.0,
        "centre {} against the surface {surface} (density {DENSITY})",
        f.pos[1]
    );
    assert!(f.vel.iter().all(|v| v.abs() < 0.1), "at rest: {:?}", f.vel);
    let (other, ..) = run(2);
    assert_eq!(
        other.floaters, liquid.floaters,
        "the same on 1 and 2 threads"
    );
    // Pushed under: back up within a second.
    liquid.floaters[0].pos[1] = 0.5 * surface;
    liquid.floaters[0].vel = [0.0; 3];
    for _ in 0..(1.0 / SUBSTEP_S) as usize {
        liquid.step(&knobs, SUBSTEP_S);
    }
    let f = liquid.floaters[0];
    assert!(f.pos[1] > surface - 0.5 * r, "came back up to {}", f.pos[1]);
    assert!(
        liquid
            .pos
            .iter()
            .all(|p| (0..3).all(|c| p[c] >= 0.0 && p[c] <= liquid.size()[c])),
        "every particle in the tank"
    );
    // No particle inside the ball.
    let inside = liquid
        .pos
        .iter()
        .filter(|p| floaters::contact(**p, &f).0 < -0.01)
        .count();
    assert_eq!(inside, 0);
}

/// Without gravity, a floater thrown through resting liquid slows down and the liquid takes
/// up its momentum: the total (particles, and the floater at its mass) stays within 1e-4 of
/// the throw's over half a second.
#[test]
fn a_floater_and_the_liquid_share_momentum() {
    use floaters::{Floater, RADIUS_H};
    let knobs = Knobs {
        gravity: [0.0; 3],
        ..Knobs::default()
    };
    let mut liquid = Liquid::new([3.0, 3.0, 3.0]);
    block(&mut liquid, [0.9, 0.9, 0.9], [20, 20, 20], 0.06, 0.0);
    let r = RADIUS_H * knobs.radius;
    let mut f = Floater::new([0.9 + 0.3, 1.5, 1.5], r);
    f.vel = [1.0, 0.0, 0.0];
    liquid.floaters.push(f);
    let spacing = spacing(knobs.target_density);
    let total = |l: &Liquid| {
        let m = l.momentum();
        let f = l.floaters[0];
        let mf = f64::from(f.mass(spacing));
        [0, 1, 2].map(|c| m[c] + mf * f64::from(f.vel[c]))
    };
    let before = total(&liquid);
    for _ in 0..90 {
        liquid.step(&knobs, SUBSTEP_S);
    }
    let after = total(&liquid);
    let f = liquid.floaters[0];
    eprintln!(
        "momentum {before:?} -> {after:?}; floater moving {:?}",
        f.vel
    );
    assert!(f.vel[0] < 0.8, "the liquid slowed it: {:?}", f.vel);
    assert!(
        liquid.momentum()[0] > 0.2 * before[0],
        "and took its momentum"
    );
    assert!(
        (after[0] - before[0]).abs() < 1e-4 * before[0],
        "{before:?} -> {after:?}"
    );
}
