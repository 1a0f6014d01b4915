//! The GPU solver: the CPU solver's algorithm as wgpu compute passes, one step per command
//! buffer, every bind group built once. `step` reads as the algorithm, one labelled compute
//! pass per stage.

use super::activity::ActivityProbe;
use super::context::{GpuContext, GpuError};
use super::kernel::{Dispatch, Kernel, groups, storage, storage_init, uniform};
use super::shaders;
use crate::sim::grid::Fields;
use crate::sim::multigrid::{self, COARSEST_OMEGA, LevelPlan};
use crate::sim::physics::{
    CellSplat, MAX_PENDING_SPLATS, REPROJECT_ABOVE_COMPRESSIBILITY, VORTICITY_SCALE_PER_S,
    decay_factor,
};
use crate::sim::{
    Activity, Look, MAX_DYE, PressureMethod, SimConfig, Solver, Splat, Stage, StepParams, StepStats,
};
use bytemuck::{Pod, Zeroable};

/// The largest coarsest multigrid level the single-workgroup solve holds (`COARSE_MAX` in
/// pressure.wgsl). Grids flatter than about 256:1 exceed it and run on the CPU instead.
const COARSE_MAX_CELLS: usize = 1024;
/// Workgroups of the first reduction stage (each folds a strided share of the field).
const MAX_REDUCE_GROUPS: usize = 1024;
/// Threads per reduction workgroup (`RW` in reduce.wgsl).
const REDUCE_THREADS: usize = 256;
/// Staging buffers for frame readback: one being written, one in flight, one being read.
pub const FRAME_STAGING_BUFFERS: usize = 3;

/// `Params` in common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default, Debug)]
struct GpuParams {
    w: u32,
    h: u32,
    dw: u32,
    dh: u32,
    dye_scale: u32,
    splat_count: u32,
    out_w: u32,
    out_h: u32,
    dt: f32,
    k: f32,
    vel_decay: f32,
    dye_decay: f32,
    vort_k: f32,
    cell: f32,
    a_visc: f32,
    a_dye: f32,
    max_dye: f32,
    color_mode: u32,
    brightness: f32,
    saturation: f32,
    hue_shift: f32,
    _pad: [f32; 3],
}

/// `Splat` in splat.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
struct GpuSplat {
    x: f32,
    y: f32,
    r: f32,
    reach: f32,
    dr: f32,
    dg: f32,
    db: f32,
    fx: f32,
    fy: f32,
    shape: u32,
    _pad: [u32; 2],
}

impl From<&CellSplat> for GpuSplat {
    fn from(s: &CellSplat) -> Self {
        Self {
            x: s.x,
            y: s.y,
            r: s.r,
            reach: s.reach,
            dr: s.dye[0],
            dg: s.dye[1],
            db: s.dye[2],
            fx: s.force[0],
            fy: s.force[1],
            shape: s.shape as u32,
            _pad: [0; 2],
        }
    }
}

/// `Level` in pressure.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
struct LevelU {
    w: u32,
    h: u32,
    colour: u32,
    cw: u32,
    cx: f32,
    cy: f32,
    omega: f32,
    sweeps: u32,
}

/// `Diffuse` in diffuse.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
struct DiffuseU {
    nx: u32,
    ny: u32,
    fixed: u32,
    _pad: u32,
    a: f32,
    _p: [f32; 3],
}

/// `Reduce` in reduce.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
struct ReduceU {
    n: u32,
    groups: u32,
    slot: u32,
    mode: u32,
}

/// `Mean` (divergence.wgsl) and `Grad` (gradient.wgsl): a result slot and a count.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
struct SlotU {
    slot: u32,
    count: u32,
    _p: [u32; 2],
}

/// `Decide` in divergence.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
struct DecideU {
    w: u32,
    h: u32,
    count: u32,
    slot_div: u32,
    slot_u: u32,
    slot_v: u32,
    k: f32,
    threshold: f32,
}

/// Result slots of the reductions (vec4 each: sum, sum of squares, max |x|).
pub(super) mod slot {
    pub const DIV_BEFORE: u32 = 0;
    pub const DIV_AFTER: u32 = 1;
    pub const DOTS_MAIN: u32 = 2;
    pub const Q_MAIN: u32 = 3;
    pub const DIV_ADVECTED: u32 = 4;
    pub const U: u32 = 5;
    pub const V: u32 = 6;
    pub const DOTS_EXTRA: u32 = 7;
    pub const Q_EXTRA: u32 = 8;
    /// The activity probe's three slots: u, v and dye (see `activity.rs`).
    pub const ACTIVITY: u32 = 9;
    pub const COUNT: u64 = 16;
}

/// Every pipeline.
pub(super) struct Kernels {
    splat_u: Kernel,
    splat_v: Kernel,
    splat_dye: Kernel,
    curl: Kernel,
    force: Kernel,
    apply_u: Kernel,
    apply_v: Kernel,
    diffuse: Kernel,
    diffuse_dye: Kernel,
    divergence: Kernel,
    subtract_mean: Kernel,
    decide: Kernel,
    partial_norms: Kernel,
    partial_dots: Kernel,
    finish: Kernel,
    jacobi: Kernel,
    relax: Kernel,
    residual: Kernel,
    restrict_x: Kernel,
    restrict_y: Kernel,
    prolong_x: Kernel,
    prolong_y_add: Kernel,
    coarsest: Kernel,
    scale: Kernel,
    copy: Kernel,
    clear: Kernel,
    centre: Kernel,
    subtract_u: Kernel,
    subtract_v: Kernel,
    advect_u: Kernel,
    advect_v: Kernel,
    advect_dye: Kernel,
    dissipate_velocity: Kernel,
    dissipate_dye: Kernel,
    colorize: Kernel,
}

impl Kernels {
    fn new(device: &wgpu::Device) -> Self {
        let module = |name: &str| {
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(name),
                source: wgpu::ShaderSource::Wgsl(shaders::source(name).into()),
            })
        };
        let (splat, curl, vort, diffuse) = (
            module("splat"),
            module("curl"),
            module("vorticity"),
            module("diffuse"),
        );
        let (div, reduce, pres, grad) = (
            module("divergence"),
            module("reduce"),
            module("pressure"),
            module("gradient"),
        );
        let (adv, diss, col) = (module("advect"), module("dissipate"), module("colorize"));
        let k = |m: &wgpu::ShaderModule, e: &'static str| Kernel::new(device, m, e);
        Self {
            splat_u: k(&splat, "splat_u"),
            splat_v: k(&splat, "splat_v"),
            splat_dye: k(&splat, "splat_dye"),
            curl: k(&curl, "curl_main"),
            force: k(&vort, "force"),
            apply_u: k(&vort, "apply_u"),
            apply_v: k(&vort, "apply_v"),
            diffuse: k(&diffuse, "diffuse_scalar"),
            diffuse_dye: k(&diffuse, "diffuse_dye"),
            divergence: k(&div, "divergence"),
            subtract_mean: k(&div, "subtract_mean"),
            decide: k(&div, "decide"),
            partial_norms: k(&reduce, "partial_norms"),
            partial_dots: k(&reduce, "partial_dots"),
            finish: k(&reduce, "finish"),
            jacobi: k(&pres, "jacobi"),
            relax: k(&pres, "relax_color"),
            residual: k(&pres, "residual"),
            restrict_x: k(&pres, "restrict_x"),
            restrict_y: k(&pres, "restrict_y"),
            prolong_x: k(&pres, "prolong_x"),
            prolong_y_add: k(&pres, "prolong_y_add"),
            coarsest: k(&pres, "coarsest"),
            scale: k(&pres, "scale"),
            copy: k(&pres, "copy"),
            clear: k(&pres, "clear"),
            centre: k(&grad, "centre"),
            subtract_u: k(&grad, "subtract_u"),
            subtract_v: k(&grad, "subtract_v"),
            advect_u: k(&adv, "advect_u"),
            advect_v: k(&adv, "advect_v"),
            advect_dye: k(&adv, "advect_dye"),
            dissipate_velocity: k(&diss, "dissipate_velocity"),
            dissipate_dye: k(&diss, "dissipate_dye"),
            colorize: k(&col, "colorize"),
        }
    }
}

/// A two-stage reduction of one field into one result slot.
pub(super) struct Reduction {
    partial: wgpu::BindGroup,
    finish: wgpu::BindGroup,
    groups: u32,
    dots: bool,
}

impl Reduction {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        device: &wgpu::Device,
        k: &Kernels,
        x: &wgpu::Buffer,
        y: Option<&wgpu::Buffer>,
        n: usize,
        slot: u32,
        partials: &wgpu::Buffer,
        results: &wgpu::Buffer,
    ) -> Self {
        let groups = n.div_ceil(REDUCE_THREADS).clamp(1, MAX_REDUCE_GROUPS) as u32;
        let u = uniform(
            device,
            "Uniform: reduce",
            &ReduceU {
                n: n as u32,
                groups,
                slot,
                mode: u32::from(y.is_some()),
            },
        );
        let partial = match y {
            Some(y) => k
                .partial_dots
                .bind(device, &[(0, &u), (1, x), (2, y), (3, partials)]),
            None => k
                .partial_norms
                .bind(device, &[(0, &u), (1, x), (3, partials)]),
        };
        let finish = k
            .finish
            .bind(device, &[(0, &u), (3, partials), (4, results)]);
        Self {
            partial,
            finish,
            groups,
            dots: y.is_some(),
        }
    }

    pub(super) fn encode(
        &self,
        k: &Kernels,
        d: &mut Dispatch,
        pass: &mut Option<wgpu::ComputePass<'_>>,
    ) {
        let kernel = if self.dots {
            &k.partial_dots
        } else {
            &k.partial_norms
        };
        d.go(pass, kernel, &self.partial, self.groups, 1);
        d.go(pass, &k.finish, &self.finish, 1, 1);
    }
}

/// The projection buffers of one target (main or extra).
struct Target {
    q: wgpu::Buffer,
    /// Bind groups: Jacobi q -> tmp and tmp -> q, and the final copy tmp -> q.
    jacobi: [wgpu::BindGroup; 2],
    copy: wgpu::BindGroup,
    /// `aq = -A q` (residual with b = 0), the dots and the scale of the warm start.
    neg_a: wgpu::BindGroup,
    dots: Reduction,
    scale: wgpu::BindGroup,
    /// Mean of the divergence (to fix b) and of q (to centre it).
    mean: wgpu::BindGroup,
    q_sum: Reduction,
    centre: wgpu::BindGroup,
}

/// All buffers.
struct Buffers {
    params: wgpu::Buffer,
    splats: wgpu::Buffer,
    u: [wgpu::Buffer; 2],
    v: [wgpu::Buffer; 2],
    u_b: wgpu::Buffer,
    v_b: wgpu::Buffer,
    dye: [wgpu::Buffer; 2],
    dye_b: wgpu::Buffer,
    curl: wgpu::Buffer,
    fx: wgpu::Buffer,
    fy: wgpu::Buffer,
    d: wgpu::Buffer,
    b: wgpu::Buffer,
    q_tmp: wgpu::Buffer,
    q_centred: wgpu::Buffer,
    results: wgpu::Buffer,
    args: wgpu::Buffer,
    diffuse_u: wgpu::Buffer,
    diffuse_v: wgpu::Buffer,
    diffuse_dye: wgpu::Buffer,
}

/// Bind groups indexed by velocity parity `[p]` and dye parity `[pd]`.
struct Groups {
    splat_u: [wgpu::BindGroup; 2],
    splat_v: [wgpu::BindGroup; 2],
    splat_dye: [wgpu::BindGroup; 2],
    curl: [wgpu::BindGroup; 2],
    force: wgpu::BindGroup,
    apply_u: [wgpu::BindGroup; 2],
    apply_v: [wgpu::BindGroup; 2],
    diffuse_u: [wgpu::BindGroup; 2],
    diffuse_v: [wgpu::BindGroup; 2],
    diffuse_dye: [wgpu::BindGroup; 2],
    divergence: [wgpu::BindGroup; 2],
    reduce_div_before: Reduction,
    reduce_div_after: Reduction,
    reduce_div_advected: Reduction,
    reduce_u: [Reduction; 2],
    reduce_v: [Reduction; 2],
    decide: wgpu::BindGroup,
    subtract_u: [wgpu::BindGroup; 2],
    subtract_v: [wgpu::BindGroup; 2],
    advect_u: [wgpu::BindGroup; 2],
    advect_v: [wgpu::BindGroup; 2],
    /// `[velocity parity][dye parity]`.
    advect_dye: [[wgpu::BindGroup; 2]; 2],
    dissipate_velocity: [wgpu::BindGroup; 2],
    dissipate_dye: [wgpu::BindGroup; 2],
}

/// One multigrid level's bind groups. Level 0 is the finest: its unknowns and right-hand side
/// are the projection's (one set of bind groups per projection target); the others follow
/// `pressure::plan` and own their buffers (kept here so they live as long as the solver).
struct GpuLevel {
    w: usize,
    h: usize,
    /// Smoothing colour passes `[target or 0][colour]`.
    relax: Vec<[wgpu::BindGroup; 2]>,
    /// `r = b - A e`, per target at level 0.
    residual: Vec<wgpu::BindGroup>,
    /// Transfers from / to the next finer level (coarse levels only).
    restrict_x: Option<wgpu::BindGroup>,
    restrict_y: Option<wgpu::BindGroup>,
    prolong_x: Option<wgpu::BindGroup>,
    /// Adds this level's correction into the finer level's unknowns, per finer target.
    prolong_y_add: Vec<wgpu::BindGroup>,
    clear: Option<wgpu::BindGroup>,
    /// The direct solve, on the last level (per target when that is level 0).
    coarsest: Vec<wgpu::BindGroup>,
    _buffers: Vec<wgpu::Buffer>,
}

/// Frame output: the colorize target and a pool of staging buffers read back without stalls.
struct Frames {
    size: (usize, usize),
    frame: Option<wgpu::Buffer>,
    /// `[velocity parity][dye parity]`.
    colorize: Vec<[wgpu::BindGroup; 2]>,
    staging: Vec<Staging>,
    /// Frames skipped because every staging buffer was busy.
    skipped: u64,
}

/// Staging buffer states.
const FREE: u8 = 0;
const MAPPING: u8 = 1;
const READY: u8 = 2;
const FAILED: u8 = 3;

struct Staging {
    buffer: wgpu::Buffer,
    size: (usize, usize),
    state: std::sync::Arc<std::sync::atomic::AtomicU8>,
    /// Submission order, to hand out the newest ready frame.
    serial: u64,
}

/// GPU step timing with timestamp queries.
struct Timing {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    period_ns: f32,
}

/// The wgpu solver.
pub struct GpuSolver {
    ctx: GpuContext,
    cfg: SimConfig,
    k: Kernels,
    buf: Buffers,
    groups: Groups,
    targets: [Target; 2],
    levels: Vec<GpuLevel>,
    /// The second projection's full dispatch sizes; `decide` copies or zeroes them into
    /// `buf.args`.
    extra_table: wgpu::Buffer,
    extra_count: u32,
    decide_uniform: wgpu::Buffer,
    /// Which buffer holds the current velocity and dye.
    vel: usize,
    dye: usize,
    pending: Vec<Splat>,
    dropped_splats: u64,
    measure: bool,
    timing: Option<Timing>,
    last_gpu_ms: Option<f64>,
    frames: Frames,
    serial: u64,
    /// Whether the last step ran the second projection (known when measuring).
    last_projections: u32,
    /// Splats uploaded for the step being encoded (0: the splat passes are skipped).
    splat_count: u32,
    /// Steps submitted and perhaps not yet finished, oldest first.
    in_flight: std::collections::VecDeque<wgpu::SubmissionIndex>,
    /// Measures the fluid's motion and dye for the engine, read back without waiting.
    activity: ActivityProbe,
}

/// Steps the GPU may have queued before `step` waits for the oldest. Without a bound, a GPU
/// slower than real time would queue work without end (the submit returns at once), and every
/// frame would show an ever older fluid; with it the wait shows up in the engine's step time,
/// and the engine drops steps instead.
pub const MAX_STEPS_IN_FLIGHT: usize = 2;

/// Longest wait for a step in flight before the device counts as hung.
const STEP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

fn bytes_f32(n: usize) -> u64 {
    (n * 4) as u64
}

impl GpuSolver {
    /// Build every pipeline, buffer and bind group for `cfg` on `ctx`'s device.
    pub fn new(ctx: GpuContext, cfg: &SimConfig) -> Result<Self, GpuError> {
        let cfg = cfg.sanitized();
        let (w, h) = (cfg.width, cfg.height);
        let (dw, dh) = (cfg.dye_width(), cfg.dye_height());
        let plans = multigrid::plan(w, h);
        let coarsest = plans.last().map_or(w * h, |p| p.w * p.h);
        if coarsest > COARSE_MAX_CELLS {
            return Err(GpuError::Failed {
                adapter: ctx.info.name.clone(),
                message: format!(
                    "a {w}x{h} grid is too flat for the GPU multigrid (coarsest level {coarsest} \
                     cells, at most {COARSE_MAX_CELLS})"
                ),
            });
        }
        let largest = bytes_f32(dw * dh * 4).max(bytes_f32((w + 1) * (h + 1)));
        let limits = ctx.device.limits();
        let allowed = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        if largest > allowed {
            return Err(GpuError::TooLarge {
                adapter: ctx.info.name.clone(),
                needed: largest,
                allowed,
            });
        }
        let device = &ctx.device;
        let k = Kernels::new(device);
        let (nu, nv, nc, nd) = ((w + 1) * h, w * (h + 1), w * h, dw * dh);
        let buf = Buffers {
            params: uniform(device, "Uniform: params", &GpuParams::default()),
            splats: storage(device, "Buffer: splats", (MAX_PENDING_SPLATS * 48) as u64),
            u: [
                storage(device, "Buffer: u A", bytes_f32(nu)),
                storage(device, "Buffer: u B", bytes_f32(nu)),
            ],
            v: [
                storage(device, "Buffer: v A", bytes_f32(nv)),
                storage(device, "Buffer: v B", bytes_f32(nv)),
            ],
            u_b: storage(device, "Buffer: u rhs", bytes_f32(nu)),
            v_b: storage(device, "Buffer: v rhs", bytes_f32(nv)),
            dye: [
                storage(device, "Buffer: dye A", bytes_f32(nd * 4)),
                storage(device, "Buffer: dye B", bytes_f32(nd * 4)),
            ],
            dye_b: storage(device, "Buffer: dye rhs", bytes_f32(nd * 4)),
            curl: storage(device, "Buffer: curl", bytes_f32(nc)),
            fx: storage(device, "Buffer: force x", bytes_f32(nc)),
            fy: storage(device, "Buffer: force y", bytes_f32(nc)),
            d: storage(device, "Buffer: divergence", bytes_f32(nc)),
            b: storage(device, "Buffer: pressure rhs", bytes_f32(nc)),
            q_tmp: storage(device, "Buffer: pressure scratch", bytes_f32(nc)),
            q_centred: storage(device, "Buffer: pressure centred", bytes_f32(nc)),
            results: storage(device, "Buffer: reduction results", slot::COUNT * 16),
            args: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("Buffer: second projection dispatches"),
                size: 1024 * 12,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::INDIRECT
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            diffuse_u: uniform(device, "Uniform: diffuse u", &DiffuseU::default()),
            diffuse_v: uniform(device, "Uniform: diffuse v", &DiffuseU::default()),
            diffuse_dye: uniform(device, "Uniform: diffuse dye", &DiffuseU::default()),
        };
        let partials = storage(
            device,
            "Buffer: reduction partials",
            (MAX_REDUCE_GROUPS * 16) as u64,
        );
        let zeros = storage(device, "Buffer: zeros", bytes_f32(nc));
        let r0 = storage(device, "Buffer: residual", bytes_f32(nc));
        let p = &buf.params;
        let red = |x: &wgpu::Buffer, y: Option<&wgpu::Buffer>, n: usize, s: u32| {
            Reduction::new(device, &k, x, y, n, s, &partials, &buf.results)
        };
        let level0 = LevelU {
            w: w as u32,
            h: h as u32,
            cx: 1.0,
            cy: 1.0,
            omega: 1.0,
            ..Default::default()
        };
        let u_level0 = uniform(device, "Uniform: level 0", &level0);
        let target = |name: &str, dots_slot: u32, q_slot: u32, div_slot: u32| {
            let q = storage(device, name, bytes_f32(nc));
            let u_scale = uniform(
                device,
                "Uniform: warm-start scale",
                &LevelU {
                    colour: dots_slot,
                    ..level0
                },
            );
            let mean_u = uniform(
                device,
                "Uniform: mean",
                &SlotU {
                    slot: div_slot,
                    count: nc as u32,
                    _p: [0; 2],
                },
            );
            let grad_u = uniform(
                device,
                "Uniform: centre",
                &SlotU {
                    slot: q_slot,
                    count: nc as u32,
                    _p: [0; 2],
                },
            );
            Target {
                jacobi: [
                    k.jacobi.bind(
                        device,
                        &[(0, &u_level0), (1, &q), (2, &buf.q_tmp), (3, &buf.b)],
                    ),
                    k.jacobi.bind(
                        device,
                        &[(0, &u_level0), (1, &buf.q_tmp), (2, &q), (3, &buf.b)],
                    ),
                ],
                copy: k
                    .copy
                    .bind(device, &[(0, &u_level0), (1, &buf.q_tmp), (2, &q)]),
                neg_a: k
                    .residual
                    .bind(device, &[(0, &u_level0), (1, &q), (3, &zeros), (4, &r0)]),
                dots: red(&buf.b, Some(&r0), nc, dots_slot),
                scale: k
                    .scale
                    .bind(device, &[(0, &u_scale), (2, &q), (8, &buf.results)]),
                mean: k.subtract_mean.bind(
                    device,
                    &[(0, p), (4, &buf.b), (5, &mean_u), (6, &buf.results)],
                ),
                q_sum: red(&q, None, nc, q_slot),
                centre: k.centre.bind(
                    device,
                    &[
                        (0, p),
                        (1, &grad_u),
                        (2, &q),
                        (3, &buf.results),
                        (6, &buf.q_centred),
                    ],
                ),
                q,
            }
        };
        let targets = [
            target(
                "Buffer: pressure",
                slot::DOTS_MAIN,
                slot::Q_MAIN,
                slot::DIV_BEFORE,
            ),
            target(
                "Buffer: pressure extra",
                slot::DOTS_EXTRA,
                slot::Q_EXTRA,
                slot::DIV_ADVECTED,
            ),
        ];
        let levels = build_levels(device, &k, w, h, &plans, &targets, &buf.b, &r0);
        let per2 = |f: &dyn Fn(usize) -> wgpu::BindGroup| [f(0), f(1)];
        let b = &buf;
        let decide_uniform = uniform(device, "Uniform: decide", &DecideU::default());
        let extra_table_placeholder = storage(device, "Buffer: second projection table", 16);
        let groups = Groups {
            splat_u: per2(&|i| {
                k.splat_u
                    .bind(device, &[(0, p), (1, &b.splats), (2, &b.u[i])])
            }),
            splat_v: per2(&|i| {
                k.splat_v
                    .bind(device, &[(0, p), (1, &b.splats), (3, &b.v[i])])
            }),
            splat_dye: per2(&|i| {
                k.splat_dye
                    .bind(device, &[(0, p), (1, &b.splats), (4, &b.dye[i])])
            }),
            curl: per2(&|i| {
                k.curl
                    .bind(device, &[(0, p), (1, &b.u[i]), (2, &b.v[i]), (3, &b.curl)])
            }),
            force: k
                .force
                .bind(device, &[(0, p), (1, &b.curl), (2, &b.fx), (3, &b.fy)]),
            apply_u: per2(&|i| k.apply_u.bind(device, &[(0, p), (2, &b.fx), (4, &b.u[i])])),
            apply_v: per2(&|i| k.apply_v.bind(device, &[(0, p), (3, &b.fy), (5, &b.v[i])])),
            diffuse_u: per2(&|i| {
                k.diffuse.bind(
                    device,
                    &[
                        (0, &b.diffuse_u),
                        (1, &b.u[i]),
                        (2, &b.u_b),
                        (3, &b.u[1 - i]),
                    ],
                )
            }),
            diffuse_v: per2(&|i| {
                k.diffuse.bind(
                    device,
                    &[
                        (0, &b.diffuse_v),
                        (1, &b.v[i]),
                        (2, &b.v_b),
                        (3, &b.v[1 - i]),
                    ],
                )
            }),
            diffuse_dye: per2(&|i| {
                k.diffuse_dye.bind(
                    device,
                    &[
                        (0, &b.diffuse_dye),
                        (4, &b.dye[i]),
                        (5, &b.dye_b),
                        (6, &b.dye[1 - i]),
                    ],
                )
            }),
            divergence: per2(&|i| {
                k.divergence.bind(
                    device,
                    &[(0, p), (1, &b.u[i]), (2, &b.v[i]), (3, &b.d), (4, &b.b)],
                )
            }),
            reduce_div_before: red(&b.d, None, nc, slot::DIV_BEFORE),
            reduce_div_after: red(&b.d, None, nc, slot::DIV_AFTER),
            reduce_div_advected: red(&b.d, None, nc, slot::DIV_ADVECTED),
            reduce_u: [
                red(&b.u[0], None, nu, slot::U),
                red(&b.u[1], None, nu, slot::U),
            ],
            // Only the first h rows of v, as the CPU's compressibility.
            reduce_v: [
                red(&b.v[0], None, nc, slot::V),
                red(&b.v[1], None, nc, slot::V),
            ],
            decide: k.decide.bind(
                device,
                &[
                    (6, &b.results),
                    (7, &decide_uniform),
                    (8, &extra_table_placeholder),
                    (9, &b.args),
                ],
            ),
            subtract_u: per2(&|i| {
                k.subtract_u
                    .bind(device, &[(0, p), (4, &b.u[i]), (6, &b.q_centred)])
            }),
            subtract_v: per2(&|i| {
                k.subtract_v
                    .bind(device, &[(0, p), (5, &b.v[i]), (6, &b.q_centred)])
            }),
            advect_u: per2(&|i| {
                k.advect_u.bind(
                    device,
                    &[(0, p), (1, &b.u[i]), (2, &b.v[i]), (3, &b.u[1 - i])],
                )
            }),
            advect_v: per2(&|i| {
                k.advect_v.bind(
                    device,
                    &[(0, p), (1, &b.u[i]), (2, &b.v[i]), (4, &b.v[1 - i])],
                )
            }),
            advect_dye: [0, 1].map(|i| {
                per2(&|pd| {
                    k.advect_dye.bind(
                        device,
                        &[
                            (0, p),
                            (1, &b.u[i]),
                            (2, &b.v[i]),
                            (5, &b.dye[pd]),
                            (6, &b.dye[1 - pd]),
                        ],
                    )
                })
            }),
            dissipate_velocity: per2(&|i| {
                k.dissipate_velocity
                    .bind(device, &[(0, p), (1, &b.u[i]), (2, &b.v[i])])
            }),
            dissipate_dye: per2(&|i| k.dissipate_dye.bind(device, &[(0, p), (3, &b.dye[i])])),
        };
        let activity = ActivityProbe::new(device, nu, nc, nd * 4, &b.u, &b.v, &b.dye, &red);
        let timing = ctx.timestamps.then(|| Timing {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("Queries: step time"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("Buffer: step time"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            period_ns: ctx.queue.get_timestamp_period(),
        });
        let mut solver = Self {
            cfg,
            k,
            buf,
            groups,
            targets,
            levels,
            extra_table: extra_table_placeholder,
            extra_count: 0,
            decide_uniform,
            vel: 0,
            dye: 0,
            pending: Vec::with_capacity(MAX_PENDING_SPLATS),
            dropped_splats: 0,
            measure: true,
            timing: None,
            last_gpu_ms: None,
            splat_count: 0,
            in_flight: std::collections::VecDeque::with_capacity(MAX_STEPS_IN_FLIGHT + 1),
            frames: Frames {
                size: (0, 0),
                frame: None,
                colorize: Vec::new(),
                staging: Vec::new(),
                skipped: 0,
            },
            serial: 0,
            last_projections: 0,
            activity,
            ctx,
        };
        solver.timing = timing;
        solver.build_extra_table();
        solver.ctx.check()?;
        Ok(solver)
    }

    /// Record the second projection's dispatch sizes into its table, for both velocity
    /// parities' layouts (the sizes do not depend on parity).
    fn build_extra_table(&mut self) {
        let mut table: Vec<[u32; 3]> = Vec::new();
        let mut d = Dispatch::Record(&mut table);
        let mut none: Option<wgpu::ComputePass<'_>> = None;
        self.encode_projection(&mut d, &mut none, 1);
        let flat: Vec<u32> = table.iter().flatten().copied().collect();
        let device = &self.ctx.device;
        let bytes = (table.len() * 12).max(12) as u64;
        if bytes > self.buf.args.size() {
            self.buf.args = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("Buffer: second projection dispatches"),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::INDIRECT
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
        }
        self.extra_table = storage_init(device, "Buffer: second projection table", &flat);
        self.extra_count = table.len() as u32;
        let (w, h) = (self.cfg.width as u32, self.cfg.height as u32);
        self.ctx.queue.write_buffer(
            &self.decide_uniform,
            0,
            bytemuck::bytes_of(&DecideU {
                w,
                h,
                count: self.extra_count,
                slot_div: slot::DIV_ADVECTED,
                slot_u: slot::U,
                slot_v: slot::V,
                k: 0.0,
                threshold: REPROJECT_ABOVE_COMPRESSIBILITY,
            }),
        );
        self.groups.decide = self.k.decide.bind(
            device,
            &[
                (6, &self.buf.results),
                (7, &self.decide_uniform),
                (8, &self.extra_table),
                (9, &self.buf.args),
            ],
        );
    }

    /// The adapter's name for the UI.
    pub fn adapter_name(&self) -> String {
        self.ctx.adapter_name()
    }

    /// Whether steps are timed on the GPU (timestamp queries; on when the adapter supports
    /// them and the solver measures).
    pub fn timed(&self) -> bool {
        self.timing.is_some() && self.measure
    }

    /// GPU time of the last measured step in ms, when the adapter supports timestamps.
    pub fn last_gpu_ms(&self) -> Option<f64> {
        self.last_gpu_ms
    }

    /// Frames skipped because every staging buffer was still busy.
    pub fn skipped_frames(&self) -> u64 {
        self.frames.skipped
    }

    /// Dispatches in the second projection (its indirect argument table).
    pub fn extra_dispatches(&self) -> u32 {
        self.extra_count
    }

    /// Splats dropped because the queue was full.
    pub fn dropped_splats(&self) -> u64 {
        self.dropped_splats
    }

    fn begin<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        label: &str,
        stamp: Option<u32>,
    ) -> wgpu::ComputePass<'e> {
        let timestamp_writes = match (&self.timing, stamp) {
            (Some(t), Some(index)) => Some(wgpu::ComputePassTimestampWrites {
                query_set: &t.queries,
                beginning_of_pass_write_index: (index == 0).then_some(0),
                end_of_pass_write_index: (index == 1).then_some(1),
            }),
            _ => None,
        };
        encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes,
        })
    }

    /// Encode one projection of the current velocity with target `t` (0 main, 1 extra).
    /// The main projection computes its divergence; the extra one reuses the divergence the
    /// `decide` stage computed from the advected velocity.
    fn encode_projection(
        &self,
        d: &mut Dispatch,
        pass: &mut Option<wgpu::ComputePass<'_>>,
        t: usize,
    ) {
        let k = &self.k;
        let g = &self.groups;
        let tg = &self.targets[t];
        let (w, h) = (self.cfg.width, self.cfg.height);
        let p = self.vel;
        if t == 0 {
            d.go(pass, &k.divergence, &g.divergence[p], groups(w), groups(h));
            g.reduce_div_before.encode(k, d, pass);
        }
        d.go(pass, &k.subtract_mean, &tg.mean, groups(w), groups(h));
        let iterations = self.cfg.pressure_iterations;
        match self.cfg.pressure {
            PressureMethod::Jacobi | PressureMethod::RbGs => {
                // Scale the warm start so it never hurts (cpu pressure::scale_warm_start).
                d.go(pass, &k.residual, &tg.neg_a, groups(w), groups(h));
                tg.dots.encode(k, d, pass);
                d.go(pass, &k.scale, &tg.scale, groups(w), groups(h));
                if self.cfg.pressure == PressureMethod::Jacobi {
                    for it in 0..iterations {
                        d.go(
                            pass,
                            &k.jacobi,
                            &tg.jacobi[it as usize % 2],
                            groups(w),
                            groups(h),
                        );
                    }
                    if iterations % 2 == 1 {
                        d.go(pass, &k.copy, &tg.copy, groups(w), groups(h));
                    }
                } else {
                    for _ in 0..iterations {
                        self.encode_smooth(d, pass, 0, t, 1);
                    }
                }
            }
            PressureMethod::Multigrid => {
                for _ in 0..iterations {
                    self.encode_vcycle(d, pass, 0, t);
                }
            }
        }
        tg.q_sum.encode(k, d, pass);
        d.go(pass, &k.centre, &tg.centre, groups(w), groups(h));
        d.go(pass, &k.subtract_u, &g.subtract_u[p], groups(w), groups(h));
        d.go(pass, &k.subtract_v, &g.subtract_v[p], groups(w), groups(h));
    }

    /// `sweeps` red-black sweeps on level `l` (target `t` at level 0).
    fn encode_smooth(
        &self,
        d: &mut Dispatch,
        pass: &mut Option<wgpu::ComputePass<'_>>,
        l: usize,
        t: usize,
        sweeps: u32,
    ) {
        let lv = &self.levels[l];
        let relax = &lv.relax[if l == 0 { t } else { 0 }];
        for _ in 0..sweeps {
            for colour in relax {
                d.go(
                    pass,
                    &self.k.relax,
                    colour,
                    groups(lv.w.div_ceil(2)),
                    groups(lv.h),
                );
            }
        }
    }

    /// One V(2,2)-cycle from level `l` (cpu pressure::v_cycle).
    fn encode_vcycle(
        &self,
        d: &mut Dispatch,
        pass: &mut Option<wgpu::ComputePass<'_>>,
        l: usize,
        t: usize,
    ) {
        let k = &self.k;
        let lv = &self.levels[l];
        let ti = if l == 0 { t } else { 0 };
        if l + 1 == self.levels.len() {
            d.go(pass, &k.coarsest, &lv.coarsest[ti], 1, 1);
            return;
        }
        self.encode_smooth(d, pass, l, t, multigrid::MG_PRE_SWEEPS);
        d.go(
            pass,
            &k.residual,
            &lv.residual[ti],
            groups(lv.w),
            groups(lv.h),
        );
        let next = &self.levels[l + 1];
        let rx = next
            .restrict_x
            .as_ref()
            .expect("coarse levels have transfers");
        let ry = next
            .restrict_y
            .as_ref()
            .expect("coarse levels have transfers");
        let clear = next.clear.as_ref().expect("coarse levels clear");
        d.go(pass, &k.restrict_x, rx, groups(next.w), groups(lv.h));
        d.go(pass, &k.restrict_y, ry, groups(next.w), groups(next.h));
        d.go(pass, &k.clear, clear, groups(next.w), groups(next.h));
        self.encode_vcycle(d, pass, l + 1, t);
        let px = next
            .prolong_x
            .as_ref()
            .expect("coarse levels have transfers");
        d.go(pass, &k.prolong_x, px, groups(lv.w), groups(next.h));
        d.go(
            pass,
            &k.prolong_y_add,
            &next.prolong_y_add[ti],
            groups(lv.w),
            groups(lv.h),
        );
        self.encode_smooth(d, pass, l, t, multigrid::MG_POST_SWEEPS);
    }

    fn write_params(&self, params: &GpuParams) {
        self.ctx
            .queue
            .write_buffer(&self.buf.params, 0, bytemuck::bytes_of(params));
    }

    fn base_params(&self) -> GpuParams {
        let c = &self.cfg;
        GpuParams {
            w: c.width as u32,
            h: c.height as u32,
            dw: c.dye_width() as u32,
            dh: c.dye_height() as u32,
            dye_scale: c.dye_scale as u32,
            cell: 1.0 / c.height as f32,
            max_dye: MAX_DYE,
            ..Default::default()
        }
    }

    /// Read a buffer back, blocking.
    fn read_buffer(&self, source: &wgpu::Buffer, bytes: u64) -> Vec<u8> {
        let device = &self.ctx.device;
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Buffer: readback"),
            size: bytes.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(source, 0, &staging, 0, bytes);
        self.ctx.queue.submit([encoder.finish()]);
        let slice = staging.slice(..);
        slice.map_async(wgpu::MapMode::Read, |_| {});
        if let Err(e) = device.poll(wgpu::PollType::wait_indefinitely()) {
            nice_plug::nice_error!("GPU readback failed: {e}");
            return vec![0; bytes as usize];
        }
        let data = match slice.get_mapped_range() {
            Ok(view) => view.to_vec(),
            Err(e) => {
                nice_plug::nice_error!("GPU readback failed: {e}");
                vec![0; bytes as usize]
            }
        };
        staging.unmap();
        data
    }

    fn read_f32(&self, source: &wgpu::Buffer, n: usize) -> Vec<f32> {
        bytemuck::cast_slice(&self.read_buffer(source, bytes_f32(n))).to_vec()
    }

    /// Make sure the frame target and its bind groups exist for `width x height`.
    fn ensure_frame(&mut self, width: usize, height: usize) {
        if self.frames.size == (width, height) && self.frames.frame.is_some() {
            return;
        }
        let device = &self.ctx.device;
        let frame = storage(device, "Buffer: frame", bytes_f32(width * height));
        let k = &self.k;
        let (b, p) = (&self.buf, &self.buf.params);
        self.frames.colorize = (0..2)
            .map(|i| {
                [0, 1].map(|pd| {
                    k.colorize.bind(
                        device,
                        &[
                            (0, p),
                            (1, &b.u[i]),
                            (2, &b.v[i]),
                            (3, &b.dye[pd]),
                            (4, &frame),
                        ],
                    )
                })
            })
            .collect();
        self.frames.frame = Some(frame);
        self.frames.size = (width, height);
        // Staging buffers of another size are dropped once read or free.
        self.frames.staging.retain(|s| {
            s.size == (width, height)
                || s.state.load(std::sync::atomic::Ordering::Acquire) == MAPPING
        });
    }

    /// Encode colorize and a copy into a free staging buffer, and request its mapping.
    fn encode_frame(&mut self, look: &Look, width: usize, height: usize) -> Option<usize> {
        use std::sync::atomic::Ordering;
        if width == 0 || height == 0 {
            return None;
        }
        self.ensure_frame(width, height);
        let free = self
            .frames
            .staging
            .iter()
            .position(|s| s.size == (width, height) && s.state.load(Ordering::Acquire) == FREE);
        let index = match free {
            Some(i) => i,
            None if self.frames.staging.len() < FRAME_STAGING_BUFFERS => {
                self.frames.staging.push(Staging {
                    buffer: self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("Buffer: frame staging"),
                        size: bytes_f32(width * height),
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    }),
                    size: (width, height),
                    state: std::sync::Arc::new(std::sync::atomic::AtomicU8::new(FREE)),
                    serial: 0,
                });
                self.frames.staging.len() - 1
            }
            None => {
                self.frames.skipped += 1;
                return None;
            }
        };
        let mut params = self.base_params();
        params.out_w = width as u32;
        params.out_h = height as u32;
        params.color_mode = look.color_mode as u32;
        params.brightness = if look.brightness.is_finite() {
            look.brightness
        } else {
            1.0
        };
        params.saturation = if look.saturation.is_finite() {
            look.saturation
        } else {
            1.0
        };
        params.hue_shift = if look.hue_shift.is_finite() {
            look.hue_shift
        } else {
            0.0
        };
        self.write_params(&params);
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("Pass: colorize"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.k.colorize.pipeline);
            pass.set_bind_group(0, &self.frames.colorize[self.vel][self.dye], &[]);
            pass.dispatch_workgroups(groups(width), groups(height), 1);
        }
        let staging = &mut self.frames.staging[index];
        let frame = self.frames.frame.as_ref().expect("ensure_frame made it");
        encoder.copy_buffer_to_buffer(frame, 0, &staging.buffer, 0, bytes_f32(width * height));
        self.ctx.queue.submit([encoder.finish()]);
        self.serial += 1;
        staging.serial = self.serial;
        staging.state.store(MAPPING, Ordering::Release);
        let state = staging.state.clone();
        staging
            .buffer
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |r| {
                state.store(if r.is_ok() { READY } else { FAILED }, Ordering::Release);
            });
        Some(index)
    }

    /// Copy the newest ready staging buffer into `out` and free it (and older ready ones).
    fn collect_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        use std::sync::atomic::Ordering;
        let newest = self
            .frames
            .staging
            .iter()
            .enumerate()
            .filter(|(_, s)| s.state.load(Ordering::Acquire) == READY)
            .max_by_key(|(_, s)| s.serial)
            .map(|(i, _)| i)?;
        let serial = self.frames.staging[newest].serial;
        let size = self.frames.staging[newest].size;
        {
            let s = &self.frames.staging[newest];
            out.clear();
            match s.buffer.slice(..).get_mapped_range() {
                Ok(data) => out.extend_from_slice(&data[..size.0 * size.1 * 4]),
                Err(e) => {
                    nice_plug::nice_error!("GPU frame readback failed: {e}");
                    out.resize(size.0 * size.1 * 4, 0);
                }
            }
        }
        for s in &mut self.frames.staging {
            let state = s.state.load(Ordering::Acquire);
            if state == FAILED || (state == READY && s.serial <= serial) {
                if state == READY {
                    s.buffer.unmap();
                }
                s.state.store(FREE, Ordering::Release);
            }
        }
        Some(size)
    }
}

impl GpuSolver {
    /// Upload this step's parameters (and, when `splats`, the queued splats).
    fn prepare(&mut self, p: &StepParams, splats: bool) -> GpuParams {
        let (w, h) = (self.cfg.width, self.cfg.height);
        let (dw, dh) = (self.cfg.dye_width(), self.cfg.dye_height());
        let cell = 1.0 / h as f32;
        let mut gp = self.base_params();
        if splats {
            let list: Vec<GpuSplat> = self
                .pending
                .drain(..)
                .filter_map(|s| CellSplat::new(&s, h))
                .map(|c| GpuSplat::from(&c))
                .collect();
            if !list.is_empty() {
                self.ctx
                    .queue
                    .write_buffer(&self.buf.splats, 0, bytemuck::cast_slice(&list));
            }
            gp.splat_count = list.len() as u32;
            self.splat_count = gp.splat_count;
        }
        gp.dt = p.dt;
        gp.k = p.dt * h as f32;
        gp.vel_decay = decay_factor(p.velocity_dissipation, p.dt);
        gp.dye_decay = decay_factor(p.dye_dissipation, p.dt);
        gp.vort_k = p.dt * p.vorticity * VORTICITY_SCALE_PER_S;
        gp.a_visc = p.viscosity * p.dt / (cell * cell);
        let dcell = cell / self.cfg.dye_scale as f32;
        gp.a_dye = p.dye_diffusion * p.dt / (dcell * dcell);
        self.write_params(&gp);
        let queue = &self.ctx.queue;
        let diffuse = |nx: usize, ny: usize, fixed: u32, a: f32| DiffuseU {
            nx: nx as u32,
            ny: ny as u32,
            fixed,
            a,
            ..Default::default()
        };
        if p.viscosity > 0.0 {
            let (du, dv) = (
                diffuse(w + 1, h, 1, gp.a_visc),
                diffuse(w, h + 1, 2, gp.a_visc),
            );
            queue.write_buffer(&self.buf.diffuse_u, 0, bytemuck::bytes_of(&du));
            queue.write_buffer(&self.buf.diffuse_v, 0, bytemuck::bytes_of(&dv));
        }
        if p.dye_diffusion > 0.0 {
            let dd = diffuse(dw, dh, 0, gp.a_dye);
            queue.write_buffer(&self.buf.diffuse_dye, 0, bytemuck::bytes_of(&dd));
        }
        // The decide stage needs this step's trace length (`k` sits at byte 24 of Decide).
        queue.write_buffer(&self.decide_uniform, 24, bytemuck::bytes_of(&gp.k));
        gp
    }

    /// Encode one stage; returns the projections it runs for sure (the second projection's
    /// is decided on the GPU and counted when measuring).
    fn encode_stage(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        stage: Stage,
        p: &StepParams,
    ) -> u32 {
        let (w, h) = (self.cfg.width, self.cfg.height);
        let (dw, dh) = (self.cfg.dye_width(), self.cfg.dye_height());
        let iters = self.cfg.diffusion_iterations;
        let mut d = Dispatch::Direct;
        match stage {
            // Nothing to add: skip three full-grid passes (the dye one is the largest buffer).
            Stage::Splat if self.splat_count > 0 => {
                let mut pass = Some(self.begin(encoder, "Pass: splat", None));
                let (k, g) = (&self.k, &self.groups);
                d.go(
                    &mut pass,
                    &k.splat_u,
                    &g.splat_u[self.vel],
                    groups(w),
                    groups(h),
                );
                d.go(
                    &mut pass,
                    &k.splat_v,
                    &g.splat_v[self.vel],
                    groups(w),
                    groups(h),
                );
                d.go(
                    &mut pass,
                    &k.splat_dye,
                    &g.splat_dye[self.dye],
                    groups(dw),
                    groups(dh),
                );
            }
            Stage::Vorticity if p.vorticity > 0.0 => {
                let mut pass = Some(self.begin(encoder, "Pass: vorticity", None));
                let (k, g) = (&self.k, &self.groups);
                d.go(&mut pass, &k.curl, &g.curl[self.vel], groups(w), groups(h));
                d.go(&mut pass, &k.force, &g.force, groups(w), groups(h));
                d.go(
                    &mut pass,
                    &k.apply_u,
                    &g.apply_u[self.vel],
                    groups(w),
                    groups(h),
                );
                d.go(
                    &mut pass,
                    &k.apply_v,
                    &g.apply_v[self.vel],
                    groups(w),
                    groups(h),
                );
            }
            Stage::Viscosity if p.viscosity > 0.0 => {
                // Jacobi ping-pong between the two velocity buffers.
                let b = &self.buf;
                encoder.copy_buffer_to_buffer(&b.u[self.vel], 0, &b.u_b, 0, bytes_f32((w + 1) * h));
                encoder.copy_buffer_to_buffer(&b.v[self.vel], 0, &b.v_b, 0, bytes_f32(w * (h + 1)));
                let mut vel = self.vel;
                {
                    let mut pass = Some(self.begin(encoder, "Pass: diffuse velocity", None));
                    let (k, g) = (&self.k, &self.groups);
                    for _ in 0..iters {
                        d.go(
                            &mut pass,
                            &k.diffuse,
                            &g.diffuse_u[vel],
                            groups(w + 1),
                            groups(h),
                        );
                        d.go(
                            &mut pass,
                            &k.diffuse,
                            &g.diffuse_v[vel],
                            groups(w),
                            groups(h + 1),
                        );
                        vel = 1 - vel;
                    }
                }
                self.vel = vel;
            }
            Stage::Project => {
                let mut pass = Some(self.begin(encoder, "Pass: project", None));
                self.encode_projection(&mut d, &mut pass, 0);
                if self.measure {
                    let (k, g) = (&self.k, &self.groups);
                    d.go(
                        &mut pass,
                        &k.divergence,
                        &g.divergence[self.vel],
                        groups(w),
                        groups(h),
                    );
                    g.reduce_div_after.encode(k, &mut d, &mut pass);
                }
                return 1;
            }
            Stage::AdvectDye => {
                let (vel, dye) = (self.vel, self.dye);
                {
                    let mut pass = Some(self.begin(encoder, "Pass: advect dye", None));
                    let (k, g) = (&self.k, &self.groups);
                    d.go(
                        &mut pass,
                        &k.advect_dye,
                        &g.advect_dye[vel][dye],
                        groups(dw),
                        groups(dh),
                    );
                    d.go(
                        &mut pass,
                        &k.dissipate_dye,
                        &g.dissipate_dye[1 - dye],
                        groups(dw),
                        groups(dh),
                    );
                }
                self.dye = 1 - dye;
            }
            Stage::DiffuseDye if p.dye_diffusion > 0.0 => {
                let b = &self.buf;
                encoder.copy_buffer_to_buffer(
                    &b.dye[self.dye],
                    0,
                    &b.dye_b,
                    0,
                    bytes_f32(dw * dh * 4),
                );
                let mut dye = self.dye;
                {
                    let mut pass = Some(self.begin(encoder, "Pass: diffuse dye", None));
                    let (k, g) = (&self.k, &self.groups);
                    for _ in 0..iters {
                        d.go(
                            &mut pass,
                            &k.diffuse_dye,
                            &g.diffuse_dye[dye],
                            groups(dw),
                            groups(dh),
                        );
                        dye = 1 - dye;
                    }
                }
                self.dye = dye;
            }
            Stage::AdvectVelocity => {
                let vel = self.vel;
                {
                    let mut pass = Some(self.begin(encoder, "Pass: advect velocity", None));
                    let (k, g) = (&self.k, &self.groups);
                    d.go(
                        &mut pass,
                        &k.advect_u,
                        &g.advect_u[vel],
                        groups(w + 1),
                        groups(h),
                    );
                    d.go(
                        &mut pass,
                        &k.advect_v,
                        &g.advect_v[vel],
                        groups(w),
                        groups(h + 1),
                    );
                    let dv = &g.dissipate_velocity[1 - vel];
                    d.go(
                        &mut pass,
                        &k.dissipate_velocity,
                        dv,
                        groups(w + 1),
                        groups(h + 1),
                    );
                }
                self.vel = 1 - vel;
            }
            Stage::ProjectAgain => {
                // Decided on the GPU: no readback, no stall.
                {
                    let mut pass =
                        Some(self.begin(encoder, "Pass: decide second projection", None));
                    let (k, g) = (&self.k, &self.groups);
                    g.reduce_u[self.vel].encode(k, &mut d, &mut pass);
                    g.reduce_v[self.vel].encode(k, &mut d, &mut pass);
                    d.go(
                        &mut pass,
                        &k.divergence,
                        &g.divergence[self.vel],
                        groups(w),
                        groups(h),
                    );
                    g.reduce_div_advected.encode(k, &mut d, &mut pass);
                    d.go(
                        &mut pass,
                        &k.decide,
                        &g.decide,
                        self.extra_count.div_ceil(64),
                        1,
                    );
                }
                let mut pass = Some(self.begin(encoder, "Pass: project again", None));
                let mut indirect = Dispatch::Indirect {
                    args: &self.buf.args,
                    next: 0,
                };
                self.encode_projection(&mut indirect, &mut pass, 1);
            }
            _ => {}
        }
        0
    }

    /// Read the reductions back (blocking) into step statistics. `again`: count the second
    /// projection if the GPU's rule chose it.
    fn measured(&mut self, gp: &GpuParams, mut projections: u32, again: bool) -> StepStats {
        let (w, h) = (self.cfg.width, self.cfg.height);
        let r: Vec<[f32; 4]> =
            bytemuck::cast_slice(&self.read_buffer(&self.buf.results, slot::COUNT * 16)).to_vec();
        let cells = (w * h) as f32;
        let before = r[slot::DIV_BEFORE as usize];
        let after = r[slot::DIV_AFTER as usize];
        if again {
            // The same rule as `decide`.
            let (ru, rv) = (r[slot::U as usize], r[slot::V as usize]);
            let rd = r[slot::DIV_ADVECTED as usize];
            let reach = gp.k * ru[2].max(rv[2]);
            let flow_rms = ((ru[1] + rv[1]) / ((w + 1) * h + w * h) as f32).sqrt();
            let div_rms = (rd[1] / cells).sqrt();
            if reach > 1.0 && flow_rms > 0.0 && div_rms / flow_rms > REPROJECT_ABOVE_COMPRESSIBILITY
            {
                projections += 1;
            }
        }
        self.last_projections = projections;
        StepStats {
            div_rms_before: (before[1] / cells).sqrt(),
            div_rms_after: (after[1] / cells).sqrt(),
            div_max_before: before[2],
            div_max_after: after[2],
            projections,
        }
    }
}

/// Build the multigrid levels' buffers and bind groups.
#[allow(clippy::too_many_arguments)]
fn build_levels(
    device: &wgpu::Device,
    k: &Kernels,
    w: usize,
    h: usize,
    plans: &[LevelPlan],
    targets: &[Target; 2],
    b0: &wgpu::Buffer,
    r0: &wgpu::Buffer,
) -> Vec<GpuLevel> {
    let colour_uniforms = |lw: usize, lh: usize, cx: f32, cy: f32| {
        [0, 1].map(|colour| {
            uniform(
                device,
                "Uniform: relax",
                &LevelU {
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
            &LevelU {
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
    let relax_u0 = colour_uniforms(w, h, 1.0, 1.0);
    let res_u0 = uniform(
        device,
        "Uniform: residual",
        &LevelU {
            w: w as u32,
            h: h as u32,
            cx: 1.0,
            cy: 1.0,
            ..Default::default()
        },
    );
    let co_u0 = coarsest_uniform(w, h, 1.0, 1.0, true);
    levels.push(GpuLevel {
        w,
        h,
        relax: targets
            .iter()
            .map(|t| {
                [0, 1].map(|c| {
                    k.relax
                        .bind(device, &[(0, &relax_u0[c]), (2, &t.q), (3, b0)])
                })
            })
            .collect(),
        residual: targets
            .iter()
            .map(|t| {
                k.residual
                    .bind(device, &[(0, &res_u0), (1, &t.q), (3, b0), (4, r0)])
            })
            .collect(),
        restrict_x: None,
        restrict_y: None,
        prolong_x: None,
        prolong_y_add: Vec::new(),
        clear: None,
        coarsest: if plans.is_empty() {
            targets
                .iter()
                .map(|t| k.coarsest.bind(device, &[(0, &co_u0), (2, &t.q), (3, b0)]))
                .collect()
        } else {
            Vec::new()
        },
        _buffers: Vec::new(),
    });
    // Buffers of the previous level: (unknowns per target, residual).
    let mut fine_e: Vec<wgpu::Buffer> = targets.iter().map(|t| t.q.clone()).collect();
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
                &LevelU {
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
        levels.push(GpuLevel {
            w: lw,
            h: lh,
            relax: vec![
                [0, 1].map(|c| k.relax.bind(device, &[(0, &relax_u[c]), (2, &e), (3, &bl)])),
            ],
            residual: vec![
                k.residual
                    .bind(device, &[(0, &res_u), (1, &e), (3, &bl), (4, &r)]),
            ],
            restrict_x: Some(k.restrict_x.bind(
                device,
                &[
                    (0, &rx_u),
                    (1, &fine_r),
                    (2, &transfer),
                    (5, &rx_first),
                    (6, &rx_frac),
                ],
            )),
            restrict_y: Some(k.restrict_y.bind(
                device,
                &[
                    (0, &ry_u),
                    (1, &transfer),
                    (2, &bl),
                    (5, &ry_first),
                    (6, &ry_frac),
                ],
            )),
            prolong_x: Some(
                k.prolong_x
                    .bind(device, &[(0, &px_u), (1, &e), (2, &transfer), (7, &px)]),
            ),
            prolong_y_add: fine_e
                .iter()
                .map(|fe| {
                    k.prolong_y_add
                        .bind(device, &[(0, &py_u), (1, &transfer), (2, fe), (7, &py)])
                })
                .collect(),
            clear: Some(k.clear.bind(device, &[(0, &res_u), (2, &e)])),
            coarsest: if last {
                vec![k.coarsest.bind(device, &[(0, &co_u), (2, &e), (3, &bl)])]
            } else {
                Vec::new()
            },
            _buffers: vec![
                bl,
                transfer,
                rx_first,
                rx_frac,
                ry_first,
                ry_frac,
                px,
                py,
                e.clone(),
                r.clone(),
            ],
        });
        fine_e = vec![e];
        fine_r = r;
    }
    levels
}

fn frac4(frac: &[[f32; 3]]) -> Vec<[f32; 4]> {
    frac.iter().map(|f| [f[0], f[1], f[2], 0.0]).collect()
}

fn ptaps(taps: &[(u32, u32, f32)]) -> Vec<[u32; 4]> {
    taps.iter()
        .map(|&(a, b, w)| [a, b, w.to_bits(), 0])
        .collect()
}

impl Solver for GpuSolver {
    fn config(&self) -> SimConfig {
        self.cfg
    }

    fn backend(&self) -> &'static str {
        "gpu"
    }

    fn inject(&mut self, splats: &[Splat]) {
        let room = MAX_PENDING_SPLATS - self.pending.len();
        let take = splats.len().min(room);
        self.pending.extend_from_slice(&splats[..take]);
        self.dropped_splats += (splats.len() - take) as u64;
    }

    fn set_measure(&mut self, on: bool) {
        self.measure = on;
    }

    fn set_pressure_iterations(&mut self, iterations: u32) {
        let iterations = iterations.clamp(1, 10_000);
        if iterations != self.cfg.pressure_iterations {
            self.cfg.pressure_iterations = iterations;
            // The second projection's dispatch list depends on the count.
            self.build_extra_table();
        }
    }

    fn failure(&self) -> Option<String> {
        self.ctx.errors.failure()
    }

    fn step(&mut self, params: &StepParams) -> StepStats {
        let p = params.sanitized();
        let gp = self.prepare(&p, true);
        let mut encoder = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("Step"),
            });
        let timing = self.timing.is_some() && self.measure;
        if timing {
            drop(self.begin(&mut encoder, "Pass: timing start", Some(0)));
        }
        let mut projections = 0;
        for stage in Stage::ALL {
            if stage != Stage::Splat && p.dt == 0.0 {
                break;
            }
            projections += self.encode_stage(&mut encoder, stage, &p);
        }
        if timing {
            drop(self.begin(&mut encoder, "Pass: timing end", Some(1)));
            if let Some(t) = &self.timing {
                encoder.resolve_query_set(&t.queries, 0..2, &t.resolve, 0);
            }
        }
        let index = self.ctx.queue.submit([encoder.finish()]);
        self.in_flight.push_back(index);
        if self.in_flight.len() > MAX_STEPS_IN_FLIGHT
            && let Some(oldest) = self.in_flight.pop_front()
            && let Err(e) = self.ctx.device.poll(wgpu::PollType::Wait {
                submission_index: Some(oldest),
                timeout: Some(STEP_WAIT),
            })
        {
            nice_plug::nice_error!("Waiting for the GPU failed: {e}");
        }
        if self.ctx.check().is_err() || !self.measure || p.dt == 0.0 {
            return StepStats::default();
        }
        if timing {
            let t = self.timing.as_ref().expect("timing is on");
            let stamps: Vec<u64> = bytemuck::cast_slice(&self.read_buffer(&t.resolve, 16)).to_vec();
            let period = f64::from(t.period_ns);
            self.last_gpu_ms = Some(stamps[1].wrapping_sub(stamps[0]) as f64 * period * 1e-6);
        }
        self.measured(&gp, projections, true)
    }

    fn run_stage(&mut self, stage: Stage, params: &StepParams) -> StepStats {
        let p = params.sanitized();
        let gp = self.prepare(&p, stage == Stage::Splat);
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        let projections = self.encode_stage(&mut encoder, stage, &p);
        self.ctx.queue.submit([encoder.finish()]);
        if self.ctx.check().is_err() || !self.measure {
            return StepStats::default();
        }
        match stage {
            Stage::Project => self.measured(&gp, projections, false),
            Stage::ProjectAgain => self.measured(&gp, 0, true),
            _ => StepStats::default(),
        }
    }

    fn render(&mut self, look: &Look, width: usize, height: usize, out: &mut [u8]) {
        assert_eq!(out.len(), width * height * 4, "frame buffer size");
        if width == 0 || height == 0 {
            return;
        }
        // Wait for frames in flight, then render synchronously.
        let _ = self.ctx.device.poll(wgpu::PollType::wait_indefinitely());
        let mut scratch = Vec::new();
        while self.collect_frame(&mut scratch).is_some() {}
        let Some(index) = self.encode_frame(look, width, height) else {
            out.fill(0);
            return;
        };
        let _ = self.ctx.device.poll(wgpu::PollType::wait_indefinitely());
        let serial = self.frames.staging[index].serial;
        match self.collect_frame(&mut scratch) {
            Some(size) if size == (width, height) && self.serial == serial => {
                out.copy_from_slice(&scratch)
            }
            _ => out.fill(0),
        }
    }

    fn request_frame(&mut self, look: &Look, width: usize, height: usize) -> bool {
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);
        self.encode_frame(look, width, height).is_some()
    }

    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);
        self.collect_frame(out)
    }

    fn probe_activity(&mut self, tag: u64) -> Option<(u64, Activity)> {
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);
        self.activity.probe(
            &self.ctx,
            &self.k,
            &self.buf.results,
            self.vel,
            self.dye,
            tag,
        )
    }

    fn read_fields(&mut self) -> Fields {
        let c = self.cfg;
        let (w, h) = (c.width, c.height);
        let (dw, dh) = (c.dye_width(), c.dye_height());
        let u = self.read_f32(&self.buf.u[self.vel], (w + 1) * h);
        let v = self.read_f32(&self.buf.v[self.vel], w * (h + 1));
        // The main projection's pressure, centred (as the CPU reports it).
        let mut pressure = self.read_f32(&self.targets[0].q, w * h);
        let mean = (pressure.iter().map(|&x| f64::from(x)).sum::<f64>() / (w * h) as f64) as f32;
        pressure.iter_mut().for_each(|x| *x -= mean);
        let rgba = self.read_f32(&self.buf.dye[self.dye], dw * dh * 4);
        let dye = std::array::from_fn(|ch| rgba.iter().skip(ch).step_by(4).copied().collect());
        Fields {
            width: w,
            height: h,
            u,
            v,
            pressure,
            dye_width: dw,
            dye_height: dh,
            dye,
        }
    }

    fn write_fields(&mut self, fields: &Fields) {
        let f = fields.resampled(&self.cfg);
        let q = &self.ctx.queue;
        let b = &self.buf;
        q.write_buffer(&b.u[self.vel], 0, bytemuck::cast_slice(&f.u));
        q.write_buffer(&b.v[self.vel], 0, bytemuck::cast_slice(&f.v));
        q.write_buffer(&self.targets[0].q, 0, bytemuck::cast_slice(&f.pressure));
        q.write_buffer(&b.q_centred, 0, bytemuck::cast_slice(&f.pressure));
        q.write_buffer(
            &self.targets[1].q,
            0,
            bytemuck::cast_slice(&vec![0.0f32; f.pressure.len()]),
        );
        let rgba: Vec<f32> = (0..f.dye[0].len())
            .flat_map(|i| [f.dye[0][i], f.dye[1][i], f.dye[2][i], 0.0])
            .collect();
        q.write_buffer(&b.dye[self.dye], 0, bytemuck::cast_slice(&rgba));
        q.submit([]);
    }

    fn reset(&mut self) {
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        let b = &self.buf;
        for buffer in [
            &b.u[0],
            &b.u[1],
            &b.v[0],
            &b.v[1],
            &b.dye[0],
            &b.dye[1],
            &b.q_centred,
            &self.targets[0].q,
            &self.targets[1].q,
        ] {
            encoder.clear_buffer(buffer, 0, None);
        }
        self.ctx.queue.submit([encoder.finish()]);
        self.pending.clear();
    }
}
