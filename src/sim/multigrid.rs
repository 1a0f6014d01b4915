//! The multigrid hierarchy's geometry, shared by the CPU and GPU pressure solves so that both
//! use the same levels, operators and transfer weights (see `cpu::pressure` for the solve).
//!
//! Every level covers the same canvas with `ceil(n / 2)` cells per axis, so on grids whose
//! sizes are not powers of two the coarse cells are slightly wider or taller than twice the
//! fine ones. Each level uses the matching anisotropic 5-point operator (`cx = hy / hx`,
//! `cy = hx / hy`), an area-weighted restriction and bilinear prolongation between the actual
//! cell centres.

/// Over-relaxation of the coarsest multigrid level's solve, which runs to convergence. (For
/// the fine-grid sweeps plain Gauss-Seidel, omega = 1, is used: in the running simulation 20
/// red-black sweeps left RMS divergence 0.86x of before at omega 1 but 2.6x at 1.9, measured at
/// 512², 2026-11. Over-relaxation shrinks smooth error fast but leaves the high-frequency
/// residual that the divergence norm sees.)
pub const COARSEST_OMEGA: f32 = 1.5;
/// Multigrid smoothing sweeps before and after the coarse correction.
pub const MG_PRE_SWEEPS: u32 = 2;
/// Multigrid post-smoothing sweeps.
pub const MG_POST_SWEEPS: u32 = 2;
/// Smoothing sweeps before and after the coarse correction on the coarse levels around
/// obstacles (the node graphs of `sim::obstacles::nodes`; the finest level smooths
/// `MG_PRE_SWEEPS` and `MG_POST_SWEEPS` as without obstacles): `first` on the first coarse
/// level, `deeper` on the levels below it, and then `near` more on the first coarse level's
/// rows near walls alone (`NodeLevel::near_rows`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeSweeps {
    pub first: u32,
    pub deeper: u32,
    pub near: u32,
}

impl NodeSweeps {
    /// The same count on every level, none near walls alone.
    pub const fn uniform(sweeps: u32) -> Self {
        Self {
            first: sweeps,
            deeper: sweeps,
            near: 0,
        }
    }

    /// The sweeps of the level `depth` levels below the first coarse one.
    pub fn at(self, depth: usize) -> u32 {
        if depth == 0 { self.first } else { self.deeper }
    }

    /// The sweeps of that level's rows near walls, after [`Self::at`]'s.
    pub fn near_at(self, depth: usize) -> u32 {
        if depth == 0 { self.near } else { 0 }
    }

    /// The sweeps as seen from the next level down.
    pub fn below(self) -> Self {
        Self::uniform(self.deeper)
    }
}

/// The node levels' sweeps. Two V-cycles on the obstacle tests' rough field (96x54) left, of
/// the divergence before, with 2 sweeps on every level: disc 0.00038, pillars 0.00085, maze
/// 0.00082, ring 0.00071, against 0.00031 without obstacles (the pillars past the 2x);
/// with 8 on the first coarse level 0.00032, 0.00035, 0.00047, 0.00049; and with 2 there plus
/// 6 on its rows near walls (margin 1 row) 0.00034, 0.00036, 0.00047, 0.00054 (2026-11-27;
/// margins of 0, 2 and 3 rows gave 0.00047-0.00077, 0.00040-0.00064 and 0.00034-0.00052).
/// At 512x512 the near rows are 30 of the level's 256 among the pillars, 64 around the disc,
/// 110 around the ring and all of them in the maze, so there the 6 cost about as much as one
/// sweep of the level, where 8 sweeps everywhere were 29 % of a step among pillars. Levels
/// below the first: 2, as in open flow (with 8 above, 2, 1 or 0 there changed none of the
/// digits above, 2026-11-26).
pub const MG_NODE_SWEEPS: NodeSweeps = NodeSweeps {
    first: 2,
    deeper: 2,
    near: 6,
};
/// Coarsening stops when a level is at most this many cells on its short side.
const MG_COARSEST_CELLS: usize = 4;
/// Sweeps of the coarsest level's solve: plenty for a grid at most 4 cells on its short side
/// (also the count of the node graphs' relaxed coarsest level, `obstacles::nodes::Coarsest`,
/// where long channels need more).
pub fn coarsest_sweeps(w: usize, h: usize) -> u32 {
    4 * (w + h) as u32
}

/// The 5-point operator of a level: `A q = sum_n c_n (q_c - q_n)` with `c = cx` for the
/// left/right and `c = cy` for the lower/upper neighbours. The finest level has `cx = cy = 1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Operator {
    /// Coupling to horizontal neighbours (`hy / hx`).
    pub cx: f32,
    /// Coupling to vertical neighbours (`hx / hy`).
    pub cy: f32,
}

impl Operator {
    /// The finest level's isotropic operator.
    pub const UNIT: Self = Self { cx: 1.0, cy: 1.0 };
}

/// Restriction taps along one axis: for each coarse cell, the first fine cell it overlaps and
/// the fraction of that cell and of the next two that lies inside it.
#[derive(Clone, Debug)]
pub struct RestrictTaps {
    /// First finer cell of each coarse cell.
    pub first: Vec<u32>,
    /// Fractions of that cell and the next two inside the coarse cell.
    pub frac: Vec<[f32; 3]>,
}

/// Prolongation taps along one axis: for each fine cell, the two coarse cells around its centre
/// and the weight of the second.
#[derive(Clone, Debug)]
pub struct ProlongTaps(pub Vec<(u32, u32, f32)>);

impl RestrictTaps {
    pub fn new(fine: usize, coarse: usize) -> Self {
        // Fine cell i spans [i, i + 1) in fine units; coarse cell I spans
        // [I * ratio, (I + 1) * ratio) with ratio = fine / coarse (between 1 and 2).
        let ratio = fine as f64 / coarse as f64;
        let (first, frac) = (0..coarse)
            .map(|ci| {
                let (lo, hi) = (ci as f64 * ratio, (ci + 1) as f64 * ratio);
                let first = lo.floor() as usize;
                let frac = std::array::from_fn(|t| {
                    let i = first + t;
                    if i >= fine {
                        return 0.0;
                    }
                    (hi.min((i + 1) as f64) - lo.max(i as f64)).max(0.0) as f32
                });
                (first as u32, frac)
            })
            .unzip();
        Self { first, frac }
    }
}

impl ProlongTaps {
    pub fn new(fine: usize, coarse: usize) -> Self {
        let ratio = coarse as f64 / fine as f64;
        Self(
            (0..fine)
                .map(|i| {
                    let x = ((i as f64 + 0.5) * ratio - 0.5).clamp(0.0, (coarse - 1) as f64);
                    let i0 = x.floor() as usize;
                    (
                        i0 as u32,
                        (i0 + 1).min(coarse - 1) as u32,
                        (x - i0 as f64) as f32,
                    )
                })
                .collect(),
        )
    }
}

/// The geometry of one coarse level and its transfers: shared by the CPU and GPU multigrid so
/// both use the same operators and the same transfer weights.
#[derive(Clone, Debug)]
pub struct LevelPlan {
    /// Size in cells.
    pub w: usize,
    pub h: usize,
    /// The next finer level's size.
    pub fine_w: usize,
    pub fine_h: usize,
    /// This level's operator.
    pub op: Operator,
    /// From the next finer level to this one.
    pub restrict_x: RestrictTaps,
    pub restrict_y: RestrictTaps,
    /// From this level to the next finer one.
    pub prolong_x: ProlongTaps,
    pub prolong_y: ProlongTaps,
}

/// The coarse levels below a `w x h` grid: halve (rounding up) until the short side is at most
/// 4 cells. Every level covers the same canvas, so the cells of a level whose parent had an
/// odd size are slightly wider or taller than two parent cells.
pub fn plan(w: usize, h: usize) -> Vec<LevelPlan> {
    let mut levels = Vec::new();
    let (mut fw, mut fh) = (w, h);
    while fw.min(fh) > MG_COARSEST_CELLS {
        let (cw, ch) = (fw.div_ceil(2), fh.div_ceil(2));
        // Cell sizes in finest-grid cells: the canvas is w wide and h tall.
        let hx = w as f32 / cw as f32;
        let hy = h as f32 / ch as f32;
        levels.push(LevelPlan {
            w: cw,
            h: ch,
            fine_w: fw,
            fine_h: fh,
            op: Operator {
                cx: hy / hx,
                cy: hx / hy,
            },
            restrict_x: RestrictTaps::new(fw, cw),
            restrict_y: RestrictTaps::new(fh, ch),
            prolong_x: ProlongTaps::new(fw, cw),
            prolong_y: ProlongTaps::new(fh, ch),
        });
        (fw, fh) = (cw, ch);
    }
    levels
}
