//! Multigrid (pressure.wgsl): red-black Gauss-Seidel sweeps and V(2,2)-cycles over the levels
//! of `sim::multigrid::plan`, each level's bind groups built once. Level 0 is the finest: its
//! unknowns and right-hand side are the projection's (one set of bind groups per projection
//! target). Mirrors cpu/pressure.rs (`rb_sor`, `v_cycle`, `residual`, `restrict`,
//! `prolongate`). Around obstacles the finest level relaxes and takes residuals through its
//! couplings, and the coarse levels are the node graphs of [`Nodes`] (cpu pressure/faces.rs,
//! pressure/nodes.rs and `v_cycle_nodes`); those bind groups are built once per mask
//! ([`Multigrid::set_faces`]).

use super::nodes::Nodes;
use super::obstacles::LevelFaces;
use super::pressure::{LevelUniform, binding::*};
use crate::gpu::kernel::{
    Binding, Dispatcher, Kernel, groups, groups2, storage, storage_init, uniform,
};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes, bytes_f32};
use crate::sim::multigrid::{self, COARSEST_OMEGA, LevelPlan};
use crate::sim::obstacles::nodes::Hierarchy;

/// One coarse level's transfers from and to the next finer level.
struct Transfers {
    restrict_x: wgpu::BindGroup,
    restrict_y: wgpu::BindGroup,
    prolongate_x: wgpu::BindGroup,
    /// Adds this level's correction into the finer level's unknowns.
    prolongate_y_add: wgpu::BindGroup,
    /// The correction = 0 before this level's solve.
    clear: wgpu::BindGroup,
}

/// One level's bind groups.
struct Level {
    w: usize,
    h: usize,
    /// Smoothing colour passes `[colour]`.
    rb_sor: [wgpu::BindGroup; 2],
    /// `r = b - A e`.
    residual: wgpu::BindGroup,
    /// Coarse levels only.
    transfers: Option<Transfers>,
    /// The direct solve, on the last level.
    coarsest: Option<wgpu::BindGroup>,
    _buffers: Vec<wgpu::Buffer>,
}

/// The finest level's buffers that its bind groups (plain and around obstacles) bind besides
/// the projection's: the residual and the colour, residual and coarsest uniforms.
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
            relax_u: colour_uniforms(device, w, h, 1.0, 1.0),
            res_u: uniform(
                device,
                "Uniform: residual",
                &LevelUniform {
                    omega: 0.0,
                    ..LevelUniform::finest(s)
                },
            ),
            co_u: coarsest_uniform(device, w, h, 1.0, 1.0, true),
        }
    }
}

/// The finest level's bind groups around obstacles (as [`Level`]'s, with the kernels with
/// couplings; the coarse levels are then [`Nodes`]).
struct FacesLevel {
    rb_sor: [wgpu::BindGroup; 2],
    residual: wgpu::BindGroup,
    coarsest: Option<wgpu::BindGroup>,
}

/// The levels and their kernels.
pub(in crate::sim::grid::gpu) struct Multigrid {
    rb_sor: Kernel,
    residual: Kernel,
    restrict_x: Kernel,
    restrict_y: Kernel,
    prolongate_x: Kernel,
    prolongate_y_add: Kernel,
    clear: Kernel,
    rb_sor_coarsest: Kernel,
    rb_sor_faces: Kernel,
    residual_faces: Kernel,
    rb_sor_coarsest_faces: Kernel,
    levels: Vec<Level>,
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
        let mut mg = Self {
            rb_sor: k("rb_sor"),
            residual: k("residual"),
            restrict_x: k("restrict_x"),
            restrict_y: k("restrict_y"),
            prolongate_x: k("prolongate_x"),
            prolongate_y_add: k("prolongate_y_add"),
            clear: k("clear"),
            rb_sor_coarsest: k("rb_sor_coarsest"),
            rb_sor_faces: k("rb_sor_faces"),
            residual_faces: k("residual_faces"),
            rb_sor_coarsest_faces: k("rb_sor_coarsest_faces"),
            levels: Vec::new(),
            finest: Finest::new(device, s),
            faces: None,
            nodes: Nodes::new(),
        };
        mg.levels = mg.build_levels(device, b, s, plans);
        mg
    }

    fn build_levels(
        &self,
        device: &wgpu::Device,
        b: &Buffers,
        s: &Sizes,
        plans: &[LevelPlan],
    ) -> Vec<Level> {
        let (w, h) = (s.w, s.h);
        let mut levels = Vec::new();
        // Level 0: the projection's own unknowns and right-hand side.
        let Finest {
            r: r0,
            relax_u: relax_u0,
            res_u: res_u0,
            co_u: co_u0,
        } = &self.finest;
        let (q, b0) = (&b.q, &b.b);
        levels.push(Level {
            w,
            h,
            rb_sor: [0, 1].map(|c| {
                self.rb_sor
                    .bind(device, &[(L, &relax_u0[c]), (Q, q), (B, b0)])
            }),
            residual: self
                .residual
                .bind(device, &[(L, res_u0), (Q_IN, q), (B, b0), (R, r0)]),
            transfers: None,
            coarsest: plans.is_empty().then(|| {
                self.rb_sor_coarsest
                    .bind(device, &[(L, co_u0), (Q, q), (B, b0)])
            }),
            _buffers: Vec::new(),
        });
        // Buffers of the previous level: (unknowns, residual).
        let mut fine_e = q.clone();
        let mut fine_r = r0.clone();
        for (n, plan) in plans.iter().enumerate() {
            let (lw, lh) = (plan.w, plan.h);
            let (fw, fh) = (plan.fine_w, plan.fine_h);
            let cells = bytes_f32(lw * lh);
            let e = storage(device, "Buffer: mg correction", cells);
            let bl = storage(device, "Buffer: mg rhs", cells);
            let r = storage(device, "Buffer: mg residual", cells);
            let transfer = storage(
                device,
                "Buffer: mg transfer",
                bytes_f32((fh * lw).max(lh * fw)),
            );
            let rx_first = storage_init(device, "Buffer: restrict x", &plan.restrict_x.first);
            let rx_frac = storage_init(device, "Buffer: restrict x", &frac4(&plan.restrict_x.frac));
            let ry_first = storage_init(device, "Buffer: restrict y", &plan.restrict_y.first);
            let ry_frac = storage_init(device, "Buffer: restrict y", &frac4(&plan.restrict_y.frac));
            let px = storage_init(device, "Buffer: prolong x", &ptaps(&plan.prolong_x.0));
            let py = storage_init(device, "Buffer: prolong y", &ptaps(&plan.prolong_y.0));
            let lu = |w: usize, h: usize, cw: usize| {
                uniform(
                    device,
                    "Uniform: mg transfer",
                    &LevelUniform {
                        w: w as u32,
                        h: h as u32,
                        cw: cw as u32,
                        cx: plan.op.cx,
                        cy: plan.op.cy,
                        ..Default::default()
                    },
                )
            };
            let relax_u = colour_uniforms(device, lw, lh, plan.op.cx, plan.op.cy);
            let res_u = lu(lw, lh, 0);
            let rx_u = lu(fw, fh, lw);
            let ry_u = lu(lw, lh, fh);
            let px_u = lu(fw, lh, lw);
            let py_u = lu(fw, fh, 0);
            let last = n + 1 == plans.len();
            let co_u = coarsest_uniform(device, lw, lh, plan.op.cx, plan.op.cy, false);
            let transfers = Transfers {
                restrict_x: self.restrict_x.bind(
                    device,
                    &[
                        (L, &rx_u),
                        (Q_IN, &fine_r),
                        (Q, &transfer),
                        (RTAP_FIRST, &rx_first),
                        (RTAP_FRAC, &rx_frac),
                    ],
                ),
                restrict_y: self.restrict_y.bind(
                    device,
                    &[
                        (L, &ry_u),
                        (Q_IN, &transfer),
                        (Q, &bl),
                        (RTAP_FIRST, &ry_first),
                        (RTAP_FRAC, &ry_frac),
                    ],
                ),
                prolongate_x: self.prolongate_x.bind(
                    device,
                    &[(L, &px_u), (Q_IN, &e), (Q, &transfer), (PTAP, &px)],
                ),
                prolongate_y_add: self.prolongate_y_add.bind(
                    device,
                    &[(L, &py_u), (Q_IN, &transfer), (Q, &fine_e), (PTAP, &py)],
                ),
                clear: self.clear.bind(device, &[(L, &res_u), (Q, &e)]),
            };
            levels.push(Level {
                w: lw,
                h: lh,
                rb_sor: [0, 1].map(|c| {
                    self.rb_sor
                        .bind(device, &[(L, &relax_u[c]), (Q, &e), (B, &bl)])
                }),
                residual: self
                    .residual
                    .bind(device, &[(L, &res_u), (Q_IN, &e), (B, &bl), (R, &r)]),
                transfers: Some(transfers),
                coarsest: last.then(|| {
                    self.rb_sor_coarsest
                        .bind(device, &[(L, &co_u), (Q, &e), (B, &bl)])
                }),
                _buffers: vec![transfer, rx_first, rx_frac, ry_first, ry_frac, px, py],
            });
            fine_e = e;
            fine_r = r;
        }
        levels
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
            Some(region) if self.levels.len() == 1 => {
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
        self.encode_smooth(d, 0, sweeps);
    }

    /// `cycles` V(2,2)-cycles on the projection's pressure.
    pub fn encode_v_cycles(&self, d: &mut Dispatcher, cycles: u32) {
        for _ in 0..cycles {
            self.encode_v_cycle(d, 0);
        }
    }

    /// `sweeps` red-black sweeps on level `l`.
    fn encode_smooth(&self, d: &mut Dispatcher, l: usize, sweeps: u32) {
        let lv = &self.levels[l];
        let faces = if l == 0 { self.faces.as_ref() } else { None };
        let (kernel, colours) = match faces {
            Some(f) => (&self.rb_sor_faces, &f.rb_sor),
            None => (&self.rb_sor, &lv.rb_sor),
        };
        for _ in 0..sweeps {
            for colour in colours {
                d.go(kernel, colour, (groups(lv.w.div_ceil(2)), groups(lv.h)));
            }
        }
    }

    /// One V(2,2)-cycle from level `l` (cpu pressure::v_cycle).
    fn encode_v_cycle(&self, d: &mut Dispatcher, l: usize) {
        let lv = &self.levels[l];
        let faces = if l == 0 { self.faces.as_ref() } else { None };
        if l + 1 == self.levels.len() {
            let (kernel, coarsest) = match faces {
                Some(f) => (&self.rb_sor_coarsest_faces, &f.coarsest),
                None => (&self.rb_sor_coarsest, &lv.coarsest),
            };
            if let Some(c) = coarsest {
                d.go(kernel, c, (1, 1));
            }
            return;
        }
        self.encode_smooth(d, l, multigrid::MG_PRE_SWEEPS);
        if let Some(f) = faces {
            // Around obstacles (level 0 only): the coarse levels are node graphs.
            d.go(&self.residual_faces, &f.residual, groups2(lv.w, lv.h));
            self.nodes.encode(d, multigrid::MG_NODE_SWEEPS);
            self.encode_smooth(d, l, multigrid::MG_POST_SWEEPS);
            return;
        }
        d.go(&self.residual, &lv.residual, groups2(lv.w, lv.h));
        let next = &self.levels[l + 1];
        let tr = next
            .transfers
            .as_ref()
            .expect("coarse levels have transfers");
        d.go(&self.restrict_x, &tr.restrict_x, groups2(next.w, lv.h));
        d.go(&self.restrict_y, &tr.restrict_y, groups2(next.w, next.h));
        d.go(&self.clear, &tr.clear, groups2(next.w, next.h));
        self.encode_v_cycle(d, l + 1);
        d.go(&self.prolongate_x, &tr.prolongate_x, groups2(lv.w, next.h));
        d.go(
            &self.prolongate_y_add,
            &tr.prolongate_y_add,
            groups2(lv.w, lv.h),
        );
        self.encode_smooth(d, l, multigrid::MG_POST_SWEEPS);
    }
}

/// A level's uniforms for the two colours of a red-black sweep.
fn colour_uniforms(
    device: &wgpu::Device,
    w: usize,
    h: usize,
    cx: f32,
    cy: f32,
) -> [wgpu::Buffer; 2] {
    [0, 1].map(|colour| {
        uniform(
            device,
            "Uniform: relax",
            &LevelUniform {
                w: w as u32,
                h: h as u32,
                colour,
                cx,
                cy,
                omega: 1.0,
                ..Default::default()
            },
        )
    })
}

/// A level's uniform for its coarsest solve (`warm`: from the unknowns' current values).
fn coarsest_uniform(
    device: &wgpu::Device,
    w: usize,
    h: usize,
    cx: f32,
    cy: f32,
    warm: bool,
) -> wgpu::Buffer {
    uniform(
        device,
        "Uniform: coarsest",
        &LevelUniform {
            w: w as u32,
            h: h as u32,
            colour: 0,
            cw: u32::from(warm),
            cx,
            cy,
            omega: COARSEST_OMEGA,
            sweeps: multigrid::coarsest_sweeps(w, h),
        },
    )
}

fn frac4(frac: &[[f32; 3]]) -> Vec<[f32; 4]> {
    frac.iter().map(|f| [f[0], f[1], f[2], 0.0]).collect()
}

/// The prolongation taps of the finer cells: the two coarse cells and the second's weight.
fn ptaps(taps: &[(u32, u32, f32)]) -> Vec<[u32; 4]> {
    taps.iter()
        .map(|&(a, b, w)| [a, b, w.to_bits(), 0])
        .collect()
}
