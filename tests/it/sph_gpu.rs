//! The particle fluid on the GPU against the CPU reference (sim::sph): both GPU sorts give the
//! CPU's order and start table exactly, a step moves the particles as the CPU's does (to
//! rounding), pushes stay equal and opposite, and broken inputs stay finite. Runs on any
//! adapter; CI uses lavapipe, so the counts stay small.

use crate::common;

use dyeflow::sim::particles::hash::Grid;
use dyeflow::sim::particles::sources::Spread;
use dyeflow::sim::sph::gpu::{GpuFluid, Sort};
use dyeflow::sim::sph::{Fluid, Knobs};

fn random(n: usize, (w, h): (f32, f32), seed: u32) -> Vec<[f32; 2]> {
    let mut spread = Spread::new(seed);
    (0..n)
        .map(|_| [spread.draw() * w, spread.draw() * h])
        .collect()
}

/// `got == want`, or a panic naming the first difference (not the whole arrays).
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: first difference at {i} of {}: {:?} against {:?}",
            got.len(),
            got[i],
            want[i]
        );
    }
}

/// The CPU's order and start table of `points`.
fn cpu_sort(points: &[[f32; 2]], size: [f32; 2], radius: f32) -> (Vec<u32>, Vec<u32>) {
    let mut grid = Grid::new(size, radius);
    grid.sort(points);
    (grid.order, grid.start)
}

/// Random points at counts that are not powers of two (and one that is, and the edges of a
/// bitonic block), in boxes and grids of several shapes: both sorts give exactly the CPU's
/// order (by cell, by index within a cell) and start table.
#[test]
fn gpu_sorts_equal_the_cpu_sort() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let mut gpu = GpuFluid::new(ctx);
    let cases = [
        (0, [17.8, 10.0], 0.35, 1),
        (1, [17.8, 10.0], 0.35, 2),
        (2, [3.0, 3.0], 1.0, 3),
        (511, [17.8, 10.0], 0.35, 4),
        (512, [17.8, 10.0], 0.35, 5),
        (513, [17.8, 10.0], 0.2, 6),
        (1000, [5.0, 10.0], 0.5, 7),
        (4099, [17.8, 10.0], 0.35, 8),
        (70_001, [100.0, 60.0], 0.3, 9),
    ];
    for (n, size, radius, seed) in cases {
        // A few points just outside the box too: they fall into the edge cells.
        let mut points = random(n, (size[0] * 1.02, size[1] * 1.02), seed);
        for p in points.iter_mut().step_by(7) {
            p[0] -= 0.01 * size[0];
        }
        let want = cpu_sort(&points, size, radius);
        for sort in [Sort::Counting, Sort::Bitonic] {
            let got = gpu
                .sort_points(&points, size, radius, sort)
                .unwrap_or_else(|e| panic!("{sort:?}: {e}"));
            same(
                &got.1,
                &want.1,
                &format!("{sort:?}, {n} points: start table"),
            );
            same(&got.0, &want.0, &format!("{sort:?}, {n} points: order"));
        }
    }
}

/// Adversarial points: all in one cell, on cell boundaries and the box's edges, coincident.
/// Exact for both sorts up to the counting sort's settle limit; past it (a cell of 600
/// coincident points) the counting sort keeps the same set of particles per cell.
#[test]
fn gpu_sorts_handle_adversarial_points() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let mut gpu = GpuFluid::new(ctx);
    let (size, r) = ([1.6f32, 0.9f32], 0.1f32);
    let one: Vec<[f32; 2]> = random(300, (0.09, 0.09), 7)
        .into_iter()
        .map(|p| [p[0] + 0.5, p[1] + 0.3])
        .collect();
    let edges: Vec<[f32; 2]> = (0..=16)
        .flat_map(|i| (0..=9).map(move |j| [i as f32 * r, j as f32 * r]))
        .collect();
    let rim = vec![
        [0.0, 0.0],
        [size[0], size[1]],
        [size[0], 0.0],
        [0.0, size[1]],
        [-3.0, 0.4],
        [size[0] + 5.0, 0.5],
    ];
    for points in [one, edges, rim, vec![[0.3, 0.3]; 40]] {
        let want = cpu_sort(&points, size, r);
        for sort in [Sort::Counting, Sort::Bitonic] {
            let got = gpu.sort_points(&points, size, r, sort).unwrap();
            let what = format!("{sort:?}, {} points", points.len());
            same(&got.1, &want.1, &format!("{what}: start table"));
            same(&got.0, &want.0, &format!("{what}: order"));
        }
    }
    let crowd = vec![[0.3, 0.3]; 600];
    let want = cpu_sort(&crowd, size, r);
    let got = gpu.sort_points(&crowd, size, r, Sort::Bitonic).unwrap();
    same(
        &got.1,
        &want.1,
        "bitonic, 600 coincident points: start table",
    );
    same(&got.0, &want.0, "bitonic, 600 coincident points: order");
    let mut got = gpu.sort_points(&crowd, size, r, Sort::Counting).unwrap();
    same(
        &got.1,
        &want.1,
        "counting, 600 coincident points: start table",
    );
    got.0.sort_unstable();
    same(
        &got.0,
        &want.0,
        "counting, 600 coincident points: the same particles",
    );
}

/// A block of particles in a box, jittered, with small random velocities.
fn block(fluid: &mut Fluid, corner: [f32; 2], (cols, rows): (usize, usize), spacing: f32) {
    let jitter = random(cols * rows * 2, (1.0, 1.0), 11);
    for j in 0..rows {
        for i in 0..cols {
            let [a, b] = jitter[j * cols + i];
            let [c, d] = jitter[cols * rows + j * cols + i];
            let p = [
                corner[0] + (i as f32 + 0.2 * (a - 0.5)) * spacing,
                corner[1] + (j as f32 + 0.2 * (b - 0.5)) * spacing,
            ];
            fluid.add(p, [0.4 * (c - 0.5), 0.4 * (d - 0.5)], [a, b, c]);
        }
    }
}

/// The largest difference between two fluids' particles (same order: both sort the same
/// way), over the scale of the CPU's values.
fn differences(cpu: &Fluid, gpu: &Fluid) -> (f32, f32, f32) {
    assert_eq!(cpu.len(), gpu.len());
    let max = |a: &[[f32; 2]], b: &[[f32; 2]]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x[0] - y[0]).abs().max((x[1] - y[1]).abs()))
            .fold(0.0f32, f32::max)
    };
    let scale = |a: &[[f32; 2]]| a.iter().map(|x| x[0].hypot(x[1])).fold(0.0f32, f32::max);
    (
        max(&cpu.pos, &gpu.pos),
        max(&cpu.vel, &gpu.vel) / scale(&cpu.vel).max(1e-6),
        max(&cpu.density, &gpu.density) / cpu.density.iter().map(|d| d[0]).fold(0.0, f32::max),
    )
}

/// A collapsing column against a wall (gravity, walls, pressure, near pressure and viscosity
/// all at work), 10 steps on both: the same particles in the same order (so the same sort),
/// positions within 1e-4 box units (about 3e-4 of a smoothing radius), velocities within 1e-3
/// and densities within 1e-4 of their largest values. The CPU and GPU compute the same
/// operations in the same order; what is left is the GPU compiler's fused multiply-adds and
/// its division and square root, each within a few units in the last place, grown by 10
/// steps of a dense fluid. Both sorts.
#[test]
fn gpu_steps_match_the_cpu() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let mut gpu = GpuFluid::new(ctx);
    // With drag (the velocity dissipation), which the source has not.
    let knobs = Knobs {
        drag: 0.5,
        ..Knobs::default()
    };
    let spacing = 1.0 / knobs.target_density.sqrt();
    for sort in [Sort::Counting, Sort::Bitonic] {
        let mut cpu = Fluid::new(1.78);
        block(&mut cpu, [0.1, 0.1], (30, 50), spacing);
        gpu.set_sort(sort);
        gpu.upload(&cpu);
        let mut worst = (0.0f32, 0.0f32, 0.0f32);
        for step in 0..10 {
            cpu.step(&knobs, 1.0 / 180.0);
            gpu.step(&knobs, 1.0 / 180.0).unwrap();
            let mut back = Fluid::default();
            gpu.download(&mut back);
            assert_eq!(back.size(), cpu.size());
            same(
                &back.color,
                &cpu.color,
                &format!("{sort:?}, step {step}: colours, so order"),
            );
            let d = differences(&cpu, &back);
            worst = (worst.0.max(d.0), worst.1.max(d.1), worst.2.max(d.2));
        }
        eprintln!(
            "{sort:?}: position {:e}, velocity {:e}, density {:e}",
            worst.0, worst.1, worst.2
        );
        assert!(worst.0 < 1e-4, "{sort:?}: positions {worst:?}");
        assert!(worst.1 < 1e-3, "{sort:?}: velocities {worst:?}");
        assert!(worst.2 < 1e-4, "{sort:?}: densities {worst:?}");
        // It moved: the column fell and spread.
        assert!(cpu.kinetic_energy() > 1.0);
    }
}

/// A pile past the neighbour cap (300 particles within a tenth of a radius, beside a calm
/// block): both keep each particle's first `MAX_NEIGHBOURS` neighbours in sorted order, so
/// one step gives the same densities (within 1e-4 of the largest) and the same velocities
/// (1e-3). Without the cap on one side the pile's densities differ by more than half.
#[test]
fn gpu_piles_keep_the_cpus_neighbour_cap() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let mut gpu = GpuFluid::new(ctx);
    let knobs = Knobs::default();
    let mut cpu = Fluid::new(1.78);
    block(
        &mut cpu,
        [1.0, 1.0],
        (20, 20),
        1.0 / knobs.target_density.sqrt(),
    );
    let mut spread = Spread::new(5);
    for _ in 0..300 {
        let p = [8.0 + 0.03 * spread.draw(), 5.0 + 0.03 * spread.draw()];
        assert!(cpu.add(p, [0.0; 2], [0.5; 3]));
    }
    gpu.upload(&cpu);
    cpu.step(&knobs, 1.0 / 180.0);
    gpu.step(&knobs, 1.0 / 180.0).unwrap();
    let mut back = Fluid::default();
    gpu.download(&mut back);
    same(&back.color, &cpu.color, "colours, so order");
    let (_, dv, dd) = differences(&cpu, &back);
    eprintln!("pile: velocity {dv:e}, density {dd:e}");
    assert!(dd < 1e-4, "densities {dd}");
    assert!(dv < 1e-3, "velocities {dv}");
    // The pile did reach the cap: its densities are those of 129 particles at most.
    let kern = dyeflow::sim::particles::kernels::Kernels::<2>::new(knobs.radius);
    let most = cpu.density.iter().map(|d| d[0]).fold(0.0, f32::max);
    let capped = (dyeflow::sim::particles::MAX_NEIGHBOURS + 1) as f32 * kern.densities(0.0)[0];
    assert!(most <= capped * 1.0001, "{most} against {capped}");
    assert!(
        most > 0.5 * capped,
        "the pile should be at the cap: {most} against {capped}"
    );
}

/// The density's quartiles (25, 50 and 75 %).
fn density_quartiles(f: &Fluid) -> [f32; 3] {
    let mut d: Vec<f32> = f.density.iter().map(|d| d[0]).collect();
    d.sort_by(f32::total_cmp);
    [d[d.len() / 4], d[d.len() / 2], d[3 * d.len() / 4]]
}

fn centre_of_mass(f: &Fluid) -> [f64; 2] {
    let n = f.len() as f64;
    f.pos.iter().fold([0.0; 2], |c, p| {
        [c[0] + f64::from(p[0]) / n, c[1] + f64::from(p[1]) / n]
    })
}

/// Over a long horizon (a dam break for 3 simulated seconds, 540 steps) the particles'
/// paths part (a liquid is chaotic: rounding grows), but the liquid does the same thing on
/// both: the centres of mass end within 0.15 box units (under half a smoothing radius), the
/// kinetic energies within 5 % of the energy the fall released, and the density's quartiles
/// within 2 % of the target density of each other (the distribution, not just its middle).
#[test]
fn gpu_long_runs_match_the_cpu_in_aggregate() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let mut gpu = GpuFluid::new(ctx);
    let knobs = Knobs {
        drag: 1.0,
        ..Knobs::default()
    };
    let spacing = 1.0 / knobs.target_density.sqrt();
    let mut cpu = Fluid::new(1.78);
    block(&mut cpu, [0.1, 0.1], (30, 50), spacing);
    let height = |f: &Fluid| f.pos.iter().map(|p| f64::from(p[1])).sum::<f64>();
    let start = height(&cpu);
    gpu.upload(&cpu);
    for _ in 0..540 {
        cpu.step(&knobs, 1.0 / 180.0);
        gpu.step(&knobs, 1.0 / 180.0).unwrap();
    }
    let mut back = Fluid::default();
    gpu.download(&mut back);
    assert_eq!(back.len(), cpu.len());
    let released = f64::from(knobs.gravity) * (start - height(&cpu));
    let (a, b) = (centre_of_mass(&cpu), centre_of_mass(&back));
    let (ka, kb) = (cpu.kinetic_energy(), back.kinetic_energy());
    let (qa, qb) = (density_quartiles(&cpu), density_quartiles(&back));
    let apart = qa
        .iter()
        .zip(&qb)
        .map(|(x, y)| (x - y).abs() / knobs.target_density)
        .fold(0.0f32, f32::max);
    eprintln!(
        "centres {a:?} and {b:?}, kinetic energies {ka:.1} and {kb:.1} of {released:.1} released, \
         density quartiles {qa:?} and {qb:?}"
    );
    let paths: f32 = differences(&cpu, &back).0;
    eprintln!("largest position difference {paths}");
    assert!((a[0] - b[0]).hypot(a[1] - b[1]) < 0.15, "{a:?} {b:?}");
    assert!((ka - kb).abs() < 0.05 * released, "{ka} {kb} of {released}");
    assert!(apart < 0.02, "{qa:?} {qb:?}");
    assert!(released > 100.0, "the column fell: {released}");
}

/// With gravity off and no wall in reach, total momentum on the GPU moves only by rounding
/// over 300 steps (the CPU test runs 1 000; lavapipe is slow): within 1e-6 of the sum of the
/// speeds, as on the CPU.
#[test]
fn gpu_momentum_is_conserved() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let mut gpu = GpuFluid::new(ctx);
    let mut fluid = Fluid::new(1.0);
    let knobs = Knobs {
        gravity: 0.0,
        ..Knobs::default()
    };
    block(
        &mut fluid,
        [3.6, 3.6],
        (20, 20),
        1.0 / knobs.target_density.sqrt(),
    );
    let before = fluid.momentum();
    let speeds: f64 = fluid.vel.iter().map(|v| f64::from(v[0].hypot(v[1]))).sum();
    gpu.upload(&fluid);
    for _ in 0..300 {
        gpu.step(&knobs, 1.0 / 180.0).unwrap();
    }
    let mut back = Fluid::default();
    gpu.download(&mut back);
    let m = back.momentum();
    let drift = (m[0] - before[0]).hypot(m[1] - before[1]);
    eprintln!("GPU momentum drift {drift:e} against speeds {speeds:e}");
    assert!(drift < 1e-6 * speeds, "drift {drift} against {speeds}");
    assert!(back.kinetic_energy() > 0.0);
    let reach = knobs.radius;
    assert!(
        back.pos
            .iter()
            .all(|p| p.iter().all(|&x| x > reach && x < 10.0 - reach))
    );
}

/// Coincident particles, broken knobs and steps, no particles: never NaN, never outside the
/// box.
#[test]
fn gpu_broken_inputs_stay_finite_and_inside() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    let mut gpu = GpuFluid::new(ctx);
    gpu.upload(&Fluid::new(1.0));
    gpu.step(&Knobs::default(), 1.0 / 60.0).unwrap();
    assert!(gpu.is_empty());
    let mut fluid = Fluid::new(1.78);
    for _ in 0..60 {
        fluid.add([5.0, 5.0], [0.0; 2], [1.0; 3]);
    }
    fluid.add([f32::NAN, 1.0], [f32::INFINITY, 0.0], [1.0; 3]);
    fluid.add([1e30, -1e30], [1e30, 1e30], [1.0; 3]);
    let broken = [
        Knobs::default(),
        Knobs {
            gravity: f32::NAN,
            radius: f32::INFINITY,
            pressure: f32::MAX,
            gravity_dir: [0.0, 0.0],
            ..Knobs::default()
        },
        Knobs {
            target_density: f32::NEG_INFINITY,
            near_pressure: f32::NAN,
            viscosity: 1e30,
            radius: 0.0,
            ..Knobs::default()
        },
    ];
    for sort in [Sort::Counting, Sort::Bitonic] {
        gpu.set_sort(sort);
        gpu.upload(&fluid);
        for knobs in broken {
            for dt in [1.0 / 60.0, f32::NAN, 1e9, -1.0] {
                for _ in 0..5 {
                    gpu.step(&knobs, dt).unwrap();
                }
            }
        }
        let mut back = Fluid::default();
        gpu.download(&mut back);
        let [w, h] = back.size();
        assert_eq!(back.len(), fluid.len());
        for (p, v) in back.pos.iter().zip(&back.vel) {
            assert!(
                p.iter().chain(v).all(|x| x.is_finite()),
                "{sort:?}: {p:?} {v:?}"
            );
            assert!(
                (0.0..=w).contains(&p[0]) && (0.0..=h).contains(&p[1]),
                "{p:?}"
            );
        }
        let ys = back.pos.iter().map(|p| p[1]);
        let spread = ys.clone().fold(f32::MIN, f32::max) - ys.fold(f32::MAX, f32::min);
        assert!(
            spread > 0.1,
            "{sort:?}: coincident particles not pushed apart: {spread}"
        );
    }
}

/// Obstacles on the GPU (sph_solids.wgsl) as on the CPU (sim/sph/solids.rs): 2 000 particles
/// thrown at a block and a wall one cell thick, at up to 30 box units a second (1.7 cells a
/// step), for 6 steps: the same particles in the same places (within 1e-4 box units, the
/// 10-step parity's tolerance), none inside a solid on either. (Longer, the particles piling
/// up against the wall amplify the rounding of their pressure about twofold a step: 1e-6
/// after 4 steps, 1e-4 after 10.)
#[test]
fn gpu_collisions_match_the_cpu() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    use dyeflow::sim::obstacles::Mask;
    use dyeflow::sim::sph::solids::Solids;
    let mut mask = Mask::empty(100, 100);
    for j in 0..100 {
        for i in 0..100 {
            if ((40..60).contains(&i) && j < 50) || i == 80 {
                mask.set(i, j, true);
            }
        }
    }
    let solids = Solids::new(&mask, [10.0, 10.0]).expect("solids");
    let mut cpu = Fluid::with_size(10.0, 10.0);
    let points = random(6000, (10.0, 10.0), 5);
    let speeds = random(2000, (60.0, 60.0), 9);
    for (p, v) in points.iter().filter(|p| !solids.contains(**p)).zip(&speeds) {
        cpu.add(*p, [v[0] - 30.0, v[1] - 30.0], [p[0], p[1], 0.0]);
    }
    assert_eq!(cpu.len(), 2000);
    let knobs = Knobs::default();
    let mut gpu = GpuFluid::new(ctx);
    gpu.upload(&cpu);
    gpu.set_solids(Some(&solids));
    let dt = 1.0 / 180.0;
    let mut worst = 0.0f32;
    for step in 0..6 {
        cpu.step(&knobs, dt);
        solids.collide(&mut cpu, dt, knobs.wall_bounce);
        gpu.step(&knobs, dt).unwrap();
        let mut back = Fluid::default();
        gpu.download(&mut back);
        same(
            &back.color,
            &cpu.color,
            &format!("step {step}: colours, so order"),
        );
        let inside = |f: &Fluid| f.pos.iter().filter(|p| solids.contains(**p)).count();
        assert_eq!(inside(&cpu), 0, "step {step}: CPU");
        assert_eq!(inside(&back), 0, "step {step}: GPU");
        let (dp, _, _) = differences(&cpu, &back);
        worst = worst.max(dp);
        assert!(dp < 1e-4, "step {step}: positions {dp}");
    }
    eprintln!("collisions: positions within {worst:e}");
    // They hit: some bounced back off the block's and the wall's faces.
    let reflected = cpu
        .pos
        .iter()
        .zip(&cpu.vel)
        .filter(|(p, v)| (p[0] - 4.0).abs() < 0.05 && v[0] < 0.0)
        .count();
    assert!(reflected > 0, "none bounced off the block's left face");
    // Without obstacles the GPU moves through the block again.
    gpu.set_solids(None);
    gpu.step(&knobs, dt).unwrap();
}

/// A particle: serial number, position, velocity, colour.
type Particle = (u64, [f32; 2], [f32; 2], [f32; 3]);

/// The particles of `f` by serial number.
fn by_serial(f: &Fluid) -> Vec<Particle> {
    let mut v: Vec<_> = (0..f.len())
        .map(|i| (f.birth[i], f.pos[i], f.vel[i], f.color[i]))
        .collect();
    v.sort_by_key(|x| x.0);
    v
}

/// What reaches the particles from outside, on the GPU as on the CPU: new particles past the
/// budget take the oldest ones' places (the same particles by serial number: the oldest gone,
/// the new ones there with their serial numbers, whatever their places in the arrays); the
/// serial numbers survive steps (the sort moves them with their particles); impulses (a
/// shock, a pull, a push) change the velocities alike (within 1e-5 of their scale, the
/// three steps' parity).
#[test]
fn gpu_sources_match_the_cpu() {
    let Some(ctx) = common::gpu_context() else {
        return;
    };
    use dyeflow::sim::sph::sources::Impulse;
    let knobs = Knobs::default();
    let spacing = 1.0 / knobs.target_density.sqrt();
    let mut cpu = Fluid::new(1.78);
    block(&mut cpu, [2.0, 1.0], (30, 30), spacing);
    let mut gpu = GpuFluid::new(ctx);
    gpu.upload(&cpu);
    for _ in 0..3 {
        cpu.step(&knobs, 1.0 / 180.0);
        gpu.step(&knobs, 1.0 / 180.0).unwrap();
    }
    let mut back = Fluid::default();
    gpu.download(&mut back);
    let serials = |f: &Fluid| by_serial(f).iter().map(|x| x.0).collect::<Vec<_>>();
    assert_eq!(serials(&back), serials(&cpu), "serial numbers after steps");
    // 300 new particles into a budget of 1 100 (900 there): the 200 oldest make room.
    let new: Vec<([f32; 2], [f32; 2], [f32; 3])> = random(300, (17.0, 10.0), 3)
        .into_iter()
        .enumerate()
        .map(|(k, p)| (p, [k as f32 * 0.01, -1.0], [0.0, 1.0, k as f32 / 300.0]))
        .collect();
    let budget = 1100;
    let free = budget - cpu.len();
    cpu.remove_oldest(new.len() - free);
    for (p, v, c) in &new {
        cpu.add(*p, *v, *c);
    }
    gpu.add(&new, budget);
    let impulses = [
        Impulse::Shock {
            centre: [4.0, 2.0],
            reach: 1.5,
            force: [5.0, 3.0],
        },
        Impulse::Pull {
            centre: [3.0, 2.5],
            reach: 2.0,
            pull: 4.0,
            calm: 0.02,
        },
        Impulse::Pull {
            centre: [9.0, 5.0],
            reach: 3.0,
            pull: -6.0,
            calm: 0.0,
        },
    ];
    for i in &impulses {
        cpu.apply(i);
    }
    gpu.apply(&impulses);
    gpu.download(&mut back);
    assert_eq!(back.len(), budget);
    assert_eq!(back.births, cpu.births);
    let (a, b) = (by_serial(&cpu), by_serial(&back));
    assert_eq!(
        a.iter().map(|x| x.0).collect::<Vec<_>>(),
        b.iter().map(|x| x.0).collect::<Vec<_>>(),
        "the same particles by serial number"
    );
    let scale = a
        .iter()
        .map(|x| x.2[0].hypot(x.2[1]))
        .fold(0.0f32, f32::max);
    let mut kicked = 0;
    for (x, y) in a.iter().zip(&b) {
        // The new particles exactly where they were put; the others as three steps left
        // them (the steps' parity: within 1e-5).
        assert_eq!(x.3, y.3, "serial {}: colour", x.0);
        let dp = (x.1[0] - y.1[0]).abs().max((x.1[1] - y.1[1]).abs());
        if x.0 >= 900 {
            assert_eq!(x.1, y.1, "serial {}: a new particle's place", x.0);
        } else {
            assert!(dp < 1e-5, "serial {}: {:?} against {:?}", x.0, x.1, y.1);
        }
        let dv = (x.2[0] - y.2[0]).abs().max((x.2[1] - y.2[1]).abs());
        assert!(
            dv <= 1e-5 * scale,
            "serial {}: {:?} against {:?}",
            x.0,
            x.2,
            y.2
        );
        kicked += usize::from(x.0 < 900 && x.2[0] > 1.0);
    }
    assert!(kicked > 10, "the shock pushed {kicked}");
    // And they step on together.
    cpu.step(&knobs, 1.0 / 180.0);
    gpu.step(&knobs, 1.0 / 180.0).unwrap();
    gpu.download(&mut back);
    assert_eq!(serials(&back), serials(&cpu));
}
