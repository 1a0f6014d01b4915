//! Multigrid (pressure.wgsl): red-black Gauss-Seidel sweeps and V(2,2)-cycles over the levels
//! of `sim::multigrid::plan`, each level's bind groups built once. Level 0 is the finest: its
//! unknowns and right-hand side are the projection's. Mirrors cpu/pressure.rs (`rb_sor`,
//! `v_cycle`, `residual`, `restrict`, `prolongate`).
//!
//! In open flow a V-cycle is few dispatches: on each level two sweeps in one (`rb_smooth`, tiles
//! relaxed in workgroup memory, out of place between the level's unknowns and a scratch), the
//! residual and both restrictions in one (`residual_restrict`), both prolongations in one
//! (`prolongate_add`), and the small levels' whole V-cycle in one workgroup (`v_cycle_tail`):
//! at 512² 17 dispatches where one pass per colour, per axis and per level took 99. Around
//! obstacles the finest level relaxes and takes residuals through its couplings, and the coarse
//! levels are the node graphs of [`Nodes`] (cpu pressure/faces.rs, pressure/nodes.rs and
//! `v_cycle_nodes`); those bind groups are built once per mask ([`Multigrid::set_faces`]).

use super::nodes::Nodes;
use super::obstacles::LevelFaces;
use super::pressure::{LevelUniform, PingPong, binding::*};
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, storage, storage_init, uniform};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes, bytes_f32};
use crate::sim::multigrid::{self, COARSEST_OMEGA, LevelPlan};
use crate::sim::obstacles::nodes::Hierarchy;
use bytemuck::{Pod, Zeroable};

/// The output tile of a `rb_smooth` workgroup (`ST` in pressure.wgsl).
pub(in crate::sim) const SMOOTH_TILE: usize = 32;
/// Most red-black sweeps one `rb_smooth` dispatch does (`SMOOTH_MAX`).
pub(in crate::sim) const SMOOTH_MAX_SWEEPS: u32 = 2;
/// Most cells the levels of `v_cycle_tail` hold in all (`TAIL_MAX`): with their unknowns and
/// right-hand sides in workgroup memory that is 14 KiB, under the 16 KiB every adapter has.
pub(in crate::sim) const TAIL_MAX_CELLS: usize = 1792;

/// `TailLevel` in pressure.wgsl: one level of the tail's V-cycle.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default, Debug, PartialEq)]
pub(in crate::sim) struct TailLevel {
    pub w: u32,
    pub h: u32,
    /// This level's first cell in the tail's workgroup memory.
    pub off: u32,
    /// Its restriction taps (from the finer level) and prolongation taps (to it) in the tail's
    /// tap buffers.
    pub rt: u32,
    pub pt: u32,
    pub cx: f32,
    pub cy: f32,
    /// Sweeps before and after the coarse correction; on the coarsest level its solve's sweeps
    /// and over-relaxation.
    pub pre: u32,
    pub post: u32,
    pub omega: f32,
    pub _pad: [u32; 2],
}

// The tail counts its levels by the table's length (`arrayLength`), which storage buffers'
// rounding up to 16 bytes leaves exact only for entries of a multiple of 16 bytes.
const _: () = assert!(size_of::<TailLevel>().is_multiple_of(16));

/// The first level of the tail: the first coarse level from which all levels hold at most
/// [`TAIL_MAX_CELLS`] cells (levels are 0, the finest, then one per plan). None without
/// coarse levels.
pub(in crate::sim) fn tail_start(plans: &[LevelPlan]) -> Option<usize> {
    let mut cells = 0;
    let mut start = None;
    for (n, plan) in plans.iter().enumerate().rev() {
        cells += plan.w * plan.h;
        if cells > TAIL_MAX_CELLS {
            break;
        }
        start = Some(n + 1);
    }
    start
}

/// Transfer taps as the kernels read them: restriction (each coarse cell's first finer cell
/// and the fractions of it and the next two), x then y; prolongation (each finer cell's two
/// coarse cells and the second's weight), x then y.
#[derive(Default)]
struct Taps {
    first: Vec<u32>,
    frac: Vec<[f32; 4]>,
    prolong: Vec<[u32; 4]>,
}

impl Taps {
    /// A plan's taps, to and from its finer level.
    fn of(plan: &LevelPlan) -> Self {
        let mut taps = Self::default();
        taps.push(plan);
        taps
    }

    fn push(&mut self, plan: &LevelPlan) {
        let (x, y) = (&plan.restrict_x, &plan.restrict_y);
        self.first.extend(x.first.iter().chain(&y.first));
        let frac = x.frac.iter().chain(&y.frac);
        self.frac.extend(frac.map(|f| [f[0], f[1], f[2], 0.0]));
        let prolong = plan.prolong_x.0.iter().chain(&plan.prolong_y.0);
        self.prolong
            .extend(prolong.map(|&(a, b, w)| [a, b, w.to_bits(), 0]));
    }

    /// Their buffers: restriction's first cells and fractions, prolongation's.
    fn buffers(&self, device: &wgpu::Device) -> [wgpu::Buffer; 3] {
        [
            storage_init(device, "Buffer: restrict taps", &self.first),
            storage_init(device, "Buffer: restrict taps", &self.frac),
            storage_init(device, "Buffer: prolong taps", &self.prolong),
        ]
    }
}

/// The tail's level table and taps: `plans` are the tail's levels (its first is the plan of
/// its first level).
fn tail_table(plans: &[LevelPlan]) -> (Vec<TailLevel>, Taps) {
    let mut taps = Taps::default();
    let mut off = 0;
    let last = plans.len() - 1;
    let table = plans
        .iter()
        .enumerate()
        .map(|(n, plan)| {
            let coarsest = n == last;
            let level = TailLevel {
                w: plan.w as u32,
                h: plan.h as u32,
                off: off as u32,
                rt: taps.first.len() as u32,
                pt: taps.prolong.len() as u32,
                cx: plan.op.cx,
                cy: plan.op.cy,
                pre: if coarsest {
                    multigrid::coarsest_sweeps(plan.w, plan.h)
                } else {
                    multigrid::MG_PRE_SWEEPS
                },
                post: multigrid::MG_POST_SWEEPS,
                omega: if coarsest { COARSEST_OMEGA } else { 1.0 },
                _pad: [0; 2],
            };
            off += plan.w * plan.h;
            // The first level's transfers are the finer plain level's passes.
            if n > 0 {
                taps.push(plan);
            }
            level
        })
        .collect();
    (table, taps)
}

/// Which of a plain level's two buffers holds its unknowns.
const E: usize = 0;
const S: usize = 1;

/// A level above the tail (or the only one): its unknowns move between `e` and a scratch
/// (`s`), two sweeps a dispatch.
struct Level {
    w: usize,
    h: usize,
    /// Two sweeps a dispatch between `e` and `s`.
    smooth: PingPong,
    /// `[from]`: the residual restricted into the next level, its correction cleared.
    restrict: Option<[wgpu::BindGroup; 2]>,
    /// `[into]`: the next level's correction added.
    prolong: Option<[wgpu::BindGroup; 2]>,
    _buffers: Vec<wgpu::Buffer>,
}

/// The finest level's buffers that its bind groups around obstacles bind besides the
/// projection's (the residual and the colour, residual and coarsest uniforms).
struct Finest {
    r: wgpu::Buffer,
    relax_u: [wgpu::Buffer; 2],
    res_u: wgpu::Buffer,
    co_u: wgpu::Buffer,
}

impl Finest {
    fn new(device: &wgpu::Device, s: &Sizes) -> Self {
        let (w, h) = (s.w, s.h);
        Self {
            r: storage(device, "Buffer: residual", bytes_f32(w * h)),
            relax_u: colour_uniforms(device, w, h),
            res_u: uniform(
                device,
                "Uniform: residual",
                &LevelUniform {
                    omega: 0.0,
                    ..LevelUniform::finest(s)
                },
            ),
            co_u: coarsest_uniform(device, w, h),
        }
    }
}

/// The finest level's bind groups around obstacles (the kernels with couplings, in place;
/// the coarse levels are then [`Nodes`]).
struct FacesLevel {
    rb_sor: [wgpu::BindGroup; 2],
    residual: wgpu::BindGroup,
    coarsest: Option<wgpu::BindGroup>,
}

/// The small levels' V-cycle in one dispatch.
struct Tail {
    /// Its first level and that level's size.
    level: usize,
    size: (usize, usize),
    bind: wgpu::BindGroup,
    _buffers: Vec<wgpu::Buffer>,
}

/// The levels and their kernels.
pub(in crate::sim::grid::gpu) struct Multigrid {
    smooth: Kernel,
    residual_restrict: Kernel,
    prolongate_add: Kernel,
    copy: Kernel,
    v_cycle_tail: Kernel,
    rb_sor_coarsest: Kernel,
    rb_sor_faces: Kernel,
    residual_faces: Kernel,
    rb_sor_coarsest_faces: Kernel,
    /// The levels above the tail (all of them when there is no tail).
    levels: Vec<Level>,
    tail: Option<Tail>,
    /// Without coarse levels: the finest level's solve (from its warm start).
    coarsest: Option<wgpu::BindGroup>,
    finest: Finest,
    /// Around obstacles: the finest level's bind groups.
    faces: Option<FacesLevel>,
    /// The coarse levels around obstacles.
    nodes: Nodes,
}

impl Multigrid {
    pub fn new(
        device: &wgpu::Device,
        m: &wgpu::ShaderModule,
        b: &Buffers,
        s: &Sizes,
        plans: &[LevelPlan],
    ) -> Self {
        let k = |entry| Kernel::new(device, m, entry);
        // These write each cell of their workgroup memory before reading it.
        let unzeroed = |entry| Kernel::without_zeroed_workgroup_memory(device, m, entry);
        let mut mg = Self {
            smooth: unzeroed("rb_smooth"),
            residual_restrict: k("residual_restrict"),
            prolongate_add: k("prolongate_add"),
            copy: k("jacobi_copy"),
            v_cycle_tail: unzeroed("v_cycle_tail"),
            rb_sor_coarsest: k("rb_sor_coarsest"),
            rb_sor_faces: k("rb_sor_faces"),
            residual_faces: k("residual_faces"),
            rb_sor_coarsest_faces: k("rb_sor_coarsest_faces"),
            levels: Vec::new(),
            tail: None,
            coarsest: None,
            finest: Finest::new(device, s),
            faces: None,
            nodes: Nodes::new(),
        };
        mg.build_levels(device, b, s, plans);
        mg
    }

    /// The levels above the tail (each with its transfers to the next) and the tail.
    fn build_levels(&mut self, device: &wgpu::Device, b: &Buffers, s: &Sizes, plans: &[LevelPlan]) {
        let tail = tail_start(plans);
        // Level n's size and operator, unknowns, scratch and right-hand side.
        struct Spec {
            w: usize,
            h: usize,
            cx: f32,
            cy: f32,
            e: wgpu::Buffer,
            s: wgpu::Buffer,
            b: wgpu::Buffer,
        }
        let coarse = |plan: &LevelPlan, scratch: bool| {
            let cells = bytes_f32(plan.w * plan.h);
            Spec {
                w: plan.w,
                h: plan.h,
                cx: plan.op.cx,
                cy: plan.op.cy,
                e: storage(device, "Buffer: mg correction", cells),
                // The tail's first level needs none: it is relaxed in workgroup memory.
                s: storage(
                    device,
                    "Buffer: mg scratch",
                    if scratch { cells } else { 4 },
                ),
                b: storage(device, "Buffer: mg rhs", cells),
            }
        };
        let plain_levels = tail.unwrap_or(1);
        let mut specs = vec![Spec {
            w: s.w,
            h: s.h,
            cx: 1.0,
            cy: 1.0,
            e: b.q.clone(),
            s: b.q_scratch.clone(),
            b: b.b.clone(),
        }];
        specs.extend(
            plans
                .iter()
                .take(plain_levels)
                .enumerate()
                .map(|(n, plan)| coarse(plan, n + 1 < plain_levels)),
        );
        for n in 0..plain_levels {
            let (lv, next) = (&specs[n], specs.get(n + 1));
            let level_u = |cw: usize, ch: usize| {
                let u = LevelUniform {
                    w: lv.w as u32,
                    h: lv.h as u32,
                    cw: cw as u32,
                    ch: ch as u32,
                    cx: lv.cx,
                    cy: lv.cy,
                    omega: 1.0,
                    ..Default::default()
                };
                uniform(device, "Uniform: mg level", &u)
            };
            let sides = [&lv.e, &lv.s];
            let level = LevelUniform {
                w: lv.w as u32,
                h: lv.h as u32,
                cx: lv.cx,
                cy: lv.cy,
                omega: 1.0,
                ..Default::default()
            };
            let kernels = (&self.smooth, &self.copy);
            let smooth = PingPong::new(device, kernels, level, sides, &lv.b, SMOOTH_MAX_SWEEPS);
            let mut buffers = Vec::new();
            let (mut restrict, mut prolong) = (None, None);
            if let Some(next) = next {
                let [first, frac, ptap] = Taps::of(&plans[n]).buffers(device);
                let restrict_u = level_u(next.w, next.h);
                restrict = Some([E, S].map(|from| {
                    let entries = [
                        (L, &restrict_u),
                        (Q_IN, sides[from]),
                        (B, &lv.b),
                        (R, &next.b),
                        (Q, &next.e),
                        (RTAP_FIRST, &first),
                        (RTAP_FRAC, &frac),
                    ];
                    self.residual_restrict.bind(device, &entries)
                }));
                let prolong_u = level_u(next.w, 0);
                prolong = Some([E, S].map(|into| {
                    let entries = [
                        (L, &prolong_u),
                        (Q_IN, &next.e),
                        (Q, sides[into]),
                        (PTAP, &ptap),
                    ];
                    self.prolongate_add.bind(device, &entries)
                }));
                buffers.extend([first, frac, ptap, restrict_u, prolong_u]);
            }
            buffers.extend([lv.e.clone(), lv.s.clone(), lv.b.clone()]);
            self.levels.push(Level {
                w: lv.w,
                h: lv.h,
                smooth,
                restrict,
                prolong,
                _buffers: buffers,
            });
        }
        self.tail = tail.map(|start| {
            let top = &specs[start];
            let (table, taps) = tail_table(&plans[start - 1..]);
            let table = storage_init(device, "Buffer: mg tail levels", &table);
            let [first, frac, ptap] = taps.buffers(device);
            let entries = [
                (TAIL, &table),
                (B, &top.b),
                (Q, &top.e),
                (RTAP_FIRST, &first),
                (RTAP_FRAC, &frac),
                (PTAP, &ptap),
            ];
            let bind = self.v_cycle_tail.bind(device, &entries);
            Tail {
                level: start,
                size: (top.w, top.h),
                bind,
                _buffers: vec![table, first, frac, ptap, top.e.clone(), top.b.clone()],
            }
        });
        if plans.is_empty() {
            let f = &self.finest;
            let entries = [(L, &f.co_u), (Q, &b.q), (B, &b.b)];
            self.coarsest = Some(self.rb_sor_coarsest.bind(device, &entries));
        }
    }

    /// Solve around obstacles: the finest level's couplings `finest` and the coarse levels
    /// `nodes` (`None`: the plain kernels); `buf`: the projection's buffers.
    pub fn set_faces(
        &mut self,
        device: &wgpu::Device,
        buf: &Buffers,
        finest: Option<&LevelFaces>,
        nodes: Option<&Hierarchy>,
    ) {
        let (q, b) = (&buf.q, &buf.b);
        self.faces = finest.map(|f| self.faces_level(device, q, b, f));
        let nodes = nodes.filter(|_| finest.is_some());
        self.nodes.set(device, nodes, &self.finest.r, q);
    }

    /// The finest level's bind groups around obstacles, with its couplings `f` (`q`: the
    /// unknowns, `b` the right-hand side).
    fn faces_level(
        &self,
        device: &wgpu::Device,
        q: &wgpu::Buffer,
        b: &wgpu::Buffer,
        f: &LevelFaces,
    ) -> FacesLevel {
        let lv = &self.finest;
        // The residual reads only the couplings; the others the inverse diagonal too.
        let all = [(FACE_X, &f.x), (FACE_Y, &f.y), (INV_DIAG, &f.inv)];
        let bind_with = |k: &Kernel, c: &[(Binding, &wgpu::Buffer)], more: &[_]| {
            let entries: Vec<_> = more.iter().chain(c).copied().collect();
            k.bind(device, &entries)
        };
        let bind = |k: &Kernel, more: &[_]| bind_with(k, &all, more);
        let rb_sor =
            [0, 1].map(|c| bind(&self.rb_sor_faces, &[(L, &lv.relax_u[c]), (Q, q), (B, b)]));
        let entries = [(L, &lv.res_u), (Q_IN, q), (B, b), (R, &lv.r)];
        let residual = bind_with(&self.residual_faces, &all[..2], &entries);
        let coarsest = match &f.region {
            Some(region) if self.coarsest.is_some() => {
                let entries = [(L, &lv.co_u), (Q, q), (B, b), (REGION, region)];
                Some(bind(&self.rb_sor_coarsest_faces, &entries))
            }
            _ => None,
        };
        FacesLevel {
            rb_sor,
            residual,
            coarsest,
        }
    }

    /// `sweeps` red-black Gauss-Seidel sweeps on the projection's pressure (cpu `rb_sor`, or
    /// `rb_sor_faces` around obstacles).
    pub fn encode_rb_sor(&self, d: &mut Dispatcher, sweeps: u32) {
        match &self.faces {
            Some(f) => self.encode_smooth_faces(d, f, sweeps),
            None => self.levels[0]
                .smooth
                .encode_home(d, (&self.smooth, &self.copy), E, sweeps),
        }
    }

    /// `cycles` V(2,2)-cycles on the projection's pressure.
    pub fn encode_v_cycles(&self, d: &mut Dispatcher, cycles: u32) {
        for _ in 0..cycles {
            match &self.faces {
                Some(f) => self.encode_v_cycle_faces(d, f),
                None => self.encode_v_cycle(d, 0),
            }
        }
    }

    /// `sweeps` red-black sweeps of the projection's pressure around obstacles, in place, one
    /// dispatch a colour.
    fn encode_smooth_faces(&self, d: &mut Dispatcher, f: &FacesLevel, sweeps: u32) {
        let (w, h) = (self.finest_size().0, self.finest_size().1);
        for _ in 0..sweeps {
            for colour in &f.rb_sor {
                d.go(&self.rb_sor_faces, colour, groups2(w.div_ceil(2), h));
            }
        }
    }

    fn finest_size(&self) -> (usize, usize) {
        (self.levels[0].w, self.levels[0].h)
    }

    /// One V(2,2)-cycle from plain level `l` (cpu pressure::v_cycle): its unknowns start and
    /// end in its buffer `e`.
    fn encode_v_cycle(&self, d: &mut Dispatcher, l: usize) {
        if let Some(c) = &self.coarsest {
            d.go(&self.rb_sor_coarsest, c, (1, 1));
            return;
        }
        if let Some(tail) = self.tail.as_ref().filter(|t| t.level == l) {
            d.go(&self.v_cycle_tail, &tail.bind, (1, 1));
            return;
        }
        let lv = &self.levels[l];
        let next = self
            .levels
            .get(l + 1)
            .map_or_else(|| self.tail_size(), |n| (n.w, n.h));
        let (restrict, prolong) = match (&lv.restrict, &lv.prolong) {
            (Some(r), Some(p)) => (r, p),
            _ => unreachable!("levels above the coarsest have transfers"),
        };
        let side = lv
            .smooth
            .encode(d, &self.smooth, E, multigrid::MG_PRE_SWEEPS);
        d.go(
            &self.residual_restrict,
            &restrict[side],
            groups2(next.0, next.1),
        );
        self.encode_v_cycle(d, l + 1);
        d.go(&self.prolongate_add, &prolong[side], groups2(lv.w, lv.h));
        let kernels = (&self.smooth, &self.copy);
        lv.smooth
            .encode_home(d, kernels, side, multigrid::MG_POST_SWEEPS);
    }

    /// The tail's first level's size.
    fn tail_size(&self) -> (usize, usize) {
        self.tail.as_ref().map_or((0, 0), |t| t.size)
    }

    /// One V-cycle around obstacles (cpu pressure::v_cycle_nodes): the finest level with its
    /// couplings, in place, and the coarse levels' node graphs.
    fn encode_v_cycle_faces(&self, d: &mut Dispatcher, f: &FacesLevel) {
        if self.coarsest.is_some() {
            if let Some(c) = &f.coarsest {
                d.go(&self.rb_sor_coarsest_faces, c, (1, 1));
            }
            return;
        }
        let (w, h) = self.finest_size();
        self.encode_smooth_faces(d, f, multigrid::MG_PRE_SWEEPS);
        d.go(&self.residual_faces, &f.residual, groups2(w, h));
        self.nodes.encode(d, multigrid::MG_NODE_SWEEPS);
        self.encode_smooth_faces(d, f, multigrid::MG_POST_SWEEPS);
    }
}

/// The finest level's uniforms for the two colours of a red-black sweep (around obstacles).
fn colour_uniforms(device: &wgpu::Device, w: usize, h: usize) -> [wgpu::Buffer; 2] {
    [0, 1].map(|colour| {
        uniform(
            device,
            "Uniform: relax",
            &LevelUniform {
                w: w as u32,
                h: h as u32,
                colour,
                cx: 1.0,
                cy: 1.0,
                omega: 1.0,
                ..Default::default()
            },
        )
    })
}

/// The finest level's uniform for its solve without coarse levels (from its warm start).
fn coarsest_uniform(device: &wgpu::Device, w: usize, h: usize) -> wgpu::Buffer {
    uniform(
        device,
        "Uniform: coarsest",
        &LevelUniform {
            w: w as u32,
            h: h as u32,
            cw: 1,
            cx: 1.0,
            cy: 1.0,
            omega: COARSEST_OMEGA,
            sweeps: multigrid::coarsest_sweeps(w, h),
            ..Default::default()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::multigrid::plan;

    /// The tail starts at the first level from which the levels fit in workgroup memory, and
    /// at no finer one.
    #[test]
    fn the_tail_starts_where_the_levels_fit() {
        for (w, h, want) in [
            (512, 512, Some(4)),
            (48, 32, Some(1)),
            (130, 77, Some(2)),
            (1920, 1080, Some(6)),
            (7, 4, None),
        ] {
            let plans = plan(w, h);
            let start = tail_start(&plans);
            assert_eq!(start, want, "{w}x{h}");
            let Some(start) = start else {
                assert!(plans.is_empty(), "{w}x{h}: coarse levels but no tail");
                continue;
            };
            let cells =
                |from: usize| -> usize { plans[from - 1..].iter().map(|p| p.w * p.h).sum() };
            assert!(cells(start) <= TAIL_MAX_CELLS, "{w}x{h}");
            if start > 1 {
                assert!(cells(start - 1) > TAIL_MAX_CELLS, "{w}x{h}");
            }
        }
    }

    /// The tail's table: each level's cells follow the last's, and its taps the last's (the
    /// first level's transfers are the plain passes', so it has none in the table).
    #[test]
    fn the_tail_table_lays_the_levels_end_to_end() {
        let plans = plan(130, 77);
        let start = tail_start(&plans).expect("a tail");
        let (table, taps) = tail_table(&plans[start - 1..]);
        assert_eq!(table.len(), plans.len() - start + 1);
        let (mut off, mut rt, mut pt) = (0, 0, 0);
        for (n, (level, p)) in table.iter().zip(&plans[start - 1..]).enumerate() {
            assert_eq!((level.w, level.h), (p.w as u32, p.h as u32));
            assert_eq!(level.off, off);
            assert_eq!((level.rt, level.pt), (rt, pt));
            off += level.w * level.h;
            if n > 0 {
                rt += (p.w + p.h) as u32;
                pt += (p.fine_w + p.fine_h) as u32;
            }
        }
        assert_eq!(
            (taps.first.len(), taps.frac.len()),
            (rt as usize, rt as usize)
        );
        assert_eq!(taps.prolong.len(), pt as usize);
        let last = table.last().unwrap();
        assert_eq!(last.omega, COARSEST_OMEGA);
        assert_eq!(
            last.pre,
            multigrid::coarsest_sweeps(last.w as usize, last.h as usize)
        );
        assert!(table[..table.len() - 1].iter().all(|l| l.omega == 1.0));
    }
}
