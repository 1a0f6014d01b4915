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
use crate::sim::gpu::buffers::{Buffers, Sizes, bytes_f32};
use crate::sim::gpu::kernel::{
    Binding, Dispatcher, Kernel, groups, groups2, storage, storage_init, uniform,
};
use crate::sim::multigrid::{self, COARSEST_OMEGA, LevelPlan};
use crate::sim::obstacles::nodes::Hierarchy;

/// One coarse level's transfers from and to the next finer level.
struct Transfers {
    restrict_x: wgpu::BindGroup,
    restrict_y: wgpu::BindGroup,
    prolongate_x: wgpu::BindGroup,
    /// Adds this level's correction into the finer level's unknowns, per finer target.
    prolongate_y_add: Vec<wgpu::BindGroup>,
    /// The correction = 0 before this level's solve.
    clear: wgpu::BindGroup,
}

/// One level's bind groups.
struct Level {
    w: usize,
    h: usize,
    /// Smoothing colour passes `[target or 0][colour]`.
    rb_sor: Vec<[wgpu::BindGroup; 2]>,
    /// `r = b - A e`, per target at level 0.
    residual: Vec<wgpu::BindGroup>,
    /// Coarse levels only.
    transfers: Option<Transfers>,
    /// The direct solve, on the last level (per target when that is level 0).
    coarsest: Vec<wgpu::BindGroup>,
    /// What the bind groups around obstacles need: the unknowns (per target at level 0), the
    /// right-hand side, the residual, the colour, residual and coarsest uniforms.
    e: Vec<wgpu::Buffer>,
    b: wgpu::Buffer,
    r: wgpu::Buffer,
    relax_u: [wgpu::Buffer; 2],
    res_u: wgpu::Buffer,
    co_u: wgpu::Buffer,
    /// With obstacles (the finest level only: the coarse levels are then [`Nodes`]).
    faces: Option<FacesLevel>,
    _buffers: Vec<wgpu::Buffer>,
}

/// One level's bind groups around obstacles (as [`Level`]'s, with the kernels with
/// couplings).
struct FacesLevel {
    rb_sor: Vec<[wgpu::BindGroup; 2]>,
    residual: Vec<wgpu::BindGroup>,
    coarsest: Vec<wgpu::BindGroup>,
}

/// The levels and their kernels.
pub(in crate::sim::gpu) struct Multigrid {
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
            nodes: Nodes::new(device),
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
        let colour_uniforms = |lw: usize, lh: usize, cx: f32, cy: f32| {
            [0, 1].map(|colour| {
                uniform(
                    device,
                    "Uniform: relax",
                    &LevelUniform {
                        w: lw as u32,
                        h: lh as u32,
                        colour,
                        cx,
                        cy,
                        omega: 1.0,
                        ..Default::default()
                    },
                )
            })
        };
        let coarsest_uniform = |lw: usize, lh: usize, cx: f32, cy: f32, warm: bool| {
            uniform(
                device,
                "Uniform: coarsest",
                &LevelUniform {
                    w: lw as u32,
                    h: lh as u32,
                    colour: 0,
                    cw: u32::from(warm),
                    cx,
                    cy,
                    omega: COARSEST_OMEGA,
                    sweeps: multigrid::coarsest_sweeps(lw, lh),
                },
            )
        };
        let mut levels = Vec::new();
        // Level 0: the projection's own unknowns and right-hand side.
        let r0 = storage(device, "Buffer: residual", bytes_f32(w * h));
        let relax_u0 = colour_uniforms(w, h, 1.0, 1.0);
        let res_u0 = uniform(
            device,
            "Uniform: residual",
            &LevelUniform {
                omega: 0.0,
                ..LevelUniform::finest(s)
            },
        );
        let co_u0 = coarsest_uniform(w, h, 1.0, 1.0, true);
        let b0 = &b.b;
        levels.push(Level {
            w,
            h,
            rb_sor: b
                .q
                .iter()
                .map(|q| {
                    [0, 1].map(|c| {
                        self.rb_sor
                            .bind(device, &[(L, &relax_u0[c]), (Q, q), (B, b0)])
                    })
                })
                .collect(),
            residual: b
                .q
                .iter()
                .map(|q| {
                    self.residual
                        .bind(device, &[(L, &res_u0), (Q_IN, q), (B, b0), (R, &r0)])
                })
                .collect(),
            transfers: None,
            coarsest: if plans.is_empty() {
                b.q.iter()
                    .map(|q| {
                        self.rb_sor_coarsest
                            .bind(device, &[(L, &co_u0), (Q, q), (B, b0)])
                    })
                    .collect()
            } else {
                Vec::new()
            },
            e: b.q.to_vec(),
            b: b0.clone(),
            r: r0.clone(),
            relax_u: relax_u0,
            res_u: res_u0,
            co_u: co_u0,
            faces: None,
            _buffers: Vec::new(),
        });
        // Buffers of the previous level: (unknowns per target, residual).
        let mut fine_e: Vec<wgpu::Buffer> = b.q.to_vec();
        let mut fine_r = r0;
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
            let relax_u = colour_uniforms(lw, lh, plan.op.cx, plan.op.cy);
            let res_u = lu(lw, lh, 0);
            let rx_u = lu(fw, fh, lw);
            let ry_u = lu(lw, lh, fh);
            let px_u = lu(fw, lh, lw);
            let py_u = lu(fw, fh, 0);
            let last = n + 1 == plans.len();
            let co_u = coarsest_uniform(lw, lh, plan.op.cx, plan.op.cy, false);
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
                prolongate_y_add: fine_e
                    .iter()
                    .map(|fe| {
                        self.prolongate_y_add.bind(
                            device,
                            &[(L, &py_u), (Q_IN, &transfer), (Q, fe), (PTAP, &py)],
                        )
                    })
                    .collect(),
                clear: self.clear.bind(device, &[(L, &res_u), (Q, &e)]),
            };
            levels.push(Level {
                w: lw,
                h: lh,
                rb_sor: vec![[0, 1].map(|c| {
                    self.rb_sor
                        .bind(device, &[(L, &relax_u[c]), (Q, &e), (B, &bl)])
                })],
                residual: vec![
                    self.residual
                        .bind(device, &[(L, &res_u), (Q_IN, &e), (B, &bl), (R, &r)]),
                ],
                transfers: Some(transfers),
                coarsest: if last {
                    vec![
                        self.rb_sor_coarsest
                            .bind(device, &[(L, &co_u), (Q, &e), (B, &bl)]),
                    ]
                } else {
                    Vec::new()
                },
                e: vec![e.clone()],
                b: bl,
                r: r.clone(),
                relax_u,
                res_u,
                co_u,
                faces: None,
                _buffers: vec![transfer, rx_first, rx_frac, ry_first, ry_frac, px, py],
            });
            fine_e = vec![e];
            fine_r = r;
        }
        levels
    }

    /// Solve around obstacles: the finest level's couplings `finest` and the coarse levels
    /// `nodes` (`None`: the plain kernels).
    pub fn set_faces(
        &mut self,
        device: &wgpu::Device,
        finest: Option<&LevelFaces>,
        nodes: Option<&Hierarchy>,
    ) {
        let built = finest.map(|f| self.faces_level(device, 0, f));
        for level in &mut self.levels {
            level.faces = None;
        }
        self.levels[0].faces = built;
        let l0 = &self.levels[0];
        let nodes = nodes.filter(|_| finest.is_some());
        self.nodes.set(device, nodes, &l0.r, &l0.e);
    }

    /// Level `n`'s bind groups around obstacles, with its couplings `f`.
    fn faces_level(&self, device: &wgpu::Device, n: usize, f: &LevelFaces) -> FacesLevel {
        let lv = &self.levels[n];
        // The residual reads only the couplings; the others the inverse diagonal too.
        let all = [(FACE_X, &f.x), (FACE_Y, &f.y), (INV_DIAG, &f.inv)];
        let bind_with = |k: &Kernel, c: &[(Binding, &wgpu::Buffer)], more: &[_]| {
            let entries: Vec<_> = more.iter().chain(c).copied().collect();
            k.bind(device, &entries)
        };
        let bind = |k: &Kernel, more: &[_]| bind_with(k, &all, more);
        let rb_sor =
            lv.e.iter()
                .map(|e| {
                    [0, 1].map(|c| {
                        bind(
                            &self.rb_sor_faces,
                            &[(L, &lv.relax_u[c]), (Q, e), (B, &lv.b)],
                        )
                    })
                })
                .collect();
        let residual =
            lv.e.iter()
                .map(|e| {
                    let entries = [(L, &lv.res_u), (Q_IN, e), (B, &lv.b), (R, &lv.r)];
                    bind_with(&self.residual_faces, &all[..2], &entries)
                })
                .collect();
        let coarsest = match &f.region {
            Some(region) if n + 1 == self.levels.len() => {
                lv.e.iter()
                    .map(|e| {
                        let entries = [(L, &lv.co_u), (Q, e), (B, &lv.b), (REGION, region)];
                        bind(&self.rb_sor_coarsest_faces, &entries)
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        FacesLevel {
            rb_sor,
            residual,
            coarsest,
        }
    }

    /// `sweeps` red-black Gauss-Seidel sweeps on target `t`'s pressure (cpu `rb_sor`, or
    /// `rb_sor_faces` around obstacles).
    pub fn encode_rb_sor(&self, d: &mut Dispatcher, t: usize, sweeps: u32) {
        self.encode_smooth(d, 0, t, sweeps);
    }

    /// `cycles` V(2,2)-cycles on target `t`'s pressure.
    pub fn encode_v_cycles(&self, d: &mut Dispatcher, t: usize, cycles: u32) {
        for _ in 0..cycles {
            self.encode_v_cycle(d, 0, t);
        }
    }

    /// `sweeps` red-black sweeps on level `l` (target `t` at level 0).
    fn encode_smooth(&self, d: &mut Dispatcher, l: usize, t: usize, sweeps: u32) {
        let lv = &self.levels[l];
        let ti = if l == 0 { t } else { 0 };
        let (kernel, colours) = match &lv.faces {
            Some(f) => (&self.rb_sor_faces, &f.rb_sor[ti]),
            None => (&self.rb_sor, &lv.rb_sor[ti]),
        };
        for _ in 0..sweeps {
            for colour in colours {
                d.go(kernel, colour, (groups(lv.w.div_ceil(2)), groups(lv.h)));
            }
        }
    }

    /// One V(2,2)-cycle from level `l` (cpu pressure::v_cycle).
    fn encode_v_cycle(&self, d: &mut Dispatcher, l: usize, t: usize) {
        let lv = &self.levels[l];
        let ti = if l == 0 { t } else { 0 };
        let faces = lv.faces.as_ref();
        if l + 1 == self.levels.len() {
            match faces {
                Some(f) => d.go(&self.rb_sor_coarsest_faces, &f.coarsest[ti], (1, 1)),
                None => d.go(&self.rb_sor_coarsest, &lv.coarsest[ti], (1, 1)),
            }
            return;
        }
        self.encode_smooth(d, l, t, multigrid::MG_PRE_SWEEPS);
        if let Some(f) = faces {
            // Around obstacles (level 0 only): the coarse levels are node graphs.
            d.go(&self.residual_faces, &f.residual[ti], groups2(lv.w, lv.h));
            self.nodes.encode(d, t, multigrid::MG_NODE_SWEEPS);
            self.encode_smooth(d, l, t, multigrid::MG_POST_SWEEPS);
            return;
        }
        d.go(&self.residual, &lv.residual[ti], groups2(lv.w, lv.h));
        let next = &self.levels[l + 1];
        let tr = next
            .transfers
            .as_ref()
            .expect("coarse levels have transfers");
        d.go(&self.restrict_x, &tr.restrict_x, groups2(next.w, lv.h));
        d.go(&self.restrict_y, &tr.restrict_y, groups2(next.w, next.h));
        d.go(&self.clear, &tr.clear, groups2(next.w, next.h));
        self.encode_v_cycle(d, l + 1, t);
        d.go(&self.prolongate_x, &tr.prolongate_x, groups2(lv.w, next.h));
        d.go(
            &self.prolongate_y_add,
            &tr.prolongate_y_add[ti],
            groups2(lv.w, lv.h),
        );
        self.encode_smooth(d, l, t, multigrid::MG_POST_SWEEPS);
    }
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
