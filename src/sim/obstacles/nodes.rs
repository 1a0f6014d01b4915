//! The coarse multigrid levels around obstacles, as both solvers build them: graphs with one
//! node per connected piece of fluid in a coarse cell (Chentanez and Müller, "A multigrid
//! fluid pressure solver handling separating solid boundary conditions", 2011).
//!
//! A coarse cell that a thin wall runs through holds fluid on both sides of the wall. One
//! unknown for that cell would couple both sides, and the coarse correction could not be
//! different on each: around the maze and the ring two V-cycles left 7x and 40x the divergence
//! they leave in open flow. Here each coarse cell gets one node per connected piece of the
//! finer fluid whose centres lie in it (pieces joined by an open finer coupling between nodes
//! of that cell), so the coarse level keeps the finer level's topology, down to the coarsest.
//!
//! - **Couplings.** Two nodes in neighbouring coarse cells are coupled through the finer
//!   couplings that cross between their pieces: the level's `cx` (or `cy`) times the open
//!   fraction of the shared coarse face (the sum of the crossing couplings' open fractions over
//!   the number of finer rows, or columns, the face spans). In open flow that is exactly the
//!   uniform coarse operator of `sim::multigrid`. No coupling ever joins two nodes of one cell
//!   (they would be one piece), so colouring nodes by their cell's checkerboard colour keeps
//!   red-black Gauss-Seidel valid.
//! - **Restriction.** Area-weighted, as without obstacles: each finer node's residual goes to
//!   the coarse cells its cell overlaps, by the fraction inside each, and there to the node
//!   its own coarse node is joined to (its own node where there is none, so no residual is
//!   lost). On grids whose sizes are not powers of two a plain sum by home cell converged
//!   3x slower in open flow.
//! - **Prolongation.** Bilinear between cell centres, as without obstacles, but each of the
//!   four taps takes the node of that coarse cell that the finer node's own coarse node is
//!   joined to (through the strongest coupling, diagonals through an edge neighbour); taps
//!   with no such node are dropped and the rest renormalised.
//! - **The coarsest level** is solved exactly: a dense matrix `S` with `x = S b` the
//!   solution with zero mean per fluid region of `A x = b - mean(b)` (the null space is the
//!   constant per region), made once per mask. Past [`DIRECT_MAX`] nodes (masks with very
//!   many separate pockets) it is relaxed instead.
//!
//! The finest level keeps its per-face couplings (`faces`); only the coarse levels are graphs.
//!
//! Why this file is long: about 160 of its lines are tests; the node tables for every multigrid
//! level are built in one pass over the mask.

use super::faces::Faces;
use crate::sim::multigrid::{LevelPlan, Operator};

/// The coarsest level is solved with a dense matrix up to this many nodes (1 MiB of `f32`),
/// by relaxation past it.
pub const DIRECT_MAX: usize = 512;

/// A level's equations `sum_m w_nm (q_n - q_m) = b_n` as a graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    /// The level's size in cells.
    pub w: usize,
    pub h: usize,
    /// The level's uniform operator (the coupling of a fully open face).
    pub op: Operator,
    /// The cell (natural index) of each node.
    pub cell: Vec<u32>,
    /// Node `n`'s couplings are `start[n]..start[n + 1]` of `nbr` and `weight`.
    pub start: Vec<u32>,
    pub nbr: Vec<u32>,
    pub weight: Vec<f32>,
}

impl Graph {
    /// The finest level: one node per cell in natural order (a solid cell's node has no
    /// coupling), coupled through the open faces.
    pub fn finest(faces: &Faces) -> Self {
        let (w, h) = (faces.w, faces.h);
        let mut start = Vec::with_capacity(w * h + 1);
        let (mut nbr, mut weight) = (Vec::new(), Vec::new());
        start.push(0);
        for j in 0..h {
            for i in 0..w {
                let c = j * w + i;
                let mut link = |open: f32, m: usize| {
                    if open > 0.0 {
                        nbr.push(m as u32);
                        weight.push(open);
                    }
                };
                if j > 0 {
                    link(faces.y[c], c - w);
                }
                if i > 0 {
                    link(faces.x[j * (w + 1) + i], c - 1);
                }
                if i + 1 < w {
                    link(faces.x[j * (w + 1) + i + 1], c + 1);
                }
                if j + 1 < h {
                    link(faces.y[c + w], c + w);
                }
                start.push(nbr.len() as u32);
            }
        }
        Self {
            w,
            h,
            op: faces.op,
            cell: (0..(w * h) as u32).collect(),
            start,
            nbr,
            weight,
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.cell.len()
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.cell.is_empty()
    }

    /// Node `n`'s couplings: (neighbour, weight).
    pub fn couplings(&self, n: usize) -> impl Iterator<Item = (usize, f32)> + '_ {
        let range = self.start[n] as usize..self.start[n + 1] as usize;
        self.nbr[range.clone()]
            .iter()
            .zip(&self.weight[range])
            .map(|(&m, &w)| (m as usize, w))
    }

    /// Node `n`'s total coupling (the diagonal of the operator).
    pub fn diagonal(&self, n: usize) -> f32 {
        self.couplings(n).map(|(_, w)| w).sum()
    }

    /// `1 / diagonal` per node (0 for a node without couplings).
    pub fn inverse_diagonal(&self) -> Vec<f32> {
        (0..self.len())
            .map(|n| {
                let d = self.diagonal(n);
                if d > 0.0 { 1.0 / d } else { 0.0 }
            })
            .collect()
    }

    /// The connected pieces: a label per node (nodes without couplings are alone) and the
    /// node count of each label.
    pub fn regions(&self) -> (Vec<u32>, Vec<u32>) {
        let mut sets = Sets::new(self.len());
        for n in 0..self.len() {
            for (m, w) in self.couplings(n) {
                if w > 0.0 {
                    sets.join(n, m);
                }
            }
        }
        sets.labels()
    }
}

/// One coarse level: its graph and its transfers from and to the next finer level.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeLevel {
    pub graph: Graph,
    /// Nodes `0..red` lie in cells with `i + j` even, the others in cells with `i + j` odd.
    pub red: usize,
    /// Restriction: node `n`'s right-hand side is the sum of the finer residuals of
    /// `child[child_start[n]..child_start[n + 1]]` times `child_weight` (the fraction of each
    /// finer cell inside the coarse cell).
    pub child_start: Vec<u32>,
    pub child: Vec<u32>,
    pub child_weight: Vec<f32>,
    /// Prolongation: per finer node, four taps (this level's node, weight); unused taps have
    /// weight 0 (and node 0).
    pub tap_node: Vec<[u32; 4]>,
    pub tap_weight: Vec<[f32; 4]>,
}

/// Whether two weights are the same but for rounding (a renormalisation by a total of 1).
pub fn same_weight(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs())
}

/// Rows within this many rows of one with a node that open flow would not have get the
/// first coarse level's extra sweeps (`sim::multigrid::NodeSweeps::near`).
pub const NEAR_ROWS_MARGIN: usize = 1;

impl NodeLevel {
    /// The rows near walls, ascending: those within [`NEAR_ROWS_MARGIN`] rows of a row where
    /// the graph differs from open flow (a cell with no node or more than one, or a node whose
    /// couplings are not one to each neighbouring cell inside the canvas with the level's
    /// `cx` or `cy`).
    pub fn near_rows(&self) -> Vec<u32> {
        let g = &self.graph;
        let (w, h) = (g.w, g.h);
        let mut nodes = vec![0u8; w * h];
        for &c in &g.cell {
            nodes[c as usize] = nodes[c as usize].saturating_add(1);
        }
        let mut walled = vec![false; h];
        for (j, row) in nodes.chunks(w.max(1)).enumerate() {
            walled[j] |= row.iter().any(|&n| n != 1);
        }
        for (k, &c) in g.cell.iter().enumerate() {
            let (i, j) = (c as usize % w, c as usize / w);
            if walled[j] {
                continue;
            }
            let inside = usize::from(i > 0) + usize::from(i + 1 < w);
            let inside = inside + usize::from(j > 0) + usize::from(j + 1 < h);
            let mut count = 0;
            let plain = g.couplings(k).all(|(m, wt)| {
                count += 1;
                let d = g.cell[m] as usize;
                let (di, dj) = (d % w, d / w);
                match (di.abs_diff(i), dj.abs_diff(j)) {
                    (1, 0) => same_weight(wt, g.op.cx),
                    (0, 1) => same_weight(wt, g.op.cy),
                    _ => false,
                }
            });
            walled[j] |= !plain || count != inside;
        }
        (0..h)
            .filter(|&j| {
                let rows = j.saturating_sub(NEAR_ROWS_MARGIN)..(j + NEAR_ROWS_MARGIN + 1).min(h);
                walled[rows].iter().any(|&x| x)
            })
            .map(|j| j as u32)
            .collect()
    }
}

/// How the coarsest level is solved.
#[derive(Clone, Debug, PartialEq)]
pub enum Coarsest {
    /// `x = S b`, `S` row-major, `n x n`.
    Direct(Vec<f32>),
    /// Too many nodes: make `b` mean-free per region ((label, node count of that label) per
    /// node) and relax (`sim::multigrid::coarsest_sweeps` of the level's cells; on long
    /// winding channels that leaves the level far from solved, see the stripes test in
    /// tests/it/obstacles_gpu.rs).
    Sweeps(Vec<[u32; 2]>),
}

/// Every coarse level around one mask, finest first, and the coarsest level's solve.
#[derive(Clone, Debug, PartialEq)]
pub struct Hierarchy {
    pub levels: Vec<NodeLevel>,
    pub coarsest: Coarsest,
}

impl Hierarchy {
    /// The coarse levels of `plans` (from `sim::multigrid::plan`) below the finest level's
    /// couplings `faces`. `None` without coarse levels.
    pub fn new(faces: &Faces, plans: &[LevelPlan]) -> Option<Self> {
        plans.last()?;
        let finest = Graph::finest(faces);
        let mut levels: Vec<NodeLevel> = Vec::with_capacity(plans.len());
        for plan in plans {
            let level = coarsen(levels.last().map_or(&finest, |l| &l.graph), plan);
            let small = level.graph.len() <= DIRECT_MAX;
            levels.push(level);
            if small {
                break;
            }
        }
        let coarsest = levels.last().map(|l| coarsest_solve(&l.graph))?;
        Some(Self { levels, coarsest })
    }
}

/// The coarse cell holding the centre of finer cell `k` of `fine` (`coarse` cells).
pub fn home(k: usize, fine: usize, coarse: usize) -> usize {
    (((k as f64 + 0.5) * coarse as f64 / fine as f64) as usize).min(coarse - 1)
}

/// Disjoint sets (union-find with path halving).
struct Sets(Vec<u32>);

impl Sets {
    fn new(n: usize) -> Self {
        Self((0..n as u32).collect())
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] as usize != x {
            let up = self.0[self.0[x] as usize];
            self.0[x] = up;
            x = up as usize;
        }
        x
    }

    fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            // The smaller root wins: labels then follow node order.
            self.0[a.max(b)] = a.min(b) as u32;
        }
    }

    /// A label per set, numbered in order of each set's first node, and set sizes.
    fn labels(mut self) -> (Vec<u32>, Vec<u32>) {
        let n = self.0.len();
        let mut label = vec![u32::MAX; n];
        let mut size = Vec::new();
        for x in 0..n {
            let root = self.find(x);
            if label[root] == u32::MAX {
                label[root] = size.len() as u32;
                size.push(0);
            }
            label[x] = label[root];
            size[label[x] as usize] += 1;
        }
        (label, size)
    }
}

/// The next coarser level of `fine` on `plan`'s grid (see the module docs).
fn coarsen(fine: &Graph, plan: &LevelPlan) -> NodeLevel {
    let (fw, fh, cw, ch) = (fine.w, fine.h, plan.w, plan.h);
    debug_assert_eq!((fw, fh), (plan.fine_w, plan.fine_h));
    let hx: Vec<usize> = (0..fw).map(|i| home(i, fw, cw)).collect();
    let hy: Vec<usize> = (0..fh).map(|j| home(j, fh, ch)).collect();
    let n = fine.len();
    let homes: Vec<u32> = fine
        .cell
        .iter()
        .map(|&c| (hy[c as usize / fw] * cw + hx[c as usize % fw]) as u32)
        .collect();
    let home_cell = |a: usize| homes[a] as usize;
    // Nodes with a coupling take part; pieces join through couplings inside a coarse cell.
    let live: Vec<bool> = (0..n).map(|a| fine.diagonal(a) > 0.0).collect();
    let mut sets = Sets::new(n);
    for a in (0..n).filter(|&a| live[a]) {
        for (b, w) in fine.couplings(a) {
            if w > 0.0 && b > a && home_cell(a) == home_cell(b) {
                sets.join(a, b);
            }
        }
    }
    // One coarse node per piece, red cells first, then by cell and by the piece's first node.
    let colour = |c: usize| ((c % cw + c / cw) & 1) as u8;
    let mut pieces: Vec<(u8, usize, usize)> = (0..n)
        .filter(|&a| live[a] && sets.find(a) == a)
        .map(|a| (colour(home_cell(a)), home_cell(a), a))
        .collect();
    pieces.sort_unstable();
    let mut index = vec![u32::MAX; n];
    for (k, &(_, _, root)) in pieces.iter().enumerate() {
        index[root] = k as u32;
    }
    let parent: Vec<u32> = (0..n)
        .map(|a| {
            if live[a] {
                index[sets.find(a)]
            } else {
                u32::MAX
            }
        })
        .collect();
    let red = pieces.iter().filter(|p| p.0 == 0).count();
    let cell: Vec<u32> = pieces.iter().map(|p| p.1 as u32).collect();
    // Couplings: crossing finer couplings' open fractions over the finer rows (columns) per
    // coarse face.
    let mut rows_in = vec![0u32; ch];
    hy.iter().for_each(|&c| rows_in[c] += 1);
    let mut cols_in = vec![0u32; cw];
    hx.iter().for_each(|&c| cols_in[c] += 1);
    let op = plan.op;
    // Each crossing coupling, by its node (a counting sort: no sort of millions of links).
    let np = pieces.len();
    let links = |visit: &mut dyn FnMut(u32, u32, f32)| {
        for a in (0..n).filter(|&a| live[a]) {
            let (ha, fa) = (home_cell(a), fine.cell[a] as usize);
            for (b, w) in fine.couplings(a) {
                if w <= 0.0 || parent[b] == u32::MAX || home_cell(b) == ha {
                    continue;
                }
                // Neighbouring cells: one apart along a row, `fw` apart along a column.
                let along_x = fw > 1 && fa.abs_diff(fine.cell[b] as usize) == 1;
                let value = if along_x {
                    op.cx * (w / fine.op.cx) / rows_in[ha / cw] as f32
                } else {
                    op.cy * (w / fine.op.cy) / cols_in[ha % cw] as f32
                };
                visit(parent[a], parent[b], value);
            }
        }
    };
    let mut at = vec![0usize; np + 1];
    links(&mut |p, _, _| at[p as usize + 1] += 1);
    for k in 1..at.len() {
        at[k] += at[k - 1];
    }
    let mut raw = vec![(0u32, 0f32); at[np]];
    let mut fill = at.clone();
    links(&mut |p, q, v| {
        raw[fill[p as usize]] = (q, v);
        fill[p as usize] += 1;
    });
    let mut start = Vec::with_capacity(np + 1);
    start.push(0u32);
    let (mut nbr, mut weight): (Vec<u32>, Vec<f32>) = (Vec::new(), Vec::new());
    for p in 0..np {
        let seg = &mut raw[at[p]..at[p + 1]];
        seg.sort_by_key(|l| l.0);
        let first = nbr.len();
        for &(q, v) in seg.iter() {
            match nbr.last() {
                Some(&last) if nbr.len() > first && last == q => {
                    *weight.last_mut().expect("a coupling") += v;
                }
                _ => {
                    nbr.push(q);
                    weight.push(v);
                }
            }
        }
        start.push(nbr.len() as u32);
    }
    let graph = Graph {
        w: cw,
        h: ch,
        op,
        cell,
        start,
        nbr,
        weight,
    };
    let joins = Joins::new(&graph);
    // Restriction: the finer cells' area fractions, to joined nodes.
    let overlaps = |taps: &crate::sim::multigrid::RestrictTaps, fine: usize| {
        let mut per: Vec<Vec<(usize, f32)>> = vec![Vec::new(); fine];
        for (c, (&first, frac)) in taps.first.iter().zip(&taps.frac).enumerate() {
            for (t, &f) in frac.iter().enumerate() {
                if f > 0.0 && (first as usize + t) < fine {
                    per[first as usize + t].push((c, f));
                }
            }
        }
        per
    };
    let (ox, oy) = (
        overlaps(&plan.restrict_x, fw),
        overlaps(&plan.restrict_y, fh),
    );
    let gather = |visit: &mut dyn FnMut(u32, u32, f32)| {
        for (a, &own) in parent.iter().enumerate() {
            if own == u32::MAX {
                continue;
            }
            let c = fine.cell[a] as usize;
            for &(cj, fy) in &oy[c / fw] {
                for &(ci, fx) in &ox[c % fw] {
                    let m = joins
                        .joined(&graph, own as usize, cj * cw + ci)
                        .unwrap_or(own as usize);
                    visit(m as u32, a as u32, fx * fy);
                }
            }
        }
    };
    let mut child_start = vec![0u32; graph.len() + 1];
    gather(&mut |m, _, _| child_start[m as usize + 1] += 1);
    for k in 1..child_start.len() {
        child_start[k] += child_start[k - 1];
    }
    let total = *child_start.last().expect("a start") as usize;
    let (mut child, mut child_weight) = (vec![0u32; total], vec![0f32; total]);
    let mut fill = child_start.clone();
    gather(&mut |m, a, w| {
        let k = fill[m as usize] as usize;
        (child[k], child_weight[k]) = (a, w);
        fill[m as usize] += 1;
    });
    // Prolongation taps.
    let (px, py) = (&plan.prolong_x.0, &plan.prolong_y.0);
    let mut tap_node = vec![[0u32; 4]; n];
    let mut tap_weight = vec![[0f32; 4]; n];
    for a in 0..n {
        let Some(own) = parent.get(a).copied().filter(|&p| p != u32::MAX) else {
            continue;
        };
        let c = fine.cell[a] as usize;
        let taps = bilinear_taps(px[c % fw], py[c / fw]);
        let mut total = 0.0;
        for (t, &(ci, cj, f)) in taps.iter().enumerate() {
            let target = cj as usize * cw + ci as usize;
            if f <= 0.0 {
                continue;
            }
            if let Some(m) = joins.joined(&graph, own as usize, target) {
                tap_node[a][t] = m as u32;
                tap_weight[a][t] = f;
                total += f;
            }
        }
        if total > 0.0 {
            tap_weight[a].iter_mut().for_each(|w| *w /= total);
        } else {
            tap_node[a] = [own, 0, 0, 0];
            tap_weight[a] = [1.0, 0.0, 0.0, 0.0];
        }
    }
    NodeLevel {
        graph,
        red,
        child_start,
        child,
        child_weight,
        tap_node,
        tap_weight,
    }
}

/// The four bilinear taps of a finer cell from its prolongation taps along x and y: (coarse
/// column, coarse row, weight), lower left, lower right, upper left, upper right.
pub fn bilinear_taps(
    (i0, i1, wx): (u32, u32, f32),
    (j0, j1, wy): (u32, u32, f32),
) -> [(u32, u32, f32); 4] {
    [
        (i0, j0, (1.0 - wx) * (1.0 - wy)),
        (i1, j0, wx * (1.0 - wy)),
        (i0, j1, (1.0 - wx) * wy),
        (i1, j1, wx * wy),
    ]
}

/// Per node, its most strongly coupled node in the cell to its left, right, below and above
/// (`u32::MAX`: none), so that [`Joins::joined`] is a lookup.
struct Joins(Vec<[u32; 4]>);

impl Joins {
    fn new(g: &Graph) -> Self {
        let joins = (0..g.len())
            .map(|n| {
                let own = g.cell[n] as usize;
                let mut best = [(u32::MAX, 0.0f32); 4];
                for (m, w) in g.couplings(n) {
                    let c = g.cell[m] as usize;
                    let d = if c + 1 == own && c / g.w == own / g.w {
                        0
                    } else if c == own + 1 && c / g.w == own / g.w {
                        1
                    } else if c + g.w == own {
                        2
                    } else if c == own + g.w {
                        3
                    } else {
                        continue;
                    };
                    // The strongest; the last of equals (as `Iterator::max_by`).
                    if w > 0.0 && w >= best[d].1 {
                        best[d] = (m as u32, w);
                    }
                }
                best.map(|b| b.0)
            })
            .collect();
        Self(joins)
    }

    /// The node of cell `target` that node `n` is joined to: `n` itself in its own cell, the
    /// neighbour with the strongest coupling in an edge neighbour, and through an edge
    /// neighbour (along x first) in a diagonal one.
    fn joined(&self, g: &Graph, n: usize, target: usize) -> Option<usize> {
        let own = g.cell[n] as usize;
        if own == target {
            return Some(n);
        }
        let (oi, oj, ti, tj) = (own % g.w, own / g.w, target % g.w, target / g.w);
        let x = if ti < oi { 0 } else { 1 };
        let y = if tj < oj { 2 } else { 3 };
        let step = |from: usize, d: usize| {
            let m = self.0[from][d];
            (m != u32::MAX).then_some(m as usize)
        };
        if oj == tj {
            return step(n, x);
        }
        if oi == ti {
            return step(n, y);
        }
        step(n, x)
            .and_then(|m| step(m, y))
            .or_else(|| step(n, y).and_then(|m| step(m, x)))
    }
}

/// The coarsest level's solve (see [`Coarsest`]).
fn coarsest_solve(g: &Graph) -> Coarsest {
    let n = g.len();
    let (label, size) = g.regions();
    if n > DIRECT_MAX {
        let table = label.iter().map(|&l| [l, size[l as usize]]).collect();
        return Coarsest::Sweeps(table);
    }
    // M = A + s * sum_r e_r e_r^T is positive definite; for b mean-free per region,
    // x = M^-1 b solves A x = b with x mean-free per region, and M^-1 e_r = e_r / (s n_r),
    // so S = M^-1 (I - sum_r e_r e_r^T / n_r) = M^-1 - sum_r e_r e_r^T / (s n_r^2).
    let s = (0..n)
        .map(|k| f64::from(g.diagonal(k)))
        .fold(0.0, f64::max)
        .max(1.0);
    let mut m = vec![0.0f64; n * n];
    for a in 0..n {
        for (b, w) in g.couplings(a) {
            m[a * n + b] -= f64::from(w);
            m[a * n + a] += f64::from(w);
        }
        for b in 0..n {
            if label[a] == label[b] {
                m[a * n + b] += s;
            }
        }
    }
    let inv = invert_spd(&m, n);
    let mut out = vec![0.0f32; n * n];
    for a in 0..n {
        for b in 0..n {
            let mut v = inv[a * n + b];
            if label[a] == label[b] {
                let r = f64::from(size[label[a] as usize]);
                v -= 1.0 / (s * r * r);
            }
            out[a * n + b] = v as f32;
        }
    }
    Coarsest::Direct(out)
}

/// The inverse of a symmetric positive definite `n x n` matrix (row-major), by Cholesky:
/// `m = L L^T`, `m^-1 = L^-T L^-1`, every loop along rows.
fn invert_spd(m: &[f64], n: usize) -> Vec<f64> {
    let mut l = vec![0.0f64; n * n];
    for i in 0..n {
        for j in 0..=i {
            let dot = dot4(&l[i * n..i * n + j], &l[j * n..j * n + j]);
            let v = m[i * n + j] - dot;
            l[i * n + j] = if i == j {
                debug_assert!(v > 0.0, "not positive definite");
                v.max(f64::MIN_POSITIVE).sqrt()
            } else {
                v / l[j * n + j]
            };
        }
    }
    // Row i of L^-1: (e_i - sum_{k<i} L[i][k] row_k) / L[i][i].
    let mut li = vec![0.0f64; n * n];
    for i in 0..n {
        let (done, row) = li.split_at_mut(i * n);
        let row = &mut row[..n];
        for k in 0..i {
            let f = l[i * n + k];
            if f != 0.0 {
                add_scaled(&mut row[..=k], -f, &done[k * n..k * n + k + 1]);
            }
        }
        row[i] = 1.0;
        let d = l[i * n + i];
        row[..=i].iter_mut().for_each(|r| *r /= d);
    }
    // m^-1 = sum_k (row k of L^-1)^T (row k of L^-1): the lower half, then mirrored.
    let mut inv = vec![0.0f64; n * n];
    for k in 0..n {
        let row = &li[k * n..k * n + k + 1];
        for (a, &x) in row.iter().enumerate() {
            if x != 0.0 {
                add_scaled(&mut inv[a * n..a * n + a + 1], x, row);
            }
        }
    }
    for a in 0..n {
        for b in a + 1..n {
            inv[a * n + b] = inv[b * n + a];
        }
    }
    inv
}

kernel! {
/// `y += f x`, element by element (`f x` rounded, then added: the same bits on every CPU).
fn add_scaled(y: &mut [f64], f: f64, x: &[f64]) {
    for (o, &v) in y.iter_mut().zip(x) {
        *o += f * v;
    }
}
}

kernel! {
/// The dot product of two equally long slices, in four running sums (which vectorise).
fn dot4(a: &[f64], b: &[f64]) -> f64 {
    let mut sums = [0.0f64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for t in 0..4 {
            sums[t] += x[t] * y[t];
        }
    }
    sums.iter().sum::<f64>() + tail
}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::multigrid::plan;
    use crate::sim::obstacles::{Layout, Mask};

    fn hierarchy(mask: &Mask) -> Hierarchy {
        let faces = Faces::from_mask(mask);
        Hierarchy::new(&faces, &plan(mask.width(), mask.height())).expect("coarse levels")
    }

    /// Couplings are symmetric, never join two nodes of one colour, and join only nodes of
    /// neighbouring cells; every live finer node has one parent and taps summing to 1.
    fn check_structure(h: &Hierarchy) {
        for lv in &h.levels {
            let g = &lv.graph;
            for n in 0..g.len() {
                let c = g.cell[n] as usize;
                assert_eq!(
                    n < lv.red,
                    (c % g.w + c / g.w).is_multiple_of(2),
                    "colour of node {n}"
                );
                for (m, w) in g.couplings(n) {
                    let d = g.cell[m] as usize;
                    let (di, dj) = ((c % g.w).abs_diff(d % g.w), (c / g.w).abs_diff(d / g.w));
                    assert_eq!(
                        di + dj,
                        1,
                        "nodes {n} and {m} are not in neighbouring cells"
                    );
                    let back: f32 = g.couplings(m).filter(|&(k, _)| k == n).map(|x| x.1).sum();
                    assert!(
                        (back - w).abs() <= 1e-6 * w,
                        "asymmetric {n}-{m}: {w} {back}"
                    );
                }
            }
            // Each live finer node's residual is restricted whole.
            let mut share = vec![0.0f32; lv.tap_node.len()];
            for (&a, &w) in lv.child.iter().zip(&lv.child_weight) {
                share[a as usize] += w;
            }
            let seen: Vec<bool> = share.iter().map(|&s| s > 0.0).collect();
            for (a, &s) in share.iter().enumerate() {
                assert!(
                    s == 0.0 || (s - 1.0).abs() < 1e-5,
                    "finer node {a}: {s} restricted"
                );
            }
            for (a, w) in lv.tap_weight.iter().enumerate() {
                let total: f32 = w.iter().sum();
                if seen[a] {
                    assert!((total - 1.0).abs() < 1e-5, "taps of {a} sum to {total}");
                } else {
                    assert_eq!(total, 0.0, "a finer node without parent gets a correction");
                }
            }
        }
    }

    /// Without walls inside, every coarse cell is one node and the couplings are the uniform
    /// coarse operators of `sim::multigrid`.
    #[test]
    fn open_flow_gives_the_uniform_coarse_operators() {
        let (w, h) = (37, 22);
        let mut mask = Mask::empty(w, h);
        mask.set(0, 0, true);
        let hier = hierarchy(&mask);
        check_structure(&hier);
        for (lv, p) in hier.levels.iter().zip(plan(w, h)) {
            let g = &lv.graph;
            assert_eq!(g.len(), p.w * p.h, "one node per cell at {}x{}", p.w, p.h);
            for n in 0..g.len() {
                let c = g.cell[n] as usize;
                for (m, cw) in g.couplings(n) {
                    let d = g.cell[m] as usize;
                    let want = if c / p.w == d / p.w { p.op.cx } else { p.op.cy };
                    // The corner cell is solid on the finest level: the first coarse cell's
                    // faces are one finer face short.
                    if c == 0 || d == 0 || p.fine_w == w {
                        assert!(cw <= want * 1.0001);
                        continue;
                    }
                    assert!((cw - want).abs() < 1e-5 * want, "{cw} against {want}");
                }
            }
        }
    }

    /// A wall one cell thick splits the coarse cells it runs through: both sides stay apart
    /// on every level, and from the second level on (on the first it lies along a coarse
    /// face) the cells along it hold a node per side.
    #[test]
    fn a_thin_wall_splits_coarse_cells() {
        let (w, h) = (40, 24);
        let mut mask = Mask::empty(w, h);
        for j in 0..h {
            mask.set(21, j, true);
        }
        let hier = hierarchy(&mask);
        check_structure(&hier);
        for (k, lv) in hier.levels.iter().enumerate() {
            let g = &lv.graph;
            let (label, size) = g.regions();
            assert_eq!(size.len(), 2, "both sides stay apart at {}x{}", g.w, g.h);
            // The cells the wall runs through hold one node per side.
            let per_cell = |c: usize| g.cell.iter().filter(|&&x| x as usize == c).count();
            let split = (0..g.w * g.h).filter(|&c| per_cell(c) == 2).count();
            assert!(
                k == 0 || split >= g.h,
                "{split} split cells at {}x{}",
                g.w,
                g.h
            );
            assert!(label.iter().all(|&l| l < 2));
        }
    }

    /// The coarsest level's dense solve gives the mean-free solution of A x = b - mean(b) in
    /// each region, for a ring that encloses its own pocket.
    #[test]
    fn the_coarsest_solve_is_exact_per_region() {
        let mask = Mask::layout(Layout::Ring, 64, 36);
        let hier = hierarchy(&mask);
        let g = &hier.levels.last().unwrap().graph;
        let Coarsest::Direct(s) = &hier.coarsest else {
            panic!("{} nodes: dense", g.len());
        };
        let n = g.len();
        let (label, size) = g.regions();
        let b: Vec<f32> = (0..n).map(|k| ((k * 37) % 11) as f32 - 5.0).collect();
        let x: Vec<f32> = (0..n)
            .map(|a| (0..n).map(|m| s[a * n + m] * b[m]).sum())
            .collect();
        let mut mean = vec![0.0f32; size.len()];
        for k in 0..n {
            mean[label[k] as usize] += b[k] / size[label[k] as usize] as f32;
        }
        let mut xsum = vec![0.0f32; size.len()];
        for a in 0..n {
            let ax: f32 = g.couplings(a).map(|(m, w)| w * (x[a] - x[m])).sum();
            let want = b[a] - mean[label[a] as usize];
            assert!((ax - want).abs() < 1e-3, "node {a}: {ax} against {want}");
            xsum[label[a] as usize] += x[a];
        }
        assert!(
            xsum.iter().all(|s| s.abs() < 1e-3),
            "not mean-free: {xsum:?}"
        );
    }

    /// Every layout keeps the structure on every level.
    #[test]
    fn layouts_keep_the_structure() {
        for layout in [Layout::Disc, Layout::Pillars, Layout::Maze, Layout::Ring] {
            check_structure(&hierarchy(&Mask::layout(layout, 75, 41)));
        }
    }
}
