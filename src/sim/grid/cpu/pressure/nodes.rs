//! The coarse multigrid levels around obstacles on the CPU: relaxation, residual, restriction,
//! prolongation and the coarsest solve on the node graphs of `sim::obstacles::nodes` (see
//! there for how the graphs are made). nodes.wgsl does the same on the GPU.
//!
//! **Slots.** The graphs number nodes red first, then by cell. The CPU renumbers each level:
//! every cell's first node (its *primary*) takes the cell's place in the checkerboard layout
//! of `super::Split` (the red plane, then the black one; a cell without a node keeps a slot no
//! coupling touches), and the few other nodes (*secondaries*: the far side of a wall that runs
//! through a cell) follow both planes. Relaxation then runs as on the finest level around
//! obstacles: band-parallel red-black rows with per-face couplings
//! (`super::faces::relax_row_faces`), vectorised, instead of a gather per coupling, which made
//! the coarse sweeps 29 % of a step among pillars at 512x512. What the rows cannot express is
//! fixed within each half-sweep, before its rows: a secondary is relaxed through its
//! couplings, and a primary coupled to a secondary gets that coupling's pull added to its
//! right-hand side (both read only the other colour, which the half-sweep does not change). The
//! residual stays per slot. The restriction and prolongation between a level and the next
//! finer one (the finest grid or a level on slots) are plain multigrid's separable passes
//! wherever the graph's taps are the plain ones (everywhere but near walls), with the rest
//! fixed after them, node by node ([`Top`]); a per-node gather of every tap cost about a fifth
//! of a V-cycle among pillars. Where most taps differ (the maze's deepest levels) the
//! transfers stay node by node.
//!
//! Why this file is long: the node-by-node multigrid around walls (smoothing, residual,
//! restriction and prolongation with their per-node taps) is one algorithm whose kernels share
//! the node tables; the coarsest solve is `coarsest.rs`, the tests `tests.rs`.

mod coarsest;

use super::faces::{MaskedUpdate, SplitFaces, interior, relax_row_faces};
use super::multigrid::{prolongate_natural, restrict_natural};
use super::{deinterleave_planes, interleave_planes, row_count};
use crate::kernels::band::{self, Shared};
use crate::sim::multigrid::{COARSEST_OMEGA, LevelPlan, NodeSweeps, coarsest_sweeps};
use crate::sim::obstacles::nodes::{Coarsest, Hierarchy, NodeLevel, bilinear_taps, same_weight};
use coarsest::solve_coarsest;
use rayon::prelude::*;

/// A primary coupled to secondaries: its row, its slot, and those couplings (slot, weight).
type Linked = (usize, u32, Vec<(u32, f32)>);

/// The nodes of one colour that the structured rows cannot relax, by row.
#[derive(Clone, Debug, Default)]
struct Fixups {
    /// Primaries coupled to secondaries (slots); those of row `j` are
    /// `primaries[primary_rows[j]..primary_rows[j + 1]]`.
    primary_rows: Vec<u32>,
    primaries: Vec<u32>,
    /// Their couplings to secondaries: `link_start[k]..link_start[k + 1]` of `link` (slots)
    /// and `link_weight`.
    link_start: Vec<u32>,
    link: Vec<u32>,
    link_weight: Vec<f32>,
    /// Secondaries (slots), by row as the primaries.
    secondary_rows: Vec<u32>,
    secondaries: Vec<u32>,
}

impl Fixups {
    /// From `(row, slot, couplings to secondaries)` of the primaries and `(row, slot)` of
    /// the secondaries, on a level `h` rows high.
    fn new(h: usize, mut primaries: Vec<Linked>, mut secondaries: Vec<(usize, u32)>) -> Self {
        primaries.sort_by_key(|p| (p.0, p.1));
        secondaries.sort_unstable();
        let rows = |row_of: &mut dyn Iterator<Item = usize>| {
            let mut at = vec![0u32; h + 1];
            row_of.for_each(|j| at[j + 1] += 1);
            for j in 1..=h {
                at[j] += at[j - 1];
            }
            at
        };
        let mut link_start = vec![0u32];
        let (mut link, mut link_weight) = (Vec::new(), Vec::new());
        for (_, _, links) in &primaries {
            for &(m, w) in links {
                link.push(m);
                link_weight.push(w);
            }
            link_start.push(link.len() as u32);
        }
        Self {
            primary_rows: rows(&mut primaries.iter().map(|p| p.0)),
            primaries: primaries.iter().map(|p| p.1).collect(),
            link_start,
            link,
            link_weight,
            secondary_rows: rows(&mut secondaries.iter().map(|s| s.0)),
            secondaries: secondaries.iter().map(|s| s.1).collect(),
        }
    }
}

/// The transfers between a level and the next finer one (the finest grid, or a finer level on
/// its slots): plain multigrid's separable passes (area-weighted restriction, bilinear
/// prolongation), then the slots and finer slots where the graph's taps differ (near walls)
/// recomputed from the taps.
#[derive(Clone, Debug)]
struct Top {
    plan: LevelPlan,
    /// The finer level's plane row length and slots per plane, when it is a level on slots
    /// (none: the finest grid, in natural layout).
    finer_planes: Option<(usize, usize)>,
    /// Slots whose restriction is not the plain one.
    restrict_fix: Vec<u32>,
    /// Finer slots whose prolongation is not the plain one and takes some node's value.
    prolong_fix: Vec<u32>,
    /// Finer slots whose prolongation takes no node's value (solid cells, and cells of a finer
    /// level without a node: most of those that differ from the plain prolongation): they are
    /// set to 0 (what their zero taps give), without the taps.
    prolong_zero: Vec<u32>,
    /// Scratch: finer rows x coarse columns or coarse rows x finer columns, the coarse
    /// level in natural layout, and a finer level on slots in natural layout.
    transfer: Vec<f32>,
    natural: Vec<f32>,
    finer_natural: Vec<f32>,
}

/// The finer level of a [`Top`]: the finest grid (each cell its own node and slot), or a
/// level on slots.
#[derive(Clone, Copy)]
enum Finer<'a> {
    Finest,
    Slots {
        /// Per finer node: its cell (natural index on the finer grid) and its slot.
        cell: &'a [u32],
        slot: &'a [u32],
        /// The finer level's plane row length and slots per plane.
        hw: usize,
        plane: usize,
    },
}

impl Finer<'_> {
    /// Finer node `a`'s cell, slot, and whether it is its cell's primary.
    fn node(&self, a: usize) -> (usize, usize, bool) {
        match *self {
            Finer::Finest => (a, a, true),
            Finer::Slots {
                cell, slot, plane, ..
            } => {
                let s = slot[a] as usize;
                (cell[a] as usize, s, s < 2 * plane)
            }
        }
    }
}

/// The slot of cell `(i, j)`'s primary: the cell's place in the red-black planes (`hw` slots
/// a plane row, `plane` slots a plane), as `Split` lays out a level.
fn primary_slot(i: usize, j: usize, hw: usize, plane: usize) -> usize {
    ((i + j) & 1) * plane + j * hw + i / 2
}

impl Top {
    /// For `level` (`primary` flagging each cell's first node) on `plan`, below `finer`;
    /// none where the cells to fix after the plain passes exceed a quarter of the two levels'
    /// cells (the node by node transfers are then cheaper).
    fn new(level: &NodeLevel, primary: &[bool], plan: &LevelPlan, finer: Finer) -> Option<Self> {
        let g = &level.graph;
        let (fw, fh, cw, ch) = (plan.fine_w, plan.fine_h, plan.w, plan.h);
        let hw = cw.div_ceil(2);
        let plane = ch * hw;
        // The primary node of each coarse cell.
        let mut primary_of = vec![u32::MAX; cw * ch];
        for (k, &c) in g.cell.iter().enumerate() {
            if primary[k] {
                primary_of[c as usize] = k as u32;
            }
        }
        // Finer cells that take part, whose value the plain passes read: on the finest grid
        // those restricted somewhere (the others' residual is 0), on a level on slots every
        // cell with a node (a cell without one has a residual of 0 in its unused slot). And
        // each finer cell's primary node.
        let mut live = vec![false; fw * fh];
        let mut finer_primary = vec![u32::MAX; fw * fh];
        match finer {
            Finer::Finest => level.child.iter().for_each(|&a| live[a as usize] = true),
            Finer::Slots { cell, .. } => {
                for a in 0..cell.len() {
                    let (c, _, first) = finer.node(a);
                    if first {
                        live[c] = true;
                        finer_primary[c] = a as u32;
                    }
                }
            }
        }
        // Restriction: a cell's plain taps, over the live finer cells.
        let (rx, ry) = (&plan.restrict_x, &plan.restrict_y);
        // At most 3 x 3 finer cells overlap a coarse cell (one node each on the finest level).
        type Children = ([(u32, f32); 9], usize);
        let plain_children = |ci: usize, cj: usize| -> Children {
            let mut out = ([(0u32, 0.0f32); 9], 0);
            for (t, &fy) in ry.frac[cj].iter().enumerate() {
                let j = ry.first[cj] as usize + t;
                for (u, &fx) in rx.frac[ci].iter().enumerate() {
                    let i = rx.first[ci] as usize + u;
                    if fx > 0.0 && fy > 0.0 && i < fw && j < fh && live[j * fw + i] {
                        out.0[out.1] = ((j * fw + i) as u32, fx * fy);
                        out.1 += 1;
                    }
                }
            }
            out.0[..out.1].sort_unstable_by_key(|c| c.0);
            out
        };
        // The secondaries always.
        let extra = primary.iter().filter(|&&p| !p).count();
        let mut restrict_fix: Vec<u32> = (2 * plane..2 * plane + extra).map(|s| s as u32).collect();
        for cj in 0..ch {
            for ci in 0..cw {
                let (plain, n) = plain_children(ci, cj);
                let s = ((ci + cj) & 1) * plane + cj * hw + ci / 2;
                let regular = match primary_of[cj * cw + ci] {
                    u32::MAX => n == 0,
                    k => {
                        let k = k as usize;
                        let range =
                            level.child_start[k] as usize..level.child_start[k + 1] as usize;
                        let mut mine = [(0u32, 0.0f32); 9];
                        range.len() == n && {
                            let taps = level.child[range.clone()].iter();
                            let mut primaries = true;
                            for (m, (&a, &w)) in
                                mine.iter_mut().zip(taps.zip(&level.child_weight[range]))
                            {
                                // In finer cells; a secondary child is not the plain sum's.
                                let (c, _, first) = finer.node(a as usize);
                                primaries &= first;
                                *m = (c as u32, w);
                            }
                            mine[..n].sort_unstable_by_key(|c| c.0);
                            primaries
                                && mine[..n]
                                    .iter()
                                    .zip(&plain[..n])
                                    .all(|(a, b)| a.0 == b.0 && same_weight(a.1, b.1))
                        }
                    }
                };
                if !regular {
                    restrict_fix.push(s as u32);
                }
            }
        }
        restrict_fix.sort_unstable();
        // Prolongation: the four bilinear taps, each on its cell's primary node, into each
        // finer cell's primary; the finer secondaries always from their taps.
        let (px, py) = (&plan.prolong_x.0, &plan.prolong_y.0);
        let (mut prolong_zero, mut prolong_fix, mut unused) = (Vec::new(), Vec::new(), Vec::new());
        let mut from_taps = |a: usize, s: usize| match level.tap_weight[a] == [0.0; 4] {
            true => prolong_zero.push(s as u32),
            false => prolong_fix.push(s as u32),
        };
        for c in 0..fw * fh {
            let a = match finer {
                Finer::Finest => c,
                Finer::Slots { hw, plane, .. } => match finer_primary[c] {
                    // A cell without a node: its unused slot.
                    u32::MAX => {
                        let (i, j) = (c % fw, c / fw);
                        unused.push(primary_slot(i, j, hw, plane) as u32);
                        continue;
                    }
                    a => a as usize,
                },
            };
            let taps = bilinear_taps(px[c % fw], py[c / fw]);
            let (nodes, weights) = (level.tap_node[a], level.tap_weight[a]);
            let plain = taps.iter().enumerate().all(|(t, &(ci, cj, f))| {
                if f > 0.0 {
                    let want = primary_of[cj as usize * cw + ci as usize];
                    want != u32::MAX && nodes[t] == want && same_weight(weights[t], f)
                } else {
                    weights[t] == 0.0
                }
            });
            if !plain {
                from_taps(a, finer.node(a).1);
            }
        }
        if let Finer::Slots { cell, .. } = finer {
            for a in 0..cell.len() {
                let (_, s, first) = finer.node(a);
                if !first {
                    from_taps(a, s);
                }
            }
        }
        prolong_zero.extend(unused);
        prolong_fix.sort_unstable();
        prolong_zero.sort_unstable();
        // Worth it while the fixes are few (the maze's deeper levels are mostly walls).
        let fixes = restrict_fix.len() + prolong_fix.len();
        if 4 * fixes > cw * ch + fw * fh {
            return None;
        }
        let finer_planes = match finer {
            Finer::Finest => None,
            Finer::Slots { hw, plane, .. } => Some((hw, plane)),
        };
        Some(Self {
            finer_planes,
            restrict_fix,
            prolong_fix,
            prolong_zero,
            transfer: vec![0.0; (fh * cw).max(ch * fw)],
            natural: vec![0.0; cw * ch],
            finer_natural: vec![0.0; if finer_planes.is_some() { fw * fh } else { 0 }],
            plan: plan.clone(),
        })
    }
}

/// One coarse level on its slots, with its unknowns.
#[derive(Clone, Debug)]
struct Work {
    w: usize,
    h: usize,
    /// Plane row length, `ceil(w / 2)`.
    hw: usize,
    /// Slots per plane, `h * hw`.
    plane: usize,
    /// The slot of each graph node.
    slot: Vec<u32>,
    /// Per slot: its couplings `start[s]..start[s + 1]` of `nbr` (slots) and `weight`, and the
    /// inverse of their sum (0 without any).
    start: Vec<u32>,
    nbr: Vec<u32>,
    weight: Vec<f32>,
    inv: Vec<f32>,
    /// Per slot: restriction from the finer level's slots (`child_start`, `child`,
    /// `child_weight`, as in `NodeLevel`).
    child_start: Vec<u32>,
    child: Vec<u32>,
    child_weight: Vec<f32>,
    /// Per finer slot: the prolongation's four taps (slots of this level) and weights.
    tap_node: Vec<[u32; 4]>,
    tap_weight: Vec<[f32; 4]>,
    /// The plain transfers from and to the finer level (none where they would not pay).
    top: Option<Top>,
    /// The primaries' couplings to the primaries of the cells left, right, below and above,
    /// and their inverse diagonals, for the structured rows.
    faces: SplitFaces,
    /// Per colour, what the rows cannot relax.
    fixups: [Fixups; 2],
    /// The rows near walls (`NodeLevel::near_rows`), for the extra sweeps there.
    near_rows: Vec<u32>,
    /// Correction, right-hand side, residual, and the relaxation's right-hand side (with the
    /// secondaries' pull on their primary neighbours), per slot.
    e: Vec<f32>,
    b: Vec<f32>,
    r: Vec<f32>,
    rhs: Vec<f32>,
    /// Per node (graph order): the coarsest solve's right-hand side and solution.
    node_b: Vec<f32>,
    node_e: Vec<f32>,
}

impl Work {
    /// `level` (planned by `plan`) on slots, below `finer`: the finer level and its slots, or
    /// none (the finer level is the finest, whose nodes are its cells).
    fn new(level: &NodeLevel, plan: &LevelPlan, finer: Option<(&NodeLevel, &Work)>) -> Self {
        let above = match finer {
            None => Finer::Finest,
            Some((l, f)) => Finer::Slots {
                cell: &l.graph.cell,
                slot: &f.slot,
                hw: f.hw,
                plane: f.plane,
            },
        };
        let finer = finer.map(|(_, f)| (&f.slot[..], f.e.len()));
        let g = &level.graph;
        let (w, h) = (g.w, g.h);
        let hw = w.div_ceil(2);
        let plane = h * hw;
        let n = g.len();
        // Slots: each cell's first node in the planes, the others after them.
        let mut taken = vec![false; w * h];
        let mut primary = vec![false; n];
        let mut slot = vec![0u32; n];
        let mut extra = 0;
        for k in 0..n {
            let c = g.cell[k] as usize;
            let (i, j) = (c % w, c / w);
            if taken[c] {
                slot[k] = (2 * plane + extra) as u32;
                extra += 1;
            } else {
                taken[c] = true;
                primary[k] = true;
                slot[k] = primary_slot(i, j, hw, plane) as u32;
            }
        }
        // The plain transfers are worked out beside the rest.
        let (top, mut work) = rayon::join(
            || Top::new(level, &primary, plan, above),
            || Self::on_slots(level, finer, slot, &primary, plane, extra),
        );
        work.top = top;
        work
    }

    /// [`Self::new`] once the slots are chosen (`slot` per node, `primary` flagging each
    /// cell's first node, `plane` slots per plane, `extra` secondaries), without [`Top`].
    fn on_slots(
        level: &NodeLevel,
        finer: Option<(&[u32], usize)>,
        slot: Vec<u32>,
        primary: &[bool],
        plane: usize,
        extra: usize,
    ) -> Self {
        let g = &level.graph;
        let (w, h, n) = (g.w, g.h, g.len());
        let hw = w.div_ceil(2);
        let len = 2 * plane + extra;
        let mut node_at = vec![u32::MAX; len];
        for (k, &s) in slot.iter().enumerate() {
            node_at[s as usize] = k as u32;
        }
        let inv_node = g.inverse_diagonal();
        let finer_slot = |a: u32| finer.map_or(a, |(f, _)| f[a as usize]);
        // Three independent tables, built side by side (a new mask stalls the simulation).
        let couplings = || {
            // Couplings and restriction per slot.
            let (mut start, mut nbr, mut weight) = (vec![0u32], Vec::new(), Vec::new());
            let (mut child_start, mut child, mut child_weight) =
                (vec![0u32], Vec::new(), Vec::new());
            let mut inv = vec![0.0f32; len];
            for (&k, inv) in node_at.iter().zip(inv.iter_mut()) {
                if k != u32::MAX {
                    let k = k as usize;
                    for (m, c) in g.couplings(k) {
                        nbr.push(slot[m]);
                        weight.push(c);
                    }
                    *inv = inv_node[k];
                    let range = level.child_start[k] as usize..level.child_start[k + 1] as usize;
                    for (&a, &c) in level.child[range.clone()]
                        .iter()
                        .zip(&level.child_weight[range])
                    {
                        child.push(finer_slot(a));
                        child_weight.push(c);
                    }
                }
                start.push(nbr.len() as u32);
                child_start.push(child.len() as u32);
            }
            (start, nbr, weight, inv, child_start, child, child_weight)
        };
        let taps = || {
            // Prolongation per finer slot (unused taps, weight 0, point at slot 0).
            let finer_len = finer.map_or(level.tap_node.len(), |(_, len)| len);
            let mut tap_node = vec![[0u32; 4]; finer_len];
            let mut tap_weight = vec![[0.0f32; 4]; finer_len];
            for (a, (taps, weights)) in level.tap_node.iter().zip(&level.tap_weight).enumerate() {
                let s = finer_slot(a as u32) as usize;
                tap_node[s] = taps.map(|m| slot.get(m as usize).copied().unwrap_or(0));
                tap_weight[s] = *weights;
            }
            (tap_node, tap_weight)
        };
        let rows = || {
            // The structured rows' couplings, and what they cannot express.
            let mut planes: [[Vec<f32>; 5]; 2] =
                std::array::from_fn(|_| std::array::from_fn(|_| vec![0.0; plane]));
            let mut fixed: [(Vec<_>, Vec<_>); 2] = Default::default();
            for k in 0..n {
                let cell = g.cell[k] as usize;
                let (i, j) = (cell % w, cell / w);
                let colour = (i + j) & 1;
                if !primary[k] {
                    fixed[colour].1.push((j, slot[k]));
                    continue;
                }
                let p = &mut planes[colour];
                let at = j * hw + i / 2;
                p[4][at] = inv_node[k];
                let mut links = Vec::new();
                for (m, c) in g.couplings(k) {
                    if !primary[m] {
                        links.push((slot[m], c));
                        continue;
                    }
                    let d = g.cell[m] as usize;
                    let (di, dj) = (d % w, d / w);
                    let side = match (di.cmp(&i), dj.cmp(&j)) {
                        (std::cmp::Ordering::Less, _) => 0,
                        (std::cmp::Ordering::Greater, _) => 1,
                        (_, std::cmp::Ordering::Less) => 2,
                        _ => 3,
                    };
                    p[side][at] += c;
                }
                if !links.is_empty() {
                    fixed[colour].0.push((j, slot[k], links));
                }
            }
            (planes, fixed.map(|(p, s)| Fixups::new(h, p, s)))
        };
        let ((table, near_rows), ((tap_node, tap_weight), (planes, fixups))) = rayon::join(
            || (couplings(), level.near_rows()),
            || rayon::join(taps, rows),
        );
        let (start, nbr, weight, inv, child_start, child, child_weight) = table;
        Self {
            top: None,
            w,
            h,
            hw,
            plane,
            slot,
            start,
            nbr,
            weight,
            inv,
            child_start,
            child,
            child_weight,
            tap_node,
            tap_weight,
            faces: SplitFaces::from_planes(planes, w),
            fixups,
            near_rows,
            e: vec![0.0; len],
            b: vec![0.0; len],
            r: vec![0.0; len],
            rhs: vec![0.0; len],
            node_b: vec![0.0; n],
            node_e: vec![0.0; n],
        }
    }
}

/// The coarse levels around one mask and their workspace.
#[derive(Clone, Debug)]
pub(super) struct Nodes {
    levels: Vec<Work>,
    coarsest: Coarsest,
}

impl Nodes {
    /// The levels of `h`, planned by `plans` (from the first coarse level down).
    pub fn new(h: Hierarchy, plans: &[LevelPlan]) -> Self {
        debug_assert!(plans.len() >= h.levels.len(), "a plan for every level");
        let mut levels: Vec<Work> = Vec::with_capacity(h.levels.len());
        for (k, (level, plan)) in h.levels.iter().zip(plans).enumerate() {
            let finer = k.checked_sub(1).map(|f| (&h.levels[f], &levels[f]));
            let work = Work::new(level, plan, finer);
            levels.push(work);
        }
        Self {
            levels,
            coarsest: h.coarsest,
        }
    }

    /// The coarse correction of a finer level whose residual is `r` (per finer node; at the
    /// finest level per cell, natural order), into `out` (same indexing): restrict, solve
    /// below by V-cycles, prolongate.
    pub fn correction(&mut self, r: &[f32], out: &mut [f32], sweeps: NodeSweeps) {
        let Self { levels, coarsest } = self;
        restrict(&mut levels[0], r);
        cycle(levels, coarsest, sweeps);
        prolongate(&mut levels[0], out);
    }
}

/// Level `levels[0]`'s V-cycle on its right-hand side, from a zero correction.
fn cycle(levels: &mut [Work], coarsest: &Coarsest, sweeps: NodeSweeps) {
    let Some((lv, rest)) = levels.split_first_mut() else {
        return;
    };
    lv.e.fill(0.0);
    if rest.is_empty() {
        solve_coarsest(lv, coarsest);
        return;
    }
    smooth(lv, sweeps);
    residual(lv);
    restrict(&mut rest[0], &lv.r);
    cycle(rest, coarsest, sweeps.below());
    prolongate(&mut rest[0], &mut lv.r);
    lv.e.iter_mut().zip(&lv.r).for_each(|(e, c)| *e += c);
    smooth(lv, sweeps);
}

/// A level's smoothing, before or after its coarse correction: its sweeps, then those of its
/// rows near walls (the sweeps as seen from this level: `below` gives the next one's).
fn smooth(lv: &mut Work, sweeps: NodeSweeps) {
    if lv.near_rows.len() == lv.h {
        // Every row is near a wall (the maze): the same sweeps in one go.
        relax_omega(lv, sweeps.at(0) + sweeps.near_at(0), 1.0, Rows::All);
        return;
    }
    relax_omega(lv, sweeps.at(0), 1.0, Rows::All);
    relax_omega(lv, sweeps.near_at(0), 1.0, Rows::NearWalls);
}

/// Which rows a relaxation sweeps.
#[derive(Clone, Copy)]
enum Rows {
    All,
    /// [`Work::near_rows`].
    NearWalls,
}

/// Nodes per rayon task.
const CHUNK: usize = 2048;

kernel! {
/// `out` (nodes `first..`) = the weighted sums of the finer residual `r` over their finer
/// nodes.
fn restrict_nodes(
    out: &mut [f32],
    first: usize,
    r: &[f32],
    (start, child, weight): (&[u32], &[u32], &[f32]),
) {
    for (k, b) in out.iter_mut().enumerate() {
        let n = first + k;
        let range = start[n] as usize..start[n + 1] as usize;
        let mut sum = 0.0f32;
        for (&a, &w) in child[range.clone()].iter().zip(&weight[range]) {
            sum = w.mul_add(r[a as usize], sum);
        }
        *b = sum;
    }
}
}

kernel! {
/// `out` (finer nodes) = the four-tap interpolation of `e`.
fn prolong_nodes(out: &mut [f32], node: &[[u32; 4]], weight: &[[f32; 4]], e: &[f32]) {
    for ((o, n), w) in out.iter_mut().zip(node).zip(weight) {
        *o = w[0] * e[n[0] as usize]
            + w[1] * e[n[1] as usize]
            + w[2] * e[n[2] as usize]
            + w[3] * e[n[3] as usize];
    }
}
}

/// `sweeps` red-black Gauss-Seidel sweeps (over-relaxed by `omega`), band-parallel (see
/// the module docs).
fn relax_omega(lv: &mut Work, sweeps: u32, omega: f32, which: Rows) {
    let (w, h, hw, plane) = (lv.w, lv.h, lv.hw, lv.plane);
    let rows_near = match which {
        Rows::All => None,
        Rows::NearWalls => Some(&lv.near_rows[..]),
    };
    // Row `t` of the sweep is the level's row `t`, or its `t`-th row near walls.
    let count = rows_near.map_or(h, <[u32]>::len);
    if sweeps == 0 || count == 0 {
        return;
    }
    let row_at = |t: usize| rows_near.map_or(t, |r| r[t] as usize);
    lv.rhs.copy_from_slice(&lv.b);
    let Work {
        start,
        nbr,
        weight,
        inv,
        faces,
        fixups,
        e,
        b,
        rhs,
        ..
    } = lv;
    let (e, rhs) = (Shared::new(e), Shared::new(rhs));
    let update = MaskedUpdate::InPlace(omega);
    band::phases(count, w, 2 * sweeps as usize, |phase, band| {
        let c = phase % 2;
        let f = &fixups[c];
        // Consecutive rows of the level, each handled as the whole band once was: its
        // fix-ups, then its structured rows.
        let mut t = band.start;
        while t < band.end {
            let first = row_at(t);
            let mut end = t + 1;
            while end < band.end && row_at(end) == first + (end - t) {
                end += 1;
            }
            let rows = first..first + (end - t);
            t = end;
            // SAFETY: in this phase each thread writes only colour `c`'s slots (and `rhs` at its
            // primaries) in its own band of rows, and reads the other colour's slots, which no
            // thread writes in this phase, and its own.
            unsafe {
                // Primaries coupled to secondaries: the other colour's secondaries pull them.
                let range = f.primary_rows[rows.start] as usize..f.primary_rows[rows.end] as usize;
                for k in range {
                    let s = f.primaries[k] as usize;
                    let links = f.link_start[k] as usize..f.link_start[k + 1] as usize;
                    let mut sum = b[s];
                    for (&m, &c) in f.link[links.clone()].iter().zip(&f.link_weight[links]) {
                        sum = c.mul_add(e.read(m as usize), sum);
                    }
                    rhs.write(s, sum);
                }
                // Secondaries, through their couplings.
                let range =
                    f.secondary_rows[rows.start] as usize..f.secondary_rows[rows.end] as usize;
                for &s in &f.secondaries[range] {
                    let s = s as usize;
                    let links = start[s] as usize..start[s + 1] as usize;
                    let mut sum = b[s];
                    for (&m, &c) in nbr[links.clone()].iter().zip(&weight[links]) {
                        sum = c.mul_add(e.read(m as usize), sum);
                    }
                    let old = e.read(s);
                    e.write(s, omega.mul_add(sum * inv[s] - old, old));
                }
                // The planes' rows.
                let (mine, other) = (c * plane, (1 - c) * plane);
                for j in rows {
                    let row = |base: usize, r: usize| base + r * hw..base + (r + 1) * hw;
                    let same = e.get(row(other, j));
                    relax_row_faces(
                        e.get_mut(row(mine, j)),
                        same,
                        if j > 0 {
                            e.get(row(other, j - 1))
                        } else {
                            same
                        },
                        if j + 1 < h {
                            e.get(row(other, j + 1))
                        } else {
                            same
                        },
                        rhs.get(row(mine, j)),
                        faces.planes[c].each_ref().map(|p| &p[j * hw..(j + 1) * hw]),
                        w,
                        (j + c) & 1,
                        update,
                        faces.row(c, j),
                    );
                }
            }
        }
    });
}

/// `r = b - A e`: the primaries' couplings to primaries row by row on the planes (as the
/// relaxation reads them), then what the rows cannot express: each primary's couplings to
/// secondaries, and the secondaries through their couplings.
fn residual(lv: &mut Work) {
    let (w, h, hw, plane) = (lv.w, lv.h, lv.hw, lv.plane);
    let Work {
        start,
        nbr,
        weight,
        faces,
        fixups,
        e,
        b,
        r,
        ..
    } = lv;
    let (e, b) = (&e[..], &b[..]);
    let (rows, rest) = r.split_at_mut(2 * plane);
    rows.par_chunks_mut(hw.max(1))
        .with_min_len(band::min_rows(hw))
        .enumerate()
        .for_each(|(t, out)| {
            let (c, j) = (t / h.max(1), t % h.max(1));
            let row = |base: usize, r: usize| &e[base + r * hw..base + (r + 1) * hw];
            let (mine, other) = (c * plane, (1 - c) * plane);
            let same = row(other, j);
            let dn = if j > 0 { row(other, j - 1) } else { same };
            let up = if j + 1 < h { row(other, j + 1) } else { same };
            let planes = faces.planes[c].each_ref().map(|p| &p[j * hw..(j + 1) * hw]);
            let bj = &b[mine + j * hw..mine + (j + 1) * hw];
            residual_row_split(
                row(mine, j),
                [same, dn, up],
                bj,
                planes,
                w,
                (j + c) & 1,
                out,
            );
        });
    // `sum c (e[s] - e[m])` over couplings `(m, c)`.
    let flux = |s: usize, nbr: &[u32], weight: &[f32]| {
        let pairs = nbr.iter().zip(weight);
        pairs.fold(0.0f32, |f, (&m, &c)| c.mul_add(e[s] - e[m as usize], f))
    };
    for f in fixups.iter() {
        // The secondaries, through the graph.
        for &s in &f.secondaries {
            let s = s as usize;
            let links = start[s] as usize..start[s + 1] as usize;
            rest[s - 2 * plane] = b[s] - flux(s, &nbr[links.clone()], &weight[links]);
        }
        // The primaries' couplings to secondaries.
        for (k, &s) in f.primaries.iter().enumerate() {
            let links = f.link_start[k] as usize..f.link_start[k + 1] as usize;
            let s = s as usize;
            rows[s] -= flux(s, &f.link[links.clone()], &f.link_weight[links]);
        }
    }
}

kernel! {
/// One row of one colour's residual `b - A e` from the planes' couplings (`[left, right,
/// down, up, _]`) to the other colour's rows `j`, `j - 1` and `j + 1` (`other`; row `j`
/// again at a wall, where the coupling is 0), shifted by `s` as in the relaxation.
fn residual_row_split(
    own: &[f32],
    other: [&[f32]; 3],
    b: &[f32],
    planes: [&[f32]; 5],
    w: usize,
    s: usize,
    out: &mut [f32],
) {
    let count = row_count(w, s);
    let [same, dn, up] = other;
    let hw = same.len();
    let [wl, wr, wd, wu, _] = planes;
    let cell = |k: usize| {
        let c = own[k];
        let left = same[(k + s).wrapping_sub(1).min(hw - 1)];
        let right = same[(k + s).min(hw - 1)];
        let flux = wl[k].mul_add(
            c - left,
            wr[k].mul_add(c - right, wd[k].mul_add(c - dn[k], wu[k] * (c - up[k]))),
        );
        b[k] - flux
    };
    let (k_lo, k_hi) = interior(count, s, hw);
    for k in (0..k_lo).chain(k_hi..count) {
        out[k] = cell(k);
    }
    let n = k_hi - k_lo;
    if n > 0 {
        let left = &same[k_lo + s - 1..][..n];
        let right = &same[k_lo + s..][..n];
        let (c, d, u, bb) = (&own[k_lo..k_hi], &dn[k_lo..k_hi], &up[k_lo..k_hi], &b[k_lo..k_hi]);
        let (wl, wr, wd, wu) = (&wl[k_lo..k_hi], &wr[k_lo..k_hi], &wd[k_lo..k_hi], &wu[k_lo..k_hi]);
        for (i, o) in out[k_lo..k_hi].iter_mut().enumerate() {
            let ci = c[i];
            let flux = wl[i].mul_add(
                ci - left[i],
                wr[i].mul_add(ci - right[i], wd[i].mul_add(ci - d[i], wu[i] * (ci - u[i]))),
            );
            *o = bb[i] - flux;
        }
    }
    // Slots past the row's cells (an odd width's last slot of one colour) hold no node.
    for (o, &b) in out.iter_mut().zip(b).skip(count) {
        *o = b;
    }
}
}

/// `lv.b` = the weighted sums of the finer residual `r` over each slot's finer slots.
fn restrict(lv: &mut Work, r: &[f32]) {
    if lv.top.is_some() {
        return restrict_top(lv, r);
    }
    let taps = (&lv.child_start[..], &lv.child[..], &lv.child_weight[..]);
    lv.b.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, out)| restrict_nodes(out, c * CHUNK, r, taps));
}

/// `out` (per finer slot) = the interpolation of `lv.e`.
fn prolongate(lv: &mut Work, out: &mut [f32]) {
    if lv.top.is_some() {
        return prolongate_top(lv, out);
    }
    let (node, weight, e) = (&lv.tap_node, &lv.tap_weight, &lv.e);
    out.par_chunks_mut(4 * CHUNK)
        .enumerate()
        .for_each(|(c, o)| {
            let range = c * 4 * CHUNK..c * 4 * CHUNK + o.len();
            prolong_nodes(o, &node[range.clone()], &weight[range], e);
        });
}

/// [`restrict`] by the plain transfers from the finer level (`r`: the finest grid's, natural
/// layout, or a finer level's slots): plain multigrid's separable restriction into the planes,
/// then the slots where the graph's differs.
///
/// The plain passes also sum the finest cells without an open face, which the graph leaves
/// out: their residual is 0 (their right-hand side is 0, `Obstacles::set_rhs`, and they couple
/// nothing), so the sums agree. So is that of a finer level's unused slots (no coupling, and a
/// right-hand side of 0: restricted from nothing, or by these passes from cells whose
/// residual is 0).
fn restrict_top(lv: &mut Work, r: &[f32]) {
    let Some(top) = lv.top.as_mut() else {
        return;
    };
    let p = &top.plan;
    let (fw, fh) = (p.fine_w, p.fine_h);
    let natural = match top.finer_planes {
        None => r,
        Some((fhw, fplane)) => {
            let (red, black) = (&r[..fplane], &r[fplane..2 * fplane]);
            interleave_planes(red, black, (fw, fhw), &mut top.finer_natural, 0.0);
            &top.finer_natural
        }
    };
    let taps = (&p.restrict_x, &p.restrict_y);
    restrict_natural(natural, (fw, fh), taps, &mut top.transfer, &mut top.natural);
    let (cw, hw, plane) = (p.w, lv.hw, lv.plane);
    let (red, rest) = lv.b.split_at_mut(plane);
    let black = &mut rest[..plane];
    deinterleave_planes(&top.natural, (cw, hw), red, black);
    for &s in &top.restrict_fix {
        let s = s as usize;
        let range = lv.child_start[s] as usize..lv.child_start[s + 1] as usize;
        let mut sum = 0.0f32;
        for (&a, &w) in lv.child[range.clone()].iter().zip(&lv.child_weight[range]) {
            sum = w.mul_add(r[a as usize], sum);
        }
        lv.b[s] = sum;
    }
}

/// [`prolongate`] by the plain transfers to the finer level (`out`: the finest grid, natural
/// layout, or a finer level's slots): plain multigrid's separable prolongation of the
/// primaries, then the finer slots where the graph's differs.
fn prolongate_top(lv: &mut Work, out: &mut [f32]) {
    let Some(top) = lv.top.as_mut() else {
        return;
    };
    let p = &top.plan;
    let (cw, ch, fw) = (p.w, p.h, p.fine_w);
    let (hw, plane) = (lv.hw, lv.plane);
    let (red, black) = (&lv.e[..plane], &lv.e[plane..2 * plane]);
    interleave_planes(red, black, (cw, hw), &mut top.natural, 0.0);
    let taps = (&p.prolong_x, &p.prolong_y);
    match top.finer_planes {
        None => prolongate_natural(&top.natural, (cw, ch), taps, &mut top.transfer, out),
        Some((fhw, fplane)) => {
            let natural = &mut top.finer_natural;
            prolongate_natural(&top.natural, (cw, ch), taps, &mut top.transfer, natural);
            // The planes' pad slots (past an odd width's last cell) are left as they were:
            // the finer residual there, which is its right-hand side, 0 (a pad slot is never
            // restricted into, and couples nothing), as the node by node taps would give.
            let (red, rest) = out.split_at_mut(fplane);
            deinterleave_planes(natural, (fw, fhw), red, &mut rest[..fplane]);
        }
    }
    // Zero taps give exactly 0.
    for &a in &top.prolong_zero {
        out[a as usize] = 0.0;
    }
    let e = &lv.e;
    for &a in &top.prolong_fix {
        let a = a as usize;
        let (n, w) = (lv.tap_node[a], lv.tap_weight[a]);
        out[a] = w[0] * e[n[0] as usize]
            + w[1] * e[n[1] as usize]
            + w[2] * e[n[2] as usize]
            + w[3] * e[n[3] as usize];
    }
}

#[cfg(test)]
mod tests;
