use super::*;
use crate::sim::multigrid::plan;
use crate::sim::obstacles::faces::Faces;
use crate::sim::obstacles::{Layout, Mask};

/// Red-black sweeps on a graph as it is numbered, node by node (as nodes.wgsl relaxes).
fn relax_graph(lv: &NodeLevel, e: &mut [f32], b: &[f32], sweeps: u32, omega: f32) {
    relax_graph_on(lv, e, b, sweeps, omega, &vec![true; lv.graph.len()]);
}

/// Which nodes lie in the rows near walls.
fn near_graph(lv: &NodeLevel) -> Vec<bool> {
    let rows = lv.near_rows();
    let w = lv.graph.w;
    let cells = lv.graph.cell.iter();
    cells.map(|&c| rows.contains(&(c / w as u32))).collect()
}

/// [`relax_graph`] of the nodes that `on` flags alone.
fn relax_graph_on(lv: &NodeLevel, e: &mut [f32], b: &[f32], sweeps: u32, omega: f32, on: &[bool]) {
    let inv = lv.graph.inverse_diagonal();
    for _ in 0..sweeps {
        for colour in [0..lv.red, lv.red..lv.graph.len()] {
            for n in colour.filter(|&n| on[n]) {
                let sum: f32 = b[n] + lv.graph.couplings(n).map(|(m, w)| w * e[m]).sum::<f32>();
                e[n] += omega * (sum * inv[n] - e[n]);
            }
        }
    }
}

fn restrict_graph(lv: &NodeLevel, r: &[f32]) -> Vec<f32> {
    (0..lv.graph.len())
        .map(|n| {
            let range = lv.child_start[n] as usize..lv.child_start[n + 1] as usize;
            let taps = lv.child[range.clone()].iter().zip(&lv.child_weight[range]);
            taps.map(|(&a, &w)| w * r[a as usize]).sum()
        })
        .collect()
}

fn prolong_graph(lv: &NodeLevel, e: &[f32]) -> Vec<f32> {
    let taps = lv.tap_node.iter().zip(&lv.tap_weight);
    taps.map(|(n, w)| (0..4).map(|t| w[t] * e[n[t] as usize]).sum())
        .collect()
}

/// The V-cycle below `levels[0]` on the graphs as numbered: the reference.
fn cycle_graph(
    levels: &[NodeLevel],
    coarsest: &Coarsest,
    b: &[f32],
    sweeps: NodeSweeps,
) -> Vec<f32> {
    let lv = &levels[0];
    let g = &lv.graph;
    let n = g.len();
    let mut e = vec![0.0f32; n];
    if levels.len() == 1 {
        match coarsest {
            Coarsest::Direct(s) => {
                for (a, x) in e.iter_mut().enumerate() {
                    *x = (0..n).map(|m| s[a * n + m] * b[m]).sum();
                }
            }
            Coarsest::Sweeps(regions) => {
                let mut sums = vec![0.0f64; n];
                for (&[l, _], &x) in regions.iter().zip(b) {
                    sums[l as usize] += f64::from(x);
                }
                let b: Vec<f32> = regions
                    .iter()
                    .zip(b)
                    .map(|(&[l, size], &x)| x - (sums[l as usize] / f64::from(size)) as f32)
                    .collect();
                relax_graph(lv, &mut e, &b, coarsest_sweeps(g.w, g.h), COARSEST_OMEGA);
            }
        }
        return e;
    }
    let near = near_graph(lv);
    relax_graph(lv, &mut e, b, sweeps.first, 1.0);
    relax_graph_on(lv, &mut e, b, sweeps.near, 1.0, &near);
    let r: Vec<f32> = (0..n)
        .map(|a| b[a] - g.couplings(a).map(|(m, w)| w * (e[a] - e[m])).sum::<f32>())
        .collect();
    let below = cycle_graph(
        &levels[1..],
        coarsest,
        &restrict_graph(&levels[1], &r),
        sweeps.below(),
    );
    for (x, c) in e.iter_mut().zip(prolong_graph(&levels[1], &below)) {
        *x += c;
    }
    relax_graph(lv, &mut e, b, sweeps.first, 1.0);
    relax_graph_on(lv, &mut e, b, sweeps.near, 1.0, &near);
    e
}

/// Fluid rows one cell tall between solid ones, joined into one winding channel: more
/// nodes on the coarsest level than the dense solve takes, and a secondary node in
/// nearly every cell of the coarse levels.
/// Pillars with a sealed box of fluid (a pocket) in a corner, whose walls are thin.
fn pocket(w: usize, h: usize) -> Mask {
    let mut mask = Mask::layout(Layout::Pillars, w, h);
    let (a, b) = (w / 12, w / 12 + w / 5);
    for t in a..=b {
        for (i, j) in [(t, a), (t, b), (a, t), (b, t)] {
            mask.set(i, j.min(h - 1), true);
        }
    }
    mask
}

fn stripes(w: usize, h: usize) -> Mask {
    let mut mask = Mask::empty(w, h);
    for j in (1..h).step_by(2) {
        let gap = if j % 4 == 1 { w - 1 } else { 0 };
        for i in (0..w).filter(|&i| i != gap) {
            mask.set(i, j, true);
        }
    }
    mask
}

/// The slots (structured rows with fix-ups, the plain transfers between levels) give the
/// graphs' V-cycle, but for rounding, around every layout, on grids of odd and even
/// sizes (203x117: levels of odd width below the first, whose planes end in a pad slot),
/// with a sealed pocket, and with the dense and the relaxed coarsest solve.
#[test]
fn slots_give_the_graphs_correction() {
    let mut masks: Vec<Mask> = [Layout::Disc, Layout::Pillars, Layout::Maze, Layout::Ring]
        .into_iter()
        .flat_map(|l| {
            let sizes = [(75, 41), (128, 64), (203, 117)];
            sizes.map(|(w, h)| Mask::layout(l, w, h))
        })
        .collect();
    masks.push(pocket(203, 117));
    masks.push(stripes(288, 32));
    // Big enough that the first coarse level (256x144) relaxes in bands on several
    // threads (`band::MIN_PARALLEL_CELLS`), with odd sizes below it.
    masks.push(Mask::layout(Layout::Maze, 512, 288));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .expect("a pool");
    let mut sweeps_seen = false;
    for mask in &masks {
        let (w, h) = (mask.width(), mask.height());
        let faces = Faces::from_mask(mask);
        let plans = plan(w, h);
        let hier = Hierarchy::new(&faces, &plans).expect("coarse levels");
        sweeps_seen |= matches!(hier.coarsest, Coarsest::Sweeps(_));
        // A rough residual on the fluid cells, 0 in solids (as the finest level's).
        let r: Vec<f32> = (0..w * h)
            .map(|k| {
                if mask.cells()[k] {
                    0.0
                } else {
                    ((k * 7919) % 1013) as f32 / 506.5 - 1.0
                }
            })
            .collect();
        // Uniform, and fewer below the first coarse level (as the solver's).
        let counts = [NodeSweeps::uniform(1), NodeSweeps::uniform(4)];
        for sweeps in counts.into_iter().chain([
            NodeSweeps {
                first: 4,
                deeper: 1,
                near: 0,
            },
            NodeSweeps {
                first: 1,
                deeper: 1,
                near: 3,
            },
        ]) {
            let b0 = restrict_graph(&hier.levels[0], &r);
            let coarse = cycle_graph(&hier.levels, &hier.coarsest, &b0, sweeps);
            let want = prolong_graph(&hier.levels[0], &coarse);
            let mut nodes = Nodes::new(hier.clone(), &plans);
            let mut got = vec![f32::NAN; w * h];
            pool.install(|| nodes.correction(&r, &mut got, sweeps));
            let peak = want.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            assert!(peak > 0.01, "{w}x{h}: a correction to compare ({peak})");
            for (k, (&a, &b)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (a - b).abs() <= 2e-5 * peak,
                    "{w}x{h}, {sweeps:?}, cell {k}: {a} against {b} (peak {peak})"
                );
            }
        }
    }
    assert!(sweeps_seen, "the stripes' coarsest level is relaxed");
}
