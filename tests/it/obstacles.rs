//! Obstacles in the CPU solver: no flow through solid faces, a projection as good as without
//! them, no dye inside solids, splats inside solids do nothing, and the pressure kernels with
//! couplings agree with the plain ones when nothing is solid.

use dyeflow::fluid::{Splat, SplatShape};
use dyeflow::sim::grid::cpu::CpuSolver;
use dyeflow::sim::grid::cpu::pressure::{self, Faces, Multigrid, Split, SplitFaces};
use dyeflow::sim::obstacles::{Layout, Mask};
use dyeflow::sim::{PressureMethod, SimConfig, Solver, Stage, StepInput};
use rand::{Rng, SeedableRng};

const W: usize = 96;
const H: usize = 54;

fn params() -> StepInput {
    StepInput {
        dt: 1.0 / 60.0,
        vorticity: 0.3,
        ..StepInput::default()
    }
}

fn solver(method: PressureMethod, iterations: u32) -> CpuSolver {
    let mut cfg = SimConfig::new(W, H);
    cfg.pressure = method;
    cfg.pressure_iterations = iterations;
    cfg.dye_scale = 2;
    CpuSolver::new(&cfg, 2).unwrap()
}

/// A velocity field with long waves (what relaxation removes slowly) and cell-scale noise.
fn rough_velocity(seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let wave = |x: f32, y: f32, a: f32| (a * x).sin() * (0.7 * a * y).cos();
    let u = (0..(W + 1) * H)
        .map(|k| {
            let (i, j) = (
                (k % (W + 1)) as f32 / W as f32,
                (k / (W + 1)) as f32 / H as f32,
            );
            wave(i, j, 3.0) + 0.3 * rng.random_range(-1.0f32..1.0)
        })
        .collect();
    let v = (0..W * (H + 1))
        .map(|k| {
            let (i, j) = ((k % W) as f32 / W as f32, (k / W) as f32 / H as f32);
            wave(j, i, 2.0) + 0.3 * rng.random_range(-1.0f32..1.0)
        })
        .collect();
    (u, v)
}

/// Divergence of each fluid cell (all cells without a mask).
fn fluid_divergence(u: &[f32], v: &[f32], mask: Option<&Mask>) -> Vec<f32> {
    let mut out = Vec::new();
    for j in 0..H {
        for i in 0..W {
            if mask.is_some_and(|m| m.is_solid(i, j)) {
                continue;
            }
            out.push(
                u[j * (W + 1) + i + 1] - u[j * (W + 1) + i] + v[(j + 1) * W + i] - v[j * W + i],
            );
        }
    }
    out
}

fn rms(x: &[f32]) -> f32 {
    (x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32).sqrt()
}

/// One projection of the rough field: (RMS divergence after / before in fluid cells, the
/// largest speed through a solid face, the largest speed anywhere).
fn project_once(method: PressureMethod, iterations: u32, mask: Option<&Mask>) -> (f32, f32, f32) {
    let mut s = solver(method, iterations);
    s.set_obstacles(mask);
    let mut f = s.read_fields();
    let (u, v) = rough_velocity(7);
    f.u = u;
    f.v = v;
    s.write_fields(&f);
    let before = s.read_fields();
    let before = rms(&fluid_divergence(&before.u, &before.v, mask));
    s.run_stage(Stage::Project, &params());
    let after = s.read_fields();
    let ratio = rms(&fluid_divergence(&after.u, &after.v, mask)) / before;
    let solid_flux = mask.map_or(0.0, |m| m.closed_face_speed(&after.u, &after.v));
    let scale = after
        .u
        .iter()
        .chain(&after.v)
        .fold(0.0f32, |a, x| a.max(x.abs()));
    (ratio, solid_flux, scale)
}

const LAYOUTS: [Layout; 4] = [Layout::Disc, Layout::Pillars, Layout::Maze, Layout::Ring];

/// The test for the relaxation solvers: after projection no flow crosses a solid face
/// (below 1e-6 of the flow's scale), and the divergence left in the fluid is within 2x of the
/// same scene without obstacles, for every layout.
#[test]
fn relaxation_respects_obstacles_as_well_as_it_projects_without_them() {
    for (method, iterations) in [(PressureMethod::Jacobi, 40), (PressureMethod::RbGs, 20)] {
        let (plain, _, _) = project_once(method, iterations, None);
        for layout in LAYOUTS {
            let mask = Mask::layout(layout, W, H);
            let (ratio, flux, scale) = project_once(method, iterations, Some(&mask));
            eprintln!("{method:?} {layout:?}: residual {ratio:.4} (without: {plain:.4})");
            assert!(
                flux <= 1e-6 * scale,
                "{method:?} {layout:?}: flux {flux} of {scale}"
            );
            assert!(
                ratio <= 2.0 * plain,
                "{method:?} {layout:?}: {ratio} after / before, {plain} without obstacles"
            );
        }
    }
}

/// Multigrid around obstacles: no flow through solid faces, and two V-cycles leave under
/// 0.1 % of the divergence (20 red-black sweeps leave about 17-21 %), on every layout.
#[test]
fn multigrid_projects_around_obstacles() {
    let (plain, _, _) = project_once(PressureMethod::Multigrid, 2, None);
    for layout in LAYOUTS {
        let mask = Mask::layout(layout, W, H);
        let (ratio, flux, scale) = project_once(PressureMethod::Multigrid, 2, Some(&mask));
        eprintln!("Multigrid {layout:?}: residual {ratio:.5} (without: {plain:.5})");
        assert!(flux <= 1e-6 * scale, "{layout:?}: flux {flux} of {scale}");
        assert!(ratio < 0.001, "{layout:?}: {ratio} after / before");
    }
}

/// The 2x target for multigrid: two V-cycles leave at most twice the divergence
/// around every layout that they leave without obstacles (measured on this scene: disc
/// 0.00034, pillars 0.00036, maze 0.00047, ring 0.00054 against 0.00031, 2026-11-27).
/// Before the coarse levels split their cells into connected pieces
/// (`sim::obstacles::nodes`) the maze left 0.0021 and the ring 0.0115: a coarse cell that a
/// thin wall crossed coupled both sides.
#[test]
fn multigrid_is_within_2x_of_open_flow_around_obstacles() {
    let (plain, _, _) = project_once(PressureMethod::Multigrid, 2, None);
    for layout in LAYOUTS {
        let mask = Mask::layout(layout, W, H);
        let (ratio, _, _) = project_once(PressureMethod::Multigrid, 2, Some(&mask));
        assert!(ratio <= 2.0 * plain, "{layout:?}: {ratio}, without {plain}");
    }
}

/// Multigrid keeps converging around obstacles: every extra V-cycle cuts the divergence.
#[test]
fn multigrid_converges_around_obstacles() {
    for layout in LAYOUTS {
        let mask = Mask::layout(layout, W, H);
        let r: Vec<f32> = [1, 2, 4]
            .map(|n| project_once(PressureMethod::Multigrid, n, Some(&mask)).0)
            .to_vec();
        eprintln!("{layout:?}: 1, 2, 4 V-cycles: {r:?}");
        assert!(r[0] < 0.1, "{layout:?}: one V-cycle left {}", r[0]);
        assert!(r[1] < 0.7 * r[0] && r[2] < 0.7 * r[1], "{layout:?}: {r:?}");
    }
}

fn splat(pos: [f32; 2], force: [f32; 2], radius: f32) -> Splat {
    Splat {
        pos,
        radius,
        color: [1.0, 0.6, 0.2],
        amount: 1.0,
        force,
        shape: SplatShape::Gaussian,
        heat: 0.0,
        particles: 0.0,
        depth: 0.0,
        drum: Default::default(),
    }
}

/// The test: over 500 steps of a busy scene, the dye inside solids stays exactly 0 and
/// nothing flows through solid faces.
#[test]
fn dye_never_enters_solids_in_a_busy_scene() {
    let mask = Mask::layout(Layout::Pillars, W, H);
    let mut s = solver(PressureMethod::Multigrid, 2);
    s.set_obstacles(Some(&mask));
    let aspect = W as f32 / H as f32;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
    for n in 0..500 {
        if n % 5 == 0 {
            let pos = [rng.random_range(0.0..aspect), rng.random_range(0.0..1.0)];
            let force = [rng.random_range(-3.0..3.0), rng.random_range(-3.0..3.0)];
            s.inject(&[splat(pos, force, 0.08)]);
        }
        s.step(&params());
        if n % 50 == 49 {
            let f = s.read_fields();
            let scale = f.dye_width / W;
            let mut lit = 0;
            for dj in 0..f.dye_height {
                for di in 0..f.dye_width {
                    let k = dj * f.dye_width + di;
                    let dye = f.dye.iter().map(|p| p[k].abs()).fold(0.0f32, f32::max);
                    if mask.is_solid(di / scale, dj / scale) {
                        assert_eq!(
                            dye, 0.0,
                            "step {n}: dye {dye} inside a solid at ({di}, {dj})"
                        );
                    } else if dye > 0.01 {
                        lit += 1;
                    }
                }
            }
            assert!(lit > 100, "step {n}: the scene went dark ({lit} lit cells)");
            for j in 0..H {
                for i in 1..W {
                    assert!(mask.u_open(i, j) || f.u[j * (W + 1) + i] == 0.0);
                }
            }
        }
    }
}

/// The test: a splat inside a solid changes nothing.
#[test]
fn a_splat_inside_a_solid_changes_nothing() {
    let mask = Mask::layout(Layout::Disc, W, H);
    let mut s = solver(PressureMethod::Multigrid, 2);
    s.set_obstacles(Some(&mask));
    // Some flow and dye elsewhere first.
    s.inject(&[splat([0.3, 0.3], [1.0, 0.5], 0.05)]);
    for _ in 0..10 {
        s.step(&params());
    }
    let mut twin = s.read_fields();
    let mut other = solver(PressureMethod::Multigrid, 2);
    other.set_obstacles(Some(&mask));
    other.write_fields(&twin);
    // Small enough to lie wholly inside the disc (radius 0.12) with its Gaussian tail: the
    // centre disc is at (aspect / 2, 0.5).
    let centre = [W as f32 / H as f32 / 2.0, 0.5];
    s.inject(&[splat(centre, [5.0, 5.0], 0.01)]);
    s.run_stage(Stage::ApplySplats, &params());
    other.run_stage(Stage::ApplySplats, &params());
    let a = s.read_fields();
    twin = other.read_fields();
    assert_eq!(a.dye, twin.dye);
    assert_eq!(a.u, twin.u);
    assert_eq!(a.v, twin.v);
}

/// With nothing solid, the kernels with couplings give what the plain ones give.
#[test]
fn couplings_of_an_empty_mask_match_the_plain_solve() {
    for (w, h) in [(1, 1), (1, 5), (7, 1), (8, 6), (33, 17)] {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(w as u64 * 31 + h as u64);
        let mut b = Split::zeros(w, h);
        let mut natural: Vec<f32> = (0..w * h).map(|_| rng.random_range(-1.0..1.0)).collect();
        let mean = natural.iter().sum::<f32>() / natural.len() as f32;
        natural.iter_mut().for_each(|x| *x -= mean);
        b.set_natural(&natural);
        let faces = Faces::from_mask(&Mask::empty(w, h));
        let split = SplitFaces::new(&faces);
        let close = |a: &Split, b: &Split, what: &str| {
            let (a, b) = (a.to_natural(), b.to_natural());
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!(
                    (x - y).abs() <= 1e-5 * (1.0 + x.abs()),
                    "{what} {w}x{h} cell {k}: {x} vs {y}"
                );
            }
        };
        let (mut q1, mut q2) = (Split::zeros(w, h), Split::zeros(w, h));
        pressure::rb_sor(&mut q1, &b, 7, 1.0);
        pressure::rb_sor_faces(&mut q2, &b, 7, 1.0, &split);
        close(&q1, &q2, "red-black");
        let (mut q1, mut q2) = (Split::zeros(w, h), Split::zeros(w, h));
        let mut tmp = Split::zeros(w, h);
        pressure::jacobi(&mut q1, &b, &mut tmp, 9);
        pressure::jacobi_faces(&mut q2, &b, &mut tmp, 9, &split);
        close(&q1, &q2, "Jacobi");
        // Multigrid with couplings runs its coarse levels as node graphs (one node per cell
        // here), with its own sweeps and an exact coarsest solve: not the same bits, but it
        // must converge at least about as well.
        let (mut q1, mut q2) = (Split::zeros(w, h), Split::zeros(w, h));
        let mut mg1 = Multigrid::new(w, h);
        let mut mg2 = Multigrid::new(w, h);
        mg2.set_faces(Some(&faces));
        mg1.solve(&mut q1, &b, 2);
        mg2.solve(&mut q2, &b, 2);
        let (r1, r2) = (
            residual_rms(&q1, &natural, w, h),
            residual_rms(&q2, &natural, w, h),
        );
        eprintln!("{w}x{h}: two V-cycles leave {r1:e} plain, {r2:e} with couplings");
        assert!(
            r2 <= 1.2 * r1 + 1e-6,
            "multigrid {w}x{h}: {r2} against {r1}"
        );
    }
}

/// RMS of `b - A q` for the plain Neumann 5-point operator (`b` natural).
fn residual_rms(q: &Split, b: &[f32], w: usize, h: usize) -> f32 {
    let q = q.to_natural();
    let mut sum = 0.0f64;
    for j in 0..h {
        for i in 0..w {
            let c = q[j * w + i];
            let mut flux = 0.0;
            let k = j * w + i;
            for (ok, n) in [
                (i > 0, k.wrapping_sub(1)),
                (i + 1 < w, k + 1),
                (j > 0, k.wrapping_sub(w)),
                (j + 1 < h, k + w),
            ] {
                if ok {
                    flux += c - q[n];
                }
            }
            sum += f64::from(b[j * w + i] - flux).powi(2);
        }
    }
    (sum / (w * h) as f64).sqrt() as f32
}

/// An enclosed pocket of fluid is its own region: its pressure problem stays solvable and its
/// flow stays inside.
#[test]
fn an_enclosed_pocket_projects_on_its_own() {
    let mut mask = Mask::empty(W, H);
    // A closed square ring of solid cells, one cell thick, around the middle.
    for i in 30..60 {
        mask.set(i, 15, true);
        mask.set(i, 40, true);
    }
    for j in 15..41 {
        mask.set(30, j, true);
        mask.set(59, j, true);
    }
    let (plain, _, _) = project_once(PressureMethod::RbGs, 60, None);
    let (ratio, flux, scale) = project_once(PressureMethod::RbGs, 60, Some(&mask));
    eprintln!("pocket, red-black: {ratio:.4} (without: {plain:.4})");
    assert!(flux <= 1e-6 * scale);
    assert!(ratio <= 2.0 * plain, "{ratio}, without {plain}");
    let r: Vec<f32> = [1, 2, 4]
        .map(|n| project_once(PressureMethod::Multigrid, n, Some(&mask)).0)
        .to_vec();
    eprintln!("pocket, multigrid 1, 2, 4 V-cycles: {r:?}");
    assert!(r[2] < 0.02 && r[2] < 0.5 * r[0], "{r:?}");
}

/// Total dye after `steps` of a stirred scene with no dissipation, over the total injected
/// (the splats of the first 20 steps).
fn dye_kept(mask: Option<&Mask>, steps: usize) -> f32 {
    let mut s = solver(PressureMethod::Multigrid, 2);
    s.set_obstacles(mask);
    let aspect = W as f32 / H as f32;
    let total = |s: &mut CpuSolver| -> f32 {
        let f = s.read_fields();
        f.dye.iter().flat_map(|p| p.iter()).sum()
    };
    let mut injected = 0.0;
    for n in 0..steps {
        if n < 20 {
            let before = total(&mut s);
            for (k, x) in [0.2f32, 0.4, 0.6, 0.8].iter().enumerate() {
                let force = if k % 2 == 0 { [2.0, 1.5] } else { [-2.0, 1.0] };
                s.inject(&[splat([x * aspect, 0.3 + 0.1 * k as f32], force, 0.05)]);
            }
            s.run_stage(Stage::ApplySplats, &params());
            injected += total(&mut s) - before;
            s.step(&StepInput {
                dye_dissipation: 0.0,
                ..params()
            });
        } else {
            s.step(&StepInput {
                dye_dissipation: 0.0,
                ..params()
            });
        }
    }
    total(&mut s) / injected
}

/// Advection never samples inside a solid, so dye stirred against walls does not fade into
/// them: with no dissipation the scene keeps as much dye as without obstacles (within 2 % of
/// the injected dye). Sampling solid cells (which hold 0) kept only 0.858 and 0.854 of it
/// here, against 0.924 in open flow; renormalised, 0.957 and 0.937.
#[test]
fn dye_does_not_fade_into_walls() {
    let open = dye_kept(None, 200);
    for layout in [Layout::Pillars, Layout::Maze] {
        let mask = Mask::layout(layout, W, H);
        let kept = dye_kept(Some(&mask), 200);
        eprintln!("{layout:?}: dye kept {kept:.3} (open flow {open:.3})");
        assert!(
            kept >= open - 0.02,
            "{layout:?}: kept {kept}, open flow {open}"
        );
        assert!(
            kept <= 1.05,
            "{layout:?}: dye grew to {kept} of what was injected"
        );
    }
}

/// The cells near solids come nearest first, by chessboard distance, and a trace of `reach`
/// cells takes those within `ceil(reach) + 1`.
#[test]
fn cells_near_solids_by_distance() {
    use dyeflow::sim::grid::cpu::advect::NearSolids;
    // 6 x 2, the left column solid.
    let mut solid = vec![false; 12];
    solid[0] = true;
    solid[6] = true;
    let near = NearSolids::new(&solid, 6);
    let sorted = |c: &[u32]| {
        let mut c = c.to_vec();
        c.sort_unstable();
        c
    };
    assert_eq!(sorted(near.within(0.0)), vec![1, 7]);
    assert_eq!(sorted(near.within(1.5)), vec![1, 2, 3, 7, 8, 9]);
    assert_eq!(near.within(100.0).len(), 10);
    assert_eq!(near.within(f32::NAN).len(), 10);
    // Nothing solid: nothing near.
    assert!(NearSolids::new(&[false; 12], 6).within(5.0).is_empty());
}

/// Masks with nothing to couple on the coarse levels (all solid; fluid cells each cut off
/// from the others) project without a panic and leave the velocity finite and still.
#[test]
fn masks_with_nothing_to_couple_project_safely() {
    let all = {
        let mut m = Mask::empty(W, H);
        (0..H).for_each(|j| (0..W).for_each(|i| m.set(i, j, true)));
        m
    };
    let isolated = {
        let mut m = Mask::empty(W, H);
        for j in 0..H {
            for i in 0..W {
                m.set(i, j, i % 2 == 1 || j % 2 == 1);
            }
        }
        m
    };
    for (what, mask) in [("all solid", all), ("isolated cells", isolated)] {
        let mut s = solver(PressureMethod::Multigrid, 2);
        s.set_obstacles(Some(&mask));
        s.inject(&[splat([0.5, 0.5], [2.0, 1.0], 0.1)]);
        for _ in 0..3 {
            s.step(&params());
        }
        let f = s.read_fields();
        assert!(f.u.iter().chain(&f.v).all(|x| x.is_finite()), "{what}");
        assert_eq!(
            mask.closed_face_speed(&f.u, &f.v),
            0.0,
            "{what}: flow through a wall"
        );
    }
}
